"""GDP conversion and the Bok, Su, Altschuler bound against independent computations."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpconvex.accounting import gdp, langevin


def hockey_stick_mpmath(epsilon: float, mu: float) -> float:
    """E_{e^ε}(N(μ,1) ‖ N(0,1)) = ∫ (p − e^ε q)_+ by 50-digit quadrature (independent of Cor. 2.13)."""
    mpmath.mp.dps = 50
    mu_m, eps_m = mpmath.mpf(mu), mpmath.mpf(epsilon)
    p = lambda x: mpmath.npdf(x, mu_m, 1)
    q = lambda x: mpmath.npdf(x, 0, 1)
    # p > e^ε q  ⇔  x > ε/μ + μ/2
    start = eps_m / mu_m + mu_m / 2
    return float(mpmath.quad(lambda x: p(x) - mpmath.e**eps_m * q(x), [start, start + 5, start + 40]))


@pytest.mark.parametrize("mu, epsilon", [(0.5, 0.1), (1.0, 1.0), (2.0, 0.5), (0.1, 0.7), (0.05, 0.3), (3.0, 8.0)])
def test_gdp_delta_matches_quadrature_including_tiny_values(mu, epsilon):
    expected = hockey_stick_mpmath(epsilon, mu)
    got = float(gdp.gdp_delta(epsilon, mu))
    if expected < 1e-300:
        assert got < 1e-280
    else:
        assert np.log(got) == pytest.approx(np.log(expected), abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(mu=st.floats(1e-3, 20.0), delta=st.floats(1e-14, 0.5))
def test_gdp_epsilon_inverts_delta_without_overshooting(mu, delta):
    eps = gdp.gdp_epsilon(delta, mu)
    assert gdp.gdp_delta(eps, mu) <= delta  # never understates ε
    if eps > 0:  # minimal: the search's tolerance is RTOL·max(1, ε); 1e-9 stays clear of gdp_delta's rounding
        assert gdp.gdp_delta(max(eps - 1e-9 * max(1.0, eps), 0.0), mu) > delta


@settings(max_examples=200, deadline=None)
@given(epsilon=st.floats(1e-3, 100.0), delta=st.floats(1e-14, 0.5))
def test_gdp_mu_never_overshoots_and_is_the_largest(epsilon, delta):
    mu = gdp.gdp_mu(epsilon, delta)
    assert gdp.gdp_delta(epsilon, mu) <= delta  # μ-GDP implies (ε, δ)-DP in floating point
    assert gdp.gdp_delta(epsilon, mu * (1 + 1e-9)) > delta  # and a larger μ does not


class _CountedDelta:
    def __init__(self):
        self.calls = 0

    def __call__(self, epsilon, mu):
        self.calls += 1
        return _GDP_DELTA(epsilon, mu)


_GDP_DELTA = gdp.gdp_delta


@pytest.mark.parametrize("mu, epsilon", [(0.01, 0.05), (0.3, 0.5), (1.0, 1.0), (3.0, 8.0), (50.0, 100.0)])
@pytest.mark.parametrize("delta", [0.1, 1e-5, 1e-10, 1e-14])
def test_gdp_inversions_are_cheap(monkeypatch, mu, epsilon, delta):
    # Both start at Cor. 2.13's first term inverted; Brent's method with a doubling bracket (the code
    # they replaced) needed 12-36 evaluations on this grid, and up to 61 for gdp_mu.
    counted = _CountedDelta()
    monkeypatch.setattr(gdp, "gdp_delta", counted)
    gdp.gdp_epsilon.__wrapped__(delta, mu)
    assert counted.calls <= 15
    counted.calls = 0
    gdp.gdp_mu.__wrapped__(epsilon, delta)
    assert counted.calls <= 15


def test_gdp_delta_is_decreasing_in_epsilon_and_increasing_in_mu():
    eps = np.linspace(0, 5, 50)
    d1 = gdp.gdp_delta(eps, 1.0)
    assert np.all(np.diff(d1) < 0)
    assert np.all(gdp.gdp_delta(eps, 1.5) > d1)


def exact_linear_gaussian_mu(n, sensitivity, step_size, sigma, iterations, curvature):
    """Noisy GD on (h/2)‖θ − x‖² unrolled: gap and variance accumulated by a loop (Gaussian, exact)."""
    gap, variance = 0.0, 0.0
    for _ in range(iterations):
        gap = (1 - step_size * curvature) * gap + step_size * sensitivity / n
        variance = (1 - step_size * curvature) ** 2 * variance + 2 * step_size * sigma**2
    return gap / np.sqrt(variance)


@pytest.mark.parametrize("curvature, step_size", [(1.0, 0.02), (0.3, 0.5), (2.0, 0.45), (1.0, 0.999)])
@pytest.mark.parametrize("iterations", [1, 10, 400])
def test_bok_mu_is_exact_for_quadratic_losses(curvature, step_size, iterations):
    # For a quadratic loss the two outputs are Gaussians with equal covariance: the shift/sd ratio is the
    # exact GDP parameter, so a valid bound can be no smaller, and Bok et al. claim equality (1 − ηh ≥ 0).
    expected = exact_linear_gaussian_mu(5000, 4.0, step_size, 0.02, iterations, curvature)
    got = gdp.noisy_gd_mu(5000, 4.0, step_size, 0.02, iterations, curvature, curvature)
    assert got == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("curvature, step_size", [(2.0, 0.9), (1.0, 1.5)])
def test_bok_mu_bounds_overshooting_steps(curvature, step_size):
    # 1 − ηh < 0: the gaps alternate in sign, the exact μ is smaller than the worst case over c-Lipschitz maps.
    for iterations in [1, 2, 3, 10, 400]:
        exact = exact_linear_gaussian_mu(5000, 4.0, step_size, 0.02, iterations, curvature)
        assert gdp.noisy_gd_mu(5000, 4.0, step_size, 0.02, iterations, curvature, curvature) >= exact * (1 - 1e-12)


def test_bok_mu_translation_matches_chourasia_exact_divergence():
    # Convention check: Bok et al.'s μ at m = M = 1 gives α μ²/2 = Chourasia Thm 3's exact Rényi divergence.
    for k in [1, 30, 300]:
        mu = gdp.noisy_gd_mu(5000, 4.0, 0.02, 0.02, k, 1.0, 1.0)
        exact = langevin.exact_quadratic_rdp([10.0], 5000, 4.0, 0.02, 0.02, k)[0]
        assert float(gdp.gdp_rdp([10.0], mu)[0]) == pytest.approx(exact, rel=1e-12)


def test_bok_mu_limits():
    # K = 1: one Gaussian mechanism, μ = shift/sd; K → ∞: μ₀ sqrt((1 + c)/(1 − c)).
    n, sg, eta, sigma, m, big_m = 100, 2.0, 0.1, 0.5, 0.5, 4.0
    mu0 = (eta * sg / n) / (np.sqrt(2 * eta) * sigma)
    c = gdp.gd_contraction(eta, m, big_m)
    assert c == pytest.approx(max(abs(1 - eta * m), abs(1 - eta * big_m)))
    assert gdp.noisy_gd_mu(n, sg, eta, sigma, 1, m, big_m) == pytest.approx(mu0)
    assert gdp.noisy_gd_mu(n, sg, eta, sigma, 10**6, m, big_m) == pytest.approx(mu0 * np.sqrt((1 + c) / (1 - c)))


@pytest.mark.parametrize("step_size, m", [(0.6, 0.5), (0.1, 0.0)])
def test_bok_mu_refuses_non_contractive_steps(step_size, m):
    with pytest.raises(ValueError, match="step_size"):
        gdp.noisy_gd_mu(100, 2.0, step_size, 0.5, 10, m, 4.0)
