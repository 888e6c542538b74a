"""Comparing a certified number with an oracle: the safe side exactly, the tight side within the rounding margin.

Every ε and sensitivity a certificate states is the computed value rounded up by
:data:`dpconvex.accounting.rounding.ROUNDING_MARGIN` (``docs/ACCOUNTANTS.md``, "Rounding margin"), and
every calibrated noise level meets the target with the margin inside it.  A test that compares such a
number with an independent oracle (a closed form, quadrature, dp-accounting) therefore asserts

    oracle ≤ certified ≤ oracle · (1 + ROUNDING_MARGIN) · (1 + rel) + abs,

where ``rel``/``abs`` are the oracle's own tolerance: never below the oracle (the margin dominates the
rounding of both), and no looser than the margin.
"""

from __future__ import annotations

import math

from dpconvex.accounting.rounding import ROUNDING_MARGIN

__all__ = ["ROUNDING_MARGIN", "assert_certified"]


def assert_certified(certified: float, oracle: float, *, rel: float = 0.0, abs: float = 0.0) -> None:
    """``oracle ≤ certified ≤ oracle·(1 + ROUNDING_MARGIN)·(1 + rel) + abs`` (module docstring)."""
    certified, oracle = float(certified), float(oracle)
    upper = math.nextafter(oracle * (1.0 + ROUNDING_MARGIN) * (1.0 + rel) + abs, math.inf)  # round_up's own ulp
    assert oracle <= certified, f"certified {certified!r} is below the oracle {oracle!r}"
    assert certified <= upper, f"certified {certified!r} exceeds the oracle {oracle!r} by more than the margin"
