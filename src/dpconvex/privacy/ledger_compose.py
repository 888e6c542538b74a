"""The composition of a fixed sequence of releases: :func:`compose` and its result, :class:`LedgerTotal`.

The pure half of :mod:`dpconvex.privacy.ledger`: given the releases' curves
(:class:`~dpconvex.privacy.dp_events.PrivacyCurve`) and a δ, the smallest valid ε among the
composition theorems that apply (the module docstring of :mod:`dpconvex.privacy.ledger` states each
rule with its source).  :class:`~dpconvex.privacy.ledger.PrivacyLedger` calls it once per partition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from dpconvex.accounting import gdp
from dpconvex.accounting.composition import (
    advanced_composition,
    basic_composition,
    gdp_compose,
    rdp_composed_epsilon,
)
from dpconvex.accounting.rdp import DEFAULT_ORDERS
from dpconvex.accounting.rounding import round_up
from dpconvex.privacy.dp_events import PrivacyCurve, pld_epsilon

__all__ = ["LedgerTotal", "compose"]


@dataclass(frozen=True)
class LedgerTotal:
    """The composed guarantee of a ledger: (ε, δ), the winning method and every candidate's ε.

    Attributes
    ----------
    epsilon, delta : float
    method : str
    candidates : dict of str to float
    """

    epsilon: float
    delta: float
    method: str
    candidates: dict[str, float] = field(default_factory=dict)


@lru_cache(maxsize=256)
def _rdp(curve: PrivacyCurve) -> np.ndarray:
    """The curve's RDP on :data:`~dpconvex.accounting.rdp.DEFAULT_ORDERS` (cached: a Poisson curve costs ~0.1–1 s)."""
    values = curve.rdp(DEFAULT_ORDERS)
    values.setflags(write=False)
    return values


def compose(curves: list[PrivacyCurve], delta: float) -> LedgerTotal:
    """The smallest valid ε at ``delta`` of a fixed sequence of releases (candidates: :mod:`dpconvex.privacy.ledger`).

    Parameters
    ----------
    curves : list of PrivacyCurve
    delta : float

    Returns
    -------
    LedgerTotal
    """
    pairs = [c for c in curves if c.kind == "pair"]
    others = [c for c in curves if c.kind != "pair"]
    if not curves:
        return LedgerTotal(0.0, delta, "empty")
    pair_eps, pair_delta = basic_composition((c.epsilon, c.delta) for c in pairs)
    suffix = " + basic" if pairs else ""
    found: dict[str, float] = {}
    if others and pair_delta < delta:
        rest = delta - pair_delta
        if all(c.kind == "gdp" for c in others):
            found["gdp" + suffix] = gdp.gdp_epsilon(rest, gdp_compose(c.mu for c in others)) + pair_eps
        found["rdp" + suffix] = rdp_composed_epsilon(DEFAULT_ORDERS, [_rdp(c) for c in others], rest)[0] + pair_eps
    convolved = pld_epsilon(curves, delta)
    if convolved is not None and math.isfinite(convolved):
        found["pld"] = convolved
    if all(c.has_pair for c in curves):
        eps, total_delta = basic_composition((c.epsilon, c.delta) for c in curves)
        if total_delta <= delta:
            found["basic"] = eps
    if not others and len(pairs) >= 2 and len({(c.epsilon, c.delta) for c in pairs}) == 1:
        k, (eps, each) = len(pairs), (pairs[0].epsilon, pairs[0].delta)
        if k * each < delta and math.isfinite(eps):
            found["advanced"] = advanced_composition(eps, each, k, delta - k * each)[0]
    if not found:
        raise ValueError(f"delta={delta!r} is not above the sum of the (epsilon, delta) releases' deltas "
                         f"({pair_delta!r}): no composition holds at it.")
    candidates = {name: round_up(eps) for name, eps in found.items()}
    winner = min(candidates, key=candidates.__getitem__)
    return LedgerTotal(candidates[winner], delta, winner, candidates)
