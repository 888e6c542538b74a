"""``accounting.calibration.smallest_noise`` against functions whose root is known in closed form.

Oracles: ε(σ) = c·σ^(−p) (root (c/ε)^(1/p)), a curved sum of two power laws (root by bisection to
1e-13 with math only), and step functions for the ε = ∞ / ε = 0 edges.  Properties: never
overshoots, ends inside the stated tolerance, and needs few evaluations from a good start.
"""

import math

import pytest
from hypothesis import given, settings, strategies as st

from dpconvex.accounting.calibration import smallest_noise


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
