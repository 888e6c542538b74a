"""The δ(ε) curves of projected noisy SGD (PNSGD) by contraction of E_γ (Asoodeh et al. Thm 3, 4, 5, Prop. 1).

The curves behind the hockey-stick accountant (:mod:`.hockey_stick`, which certifies a run from them);
the E_γ primitives they use are in :mod:`.e_gamma`.

References of the PNSGD bounds
------------------------------
* Asoodeh, Diaz, Calmon 2020, *Privacy Amplification of Iterative Algorithms via Contraction
  Coefficients*, ISIT 2020, arXiv:2001.06546 (statements reconstructed in
  ``/work/shared/papers/README.md``; the paper text lost its formulas).
* Feldman, Mironov, Talwar, Thakurta 2018, *Privacy Amplification by Iteration*, arXiv:1808.06651,
  Thm 23 — the RDP comparison curve (Prop. 1 of Asoodeh et al.).
* Mironov 2017, arXiv:1702.07476, Prop. 3 — RDP → (ε, δ) conversion of the comparison curve.

Conventions of the PNSGD bounds
-------------------------------
γ = e^ε ≥ 1 and E_γ(P‖Q) = sup_A P(A) − γ Q(A) = ∫ (dP − γ dQ)_+.  By Thm 1 a mechanism is
(ε, δ)-DP iff E_{e^ε}(P_D‖P_D') ≤ δ for all replace-one neighbours, so every ``*_delta`` function
below returns an E_{e^ε} value, i.e. a δ(ε) curve.  PNSGD is eq. (12):
``x_k = Π_K(x_{k−1} − η(∇ℓ(x_{k−1}, d_k) + Z_k))``, record t of n used at step t only, ℓ(·, d)
L-Lipschitz, β-smooth and λ-strongly convex on K, Z_k ~ N(0, σ² I) or Lap(0, b) (d = 1), x_0 fixed,
only x_n (or x_T, T ~ Unif{1..n}) released.  The noise actually added is η Z_k: σ (or b) is the noise
level of the gradient step's Z_k, and two records' gradients differ by at most 2L (replace-one).

Derivation note (Thm 3/4 constants).  At step t the two kernels are x ↦ Π_K(ψ_d(x) − ηZ) with
‖ψ_d(x) − ψ_d'(x)‖ = η‖∇ℓ(x, d) − ∇ℓ(x, d')‖ ≤ 2ηL and noise scale ησ (ηb): the E_γ is at most
θ_γ(2L/σ) (resp. [1 − √γ e^{−L/b}]_+); projection is post-processing.  Afterwards the kernels
coincide and, for inputs in K, ψ moves them at most ρD apart (Lemma 4), so η_γ(K_i) ≤ θ_γ(ρD/(ησ))
(resp. [1 − √γ e^{−ρD/(2ηb)}]_+) by Thm 2.  ρ ≥ 1 is allowed (the bound stays valid, D caps it).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_nonnegative
from .e_gamma import _positive, log_gaussian_hockey_stick, log_laplace_hockey_stick
from .gdp import gd_contraction
from .pnsgd_event import _check_loss, _check_n_record

__all__ = ["pnsgd_gaussian_delta", "pnsgd_laplace_delta", "pnsgd_random_stop_delta", "pnsgd_profile",
           "rdp_baseline_delta"]


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

    Vectorised over ε; the power is taken in log space.  Noise: Z_k ~ N(0, σ²I) inside the step, so the
    iterate's noise has standard deviation ησ; two records' gradients differ by at most 2L (replace-one).

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    n : int
        Number of records (= steps), ≥ 1.
    record : int
        t in 1..n, the step that uses the differing record.
    lipschitz, smoothness, strong_convexity : float
        L ≥ 0, β ≥ λ and λ ≥ 0 of every ℓ(·, d) on K (β finite).
    step_size : float
        η > 0.
    sigma : float
        σ > 0, the standard deviation of Z_k.
    diameter : float
        D = diam(K) > 0.

    Returns
    -------
    ndarray
        δ_t(ε), shaped as ``epsilon``.
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

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    n : int
        Number of records (= steps), ≥ 1.
    record : int
        t in 1..n, the step that uses the differing record.
    lipschitz, smoothness, strong_convexity : float
        L ≥ 0, β ≥ λ and λ ≥ 0 of every ℓ(·, d) on K (β finite).
    step_size : float
        η > 0.
    scale : float
        b > 0, the scale of Z_k ~ Lap(0, b) (the iterate's noise has scale ηb).
    diameter : float
        D > 0, the length of the interval K.
    dimension : int, default=1
        Must be 1.

    Returns
    -------
    ndarray
        δ_t(ε), shaped as ``epsilon``.
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

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    n : int
        Number of records (= steps), ≥ 1.
    lipschitz, smoothness, strong_convexity : float
        L ≥ 0, β ≥ λ and λ ≥ 0 of every ℓ(·, d) on K (β finite).
    step_size : float
        η > 0.
    diameter : float
        D = diam(K) > 0.
    sigma, scale : float or None
        Exactly one: σ of Gaussian Z_k (Thm 4's factors) or the Laplace scale b (Thm 3's, d = 1).

    Returns
    -------
    ndarray
        δ(ε) ≤ 1, shaped as ``epsilon``.
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

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    n : int
        Number of records (= steps), ≥ 1.
    lipschitz, smoothness, strong_convexity : float
        L ≥ 0, β ≥ λ and λ ≥ 0 of every ℓ(·, d) on K (β finite).
    step_size : float
        η > 0.
    diameter : float
        D = diam(K) > 0.
    sigma, scale : float or None
        Exactly one: σ of Gaussian Z_k or the Laplace scale b (d = 1).
    random_stop : bool, default=False
        The output is x_T, T ~ Unif{1..n}, instead of x_n.

    Returns
    -------
    profile : ndarray
        δ_t(ε), shape ``epsilon.shape + (n,)``.
    worst : ndarray
        The maximum over t, shaped as ``epsilon``.
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


def rdp_baseline_delta(
    epsilon: ArrayLike, *, n: int, record: int, lipschitz: float, sigma: float, smoothness: float,
    strong_convexity: float, step_size: float,
) -> NDArray[np.float64]:
    """Comparison curve of arXiv:2001.06546, Prop. 1: RDP ε(α) = α A_t, converted by Mironov.

    ``A_t = 2L²/(σ²(n − t + 1))`` for λ = 0 (Feldman et al. 2018, arXiv:1808.06651, Thm 23) and
    ``A_t = (2L²/σ²) ρ^{2(n−t)} / Σ_{j=0}^{n−t} ρ^{2j}`` for λ > 0 (the README's shifted-Rényi
    form; a comparison curve, not a guarantee we certify).  Mironov 2017 (arXiv:1702.07476,
    Prop. 3) optimised over α: δ = exp(−(ε − A_t)²/(4A_t)) for ε ≥ A_t, δ = 1 below.

    Parameters
    ----------
    epsilon : array_like
        ε ≥ 0, finite.
    n : int
        Number of records (= steps), ≥ 1.
    record : int
        t in 1..n.
    lipschitz : float
        L ≥ 0.
    sigma : float
        σ > 0, the standard deviation of Gaussian Z_k.
    smoothness, strong_convexity : float
        β ≥ λ and λ ≥ 0 (λ = 0: Feldman et al.'s form).
    step_size : float
        η > 0.

    Returns
    -------
    ndarray
        δ(ε), shaped as ``epsilon`` (a comparison curve, not a certificate).
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
