"""E_γ accounting of PNSGD (Asoodeh, Diaz, Calmon 2020) against independent computations."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.optimize import brentq
from scipy.stats import laplace, norm

from dpconvex.accounting import gdp
from dpconvex.accounting import hockey_stick as hs
from dpconvex.accounting.rounding import largest_rounding_within, round_up

# ---------------------------------------------------------------- single-step divergences


def theta_readme(gamma: float, r: float) -> float:
    """README Def. 1 evaluated independently with scipy.stats.norm.sf."""
    lg = np.log(gamma)
    return norm.sf(lg / r - r / 2) - gamma * norm.sf(lg / r + r / 2)


def e_gamma_quad(p, q, gamma: float, points) -> float:
    f = lambda x: max(p(x) - gamma * q(x), 0.0)
    cuts = [-np.inf, *sorted(points), np.inf]
    return sum(integrate.quad(f, a, b, limit=200, epsabs=1e-13, epsrel=1e-11)[0] for a, b in zip(cuts[:-1], cuts[1:]))


@pytest.mark.parametrize("gamma, r", [(1.0, 0.3), (1.0, 2.0), (np.e, 1.0), (1.5, 0.1), (5.0, 3.0), (20.0, 6.0)])
def test_theta_matches_readme_formula_and_quadrature(gamma, r):
    got = float(hs.gaussian_hockey_stick(gamma, r))
    assert got == pytest.approx(theta_readme(gamma, r), rel=1e-9, abs=1e-15)
    # Lemma 2: E_γ(N(r,1) ‖ N(0,1)); the set {p > γq} is x > log γ / r + r/2
    quad = e_gamma_quad(lambda x: norm.pdf(x, r, 1), norm.pdf, gamma, [np.log(gamma) / r + r / 2])
    assert got == pytest.approx(quad, rel=1e-7, abs=1e-12)
    assert float(gdp.gdp_delta(np.log(gamma), r)) == got  # θ_γ(r) is gdp_delta(log γ, r)
    assert np.exp(float(hs.log_gaussian_hockey_stick(gamma, r))) == pytest.approx(got, rel=1e-9)


def theta_mpmath_log(gamma: float, r: float) -> float:
    mpmath.mp.dps = 60
    g, r_m = mpmath.mpf(gamma), mpmath.mpf(r)
    start = mpmath.log(g) / r_m + r_m / 2
    # the integrand decays on the scale 1/start past its zero at ``start``: subdivide accordingly
    cuts = [start + mpmath.mpf(k) / start for k in (0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128)] + [start + 40]
    val = mpmath.quad(lambda x: mpmath.npdf(x, r_m, 1) - g * mpmath.npdf(x, 0, 1), cuts)
    return float(mpmath.log(val))


@pytest.mark.parametrize("epsilon, r", [(1.0, 0.1), (5.0, 0.2), (3.0, 0.05), (20.0, 1.0), (2.0, 0.5)])
def test_log_theta_tiny_values_against_mpmath(epsilon, r):
    expected = theta_mpmath_log(np.exp(epsilon), r)
    got = float(hs.log_gaussian_hockey_stick(np.exp(epsilon), r))
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)
    if expected < np.log(1e-30):
        assert float(hs.gaussian_hockey_stick(np.exp(epsilon), r)) < 1e-25  # linear form is only ~0 there


@pytest.mark.parametrize("gamma", [1.0, 1.3, np.e, np.e**2 * 0.999, np.e**2 * 1.001, 30.0])
@pytest.mark.parametrize("distance, b", [(1.0, 0.5), (0.2, 1.0), (3.0, 2.0)])
def test_laplace_lemma1_against_quadrature(gamma, distance, b):
    p, q = (lambda x: laplace.pdf(x, distance, b)), (lambda x: laplace.pdf(x, 0.0, b))
    kinks = [0.0, distance]
    if p(0.0) < gamma * q(0.0) and p(distance) > gamma * q(distance):  # the crossing {p = γq}
        kinks.append(brentq(lambda x: p(x) - gamma * q(x), 0.0, distance, xtol=1e-15))
    quad = e_gamma_quad(p, q, gamma, kinks)
    got = float(hs.laplace_hockey_stick(gamma, distance, b))
    assert got == pytest.approx(quad, abs=1e-9)
    assert float(hs.laplace_hockey_stick(gamma, -distance, b)) == got
    if gamma > np.exp(distance / b):
        assert got == 0.0 and hs.log_laplace_hockey_stick(gamma, distance, b) == -np.inf


def test_mechanism_deltas_and_contraction_helpers():
    assert float(hs.gaussian_mechanism_delta(0.7, 2.0, 4.0)) == pytest.approx(float(gdp.gdp_delta(0.7, 0.5)), rel=1e-12)
    assert float(hs.laplace_mechanism_delta(0.3, 1.0, 1.0)) == pytest.approx(1 - np.exp(0.15 - 0.5))
    assert float(hs.laplace_mechanism_delta(1.0, 1.0, 1.0)) == 0.0  # pure 1-DP
    assert float(hs.projected_gaussian_contraction(2.0, 3.0, 1.5)) == float(hs.gaussian_hockey_stick(2.0, 2.0))
    assert hs.gradient_step_lipschitz(0.1, 4.0, 1.0) == pytest.approx(0.9)
    assert hs.gradient_step_lipschitz(0.5, 4.0, 1.0) == pytest.approx(1.0)


def test_infinite_gamma_gives_zero_not_nan():
    # e^ε overflows to γ = ∞ for ε > 709.78: E_∞ of two Gaussians is 0 (1 only for disjoint supports,
    # r = ∞).  It was nan, which a search must refuse (it is neither too much nor enough).
    np.testing.assert_array_equal(hs.gaussian_hockey_stick(np.inf, [0.0, 2.0, np.inf]), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(hs.log_gaussian_hockey_stick(np.inf, [0.0, 2.0, np.inf]), [-np.inf, -np.inf, 0.0])
    for epsilon in (709.0, 710.0, 1e4):
        assert float(hs.gaussian_mechanism_delta(epsilon, 1.0, 1.0)) == 0.0
        assert float(hs.pnsgd_gaussian_delta(epsilon, **KW, record=8, sigma=1.0)) == 0.0
        assert float(hs.pnsgd_random_stop_delta(epsilon, **KW, sigma=1.0)) == 0.0


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(0.05, 10.0), delta=st.floats(1e-12, 0.5))
def test_epsilon_for_delta_never_understates(mu, delta):
    eps = hs.epsilon_for_delta(lambda e: float(gdp.gdp_delta(e, mu)), delta)
    assert gdp.gdp_delta(eps, mu) <= delta
    assert eps >= gdp.gdp_epsilon(delta, mu) - 1e-8 * max(1.0, eps)
    assert eps == pytest.approx(gdp.gdp_epsilon(delta, mu), rel=1e-8, abs=1e-9)


# ---------------------------------------------------------------- exact 1-D PNSGD chain

D, LAM, ETA, DMAX, N_REC = 2.0, 1.0, 0.25, 3.0, 5
LIP = LAM * (D / 2 + DMAX)  # sup_{x∈K, |d|≤DMAX} |∇ℓ(x, d)| = λ(D/2 + DMAX) for ℓ = (λ/2)(x − d)²
GRID = 2001  # odd: x_0 = 0 is a cell centre. Doubling the grid moves E_γ by < 1e-7 (checked).
SLACK = 1e-6  # absolute discretisation slack
NOISES = {"gaussian": 6.0, "laplace": 4.0}


def transition(d: float, noise: str, scale: float) -> np.ndarray:
    """Column-stochastic matrix of x ↦ Π_K(x − η(λ(x − d) + Z)) on [atom −D/2, cells, atom +D/2].

    Cell mass sits at the cell centre; the mass the noise pushes beyond an end goes to that end's atom.
    """
    edges = np.linspace(-D / 2, D / 2, GRID + 1)
    locs = np.concatenate([[-D / 2], 0.5 * (edges[1:] + edges[:-1]), [D / 2]])
    psi = locs - ETA * LAM * (locs - d)
    cdf = (norm if noise == "gaussian" else laplace).cdf((edges[:, None] - psi[None, :]) / (ETA * scale))
    return np.diff(np.vstack([np.zeros(len(locs)), cdf, np.ones(len(locs))]), axis=0)


@pytest.fixture(scope="module")
def chain_laws():
    """laws[noise][t] = (laws of x_1..x_n for d_t = +DMAX, same for d_t = −DMAX)."""
    out = {}
    for noise, scale in NOISES.items():
        cache: dict[float, np.ndarray] = {}
        others = [0.5 * DMAX * (-1) ** k for k in range(N_REC)]
        out[noise] = {}
        for t in range(1, N_REC + 1):
            pair = []
            for sign in (1.0, -1.0):
                data = list(others)
                data[t - 1] = sign * DMAX
                m = np.zeros(GRID + 2)
                m[(GRID + 2) // 2] = 1.0
                laws = []
                for d in data:
                    if d not in cache:
                        cache[d] = transition(d, noise, scale)
                    m = cache[d] @ m
                    laws.append(m)
                pair.append(np.array(laws))
            out[noise][t] = pair
    return out


def true_e_gamma(p: np.ndarray, q: np.ndarray, gamma: float) -> float:
    return max(np.maximum(p - gamma * q, 0).sum(), np.maximum(q - gamma * p, 0).sum())


def bound(noise, eps, t, random_stop=False):
    kw = dict(n=N_REC, lipschitz=LIP, smoothness=LAM, strong_convexity=LAM, step_size=ETA, diameter=D)
    key = "sigma" if noise == "gaussian" else "scale"
    if random_stop:  # record t's entry of the random-stop profile (its worst, t = 1, is Thm 5)
        return float(hs.pnsgd_profile(eps, **kw, **{key: NOISES[noise]}, random_stop=True)[0][t - 1])
    if noise == "gaussian":
        return float(hs.pnsgd_gaussian_delta(eps, record=t, sigma=NOISES[noise], **kw))
    return float(hs.pnsgd_laplace_delta(eps, record=t, scale=NOISES[noise], **kw))


@pytest.mark.parametrize("noise", list(NOISES))
@pytest.mark.parametrize("random_stop", [False, True])
def test_exact_chain_never_exceeds_bound(chain_laws, noise, random_stop):
    eps_grid = [0.0, 0.1, 0.3, 0.5, 1.0]
    truths, bounds = [], []
    for t in range(1, N_REC + 1):
        p, q = chain_laws[noise][t]
        if random_stop:  # x_T with T ~ Unif{1..n}: uniform mixture of the laws of x_1..x_n
            p, q = p.mean(axis=0), q.mean(axis=0)
        else:
            p, q = p[-1], q[-1]
        assert p.sum() == pytest.approx(1.0, abs=1e-12) and q.sum() == pytest.approx(1.0, abs=1e-12)
        for eps in eps_grid:
            truths.append(true_e_gamma(p, q, np.exp(eps)))
            bounds.append(bound(noise, eps, t, random_stop))
    truths, bounds = np.array(truths), np.array(bounds)
    assert np.all(truths <= bounds + SLACK)
    assert truths.max() > 1e-3  # the check is not vacuous
    assert np.any(truths > bounds / 2 + SLACK)  # a halved bound would be violated


def test_chain_discretisation_converged(chain_laws):
    """Grid-independence of the true E_γ: agree with a coarser grid to well within SLACK."""
    global GRID
    p, q = chain_laws["gaussian"][N_REC]
    fine = true_e_gamma(p[-1], q[-1], 1.0)
    old, GRID = GRID, 1001
    try:
        others = [0.5 * DMAX * (-1) ** k for k in range(N_REC)]
        laws = []
        for sign in (1.0, -1.0):
            m = np.zeros(GRID + 2)
            m[(GRID + 2) // 2] = 1.0
            for d in others[:-1] + [sign * DMAX]:
                m = transition(d, "gaussian", NOISES["gaussian"]) @ m
            laws.append(m)
    finally:
        GRID = old
    assert abs(true_e_gamma(laws[0], laws[1], 1.0) - fine) < SLACK / 10


# ---------------------------------------------------------------- structure and monotonicity

KW = dict(n=8, lipschitz=1.0, smoothness=2.0, strong_convexity=0.5, step_size=0.3, diameter=3.0)
EPS = np.linspace(0.0, 4.0, 41)


@pytest.mark.parametrize("noise", ["sigma", "scale"])
def test_profile_monotone_in_epsilon_noise_and_record(noise):
    prof, worst = hs.pnsgd_profile(EPS, **KW, **{noise: 2.0})
    assert prof.shape == (EPS.size, KW["n"])
    assert np.all(np.diff(prof, axis=0) <= 1e-15)  # non-increasing in ε
    assert np.all(np.diff(prof, axis=1) >= -1e-15)  # later records less protected
    np.testing.assert_array_equal(worst, prof[:, -1])
    prof_more_noise, _ = hs.pnsgd_profile(EPS, **KW, **{noise: 3.0})
    assert np.all(prof_more_noise <= prof + 1e-15)
    fn = hs.pnsgd_gaussian_delta if noise == "sigma" else hs.pnsgd_laplace_delta
    for t in (1, 5, 8):
        np.testing.assert_allclose(fn(EPS, record=t, **KW, **{noise: 2.0}), prof[:, t - 1], rtol=1e-12)
    assert prof.shape[:0] == () and hs.pnsgd_profile(0.5, **KW, **{noise: 2.0})[0].shape == (8,)


@settings(max_examples=50, deadline=None)
@given(gamma=st.floats(1.0, 50.0), r1=st.floats(0.0, 20.0), r2=st.floats(0.0, 20.0))
def test_theta_increasing_in_r(gamma, r1, r2):
    lo, hi = sorted((r1, r2))
    assert hs.gaussian_hockey_stick(gamma, lo) <= hs.gaussian_hockey_stick(gamma, hi) + 1e-15
    assert hs.gaussian_hockey_stick(gamma, 0.0) == 0.0


def test_random_stop_closed_form_and_large_n():
    for eps in (0.0, 0.5, 2.0):
        prof, _ = hs.pnsgd_profile(eps, **KW, sigma=2.0)
        direct = prof.sum() / KW["n"]  # (θ₁/n) Σ_{k=0}^{n−1} θ_c^k = mean of the profile
        assert float(hs.pnsgd_random_stop_delta(eps, **KW, sigma=2.0)) == pytest.approx(direct, rel=1e-12)
    big = dict(KW, n=10**6)
    d_first = float(hs.pnsgd_gaussian_delta(1.0, record=1, **big, sigma=2.0))
    assert d_first == 0.0 or np.isfinite(np.log(d_first))
    assert np.isfinite(hs.pnsgd_random_stop_delta(1.0, **big, sigma=2.0))
    # ρ = 0 (ηβ = ηλ = 1): only the last record leaks, and θ_c^0 = 1 is respected
    rho0 = dict(KW, smoothness=1.0, strong_convexity=1.0, step_size=1.0)
    assert float(hs.pnsgd_gaussian_delta(0.0, record=8, **rho0, sigma=2.0)) > 0
    assert float(hs.pnsgd_gaussian_delta(0.0, record=7, **rho0, sigma=2.0)) == 0.0


def test_rdp_baseline_and_account():
    kw = dict(n=10, lipschitz=1.0, sigma=2.0, smoothness=1.0, strong_convexity=0.0, step_size=0.5)
    a_t = 2.0 / (4.0 * 3)  # record 8 of 10, λ = 0 (Feldman et al. Thm 23)
    eps = np.array([0.0, a_t / 2, a_t, 1.0, 3.0])
    got = hs.rdp_baseline_delta(eps, record=8, **kw)
    np.testing.assert_allclose(got, [1, 1, 1, np.exp(-(1 - a_t) ** 2 / (4 * a_t)), np.exp(-(3 - a_t) ** 2 / (4 * a_t))])
    sc = dict(kw, strong_convexity=0.5)  # ρ = 0.75
    rho2 = 0.75**2
    a_sc = 0.5 * rho2**2 / (1 + rho2 + rho2**2)
    assert float(hs.rdp_baseline_delta(1.0, record=8, **sc)) == pytest.approx(np.exp(-(1 - a_sc) ** 2 / (4 * a_sc)))
    acct = hs.account_pnsgd(hs.PNSGDEvent(**KW, sigma=2.0), 1e-5)
    assert acct.bound == "hockey-stick" and "Thm 4" in acct.theorem
    assert float(hs.pnsgd_gaussian_delta(acct.epsilon, record=8, **KW, sigma=2.0)) <= 1e-5
    rs = hs.account_pnsgd(hs.PNSGDEvent(**KW, sigma=2.0, random_stop=True), 1e-5)
    assert rs.epsilon <= acct.epsilon and "Thm 5" in rs.theorem
    lap = hs.account_pnsgd(hs.PNSGDEvent(**KW, scale=2.0, record=3), 1e-5)
    assert float(hs.pnsgd_laplace_delta(lap.epsilon, record=3, **KW, scale=2.0)) <= 1e-5


# ---------------------------------------------------------------- bad inputs

GOOD = dict(n=5, record=2, lipschitz=1.0, smoothness=1.0, strong_convexity=0.5, step_size=0.5, sigma=1.0, diameter=2.0)


@pytest.mark.parametrize(
    "fn, override, name",
    [
        (hs.pnsgd_gaussian_delta, dict(diameter=0.0), "diameter"),
        (hs.pnsgd_gaussian_delta, dict(diameter=-1.0), "diameter"),
        (hs.pnsgd_gaussian_delta, dict(record=0), "record"),
        (hs.pnsgd_gaussian_delta, dict(record=6), "record"),
        (hs.pnsgd_gaussian_delta, dict(n=0, record=1), "n"),
        (hs.pnsgd_gaussian_delta, dict(sigma=0.0), "sigma"),
        (hs.pnsgd_gaussian_delta, dict(step_size=0.0), "step_size"),
        (hs.pnsgd_gaussian_delta, dict(smoothness=0.1), "smoothness"),
        (hs.pnsgd_gaussian_delta, dict(strong_convexity=-1.0), "strong_convexity"),
        (hs.pnsgd_gaussian_delta, dict(lipschitz=-1.0), "lipschitz"),
        (hs.pnsgd_gaussian_delta, dict(epsilon=-0.1), "epsilon"),
        (hs.pnsgd_laplace_delta, dict(scale=0.0), "scale"),
        (hs.pnsgd_laplace_delta, dict(dimension=2), "dimension"),
        (hs.rdp_baseline_delta, dict(sigma=-1.0), "sigma"),
        (hs.rdp_baseline_delta, dict(record=9), "record"),
    ],
)
def test_bad_inputs(fn, override, name):
    args = dict(GOOD, epsilon=1.0)
    if fn is hs.pnsgd_laplace_delta:
        args["scale"] = args.pop("sigma")
    if fn is hs.rdp_baseline_delta:
        args.pop("diameter")
    args.update(override)
    eps = args.pop("epsilon")
    with pytest.raises(ValueError, match=name):
        fn(eps, **args)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: hs.gaussian_hockey_stick(0.5, 1.0), "gamma"),
        (lambda: hs.gaussian_hockey_stick(2.0, -1.0), "r"),
        (lambda: hs.laplace_hockey_stick(2.0, 1.0, 0.0), "scale"),
        (lambda: hs.epsilon_for_delta(lambda e: 0.5, 1.5), "delta"),
        (lambda: hs.pnsgd_random_stop_delta(1.0, **{k: v for k, v in GOOD.items() if k not in ("record", "sigma")}),
         "sigma"),
        (lambda: hs.pnsgd_profile(1.0, **{k: v for k, v in GOOD.items() if k != "record"}, scale=1.0), "sigma"),
        (lambda: hs.gradient_step_lipschitz(0.1, 0.5, 1.0), "smoothness"),
    ],
)
def test_bad_inputs_misc(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------- random-stop profile and calibration

@pytest.mark.parametrize("noise", ["sigma", "scale"])
def test_random_stop_profile_worst_is_theorem5_and_decreasing_in_record(noise):
    prof, worst = hs.pnsgd_profile(EPS, **KW, **{noise: 2.0}, random_stop=True)
    thm5 = hs.pnsgd_random_stop_delta(EPS, **KW, **{noise: 2.0})
    np.testing.assert_allclose(worst, thm5, rtol=1e-12)
    np.testing.assert_allclose(prof[..., 0], thm5, rtol=1e-12)
    assert np.all(np.diff(prof, axis=-1) <= 1e-15)  # later records enter fewer mixture components
    # Mixture of the laws of x_1..x_n: record t's bound is the mean of Thm 4/3 bounds of x_t..x_n
    # (record t used at step t of a run of length k ≥ t is record n − (k − t) of a run of length k).
    for t in (1, 4, 8):
        direct = sum(hs.pnsgd_profile(EPS, **{**KW, "n": k}, **{noise: 2.0})[0][..., t - 1]
                     for k in range(t, KW["n"] + 1)) / KW["n"]
        np.testing.assert_allclose(prof[..., t - 1], np.minimum(direct, 1.0), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
@pytest.mark.parametrize("random_stop", [False, True])
@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-5), (2.0, 1e-8), (0.1, 1e-3)])
def test_calibration_never_overshoots_and_is_tight(noise, random_stop, epsilon, delta):
    """δ is met at the computed ε whose certified rounding is the target (the margin sits inside it)."""
    level = hs.calibrate_pnsgd_noise(epsilon, delta, **KW, noise=noise, random_stop=random_stop)
    key = "sigma" if noise == "gaussian" else "scale"
    aim = largest_rounding_within(epsilon)
    assert round_up(aim) <= epsilon
    _, worst = hs.pnsgd_profile(aim, **KW, **{key: level}, random_stop=random_stop)
    _, worst_less = hs.pnsgd_profile(aim, **KW, **{key: level * (1 - 1e-6)}, random_stop=random_stop)
    assert worst <= delta
    assert worst_less > delta * (1 - 1e-3)  # 1e-6 less noise is (essentially) over budget: tight


def test_calibration_random_stop_needs_less_noise():
    fixed = hs.calibrate_pnsgd_noise(1.0, 1e-6, **KW)
    mixed = hs.calibrate_pnsgd_noise(1.0, 1e-6, **KW, random_stop=True)
    assert mixed < fixed


@pytest.mark.parametrize("bad,name", [({"noise": "cauchy"}, "noise"), ({"lipschitz": 0.0}, "lipschitz"),
                                      ({"delta": 1.5}, "delta")])
def test_calibration_bad_input(bad, name):
    args = {"epsilon": 1.0, "delta": 1e-6, **KW, **bad}
    with pytest.raises(ValueError, match=name):
        hs.calibrate_pnsgd_noise(args.pop("epsilon"), args.pop("delta"), **args)


@pytest.mark.parametrize("epsilon", [np.inf, np.nan, -0.1])
def test_non_finite_or_negative_epsilon_is_refused(epsilon):
    with pytest.raises(ValueError, match="epsilon must be finite and >= 0"):
        hs.pnsgd_gaussian_delta(epsilon, **KW, record=8, sigma=2.0)


# ---------------------------------------------------------------- the PNSGD event record

EVENT = dict(GOOD)
LOSS = {k: v for k, v in GOOD.items() if k not in ("record", "sigma")}


@pytest.mark.parametrize(
    "override, message",
    [
        (dict(n=0, record=None), "n must be an integer >= 1"),
        (dict(record=6), r"record must be an integer in 1..n \(= 5\)"),
        (dict(lipschitz=-1.0), "lipschitz must be finite and >= 0"),
        (dict(smoothness=0.1), "smoothness must be finite and >= strong_convexity"),
        (dict(strong_convexity=np.inf), "strong_convexity must be finite and >= 0"),
        (dict(step_size=0.0), "step_size must be finite and > 0"),
        (dict(diameter=np.nan), "diameter"),
        (dict(sigma=0.0), "sigma"),
        (dict(sigma=None), "exactly one of sigma .* and scale"),
        (dict(scale=1.0), "exactly one of sigma .* and scale"),
        (dict(sigma=None, scale=-1.0), "scale"),
        (dict(random_stop=1), "random_stop must be a bool"),
        (dict(random_stop=True), "record must be None with random_stop=True"),
    ],
)
def test_pnsgd_event_refuses_bad_fields_by_name(override, message):
    with pytest.raises(ValueError, match=message):
        hs.PNSGDEvent(**dict(EVENT, **override))


@pytest.mark.parametrize("noise", [dict(sigma=1.5), dict(scale=0.8)])
@pytest.mark.parametrize("record, random_stop", [(None, False), (2, False), (None, True)])
def test_account_pnsgd_of_an_event_is_the_theorem_at_that_record(noise, record, random_stop):
    event = hs.PNSGDEvent(**LOSS, **noise, record=record, random_stop=random_stop)
    account = hs.account_pnsgd(event, 1e-5)
    if random_stop:
        curve = lambda e: float(hs.pnsgd_random_stop_delta(e, **LOSS, **noise))
    else:
        fn = hs.pnsgd_gaussian_delta if "sigma" in noise else hs.pnsgd_laplace_delta
        curve = lambda e: float(fn(e, **LOSS, **noise, record=event.n if record is None else record))
    assert account.epsilon == round_up(hs.epsilon_for_delta(curve, 1e-5))  # the certified ε: computed, rounded up
    assert curve(account.epsilon) <= 1e-5 and account.delta == 1e-5
    theorem = "Thm 5" if random_stop else ("Thm 4" if "sigma" in noise else "Thm 3")
    assert theorem in account.theorem and account.candidates == {"hockey-stick": account.epsilon}
    assert account.skipped == {}
    again = hs.PNSGDEvent(**LOSS, **noise, record=record, random_stop=random_stop)
    assert hs.account_pnsgd(again, 1e-5) is account  # equal events share the cache
