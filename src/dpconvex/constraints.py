"""Constraint sets for projected training: the whole space and an L2 ball."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Constraint", "Unconstrained", "L2Ball"]


@dataclass(frozen=True)
class Unconstrained:
    """C = R^d: projection is the identity, radius and diameter are infinite."""

    @property
    def radius(self) -> float:
        """Largest norm of a point of C (``inf``)."""
        return float("inf")

    @property
    def diameter(self) -> float:
        """``sup ‖u − v‖`` over C (``inf``)."""
        return float("inf")

    @property
    def is_constrained(self) -> bool:
        """False: iterates are never projected."""
        return False

    def project(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """Return ``w`` unchanged."""
        return w

    def describe(self) -> str:
        """Human-readable name, used in certificates."""
        return "R^d (unconstrained)"


@dataclass(frozen=True)
class L2Ball:
    """C = {w : ‖w‖₂ ≤ radius}, centred at the origin.

    Parameters
    ----------
    radius : float
        Finite, > 0.
    """

    radius: float

    def __post_init__(self) -> None:
        if not (np.isfinite(self.radius) and self.radius > 0):
            raise ValueError(f"radius must be finite and > 0; got {self.radius!r}.")

    @property
    def diameter(self) -> float:
        """``2 · radius``."""
        return 2.0 * self.radius

    @property
    def is_constrained(self) -> bool:
        """True: iterates are projected onto the ball."""
        return True

    def project(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """Euclidean projection: rescale ``w`` onto the ball if it lies outside."""
        norm = float(np.linalg.norm(w))
        return w if norm <= self.radius else w * (self.radius / norm)

    def describe(self) -> str:
        """Human-readable name, used in certificates."""
        return f"L2 ball of radius {self.radius:g}"


Constraint = Unconstrained | L2Ball
