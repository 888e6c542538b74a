"""The noisy-GD accountant: applicability, best-of, calibration (with hypothesis properties)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpconvex.accounting import noisy_gd as acc

BASE = acc.NoisyGDEvent(
    n=5000, sensitivity=4.0, step_size=0.02, sigma=0.02, iterations=300,
    strong_convexity=1.0, smoothness=4.0, initialization="stationary",
)
QUADRATIC = dataclasses.replace(BASE, smoothness=1.0, initialization="fixed", quadratic_loss=True)

events = st.builds(
    lambda n, sg, lam, ratio, eta_frac, sigma, k, init, quad: acc.NoisyGDEvent(
        n=n, sensitivity=sg, step_size=(eta_frac / (1.0 if quad else lam * ratio)),
        sigma=sigma, iterations=k,
        strong_convexity=1.0 if quad else lam, smoothness=1.0 if quad else lam * ratio,
        initialization=init, quadratic_loss=quad,
    ),
    n=st.integers(10, 10**6),
    sg=st.floats(0.1, 10.0),
    lam=st.floats(1e-3, 10.0),
    ratio=st.floats(1.0, 100.0),
    eta_frac=st.floats(0.01, 1.99),
    sigma=st.floats(1e-3, 10.0),
    k=st.integers(1, 5000),
    init=st.sampled_from(acc.INITIALIZATIONS),
    quad=st.booleans(),
)


def test_applicability_follows_each_theorem():
    si = "shifted-interpolation"  # any 0 < η ≤ 2/β, λ ≥ 0
    assert acc.applicable_bounds(BASE) == ["composition", "corollary1", "gdp", si]
    assert acc.applicable_bounds(QUADRATIC) == ["composition", "corollary2", "exact-quadratic", "gdp", si]
    slow = dataclasses.replace(BASE, step_size=0.3)  # 1/β = 0.25 < η < 2/β = 0.5
    assert acc.applicable_bounds(slow) == ["composition", "gdp", si]
    assert acc.applicable_bounds(dataclasses.replace(BASE, strong_convexity=0.0)) == ["composition", si]
    assert acc.applicable_bounds(dataclasses.replace(BASE, step_size=0.6)) == ["composition"]  # η > 2/β
    assert "theorem2" in acc.applicable_bounds(dataclasses.replace(BASE, lsi_constant=3.0))
    assert acc.applicable_bounds(dataclasses.replace(QUADRATIC, constrained=True)) == ["composition", "gdp", si]


def test_named_bound_outside_its_conditions_is_refused_with_the_condition():
    with pytest.raises(ValueError, match=r"step_size < 1/smoothness"):
        acc.rdp_curve(dataclasses.replace(BASE, step_size=0.3), "corollary1")
    with pytest.raises(ValueError, match="strong_convexity > 0"):
        acc.account(dataclasses.replace(BASE, strong_convexity=0.0), 1e-5, bound="gdp")
    with pytest.raises(ValueError, match="bound must be one of"):
        acc.unmet_conditions(BASE, "nonsense")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("n", 0, "n must be"), ("sensitivity", -1.0, "sensitivity"), ("step_size", 0.0, "step_size"),
        ("sigma", 0.0, "sigma"), ("iterations", 0, "iterations"), ("strong_convexity", -1.0, "strong_convexity"),
        ("smoothness", 0.5, "smoothness"), ("initialization", "random", "initialization"),
        ("sigma", float("nan"), "sigma"),
    ],
)
def test_event_validation(field, value, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(BASE, **{field: value})


def test_quadratic_flag_requires_unit_constants():
    with pytest.raises(ValueError, match="quadratic_loss"):
        dataclasses.replace(BASE, quadratic_loss=True)


def test_best_of_records_the_winner_and_every_candidate():
    result = acc.account(BASE, 1e-5)
    assert set(result.candidates) == {"composition", "corollary1", "gdp", "shifted-interpolation"}
    assert result.epsilon == min(result.candidates.values())
    assert result.bound == min(result.candidates, key=result.candidates.get)
    assert result.theorem == acc.BOUNDS[result.bound].theorem


@settings(max_examples=150, deadline=None)
@given(event=events, delta=st.floats(1e-12, 0.1))
def test_best_of_is_below_every_applicable_bound(event, delta):
    orders = np.array([1.5, 2.0, 8.0, 64.0])
    best, winners = acc.best_rdp(event, orders)
    for name in acc.applicable_bounds(event):
        assert np.all(best <= acc.rdp_curve(event, name, orders) * (1 + 1e-12))
    assert all(w in acc.applicable_bounds(event) for w in winners)
    overall = acc.account(event, delta)
    for name in acc.applicable_bounds(event):
        assert overall.epsilon <= acc.account(event, delta, bound=name).epsilon * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(event=events, factor=st.floats(1.01, 10.0))
def test_every_bound_is_monotone_in_iterations_and_noise(event, factor):
    orders = np.array([2.0, 10.0])
    longer = dataclasses.replace(event, iterations=int(event.iterations * factor) + 1)
    noisier = dataclasses.replace(event, sigma=event.sigma * factor)
    for name in acc.applicable_bounds(event):
        base = acc.rdp_curve(event, name, orders)
        assert np.all(acc.rdp_curve(longer, name, orders) >= base * (1 - 1e-12))
        assert np.all(acc.rdp_curve(noisier, name, orders) <= base * (1 + 1e-12))


@settings(max_examples=60, deadline=None)
@given(event=events, target=st.floats(0.01, 10.0), delta=st.floats(1e-12, 1e-2))
def test_calibration_never_overshoots_and_is_tight(event, target, delta):
    rtol = 1e-4
    sigma = acc.calibrate_sigma(event, target, delta, rtol=rtol)
    assert acc.account(dataclasses.replace(event, sigma=sigma), delta).epsilon <= target
    # Minimal to rtol: σ/(1 + rtol) already breaks the target (ε is non-increasing in σ, and the search
    # evaluated a point at least that large that breaks it).
    assert acc.account(dataclasses.replace(event, sigma=sigma / (1 + rtol)), delta).epsilon > target


@pytest.mark.parametrize("bound", ["best", "composition", "corollary1", "gdp", "shifted-interpolation"])
@pytest.mark.parametrize("epsilon, delta", [(0.05, 1e-8), (1.0, 1e-5), (8.0, 1e-10)])
def test_calibration_of_each_bound_never_overshoots_and_is_minimal(bound, epsilon, delta):
    rtol = 1e-6
    sigma = acc.calibrate_sigma(BASE, epsilon, delta, bound=bound, rtol=rtol)
    assert acc.account(dataclasses.replace(BASE, sigma=sigma), delta, bound=bound).epsilon <= epsilon
    assert acc.account(dataclasses.replace(BASE, sigma=sigma / (1 + rtol)), delta, bound=bound).epsilon > epsilon


def test_calibration_refuses_a_run_that_needs_no_noise():
    with pytest.raises(ValueError, match="sensitivity must be > 0"):
        acc.calibrate_sigma(dataclasses.replace(BASE, sensitivity=0.0), 1.0, 1e-5)


def test_calibration_with_a_named_bound_uses_that_bound():
    sigma_cor1 = acc.calibrate_sigma(BASE, 0.5, 1e-6, bound="corollary1")
    sigma_best = acc.calibrate_sigma(BASE, 0.5, 1e-6)
    assert sigma_best < sigma_cor1
    assert acc.account(dataclasses.replace(BASE, sigma=sigma_cor1), 1e-6, bound="corollary1").epsilon <= 0.5


@pytest.mark.parametrize("epsilon", [0.0, -1.0, float("inf"), float("nan")])
def test_calibration_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        acc.calibrate_sigma(BASE, epsilon, 1e-5)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 2.0])
def test_account_rejects_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        acc.account(BASE, delta)


@settings(max_examples=200, deadline=None)
@given(event=events)
def test_gdp_is_below_corollary1_whenever_both_apply(event):
    # Why the trainer's default start is θ₀ = 0: where Cor. 1 applies (η < 1/β, c = 1 − ηλ) the GDP
    # bound's RDP is below Cor. 1's (ratio → (2 − ηλ)/4 for large K; at K = 1 it is
    # (x/2)/(1 − e^{−x}) with x = ηλ/2 ≤ 1/2, at most 0.636), so the stationary start never pays off.
    stationary = dataclasses.replace(event, initialization="stationary", quadratic_loss=False)
    if "corollary1" not in acc.applicable_bounds(stationary):
        return
    orders = np.array([2.0, 32.0])
    ratio = acc.rdp_curve(stationary, "gdp", orders) / acc.rdp_curve(stationary, "corollary1", orders)
    assert np.all(ratio <= 0.6361)
