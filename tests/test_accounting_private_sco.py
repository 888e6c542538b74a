"""Accounting of Arora, Marinov, Ullah's Algorithm 1: the paper's formulas and the dp-accounting bound.

Oracles: the paper's statements typed from the text (Lemma 2, Theorems 5 and 6), the exact
Gaussian-mechanism δ(ε) (closed form, Dong et al. Cor. 2.13) for Lemma 2's calibration, and the
coupon-collector mean for the stopping time τ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.stats import norm

from certified import assert_certified
from dpconvex.accounting import private_sco as sco
from dpconvex.accounting.rounding import round_up


def exact_gaussian_delta(epsilon: float, ratio: float) -> float:
    """δ(ε) of the Gaussian mechanism with sensitivity/σ = ratio: Φ(−ε/r + r/2) − e^ε Φ(−ε/r − r/2)."""
    return norm.cdf(-epsilon / ratio + ratio / 2) - math.exp(epsilon) * norm.cdf(-epsilon / ratio - ratio / 2)


@pytest.mark.parametrize("delta", [0.1, 1e-3, 1e-6, 1e-10])
def test_lemma2_calibration_is_a_valid_gaussian_mechanism_up_to_1_256(delta):
    """σ = S√(3 log(1/δ))/ε̃ gives (ε̃, δ)-DP for ε̃ ≤ 1.256 (Lemma 2 as used in Thm 5), exactly checked."""
    for step_epsilon in np.linspace(0.01, sco.LEMMA2_MAX_STEP_EPSILON, 60):
        sigma = 2.0 * math.sqrt(3 * math.log(1 / delta)) / step_epsilon
        assert sco.lemma2_step_epsilon(sigma, 2.0, delta) == pytest.approx(step_epsilon, rel=1e-12)
        assert exact_gaussian_delta(step_epsilon, 2.0 / sigma) <= delta


def test_theorem5_statement_golden_value():
    """Thm 5: (2ε̃√(2τ log(1/δ'))/|S| + 4τε̃²/|S|²); ε̃ = 1, τ = 200, n = 100, δ' = 1e-5 by hand:
    2·√(400·ln 1e5)/100 + 800/10⁴ = 2·67.8614/100 + 0.08 = 1.43723."""
    assert sco.theorem5_epsilon(1.0, 100, 200, 1e-5) == pytest.approx(1.437228, rel=1e-5)
    assert sco.theorem5_epsilon(1.3, 100, 200, 1e-5) == math.inf  # outside ε̃ ≤ 1.256


def test_theorem6_numbers_and_its_consistency_with_theorem5():
    """Thm 6: σ = 8L√log(1/δ)/(√n ε) (L → S = 2L) gives (4ε(√log(1/δ') + 2), δ + δ' + 2e^{−n/16});
    its proof runs Thm 5 at τ = 2n with ε̃ ≤ √n ε, so our Thm 5 value must not exceed it."""
    n, eps, delta, delta_prime = 10_000, 0.004, 1e-6, 1e-6
    sigma = sco.theorem6_sigma(eps, delta, n, 2.0)
    assert sigma == pytest.approx(8 * 2.0 * math.sqrt(math.log(1e6)) / (100 * 0.004))
    bound_eps, bound_delta = sco.theorem6_guarantee(eps, delta, delta_prime, n)
    assert bound_eps == pytest.approx(4 * 0.004 * (math.sqrt(math.log(1e6)) + 2))
    assert bound_delta == pytest.approx(2e-6 + 2 * math.exp(-625))
    step = sco.lemma2_step_epsilon(sigma, 2.0, delta)
    assert step <= math.sqrt(n) * eps
    assert sco.theorem5_epsilon(step, n, 2 * n, delta_prime) <= bound_eps
    with pytest.raises(ValueError, match="epsilon <= 1/"):
        sco.theorem6_guarantee(0.1, delta, delta_prime, n)


def test_paper_epsilon_is_the_best_valid_split():
    event = sco.SCOEvent(n=1000, sensitivity=2.0, sigma=60.0, steps=2000)
    best = sco.paper_epsilon(event, 1e-6)
    for fraction in (0.1, 0.5, 0.9):  # every split is a valid certificate; the reported one is the best
        step = sco.lemma2_step_epsilon(60.0, 2.0, (1 - fraction) * 1e-6 * 1000 / 2000)
        assert best <= sco.theorem5_epsilon(step, 1000, 2000, fraction * 1e-6) + 1e-12


def test_uncertified_composition_numbers_at_theorem6_sigma():
    """n = 10,000, L = 1, the σ of Thm 6 at ε̄ = 1 (Remark 1 with δ = δ' = δ̄/3): the paper's own
    composition gives ε < 1 (consistent with Thm 6), dp-accounting's per-step composition less; both
    are reported, not certified (module note)."""
    n, delta_bar = 10_000, 1e-6
    eps_param = 1.0 / (8 * math.sqrt(math.log(3 / delta_bar)))
    sigma = sco.theorem6_sigma(eps_param, delta_bar / 3, n, 2.0)
    event = sco.SCOEvent(n, 2.0, sigma, 2 * n)
    reported = sco.uncertified_epsilons(event, delta_bar)
    assert reported["dp-accounting"] < reported["paper"] < 1.0
    assert sco.account_sco(event, delta_bar).bound == "single-use"


@settings(max_examples=6, deadline=None)
@given(sigma=st.floats(0.3, 200.0), n=st.integers(2, 5000))
def test_certificate_is_the_single_use_bound_and_decreases_in_sigma(sigma, n):
    low = sco.account_sco(sco.SCOEvent(n, 2.0, sigma, 2 * n), 1e-6)
    high = sco.account_sco(sco.SCOEvent(n, 2.0, sigma * 1.5, 2 * n), 1e-6)
    # the certificate is the single-use bound, rounded up by the margin
    bound = sco.single_use_epsilon(sco.SCOEvent(n, 2.0, sigma, 2 * n), 1e-6)
    assert low.epsilon == round_up(bound)
    assert_certified(low.epsilon, bound, rel=1e-12)  # rel: round_up's last ulp
    assert high.epsilon <= low.epsilon


@pytest.mark.parametrize("n", [3, 500])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_calibration_never_overshoots_and_is_tight(n, epsilon):
    sigma = sco.calibrate_sco_sigma(n, 2.0, epsilon, 1e-6)
    # tight on the certified curve (the account's ε, margin included)
    assert sco.account_sco(sco.SCOEvent(n, 2.0, sigma, 2 * n), 1e-6).epsilon <= epsilon
    assert sco.account_sco(sco.SCOEvent(n, 2.0, sigma * 0.999, 2 * n), 1e-6).epsilon > epsilon
    # the factor (⌈n/2⌉ − 1)/n, typed: 1/3 for n = 3, 249/500 for n = 500
    exposure = (math.ceil(n / 2) - 1) / n
    assert exact_gaussian_delta(epsilon, 2.0 / sigma) * exposure <= 1e-6
    # closed form: σ = S/μ with δ(ε; μ)·(⌈n/2⌉ − 1)/n = 10⁻⁶ exactly; the margin costs at most 1 + 10⁻⁵ in σ
    mu = brentq(lambda m: exact_gaussian_delta(epsilon, m) * exposure - 1e-6, 1e-3, 50.0, xtol=1e-15, rtol=1e-15)
    assert_certified(sigma, 2.0 / mu, rel=1e-9)


def test_calibration_refuses_a_delta_that_every_sigma_meets():
    with pytest.raises(ValueError, match=r"delta must be below \(ceil\(n/2\) - 1\)/n = 0.3333"):
        sco.calibrate_sco_sigma(3, 2.0, 1.0, 0.34)


@pytest.mark.parametrize("field, value", [("n", 1), ("sensitivity", 0.0), ("sigma", -1.0), ("steps", 0)])
def test_bad_event_names_the_parameter(field, value):
    kwargs = dict(n=10, sensitivity=2.0, sigma=1.0, steps=20)
    kwargs[field] = value
    with pytest.raises(ValueError, match=field):
        sco.SCOEvent(**kwargs)
