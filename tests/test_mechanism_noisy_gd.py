"""The noisy-GD trainer: its output law against closed forms, its certificate and its input checks.

Statistical tests run the real trainer many times with fixed seeds.  Each z-test uses |z| < 4.5
(two-sided false-failure rate 6.8e-6 per coordinate) and each variance test uses the χ² quantiles
at 1e-6 per tail, so a test file's false-failure rate is below 1e-4 even if the seeds were random.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats

from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms import noisy_gd
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import LogisticLoss, QuadraticDistanceLoss, SquaredLoss

Z_LIMIT = 4.5
CHI2_TAIL = 1e-6


def _unit_rows(rng, n, d, radius=1.0):
    X = rng.normal(size=(n, d))
    return radius * X / np.linalg.norm(X, axis=1, keepdims=True) * rng.uniform(0.2, 1.0, size=(n, 1))


def _assert_gaussian_law(samples, mean, variance):
    runs = samples.shape[0]
    z = (samples.mean(axis=0) - mean) / np.sqrt(variance / runs)
    assert np.all(np.abs(z) < Z_LIMIT), f"mean off by z = {z}"
    ratio = samples.var(axis=0, ddof=1) / variance
    lo = stats.chi2.ppf(CHI2_TAIL, runs - 1) / (runs - 1)
    hi = stats.chi2.isf(CHI2_TAIL, runs - 1) / (runs - 1)
    assert np.all((lo < ratio) & (ratio < hi)), f"variance ratio {ratio} outside ({lo:.3f}, {hi:.3f})"


@pytest.mark.slow
def test_output_law_on_quadratic_distance_matches_chourasia_closed_form():
    # Thm 3 proof (appendix form, without the main text's spurious 1/n²): from θ₀ = 0,
    # θ_K ~ N(x̄(1 − (1−η)^K), 2ησ² Σ_{i<K}(1−η)^{2i} I).
    rng = np.random.default_rng(1)
    X = _unit_rows(rng, 20, 3)
    eta, sigma, k, runs = 0.1, 0.5, 30, 3000
    samples = np.array([
        noisy_gd(X, np.zeros(20), loss=QuadraticDistanceLoss(), l2_regularization=0.0, delta=1e-5,
                 sigma=sigma, step_size=eta, iterations=k, initialization="fixed", random_state=seed).coef
        for seed in range(runs)
    ])
    mean = X.mean(axis=0) * (1 - (1 - eta) ** k)
    variance = 2 * eta * sigma**2 * np.sum((1 - eta) ** (2 * np.arange(k)))
    _assert_gaussian_law(samples, mean, variance)


@pytest.mark.slow
def test_output_law_on_ridge_with_stationary_start_matches_linear_gaussian_recursion():
    # Squared loss: θ_{k+1} = (I − ηH)θ_k + ηb + √(2η)σZ with H = XᵀX/n + λI, b = Xᵀy/n, and
    # θ₀ ~ N(0, 2σ²/λ I) (Cor. 1's start).  Mean and covariance follow by an independent recursion.
    rng = np.random.default_rng(2)
    n, d, lam, eta, sigma, k, runs = 30, 2, 0.5, 0.4, 0.3, 25, 3000
    X = _unit_rows(rng, n, d)
    y = rng.uniform(-1, 1, n)
    H = X.T @ X / n + lam * np.eye(d)
    A = np.eye(d) - eta * H
    mean, cov = np.zeros(d), 2 * sigma**2 / lam * np.eye(d)
    for _ in range(k):
        mean = A @ mean + eta * X.T @ y / n
        cov = A @ cov @ A.T + 2 * eta * sigma**2 * np.eye(d)
    samples = np.array([
        noisy_gd(X, y, loss=SquaredLoss(), l2_regularization=lam, delta=1e-5, sigma=sigma, step_size=eta,
                 iterations=k, constraint=L2Ball(1e6), label_bound=1.0, initialization="stationary",
                 random_state=seed).coef
        for seed in range(runs)
    ])
    _assert_gaussian_law(samples, mean, np.diag(cov))


def _data(seed=0, n=400, d=5):
    rng = np.random.default_rng(seed)
    X = _unit_rows(rng, n, d)
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    return X, y


def test_certificate_meets_target_and_names_its_theorem():
    X, y = _data()
    result = noisy_gd(X, y, loss=LogisticLoss(), l2_regularization=0.05, epsilon=0.7, delta=1e-6, random_state=0)
    cert = result.certificate
    assert cert.epsilon <= 0.7 and cert.delta == 1e-6
    assert cert.bound in cert.candidates and cert.epsilon == min(cert.candidates.values())
    assert "arXiv" in cert.theorem
    assert cert.composition_epsilon >= cert.epsilon
    assert cert.assumptions["gradient_sensitivity"] == 2.0 and cert.assumptions["n"] == 400
    assert cert.assumptions["initialization"] == "fixed"
    restored = json.loads(cert.to_json())
    assert restored["epsilon"] == cert.epsilon and restored["bound"] == cert.bound


def test_named_bound_is_used_when_its_conditions_hold():
    X, y = _data()
    cert = noisy_gd(X, y, loss=LogisticLoss(), l2_regularization=0.05, epsilon=1.0, delta=1e-6,
                    bound="corollary1", step_size=1.0, initialization="stationary", random_state=0).certificate
    assert cert.bound == "corollary1" and cert.epsilon <= 1.0
    assert cert.assumptions["initialization"] == "stationary"
    with pytest.raises(ValueError, match="initialization = 'stationary'"):
        noisy_gd(X, y, loss=LogisticLoss(), l2_regularization=0.05, epsilon=1.0, delta=1e-6,
                 bound="corollary1", step_size=1.0, random_state=0)


def test_same_seed_reproduces_and_os_seed_differs():
    X, y = _data()
    kwargs = dict(loss=LogisticLoss(), l2_regularization=0.05, epsilon=1.0, delta=1e-6, iterations=20)
    a = noisy_gd(X, y, random_state=3, **kwargs).coef
    b = noisy_gd(X, y, random_state=3, **kwargs).coef
    c = noisy_gd(X, y, **kwargs).coef
    d = noisy_gd(X, y, **kwargs).coef
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(c, d)


def test_rows_above_data_norm_are_clipped_with_a_warning_or_refused_in_strict_mode():
    X, y = _data()
    X[0] *= 5.0
    kwargs = dict(loss=LogisticLoss(), l2_regularization=0.05, epsilon=1.0, delta=1e-6, iterations=5, random_state=0)
    with pytest.warns(PrivacyLeakWarning, match="1 of 400 rows"):
        cert = noisy_gd(X, y, **kwargs).certificate
    assert not any("clipped" in note for note in cert.notes)  # the count is data-dependent: warning only
    with pytest.raises(ValueError, match="data_norm"):
        noisy_gd(X, y, strict=True, **kwargs)


def test_floating_point_rounding_above_the_norm_bound_is_not_reported():
    X, y = _data()
    X = X / np.linalg.norm(X, axis=1, keepdims=True)  # norms 1 ± 1e-16
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        noisy_gd(X, y, loss=LogisticLoss(), l2_regularization=0.05, epsilon=1.0, delta=1e-6, iterations=5,
                 random_state=0)


BAD_INPUTS = [
    (dict(X=np.array([[np.nan, 0.0], [0.0, 1.0]])), "X must contain only finite"),
    (dict(X=np.array([[np.inf, 0.0], [0.0, 1.0]])), "X must contain only finite"),
    (dict(y=np.array([np.nan, 1.0])), "y must contain only finite"),
    (dict(y=np.array([0.0, 1.0])), "labels in"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=float("inf")), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(step_size=4.0, bound="corollary1"), "step_size < 1/smoothness"),  # 1/β = 2.86 < η < 2/β = 5.71
    (dict(step_size=10.0), r"step_size must be 'auto' or lie in \(0, 2/smoothness\)"),
    (dict(l2_regularization=0.0, bound="gdp", iterations=5), "strong_convexity > 0"),
    (dict(l2_regularization=0.0, bound="corollary1", iterations=5), "strong_convexity > 0"),
    (dict(l2_regularization=-1.0), "l2_regularization"),
    (dict(sigma=1.0), "exactly one of epsilon"),
    (dict(iterations=0), "iterations"),
    (dict(step_size=-0.1), "step_size"),
    (dict(data_norm=0.0), "data_norm"),
    (dict(X=np.ones((2, 2)), y=np.ones(3)), "y must be 1-D"),
    (dict(X=np.ones((0, 2)), y=np.ones(0)), "at least one sample"),
]


@pytest.mark.parametrize("override, message", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_parameter(override, message):
    kwargs = dict(X=np.array([[0.6, 0.0], [0.0, 0.6]]), y=np.array([1.0, -1.0]), loss=LogisticLoss(),
                  l2_regularization=0.1, epsilon=1.0, delta=1e-6, random_state=0)
    kwargs.update(override)
    with pytest.raises(ValueError, match=message):
        noisy_gd(kwargs.pop("X"), kwargs.pop("y"), **kwargs)
