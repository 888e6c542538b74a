"""Output-perturbation accounting for mini-batch SGD (Chen, Lee, Kifer 2019, arXiv:1808.07090)."""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import norm

from certified import assert_certified
from dpconvex.accounting import sensitivity as sens
from dpconvex.accounting.sensitivity import OutputPerturbationEvent, SGDSchedule

ORDERS = np.array([1.05, 1.5, 2.0, 3.0, 8.0, 32.0, 256.0, 4096.0])


def nsgd_steps(eta0: float, epochs: int) -> tuple[float, ...]:
    return tuple(eta0 / s for s in range(1, epochs + 1))


def rsgd_ar_steps(eta0: float, epochs: int, tau: int) -> tuple[float, ...]:
    """η₀/h with h reset after every averaging (Chen et al. Alg. 3, lines 6-7 and 14)."""
    return tuple(eta0 / ((s - 1) % tau + 1) for s in range(1, epochs + 1))


def algorithm2_verbatim(schedule: SGDSchedule, L: float, mu: float, gd: float) -> np.ndarray:
    """Chen et al. Alg. 2 with eq. (5), one update at a time: an oracle independent of the closed form."""
    m, tau = len(schedule.batch_sizes), schedule.averaging_interval
    delta, window = np.zeros(m), []
    for s, eta in enumerate(schedule.epoch_step_sizes, start=1):
        rho = max(abs(1 - eta * mu), abs(1 - eta * L))
        for j, size in enumerate(schedule.batch_sizes):
            delta = rho * delta
            delta[j] += eta * gd / size
            window.append(delta.copy())
        if tau is not None and s % tau == 0:
            delta, window = np.mean(window, axis=0), []
    return delta


# --------------------------------------------------------------------------------- sensitivity_vector


def test_proposition2_closed_form_is_the_limit_of_the_recursion():
    L, mu, gd, eta, m, size = 4.0, 0.5, 2.0, 0.1, 5, 7  # ρ = max(0.95, 0.6) = 0.95, ρ^2000 ≈ 1e-45
    delta = sens.sensitivity_vector(
        SGDSchedule((size,) * m, (eta,) * 400), smoothness=L, strong_convexity=mu, gradient_difference=gd
    )
    closed = sens.proposition2_sensitivity(eta, size, m, smoothness=L, strong_convexity=mu, gradient_difference=gd)
    assert delta[-1] == delta.max()
    assert delta[-1] == pytest.approx(closed, rel=1e-9)
    # Supplement eq. (7): batch j converges to ρ^{m−1−j} times the last batch's limit.
    assert delta == pytest.approx(closed * 0.95 ** np.arange(m - 1, -1, -1), rel=1e-9)


def test_outpert_gd_is_proposition2_with_one_batch_and_optimal_step():
    L, mu, gd, n = 3.0, 0.25, 1.7, 250
    eta = 2.0 / (L + mu)  # ρ = (L − μ)/(L + μ) ≈ 0.846
    delta = sens.sensitivity_vector(SGDSchedule((n,), (eta,) * 400), smoothness=L, strong_convexity=mu,
                                    gradient_difference=gd)
    expected = gd / (n * mu)
    assert sens.outpert_gd_sensitivity(n, smoothness=L, strong_convexity=mu, gradient_difference=gd) == expected
    assert delta[0] == pytest.approx(expected, rel=1e-9)
    assert sens.proposition2_sensitivity(eta, n, 1, smoothness=L, strong_convexity=mu,
                                         gradient_difference=gd) == pytest.approx(expected, rel=1e-12)


def test_hand_unrolled_nsgd_two_batches_two_epochs():
    # η₀ = 1, μ = 1/2, L = 1, gradient_difference = 2, |B_0| = 1, |B_1| = 2 (all dyadic: exact in binary).
    # Epoch 1: η = 1,   ρ = max(|1 − 1/2|, |1 − 1|) = 1/2,   expansions (2·1/1, 2·1/2) = (2, 1).
    #   batch 0: Δ = (0, 0)·1/2 + (2, 0) = (2, 0);   batch 1: Δ = (1, 0) + (0, 1) = (1, 1).
    # Epoch 2: η = 1/2, ρ = max(|1 − 1/4|, |1 − 1/2|) = 3/4, expansions (1, 1/2).
    #   batch 0: Δ = (3/4, 3/4) + (1, 0) = (7/4, 3/4);   batch 1: Δ = (21/16, 9/16) + (0, 1/2) = (21/16, 17/16).
    # The first batch is the worst: "worst case = last batch" fails with unequal batches.
    schedule = SGDSchedule((1, 2), nsgd_steps(1.0, 2))
    delta = sens.sensitivity_vector(schedule, smoothness=1.0, strong_convexity=0.5, gradient_difference=2.0)
    assert delta.tolist() == [21 / 16, 17 / 16]


def test_averaging_replaces_delta_by_the_mean_of_the_window():
    # τ = 1, T = 1 (same constants as above): post-update vectors (2, 0) and (1, 1) → mean (3/2, 1/2).
    one = SGDSchedule((1, 2), (1.0,), averaging_interval=1)
    kw = dict(smoothness=1.0, strong_convexity=0.5, gradient_difference=2.0)
    assert sens.sensitivity_vector(one, **kw).tolist() == [1.5, 0.5]
    # A second epoch (η = 1/2, ρ = 3/4, expansions (1, 1/2)) from (3/2, 1/2):
    #   (9/8 + 1, 3/8) = (17/8, 3/8), then (51/32, 9/32 + 1/2) = (51/32, 25/32); mean (119/64, 37/64).
    two = SGDSchedule((1, 2), (1.0, 0.5), averaging_interval=1)
    assert sens.sensitivity_vector(two, **kw).tolist() == [119 / 64, 37 / 64]
    # τ larger than T: no averaging happens.
    assert sens.sensitivity_vector(dataclasses.replace(two, averaging_interval=3), **kw).tolist() == [21 / 16, 17 / 16]


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 50), min_size=1, max_size=8),
    steps=st.lists(st.floats(1e-3, 3.0), min_size=1, max_size=12),
    tau=st.one_of(st.none(), st.integers(1, 4)),
    mu=st.floats(1e-2, 1.0), ratio=st.floats(1.0, 20.0), gd=st.one_of(st.just(0.0), st.floats(1e-3, 5.0)),
)
def test_closed_form_matches_algorithm2_update_by_update(sizes, steps, tau, mu, ratio, gd):
    schedule = SGDSchedule(tuple(sizes), tuple(steps), tau)  # includes ρ > 1 (η up to 3, L up to 20)
    got = sens.sensitivity_vector(schedule, smoothness=mu * ratio, strong_convexity=mu, gradient_difference=gd)
    np.testing.assert_allclose(got, algorithm2_verbatim(schedule, mu * ratio, mu, gd), rtol=1e-10, atol=0)


def test_expanding_steps_overflow_to_inf_without_nan():
    schedule = SGDSchedule((1,) * 600, (100.0,) * 3)  # ρ = 99, ρ^600 overflows
    delta = sens.sensitivity_vector(schedule, smoothness=1.0, strong_convexity=1.0, gradient_difference=1.0)
    assert not np.any(np.isnan(delta)) and np.isinf(delta.max())
    zero = sens.sensitivity_vector(schedule, smoothness=1.0, strong_convexity=1.0, gradient_difference=0.0)
    assert np.all(zero == 0.0)


def test_schedule_properties():
    schedule = SGDSchedule([3, 1, 4], [0.5, 0.25], 2)
    assert schedule.batch_sizes == (3, 1, 4) and schedule.epoch_step_sizes == (0.5, 0.25)
    assert schedule.n == 8
    np.testing.assert_array_equal(schedule.probabilities, [3 / 8, 1 / 8, 4 / 8])


# ------------------------------------------------- empirical check of Lemma 2 on a real mini-batch GD


def logistic_grad(w, X, y, lam):
    """Mean gradient of log(1 + exp(−y w·x)) + λ/2‖w‖²: Hessian in [λ, λ + max‖x‖²/4]."""
    return -(X * (y * expit(-y * (X @ w)))[:, None]).mean(axis=0) + lam * w


def linear_grad(w, X, y, lam):
    """Mean gradient of −y w·x + λ/2‖w‖²: Hessian exactly λI, gradient difference 2 for ‖x‖ = 1."""
    return -(X * y[:, None]).mean(axis=0) + lam * w


def train(X, y, schedule, lam, grad):
    """Noiseless mini-batch GD in the given batch order, with eq. (5) averaging (Alg. 1 / Alg. 3)."""
    w, window, tau = np.zeros(X.shape[1]), [], schedule.averaging_interval
    bounds = np.cumsum((0,) + schedule.batch_sizes)
    for s, eta in enumerate(schedule.epoch_step_sizes, start=1):
        for a, b in zip(bounds[:-1], bounds[1:]):
            w = w - eta * grad(w, X[a:b], y[a:b], lam)
            window.append(w)
        if tau is not None and s % tau == 0:
            w, window = np.mean(window, axis=0), []
    return w


def unit_ball(rng, k, d):
    x = rng.normal(size=(k, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0.2, 1.0, size=(k, 1))


SCHEDULES = {
    "nsgd": SGDSchedule((3, 2, 4), nsgd_steps(2.0, 8)),
    "nsgd-expanding": SGDSchedule((3, 2, 4), nsgd_steps(10.0, 8)),  # ρ_1 = |1 − 10·0.35| = 2.5 > 1
    "rsgd-ar": SGDSchedule((3, 2, 4), rsgd_ar_steps(2.0, 8, 2), averaging_interval=2),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_lemma2_bound_holds_for_logistic_regression_neighbours(name):
    schedule, lam, rng = SCHEDULES[name], 0.1, np.random.default_rng(7)
    delta = sens.sensitivity_vector(schedule, smoothness=0.25 + lam, strong_convexity=lam, gradient_difference=2.0)
    batch_of = np.repeat(np.arange(3), schedule.batch_sizes)
    for _trial in range(4):
        X, y = unit_ball(rng, schedule.n, 2), rng.choice([-1.0, 1.0], size=schedule.n)
        w = train(X, y, schedule, lam, logistic_grad)
        for i in range(schedule.n):
            for x_new, y_new in [(unit_ball(rng, 1, 2)[0], rng.choice([-1.0, 1.0])), (-X[i], y[i]), (X[i], -y[i])]:
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = x_new, y_new
                gap = np.linalg.norm(w - train(X2, y2, schedule, lam, logistic_grad))
                assert gap <= delta[batch_of[i]] + 1e-12


@pytest.mark.parametrize("averaging", [None, 2])
def test_lemma2_bound_is_attained_by_a_linear_loss(averaging):
    # Hessian λI (L = μ = λ, ρ = 1 − ηλ ≥ 0) and x vs −x: every inequality in Lemma 2 and eq. (5) is tight.
    lam, sizes = 0.3, (2, 5, 3)
    steps = rsgd_ar_steps(1.5, 6, 2) if averaging else nsgd_steps(1.5, 6)
    schedule = SGDSchedule(sizes, steps, averaging)
    delta = sens.sensitivity_vector(schedule, smoothness=lam, strong_convexity=lam, gradient_difference=2.0)
    rng = np.random.default_rng(3)
    X, y = unit_ball(rng, schedule.n, 3), np.ones(schedule.n)
    X[:] /= np.linalg.norm(X, axis=1, keepdims=True)
    w = train(X, y, schedule, lam, linear_grad)
    gaps = []
    for i in range(schedule.n):
        X2 = X.copy()
        X2[i] = -X[i]
        gaps.append(np.linalg.norm(w - train(X2, y, schedule, lam, linear_grad)))
    np.testing.assert_allclose(gaps, np.repeat(delta, sizes), rtol=1e-10)


# ----------------------------------------------------------------------------------- RDP curves


def test_mixture_is_below_the_worst_case_and_equal_for_equal_sensitivities():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = int(rng.integers(1, 12))
        delta, q = rng.uniform(0, 3, m), rng.dirichlet(np.ones(m))
        sigma = float(rng.uniform(0.1, 5))
        mix, worst = sens.mixture_rdp(ORDERS, delta, q, sigma), sens.worst_case_rdp(ORDERS, delta, sigma)
        assert np.all(mix <= worst * (1 + 1e-12))
        np.testing.assert_allclose(worst, ORDERS * delta.max() ** 2 / (2 * sigma**2), rtol=1e-14)
        flat = np.full(m, delta[0])
        np.testing.assert_allclose(
            sens.mixture_rdp(ORDERS, flat, q, sigma), sens.worst_case_rdp(ORDERS, flat, sigma), rtol=1e-12
        )


def test_mixture_concentrated_on_one_batch_is_that_batch_gaussian():
    delta, sigma = np.array([4.0, 0.5, 1.5]), 0.7
    for j in range(3):
        q = np.eye(3)[j]
        np.testing.assert_allclose(sens.mixture_rdp(ORDERS, delta, q, sigma), ORDERS * delta[j] ** 2 / (2 * sigma**2),
                                   rtol=1e-12)


def test_mixture_is_stable_at_huge_exponents():
    mpmath.mp.dps = 60
    delta, q, sigma = np.array([0.3, 2.0, 5.0, 9.0]), np.array([0.4, 0.3, 0.2, 0.1]), 0.25
    got = sens.mixture_rdp(ORDERS, delta, q, sigma)
    assert np.all(np.isfinite(got))  # exponents reach α(α − 1)·648 ≈ 1e10: exp overflows in floats
    for alpha, value in zip(ORDERS, got):
        a = mpmath.mpf(float(alpha))
        h = mpmath.fsum(mpmath.mpf(float(qj))
                        * mpmath.exp(a * (a - 1) * mpmath.mpf(float(dj)) ** 2 / (2 * mpmath.mpf(sigma) ** 2))
                        for qj, dj in zip(q, delta))
        assert value == pytest.approx(float(mpmath.log(h) / (a - 1)), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 20), min_size=1, max_size=6),
    steps=st.lists(st.floats(1e-3, 2.0), min_size=1, max_size=8),
    tau=st.one_of(st.none(), st.integers(1, 3)),
    gd=st.floats(0.0, 5.0), extra=st.floats(0.0, 5.0),
)
def test_sensitivity_is_non_decreasing_in_gradient_difference(sizes, steps, tau, gd, extra):
    schedule, kw = SGDSchedule(tuple(sizes), tuple(steps), tau), dict(smoothness=2.0, strong_convexity=0.2)
    small = sens.sensitivity_vector(schedule, gradient_difference=gd, **kw)
    assert np.all(small <= sens.sensitivity_vector(schedule, gradient_difference=gd + extra, **kw))


@settings(max_examples=50, deadline=None)
@given(
    delta=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=6),
    sigma=st.floats(1e-2, 10.0), factor=st.floats(1.0, 10.0),
)
def test_rdp_is_non_increasing_in_sigma(delta, sigma, factor):
    delta = np.array(delta)
    q = np.full(delta.size, 1.0 / delta.size)
    for curve in (lambda s: sens.worst_case_rdp(ORDERS, delta, s), lambda s: sens.mixture_rdp(ORDERS, delta, q, s)):
        # 1e-15 absolute: sensitivities ~1e-8 give RDP ~1e-18, below the log-sum-exp's rounding floor
        # (hypothesis found delta=[0, 1e-8], sigma=4, factor=1.5: 1.1e-17 against 9.1e-18).
        assert np.all(curve(sigma * factor) <= curve(sigma) * (1 + 1e-12) + 1e-15)


# ------------------------------------------------------------------------------ (ε, δ) accounting

EVENT = OutputPerturbationEvent(
    SGDSchedule((100,) * 10, (1.0,) * 5), smoothness=1.0, strong_convexity=0.5, gradient_difference=2.0,
    sigma=0.05, permuted=True,
)


def test_worst_case_is_the_exact_gaussian_mechanism():
    fixed = dataclasses.replace(EVENT, permuted=False)
    result = sens.account_output_perturbation(fixed, 1e-6)
    assert result.bound == "worst-case" and set(result.candidates) == {"worst-case"}
    assert result.order is None and result.conversion == "exact-gdp"
    assert "arXiv:1808.07090" in result.theorem and "Alg. 2" in result.theorem
    # The certified Δ is Alg. 2 replayed verbatim, rounded up by the margin; the certified ε is the exact
    # Gaussian mechanism's ε at that Δ, rounded up again.
    certified_sensitivity = fixed.sensitivities().max()
    assert_certified(certified_sensitivity, algorithm2_verbatim(fixed.schedule, 1.0, 0.5, 2.0).max(), rel=1e-10)
    r = certified_sensitivity / fixed.sigma

    def excess(eps):  # Balle & Wang 2018 Thm 8, written out with scipy.stats: δ(ε) of N(0, σ²) with Δ, minus δ
        return norm.cdf(r / 2 - eps / r) - np.exp(eps) * norm.cdf(-r / 2 - eps / r) - 1e-6

    exact = brentq(excess, 0.0, r * r / 2 + 40 * r, xtol=1e-15, rtol=1e-15)  # δ(ε) decreases in ε
    assert_certified(result.epsilon, exact, rel=1e-9)


def test_permutation_gives_a_mixture_candidate_and_best_of_picks_the_smaller():
    result = sens.account_output_perturbation(EVENT, 1e-6)
    assert set(result.candidates) == {"worst-case", "mixture"}
    assert result.epsilon == min(result.candidates.values())
    assert result.bound == "mixture"  # ρ = 1/2: the last batch dominates Δ but has probability 1/10
    assert result.order is not None and result.conversion == "improved"
    assert "Lemma 3" in result.theorem and "Prop. 3" in result.theorem
    assert any("permuted" in a for a in result.assumptions)
    curves = sens.rdp_curves(EVENT, ORDERS)
    assert set(curves) == {"worst_case", "mixture"}
    assert set(sens.rdp_curves(dataclasses.replace(EVENT, permuted=False), ORDERS)) == {"worst_case"}


events = st.builds(
    lambda sizes, eta0, epochs, tau, mu, ratio, permuted: OutputPerturbationEvent(
        SGDSchedule(tuple(sizes), rsgd_ar_steps(eta0, epochs, tau or epochs), tau), smoothness=mu * ratio,
        strong_convexity=mu, gradient_difference=2.0, sigma=1.0, permuted=permuted,
    ),
    sizes=st.lists(st.integers(1, 200), min_size=1, max_size=8), eta0=st.floats(0.01, 2.0),
    epochs=st.integers(1, 10), tau=st.one_of(st.none(), st.integers(1, 3)),
    mu=st.floats(0.01, 1.0), ratio=st.floats(1.0, 10.0), permuted=st.booleans(),
)


@settings(max_examples=15, deadline=None)
@given(event=events, epsilon=st.floats(0.1, 8.0), delta=st.sampled_from([1e-3, 1e-6, 1e-10]))
def test_calibration_never_overshoots(event, epsilon, delta):
    sigma = sens.calibrate_output_sigma(event, epsilon, delta)
    assert sens.account_output_perturbation(dataclasses.replace(event, sigma=sigma), delta).epsilon <= epsilon
    assert sens.account_output_perturbation(dataclasses.replace(event, sigma=0.99 * sigma), delta).epsilon > epsilon


# ---------------------------------------------------------------------------------------- bad input

KW = dict(smoothness=1.0, strong_convexity=0.5, gradient_difference=2.0)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: SGDSchedule((), (1.0,)), "batch_sizes"),
        (lambda: SGDSchedule((3, 0), (1.0,)), "batch_sizes"),
        (lambda: SGDSchedule((3,), ()), "epoch_step_sizes"),
        (lambda: SGDSchedule((3,), (0.1, -1.0)), "epoch_step_sizes"),
        (lambda: SGDSchedule((3,), (float("inf"),)), "epoch_step_sizes"),
        (lambda: SGDSchedule((3,), (1.0,), averaging_interval=0), "averaging_interval"),
        (lambda: sens.sensitivity_vector(SGDSchedule((3,), (1.0,)), **{**KW, "strong_convexity": 0.0}),
         "strong_convexity"),
        (lambda: sens.sensitivity_vector(SGDSchedule((3,), (1.0,)), **{**KW, "smoothness": 0.4}), "smoothness"),
        (lambda: sens.sensitivity_vector(SGDSchedule((3,), (1.0,)), **{**KW, "gradient_difference": -1.0}),
         "gradient_difference"),
        (lambda: sens.sensitivity_vector((3,), **KW), "schedule"),
        (lambda: sens.proposition2_sensitivity(2.5, 10, 3, **KW), "step_size"),  # ρ = 1.5
        (lambda: sens.proposition2_sensitivity(2.0, 10, 3, **KW), "step_size"),  # ρ = 1 exactly
        (lambda: sens.proposition2_sensitivity(0.5, 0, 3, **KW), "batch_size"),
        (lambda: sens.outpert_gd_sensitivity(0, **KW), "n must"),
        (lambda: sens.worst_case_rdp(ORDERS, [1.0], 0.0), "sigma"),
        (lambda: sens.worst_case_rdp([1.0, 2.0], [1.0], 1.0), "orders"),
        (lambda: sens.worst_case_rdp(ORDERS, [], 1.0), "sensitivities"),
        (lambda: sens.mixture_rdp(ORDERS, [1.0, 2.0], [0.5, 0.6], 1.0), "probabilities"),
        (lambda: sens.mixture_rdp(ORDERS, [1.0, 2.0], [1.0], 1.0), "probabilities"),
        (lambda: sens.mixture_rdp(ORDERS, [1.0, -2.0], [0.5, 0.5], 1.0), "sensitivities"),
        (lambda: sens.mixture_rdp(ORDERS, [1.0, 2.0], [0.5, 0.5], -1.0), "sigma"),
        (lambda: dataclasses.replace(EVENT, sigma=0.0), "sigma"),
        (lambda: dataclasses.replace(EVENT, sigma=float("nan")), "sigma"),
        (lambda: dataclasses.replace(EVENT, strong_convexity=-1.0), "strong_convexity"),
        (lambda: dataclasses.replace(EVENT, smoothness=0.1), "smoothness"),
        (lambda: sens.account_output_perturbation(EVENT, 0.0), "delta"),
        (lambda: sens.account_output_perturbation(EVENT, 1.0), "delta"),
        (lambda: sens.calibrate_output_sigma(EVENT, 1.0, 1.5), "delta"),
        (lambda: sens.calibrate_output_sigma(EVENT, 0.0, 1e-6), "epsilon"),
        (lambda: sens.calibrate_output_sigma(dataclasses.replace(EVENT, gradient_difference=0.0), 1.0, 1e-6),
         "gradient_difference"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(make, message):
    with pytest.raises(ValueError, match=message):
        make()
