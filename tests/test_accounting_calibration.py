"""``accounting.calibration`` (``smallest_noise``, ``smallest_epsilon``) against known roots, and its callers.

Oracles: ε(σ) = c·σ^(−p) (root (c/ε)^(1/p)), a curved sum of two power laws (root by bisection to
1e-13 with math only), step functions for the ε = ∞ / ε = 0 edges, and random non-increasing
functions (smooth tails, curves vanishing at a point, piecewise-linear with flat parts, staircases)
whose root is found by plain bisection.  Properties: never overshoots (noise never below, ε never
below, what meets the target), ends inside the stated tolerance, needs few evaluations from a good
start, refuses nan.  Every calibrator of the library that calls the search is checked with its
own module's accountant.
"""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpconvex.accounting import hockey_stick as hs
from dpconvex.accounting import private_sco as sco
from dpconvex.accounting import sensitivity as sens
from dpconvex.accounting.calibration import smallest_epsilon, smallest_noise
from dpconvex.accounting.gdp import gdp_delta
from dpconvex.accounting.rounding import ROUNDING_MARGIN, largest_rounding_within
from dpconvex_lab import dpsgd


class Counted:
    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, sigma):
        self.calls += 1
        return self.fn(sigma)


def _bisect_root(fn, target, lo, hi):
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fn(mid) > target else (lo, mid)
    return hi


def _within_tolerance(fn, target, sigma, root, rtol):
    return fn(sigma) <= target and (fn(sigma) >= target * (1 - rtol) or sigma <= root * (1 + rtol) ** 1.0001)


@settings(max_examples=200, deadline=None)
@given(c=st.floats(0.01, 100.0), power=st.floats(0.5, 4.0), target=st.floats(0.01, 10.0),
       start_error=st.floats(-1.0, 1.0), rtol=st.sampled_from([1e-4, 1e-3, 1e-2]))
def test_power_law_never_overshoots_and_meets_tolerance(c, power, target, start_error, rtol):
    fn = Counted(lambda s: c * s ** (-power))
    root = (c / target) ** (1.0 / power)
    sigma = smallest_noise(fn, target, root * math.exp(start_error), rtol=rtol)
    assert _within_tolerance(fn.fn, target, sigma, root, rtol)
    assert fn.calls <= 40  # O(log(1/rtol)) worst case, from a start up to a factor e off


def test_good_start_needs_one_or_two_evaluations():
    # ε = 2/σ, root 20 at ε = 0.1: a start within rtol/2 of the root stops at once.
    fn = Counted(lambda s: 2.0 / s)
    sigma = smallest_noise(fn, 0.1, 20.0 * (1 - 2e-4), rtol=1e-3)
    assert fn.calls == 1 and fn.fn(sigma) <= 0.1
    fn = Counted(lambda s: 2.0 / s)
    smallest_noise(fn, 0.1, 20.0 * 1.05, rtol=1e-3)  # 5 % off, exact slope: one step to the window
    assert fn.calls == 2


def test_curved_function_bracket_then_interpolation():
    def eps(s):  # log-log slope from -1 (large σ) to -3 (small σ), like a subsampled Gaussian
        return 0.5 / s + 2.0 / s**3

    for target in (0.05, 0.5, 5.0, 50.0):
        root = _bisect_root(eps, target, 1e-6, 1e6)
        for start in (root * 0.5, root * 1.6):
            fn = Counted(eps)
            sigma = smallest_noise(fn, target, start, rtol=1e-3, slope=-2.0)
            assert _within_tolerance(eps, target, sigma, root, 1e-3)
            assert fn.calls <= 12


def test_infinite_epsilon_below_a_threshold_moves_up():
    fn = Counted(lambda s: math.inf if s < 3.0 else 1.0 / s)
    sigma = smallest_noise(fn, 0.2, 1.0)  # root 5, starts in the ε = ∞ region
    assert _within_tolerance(fn.fn, 0.2, sigma, 5.0, 1e-3)


def test_zero_epsilon_everywhere_refuses_instead_of_looping():
    with pytest.raises(ValueError, match="no noise level"):
        smallest_noise(lambda s: 0.0, 1.0, 1.0)


def test_unreachable_target_refuses():
    with pytest.raises(ValueError, match="no noise level"):
        smallest_noise(lambda s: 1.0 + 1.0 / s, 0.5, 1.0)  # ε > 1 at every σ


@pytest.mark.parametrize("kwargs, name", [
    ({"target": 0.0}, "target"), ({"target": math.inf}, "target"), ({"rtol": 0.0}, "rtol"),
    ({"rtol": 1.0}, "rtol"), ({"start": -1.0}, "start"), ({"slope": 0.5}, "slope")])
def test_invalid_arguments_name_the_parameter(kwargs, name):
    args = {"target": 1.0, "start": 1.0, **kwargs}
    with pytest.raises(ValueError, match=name):
        smallest_noise(lambda s: 1.0 / s, args.pop("target"), args.pop("start"), **args)


def test_a_nan_epsilon_is_an_error_not_enough_noise():
    with pytest.raises(ValueError, match="nan"):
        smallest_noise(lambda s: math.nan, 1.0, 1.0)


# ------------------------------------------------------------------ tolerance="noise" (bracket)


@settings(max_examples=200, deadline=None)
@given(c=st.floats(0.01, 100.0), power=st.floats(0.3, 4.0), target=st.floats(0.01, 10.0),
       start_error=st.floats(-3.0, 3.0), rtol=st.sampled_from([1e-12, 1e-9, 1e-4, 1e-2]))
def test_noise_tolerance_brackets_the_root(c, power, target, start_error, rtol):
    fn = Counted(lambda s: c * s ** (-power))
    root = (c / target) ** (1.0 / power)
    sigma = smallest_noise(fn, target, root * math.exp(start_error), rtol=rtol, tolerance="noise", ceiling=1e300)
    assert fn.fn(sigma) <= target  # never overshoots
    assert sigma <= root * (1 + rtol) * (1 + 1e-13)  # ... and σ/(1 + rtol) misses the target
    assert fn.calls <= 30


def test_noise_tolerance_needs_a_bracket_not_a_value_window():
    # ε = 2/σ, start 0.1 % above the root: the value window (rtol 1e-2) stops at once, the noise
    # tolerance goes on until σ is within a factor 1 + 1e-6 of the root.
    assert smallest_noise(lambda s: 2.0 / s, 0.1, 20.02, rtol=1e-2) == pytest.approx(20.02 * (1 + 5e-3))
    sigma = smallest_noise(lambda s: 2.0 / s, 0.1, 20.02, rtol=1e-6, tolerance="noise")
    assert 20.0 <= sigma <= 20.0 * (1 + 1e-6)


def test_a_root_near_the_ceiling_is_found_not_refused():
    # Steps before the bracket grow by 2, 4, 16, ...: one that would pass the ceiling evaluates it instead.
    sigma = smallest_noise(lambda s: 1e9 / s, 1.0, 1.0, ceiling=2e9, tolerance="noise", rtol=1e-6)
    assert 1e9 <= sigma <= 1e9 * (1 + 1e-6)


@settings(max_examples=200, deadline=None)
@given(c=st.floats(0.01, 100.0), power=st.floats(0.3, 4.0), target=st.floats(0.01, 10.0),
       start_error=st.floats(-3.0, 3.0), noise=st.sampled_from([1e-13, 1e-12, 1e-10]),
       rtol=st.sampled_from([1e-12, 1e-10, 1e-4]))
def test_a_function_noisy_at_the_tolerance_still_ends_and_never_overshoots(c, power, target, start_error, noise, rtol):
    # The library's accountants are searches themselves (gdp_epsilon to ~1e-12): ε(σ) is non-increasing
    # only up to a relative rounding noise, which can put the "too little noise" end of the bracket above
    # the "enough" end.  The search must still end, return an evaluated point meeting the target, and stay
    # within the tolerance of the noise-free root up to what the noise itself moves it.
    fn = Counted(lambda s: c * s ** (-power) * (1.0 + noise * math.sin(1e7 * math.log(s))))
    root = (c / target) ** (1.0 / power)
    sigma = smallest_noise(fn, target, root * math.exp(start_error), rtol=rtol, tolerance="noise", ceiling=1e300)
    assert fn.fn(sigma) <= target
    assert sigma <= root * (1 + rtol) * (1 + 2 * noise) ** (1 / power) * (1 + 1e-13)
    assert fn.calls <= 40


def test_unknown_tolerance_is_refused():
    with pytest.raises(ValueError, match="tolerance"):
        smallest_noise(lambda s: 1.0 / s, 1.0, 1.0, tolerance="delta")


# ------------------------------------------------------------------ smallest_epsilon


def _reference_epsilon(delta_of, target, hi=1e4):
    """Smallest ε with δ(ε) ≤ target by plain bisection to float resolution (the oracle)."""
    if delta_of(0.0) <= target:
        return 0.0
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if delta_of(mid) <= target else (mid, hi)
    return hi


@st.composite
def decreasing_curves(draw):
    """A random non-increasing δ(ε) on [0, ∞) with values in [0, 1]."""
    kind = draw(st.sampled_from(["tails", "vanishing", "piecewise", "staircase"]))
    if kind == "tails":  # Σ wᵢ exp(−aᵢ ε^pᵢ): Gaussian-like and heavier tails
        terms = draw(st.lists(st.tuples(st.floats(0.01, 1.0), st.floats(0.01, 10.0), st.floats(0.5, 3.0)),
                              min_size=1, max_size=3))
        total = sum(w for w, _, _ in terms)
        return lambda e: sum(w / total * math.exp(-a * e**p) for w, a, p in terms)
    if kind == "vanishing":  # Π [1 − exp((ε − zᵢ)/sᵢ)]_+^kᵢ: 0 beyond min zᵢ (Laplace-like)
        factors = draw(st.lists(st.tuples(st.floats(0.01, 20.0), st.floats(0.05, 5.0), st.integers(1, 8)),
                                min_size=1, max_size=3))
        return lambda e: math.prod((-math.expm1(min((e - z) / s, 0.0))) ** k for z, s, k in factors)
    knots = sorted(draw(st.lists(st.floats(0.0, 50.0), min_size=2, max_size=8, unique=True)))
    values = sorted(draw(st.lists(st.floats(0.0, 1.0), min_size=len(knots), max_size=len(knots))), reverse=True)
    if kind == "piecewise":  # linear between knots, flat outside: flat parts and an exact-zero tail
        return lambda e: float(np.interp(e, knots, values))
    return lambda e: values[min(int(np.searchsorted(knots, e, side="right")), len(values) - 1)]  # jumps


@settings(max_examples=300, deadline=None)
@given(curve=decreasing_curves(), target=st.sampled_from([1e-12, 1e-8, 1e-5, 1e-3, 0.05, 0.3]),
       rtol=st.sampled_from([1e-12, 1e-10, 1e-6, 1e-3]))
def test_smallest_epsilon_never_understates_and_meets_rtol(curve, target, rtol):
    fn = Counted(curve)
    eps = smallest_epsilon(fn, target, rtol=rtol)
    reference = _reference_epsilon(curve, target)
    if math.isinf(eps):
        assert curve(1e4) > target
        return
    assert curve(eps) <= target  # an evaluated point that meets the target: ε is never understated
    assert eps >= reference * (1 - 1e-15) - 1e-300
    assert eps - reference <= rtol * max(1.0, eps) * (1 + 1e-9) + 1e-15 * max(1.0, eps)
    assert fn.calls <= 130


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("target", [1e-3, 1e-6, 1e-10])
def test_smallest_epsilon_on_gaussian_curves_is_tight_and_cheap(mu, target):
    fn = Counted(lambda e: float(gdp_delta(e, mu)))
    eps = smallest_epsilon(fn, target)
    assert gdp_delta(eps, mu) <= target and gdp_delta(eps - 1e-10 * max(1.0, eps), mu) > target
    assert fn.calls <= 22  # the bisection it replaced needed 36-42


def test_smallest_epsilon_edges():
    assert smallest_epsilon(lambda e: 1e-9, 1e-6) == 0.0  # δ(0) already meets the target
    assert smallest_epsilon(lambda e: 0.5, 1e-6) == math.inf  # not even ε_max does
    assert smallest_epsilon(lambda e: 0.5 if e < 50.0 else 0.0, 1e-6, epsilon_max=40.0) == math.inf
    tiny = smallest_epsilon(lambda e: 0.5 if e == 0.0 else 0.0, 1e-6, rtol=1e-8)  # ε* = 0⁺: within rtol of it
    assert 0.0 < tiny <= 1e-8
    assert smallest_epsilon(lambda e: 0.5 if e < 9999.5 else 0.0, 1e-6) <= 9999.5 * (1 + 1e-10)


@pytest.mark.parametrize("curve", [lambda e: math.nan, lambda e: math.nan if e > 0.5 else 1.0,
                                   lambda e: math.nan if e > 3.0 else math.exp(-e)])
def test_smallest_epsilon_refuses_nan(curve):
    with pytest.raises(ValueError, match="nan"):
        smallest_epsilon(curve, 1e-6)


@pytest.mark.parametrize("kwargs, name", [({"target": 0.0}, "target"), ({"target": math.nan}, "target"),
                                          ({"rtol": 0.0}, "rtol"), ({"rtol": 1.0}, "rtol"),
                                          ({"epsilon_max": math.inf}, "epsilon_max"), ({"start": 0.0}, "start"),
                                          ({"slope": 1.0}, "slope")])
def test_smallest_epsilon_invalid_arguments_name_the_parameter(kwargs, name):
    args = {"target": 1e-6, **kwargs}
    with pytest.raises(ValueError, match=name):
        smallest_epsilon(lambda e: math.exp(-e), args.pop("target"), **args)


# ------------------------------------------------------------------ the library's calibrators, by their own accountants

PNSGD = dict(n=8, lipschitz=1.0, smoothness=2.0, strong_convexity=0.5, step_size=0.25, diameter=2.0)


@pytest.mark.parametrize("noise, random_stop", [("gaussian", False), ("gaussian", True), ("laplace", False)])
@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-3), (1.0, 1e-6), (4.0, 1e-10)])
def test_pnsgd_noise_calibration_never_overshoots(noise, random_stop, epsilon, delta):
    """δ is met at the computed ε whose certified rounding is the target (the margin inside the target), and
    missed there with the noise divided by 1 + rtol; the certificate at the returned noise states at most ε."""
    rtol = 1e-9
    level = hs.calibrate_pnsgd_noise(epsilon, delta, **PNSGD, noise=noise, random_stop=random_stop, rtol=rtol)
    key = "sigma" if noise == "gaussian" else "scale"
    aim = largest_rounding_within(epsilon)
    assert epsilon / (1 + ROUNDING_MARGIN) * (1 - 1e-15) <= aim < epsilon
    _, worst = hs.pnsgd_profile(aim, **PNSGD, **{key: level}, random_stop=random_stop)
    _, below = hs.pnsgd_profile(aim, **PNSGD, **{key: level / (1 + rtol)}, random_stop=random_stop)
    assert worst <= delta < below
    assert hs.account_pnsgd(hs.PNSGDEvent(**PNSGD, **{key: level}, random_stop=random_stop), delta).epsilon <= (
        epsilon * (1 + 1e-9))  # ε is read off the curve to 1e-10; the trainer then states the target itself


@pytest.mark.parametrize("level", [dict(sigma=0.3), dict(sigma=3.0), dict(scale=0.3), dict(scale=1.0),
                                   dict(sigma=1.0, random_stop=True)])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_pnsgd_epsilon_at_delta_never_understates(level, delta):
    account = hs.account_pnsgd(hs.PNSGDEvent(**PNSGD, **level), delta)
    random_stop = level.get("random_stop", False)
    noise = {k: v for k, v in level.items() if k != "random_stop"}
    # the certified ε meets δ; below it by the rounding margin and the search's 1e-10, δ is missed (tight)
    _, worst = hs.pnsgd_profile(account.epsilon, **PNSGD, **noise, random_stop=random_stop)
    computed = account.epsilon / (1 + ROUNDING_MARGIN)
    _, below = hs.pnsgd_profile(computed - 1e-10 * max(1.0, computed), **PNSGD, **noise, random_stop=random_stop)
    assert worst <= delta < below


def _schedule_steps(eta0, epochs, tau):
    return tuple(eta0 / ((s - 1) % tau + 1) for s in range(1, epochs + 1))


@pytest.mark.parametrize("sizes, epochs, permuted", [((50, 50, 100), 3, False), ((1,) * 50, 5, True),
                                                     ((5,) * 40, 10, True)])  # the last two: the mixture wins
@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-5), (1.0, 1e-6), (4.0, 1e-10)])
def test_output_sigma_calibration_never_overshoots(sizes, epochs, permuted, epsilon, delta):
    tau = 1 if len(sizes) == 40 else epochs
    event = sens.OutputPerturbationEvent(sens.SGDSchedule(sizes, _schedule_steps(0.5, epochs, tau), tau),
                                         smoothness=1.0, strong_convexity=0.1, gradient_difference=2.0, sigma=1.0,
                                         permuted=permuted)
    rtol = 1e-4
    sigma = sens.calibrate_output_sigma(event, epsilon, delta, rtol)

    def eps(s):
        return sens.account_output_perturbation(dataclasses.replace(event, sigma=s), delta).epsilon

    assert eps(sigma) <= epsilon < eps(sigma / (1 + rtol))


@pytest.mark.parametrize("n", [3, 20, 500])
@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-8), (1.0, 1e-6), (4.0, 1e-3 / 8)])
def test_sco_sigma_calibration_never_overshoots(n, epsilon, delta):
    sigma = sco.calibrate_sco_sigma(n, 2.0, epsilon, delta)

    def eps(s):
        return sco.account_sco(sco.SCOEvent(n, 2.0, s, 2 * n), delta).epsilon

    # Minimality at σ·(1 − 1e-9), not σ/(1 + 1e-12): the search certifies an evaluated σ' ≥ σ/(1 + 1e-12)
    # that misses the target, but the ε it evaluates (gdp_epsilon, a search to 1e-12) is non-increasing in σ
    # only up to ~1e-12 relative, so only a step well above that is a stable oracle.
    assert eps(sigma) <= epsilon < eps(sigma * (1 - 1e-9))


@pytest.mark.parametrize("epsilon, delta, q, steps", [(1.0, 1e-5, 0.01, 500), (0.05, 1e-8, 256 / 39_073, 4_579),
                                                      (2.0, 1e-5, 256 / 40_000, 9_375)])
def test_dpsgd_noise_calibrations_never_overshoot(epsilon, delta, q, steps):
    z = dpsgd.calibrate_sgd_ma_noise(epsilon, delta, q, steps, rtol=1e-4)
    assert dpsgd.sgd_ma_epsilon(z, q, steps, delta) <= epsilon < dpsgd.sgd_ma_epsilon(z / (1 + 1e-4), q, steps, delta)
    z = dpsgd.calibrate_sgd_replace_one_noise(epsilon, delta, q, steps, rtol=1e-3)
    value = dpsgd.sgd_replace_one_epsilon(z, q, steps, delta)
    assert value <= epsilon
    assert value >= epsilon * (1 - 1e-3) or dpsgd.sgd_replace_one_epsilon(z / (1 + 1e-3), q, steps, delta) > epsilon
