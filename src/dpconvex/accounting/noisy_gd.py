"""Accountant for full-batch noisy gradient descent (Chourasia et al. Alg. 1).

A run is described by a frozen :class:`~.noisy_gd_bounds.NoisyGDEvent`; the accountant evaluates every
bound of :data:`~.noisy_gd_bounds.BOUNDS` whose conditions hold and keeps the smallest (best-of, the
shared :class:`.best_of.BoundRegistry`; the account lists the skipped bounds with their unmet
conditions).  The event record, the bound table (sources, conditions, derivation notes) and the
release conditions live in :mod:`.noisy_gd_bounds` and are re-exported here, so every name keeps its
path.

Conventions (:mod:`.noisy_gd_bounds`): replace-one neighbours; ``sensitivity`` S_g bounds the change of
the *sum* of per-example gradients; σ scales the per-step noise √(2η)·N(0, σ² I); only θ_K is released
(the composition bound also covers every iterate).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import best_of, gdp
from . import noisy_gd_bounds as _bounds
from ._checks import check_delta, check_epsilon
from .calibration import smallest_noise
from .noisy_gd_bounds import EVERY_ITERATE, HIDDEN_STATE, INITIALIZATIONS, Bound, NoisyGDEvent
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp

__all__ = [
    "NoisyGDEvent",
    "Bound",
    "BOUNDS",
    "INITIALIZATIONS",
    "HIDDEN_STATE",
    "EVERY_ITERATE",
    "unmet_conditions",
    "applicable_bounds",
    "rdp_curve",
    "best_rdp",
    "account",
    "calibrate_sigma",
]


#: Registry of the bounds the accountant knows, keyed by name (the table of :mod:`.noisy_gd_bounds`).
BOUNDS: dict[str, Bound] = _bounds.BOUNDS

_REGISTRY = best_of.BoundRegistry(BOUNDS)


def unmet_conditions(event: NoisyGDEvent, bound: str) -> list[str]:
    """Conditions of ``bound`` that ``event`` does not satisfy (empty if it applies).

    Parameters
    ----------
    event : NoisyGDEvent
        The run.
    bound : str
        A name of :data:`~.noisy_gd_bounds.BOUNDS` (``ValueError`` for an unknown name).

    Returns
    -------
    list of str
        The unmet conditions, in words.
    """
    return _REGISTRY.unmet_conditions(event, bound)


def applicable_bounds(event: NoisyGDEvent) -> list[str]:
    """Names of the bounds whose conditions ``event`` satisfies.

    Parameters
    ----------
    event : NoisyGDEvent
        The run.

    Returns
    -------
    list of str
        Names of :data:`~.noisy_gd_bounds.BOUNDS`, in its order.
    """
    return _REGISTRY.applicable(event)


def rdp_curve(event: NoisyGDEvent, bound: str, orders: ArrayLike = DEFAULT_ORDERS) -> NDArray[np.float64]:
    """RDP curve of one named bound (``ValueError`` listing unmet conditions if it does not apply).

    Parameters
    ----------
    event : NoisyGDEvent
        The run.
    bound : str
        A name of :data:`~.noisy_gd_bounds.BOUNDS`.
    orders : array_like, default=DEFAULT_ORDERS
        RDP orders α > 1 (:data:`.rdp.DEFAULT_ORDERS`).

    Returns
    -------
    ndarray
        ε(α) at each order (for a GDP bound, its exact RDP curve αμ²/2).
    """
    return _REGISTRY.require(event, bound).rdp(orders, event)


def best_rdp(event: NoisyGDEvent, orders: ArrayLike = DEFAULT_ORDERS) -> tuple[NDArray, NDArray]:
    """Best-of RDP: at each order the minimum over applicable bounds, and which bound won.

    Parameters
    ----------
    event : NoisyGDEvent
        The run (at least one bound must apply: composition always does).
    orders : array_like, default=DEFAULT_ORDERS
        RDP orders α > 1 (:data:`.rdp.DEFAULT_ORDERS`).

    Returns
    -------
    curve : ndarray
        The pointwise minimum ε(α) over the applicable bounds.
    winners : ndarray of object
        The name of the bound that gives it, at each order.
    """
    names = applicable_bounds(event)
    curves = np.vstack([BOUNDS[name].rdp(orders, event) for name in names])
    winner = np.argmin(curves, axis=0)
    return curves[winner, np.arange(curves.shape[1])], np.asarray(names, dtype=object)[winner]


def _epsilon_of(event: NoisyGDEvent, name: str, delta: float, conversion: str,
                orders: ArrayLike) -> tuple[float, float | None]:
    bound = BOUNDS[name]
    if bound.gdp_mu is not None:
        # μ-GDP: the exact δ(ε) (Dong, Roth, Su 2019, Cor. 2.13) beats any RDP conversion.
        return gdp.gdp_epsilon(delta, bound.gdp_mu(event)), None
    return epsilon_from_rdp(orders, bound.rdp(orders, event), delta, conversion=conversion)


def account(
    event: NoisyGDEvent,
    delta: float,
    *,
    bound: str = "best",
    conversion: str = "improved",
    orders: ArrayLike = DEFAULT_ORDERS,
) -> best_of.PrivacyAccount:
    """(ε, δ)-DP of a noisy GD run: one named bound, or the best of all applicable ones.

    RDP bounds are converted with ``conversion`` (see :mod:`dpconvex.accounting.rdp`), optimised
    over ``orders``; the GDP bound uses its exact δ(ε).  With ``bound="best"`` the smallest ε wins
    and ``candidates`` records every applicable bound's ε; ``skipped`` every other bound's unmet conditions.

    Parameters
    ----------
    event : NoisyGDEvent
        The run: n, the gradient-sum sensitivity S_g, η, σ (per-step noise √(2η)·N(0, σ² I)), K and
        the conditions it satisfies.
    delta : float
        δ in (0, 1).
    bound : str, default="best"
        ``"best"`` or one name of :data:`~.noisy_gd_bounds.BOUNDS` (``ValueError`` if it does not apply).
    conversion : str, default="improved"
        The RDP to (ε, δ) conversion of :func:`.rdp.epsilon_from_rdp`.
    orders : array_like, default=DEFAULT_ORDERS
        RDP orders α > 1 the conversion optimises over.

    Returns
    -------
    PrivacyAccount
        The certified ε (rounded up), the winning bound, its theorem, assumptions and conversion
        (``"exact-gdp"`` when a GDP bound wins), and every candidate's ε.
    """
    delta = check_delta(delta)
    best = _REGISTRY.best_of(event, lambda name: _epsilon_of(event, name, delta, conversion, orders), bound=bound)
    order = best[1][best[0]][1]
    return _REGISTRY.account(delta, best, "exact-gdp" if order is None else conversion)


def calibrate_sigma(
    event: NoisyGDEvent,
    epsilon: float,
    delta: float,
    *,
    bound: str = "best",
    orders: ArrayLike = DEFAULT_ORDERS,
    rtol: float = 1e-4,
) -> float:
    """Smallest σ (within a factor 1 + ``rtol``) whose certificate meets the target; never overshoots.

    ``account(replace(event, sigma=σ), delta, bound=bound).epsilon`` is non-increasing in σ for
    every bound, so :func:`.calibration.smallest_noise` (the library's one calibration,
    ``tolerance="noise"``) finds it: the returned σ is a point at which that ε was evaluated and is
    at most ``epsilon`` (never overshoots), and an evaluated σ' ≥ σ/(1 + ``rtol``) exceeds it.
    Start: every GDP bound's μ is proportional to 1/σ, so σ_b = μ_b(σ = 1)/μ(ε, δ) meets the
    target with bound b alone (exactly, up to rounding: Dong, Roth, Su 2019, arXiv:1905.02383,
    Cor. 2.13); the smallest σ_b, or 1 when no GDP bound applies.  Only the number of accountant
    calls depends on it.  ``event.sigma`` is ignored.  With the default orders the result is cached
    (the function is pure in its arguments and every fit of a configuration asks for the same σ).

    Parameters
    ----------
    event : NoisyGDEvent
        The run (its ``sigma`` is ignored; ``sensitivity`` S_g of the gradient sum must be > 0).
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    bound : str, default="best"
        ``"best"`` or one name of :data:`~.noisy_gd_bounds.BOUNDS`.
    orders : array_like, default=DEFAULT_ORDERS
        RDP orders α > 1 for the RDP bounds.
    rtol : float, default=1e-4
        Relative resolution of σ.

    Returns
    -------
    float
        σ, the noise scale of the per-step noise √(2η)·N(0, σ² I).

    Raises
    ------
    ValueError
        For ε or δ outside their ranges, a ``bound`` that does not apply, ``event.sensitivity`` = 0
        (θ_K does not depend on the data: no σ is needed), or no σ ≤ 10¹² meeting the target.
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if orders is DEFAULT_ORDERS:
        return _calibrate_default_orders(event, epsilon, delta, bound, float(rtol))
    return _calibrate(event, epsilon, delta, bound, orders, rtol)


@lru_cache(maxsize=256)
def _calibrate_default_orders(event: NoisyGDEvent, epsilon: float, delta: float, bound: str, rtol: float) -> float:
    return _calibrate(event, epsilon, delta, bound, DEFAULT_ORDERS, rtol)


def _calibrate(event: NoisyGDEvent, epsilon: float, delta: float, bound: str, orders: ArrayLike, rtol: float) -> float:
    names = _REGISTRY.candidates(event, bound)
    if event.sensitivity == 0:
        raise ValueError("sensitivity must be > 0 to calibrate sigma (S_g = 0: θ_K does not depend on the data, "
                         "no noise is needed); got 0.")

    def eps_at(sigma: float) -> float:
        return account(dataclasses.replace(event, sigma=sigma), delta, bound=bound, orders=orders).epsilon

    unit = dataclasses.replace(event, sigma=1.0)
    mus = [mu_of(unit) for name in names if (mu_of := BOUNDS[name].gdp_mu) is not None]
    start = min(mus) / gdp.gdp_mu(epsilon, delta) if mus else 1.0
    return smallest_noise(eps_at, epsilon, start, rtol=rtol, tolerance="noise", floor=1e-300, ceiling=1e12)
