"""The vectorised Poisson-subsampled Gaussian PLD against exact arithmetic, quadrature and dp-accounting.

What is guaranteed, and so what is tested:

* the cut-off x(ε) is a closed form: compared with a 60-digit mpmath evaluation, to a few ulps;
* the PLD is pessimistic: every δ(ε) read from it is an upper bound.  Rigorous references: one step
  against the hockey-stick divergence by quadrature (scipy ``quad``), and T steps against the
  pessimistic PLD of dp-accounting on a four times finer nested grid (connect-the-dots on a grid
  dominates it on any refinement, and domination survives composition), which ours must never
  undercut;
* against dp-accounting's own route on the same grid (same mathematics, different rounding): δ(ε)
  lies between theirs and theirs + 2η + τ, where η is our round-off allowance (which dominates the
  rounding of both computations: module docstring of ``poisson_pld``) and τ the truncated tail
  mass that ours always adds; so ε(δ) is never below theirs, and at most theirs at δ − 2η − τ.
  The tolerances follow from these statements (η itself is an empirical allowance: about 11 times
  the largest spread measured between the two implementations, module docstring of ``poisson_pld``),
  not from one machine's digits; a failure here means a dependency's numerics moved beyond that
  allowance, and the message says so.
"""

from __future__ import annotations

import math
import warnings

import dp_accounting
import mpmath
import numpy as np
import pytest
from dp_accounting.pld import common, privacy_loss_distribution, privacy_loss_mechanism
from scipy import integrate
from scipy.stats import norm

from dpconvex.accounting import noisy_sgd_bounds as nb
from dpconvex.accounting import poisson_pld as pp
from dpconvex.accounting.gdp import gdp_delta, gdp_epsilon

GRID = [(q, z) for q in (1e-3, 0.004, 0.05, 0.5, 0.99) for z in (0.3, 0.5, 1.0, 2.0, 10.0, 500.0)]
DEPENDENCY_NOTE = ("beyond the round-off allowance: a NumPy / SciPy / dp-accounting release changed these "
                   "numerics more than its documented accuracy allows (see tests/test_accounting_poisson_pld.py)")


def _theirs(rate, z, discretization):
    return privacy_loss_distribution.from_gaussian_mechanism(
        z, value_discretization_interval=discretization, sampling_prob=rate,
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)


def _largest_allowance(rate, z, steps, discretization):
    """η at the largest FFT length the composition can use (at most twice the full support: 5-smooth lengths)."""
    _, probs, _ = pp.single_step_probabilities(rate, z, discretization)
    return pp.roundoff_allowance(steps, 2 * len(probs) * steps)


def _exact_cut_off(eps, rate, z):
    """x(ε) = z²·(asinh(−sinh(ε/2)·α) − ε/2), α = e^{1/(2z²)}(1 − q)/q, in 60-digit arithmetic."""
    with mpmath.workdps(60):
        e, q, s = mpmath.mpf(float(eps)), mpmath.mpf(rate), mpmath.mpf(z)
        alpha = mpmath.exp(1 / (2 * s * s)) * (1 - q) / q
        return float(s * s * (mpmath.asinh(-mpmath.sinh(e / 2) * alpha) - e / 2))


@pytest.mark.parametrize("rate, z", GRID)
def test_inverse_privacy_loss_matches_a_60_digit_evaluation(rate, z):
    """Within 32 ulps of max(|x|, 1) over dp-accounting's connect-the-dots range (measured ≤ 12).  dp-accounting's
    scalar form computes sinh(ε/2) by subtraction and loses up to 1.4e7 ulps at small ε (z = 500), so it is not the
    reference here; the two agree to its own accuracy (1e-8 relative)."""
    loss = privacy_loss_mechanism.GaussianPrivacyLoss(z, sampling_prob=rate,
                                                      adjacency_type=privacy_loss_mechanism.AdjacencyType.REPLACE)
    bounds = loss.connect_dots_bounds()
    eps = np.append(np.linspace(bounds.epsilon_lower, bounds.epsilon_upper, 41), 0.0)
    exact = np.array([_exact_cut_off(e, rate, z) for e in eps])
    ours = pp.replace_one_inverse_privacy_loss(eps, rate, z)
    ulps = np.abs(ours - exact) / (np.maximum(np.abs(exact), 1.0) * np.finfo(float).eps)
    assert ulps.max() <= 32, f"{ulps.max():.0f} ulps from the 60-digit value"
    theirs = np.array([loss.inverse_privacy_loss(e) for e in eps])
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("rate, z", GRID)
@pytest.mark.parametrize("steps", [3, 50, 768])
def test_composed_pld_lies_between_dp_accountings_route_and_that_plus_the_allowance(rate, z, steps):
    """Same grid (Δ = 1e-2), τ = 1e-15: δ_theirs(ε) ≤ δ_ours(ε) ≤ δ_theirs(ε) + 2η + τ on a grid of ε, and the
    ε(δ) readings follow: theirs(δ) ≤ ours(δ) ≤ theirs(δ − 2η − τ)."""
    interval, truncation = 1e-2, 1e-15
    theirs = _theirs(rate, z, interval).self_compose(steps, tail_mass_truncation=truncation)
    ours = pp.poisson_pld(rate, z, steps, interval, truncation)
    slack = 2 * _largest_allowance(rate, z, steps, interval) + truncation
    epsilons = np.linspace(-1.0, 8.0, 91)
    d_ours = np.asarray(ours.get_delta_for_epsilon(epsilons))
    d_theirs = np.asarray(theirs.get_delta_for_epsilon(epsilons))
    assert np.all(d_ours >= d_theirs), f"ours below dp-accounting's pessimistic delta, {DEPENDENCY_NOTE}"
    assert np.all(d_ours <= d_theirs + slack), \
        f"ours looser than dp-accounting's by more than 2η + τ, {DEPENDENCY_NOTE}"
    for delta in (1e-5, 1e-8):
        eps = ours.get_epsilon_for_delta(delta)
        assert eps >= theirs.get_epsilon_for_delta(delta), DEPENDENCY_NOTE
        assert eps <= theirs.get_epsilon_for_delta(delta - slack), DEPENDENCY_NOTE


@pytest.mark.parametrize("rate, z, steps", [(0.004, 1.0, 50), (0.05, 0.5, 50), (0.001, 0.5, 768), (0.5, 2.0, 20),
                                            (0.05, 10.0, 768)])
def test_never_below_the_pessimistic_pld_on_a_finer_nested_grid(rate, z, steps):
    """The rigorous reference: dp-accounting's pessimistic PLD at Δ/4 (its grid contains ours) is an upper bound
    on the true δ(ε) and at most ours; ours must not undercut it at any ε, nor its ε(δ) at any δ."""
    interval, truncation = 1e-2, 1e-15
    fine = _theirs(rate, z, interval / 4).self_compose(steps, tail_mass_truncation=truncation)
    ours = pp.poisson_pld(rate, z, steps, interval, truncation)
    epsilons = np.linspace(-1.0, 8.0, 91)
    assert np.all(np.asarray(ours.get_delta_for_epsilon(epsilons)) >= np.asarray(fine.get_delta_for_epsilon(epsilons)))
    for delta in (1e-3, 1e-5, 1e-8, 1e-10):
        assert ours.get_epsilon_for_delta(delta) >= fine.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("rate, z, eps", [(0.01, 0.8, 1.0), (0.2, 1.5, 0.3), (0.5, 3.0, 0.1)])
def test_one_step_delta_upper_bounds_quadrature(rate, z, eps):
    """One step, no composition: δ(ε) of the pessimistic PMF ≥ the exact hockey-stick divergence
    ∫(p − e^ε q)₊ of (1 − q)N(0, z²) + qN(−1, z²) against (1 − q)N(0, z²) + qN(1, z²) (quad,
    abs. error ≤ 1e-12), and within the discretisation's slack of it (interval 1e-4: ≤ 1e-3 relative)."""
    def upper(x):
        return (1 - rate) * norm.pdf(x, scale=z) + rate * norm.pdf(x, loc=-1.0, scale=z)

    def lower(x):
        return (1 - rate) * norm.pdf(x, scale=z) + rate * norm.pdf(x, loc=1.0, scale=z)

    cut = float(pp.replace_one_inverse_privacy_loss(eps, rate, z))
    assert math.log(upper(cut) / lower(cut)) == pytest.approx(eps, abs=1e-9)  # the loss crosses ε at the cut-off
    exact, _ = integrate.quad(lambda x: upper(x) - math.exp(eps) * lower(x), -40 * z - 2, cut,
                              epsabs=1e-13, epsrel=1e-12, limit=200)
    ours = pp.poisson_pld(rate, z, 1, 1e-4, 1e-15).get_delta_for_epsilon(eps)
    assert exact - 1e-12 <= ours <= exact * (1 + 1e-3) + 1e-12


@pytest.mark.parametrize("rate, z", [(0.004, 1.0), (0.05, 0.5), (0.5, 2.0)])
@pytest.mark.parametrize("steps, truncation", [(768, 1e-15), (50, 1e-19)])
def test_chernoff_window_equals_dp_accountings_and_infinity_mass_adds_the_allowance(rate, z, steps, truncation):
    """The truncation window is dp-accounting's ``compute_self_convolve_bounds`` exactly, and the composed mass
    at +∞ is τ + η + 1 − (1 − p_∞)^T: dp-accounting's (``DensePLDPmf.self_compose``) plus the round-off
    allowance η = 4·T·log2(N)·u at the FFT length N the composition used (a window one bin too narrow, a
    dropped τ or a dropped η would pass the bracket above, not this)."""
    from scipy import fft
    first, probs, infinity = pp.single_step_probabilities(rate, z, 1e-3)
    lower, upper = pp._window(probs, steps, truncation)
    assert (lower, upper) == common.compute_self_convolve_bounds(list(probs), steps, truncation)
    length = fft.next_fast_len(max(upper - lower + 1, len(probs)))
    allowance = 4 * steps * math.log2(length) * 2.0**-52
    composed = pp.poisson_pld(rate, z, steps, 1e-3, truncation)
    expected = truncation + allowance - math.expm1(steps * math.log1p(-infinity))
    assert composed.get_delta_for_epsilon(math.inf) == pytest.approx(expected, rel=1e-12, abs=0)
    assert pp.roundoff_allowance(steps, length) == pytest.approx(allowance, rel=1e-15)


def test_a_delta_below_the_allowance_reads_infinite_epsilon():
    """The FFT cannot resolve δ below its round-off: such a query certifies nothing rather than a guess."""
    pld = pp.poisson_pld(0.01, 1.0, 1000, 1e-2, 1e-18)
    allowance = _largest_allowance(0.01, 1.0, 1000, 1e-2)
    assert pld.get_epsilon_for_delta(allowance / 1000) == math.inf
    assert math.isfinite(pld.get_epsilon_for_delta(1e-6))


@pytest.mark.parametrize("z, steps, delta", [(2.0, 5, 1e-6), (0.8, 100, 1e-8)])
def test_full_batch_is_the_exact_gaussian_composition(z, steps, delta):
    """q = 1: T Gaussian steps N(∓1, z²) are exactly (2√T/z)-GDP.  Oracle: the Gaussian δ(ε) written out with scipy
    (Dong, Roth, Su 2019, Cor. 2.13) meets δ at the returned ε to 1e-9 relative, and dp-accounting's pessimistic
    PLD of the same composition, an upper bound, is never below it."""
    eps = nb.poisson_pld_epsilon(1.0, z, steps, delta)
    mu = 2.0 * math.sqrt(steps) / z
    assert norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2) == pytest.approx(delta, rel=1e-9)
    assert eps == gdp_epsilon(delta, mu)
    pessimistic = _theirs(1.0, z, 1e-3).self_compose(steps, tail_mass_truncation=1e-15)
    assert eps <= pessimistic.get_epsilon_for_delta(delta)
    assert nb.poisson_pld_delta(1.0, z, steps, eps) == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize("args", [(0.0, 1.0, 5, 1e-3, 1e-15), (1.0, 1.0, 5, 1e-3, 1e-15), (0.1, 1.0, 0, 1e-3, 1e-15),
                                  (0.1, 1.0, 5, 1e-3, 0.0)])
def test_bad_arguments_are_refused(args):
    """Nonsense arguments (and q = 1, which the callers compute in closed form) are refused, not computed."""
    with pytest.raises(ValueError, match="need 0 < rate < 1"):
        pp.poisson_pld(*args)


def test_the_grid_is_kept_within_its_size_caps_and_refused_beyond_them():
    """Ordinary runs keep their interval (a few thousand bins); a tiny z, whose losses span ~1/z², gets a coarser
    (still pessimistic) interval within the caps; beyond the coarsest interval the PLD is not built (ε = ∞) and
    the ε reported is the full-batch GDP bound's."""
    assert pp.bounded_discretization(0.0045, 1.0, 1000, 6e-3, 1e-11) == 6e-3
    coarse = pp.bounded_discretization(0.1, 0.03, 50, 1e-2, 1e-15)
    _, probs, _ = pp.single_step_probabilities(0.1, 0.03, coarse)
    lower, upper = pp._window(probs, 50, 1e-15)
    assert coarse > 1e-2 and len(probs) <= pp.MAX_STEP_BINS and upper - lower + 1 <= pp.MAX_COMPOSED_BINS
    assert pp.bounded_discretization(0.1, 1e-5, 50, 1e-2, 1e-15) == math.inf
    full_batch = gdp_epsilon(1e-6, 2.0 * math.sqrt(50) / 1e-5)
    assert nb.poisson_pld_epsilon(0.1, 1e-5, 50, 1e-6) == full_batch
    assert nb.poisson_route(0.1, 1e-5, 50, 1e-6) == nb.FULL_BATCH_ROUTE
    assert nb.poisson_pld_delta(0.1, 1e-5, 50, 1e9) == gdp_delta(1e9, 2.0 * math.sqrt(50) / 1e-5)


@pytest.mark.parametrize("rate, z", [(1e-3, 0.5), (0.05, 1.0), (0.5, 2.0), (0.99, 0.8)])
def test_subsampling_never_weakens_a_step_the_full_batch_gdp_bound_dominates(rate, z):
    """The full-batch bound used where the PLD cannot be built rests on joint convexity: one subsampled step's pair
    is dominated by the full-batch pair N(∓1, z²), at every ε including ε < 0 (which fixes the trade-off function).
    Independent check of that derivation: the exact hockey-stick divergence of the subsampled pair by quadrature
    (abs. error ≤ 1e-12) never exceeds the Gaussian δ(ε; 2/z) written out with scipy.  And where the PLD holds a
    run, the route reported is the PLD's."""
    def upper(x):
        return (1 - rate) * norm.pdf(x, scale=z) + rate * norm.pdf(x, loc=-1.0, scale=z)

    def lower(x):
        return (1 - rate) * norm.pdf(x, scale=z) + rate * norm.pdf(x, loc=1.0, scale=z)

    mu = 2.0 / z
    for eps in (-1.0, 0.0, 0.3, 1.0, 3.0):
        exact, _ = integrate.quad(lambda x: max(upper(x) - math.exp(eps) * lower(x), 0.0), -40 * z - 2, 40 * z + 2,
                                  points=[0.0], epsabs=1e-13, epsrel=1e-12, limit=400)
        gaussian = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        assert exact <= gaussian + 1e-12
    assert nb.poisson_route(rate, z, 100, 1e-6) == nb.PLD_ROUTE


def test_gdp_delta_has_no_overflow_at_any_epsilon():
    """The Mills-ratio form: no exponential of ε, so no overflow warning, and δ stays in [0, 1]."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = gdp_delta(np.array([0.0, 100.0, 1e200, 1e300, math.inf]), 1e150)
    assert np.all((values >= 0) & (values <= 1))
