"""Gaussian differential privacy (μ-GDP) and the exact GDP bound of noisy gradient descent.

References
----------
* Dong, Roth, Su 2019, *Gaussian Differential Privacy*, arXiv:1905.02383 — Cor. 2.13:
  μ-GDP ⇔ (ε, δ(ε))-DP for all ε ≥ 0 with
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (exact, no slack).
  μ-GDP implies (α, αμ²/2)-RDP for every α > 1 (the Rényi divergence of N(0,1) and N(μ,1)).
* Bok, Su, Altschuler 2024, *Shifted Interpolation for Differential Privacy*, arXiv:2403.00278 —
  the strongly convex NoisyGD theorem (see :func:`noisy_gd_mu`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erfcx, ndtr, ndtri

from ._checks import check_delta, check_epsilon, check_nonnegative
from .calibration import smallest_epsilon, smallest_noise

__all__ = ["RTOL", "gdp_delta", "gdp_epsilon", "gdp_mu", "gdp_rdp", "noisy_gd_mu", "gd_contraction"]


def gdp_delta(epsilon: ArrayLike, mu: ArrayLike) -> NDArray[np.float64]:
    """Exact δ(ε) of a μ-GDP mechanism (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13).

    ``δ = Φ(a) − e^ε Φ(b)`` with a = −ε/μ + μ/2, b = a − μ.  Derivation note: −b²/2 + ε = −a²/2, so
    the second term is φ(a)·Φ(b)/φ(b) = ½·e^{−a²/2}·erfcx(−b/√2) (Mills ratio; b ≤ −μ/2 < 0, so
    erfcx ∈ (0, 1]): no exponential of ε, hence no overflow and no cancellation between ε and
    log Φ(b) at any ε, μ.  ``mu = 0`` gives δ = 0; ``mu = inf`` gives δ = 1.  Vectorised over both
    arguments.

    Parameters
    ----------
    epsilon : array_like
        ε >= 0 (``inf`` allowed).
    mu : array_like
        GDP parameter μ >= 0 (``inf`` allowed).

    Returns
    -------
    ndarray
        δ(ε), in [0, 1], broadcast over ``epsilon`` and ``mu``.
    """
    eps = check_nonnegative(epsilon, "epsilon", finite=False)
    mu_arr = check_nonnegative(mu, "mu", finite=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a² = inf gives e^{−inf} = 0
        a = -eps / mu_arr + mu_arr / 2.0
        b = a - mu_arr
        delta = ndtr(a) - 0.5 * np.exp(-0.5 * a * a) * erfcx(-b / math.sqrt(2.0))
    delta = np.where(mu_arr == 0.0, 0.0, delta)
    delta = np.where(np.isinf(mu_arr), 1.0, delta)
    return np.clip(delta, 0.0, 1.0)


#: Relative tolerance of :func:`gdp_epsilon` and :func:`gdp_mu` (their searches' own), hence the
#: accuracy to which a calibration on a GDP curve can ask for σ: below it the computed ε is not
#: reliably monotone in σ.
RTOL = 1e-12


@lru_cache(maxsize=4096)  # pure in (delta, mu); accountants re-ask for the same pair on every fit
def gdp_epsilon(delta: float, mu: float) -> float:
    """Smallest ε ≥ 0 with δ(ε) ≤ ``delta`` for a μ-GDP mechanism (inverse of :func:`gdp_delta`).

    :func:`.calibration.smallest_epsilon` (the library's one ε-at-δ search) to within
    :data:`RTOL`·max(1, ε), so the returned ε is an evaluated point with ``gdp_delta(ε, μ) <= delta``
    in floating point: it never understates the privacy loss.  Start: Cor. 2.13's first term
    Φ(−ε/μ + μ/2) bounds δ(ε) from above and equals ``delta`` at ε₀ = μ(μ/2 − Φ⁻¹(δ)), so ε₀ is at or
    above the answer (and close to it where the second term is small); only the number of
    evaluations depends on it.

    Parameters
    ----------
    delta : float
        Target δ, in (0, 1).
    mu : float
        GDP parameter, >= 0 (``inf`` gives ε = inf).

    Returns
    -------
    float
        ε, 0.0 when δ(0) ≤ ``delta`` already.
    """
    delta = check_delta(delta)
    mu = float(check_nonnegative(mu, "mu", finite=False))
    if np.isinf(mu):
        return float("inf")
    start = mu * (0.5 * mu - float(ndtri(delta)))  # ≤ 0 only if δ(0) ≤ delta, answered before it is used
    return smallest_epsilon(lambda e: float(gdp_delta(e, mu)), delta, rtol=RTOL, epsilon_max=1e300,
                            start=start if start > 0 else 1.0)


@lru_cache(maxsize=4096)  # pure in (epsilon, delta)
def gdp_mu(epsilon: float, delta: float) -> float:
    """Largest μ such that μ-GDP implies (ε, δ)-DP: the root of δ(ε; μ) = δ (Cor. 2.13).

    δ(ε; μ) increases in μ, and μ is the sensitivity-1 Gaussian's 1/σ, so the answer is 1/σ for
    the smallest noise σ with δ(ε; 1/σ) ≤ δ: :func:`.calibration.smallest_noise` (the library's one
    calibration, ``tolerance="noise"``, to within a factor 1 + :data:`RTOL`).  The returned μ is an
    evaluated point with ``gdp_delta(epsilon, μ) <= delta`` in floating point.  Start: the μ₀ at
    which Cor. 2.13's first term Φ(−ε/μ + μ/2) equals δ, μ₀ = q + √(q² + 2ε) with q = Φ⁻¹(δ)
    (written 2ε/(√(q² + 2ε) − q) for q < 0, without cancellation); the first term bounds δ(ε; μ)
    from above, so μ₀ meets the target and the answer is at most a little above it.

    Parameters
    ----------
    epsilon : float
        Target ε, finite and > 0.
    delta : float
        Target δ, in (0, 1).

    Returns
    -------
    float
        μ > 0.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    q = float(ndtri(delta))
    root = math.hypot(q, math.sqrt(2.0 * epsilon))
    mu0 = 2.0 * epsilon / (root - q) if q < 0 else q + root
    start = min(1.0 / max(mu0, 1e-300), 1e300)
    sigma = smallest_noise(lambda s: float(gdp_delta(epsilon, 1.0 / s)), delta, start, rtol=RTOL,
                           tolerance="noise", floor=1e-300, ceiling=1e300)
    return 1.0 / sigma


def gdp_rdp(orders: ArrayLike, mu: float) -> NDArray[np.float64]:
    """RDP curve ``α μ²/2`` implied by μ-GDP (Dong, Roth, Su 2019, arXiv:1905.02383, §2.3).

    Parameters
    ----------
    orders : array_like
        RDP orders α.
    mu : float
        GDP parameter μ.

    Returns
    -------
    ndarray
        RDP ε at each order.
    """
    return np.asarray(orders, dtype=float) * float(mu) ** 2 / 2.0


def gd_contraction(step_size: float, strong_convexity: float, smoothness: float) -> float:
    """Lipschitz constant ``c = max{|1 − η m|, |1 − η M|}`` of the gradient step x ↦ x − η∇f(x).

    For f m-strongly convex and M-smooth (Bok, Su, Altschuler 2024, arXiv:2403.00278, §4;
    also Asoodeh et al. Lemma 4). ``c < 1`` iff ``m > 0`` and ``0 < η < 2/M``.

    Parameters
    ----------
    step_size : float
        η.
    strong_convexity, smoothness : float
        m and M of f.

    Returns
    -------
    float
        c >= 0.
    """
    return max(abs(1.0 - step_size * strong_convexity), abs(1.0 - step_size * smoothness))


def noisy_gd_mu(
    n: int,
    sensitivity: float,
    step_size: float,
    sigma: ArrayLike,
    iterations: int,
    strong_convexity: float,
    smoothness: float,
) -> NDArray[np.float64]:
    """μ of the μ-GDP guarantee of full-batch noisy GD on a strongly convex smooth loss.

    Bok, Su, Altschuler 2024 (arXiv:2403.00278), strongly convex NoisyGD theorem: NoisyGD on an
    m-strongly convex, M-smooth loss, replace-one neighbours, last iterate released, is μ-GDP with
    ``μ = (per-step mean shift / per-step noise sd) · sqrt((1 + c)/(1 − c) · (1 − c^K)/(1 + c^K))``.

    Parameters
    ----------
    n : int
        Dataset size.
    sensitivity : float
        ``S_g``: sup over neighbours and θ of ‖Σᵢ∇ℓ(θ; xᵢ) − Σᵢ∇ℓ(θ; x'ᵢ)‖ (≤ 2L).
    step_size : float
        η, in (0, 2/M).
    sigma : array_like
        Chourasia's σ (per-step noise sd is √(2η)·σ). Vectorised.
    iterations : int
        K ≥ 0.
    strong_convexity, smoothness : float
        m > 0 and M ≥ m of the (regularised) per-example loss.

    Returns
    -------
    ndarray
        μ, shaped like ``sigma``.

    Raises
    ------
    ValueError
        If the contraction c is not < 1 (needs m > 0 and 0 < η < 2/M).

    Notes
    -----
    Derivation note (convention translation). Bok et al. write ``x_{t+1} = Π(x_t − η(∇f(x_t) + Z_t))``
    with f the mean loss of L-Lipschitz terms and ``Z_t ~ N(0, σ_B² I)``: the neighbours' gradient
    steps differ by at most ``η·2L/n``
    and the noise sd is ``η σ_B``, a ratio of ``2L/(n σ_B)``.  In the convention of Chourasia et al.
    Alg. 1 (mean gradient, noise ``√(2η)·N(0, σ² I)``, ``S_g`` the sensitivity of the *sum* of
    gradients) the shift is ``η S_g / n`` and the noise sd ``√(2η) σ``; the theorem only uses this
    ratio (shifted-interpolation argument), so ``μ = (η S_g/n)/(√(2η) σ) · sqrt(…)``.
    With ``c = |1 − η|`` (the loss ½‖θ − x‖²) this is exactly the Rényi divergence of
    Chourasia et al. Thm 3's proof, confirming the translation (checked in the tests).
    """
    c = gd_contraction(step_size, strong_convexity, smoothness)
    if not c < 1.0:
        raise ValueError(
            "step_size must satisfy 0 < step_size < 2/smoothness with strong_convexity > 0 "
            f"(contraction c = {c:.6g} must be < 1)."
        )
    ratio = (step_size * sensitivity / n) / (np.sqrt(2.0 * step_size) * np.asarray(sigma, float))
    c_k = c ** int(iterations)
    return ratio * np.sqrt((1.0 + c) / (1.0 - c) * (1.0 - c_k) / (1.0 + c_k))
