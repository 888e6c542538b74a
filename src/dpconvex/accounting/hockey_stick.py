"""Hockey-stick (E_γ) accounting of projected noisy SGD via contraction coefficients.

References of the hockey-stick accountant
-----------------------------------------
* Asoodeh, Diaz, Calmon 2020, *Privacy Amplification of Iterative Algorithms via Contraction
  Coefficients*, ISIT 2020, arXiv:2001.06546 (statements reconstructed in
  ``/work/shared/papers/README.md``; the paper text lost its formulas).
* Feldman, Mironov, Talwar, Thakurta 2018, *Privacy Amplification by Iteration*, arXiv:1808.06651,
  Thm 23 — the RDP comparison curve (Prop. 1 of Asoodeh et al.).
* Mironov 2017, arXiv:1702.07476, Prop. 3 — RDP → (ε, δ) conversion of the comparison curve.

Conventions of the hockey-stick accountant
------------------------------------------
γ = e^ε ≥ 1 and E_γ(P‖Q) = sup_A P(A) − γ Q(A) = ∫ (dP − γ dQ)_+.  By Thm 1 a mechanism is
(ε, δ)-DP iff E_{e^ε}(P_D‖P_D') ≤ δ for all replace-one neighbours, so every ``*_delta`` function
below returns an E_{e^ε} value, i.e. a δ(ε) curve.  PNSGD is eq. (12):
``x_k = Π_K(x_{k−1} − η(∇ℓ(x_{k−1}, d_k) + Z_k))``, record t of n used at step t only, ℓ(·, d)
L-Lipschitz, β-smooth and λ-strongly convex on K, Z_k ~ N(0, σ² I) or Lap(0, b) (d = 1), x_0 fixed,
only x_n (or x_T, T ~ Unif{1..n}) released.  The noise actually added is η Z_k.

Derivation note (Lemma 1).  For Δ = |μ₁ − μ₂| the likelihood ratio of Lap(μ₁, b) to Lap(μ₂, b)
takes values in [e^{−Δ/b}, e^{Δ/b}]; for 1 ≤ γ ≤ e^{Δ/b} integrating (p − γq)_+ over
{x closer to μ₁ than (Δ − b log γ)/2 past μ₁} gives 1 − √γ e^{−Δ/(2b)} exactly, and for
γ > e^{Δ/b} the divergence is 0 — which is also what the positive part gives, since then
√γ e^{−Δ/(2b)} > 1.  So the README's closed form holds for every γ ≥ 1 (checked by quadrature
in the tests).

Derivation note (Thm 3/4 constants).  At step t the two kernels are x ↦ Π_K(ψ_d(x) − ηZ) with
‖ψ_d(x) − ψ_d'(x)‖ = η‖∇ℓ(x, d) − ∇ℓ(x, d')‖ ≤ 2ηL and noise scale ησ (ηb): the E_γ is at most
θ_γ(2L/σ) (resp. [1 − √γ e^{−L/b}]_+); projection is post-processing.  Afterwards the kernels
coincide and, for inputs in K, ψ moves them at most ρD apart (Lemma 4), so η_γ(K_i) ≤ θ_γ(ρD/(ησ))
(resp. [1 − √γ e^{−ρD/(2ηb)}]_+) by Thm 2.  ρ ≥ 1 is allowed (the bound stays valid, D caps it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erfcx, log_ndtr

from ._checks import check_delta, check_nonnegative, check_positive_array
from .best_of import PrivacyAccount
from .calibration import smallest_epsilon, smallest_noise
from .gdp import gd_contraction, gdp_delta, gdp_mu
from .pnsgd_event import NOISES, RANDOM_STOP_THEOREM, PNSGDEvent, _check_loss, _check_n_record
from .rounding import largest_rounding_within, round_up

__all__ = [
    "gaussian_hockey_stick", "log_gaussian_hockey_stick", "laplace_hockey_stick", "log_laplace_hockey_stick",
    "gaussian_mechanism_delta", "laplace_mechanism_delta", "epsilon_for_delta", "projected_gaussian_contraction",
    "gradient_step_lipschitz", "pnsgd_gaussian_delta", "pnsgd_laplace_delta", "pnsgd_random_stop_delta",
    "pnsgd_profile", "calibrate_pnsgd_noise", "rdp_baseline_delta", "PNSGDEvent", "account_pnsgd", "NOISES",
    "RANDOM_STOP_THEOREM",
]

_SQRT2 = np.sqrt(2.0)


def _gamma(gamma: ArrayLike) -> NDArray[np.float64]:
    g = np.asarray(gamma, dtype=float)
    if np.any(np.isnan(g)) or np.any(g < 1.0):
        raise ValueError("gamma must be >= 1 (gamma = e^epsilon).")
    return g


def gaussian_hockey_stick(gamma: ArrayLike, r: ArrayLike) -> NDArray[np.float64]:
    """θ_γ(r) = Q(log γ/r − r/2) − γ Q(log γ/r + r/2) (Asoodeh et al., arXiv:2001.06546, Def. 1).

    Equals E_γ(N(m₁, σ²I)‖N(m₂, σ²I)) with r = ‖m₁ − m₂‖/σ (Lemma 2); θ_γ(0) = 0, θ_γ(∞) = 1.
    Evaluated as ``gdp.gdp_delta(log γ, r)`` (the same formula, Dong et al. Cor. 2.13); γ = ∞ (e^ε
    overflowed) gives θ = 0 for finite r and 1 for r = ∞ (disjoint supports).
    """
    g, r_arr = np.broadcast_arrays(_gamma(gamma), check_nonnegative(r, "r", finite=False))
    with np.errstate(over="ignore", invalid="ignore"):  # r → 0⁺ overflows log γ / r to inf, which is handled
        theta = gdp_delta(np.log(g), r_arr)
    return np.where(np.isinf(g), np.where(np.isinf(r_arr), 1.0, 0.0), theta)


def log_gaussian_hockey_stick(gamma: ArrayLike, r: ArrayLike) -> NDArray[np.float64]:
    """log θ_γ(r), accurate far below the float range of θ (e.g. θ ~ 1e−300 and smaller).

    With a = log γ/r − r/2, b = a + r and a > 0: (b² − a²)/2 = log γ, so exactly
    γQ(b)/Q(a) = erfcx(b/√2)/erfcx(a/√2) and
    ``log θ = log Q(a) + log((erfcx(a/√2) − erfcx(b/√2))/erfcx(a/√2))`` — no overflow and no
    exp(−a²/2) underflow.  For a ≤ 0, θ is not small (θ ≥ θ₁-type values) and the direct form is used.
    Returns −inf where θ = 0 (r = 0, or γ = ∞ with r finite) or where the relative gap (~ r²/log γ)
    is below float resolution.
    """
    g = _gamma(gamma)
    r_arr = check_nonnegative(r, "r", finite=False)
    g, r_arr = np.broadcast_arrays(g, r_arr)
    log_g = np.log(g)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = log_g / r_arr - r_arr / 2.0
        b = a + r_arr
        ea, eb = erfcx(a / _SQRT2), erfcx(b / _SQRT2)
        tail = log_ndtr(-a) + np.log((ea - eb) / ea)
        with np.errstate(over="ignore"):
            direct = np.log(gdp_delta(log_g, r_arr))
    out = np.where(a > 0.0, tail, direct)
    out = np.where((r_arr == 0.0) | np.isinf(g), -np.inf, out)  # θ_∞(r) = 0 for finite r
    return np.where(np.isinf(r_arr), 0.0, out)


def laplace_hockey_stick(gamma: ArrayLike, distance: ArrayLike, scale: ArrayLike) -> NDArray[np.float64]:
    """E_γ(Lap(μ₁, b)‖Lap(μ₂, b)) = [1 − √γ exp(−|μ₁ − μ₂|/(2b))]_+ (arXiv:2001.06546, Lemma 1).

    Exact for every γ ≥ 1 (zero once γ ≥ e^{Δ/b}; see the module's derivation note).
    """
    return np.exp(log_laplace_hockey_stick(gamma, distance, scale))


def log_laplace_hockey_stick(gamma: ArrayLike, distance: ArrayLike, scale: ArrayLike) -> NDArray[np.float64]:
    """log of :func:`laplace_hockey_stick`: ``log(−expm1(log γ/2 − Δ/(2b)))`` (−inf when zero)."""
    g = _gamma(gamma)
    dist = np.abs(np.asarray(distance, dtype=float))
    if np.any(np.isnan(dist)):
        raise ValueError(f"distance must not be NaN; got {distance!r}.")
    b = np.asarray(scale, dtype=float)
    if np.any(np.isnan(b)) or np.any(b <= 0.0):
        raise ValueError(f"scale must be > 0; got {scale!r}.")
    x = 0.5 * np.log(g) - dist / (2.0 * b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < 0.0, np.log(-np.expm1(np.minimum(x, 0.0))), -np.inf)


def gaussian_mechanism_delta(epsilon: ArrayLike, sensitivity: ArrayLike, sigma: ArrayLike) -> NDArray[np.float64]:
    """Tight δ(ε) of the Gaussian mechanism: θ_{e^ε}(Δ/σ) (arXiv:2001.06546, Thm 1 + Lemma 2)."""
    sig = _positive("sigma", sigma)
    with np.errstate(over="ignore"):  # γ = inf for huge ε is handled (E_γ = 0)
        gamma = np.exp(check_nonnegative(epsilon, "epsilon"))
    return gaussian_hockey_stick(gamma, check_nonnegative(sensitivity, "sensitivity", finite=False) / sig)


def laplace_mechanism_delta(epsilon: ArrayLike, sensitivity: ArrayLike, scale: ArrayLike) -> NDArray[np.float64]:
    """Tight δ(ε) of the 1-D Laplace mechanism (arXiv:2001.06546, Thm 1 + Lemma 1)."""
    gamma = np.exp(check_nonnegative(epsilon, "epsilon"))
    return laplace_hockey_stick(gamma, check_nonnegative(sensitivity, "sensitivity", finite=False), scale)


def epsilon_for_delta(
    delta_fn: Callable[[float], float], delta: float, *, epsilon_max: float = 1.0e4, rtol: float = 1e-10
) -> float:
    """Smallest ε (up to ``rtol``·max(1, ε)) with ``delta_fn(ε) ≤ delta``, for non-increasing δ(ε) (Thm 1).

    :func:`.calibration.smallest_epsilon` (the library's one ε-at-δ search): the returned ε is an
    evaluated point with ``delta_fn(ε) ≤ delta``, so ε is never understated.  Returns ``inf`` if even
    ``epsilon_max`` does not reach ``delta``.
    """
    return smallest_epsilon(delta_fn, check_delta(delta), rtol=rtol, epsilon_max=epsilon_max)


def projected_gaussian_contraction(gamma: ArrayLike, diameter: float, sigma: float) -> NDArray[np.float64]:
    """Bound θ_γ(diam(K)/σ) on η_γ of x ↦ Π_K(x + Z), Z ~ N(0, σ²I) (arXiv:2001.06546, Lemma 2)."""
    return gaussian_hockey_stick(gamma, _positive("diameter", diameter) / _positive("sigma", sigma))


def gradient_step_lipschitz(step_size: float, smoothness: float, strong_convexity: float) -> float:
    """ρ = max{|1 − ηβ|, |1 − ηλ|}: Lipschitz constant of x ↦ x − η∇ℓ(x, d) (arXiv:2001.06546, Lemma 4)."""
    _check_loss(1.0, smoothness, strong_convexity, step_size)
    return gd_contraction(step_size, strong_convexity, smoothness)


def _positive(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """:func:`._checks.check_positive_array` (every entry finite and > 0), argument order kept."""
    return check_positive_array(value, name)


def _log_factors(epsilon, n, lipschitz, smoothness, strong_convexity, step_size, diameter, sigma, scale, dimension=1):
    """(log first-step E_γ, log per-step contraction) for Gaussian (σ) or Laplace (b) noise."""
    eps = check_nonnegative(epsilon, "epsilon")
    _check_n_record(n, None)
    _check_loss(lipschitz, smoothness, strong_convexity, step_size)
    diameter = float(_positive("diameter", diameter))
    rho = gd_contraction(step_size, strong_convexity, smoothness)
    with np.errstate(over="ignore"):  # γ = inf for huge ε is handled (E_γ = 0)
        gamma = np.exp(eps)
    if (sigma is None) == (scale is None):
        raise ValueError("give exactly one of sigma (Gaussian noise) and scale (Laplace noise).")
    if sigma is not None:
        sigma = float(_positive("sigma", sigma))
        first = log_gaussian_hockey_stick(gamma, 2.0 * lipschitz / sigma)
        contraction = log_gaussian_hockey_stick(gamma, rho * diameter / (step_size * sigma))
    else:
        if dimension != 1:
            raise ValueError(f"dimension must be 1 for Laplace noise (Thm 3 is one-dimensional); got {dimension!r}.")
        scale = float(_positive("scale", scale))
        first = log_laplace_hockey_stick(gamma, 2.0 * lipschitz, scale)  # = [1 − √γ e^{−L/b}]_+
        contraction = log_laplace_hockey_stick(gamma, rho * diameter / step_size, scale)
    return first, contraction


def _record_delta(first, contraction, steps_after):
    """exp(first + steps_after·contraction) with 0·(−inf) = 0 (θ_c⁰ = 1)."""
    steps_after = np.asarray(steps_after, dtype=float)
    with np.errstate(invalid="ignore"):
        tail = np.where(steps_after == 0, 0.0, steps_after * contraction)
    return np.exp(first + tail)


def pnsgd_gaussian_delta(
    epsilon: ArrayLike, *, n: int, record: int, lipschitz: float, smoothness: float,
    strong_convexity: float, step_size: float, sigma: float, diameter: float,
) -> NDArray[np.float64]:
    """δ_t(ε) = θ_{e^ε}(2L/σ)·[θ_{e^ε}(ρD/(ησ))]^{n−t} for record t (arXiv:2001.06546, Thm 4).

    Vectorised over ε; the power is taken in log space.
    """
    _check_n_record(n, record)
    first, contraction = _log_factors(epsilon, n, lipschitz, smoothness, strong_convexity, step_size, diameter,
                                      sigma, None)
    return _record_delta(first, contraction, n - record)


def pnsgd_laplace_delta(
    epsilon: ArrayLike, *, n: int, record: int, lipschitz: float, smoothness: float,
    strong_convexity: float, step_size: float, scale: float, diameter: float, dimension: int = 1,
) -> NDArray[np.float64]:
    """δ_t(ε) = [1 − √γ e^{−L/b}]_+ ([1 − √γ e^{−ρD/(2ηb)}]_+)^{n−t}, d = 1 (arXiv:2001.06546, Thm 3).

    K is an interval of length D = ``diameter``; ``dimension > 1`` is refused (not covered by Thm 3).
    """
    _check_n_record(n, record)
    first, contraction = _log_factors(
        epsilon, n, lipschitz, smoothness, strong_convexity, step_size, diameter, None, scale, dimension
    )
    return _record_delta(first, contraction, n - record)


def _geometric_sum(log_ratio: NDArray[np.float64], count: ArrayLike) -> NDArray[np.float64]:
    """Σ_{j=0}^{count−1} θ^j for θ = exp(log_ratio) ≤ 1: −expm1(count·log θ)/−expm1(log θ), or count at θ = 1."""
    count = np.asarray(count, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(log_ratio < 0.0, -np.expm1(count * log_ratio) / -np.expm1(log_ratio), count)


def pnsgd_random_stop_delta(
    epsilon: ArrayLike, *, n: int, lipschitz: float, smoothness: float, strong_convexity: float,
    step_size: float, diameter: float, sigma: float | None = None, scale: float | None = None,
) -> NDArray[np.float64]:
    """δ(ε) = (θ₁/n)·Σ_{k=0}^{n−1} θ_c^k for x_T, T ~ Unif{1..n} (arXiv:2001.06546, Thm 5).

    θ₁, θ_c are the first-step and contraction factors of Thm 4 (``sigma``) or, by the same joint
    convexity argument, of Thm 3 (``scale``, d = 1).  Derivation: E_γ of the mixtures is at most
    (1/n)Σ_k E_γ(x_k laws); for record t the terms k ≥ t are θ₁θ_c^{k−t}, largest for t = 1.
    The sum is (1 − θ_c^n)/(1 − θ_c) = −expm1(n log θ_c)/−expm1(log θ_c) (θ_c < 1 for finite
    arguments).  This is the worst record of :func:`pnsgd_profile` with ``random_stop=True``.
    """
    first, contraction = _log_factors(epsilon, n, lipschitz, smoothness, strong_convexity, step_size, diameter,
                                      sigma, scale)
    return np.minimum(np.exp(first) * _geometric_sum(contraction, n) / n, 1.0)


def pnsgd_profile(
    epsilon: ArrayLike, *, n: int, lipschitz: float, smoothness: float, strong_convexity: float,
    step_size: float, diameter: float, sigma: float | None = None, scale: float | None = None,
    random_stop: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-record δ_t(ε), t = 1..n (Thm 4 with ``sigma`` or Thm 3 with ``scale``), and the worst case.

    Returns ``(profile, worst)``: ``profile`` has shape ``eps.shape + (n,)`` (column t − 1 is record
    t), ``worst`` = max over t.  Without random stopping the worst record is t = n (the last record
    is the least protected; its bound has no contraction factor).  With ``random_stop=True`` the
    output is x_T, T ~ Unif{1..n}, and record t gets (θ₁/n)·Σ_{j=0}^{n−t} θ_c^j (the derivation of
    :func:`pnsgd_random_stop_delta` for a general t: the laws of x_k, k < t, coincide), worst at t = 1.
    """
    first, contraction = _log_factors(epsilon, n, lipschitz, smoothness, strong_convexity, step_size, diameter,
                                      sigma, scale)
    steps_after = n - np.arange(1, n + 1)
    if random_stop:
        geometric = _geometric_sum(contraction[..., None], steps_after + 1)
        profile = np.minimum(np.exp(first[..., None]) * geometric / n, 1.0)
    else:
        profile = _record_delta(first[..., None], contraction[..., None], steps_after)
    return profile, profile.max(axis=-1)


def calibrate_pnsgd_noise(
    epsilon: float, delta: float, *, n: int, lipschitz: float, smoothness: float, strong_convexity: float,
    step_size: float, diameter: float, noise: str = "gaussian", random_stop: bool = False, rtol: float = 1e-9,
) -> float:
    """Smallest noise level (σ for ``noise="gaussian"``, the Laplace scale b otherwise) meeting (ε, δ).

    The keywords describe a :class:`.pnsgd_event.PNSGDEvent` (its worst record), whose noise
    :func:`.interface.calibrate` sets by the same search.  The worst record's δ(ε) (Thm 4/3 at t = n,
    or Thm 5) decreases in the noise level (θ_γ and the Laplace E_γ increase in the distance, and both
    arguments scale as 1/noise), so
    :func:`.calibration.smallest_noise` (the library's one calibration) finds it to within a factor
    1 + ``rtol`` (``tolerance="noise"``): the returned level is an evaluated point whose δ is at most
    ``delta`` (calibration never overshoots), and the level divided by 1 + ``rtol`` exceeds ``delta``.
    δ is evaluated at ε' = :func:`.rounding.largest_rounding_within` (ε), the largest computed ε whose
    certified value (rounded up by :data:`.rounding.ROUNDING_MARGIN`) is at most ε: the margin sits
    inside the target.

    Start: the level at which the first-step factor alone meets δ, 2L/μ(ε, δ) for Gaussian noise
    (Lemma 2 and Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13: θ_{e^ε}(r) ≤ δ iff r ≤ μ(ε, δ);
    1 at ε = 0) and L/(ε/2 − log(1 − δ)) for Laplace noise (Lemma 1: 1 − √γ e^{−L/b} ≤ δ iff
    b ≥ L/(ε/2 − log(1 − δ))).  The contraction factors are at most 1 and Thm 5's average is at
    most θ₁, so the answer is at most the start; only the number of evaluations depends on it.
    """
    check_delta(delta)
    if noise not in NOISES:
        raise ValueError(f"noise must be 'gaussian' or 'laplace'; got {noise!r}.")
    level: dict[str, Any] = {NOISES[noise][0]: 1.0}
    event = PNSGDEvent(n, lipschitz, smoothness, strong_convexity, step_size, diameter, random_stop=random_stop,
                       **level)
    return _calibrate(event, epsilon, delta, rtol)


def _calibrate(event: PNSGDEvent, epsilon: float, delta: float, rtol: float = 1e-9) -> float:
    """The noise level of :func:`calibrate_pnsgd_noise` for the record ``event`` certifies (its level ignored)."""
    check_delta(delta)
    check_nonnegative(epsilon, "epsilon")
    aim, key, lipschitz = largest_rounding_within(float(epsilon)), NOISES[event.noise][0], event.lipschitz
    if lipschitz == 0.0:
        raise ValueError("lipschitz must be > 0 to calibrate noise (L = 0 needs no noise).")
    if event.noise == "gaussian":
        start = 2.0 * lipschitz / gdp_mu(epsilon, delta) if epsilon > 0 else 1.0
    else:
        start = lipschitz / (0.5 * epsilon - np.log1p(-delta))

    def worst(level: float) -> float:
        noise_level: dict[str, Any] = {key: level}
        return _delta_curve(replace(event, **noise_level))[0](aim)

    return smallest_noise(worst, delta, float(start), rtol=rtol, tolerance="noise", floor=1e-300, ceiling=1e300)


def rdp_baseline_delta(
    epsilon: ArrayLike, *, n: int, record: int, lipschitz: float, sigma: float, smoothness: float,
    strong_convexity: float, step_size: float,
) -> NDArray[np.float64]:
    """Comparison curve of arXiv:2001.06546, Prop. 1: RDP ε(α) = α A_t, converted by Mironov.

    ``A_t = 2L²/(σ²(n − t + 1))`` for λ = 0 (Feldman et al. 2018, arXiv:1808.06651, Thm 23) and
    ``A_t = (2L²/σ²) ρ^{2(n−t)} / Σ_{j=0}^{n−t} ρ^{2j}`` for λ > 0 (the README's shifted-Rényi
    form; a comparison curve, not a guarantee we certify).  Mironov 2017 (arXiv:1702.07476,
    Prop. 3) optimised over α: δ = exp(−(ε − A_t)²/(4A_t)) for ε ≥ A_t, δ = 1 below.
    """
    eps = check_nonnegative(epsilon, "epsilon")
    _check_n_record(n, record)
    _check_loss(lipschitz, smoothness, strong_convexity, step_size)
    sigma = float(_positive("sigma", sigma))
    base = 2.0 * lipschitz**2 / sigma**2
    m = n - record
    if strong_convexity == 0.0:
        a_t = base / (m + 1)
    else:
        rho2 = gd_contraction(step_size, strong_convexity, smoothness) ** 2
        a_t = base * rho2**m / np.sum(rho2 ** np.arange(m + 1))
    if a_t == 0.0:
        return np.zeros_like(eps)
    with np.errstate(over="ignore"):
        return np.where(eps >= a_t, np.exp(-((eps - a_t) ** 2) / (4.0 * a_t)), 1.0)


def _delta_curve(e: PNSGDEvent) -> tuple[Callable[[float], float], str]:
    """ε ↦ δ(ε) of the record ``e`` certifies, and its theorem: Thm 5 with ``e.random_stop``, else Thm 4
    (``sigma``) or Thm 3 (``scale``) at ``e.record`` (None: the worst record, t = n)."""
    common: dict[str, Any] = dict(n=e.n, lipschitz=e.lipschitz, smoothness=e.smoothness,
                                  strong_convexity=e.strong_convexity, step_size=e.step_size, diameter=e.diameter)
    if e.random_stop:
        return lambda x: float(pnsgd_random_stop_delta(x, **common, sigma=e.sigma, scale=e.scale)), RANDOM_STOP_THEOREM
    fn = pnsgd_gaussian_delta if e.scale is None else pnsgd_laplace_delta
    level: dict[str, Any] = {NOISES[e.noise][0]: e.sigma if e.scale is None else e.scale}
    return lambda x: float(fn(x, **common, record=e.n if e.record is None else e.record, **level)), NOISES[e.noise][1]


@lru_cache(maxsize=1024)
def account_pnsgd(event: PNSGDEvent, delta: float) -> PrivacyAccount:
    """ε at ``delta`` for a PNSGD run via Thm 1, as a :class:`PrivacyAccount`.

    ε is read off the E_γ curve by :func:`epsilon_for_delta` (:func:`.calibration.smallest_epsilon`)
    and rounded up by :data:`.rounding.ROUNDING_MARGIN` (the certified ε).
    Thm 5 with ``event.random_stop``, else Thm 4 (``sigma``) or Thm 3 (``scale``) for ``event.record``
    (None: the worst record, t = n).  Cached (pure).
    """
    delta = check_delta(delta)
    fn, theorem = _delta_curve(event)
    eps = round_up(epsilon_for_delta(fn, delta))
    return PrivacyAccount(
        epsilon=eps, delta=delta, bound="hockey-stick", theorem=theorem,
        assumptions=("replace-one neighbours", "each record used once, in order", "only the output iterate released",
                     "L-Lipschitz, β-smooth, λ-strongly convex loss on K", "diam(K) = D", "data-independent x_0")
        + (("the stopping time T stays secret (never reported, and all n steps run)",) if event.random_stop else ()),
        order=None, conversion="exact E_γ (Thm 1)", candidates={"hockey-stick": eps},
    )
