"""``classes="private"``: the label set released by partition selection and composed with the fit.

Expected numbers are independent computations: the selection's noise σ = √2/μ_d (Gaussian
mechanism on a replace-one count vector, Dong, Roth, Su 2019, arXiv:1905.02383, Thm 2.7) and
threshold τ = 1 + σ·Φ⁻¹(1 − δ_sel), recomputed here from the record's (μ_d, δ_sel); the GDP curve
δ_μ(ε) (their Cor. 2.13) and the composition √(μ₁² + μ₂²) (Cor. 3.3) recomputed from the
certificates' numbers.
"""

import math

import dask.array as da
import numpy as np
import pytest
from scipy.special import ndtri
from sklearn.base import clone

from dpconvex import PrivateLinearSVC, PrivateLogisticRegression, PrivateLogisticRegressionCV
from dpconvex.accounting.gdp import gdp_delta, gdp_mu
from dpconvex.datasets.private_release import DISCOVERY_CONDITION
from dpconvex.estimators.private_classes import LABEL_SHARE, release_label_set
from dpconvex.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpconvex.privacy.ledger import PrivacyLedger

EPSILON, DELTA = 1.0, 1e-8


def labelled_rows(n: int = 4000, labels: tuple = ("no", "yes"), seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows of norm ≤ 1 in three dimensions and labels that depend on the first coordinates."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    scores = X[:, : len(labels)] + 0.3 * rng.normal(size=(n, len(labels)))
    index = np.argmax(scores, axis=1) if len(labels) > 2 else (scores[:, 0] > 0).astype(int)
    return X, np.asarray(labels, dtype=object)[index]


@pytest.fixture(scope="module")
def binary():
    return labelled_rows()


def test_a_binary_label_set_is_released_and_the_fit_stays_within_the_budget(binary):
    X, y = binary
    estimator = PrivateLogisticRegression(classes="private", random_state=0)
    model = estimator.fit(X, y)
    certificate = model.privacy_report_
    assert list(model.classes_) == ["no", "yes"] and set(model.predict(X)) <= {"no", "yes"}
    assert certificate.epsilon <= EPSILON and certificate.delta == pytest.approx(DELTA, rel=1e-12)
    assert DISCOVERY_CONDITION in certificate.conditions
    assert model.score(X, y) > 0.8  # separable by the first coordinate up to noise 0.3: the model learns it
    assert estimator.get_params()["classes"] == "private" and estimator.get_params() == clone(estimator).get_params()


def test_a_gdp_training_run_composes_to_exactly_the_budget(binary):
    X, y = binary
    certificate = PrivateLogisticRegression(method="noisy_gd", classes="private", random_state=0).fit(X, y) \
        .privacy_report_
    training = certificate.details["training_certificate"]
    mu_labels, delta_labels = certificate.assumptions["discovery_mu"], certificate.assumptions["discovery_delta"]
    # the selection's share of μ² and δ (independent: μ of the whole budget, split by LABEL_SHARE)
    mu_whole = gdp_mu(EPSILON, DELTA - LABEL_SHARE * DELTA)
    assert mu_labels**2 == pytest.approx(LABEL_SHARE * mu_whole**2, rel=1e-9)
    assert delta_labels == pytest.approx(LABEL_SHARE * DELTA, rel=1e-12)
    total = math.hypot(mu_labels, gdp_mu(training["epsilon"], training["delta"]))
    assert float(gdp_delta(certificate.epsilon, total)) + delta_labels <= DELTA * (1 + 1e-6)
    assert EPSILON * (1 - 1e-3) <= certificate.epsilon <= EPSILON  # tight: the rounding margins only


@pytest.mark.parametrize("estimator", [PrivateLogisticRegression(classes="private", random_state=1),
                                       PrivateLinearSVC(classes="private", random_state=1)],
                         ids=["logistic", "linear-svc"])
def test_three_integer_labels(estimator):
    X, y = labelled_rows(6000, labels=(0, 1, 2), seed=1)
    y = y.astype(int)
    model = estimator.fit(X, y)
    assert list(model.classes_) == [0, 1, 2] and model.coef_.shape == (3, 3)
    assert model.privacy_report_.epsilon <= EPSILON and model.privacy_report_.delta == pytest.approx(DELTA)


def test_the_same_seed_gives_the_same_release(binary):
    X, y = binary
    first, second = (PrivateLogisticRegression(classes="private", random_state=5).fit(X, y) for _ in range(2))
    assert np.array_equal(first.coef_, second.coef_) and first.privacy_report_ == second.privacy_report_


def test_the_ledger_records_the_composed_certificate_once(binary):
    X, y = binary
    ledger = PrivacyLedger()
    model = PrivateLogisticRegression(classes="private", ledger=ledger, random_state=0).fit(X, y)
    assert len(ledger.releases) == 1 and ledger.releases[0].certificate == model.privacy_report_


def test_a_ledger_past_its_budget_refuses_before_the_labels_are_read(binary):
    X, _ = binary
    ledger = PrivacyLedger(budget=(0.5, 1e-6))
    one_label = np.array(["no"] * len(X), dtype=object)  # the selection would refuse these labels if it read them
    with pytest.raises(BudgetExceededError):
        PrivateLogisticRegression(classes="private", ledger=ledger, random_state=0).fit(X, one_label)
    assert ledger.releases == ()


def test_a_rare_label_is_trained_as_a_released_one_without_naming_it(binary):
    """Refusing would reveal the withheld label (the refusal's chance goes from 0 to about 1 with one record),
    so its record is trained as the first released label, counted in a warning that names no value."""
    X, y = binary
    y = y.copy()
    y[0] = "zebra"  # one record: released with probability δ_sel = 1e-9
    with pytest.warns(PrivacyLeakWarning, match="1 records carry a label") as caught:
        model = PrivateLogisticRegression(classes="private", random_state=0).fit(X, y)
    assert not any("zebra" in str(warning.message) for warning in caught)
    assert list(model.classes_) == ["no", "yes"] and model.privacy_report_.epsilon <= EPSILON
    _, labels, _ = release_label_set(y, epsilon=EPSILON, delta=DELTA, random_state=np.random.default_rng(0))
    assert labels[0] == "no" and np.array_equal(labels[1:], y[1:])


def test_too_few_records_release_too_few_labels():
    X, y = labelled_rows(100)
    with pytest.raises(ValueError, match="classes=\\[...\\]"):
        PrivateLogisticRegression(classes="private", random_state=0).fit(X, y)


def test_dask_and_the_cv_estimators_are_refused(binary):
    X, y = binary
    with pytest.raises(ValueError, match="in-memory"):
        PrivateLogisticRegression(classes="private").fit(da.from_array(X, chunks=1000), da.from_array(y, chunks=1000))
    with pytest.raises(ValueError, match="classes"):
        PrivateLogisticRegressionCV(classes="private").fit(X, y)


@pytest.mark.parametrize("side", ["above", "below"])
def test_the_selection_releases_a_label_as_its_threshold_says(side):
    """Monte Carlo over 400 seeds: a label 2.326 noise deviations above τ is released with probability
    ≥ 0.99, one 2.326 below with probability ≤ 0.01.  At most 12 misses are allowed: with 400 draws at
    miss probability ≤ 0.01 the chance of more than 12 is below 3e-4 (Poisson(4) tail)."""
    mu_whole = gdp_mu(EPSILON, DELTA - LABEL_SHARE * DELTA)
    sigma = math.sqrt(2.0) / (math.sqrt(LABEL_SHARE) * mu_whole)
    threshold = 1.0 - sigma * float(ndtri(LABEL_SHARE * DELTA))
    count = math.ceil(threshold + 2.326 * sigma) if side == "above" else math.floor(threshold - 2.326 * sigma)
    y = np.array(["common"] * 3000 + ["tested"] * count)
    misses = 0
    for seed in range(400):
        try:
            release_label_set(y, epsilon=EPSILON, delta=DELTA, random_state=np.random.default_rng(seed))
            misses += side == "below"
        except ValueError:
            misses += side == "above"
    assert misses <= 12
