"""The hockey-stick divergence E_γ of Gaussian and Laplace pairs, and the δ(ε) curves built on it.

Primitives of the hockey-stick accountant (:mod:`.hockey_stick`, whose PNSGD bounds use them).

References of the E_γ primitives
--------------------------------
* Asoodeh, Diaz, Calmon 2020, *Privacy Amplification of Iterative Algorithms via Contraction
  Coefficients*, ISIT 2020, arXiv:2001.06546 (statements reconstructed in
  ``/work/shared/papers/README.md``; the paper text lost its formulas).
* Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13 — the same Gaussian formula (μ-GDP).

Conventions of the E_γ primitives
---------------------------------
γ = e^ε ≥ 1 and E_γ(P‖Q) = sup_A P(A) − γ Q(A) = ∫ (dP − γ dQ)_+.  By Thm 1 a mechanism is
(ε, δ)-DP iff E_{e^ε}(P_D‖P_D') ≤ δ for all replace-one neighbours, so every ``*_delta`` function
below returns an E_{e^ε} value, i.e. a δ(ε) curve.  Gaussian noise N(0, σ²I) has standard deviation
σ per coordinate; Laplace noise Lap(0, b) has scale b (one-dimensional); a sensitivity is the L2
(resp. absolute) distance between the two neighbours' means.

Derivation note (Lemma 1).  For Δ = |μ₁ − μ₂| the likelihood ratio of Lap(μ₁, b) to Lap(μ₂, b)
takes values in [e^{−Δ/b}, e^{Δ/b}]; for 1 ≤ γ ≤ e^{Δ/b} integrating (p − γq)_+ over
{x closer to μ₁ than (Δ − b log γ)/2 past μ₁} gives 1 − √γ e^{−Δ/(2b)} exactly, and for
γ > e^{Δ/b} the divergence is 0 — which is also what the positive part gives, since then
√γ e^{−Δ/(2b)} > 1.  So the README's closed form holds for every γ ≥ 1 (checked by quadrature
in the tests).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erfcx, log_ndtr

from ._checks import check_delta, check_nonnegative, check_positive_array
from .calibration import smallest_epsilon
from .gdp import gd_contraction, gdp_delta
from .pnsgd_event import _check_loss

__all__ = [
    "gaussian_hockey_stick", "log_gaussian_hockey_stick", "laplace_hockey_stick", "log_laplace_hockey_stick",
    "gaussian_mechanism_delta", "laplace_mechanism_delta", "epsilon_for_delta", "projected_gaussian_contraction",
    "gradient_step_lipschitz",
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

    Parameters
    ----------
    gamma : array_like
        γ = e^ε ≥ 1 (``inf`` allowed); broadcast against ``r``.
    r : array_like
        r = ‖m₁ − m₂‖/σ ≥ 0: the distance of the two means over the noise standard deviation
        (``inf`` allowed).

    Returns
    -------
    ndarray
        θ_γ(r) ∈ [0, 1], of the broadcast shape.
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

    Parameters
    ----------
    gamma : array_like
        γ = e^ε ≥ 1 (``inf`` allowed); broadcast against ``r``.
    r : array_like
        r = ‖m₁ − m₂‖/σ ≥ 0 (``inf`` allowed: log θ = 0).

    Returns
    -------
    ndarray
        log θ_γ(r) ≤ 0, of the broadcast shape (−inf where θ = 0).
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

    Parameters
    ----------
    gamma : array_like
        γ = e^ε ≥ 1.
    distance : array_like
        Δ = |μ₁ − μ₂|, the distance of the two (one-dimensional) locations; its sign is ignored.
    scale : array_like
        b > 0, the Laplace scale (standard deviation b√2).

    Returns
    -------
    ndarray
        E_γ ∈ [0, 1), of the broadcast shape.
    """
    return np.exp(log_laplace_hockey_stick(gamma, distance, scale))


def log_laplace_hockey_stick(gamma: ArrayLike, distance: ArrayLike, scale: ArrayLike) -> NDArray[np.float64]:
    """log of :func:`laplace_hockey_stick`: ``log(−expm1(log γ/2 − Δ/(2b)))`` (−inf when zero).

    Parameters
    ----------
    gamma : array_like
        γ = e^ε ≥ 1.
    distance : array_like
        Δ = |μ₁ − μ₂| (not NaN; its sign is ignored).
    scale : array_like
        b > 0, the Laplace scale.

    Returns
    -------
    ndarray
        log E_γ, of the broadcast shape (−inf where E_γ = 0, i.e. γ ≥ e^{Δ/b}).
    """
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
    """Tight δ(ε) of the Gaussian mechanism: θ_{e^ε}(Δ/σ) (arXiv:2001.06546, Thm 1 + Lemma 2).

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    sensitivity : array_like
        Δ ≥ 0: the L2 distance of the neighbours' outputs before noise (replace-one).
    sigma : array_like
        σ > 0, finite: the standard deviation of the noise N(0, σ²I).

    Returns
    -------
    ndarray
        δ(ε) ∈ [0, 1], of the broadcast shape.
    """
    sig = _positive("sigma", sigma)
    with np.errstate(over="ignore"):  # γ = inf for huge ε is handled (E_γ = 0)
        gamma = np.exp(check_nonnegative(epsilon, "epsilon"))
    return gaussian_hockey_stick(gamma, check_nonnegative(sensitivity, "sensitivity", finite=False) / sig)


def laplace_mechanism_delta(epsilon: ArrayLike, sensitivity: ArrayLike, scale: ArrayLike) -> NDArray[np.float64]:
    """Tight δ(ε) of the 1-D Laplace mechanism (arXiv:2001.06546, Thm 1 + Lemma 1).

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    sensitivity : array_like
        Δ ≥ 0: the absolute distance of the neighbours' outputs before noise.
    scale : array_like
        b > 0: the scale of the noise Lap(0, b).

    Returns
    -------
    ndarray
        δ(ε) = [1 − e^{ε/2 − Δ/(2b)}]_+, of the broadcast shape.
    """
    gamma = np.exp(check_nonnegative(epsilon, "epsilon"))
    return laplace_hockey_stick(gamma, check_nonnegative(sensitivity, "sensitivity", finite=False), scale)


def epsilon_for_delta(
    delta_fn: Callable[[float], float], delta: float, *, epsilon_max: float = 1.0e4, rtol: float = 1e-10
) -> float:
    """Smallest ε (up to ``rtol``·max(1, ε)) with ``delta_fn(ε) ≤ delta``, for non-increasing δ(ε) (Thm 1).

    :func:`.calibration.smallest_epsilon` (the library's one ε-at-δ search): the returned ε is an
    evaluated point with ``delta_fn(ε) ≤ delta``, so ε is never understated.  Returns ``inf`` if even
    ``epsilon_max`` does not reach ``delta``.

    Parameters
    ----------
    delta_fn : callable
        ε ↦ δ(ε), non-increasing (e.g. an E_{e^ε} curve of this module).
    delta : float
        The target δ in (0, 1).
    epsilon_max : float, default=1e4
        The largest ε searched.
    rtol : float, default=1e-10
        Relative resolution of the search.

    Returns
    -------
    float
        ε (``inf`` if not reached below ``epsilon_max``).
    """
    return smallest_epsilon(delta_fn, check_delta(delta), rtol=rtol, epsilon_max=epsilon_max)


def projected_gaussian_contraction(gamma: ArrayLike, diameter: float, sigma: float) -> NDArray[np.float64]:
    """Bound θ_γ(diam(K)/σ) on η_γ of x ↦ Π_K(x + Z), Z ~ N(0, σ²I) (arXiv:2001.06546, Lemma 2).

    Parameters
    ----------
    gamma : array_like
        γ = e^ε ≥ 1.
    diameter : float
        diam(K) > 0, finite.
    sigma : float
        σ > 0, finite: the standard deviation of Z.

    Returns
    -------
    ndarray
        The contraction bound θ_γ(diam(K)/σ) ∈ [0, 1), shaped as ``gamma``.
    """
    return gaussian_hockey_stick(gamma, _positive("diameter", diameter) / _positive("sigma", sigma))


def gradient_step_lipschitz(step_size: float, smoothness: float, strong_convexity: float) -> float:
    """ρ = max{|1 − ηβ|, |1 − ηλ|}: Lipschitz constant of x ↦ x − η∇ℓ(x, d) (arXiv:2001.06546, Lemma 4).

    Parameters
    ----------
    step_size : float
        η > 0.
    smoothness : float
        β ≥ λ: the loss is β-smooth.
    strong_convexity : float
        λ ≥ 0: the loss is λ-strongly convex.

    Returns
    -------
    float
        ρ ≥ 0 (ρ ≥ 1 is allowed).
    """
    _check_loss(1.0, smoothness, strong_convexity, step_size)
    return gd_contraction(step_size, strong_convexity, smoothness)


def _positive(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """:func:`._checks.check_positive_array` (every entry finite and > 0), argument order kept."""
    return check_positive_array(value, name)
