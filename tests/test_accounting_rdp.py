"""RDP → (ε, δ) conversions, checked against their formulas and dp-accounting's own accountant."""

from __future__ import annotations

import dp_accounting
import numpy as np
import pytest

from dpconvex.accounting import langevin
from dpconvex.accounting.rdp import DEFAULT_ORDERS, epsilon_from_rdp


def test_improved_conversion_is_the_published_formula():
    # Canonne, Kamath, Steinke 2020 Prop. 12 evaluated by hand on a grid, minimised over the grid.
    orders = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0])
    rdp = 0.01 * orders
    delta = 1e-6
    by_hand = rdp + np.log((orders - 1) / orders) - (np.log(delta) + np.log(orders)) / (orders - 1)
    eps, order = epsilon_from_rdp(orders, rdp, delta)
    assert eps == pytest.approx(by_hand.min(), rel=1e-12)
    assert order == orders[np.argmin(by_hand)]


def test_mironov_conversion_is_the_published_formula_and_is_never_better():
    orders = DEFAULT_ORDERS
    rdp = 0.003 * orders
    delta = 1e-8
    eps_m, _ = epsilon_from_rdp(orders, rdp, delta, conversion="mironov")
    assert eps_m == pytest.approx(np.min(rdp + np.log(1 / delta) / (orders - 1)), rel=1e-12)
    eps_i, _ = epsilon_from_rdp(orders, rdp, delta)
    assert eps_i < eps_m


def test_composition_curve_agrees_with_dp_accounting_rdp_accountant():
    # K noisy-GD steps = K Gaussian mechanisms with noise multiplier (√(2η)σ)/(ηS_g/n): the same ε
    # must come out of dp-accounting's RdpAccountant.
    n, sg, eta, sigma, k, delta = 1000, 2.0, 0.5, 0.01, 40, 1e-6
    multiplier = np.sqrt(2 * eta) * sigma / (eta * sg / n)
    accountant = dp_accounting.rdp.RdpAccountant(list(DEFAULT_ORDERS))
    accountant.compose(dp_accounting.GaussianDpEvent(multiplier), k)
    theirs = accountant.get_epsilon(delta)
    ours, _ = epsilon_from_rdp(DEFAULT_ORDERS, langevin.composition_rdp(DEFAULT_ORDERS, n, sg, sigma, eta, k), delta)
    assert ours == pytest.approx(theirs, rel=1e-9)


def test_infinite_curve_gives_infinite_epsilon():
    assert epsilon_from_rdp([2.0, 3.0], [np.inf, np.inf], 1e-5)[0] == np.inf


@pytest.mark.parametrize(
    "orders, rdp, delta, conversion, message",
    [
        ([2.0], [0.1], 0.0, "improved", "delta"),
        ([2.0], [0.1], 1.0, "improved", "delta"),
        ([1.0], [0.1], 1e-5, "improved", "orders"),
        ([2.0], [-0.1], 1e-5, "improved", "rdp"),
        ([2.0, 3.0], [0.1], 1e-5, "improved", "same length"),
        ([2.0], [0.1], 1e-5, "bogus", "conversion"),
    ],
)
def test_bad_input(orders, rdp, delta, conversion, message):
    with pytest.raises(ValueError, match=message):
        epsilon_from_rdp(orders, rdp, delta, conversion=conversion)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(multiplier=st.floats(0.3, 50.0), steps=st.integers(1, 2000), delta=st.floats(1e-12, 1e-2))
def test_conversion_agrees_with_dp_accounting_for_composed_gaussians(multiplier, steps, delta):
    # Our conversion of K composed Gaussian mechanisms (RDP Kα/(2m²)) equals dp-accounting's own
    # RdpAccountant on the same orders, for any noise multiplier m, K and δ.
    accountant = dp_accounting.rdp.RdpAccountant(list(DEFAULT_ORDERS))
    accountant.compose(dp_accounting.GaussianDpEvent(multiplier), steps)
    ours, _ = epsilon_from_rdp(DEFAULT_ORDERS, steps * DEFAULT_ORDERS / (2 * multiplier**2), delta)
    assert ours == pytest.approx(accountant.get_epsilon(delta), rel=1e-9, abs=1e-12)
