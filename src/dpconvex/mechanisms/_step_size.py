"""The check every mechanism applies to its ``step_size`` option once ``"auto"`` is resolved."""

from __future__ import annotations

import math
import numbers
from typing import cast

__all__ = ["require_step_size"]


def require_step_size(step_size: object, smoothness: float | None = None) -> float:
    """Raise ``ValueError`` unless ``step_size`` is a real number in (0, 2/smoothness), or in (0, ∞) without one.

    Parameters
    ----------
    step_size : object
        The step η, after the mechanism resolved ``"auto"``.
    smoothness : float, optional
        The objective's smoothness β, for the gradient-step mechanisms: beyond 2/β gradient descent
        need not converge (and their certificates do not hold).  ``None``: any finite η > 0.

    Returns
    -------
    float
        ``step_size`` itself (the same object, not converted), typed as the real number it was checked to be.

    Raises
    ------
    ValueError
        Naming ``step_size``, its valid range and the value given.
    """
    upper = math.inf if smoothness is None else 2.0 / smoothness
    eta = cast(float, step_size)  # mypy does not order numbers.Real; checked to be a real number below
    if isinstance(step_size, numbers.Real) and not isinstance(step_size, bool) and 0 < eta < upper:
        return eta
    if smoothness is None:
        raise ValueError(f"step_size must be 'auto' or a finite number > 0; got {step_size!r}.")
    raise ValueError(f"step_size must be 'auto' or lie in (0, 2/smoothness) = (0, {upper:.6g}) for this loss "
                     f"(beyond it gradient descent need not converge); got {step_size!r}.")
