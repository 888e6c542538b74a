"""The vectorised Poisson-subsampled Gaussian PLD against dp-accounting's own route and quadrature.

Oracles: dp-accounting 0.6's ``from_gaussian_mechanism(..., REPLACE_ONE).self_compose`` and its
``GaussianPrivacyLoss`` (scalar inverse privacy loss, δ(ε) per point) on the same parameters, and
for one step a hockey-stick divergence by numerical integration (scipy ``quad``) of the two
Gaussian mixtures.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution, privacy_loss_mechanism
from scipy import integrate
from scipy.stats import norm

from dpconvex.accounting import poisson_pld as pp

GRID = [(q, z) for q in (1e-3, 0.004, 0.05, 0.5, 0.99) for z in (0.3, 0.5, 1.0, 2.0, 10.0, 500.0)]


def _theirs(rate, z, discretization):
    return privacy_loss_distribution.from_gaussian_mechanism(
        z, value_discretization_interval=discretization, sampling_prob=rate,
        neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)


@pytest.mark.parametrize("rate, z", GRID)
def test_inverse_privacy_loss_equals_dp_accountings_scalar_form(rate, z):
    """Same closed form, same steps: equal to a few ulps of the cut-off (measured ≤ 9e-16 absolute)."""
    loss = privacy_loss_mechanism.GaussianPrivacyLoss(z, sampling_prob=rate,
                                                      adjacency_type=privacy_loss_mechanism.AdjacencyType.REPLACE)
    bounds = loss.connect_dots_bounds()
    eps = np.append(np.linspace(bounds.epsilon_lower, bounds.epsilon_upper, 201), 0.0)
    theirs = np.array([loss.inverse_privacy_loss(e) for e in eps])
    ours = pp.replace_one_inverse_privacy_loss(eps, rate, z)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * (1.0 + np.abs(theirs).max()))


@pytest.mark.parametrize("rate, z", GRID)
@pytest.mark.parametrize("steps", [3, 50, 768])
def test_composed_pld_equals_dp_accountings_route(rate, z, steps):
    """ε(δ) and δ(ε) equal dp-accounting's ``self_compose`` of its own PLD.  Tolerance: the two differ only
    by floating-point rounding (the connect-the-dots second differences amplify ulps of δ by 1/Δ²;
    measured ≤ 8e-8 relative in ε over this grid), allowed 1e-6 relative; δ may exceed theirs by the
    truncation mass 1e-15 (ours adds it also where dp-accounting composes a small PMF exactly)."""
    interval, truncation = 1e-2, 1e-15
    theirs = _theirs(rate, z, interval).self_compose(steps, tail_mass_truncation=truncation)
    ours = pp.poisson_pld(rate, z, steps, interval, truncation)
    for delta in (1e-5, 1e-8):
        assert ours.get_epsilon_for_delta(delta) == pytest.approx(theirs.get_epsilon_for_delta(delta), rel=1e-6)
    for eps in (0.5, 2.0):
        d_ours, d_theirs = ours.get_delta_for_epsilon(eps), theirs.get_delta_for_epsilon(eps)
        assert d_theirs * (1 - 1e-6) - 1e-18 <= d_ours <= d_theirs * (1 + 1e-6) + 2 * truncation


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
def test_chernoff_window_and_infinity_mass_equal_dp_accountings(rate, z, steps, truncation):
    """The truncation window is dp-accounting's ``compute_self_convolve_bounds`` exactly, and the composed
    mass at +∞ is τ + 1 − (1 − p_∞)^T, as in ``DensePLDPmf.self_compose`` (a window one bin too narrow or a
    dropped τ would pass the ε/δ comparison above, not this)."""
    from dp_accounting.pld import common
    first, probs, infinity = pp.single_step_probabilities(rate, z, 1e-3)
    assert pp._window(probs, steps, truncation) == common.compute_self_convolve_bounds(list(probs), steps, truncation)
    composed = pp.poisson_pld(rate, z, steps, 1e-3, truncation)
    expected = truncation - math.expm1(steps * math.log1p(-infinity))
    assert composed.get_delta_for_epsilon(math.inf) == pytest.approx(expected, rel=1e-12, abs=0)


def test_rate_one_and_bad_arguments():
    """q = 1 is dp-accounting's own route; nonsense arguments are refused, not computed."""
    ours = pp.poisson_pld(1.0, 2.0, 5, 1e-3, 1e-15)
    theirs = _theirs(1.0, 2.0, 1e-3).self_compose(5, tail_mass_truncation=1e-15)
    assert ours.get_epsilon_for_delta(1e-6) == theirs.get_epsilon_for_delta(1e-6)
    for args in [(0.0, 1.0, 5, 1e-3, 1e-15), (0.1, 1.0, 0, 1e-3, 1e-15), (0.1, 1.0, 5, 1e-3, 0.0)]:
        with pytest.raises(ValueError):
            pp.poisson_pld(*args)
