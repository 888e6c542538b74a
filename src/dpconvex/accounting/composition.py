"""Composition of privacy guarantees: GDP, Rényi-DP curves and (ε, δ) pairs.

Pure functions of privacy parameters (no mechanism, no data); :mod:`dpconvex.privacy.ledger` composes the
certificates of several releases with them.  Every rule here holds for *adaptive* composition
(each mechanism may be chosen from the outputs of the previous ones) with its parameters fixed in
advance; what stays valid when the parameters themselves are chosen adaptively (filters) is
stated in :mod:`dpconvex.privacy.ledger`.

Conventions.

* Neighbouring relation: whatever the composed guarantees share (the library's certificates are
  all for replace-one neighbours); composition never mixes relations.
* μ-GDP: the trade-off function is at least G_μ, that of N(0, 1) against N(μ, 1) (Dong, Roth, Su
  2019, arXiv:1905.02383, Def. 2.6).  Its exact (ε, δ) is :func:`.gdp.gdp_epsilon` (Cor. 2.13) and
  its RDP curve α μ²/2 is :func:`.gdp.gdp_rdp`; neither is repeated here.
* An RDP curve is a pair ``(orders, rdp)`` as in :mod:`.rdp`; curves compose on a *common* order
  grid and convert to (ε, δ) by :func:`.rdp.epsilon_from_rdp` (its ``"improved"`` conversion by
  default).
* A pair (ε, δ) is an (ε, δ)-DP statement; ε may be ``inf`` (no guarantee).

Sources.

* Dong, Roth, Su 2019, *Gaussian Differential Privacy*, arXiv:1905.02383, Cor. 3.3: the adaptive
  composition of μ_i-GDP mechanisms is exactly √(Σμ_i²)-GDP.
* Mironov 2017, *Rényi Differential Privacy*, arXiv:1702.07476, Prop. 1 (adaptive composition adds
  RDP curves order by order) and Prop. 11 (weak triangle inequality, used with p = q = 2).
* Dwork & Roth 2014, *The Algorithmic Foundations of Differential Privacy*, Thm 3.16 (basic
  composition) and Thm 3.20 (advanced composition of Dwork, Rothblum, Vadhan 2010).
* Mironov, Talwar, Zhang 2019, *Rényi Differential Privacy of the Sampled Gaussian Mechanism*,
  arXiv:1908.10530, §3 (the add/remove RDP of a Poisson-subsampled Gaussian that dp-accounting's
  ``RdpAccountant`` computes bounds both directions of the pair).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import gdp
from ._checks import check_delta, check_epsilon, check_nonnegative, check_orders
from .calibration import smallest_noise
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp

__all__ = [
    "TRIANGLE_MAX_ORDER",
    "advanced_composition",
    "basic_composition",
    "gdp_compose",
    "poisson_replace_one_rdp",
    "rdp_compose",
    "rdp_composed_epsilon",
    "zcdp_rho",
]


def gdp_compose(mus: Iterable[float]) -> float:
    """μ of the adaptive composition of μ_i-GDP mechanisms: √(Σ μ_i²), exact.

    Dong, Roth, Su 2019 (arXiv:1905.02383), Cor. 3.3: G_{μ_1} ⊗ … ⊗ G_{μ_k} = G_μ with
    μ = √(μ_1² + … + μ_k²).  The composition is adaptive (each mechanism may depend on the
    previous outputs) with the μ_i fixed in advance.  Its exact (ε, δ) is
    ``gdp.gdp_epsilon(delta, gdp_compose(mus))`` (their Cor. 2.13).

    Parameters
    ----------
    mus : iterable of float
        Each μ_i ≥ 0 (``inf`` allowed: no guarantee).

    Returns
    -------
    float
        μ ≥ 0 (0 for an empty composition), ``math.hypot`` of the μ_i (no overflow).
    """
    values = [float(check_nonnegative(mu, "mu", finite=False)) for mu in mus]
    return math.hypot(*values) if values else 0.0


def rdp_compose(curves: Sequence[ArrayLike]) -> NDArray[np.float64]:
    """The RDP curve of the adaptive composition: the order-by-order sum of the curves.

    Mironov 2017 (arXiv:1702.07476), Prop. 1: if M_i is (α, r_i(α))-RDP then their adaptive
    composition is (α, Σ r_i(α))-RDP, at each order α separately.  Every curve must be evaluated
    on the same order grid (the caller's; e.g. :data:`.rdp.DEFAULT_ORDERS`).

    Parameters
    ----------
    curves : sequence of array_like
        The r_i on a common grid, each ≥ 0 (``inf`` allowed), all of one length.

    Returns
    -------
    ndarray
        Σ r_i (zeros of that length would need the grid: an empty sequence is refused).
    """
    arrays = [np.asarray(curve, dtype=float) for curve in curves]
    if not arrays or any(a.ndim != 1 or a.shape != arrays[0].shape for a in arrays):
        raise ValueError("curves must be a non-empty sequence of 1-D arrays on one common order grid.")
    if any(np.any(np.isnan(a) | (a < 0)) for a in arrays):
        raise ValueError("RDP values must be >= 0 (and not NaN).")
    return np.sum(arrays, axis=0)


def rdp_composed_epsilon(orders: ArrayLike, curves: Sequence[ArrayLike], delta: float, *,
                         conversion: str = "improved") -> tuple[float, float]:
    """(ε, order) of the composition of RDP curves at δ: :func:`rdp_compose`, then :func:`.rdp.epsilon_from_rdp`.

    Parameters
    ----------
    orders : array_like
        The common order grid (> 1).
    curves : sequence of array_like
        The curves on ``orders``.
    delta : float
        Target δ in (0, 1).
    conversion : {"improved", "mironov"}
        As in :func:`.rdp.epsilon_from_rdp`.

    Returns
    -------
    epsilon, order : float
    """
    return epsilon_from_rdp(orders, rdp_compose(curves), delta, conversion=conversion)


def basic_composition(pairs: Iterable[tuple[float, float]]) -> tuple[float, float]:
    """(Σ ε_i, Σ δ_i): the basic composition theorem (Dwork & Roth 2014, Thm 3.16).

    Valid for the adaptive composition of (ε_i, δ_i)-DP mechanisms with the pairs fixed in
    advance; Rogers, Roth, Ullman, Vadhan 2016 (arXiv:1605.08294) show the same sums also bound
    a composition whose pairs are chosen adaptively (their basic-composition filter, used by
    :class:`dpconvex.privacy.ledger.PrivacyLedger`).  Sums by ``math.fsum`` (correctly rounded).

    Parameters
    ----------
    pairs : iterable of (float, float)
        Each ε_i ≥ 0 (``inf`` allowed) and δ_i in [0, 1].

    Returns
    -------
    epsilon, delta : float
        (0, 0) for an empty composition; δ is capped at 1.
    """
    pairs = [(float(check_nonnegative(e, "epsilon", finite=False)), float(check_nonnegative(d, "delta")))
             for e, d in pairs]
    if any(d > 1.0 for _, d in pairs):
        raise ValueError("every delta must lie in [0, 1].")
    if any(math.isinf(e) for e, _ in pairs):
        return math.inf, min(1.0, math.fsum(d for _, d in pairs))
    return math.fsum(e for e, _ in pairs), min(1.0, math.fsum(d for _, d in pairs))


def advanced_composition(epsilon: float, delta: float, k: int, delta_slack: float) -> tuple[float, float]:
    """Advanced composition of k (ε, δ)-DP mechanisms (Dwork, Rothblum, Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    ``ε' = √(2k log(1/δ')) ε + k ε (e^ε − 1)`` at ``δ_total = k δ + δ'``, for the adaptive
    composition of k mechanisms that are each (ε, δ)-DP (homogeneous, fixed in advance).  This is
    the Dwork–Rothblum–Vadhan bound, not the optimal homogeneous composition of Kairouz, Oh,
    Viswanath 2015 (arXiv:1311.0776, Thm 3.3), which is tighter but a sum of binomial terms;
    :class:`dpconvex.privacy.ledger.PrivacyLedger` takes the smaller of this and :func:`basic_composition`.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 of each mechanism (finite).
    delta : float
        δ ∈ [0, 1) of each mechanism.
    k : int
        Number of mechanisms, ≥ 1.
    delta_slack : float
        δ' in (0, 1).

    Returns
    -------
    epsilon, delta : float
        (ε', k δ + δ'); δ capped at 1.
    """
    epsilon = float(check_nonnegative(epsilon, "epsilon"))
    delta = float(check_nonnegative(delta, "delta"))
    delta_slack = check_delta(delta_slack)
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    eps = math.sqrt(2.0 * k * math.log(1.0 / delta_slack)) * epsilon + k * epsilon * math.expm1(epsilon)
    return eps, min(1.0, k * delta + delta_slack)


def zcdp_rho(epsilon: float, delta: float, *, orders: ArrayLike = DEFAULT_ORDERS,
             conversion: str = "improved") -> tuple[float, float]:
    """Largest ρ whose RDP curve ``α ρ`` converts (:func:`.rdp.epsilon_from_rdp`) to at most ε at δ.

    The conversion is non-decreasing in ρ, so the answer is found by the library's one
    calibration search (:func:`.calibration.smallest_noise` on s = 1/ρ, ``tolerance="noise"``,
    to a factor 1 + 10⁻¹²) and is an evaluated point: ``epsilon_from_rdp(orders, ρ·orders,
    delta)`` ≤ ε in floating point.  Uses: the largest ρ-zCDP curve an (ε, δ) budget admits; and
    the curve of a certificate whose bound is ``α ρ_true`` and whose certified ε is that conversion
    on the same ``orders`` rounded *up* (ρ_true then meets the target, so the answer is ≥ ρ_true:
    a valid, slightly pessimistic curve).

    Parameters
    ----------
    epsilon : float
        ε > 0, finite.
    delta : float
        δ in (0, 1).
    orders : array_like
        The order grid of the conversion.
    conversion : {"improved", "mironov"}
        As in :func:`.rdp.epsilon_from_rdp`.

    Returns
    -------
    rho : float
        ρ > 0.
    order : float
        The order at which ``α ρ`` converts to its ε (the order at which the budget binds).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    grid = check_orders(orders)

    def epsilon_at(inverse_rho: float) -> float:
        return epsilon_from_rdp(grid, grid / inverse_rho, delta, conversion=conversion)[0]

    start = 4.0 * math.log(1.0 / delta) / epsilon**2  # 1/ρ of the zCDP rule of thumb ε ≈ 2√(ρ log(1/δ))
    inverse = smallest_noise(epsilon_at, epsilon, start, rtol=1e-12, tolerance="noise", floor=1e-300, ceiling=1e300)
    rho = 1.0 / inverse
    return rho, epsilon_from_rdp(grid, grid * rho, delta, conversion=conversion)[1]


#: Largest order at which :func:`poisson_replace_one_rdp` evaluates the weak-triangle bound (it needs
#: dp-accounting's RDP at 2α, whose series converges slowly at large orders; above it only the
#: joint-convexity bound is used, which is valid at every order).
TRIANGLE_MAX_ORDER = 256.0


def poisson_replace_one_rdp(orders: ArrayLike, rate: float, noise_multiplier: float, steps: int) -> NDArray[np.float64]:
    """An RDP curve of T Poisson-subsampled Gaussian steps under replace-one neighbours.

    The step is the pair P = (1 − q)N(0, z²) + qN(−1, z²), R = (1 − q)N(0, z²) + qN(1, z²) (the
    differing record's contribution g, ‖g‖ ≤ 1 in units of the per-record bound, replaced by −g;
    :mod:`dpconvex.accounting.noisy_sgd`).  dp-accounting's ``RdpAccountant`` refuses Poisson sampling under
    ``REPLACE_ONE``, so each step is bounded by the smaller of two valid bounds, at every order α:

    1. Joint convexity: e^{(α−1)D_α(P‖R)} = E_R[(P/R)^α] is an f-divergence (f(t) = t^α), jointly
       convex, and P, R share the component (1 − q)N(0, z²), so
       ``D_α ≤ log(1 − q + q e^{(α−1)·2α/z²})/(α − 1)`` (2α/z² = :func:`.gdp.gdp_rdp` at μ = 2/z,
       the full-batch pair N(∓1, z²)).
    2. Weak triangle inequality through Q = N(0, z²), the record left out (Mironov 2017,
       arXiv:1702.07476, Prop. 11 with p = q = 2):
       ``D_α(P‖R) ≤ (α − ½)/(α − 1)·r(2α) + r(2α − 1)``, with r the add/remove RDP of one step
       that dp-accounting's ``RdpAccountant`` computes (Mironov, Talwar, Zhang 2019,
       arXiv:1908.10530: it bounds both D(P‖Q) and D(Q‖R)); evaluated up to
       :data:`TRIANGLE_MAX_ORDER`.

    T steps compose adaptively (Mironov 2017, Prop. 1): T times the per-step minimum.  This curve
    is looser than the privacy-loss distribution that certifies such a run (the certificate's
    ε is usually well below its conversion); it is what lets a Poisson release be added to
    other RDP curves.

    Parameters
    ----------
    orders : array_like
        Orders α > 1.
    rate : float
        Sampling rate q in (0, 1].
    noise_multiplier : float
        z > 0: noise sd over the per-record contribution bound.
    steps : int
        T ≥ 1.

    Returns
    -------
    ndarray
        The curve at ``orders``.
    """
    from dp_accounting import (
        GaussianDpEvent,
        NeighboringRelation,
        PoissonSampledDpEvent,
    )
    from dp_accounting.rdp import RdpAccountant

    alpha = check_orders(orders)
    if not (0.0 < rate <= 1.0 and noise_multiplier > 0 and int(steps) == steps and steps >= 1):
        raise ValueError(f"need 0 < rate <= 1, noise_multiplier > 0 and an integer steps >= 1; got {rate!r}, "
                         f"{noise_multiplier!r}, {steps!r}.")
    full = gdp.gdp_rdp(alpha, 2.0 / noise_multiplier)
    with np.errstate(divide="ignore"):
        mixed = np.logaddexp(math.log1p(-rate) if rate < 1.0 else -np.inf, math.log(rate) + (alpha - 1.0) * full)
    convex = mixed / (alpha - 1.0)
    triangle = np.full_like(alpha, np.inf)
    low = alpha <= TRIANGLE_MAX_ORDER
    if np.any(low):
        accountant = RdpAccountant(np.concatenate([2.0 * alpha[low], 2.0 * alpha[low] - 1.0]).tolist(),
                                   NeighboringRelation.ADD_OR_REMOVE_ONE)
        accountant.compose(PoissonSampledDpEvent(rate, GaussianDpEvent(noise_multiplier)))
        doubled, odd = np.split(np.asarray(accountant.rdp, dtype=float), 2)  # inf where dp-accounting gives up
        triangle[low] = (alpha[low] - 0.5) / (alpha[low] - 1.0) * doubled + odd
    return int(steps) * np.minimum(np.minimum(convex, triangle), full)
