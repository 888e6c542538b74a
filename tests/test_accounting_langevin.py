"""Chourasia et al. bounds against independent computations and the paper's figures."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from dpconvex.accounting import langevin

# Chourasia et al. Figure 1/2 setting (captions): n = 5000, S_g = 4, η = σ = 0.02.
N, SG, ETA, SIGMA = 5000, 4.0, 0.02, 0.02


def gaussian_renyi_by_quadrature(alpha: float, shift: float, sd: float) -> float:
    """D_α(N(shift, sd²) ‖ N(0, sd²)) by numerical integration of ∫ p^α q^{1−α}."""
    log_p = stats.norm(shift, sd).logpdf
    log_q = stats.norm(0.0, sd).logpdf
    integrand = lambda x: np.exp(alpha * log_p(x) + (1 - alpha) * log_q(x))
    centre = alpha * shift  # the tilted density peaks at α·shift
    value, _ = integrate.quad(integrand, centre - 15 * sd, centre + 15 * sd, limit=200, epsabs=0, epsrel=1e-12)
    return float(np.log(value) / (alpha - 1))


def exact_quadratic_by_recursion(alpha: float, iterations: int) -> float:
    """Unroll noisy GD on ½‖θ − x‖² (Chourasia et al. Thm 3 proof) step by step.

    With the worst pair (records S_g apart), θ_K − θ'_K has mean gap η(S_g/n)Σ(1−η)^i and both are
    Gaussian with per-coordinate variance 2ησ²Σ(1−η)^{2i}; accumulate the sums with a loop.
    """
    gap, variance = 0.0, 0.0
    for _ in range(iterations):
        gap = (1 - ETA) * gap + ETA * SG / N
        variance = (1 - ETA) ** 2 * variance + 2 * ETA * SIGMA**2
    return alpha * gap**2 / (2 * variance)


def test_gaussian_renyi_closed_form_matches_quadrature():
    # The building block of every bound: D_α(N(Δ, s²)‖N(0, s²)) = αΔ²/(2s²).
    for alpha, shift, sd in [(2.0, 0.3, 1.0), (10.0, 0.05, 0.2), (3.5, 1.0, 2.0)]:
        assert gaussian_renyi_by_quadrature(alpha, shift, sd) == pytest.approx(alpha * shift**2 / (2 * sd**2), rel=1e-7)


@pytest.mark.parametrize("alpha", [2.0, 10.0, 30.0])
@pytest.mark.parametrize("iterations", [1, 7, 50, 300, 2000])
def test_exact_quadratic_equals_unrolled_recursion(alpha, iterations):
    expected = exact_quadratic_by_recursion(alpha, iterations)
    got = langevin.exact_quadratic_rdp([alpha], N, SG, SIGMA, ETA, iterations)[0]
    assert got == pytest.approx(expected, rel=1e-10)


def test_composition_equals_k_gaussian_mechanisms_by_quadrature():
    # App. E: each step is a Gaussian mechanism with shift ηS_g/n and sd √(2η)σ; RDP adds over K.
    alpha, iterations = 4.0, 25
    one_step = gaussian_renyi_by_quadrature(alpha, ETA * SG / N, np.sqrt(2 * ETA) * SIGMA)
    got = langevin.composition_rdp([alpha], N, SG, SIGMA, ETA, iterations)[0]
    assert got == pytest.approx(iterations * one_step, rel=1e-6)


@pytest.mark.parametrize("lsi", [0.5, 2.0, 1250.0])
def test_theorem2_solves_its_differential_inequality(lsi):
    # Eq. (15) with γ = 1/2 and R(α, t) = α r(t): r' = S_g²/(2σ²n²) − σ² c r, r(0) = 0 (Thm 2 proof).
    t_end = ETA * 300
    rhs = lambda t, r: SG**2 / (2 * SIGMA**2 * N**2) - SIGMA**2 * lsi * r
    solution = integrate.solve_ivp(rhs, (0.0, t_end), [0.0], rtol=1e-11, atol=1e-16)
    got = langevin.theorem2_rdp([7.0], N, SG, SIGMA, ETA, 300, lsi)[0]
    assert got == pytest.approx(7.0 * solution.y[0, -1], rel=1e-7)


def test_corollary1_is_the_figure1_expression():
    # Figure 1 caption: ε = α S_g² / (λ σ² n²) · (1 − e^{−ληK/2}).
    for alpha, lam in [(30, 1), (20, 1), (10, 1), (10, 2), (10, 4)]:
        caption = alpha * SG**2 / (lam * SIGMA**2 * N**2) * (1 - np.exp(-lam * ETA * 300 / 2))
        assert langevin.corollary1_rdp([alpha], N, SG, SIGMA, ETA, 300, lam)[0] == pytest.approx(caption, rel=1e-12)
    # Read off Figure 1: the α = 30, λ = 1 curve ends near 4.6e-2 (axis ticks at 2, 4, 6 ×10⁻²).
    assert 0.04 < langevin.corollary1_rdp([30], N, SG, SIGMA, ETA, 300, 1.0)[0] < 0.05


def test_figure2_ordering_and_tightness_gap():
    # Fig. 2: Thm 3's lower bound ≤ exact ≤ Cor. 2 ≤ 2.05 × exact; composition crosses Cor. 2 at K = Ω(1/η).
    ks = np.arange(1, 301)
    exact = np.array([langevin.exact_quadratic_rdp([10.0], N, SG, SIGMA, ETA, k)[0] for k in ks])
    cor2 = np.array([langevin.corollary2_rdp([10.0], N, SG, SIGMA, ETA, k)[0] for k in ks])
    comp = np.array([langevin.composition_rdp([10.0], N, SG, SIGMA, ETA, k)[0] for k in ks])
    lower = 10.0 * SG**2 / (4 * SIGMA**2 * N**2) * (1 - np.exp(-ETA * ks))  # eq. (17)
    assert np.all(lower <= exact * (1 + 1e-12))
    assert np.all(exact <= cor2 * (1 + 1e-12))
    assert np.all(cor2 <= 2.05 * exact)
    crossing = ks[np.argmax(comp > cor2)]
    assert 50 <= crossing <= 150


def test_bounds_are_linear_in_order():
    orders = np.array([2.0, 5.0, 40.0])
    for curve in [
        langevin.corollary1_rdp(orders, N, SG, SIGMA, ETA, 100, 2.0),
        langevin.corollary2_rdp(orders, N, SG, SIGMA, ETA, 100),
        langevin.exact_quadratic_rdp(orders, N, SG, SIGMA, ETA, 100),
        langevin.composition_rdp(orders, N, SG, SIGMA, ETA, 100),
    ]:
        np.testing.assert_allclose(curve / orders, curve[0] / orders[0], rtol=1e-12)


def test_theorem4_iterations_match_the_paper_at_its_step_size():
    lam, beta, eps, delta, d = 0.5, 2.0, 1.0, 1e-5, 10
    eta = langevin.theorem4_step_size(lam, beta)
    assert eta == pytest.approx(lam / (2 * beta**2))
    k_star = 2 * beta**2 / lam**2 * np.log(N**2 * eps**2 / (4 * np.log(1 / delta) * d))  # Thm 4
    assert langevin.theorem4_iterations(N, d, lam, eta, eps, delta) == int(np.ceil(k_star))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: langevin.corollary1_rdp([2.0], N, SG, SIGMA, ETA, 10, 0.0), "strong_convexity"),
        (lambda: langevin.corollary2_rdp([2.0], N, SG, SIGMA, 1.5, 10), "step_size"),
        (lambda: langevin.exact_quadratic_rdp([2.0], N, SG, SIGMA, 0.0, 10), "step_size"),
        (lambda: langevin.theorem2_rdp([2.0], N, SG, SIGMA, ETA, 10, -1.0), "lsi_constant"),
        (lambda: langevin.composition_rdp([1.0], N, SG, SIGMA, ETA, 10), "orders"),
        (lambda: langevin.theorem4_iterations(N, 3, 0.0, 0.1, 1.0, 1e-5), "strong_convexity"),
    ],
)
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
