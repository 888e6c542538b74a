"""``method="auto"``: the rule, its independence from the data, tail averaging, fast PLD calibration.

Statistical statements: none (every check here is deterministic given its seed, or exact).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpconvex import PrivateHuberSVC, PrivateLinearSVC, PrivateLogisticRegression
from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_sgd as acc
from dpconvex.accounting.noisy_sgd_bounds import poisson_clt_noise_multiplier
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms import auto, noisy_sgd
from dpconvex.mechanisms.auto import (
    BATCH_COUNTS,
    MAX_PASSES,
    MAX_STEP_FACTOR,
    REFERENCE_NORM,
    RULE_DETAIL,
    SCORES_DETAIL,
    select_configuration,
)
from dpconvex.objectives.losses import HingeLoss, HuberizedHingeLoss, LogisticLoss, QuadraticDistanceLoss

COMMON = dict(delta=1e-6)


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, np.where(X @ np.arange(1, d + 1) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)


def _configuration(result) -> tuple:
    a = result.certificate.assumptions
    return (a["batching"], a["batch_size"], a["epochs"], a["step_size"], a["l2_regularization"], a["released"],
            result.certificate.sigma, result.certificate.epsilon)


# ----------------------------------------------------------------------------- the rule
@pytest.mark.parametrize("loss", [LogisticLoss(), HuberizedHingeLoss(0.5)], ids=lambda loss: loss.name)
@pytest.mark.parametrize("epsilon", [0.05, 1.0])
def test_the_choice_is_the_least_score_with_the_stated_terms(loss, epsilon):
    n, d = 5000, 20
    choice = select_configuration(n, d, loss=loss, l2_regularization="auto", epsilon=epsilon, delta=1e-8)
    assert choice.chosen == min(choice.candidates, key=lambda c: c.score)
    assert {c.batch_size for c in choice.candidates} == {math.ceil(n / l) for l in BATCH_COUNTS}
    mu = gdp.gdp_mu(epsilon, 1e-8)
    smoothness = loss.constants(1.0, 0.0, None, None).smoothness
    # G: the clip |φ'(0)|·X where it is below L = X (logistic: 1/2), else L (huberised hinge: φ'(0) = −1)
    gradient_bound = 0.5 if loss.name == "logistic" else 1.0
    assert choice.clip_norm == (0.5 if loss.name == "logistic" else None)
    for c in choice.candidates:  # each term recomputed from the module docstring's formula
        q = c.batch_size / n
        z = 2.0 / math.sqrt(math.log1p(mu**2 / (q * q * c.steps)))
        sampling = (1 - q) * gradient_bound**2 / c.batch_size
        noise = d * (gradient_bound * z / c.batch_size) ** 2
        # the bound's minimiser B/√(2T s²) (an absolute step), clamped to [1/M, 1.95/M]
        eta = min(max(REFERENCE_NORM / math.sqrt(2 * c.steps * (sampling + noise)), 1 / smoothness),
                  MAX_STEP_FACTOR / smoothness)
        # independent check: no step on a fine grid of [1/M, 1.95/M] scores lower for this candidate
        grid = np.linspace(1 / smoothness, MAX_STEP_FACTOR / smoothness, 2001)
        scores = REFERENCE_NORM**2 / (2 * grid * c.steps) + grid * (sampling + noise)
        assert c.optimisation + c.sampling + c.privacy_noise <= scores.min() * (1 + 1e-6)
        assert c.steps == math.ceil(n / c.batch_size) * MAX_PASSES
        assert c.step_size == pytest.approx(eta)
        assert c.optimisation == pytest.approx(REFERENCE_NORM**2 / (2 * eta * c.steps))
        assert c.sampling == pytest.approx(eta * sampling)
        assert c.privacy_noise == pytest.approx(eta * noise)
        assert c.regularisation == 0.0  # the rule's λ is chosen after the score, with negligible bias
    # λ = 2ℓ(0)/(ηTG)²: the ball √(2ℓ(0)/λ) has radius ηTG, the farthest the run can move
    radius = math.sqrt(2 * loss.loss_at_zero(1.0) / choice.l2_regularization)
    assert radius == pytest.approx(choice.chosen.step_size * choice.chosen.steps * gradient_bound)
    # the step trained is the chosen multiple of 1/M at the final λ (M grows by λ)
    final = smoothness + choice.l2_regularization  # M of φ(y·θᵀx) + (λ/2)‖θ‖²
    assert choice.step_size * final == pytest.approx(choice.chosen.step_size * smoothness)


def test_clipping_at_the_gradient_bound_at_zero_changes_no_gradient_there():
    """The clip C = |φ'(0)|·X (logistic: X/2) leaves every per-example gradient at θ = 0 unchanged, and
    clips a misclassified example's (|φ'(z)| > 1/2 when z < 0) to norm C (independent computation)."""
    loss, X = LogisticLoss(), np.array([[0.6, 0.8], [1.0, 0.0]])
    C = loss.gradient_norm_at_zero(1.0)
    assert C == 0.5
    y = np.array([1.0, -1.0])
    np.testing.assert_allclose(loss.gradient_sum(np.zeros(2), X, y, clip_norm=C), loss.gradient_sum(np.zeros(2), X, y))
    w = np.array([-3.0, 0.0])  # margin y·wᵀx = −1.8 for row 0: |φ'| = 1/(1 + e^{−1.8}) > 1/2
    clipped = loss.gradient_sum(w, X[:1], y[:1], clip_norm=C)
    assert np.linalg.norm(clipped) == pytest.approx(C)
    assert np.linalg.norm(loss.gradient_sum(w, X[:1], y[:1])) == pytest.approx(1 / (1 + math.exp(-1.8)))
    assert HuberizedHingeLoss(0.5).gradient_norm_at_zero(1.0) == 1.0
    assert QuadraticDistanceLoss().gradient_norm_at_zero(1.0) is None


def test_a_longer_run_is_chosen_as_epsilon_grows():
    steps = [select_configuration(20_000, 50, loss=LogisticLoss(), l2_regularization="auto", epsilon=e,
                                  delta=1e-8).chosen.steps for e in (0.01, 0.1, 1.0)]
    assert steps == sorted(steps) and steps[0] < steps[-1]


def test_the_certificate_notes_give_the_rule_and_every_score():
    X, y = _data()
    result = auto(X, y, loss=LogisticLoss(), epsilon=1.0, **COMMON, random_state=0)
    choice = select_configuration(*X.shape, loss=LogisticLoss(), l2_regularization="auto", epsilon=1.0, **COMMON)
    note = result.certificate.notes[-1]
    assert note == choice.reason(1.0, COMMON["delta"])
    assert "utility bound" in note
    assert result.certificate.details[SCORES_DETAIL] == [c.describe() for c in choice.candidates]
    assert result.certificate.details[RULE_DETAIL] == choice.rule()
    cert = result.certificate
    assert cert.epsilon <= 1.0 and cert.bound == "composition"
    assert cert.assumptions["batching"] == "poisson"
    assert cert.assumptions["batch_size"] == choice.chosen.batch_size
    assert cert.assumptions["released"] == "mean of the last ceil(T/2) iterates"
    assert cert.assumptions["l2_regularization"] == choice.l2_regularization


rows = st.integers(min_value=40, max_value=400)


@settings(max_examples=15, deadline=None)
@given(n=rows, d=st.integers(1, 6), seed=st.integers(0, 2**31), epsilon=st.sampled_from([0.1, 1.0, 5.0]))
def test_the_choice_depends_on_n_d_epsilon_delta_and_bounds_only(n, d, seed, epsilon):
    """Shuffled rows, other labels, other feature values of the same shape: the same configuration."""
    X, y = _data(n, d, seed)
    rng = np.random.default_rng(seed + 1)
    variants = [(X[rng.permutation(n)], y), (X, -y), (X, rng.choice([-1.0, 1.0], size=n)),
                _data(n, d, seed + 2), (np.zeros((n, d)), np.ones(n))]
    options = dict(loss=LogisticLoss(), epsilon=epsilon, **COMMON)
    reference = _configuration(auto(X, y, **options, random_state=0))
    for Xv, yv in variants:
        assert _configuration(auto(Xv, yv, **options, random_state=1)) == reference


# ----------------------------------------------------------------------------- what auto refuses or delegates
def test_auto_needs_epsilon_and_refuses_sigma():
    X, y = _data()
    with pytest.raises(ValueError, match="needs a target epsilon"):
        auto(X, y, loss=LogisticLoss(), sigma=1.0, **COMMON)
    with pytest.raises(ValueError, match="give epsilon, not sigma"):
        auto(X, y, loss=LogisticLoss(), epsilon=1.0, sigma=1.0, **COMMON)


def test_auto_refuses_a_loss_without_a_finite_lipschitz_constant():
    X, y = _data()
    with pytest.raises(ValueError, match="finite Lipschitz constant.*l2_regularization > 0 or a bounded constraint"):
        auto(X, y, loss=QuadraticDistanceLoss(), l2_regularization="auto", epsilon=1.0, **COMMON)


def test_a_non_smooth_loss_is_trained_by_sco_noisy_sgd_with_a_note():
    X, y = _data()
    model = PrivateLinearSVC(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    cert = model.privacy_report_
    assert cert.mechanism == "sco_noisy_sgd" and "only mechanism for non-smooth losses" in cert.notes[-1]
    with pytest.raises(ValueError, match="not smooth"):
        select_configuration(100, 2, loss=HingeLoss(), l2_regularization="auto", epsilon=1.0, delta=1e-6)


# ----------------------------------------------------------------------------- the estimators' default
@pytest.mark.parametrize("estimator", [PrivateLogisticRegression, PrivateHuberSVC])
def test_the_estimators_default_to_auto_and_report_the_l2_used(estimator):
    X, y = _data()
    model = estimator(epsilon=0.5, classes=[-1, 1], random_state=0)
    assert (model.method, model.l2_regularization) == ("auto", "auto")
    model.fit(X, y)
    assert model.l2_regularization == "auto"  # fit never changes a hyperparameter
    assert model.l2_regularization_ == model.privacy_report_.assumptions["l2_regularization"] > 0
    assert model.privacy_report_.epsilon <= 0.5
    fixed = estimator(epsilon=0.5, classes=[-1, 1], method="noisy_sgd", random_state=0).fit(X, y)
    assert fixed.l2_regularization_ == 1e-3  # every other method: Chen, Lee, Kifer's fixed value


# ----------------------------------------------------------------------------- tail averaging
def test_tail_average_is_the_mean_of_the_last_half_of_the_iterates():
    """Cyclic batches draw no permutation and the noise stream row by row, so θ_k of a k-step run is
    θ_k of any longer run with the same seed: the tail mean of T = 5 is (θ_3 + θ_4 + θ_5)/3."""
    X, y = _data(n=40, d=3)
    options = dict(loss=LogisticLoss(), l2_regularization=0.01, sigma=0.7, batching="cyclic", batch_size=40,
                   step_size=1.0, **COMMON)
    last = {k: noisy_sgd(X, y, epochs=k, output="last", random_state=3, **options).coef for k in (3, 4, 5)}
    tail = noisy_sgd(X, y, epochs=5, output="tail_average", random_state=3, **options)
    np.testing.assert_allclose(tail.coef, (last[3] + last[4] + last[5]) / 3, rtol=1e-12)
    assert tail.certificate.bound == "composition"
    with pytest.raises(ValueError, match="output='tail_average' releases a function of many iterates"):
        noisy_sgd(X, y, epochs=5, output="tail_average", bound="bok-cgd", random_state=3, **options)


# ----------------------------------------------------------------------------- fast Poisson calibration
@settings(max_examples=12, deadline=None)
@given(rate=st.sampled_from([0.01, 0.05, 0.3, 1.0]), steps=st.sampled_from([10, 100, 400]),
       epsilon=st.sampled_from([0.05, 0.5, 3.0]))
def test_poisson_calibration_never_overshoots_and_is_tight(rate, steps, epsilon):
    n = 1000
    event = acc.NoisySGDEvent(n=n, batch_size=max(1, round(rate * n)), batching="poisson", epochs=1, step_size=1.0,
                              sigma=1.0, sensitivity=2.0, strong_convexity=0.0, smoothness=1.0)
    event = dataclasses.replace(event, epochs=max(1, steps // event.batches))
    sigma = acc.calibrate_sigma(event, epsilon, 1e-6, bound="composition", rtol=1e-3)
    assert acc.epsilon_of(dataclasses.replace(event, sigma=sigma), "composition", 1e-6) <= epsilon
    below = acc.epsilon_of(dataclasses.replace(event, sigma=sigma * (1 - 2e-3)), "composition", 1e-6)
    assert below > epsilon


def test_the_central_limit_noise_is_close_to_the_exact_calibration_at_small_epsilon():
    """Bu et al. 2020 Thm 5 (shift 2 for replace-one): within 1 % of the PLD σ at ε = 0.1, q = 0.05, T = 200."""
    event = acc.NoisySGDEvent(n=20_000, batch_size=1000, batching="poisson", epochs=10, step_size=1.0, sigma=1.0,
                              sensitivity=2.0, strong_convexity=0.0, smoothness=1.0)
    exact = acc.calibrate_sigma(event, 0.1, 1e-8, bound="composition")
    approx = poisson_clt_noise_multiplier(0.05, 200, gdp.gdp_mu(0.1, 1e-8))
    assert approx == pytest.approx(exact, rel=0.01)


def test_the_default_fit_warns_about_nothing_when_everything_is_declared():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
