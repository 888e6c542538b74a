"""Rényi-DP curves and their conversion to (ε, δ)-DP.

Conventions
-----------
An RDP curve is a pair of equal-length arrays ``(orders, rdp)``: the mechanism satisfies
(α, rdp[i])-RDP for every ``α = orders[i]`` (Mironov 2017, arXiv:1702.07476, Def. 4).
Every function here is pure and vectorised over the curve.

Two conversions are offered:

* ``"improved"`` — Canonne, Kamath, Steinke 2020 (arXiv:2004.00010, Prop. 12; also Balle et al.
  2020, arXiv:1905.09982, Thm 21):
  ``ε = r(α) + log((α − 1)/α) − (log δ + log α)/(α − 1)``, computed by
  :func:`dp_accounting.rdp.compute_epsilon` (Google's implementation, used as is).
* ``"mironov"`` — Mironov 2017 (arXiv:1702.07476, Prop. 3): ``ε = r(α) + log(1/δ)/(α − 1)``.
  Always larger; kept for comparison with papers that use it (e.g. Chourasia et al. Thm 7).

Both are minimised over the supplied orders; the minimising order is returned.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import check_delta, check_orders

__all__ = ["DEFAULT_ORDERS", "CONVERSIONS", "epsilon_from_rdp"]

#: Orders used when the caller gives none: dense near 1 (small ε), geometric up to 10⁴.
DEFAULT_ORDERS: NDArray[np.float64] = np.unique(
    np.concatenate([1.0 + np.geomspace(0.02, 1.0, 60), np.geomspace(2.0, 1.0e4, 300)])
)

#: Names accepted by ``epsilon_from_rdp(conversion=...)``.
CONVERSIONS = ("improved", "mironov")


def _validate_curve(orders: ArrayLike, rdp: ArrayLike) -> tuple[NDArray, NDArray]:
    orders_arr = check_orders(orders)
    rdp_arr = np.asarray(rdp, dtype=float)
    if orders_arr.ndim != 1 or orders_arr.shape != rdp_arr.shape or orders_arr.size == 0:
        raise ValueError("orders and rdp must be non-empty 1-D arrays of the same length.")
    if np.any(np.isnan(rdp_arr)) or np.any(rdp_arr < 0.0):
        raise ValueError("rdp values must be >= 0 (and not NaN).")
    return orders_arr, rdp_arr


def epsilon_from_rdp(
    orders: ArrayLike, rdp: ArrayLike, delta: float, *, conversion: str = "improved"
) -> tuple[float, float]:
    """Smallest ε such that the RDP curve implies (ε, δ)-DP.

    Parameters
    ----------
    orders, rdp : array_like
        The RDP curve (orders > 1, values ≥ 0; ``inf`` allowed and ignored by the minimum).
    delta : float
        Target δ in (0, 1).
    conversion : {"improved", "mironov"}
        Which conversion theorem to apply (see the module docstring).

    Returns
    -------
    epsilon : float
        The converted ε (``inf`` if every order gives ``inf``).
    order : float
        The order that achieved it.
    """
    orders_arr, rdp_arr = _validate_curve(orders, rdp)
    delta = check_delta(delta)
    if conversion == "improved":
        finite = np.isfinite(rdp_arr)
        if not np.any(finite):
            return float("inf"), float(orders_arr[0])
        from dp_accounting.rdp import compute_epsilon  # imported here: the package loads in ~1 s

        eps, order = compute_epsilon(
            orders_arr[finite].tolist(), rdp_arr[finite].tolist(), delta
        )
        return float(eps), float(order)
    if conversion == "mironov":
        # Mironov 2017 (arXiv:1702.07476) Prop. 3.
        eps = rdp_arr + np.log(1.0 / delta) / (orders_arr - 1.0)
        index = int(np.argmin(eps))
        return float(max(eps[index], 0.0)), float(orders_arr[index])
    raise ValueError(f"conversion must be one of {CONVERSIONS}; got {conversion!r}.")
