"""Multi-class estimators and DataFrame input.

Numbers come from independent computations: scikit-learn's non-private multinomial fit for the
accuracy reference, the losses' closed-form constants (derived in dpconvex.objectives.multiclass),
and the scaling law of the Gaussian mechanism for the one-vs-rest budget split.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline

from dpconvex.datasets import TabularSchema
from dpconvex.estimators.linear_model import PrivateHuberSVC, PrivateLinearSVC, PrivateLogisticRegression
from dpconvex.estimators.preprocessing import PublicSchemaTransformer
from dpconvex.exceptions import PrivacyLeakWarning

pytestmark = pytest.mark.filterwarnings("error::dpconvex.exceptions.PrivacyLeakWarning")

LABELS = ["setosa", "versicolor", "virginica", "x-other"]
SMOOTH = (PrivateLogisticRegression, PrivateHuberSVC)


def _blobs(n: int, seed: int, k: int = 4, d: int = 6):
    """k well-separated Gaussian classes in the unit ball, string labels; the same centres for every seed."""
    centres = np.random.default_rng(1234).normal(size=(k, d))
    centres *= 0.6 / np.linalg.norm(centres, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, k, n)
    X = centres[index] + 0.15 * rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.asarray(LABELS[:k], dtype=object)[index]


@pytest.mark.parametrize("cls", (*SMOOTH, PrivateLinearSVC), ids=lambda c: c.__name__)
def test_shapes_and_predictions_follow_the_scores(cls):
    X, y = _blobs(600, seed=0)
    model = cls(epsilon=5.0, classes=LABELS[::-1], fit_intercept=True, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.classes_, sorted(LABELS))
    assert model.get_params()["classes"] == LABELS[::-1]  # fit sorts a copy, never the parameter
    assert model.coef_.shape == (4, X.shape[1]) and model.intercept_.shape == (4,)
    scores = model.decision_function(X)
    np.testing.assert_allclose(scores, X @ model.coef_.T + model.intercept_)
    np.testing.assert_array_equal(model.predict(X), model.classes_[scores.argmax(axis=1)])
    assert model.privacy_report_.assumptions["dimension"] == (X.shape[1] + 1) * 4


def test_predict_proba_is_the_softmax_of_the_scores_and_sums_to_one():
    X, y = _blobs(600, seed=1)
    model = PrivateLogisticRegression(epsilon=2.0, classes=LABELS, random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    scores = model.decision_function(X)
    expected = np.exp(scores - scores.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(proba, expected, rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(proba.argmax(axis=1), scores.argmax(axis=1))


@pytest.mark.parametrize("cls", SMOOTH, ids=lambda c: c.__name__)
def test_accuracy_at_large_epsilon_approaches_the_non_private_multinomial_fit(cls):
    """At ε = 20 the default is within 3 points of scikit-learn's non-private multinomial fit (test data).

    Tolerance: the classes overlap little (reference accuracy ≈ 0.99); the private fit's spread
    over seeds is < 1 point at this ε (5 seeds measured), so a 3-point gap means a defect.
    """
    X, y = _blobs(4000, seed=2)
    X_test, y_test = _blobs(4000, seed=3)
    reference = LogisticRegression(C=1e3, max_iter=2000).fit(X, y).score(X_test, y_test)
    private = cls(epsilon=20.0, classes=LABELS, random_state=0).fit(X, y).score(X_test, y_test)
    assert private >= reference - 0.03, (private, reference)


@pytest.mark.parametrize("cls, per_class", [(PrivateLogisticRegression, math.sqrt(2.0)),
                                            (PrivateHuberSVC, math.sqrt(4.0))], ids=["multinomial", "one-vs-rest"])
def test_the_certificate_uses_the_k_class_gradient_bound(cls, per_class):
    """noisy_sgd without clipping certifies the sensitivity 2·L: L = √2·X (softmax), √K·X (K one-vs-rest)."""
    X, y = _blobs(500, seed=4)
    X *= 0.5  # within the declared data_norm
    model = cls(epsilon=1.0, method="noisy_sgd", data_norm=0.5, classes=LABELS, random_state=0).fit(X, y)
    assert model.privacy_report_.assumptions["gradient_sensitivity"] == pytest.approx(2.0 * per_class * 0.5)


def test_one_vs_rest_certifies_the_joint_sensitivity():
    """The joint run's sensitivity is √K times the binary one, so at the same ε and schedule the calibrated σ
    is √K times a binary run's (the accountant sees only the noise multiplier).  Without subsampling that
    joint certificate is the GDP composition of K runs; with Poisson batches it is the joint run's own PLD
    (dpconvex.objectives.multiclass)."""
    X, y = _blobs(800, seed=5)
    binary_y = np.where(y == LABELS[0], LABELS[0], "rest")
    options = dict(epsilon=1.0, method="noisy_sgd", batch_size=40, epochs=3, step_size=0.5, random_state=0)
    joint = PrivateHuberSVC(classes=LABELS, **options).fit(X, y).privacy_report_.sigma
    single = PrivateHuberSVC(classes=[LABELS[0], "rest"], **options).fit(X, binary_y).privacy_report_.sigma
    assert joint / single == pytest.approx(2.0, rel=2e-3)  # √4; the calibrations stop within 1e-3 of ε


def test_a_declared_class_absent_from_the_training_data_is_kept():
    X, y = _blobs(600, seed=6, k=3)
    model = PrivateLogisticRegression(epsilon=2.0, classes=LABELS, random_state=0).fit(X, y)  # no "x-other" in y
    assert model.predict_proba(X).shape == (600, 4)
    assert model.privacy_report_.epsilon <= 2.0


@pytest.mark.parametrize("cls", SMOOTH, ids=lambda c: c.__name__)
def test_reading_the_label_set_from_y_voids_the_certificate(cls):
    X, y = _blobs(300, seed=7)
    with pytest.warns(PrivacyLeakWarning, match=r"classes=None read the label set \{'setosa', .*'x-other'\}"):
        model = cls(epsilon=1.0, random_state=0).fit(X, y)
    assert model.privacy_report_.epsilon == math.inf


@pytest.mark.parametrize("cls", SMOOTH, ids=lambda c: c.__name__)
def test_the_default_configuration_ignores_labels_and_features(cls):
    """method='auto' chooses from (n, d, K, ε, δ) only: other labels and features of the same shape, shuffled
    rows, give the same configuration (batch size, steps, step size, λ, σ)."""
    X, y = _blobs(700, seed=8)
    rng = np.random.default_rng(9)
    keys = ("batch_size", "epochs", "step_size", "l2_regularization", "clip_norm")

    def configuration(features, labels):
        report = cls(epsilon=0.5, classes=LABELS, random_state=0).fit(features, labels).privacy_report_
        return tuple(report.assumptions[key] for key in keys) + (report.sigma,)

    reference = configuration(X, y)
    order = rng.permutation(len(y))
    assert configuration(X[order], y[order]) == reference
    assert configuration(rng.uniform(-0.4, 0.4, X.shape), rng.choice(LABELS, len(y))) == reference  # norms < 1


# ----------------------------------------------------------------------------- DataFrames
SCHEMA = TabularSchema(target=None, positive_label=None, categorical={"colour": ("red", "green", "NA")},
                       numerical={"size": (0.0, 10.0), "weight": (0.0, 5.0)}, other_slot=True,
                       numeric_fill={"weight": 0.0})


def _frame(n: int, seed: int):
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "NA"], n)  # "NA" is a declared category, not a missing value
    size = rng.uniform(0, 10, n)
    weight = rng.uniform(0, 5, n)
    weight[rng.random(n) < 0.1] = np.nan  # missing, filled as declared (with an indicator)
    y = np.where(colour == "red", "apple", np.where(size > 5, "melon", "plum"))
    return pd.DataFrame({"colour": colour, "size": size, "weight": weight}), y


def _pipeline(**params):
    return make_pipeline(PublicSchemaTransformer(SCHEMA),
                         PrivateLogisticRegression(classes=["apple", "melon", "plum"], random_state=0, **params))


def test_a_pipeline_trains_on_a_dataframe_with_strings_and_missing_values():
    frame, y = _frame(3000, seed=10)
    model = _pipeline(epsilon=5.0).fit(frame, y)
    test_frame, test_y = _frame(2000, seed=11)
    assert model.score(test_frame, test_y) > 0.8  # majority class ~0.35; non-private fit scores ~0.95
    np.testing.assert_allclose(model.predict_proba(test_frame).sum(axis=1), 1.0)
    assert model[-1].privacy_report_.epsilon <= 5.0


def test_grid_search_cross_validation_clone_and_pickle():
    frame, y = _frame(900, seed=12)
    assert cross_val_score(_pipeline(epsilon=2.0), frame, y, cv=3).shape == (3,)
    search = GridSearchCV(_pipeline(), {"privatelogisticregression__epsilon": [0.5, 4.0]}, cv=3).fit(frame, y)
    chosen = search.best_params_["privatelogisticregression__epsilon"]
    assert search.best_estimator_[-1].epsilon == chosen  # the grid's parameter reached the refitted estimator
    assert search.best_estimator_[-1].privacy_report_.epsilon <= chosen
    assert len(search.cv_results_["mean_test_score"]) == 2
    fitted = _pipeline(epsilon=2.0).fit(frame, y)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(frame), fitted.predict(frame))
    unfitted = clone(fitted)
    assert unfitted.get_params()["privatelogisticregression__epsilon"] == 2.0
    assert not hasattr(unfitted[-1], "coef_")


def test_a_numeric_dataframe_keeps_its_feature_names():
    X, y = _blobs(400, seed=13)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = PrivateHuberSVC(epsilon=2.0, classes=LABELS, random_state=0).fit(frame, y)
    np.testing.assert_array_equal(model.feature_names_in_, frame.columns)
    with pytest.warns(UserWarning, match="feature names"):  # scikit-learn's own check at predict time
        model.predict(X)


@pytest.mark.parametrize("column, values, match", [
    ("colour", ["red"] * 10, r"non-numeric columns \['colour'\].*PublicSchemaTransformer"),
    ("size", [1.0] * 9 + [np.nan], r"missing values in columns \['size'\].*numeric_fill"),
])
def test_a_dataframe_the_estimator_cannot_read_is_refused_by_column(column, values, match):
    frame = pd.DataFrame({"x": np.linspace(0, 1, 10), column: values})
    y = np.arange(10) % 3
    with pytest.raises(ValueError, match=match):
        PrivateLogisticRegression(classes=[0, 1, 2]).fit(frame, y)
