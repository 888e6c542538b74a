"""The scikit-learn estimators: API conventions, certificates, seeding, accuracy and input checks.

scikit-learn's own estimator checks run on all three estimators.  They feed data whose rows exceed
``data_norm=1`` (so a ``PrivacyLeakWarning`` is expected there) and every check passes, including
``check_regressors_train`` for ``PrivateRidge`` (R² > 0.5 at ε = 1 since its default clips the
gradients at Y·X, centres the targets by their private mean and shrinks by the prediction-noise
rule; it was an expected failure at the fixed λ = 0.05).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_regressors_train, parametrize_with_checks

from dpconvex.estimators.linear_model import (
    PrivateHuberSVC,
    PrivateLADRegressor,
    PrivateLinearSVC,
    PrivateLogisticRegression,
    PrivateRidge,
)
from dpconvex.exceptions import PrivacyLeakWarning

# Any PrivacyLeakWarning a test does not expect is a failure (tests that expect one use pytest.warns;
# the scikit-learn checks silence it with warnings.catch_warnings).
pytestmark = pytest.mark.filterwarnings("error::dpconvex.exceptions.PrivacyLeakWarning")

ESTIMATORS = (PrivateLogisticRegression, PrivateHuberSVC, PrivateRidge)
CLASSIFIERS = (PrivateLogisticRegression, PrivateHuberSVC)

def _expected_failed_checks(estimator) -> dict[str, str]:
    return {}


# ----------------------------------------------------------------------------- scikit-learn checks
@parametrize_with_checks(
    [PrivateLogisticRegression(random_state=0), PrivateHuberSVC(random_state=0), PrivateRidge(random_state=0)],
    expected_failed_checks=_expected_failed_checks,
    xfail_strict=True,  # an expected failure that starts passing must be removed from the list
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' data have rows above data_norm=1: clipping them warns, as it should
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_check_regressors_train_passes_without_noise_or_clipping():
    """With declared bounds that hold, a fixed ball and a huge ε the check passes too.

    The check's data have row norms <= 5.2 and |y| <= 3.4 and its least-squares solution has norm
    0.91, so data_norm=6, label_bound=4 and radius=2 clip nothing and contain the optimum.
    """
    check_regressors_train(
        "PrivateRidge",
        PrivateRidge(epsilon=1e4, data_norm=6.0, label_bound=4.0, radius=2.0, l2_regularization=0.05,
                     fit_intercept=False, random_state=0),
    )


# ----------------------------------------------------------------------------- data helpers
def _rows_in_ball(rng, n, d, radius=0.9):
    X = rng.normal(size=(n, d))
    return radius * X / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.1, 1.0, size=(n, 1))


def _data_for(cls, n=60, d=3, seed=0):
    """Small data inside every default bound: ‖x‖ < 1, |y| < 1; string labels for classifiers."""
    rng = np.random.default_rng(seed)
    X = _rows_in_ball(rng, n, d)
    if cls is PrivateRidge:
        y = 0.8 * np.tanh(X @ np.array([1.0, -0.5, 0.25][:d]) + 0.1 * rng.normal(size=n))
    else:
        y = np.where(X[:, 0] + 0.2 * rng.normal(size=n) > 0, "pos", "neg")
        y[:2] = ["pos", "neg"]  # both classes present whatever the seed
    return X, y


NON_DEFAULT = {
    PrivateLogisticRegression: dict(epsilon=2.5, delta=1e-6, data_norm=2.0, l2_regularization=0.01,
                                    method="noisy_gd", iterations=50, step_size=0.5, fit_intercept=True,
                                    classes=["pos", "neg"], random_state=3),
    PrivateHuberSVC: dict(epsilon=0.5, delta=1e-5, data_norm=1.5, l2_regularization=0.05,
                          method="noisy_gd", iterations="theorem4", huber_h=0.25, strict=True, classes=["neg", "pos"],
                          random_state=7),
    PrivateRidge: dict(epsilon=3.0, delta=1e-7, data_norm=1.0, label_bound=2.0, l2_regularization=0.1,
                       radius=5.0, method="noisy_gd", iterations=40, step_size=0.1, fit_intercept=True,
                       random_state=11),
}


ALL_CLASSIFIERS = (*CLASSIFIERS, PrivateLinearSVC)
#: The labels of ``_data_for``'s classifier data and of ``_separable``.
STRING_LABELS, BINARY_LABELS = ["neg", "pos"], [0, 1]


def _make(cls, labels=STRING_LABELS, **params):
    """``cls(**params)``; a classifier declares ``labels`` (``classes=None`` reads them from y and voids ε)."""
    if cls in ALL_CLASSIFIERS:
        params.setdefault("classes", labels)
    return cls(**params)


# ----------------------------------------------------------------------------- hyperparameters
@pytest.mark.parametrize("non_default", [False, True], ids=["defaults", "non-defaults"])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fit_never_changes_hyperparameters(cls, non_default):
    estimator = cls(**NON_DEFAULT[cls]) if non_default else _make(cls, random_state=0)
    before = estimator.get_params(deep=True)
    estimator.fit(*_data_for(cls))
    after = estimator.get_params(deep=True)
    assert after == before
    if non_default:
        assert after == {**_make(cls).get_params(), **NON_DEFAULT[cls]}
    else:
        # the resolved "auto" values live in the certificate, never in the parameters
        assert after["iterations"] == "auto" and after["step_size"] == "auto"


# ----------------------------------------------------------------------------- fitted attributes
@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fitted_attributes_end_in_underscore(cls, fit_intercept):
    X, y = _data_for(cls)
    estimator = _make(cls, epsilon=0.7, delta=1e-6, fit_intercept=fit_intercept, random_state=0)
    with pytest.raises(NotFittedError):
        estimator.predict(X)
    state_before = set(vars(estimator))
    assert state_before == set(estimator.get_params())  # __init__ stores the parameters, nothing else
    estimator.fit(X, y)

    learned = set(vars(estimator)) - state_before
    assert learned, "fit stored nothing"
    assert all(name.endswith("_") for name in learned), sorted(learned)
    required = {"coef_", "intercept_", "n_features_in_", "privacy_report_"}
    if cls in CLASSIFIERS:
        required.add("classes_")
    assert required <= learned

    assert estimator.coef_.shape == (X.shape[1],)
    assert np.all(np.isfinite(estimator.coef_))
    assert isinstance(estimator.intercept_, float) and math.isfinite(estimator.intercept_)
    if not fit_intercept:
        assert estimator.intercept_ == 0.0
    assert estimator.n_features_in_ == X.shape[1]
    predictions = estimator.predict(X)
    assert predictions.shape == (X.shape[0],)
    if cls in CLASSIFIERS:
        np.testing.assert_array_equal(estimator.classes_, ["neg", "pos"])
        assert set(predictions) <= {"neg", "pos"}
        margin = estimator.decision_function(X)
        np.testing.assert_allclose(margin, X @ estimator.coef_ + estimator.intercept_)
        np.testing.assert_array_equal(predictions, estimator.classes_[(margin > 0).astype(int)])
    else:
        np.testing.assert_allclose(predictions, X @ estimator.coef_ + estimator.intercept_)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_privacy_report(cls):
    epsilon, delta = 0.7, 1e-6
    estimator = _make(cls, epsilon=epsilon, delta=delta, random_state=0).fit(*_data_for(cls))
    report = estimator.privacy_report_
    assert 0 < report.epsilon <= epsilon
    assert report.delta == delta
    assert report.theorem and "arXiv" in report.theorem
    assert isinstance(report.iterations, int) and report.iterations >= 1
    assert report.sigma > 0
    parsed = json.loads(report.to_json())
    assert parsed["epsilon"] == report.epsilon
    assert parsed["delta"] == delta
    assert parsed["iterations"] == report.iterations
    assert parsed["theorem"] == report.theorem


def test_predict_proba_is_the_logistic_link():
    X, y = _data_for(PrivateLogisticRegression)
    estimator = PrivateLogisticRegression(classes=STRING_LABELS, random_state=0).fit(X, y)
    proba = estimator.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-estimator.decision_function(X))))


# ----------------------------------------------------------------------------- randomness
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_seeded_runs_repeat_and_unseeded_runs_differ(cls):
    X, y = _data_for(cls)
    first = _make(cls, random_state=5).fit(X, y).coef_
    again = _make(cls, random_state=5).fit(X, y).coef_
    np.testing.assert_array_equal(first, again)
    # refitting the same instance with an int seed repeats too (no hidden state)
    estimator = _make(cls, random_state=5)
    np.testing.assert_array_equal(estimator.fit(X, y).coef_.copy(), estimator.fit(X, y).coef_)
    other_seed = _make(cls, random_state=6).fit(X, y).coef_
    assert not np.array_equal(first, other_seed)
    # random_state=None: OS-seeded noise, so two fits differ (continuous noise: ties have probability 0)
    unseeded_a = _make(cls, random_state=None).fit(X, y).coef_
    unseeded_b = _make(cls, random_state=None).fit(X, y).coef_
    assert not np.array_equal(unseeded_a, unseeded_b)
    assert not np.array_equal(unseeded_a, first)


# ----------------------------------------------------------------------------- accuracy sanity
def _separable(n, seed, d=5, margin=0.1):
    """Unit-norm rows, labels sign(wᵀx) with every |wᵀx| > margin (linearly separable)."""
    rng = np.random.default_rng(seed)
    w = np.ones(d) / np.sqrt(d)
    X = rng.normal(size=(4 * n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X[np.abs(X @ w) > margin][:n]
    assert X.shape[0] == n
    return X, np.where(X @ w > 0, 1, 0)


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_accuracy_on_separable_data_at_large_epsilon(cls, fit_intercept):
    X, y = _separable(2000, seed=1)
    X_test, y_test = _separable(2000, seed=2)
    majority = max(y_test.mean(), 1 - y_test.mean())
    assert majority < 0.6
    estimator = _make(cls, BINARY_LABELS, epsilon=5.0, delta=1e-8, fit_intercept=fit_intercept,
                      random_state=0).fit(X, y)
    assert estimator.privacy_report_.epsilon <= 5.0
    accuracy = estimator.score(X_test, y_test)
    assert accuracy > 0.95, f"accuracy {accuracy:.3f}, majority rate {majority:.3f}"
    assert accuracy > majority + 0.3


def test_ridge_fits_a_linear_signal_at_large_epsilon():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) + 0.05 * rng.normal(size=2000), -1, 1)
    # λ = 0.05 gives the auto radius 1/√λ ≈ 4.5 and a moderate gradient sensitivity
    estimator = PrivateRidge(epsilon=5.0, l2_regularization=0.05, random_state=0).fit(X, y)
    assert estimator.privacy_report_.epsilon <= 5.0
    assert estimator.score(X, y) > 0.8


# ----------------------------------------------------------------------------- bad input
def _bad_input_cases():
    rng = np.random.default_rng(1)
    X = _rows_in_ball(rng, 40, 3)
    y_class = np.where(X[:, 0] > 0, 1, 0)
    y_class[:2] = [0, 1]
    y_real = 0.5 * X[:, 0]
    with_nan = X.copy()
    with_nan[3, 1] = np.nan
    with_inf = X.copy()
    with_inf[5, 0] = np.inf
    y_nan = y_real.copy()
    y_nan[7] = np.nan
    LR, SVC, RIDGE = PrivateLogisticRegression, PrivateHuberSVC, PrivateRidge
    rows = [
        # id, estimator, X, y, regex the ValueError message must match
        ("nan-in-X", LR(), with_nan, y_class, r"Input X contains NaN"),
        ("nan-in-X-ridge", RIDGE(), with_nan, y_real, r"Input X contains NaN"),
        ("inf-in-X", LR(), with_inf, y_class, r"Input X contains infinity"),
        ("inf-in-X-ridge", RIDGE(), with_inf, y_real, r"Input X contains infinity"),
        ("nan-in-y-ridge", RIDGE(), X, y_nan, r"Input y contains NaN"),
        ("one-class", LR(), X, np.ones(40), r"y holds a single class \(\[1\.0\]\).*declare the label set"),
        ("one-class-svc", SVC(), X, np.zeros(40), r"y holds a single class \(\[0\.0\]\).*declare the label set"),
        ("continuous-y", LR(), X, np.linspace(0, 1, 40), r"Unknown label type: continuous"),
        ("mismatched-lengths", LR(), X, y_class[:-1], r"inconsistent numbers of samples: \[40, 39\]"),
        ("mismatched-lengths-ridge", RIDGE(), X[:-1], y_real, r"inconsistent numbers of samples: \[39, 40\]"),
        ("empty-X", LR(), np.empty((0, 3)), np.empty(0), r"0 sample\(s\)"),
        ("empty-X-ridge", RIDGE(), np.empty((0, 3)), np.empty(0), r"0 sample\(s\)"),
    ]
    parameter_rows = [
        ("epsilon", 0), ("epsilon", -1), ("epsilon", math.inf), ("epsilon", "a"),
        ("delta", 0), ("delta", 1), ("delta", 1.5),
        ("l2_regularization", 0), ("l2_regularization", -1),
        ("iterations", 0), ("iterations", "many"),
        ("step_size", -1),
        ("data_norm", 0),
        ("method", "sgd"),
    ]
    for cls, y in ((LR, y_class), (SVC, y_class), (RIDGE, y_real)):
        for name, value in parameter_rows:
            rows.append((f"{cls.__name__}-{name}={value!r}", cls(**{name: value}), X, y, rf"'{name}' parameter"))
    rows += [
        ("huber_h=0", SVC(huber_h=0), X, y_class, r"'huber_h' parameter"),
        ("label_bound=0", RIDGE(label_bound=0), X, y_real, r"'label_bound' parameter"),
        ("radius=-1", RIDGE(radius=-1), X, y_real, r"'radius' parameter"),
        ("classes=string", LR(classes="ab"), X, y_class,
         r"'classes' parameter must be one of None, 'private' or an instance"),
        ("classes-one", LR(classes=[0]), X, y_class, r"'classes' parameter must be None or a sequence of at least two"),
        ("classes-repeated", SVC(classes=[1, 1]), X, y_class,
         r"'classes' parameter must be None or a sequence of at least two"),
        ("classes-2d", LR(classes=[[0, 1]]), X, y_class,
         r"'classes' parameter must be None or a sequence of at least two"),
        ("classes-with-none", LR(classes=["a", None, "b"]), X, y_class, r"'classes' parameter holds None"),
        ("classes-mixed-types", LR(classes=np.array([1, "a"], dtype=object)), X, y_class,
         r"'classes' parameter must hold labels of one sortable"),
        ("label-outside-classes", LR(classes=[0, 1]), X, np.arange(40) % 3, r"outside classes=\[0, 1\]: \[2\]"),
        ("label-outside-classes-svc", SVC(classes=["a", "b"]), X, y_class, r"outside classes=\['a', 'b'\]"),
    ]
    return [pytest.param(est, X_, y_, match, id=case_id) for case_id, est, X_, y_, match in rows]


@pytest.mark.parametrize("estimator, X, y, match", _bad_input_cases())
def test_bad_input_raises_value_error_naming_the_problem(estimator, X, y, match):
    with pytest.raises(ValueError, match=match):
        estimator.fit(X, y)


def _too_long_rows(cls):
    X, y = _data_for(cls)
    X = X.copy()
    X[:5] *= 3.0 / np.linalg.norm(X[:5], axis=1, keepdims=True)  # five rows of norm 3 > data_norm=1
    return X, y


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_rows_above_data_norm_warn_with_the_count_kept_out_of_the_certificate(cls, fit_intercept):
    X, y = _too_long_rows(cls)
    estimator = _make(cls, fit_intercept=fit_intercept, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="5 of .* rows have L2 norm above data_norm"):
        estimator.fit(X, y)
    # The count depends on the data: the user sees it in the warning, the released certificate never does.
    assert not any("clipped" in note for note in estimator.privacy_report_.notes)
    assert estimator.privacy_report_.epsilon <= estimator.epsilon


@pytest.mark.parametrize("fit_intercept", [False, True], ids=["no-intercept", "intercept"])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_strict_rejects_rows_above_data_norm(cls, fit_intercept):
    X, y = _too_long_rows(cls)
    estimator = _make(cls, strict=True, fit_intercept=fit_intercept, random_state=0)
    with pytest.raises(ValueError, match="data_norm"):
        estimator.fit(X, y)
    assert not hasattr(estimator, "coef_")


def test_ridge_targets_above_label_bound_warn():
    X, y = _data_for(PrivateRidge)
    y = y.copy()
    y[:3] = [2.0, -1.5, 1.2]
    estimator = PrivateRidge(random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="3 of .* targets have .* above label_bound"):
        estimator.fit(X, y)
    assert not any("clipped" in note for note in estimator.privacy_report_.notes)
    with pytest.raises(ValueError, match="label_bound"):
        clone(estimator).set_params(strict=True).fit(X, y)


# ----------------------------------------------------------------------------- the label set
@pytest.mark.parametrize("cls", ALL_CLASSIFIERS, ids=lambda c: c.__name__)
def test_label_set_read_from_y_voids_the_guarantee(cls):
    """classes=None reads the label set from the private y: ε = inf with the reason, as data_norm="from_data"."""
    X, y = _data_for(PrivateLogisticRegression)
    read = cls(random_state=0)
    with pytest.warns(PrivacyLeakWarning, match=r"classes=None read the label set .*epsilon = inf"):
        read.fit(X, y)
    declared = cls(classes=["pos", "neg"], random_state=0).fit(X, y)  # no warning (the module makes one an error)
    reason = ("classes=None read the label set {'neg', 'pos'} from the private labels y (one record can change "
              "it); pass classes=['neg', 'pos'] to keep the guarantee")
    assert read.privacy_report_.epsilon == math.inf
    assert any(reason in note for note in read.privacy_report_.notes)
    assert not any("label set" in note for note in declared.privacy_report_.notes)
    assert declared.privacy_report_.epsilon <= 1.0
    np.testing.assert_array_equal(read.coef_, declared.coef_)  # same labels and seed, same model
    np.testing.assert_array_equal(declared.classes_, ["neg", "pos"])  # sorted: "pos" is the positive class
    assert declared.get_params()["classes"] == ["pos", "neg"]  # fit did not sort the parameter
    assert read.get_params()["classes"] is None  # nor fill in the one it read


@pytest.mark.parametrize("cls", ALL_CLASSIFIERS, ids=lambda c: c.__name__)
def test_declared_classes_accept_a_training_set_with_one_of_them(cls):
    """The label set is public, so a sample holding one class only trains (it would raise with classes=None)."""
    X, _ = _data_for(PrivateLogisticRegression)
    estimator = cls(classes=[-1, 1], random_state=0).fit(X, np.ones(len(X), dtype=int))
    np.testing.assert_array_equal(estimator.classes_, [-1, 1])
    assert set(estimator.predict(X)) <= {-1, 1}
    with pytest.raises(ValueError, match="a single class"):
        cls(random_state=0).fit(X, np.ones(len(X), dtype=int))


# ----------------------------------------------------------------------------- data_norm from the data
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_data_norm_from_data_is_an_explicit_opt_in_with_infinite_epsilon(cls):
    X, y = _data_for(cls)
    estimator = _make(cls, data_norm="from_data", random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="from_data"):
        estimator.fit(X, y)
    assert estimator.privacy_report_.epsilon == math.inf
    assert any("no differential-privacy guarantee" in note for note in estimator.privacy_report_.notes)
    assert estimator.get_params()["data_norm"] == "from_data"  # fit did not overwrite it


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_step_size_beyond_two_over_smoothness_is_refused(cls):
    X, y = _data_for(cls)
    with pytest.raises(ValueError, match=r"step_size must be 'auto' or lie in \(0, 2/smoothness\)"):
        _make(cls, method="noisy_gd", step_size=100.0, random_state=0).fit(X, y)


# ============================================================================= pnsgd
PNSGD_TRAIN_REASON = (
    "privacy noise, not a defect: one pass over the check's 200 rows at epsilon=1 certifies the last "
    "row by a single Gaussian mechanism (sigma = 2.3 against a per-row gradient of norm <= 1.4), so "
    "the training accuracy varies from 0.07 to 0.81 over seeds (< 0.83 needed); at epsilon=10 it is "
    "0.93-0.97 (test_pnsgd_passes_the_train_check_with_more_budget)"
)


@parametrize_with_checks(
    [PrivateLogisticRegression(method="pnsgd", random_state=0)],
    expected_failed_checks=lambda estimator: {"check_classifiers_train": PNSGD_TRAIN_REASON},
    xfail_strict=True,
)
def test_sklearn_estimator_checks_pnsgd(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the checks' rows exceed data_norm=1
        check(estimator)


def test_pnsgd_passes_the_train_check_with_more_budget():
    from sklearn.utils.estimator_checks import check_classifiers_train

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check_classifiers_train("pnsgd", PrivateLogisticRegression(method="pnsgd", epsilon=10.0, random_state=0))


# ============================================================================= non-smooth losses
LAD_TRAIN_REASON = (
    "privacy noise and clipping, not a defect: Algorithm 1 takes one noisy step per fresh record and stops "
    "after half of the check's 200 rows; with the defaults (rows clipped to data_norm=1, radius=1, "
    "epsilon=1) the measured R^2 is 0.15, 0.04, -0.55 over seeds 0-2 (R^2 > 0.5 needed). With bounds "
    "matching the data (data_norm=6, radius=5) and epsilon=1e4 it passes (R^2 0.65-0.72; "
    "test_lad_passes_the_regressor_check_without_noise_or_clipping)"
)
_NONSMOOTH_EXPECTED: dict = {"PrivateLADRegressor": {"check_regressors_train": LAD_TRAIN_REASON}}
@parametrize_with_checks(
    [PrivateLinearSVC(random_state=0), PrivateLADRegressor(random_state=0)],
    expected_failed_checks=lambda estimator: _NONSMOOTH_EXPECTED.get(type(estimator).__name__, {}),
    xfail_strict=True,
)
def test_sklearn_estimator_checks_nonsmooth(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the checks' rows exceed data_norm=1
        check(estimator)


def test_lad_passes_the_regressor_check_without_noise_or_clipping():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check_regressors_train("lad", PrivateLADRegressor(data_norm=6.0, radius=5.0, epsilon=1e4, random_state=0))


# ============================================================================= output perturbation
# method in {"rsgd_ar", "nsgd", "outpert_gd"}: Chen, Lee, Kifer 2019 (arXiv:1808.07090).
OUTPUT_PERTURBATION = ("rsgd_ar", "nsgd", "outpert_gd")


OUTPUT_PERTURBATION_TRAIN_REASON = (
    "privacy noise, not a defect: the check's multi-class part trains on 300 rows with 3 classes at "
    "epsilon=1; output perturbation adds noise of scale ~ S_g/(n lambda) to the released d*K weights, with "
    "S_g = 2 sqrt(2) X (multinomial) or 2 sqrt(3) X (one-vs-rest) and lambda = 1e-3, so the training "
    "accuracy over seeds 0-4 is 0.46-0.90 for rsgd_ar and 0.08-0.37 for outpert_gd (> 0.83 needed). "
    "With more budget it passes (test_output_perturbation_passes_the_train_check_with_more_budget: "
    "rsgd_ar at epsilon=10, 0.91-0.93; outpert_gd at epsilon=1e4, 0.92). The default method passes at epsilon=1"
)
_TRAIN_CHECK = "check_classifiers_train"


@parametrize_with_checks(
    [PrivateLogisticRegression(method="rsgd_ar", random_state=0),
     PrivateHuberSVC(method="outpert_gd", random_state=0)],
    expected_failed_checks=lambda estimator: {_TRAIN_CHECK: OUTPUT_PERTURBATION_TRAIN_REASON},
    xfail_strict=True,
)
def test_sklearn_estimator_checks_output_perturbation(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the checks' rows exceed data_norm=1
        check(estimator)


@pytest.mark.parametrize("estimator", [PrivateLogisticRegression(method="rsgd_ar", epsilon=10.0, random_state=0),
                                       PrivateHuberSVC(method="outpert_gd", epsilon=1e4, random_state=0)],
                         ids=["rsgd_ar-eps10", "outpert_gd-eps1e4"])
def test_output_perturbation_passes_the_train_check_with_more_budget(estimator):
    """The listed expected failure is the noise: with more budget the same check passes (binary and 3 classes)."""
    from sklearn.utils.estimator_checks import check_classifiers_train

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check_classifiers_train(estimator.method, estimator)


@pytest.mark.parametrize("method", OUTPUT_PERTURBATION)
@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_output_perturbation_methods_fit_separable_data(cls, method):
    X, y = _separable(2000, seed=1)
    X_test, y_test = _separable(2000, seed=2)
    estimator = _make(cls, BINARY_LABELS, epsilon=5.0, delta=1e-8, method=method, random_state=0).fit(X, y)
    report = estimator.privacy_report_
    assert report.mechanism == method
    assert 0 < report.epsilon <= 5.0 and report.delta == 1e-8
    assert "arXiv:1808.07090" in report.theorem
    expected_candidates = {"worst-case", "mixture"} if method == "rsgd_ar" else {"worst-case"}
    assert set(report.candidates) == expected_candidates
    accuracy = estimator.score(X_test, y_test)
    assert accuracy > 0.9, f"{method}: accuracy {accuracy:.3f}"


@pytest.mark.parametrize("method, name, value", [
    ("rsgd_ar", "iterations", 10),
    ("nsgd", "iterations", 10),
    ("outpert_gd", "iterations", 10),
    ("outpert_gd", "batch_size", 5),
    ("noisy_gd", "batch_size", 5),
    ("noisy_gd", "epochs", 3),
])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_option_of_another_method_is_refused(cls, method, name, value):
    estimator = _make(cls, method=method, random_state=0, **{name: value})
    with pytest.raises(ValueError, match=rf"'{name}' parameter applies to method in .*not '{method}'"):
        estimator.fit(*_data_for(cls))
    assert not hasattr(estimator, "coef_")


@pytest.mark.parametrize("name, value", [("batch_size", 0), ("batch_size", 2.5), ("batch_size", "all"),
                                         ("epochs", 0), ("epochs", "many")])
def test_bad_output_perturbation_options_name_the_parameter(name, value):
    X, y = _data_for(PrivateLogisticRegression)
    with pytest.raises(ValueError, match=rf"'{name}' parameter"):
        PrivateLogisticRegression(method="rsgd_ar", **{name: value}).fit(X, y)


def test_batch_size_above_n_is_refused():
    X, y = _data_for(PrivateLogisticRegression, n=30)
    with pytest.raises(ValueError, match="batch_size"):
        PrivateLogisticRegression(method="nsgd", batch_size=31, classes=STRING_LABELS, random_state=0).fit(X, y)


OUTPUT_PERTURBATION_OPTIONS = {
    # step sizes below 2/L for every estimator with fit_intercept=True (norm bound √2: L ≤ 2.05)
    "rsgd_ar": dict(batch_size=7, epochs=4, step_size=0.5),
    "nsgd": dict(batch_size=25, epochs=3, step_size=0.9),
    "outpert_gd": dict(epochs=30, step_size=0.7),
}


@pytest.mark.parametrize("non_default", [False, True], ids=["auto", "options"])
@pytest.mark.parametrize("method", OUTPUT_PERTURBATION)
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_output_perturbation_fit_never_changes_hyperparameters(cls, method, non_default):
    options = OUTPUT_PERTURBATION_OPTIONS[method] if non_default else {}
    estimator = _make(cls, method=method, epsilon=2.0, fit_intercept=True, random_state=3, **options)
    before = estimator.get_params(deep=True)
    estimator.fit(*_data_for(cls))
    assert estimator.get_params(deep=True) == before
    assert estimator.get_params() == {**_make(cls).get_params(), "method": method, "epsilon": 2.0,
                                      "fit_intercept": True, "random_state": 3, **options}
    report = estimator.privacy_report_
    assert report.mechanism == method and report.epsilon <= 2.0
    schedule = report.assumptions
    n = 60
    if "epochs" in options:
        assert len(schedule["epoch_step_sizes"]) == options["epochs"]
    if "step_size" in options:
        assert schedule["epoch_step_sizes"][0] == options["step_size"]
    if method == "outpert_gd":
        assert schedule["batch_sizes"] == [n]
    elif "batch_size" in options:
        assert max(schedule["batch_sizes"]) <= options["batch_size"]
        assert len(schedule["batch_sizes"]) == math.ceil(n / options["batch_size"])
    else:
        assert schedule["batch_sizes"] == [n]  # "auto": min(4000, n)


@pytest.mark.parametrize("method", OUTPUT_PERTURBATION)
def test_output_perturbation_seeded_runs_repeat_and_unseeded_runs_differ(method):
    X, y = _data_for(PrivateHuberSVC)
    first = PrivateHuberSVC(method=method, classes=STRING_LABELS, random_state=5).fit(X, y).coef_
    np.testing.assert_array_equal(first,
                                  PrivateHuberSVC(method=method, classes=STRING_LABELS, random_state=5).fit(X, y).coef_)
    a = PrivateHuberSVC(method=method, classes=STRING_LABELS).fit(X, y).coef_
    b = PrivateHuberSVC(method=method, classes=STRING_LABELS).fit(X, y).coef_
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("method", OUTPUT_PERTURBATION)
def test_output_perturbation_ridge_fits_a_linear_signal(method):
    """PrivateRidge with output perturbation: squared loss on the auto L2 ball (projected steps)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([1.0, -1.0, 0.5, 0.0, 0.0]) + 0.05 * rng.normal(size=2000), -1, 1)
    estimator = PrivateRidge(epsilon=5.0, method=method, random_state=0).fit(X, y)
    assert estimator.privacy_report_.mechanism == method
    assert estimator.privacy_report_.epsilon <= 5.0
    assert estimator.score(X, y) > 0.8


@pytest.mark.parametrize("method", OUTPUT_PERTURBATION)
def test_output_perturbation_rows_above_data_norm_warn_and_strict_refuses(method):
    X, y = _too_long_rows(PrivateLogisticRegression)
    estimator = PrivateLogisticRegression(method=method, classes=STRING_LABELS, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="5 of .* rows have L2 norm above data_norm"):
        estimator.fit(X, y)
    assert not any("clipped" in note for note in estimator.privacy_report_.notes)
    with pytest.raises(ValueError, match="data_norm"):
        clone(estimator).set_params(strict=True).fit(X, y)
