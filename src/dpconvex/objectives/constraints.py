"""Constraint sets for projected training: the whole space, an L2 ball and an ℓ_p ball.

Every set declares its geometry in ``euclidean_projection``: whether ``project`` is the Euclidean
projection onto a closed convex set, hence 1-Lipschitz (non-expansive) in ℓ2.  The contraction and
sensitivity certificates of the noisy-GD, noisy-SGD, output-perturbation and PNSGD mechanisms use
that property (:func:`dpconvex.mechanisms._geometry.require_euclidean_projection` refuses the
others); the ℓ_p ball's rescaling is the Bregman projection that mirror descent needs, not the
Euclidean one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting._checks import check_positive

__all__ = ["Constraint", "Unconstrained", "L2Ball", "LpBall"]


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

    @property
    def euclidean_projection(self) -> bool:
        """True: the identity is the Euclidean projection onto R^d, so it is 1-Lipschitz in ℓ2."""
        return True

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
        check_positive(self.radius, "radius")

    @property
    def diameter(self) -> float:
        """``2 · radius``."""
        return 2.0 * self.radius

    @property
    def is_constrained(self) -> bool:
        """True: iterates are projected onto the ball."""
        return True

    @property
    def euclidean_projection(self) -> bool:
        """True: :meth:`project` is the Euclidean projection onto the ball, so it is 1-Lipschitz in ℓ2."""
        return True

    def project(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """Euclidean projection: rescale ``w`` onto the ball if it lies outside."""
        norm = float(np.linalg.norm(w))
        return w if norm <= self.radius else w * (self.radius / norm)

    def describe(self) -> str:
        """Human-readable name, used in certificates."""
        return f"L2 ball of radius {self.radius:g}"


@dataclass(frozen=True)
class LpBall:
    """C = {w : ‖w‖_p ≤ radius}, 1 < p ≤ 2, for mirror descent in ℓ_p geometry.

    Since ‖w‖₂ ≤ ‖w‖_p for p ≤ 2, C lies in the L2 ball of the same radius (its Euclidean radius is
    at most ``radius``); only the ℓ_p geometry is used by the p-norm potential
    (:mod:`dpconvex.objectives.mirror_maps`), whose Bregman projection onto C rescales.

    Parameters
    ----------
    radius : float
        Finite, > 0.
    p : float
        The norm, in (1, 2].
    """

    radius: float
    p: float

    def __post_init__(self) -> None:
        check_positive(self.radius, "radius")
        if not (1.0 < self.p <= 2.0):
            raise ValueError(f"p must lie in (1, 2]; got {self.p!r}.")

    @property
    def diameter(self) -> float:
        """``2 · radius``, in the ℓ_p norm."""
        return 2.0 * self.radius

    @property
    def is_constrained(self) -> bool:
        """True: iterates are projected onto the ball."""
        return True

    @property
    def euclidean_projection(self) -> bool:
        """Whether :meth:`project` is the Euclidean projection onto the ball (1-Lipschitz in ℓ2): only for p = 2.

        For p < 2 the radial rescaling is the Bregman projection of ½‖·‖_p², not the closest point
        in ℓ2, and it is not non-expansive in ℓ2 (two points can move further apart: see
        ``tests/test_constraints.py``).  At p = 2 the rescaling is the Euclidean projection.
        """
        return self.p == 2.0

    def project(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """Rescale ``w`` onto the ball if ‖w‖_p > radius (the Bregman projection of ½‖·‖_p²)."""
        norm = float(np.linalg.norm(w, ord=self.p))
        return w if norm <= self.radius else w * (self.radius / norm)

    def describe(self) -> str:
        """Human-readable name, used in certificates."""
        return f"l{self.p:g} ball of radius {self.radius:g}"


#: Any constraint set the mechanisms accept.
Constraint = Unconstrained | L2Ball | LpBall
