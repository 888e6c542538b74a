"""Rényi-DP bounds for noisy gradient descent from Chourasia, Ye, Shokri 2021.

*Differential Privacy Dynamics of Langevin Diffusion and Noisy Gradient Descent*, NeurIPS 2021,
arXiv:2102.05855.  All functions are pure and vectorised over ``orders``.

Conventions (Chourasia et al. Alg. 1)
-------------------------------------
``θ_{k+1} = Π_C(θ_k − η ∇L_D(θ_k) + √(2η)·N(0, σ² I))`` with ``L_D`` the **mean** loss over the
n records; σ² is a temperature, the per-step noise variance is ``2ησ²``.  ``sensitivity`` is
``S_g`` (Def. B.10), the L2 sensitivity of the **sum** of per-example gradients under
replace-one neighbours, ``S_g ≤ 2L`` for an L-Lipschitz loss.  ``iterations`` is K.
Results are ε in (α, ε)-RDP for each order α.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_orders

__all__ = [
    "theorem2_rdp",
    "corollary1_rdp",
    "corollary2_rdp",
    "exact_quadratic_rdp",
    "composition_rdp",
    "theorem4_step_size",
    "theorem4_iterations",
]


def theorem2_rdp(
    orders: ArrayLike,
    n: int,
    sensitivity: float,
    sigma: float,
    step_size: float,
    iterations: int,
    lsi_constant: float,
) -> NDArray[np.float64]:
    """Chourasia et al. Thm 2 (eq. 16): RDP of noisy GD when the tracing diffusions are c-LSI.

    ``ε(α) = α S_g² / (2 c σ⁴ n²) · (1 − exp(−σ² c η K))``.

    The caller asserts the c-LSI condition on ``[0, ηK]``; Corollaries 1 and 2 are the two cases in
    which the paper proves it.

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1.
    n : int
        Number of records.
    sensitivity : float
        ``S_g``: L2 sensitivity of the *sum* of per-example gradients.
    sigma : float
        σ; the per-step noise is √(2η)·N(0, σ² I).
    step_size : float
        η.
    iterations : int
        K.
    lsi_constant : float
        c > 0 of the asserted c-LSI condition.

    Returns
    -------
    ndarray
        RDP ε at each order.

    Raises
    ------
    ValueError
        If ``lsi_constant`` <= 0.
    """
    if lsi_constant <= 0:
        raise ValueError(f"lsi_constant must be > 0; got {lsi_constant!r}.")
    alpha = check_orders(orders)
    decay = -np.expm1(-(sigma**2) * lsi_constant * step_size * iterations)
    return alpha * sensitivity**2 / (2.0 * lsi_constant * sigma**4 * n**2) * decay


def corollary1_rdp(
    orders: ArrayLike,
    n: int,
    sensitivity: float,
    sigma: float,
    step_size: float,
    iterations: int,
    strong_convexity: float,
) -> NDArray[np.float64]:
    """Chourasia et al. Cor. 1: λ-strongly convex, β-smooth loss, η < 1/β, θ₀ ~ Π_C(N(0, 2σ²/λ I)).

    Thm 2 with the LSI constant ``c = λ/(2σ²)`` of Lemma 5, i.e.
    ``ε(α) = α S_g² / (λ σ² n²) · (1 − exp(−λ η K / 2))``.  The caller checks η < 1/β and the
    initial distribution (see :mod:`dpconvex.accounting.noisy_gd`).

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1.
    n : int
        Number of records.
    sensitivity : float
        ``S_g``: L2 sensitivity of the *sum* of per-example gradients.
    sigma : float
        σ; the per-step noise is √(2η)·N(0, σ² I).
    step_size : float
        η.
    iterations : int
        K.
    strong_convexity : float
        λ > 0.

    Returns
    -------
    ndarray
        RDP ε at each order.
    """
    if strong_convexity <= 0:
        raise ValueError(f"strong_convexity must be > 0 for Corollary 1; got {strong_convexity!r}.")
    lsi = strong_convexity / (2.0 * sigma**2)  # Lemma 5
    return theorem2_rdp(orders, n, sensitivity, sigma, step_size, iterations, lsi)


def corollary2_rdp(
    orders: ArrayLike,
    n: int,
    sensitivity: float,
    sigma: float,
    step_size: float,
    iterations: int,
) -> NDArray[np.float64]:
    """Chourasia et al. Cor. 2 (eq. 18/72): the loss ½‖θ − x‖² on C = R^d, fixed start.

    Thm 2 with ``c = (2 − η)/(2σ²)`` (the Gaussian iterates' variance is ≤ 2σ²/(2 − η)), i.e.
    ``ε(α) = α S_g² / ((2 − η) σ² n²) · (1 − exp(−(2 − η) η K / 2))``.  Requires 0 < η < 1.

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1.
    n : int
        Number of records.
    sensitivity : float
        ``S_g``: L2 sensitivity of the *sum* of per-example gradients.
    sigma : float
        σ; the per-step noise is √(2η)·N(0, σ² I).
    step_size : float
        η.
    iterations : int
        K.

    Returns
    -------
    ndarray
        RDP ε at each order.
    """
    if not 0.0 < step_size < 1.0:
        raise ValueError(f"step_size must lie in (0, 1) for Corollary 2; got {step_size!r}.")
    lsi = (2.0 - step_size) / (2.0 * sigma**2)
    return theorem2_rdp(orders, n, sensitivity, sigma, step_size, iterations, lsi)


def exact_quadratic_rdp(
    orders: ArrayLike,
    n: int,
    sensitivity: float,
    sigma: float,
    step_size: float,
    iterations: int,
) -> NDArray[np.float64]:
    """Exact worst-case Rényi divergence of noisy GD on ½‖θ − x‖² (Chourasia et al. Thm 3 proof).

    Both outputs are Gaussian with the same covariance ``2ησ² Σ_{i<K} (1−η)^{2i} I`` and means
    ``(η x̄/…) Σ_{i<K}(1−η)^i`` that differ by at most ``η S_g/n · Σ_{i<K}(1−η)^i``; hence
    ``ε(α) = α S_g²/(4σ²n²) · (2 − η)(1 − (1−η)^K)/(1 + (1−η)^K)`` (eq. after (70)).  The worst
    pair attains it, so this is the RDP curve of the mechanism, not merely a bound.  Valid for any
    fixed (or data-independent) start and 0 < η < 1 (Thm 3), unconstrained domain.

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1.
    n : int
        Number of records.
    sensitivity : float
        ``S_g``: L2 sensitivity of the *sum* of per-example gradients.
    sigma : float
        σ; the per-step noise is √(2η)·N(0, σ² I).
    step_size : float
        η.
    iterations : int
        K.

    Returns
    -------
    ndarray
        RDP ε at each order.
    """
    if not 0.0 < step_size < 1.0:
        raise ValueError(f"step_size must lie in (0, 1) for the exact quadratic bound; got {step_size!r}.")
    alpha = check_orders(orders)
    q_k = (1.0 - step_size) ** int(iterations)
    factor = (2.0 - step_size) * (1.0 - q_k) / (1.0 + q_k)
    return alpha * sensitivity**2 / (4.0 * sigma**2 * n**2) * factor


def composition_rdp(
    orders: ArrayLike,
    n: int,
    sensitivity: float,
    sigma: float,
    step_size: float,
    iterations: int,
) -> NDArray[np.float64]:
    """Composition baseline, Chourasia et al. App. E (moments accountant, Abadi et al. 2016).

    Each step is a Gaussian mechanism with mean shift ``η S_g/n`` and noise sd ``√(2η) σ``, so its
    RDP is ``α (η S_g/n)² / (2·2ησ²)``; K steps compose to ``ε(α) = α S_g² η K / (4 n² σ²)``.
    Valid for any loss with finite S_g, any start and any projection: it pays as if every iterate
    were published.

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1.
    n : int
        Number of records.
    sensitivity : float
        ``S_g``: L2 sensitivity of the *sum* of per-example gradients.
    sigma : float
        σ; the per-step noise is √(2η)·N(0, σ² I).
    step_size : float
        η.
    iterations : int
        K.

    Returns
    -------
    ndarray
        RDP ε at each order.
    """
    alpha = check_orders(orders)
    return alpha * sensitivity**2 * step_size * iterations / (4.0 * n**2 * sigma**2)


def theorem4_step_size(strong_convexity: float, smoothness: float) -> float:
    """Chourasia et al. Thm 4's step size ``η = λ/(2β²)`` (also Lemma 6's condition η ≤ λ/(2β²)).

    Parameters
    ----------
    strong_convexity, smoothness : float
        λ and β of the loss.

    Returns
    -------
    float
        η.
    """
    return strong_convexity / (2.0 * smoothness**2)


def theorem4_iterations(
    n: int,
    dimension: int,
    strong_convexity: float,
    step_size: float,
    epsilon: float,
    delta: float,
) -> int:
    """Chourasia et al. Thm 4's number of updates for (ε, δ)-DP, at a given step size.

    Thm 4 sets ``η = λ/(2β²)`` and ``K* = 2β²/λ² · log(n² ε² / (4 log(1/δ) d))``, i.e. the run
    length ``ηK* = log(n² ε² / (4 log(1/δ) d)) / λ`` that makes Lemma 6's optimisation error
    ``e^{−ληK}`` match the noise term.  We return ``K = ⌈ηK*/η⌉`` for the step size actually used,
    which equals the paper's K* at the paper's step size (and is at least 1).

    Parameters
    ----------
    n : int
        Number of records.
    dimension : int
        d, the dimension of θ.
    strong_convexity : float
        λ > 0.
    step_size : float
        η > 0 actually used.
    epsilon, delta : float
        Target (ε, δ).

    Returns
    -------
    int
        K >= 1.
    """
    if strong_convexity <= 0:
        raise ValueError(f"strong_convexity must be > 0 for Theorem 4; got {strong_convexity!r}.")
    if step_size <= 0:
        raise ValueError(f"step_size must be > 0; got {step_size!r}.")
    ratio = n**2 * epsilon**2 / (4.0 * np.log(1.0 / delta) * dimension)
    run_length = np.log(max(ratio, 1.0)) / strong_convexity
    return max(1, int(np.ceil(run_length / step_size)))
