"""Mirror maps (potentials Φ) for online stochastic mirror descent (Arora, Marinov, Ullah, eq. 2).

One step of eq. (2) with a noisy (sub)gradient g::

    w̃ = ∇Φ*(∇Φ(w) − η g),      w⁺ = argmin_{u ∈ C} D_Φ(u ‖ w̃).

* :class:`EuclideanPotential` — Φ = ½‖w‖₂²: ∇Φ = ∇Φ* = identity and the Bregman projection is the
  Euclidean one, so eq. (2) is projected SGD (Algorithm 1 as printed).
* :class:`PNormPotential` — Φ = ½‖w‖_p², 1 < p ≤ 2 (Φ is (p − 1)-strongly convex w.r.t. ‖·‖_p):
  ∇Φ(w)_i = sign(w_i)|w_i|^{p−1}/‖w‖_p^{p−2}, and ∇Φ* is the same map with the dual exponent
  q = p/(p − 1) (Φ* = ½‖θ‖_q²).  Derivation note (Bregman projection onto the ℓ_p ball of radius R):
  D_Φ(u ‖ w̃) = ½‖u‖_p² − ⟨∇Φ(w̃), u⟩ + const and, by Hölder, ⟨∇Φ(w̃), u⟩ ≤ ‖∇Φ(w̃)‖_q‖u‖_p =
  ‖w̃‖_p‖u‖_p with equality for u ∝ w̃; so the minimiser is u = w̃·min(1, R/‖w̃‖_p), a rescaling
  (:meth:`dpconvex.objectives.constraints.LpBall.project`).

Privacy never depends on Φ: the noise is added to the gradient, whose L2 sensitivity is what the
accountant uses; Φ and the projection are post-processing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import gamma as gamma_function

from dpconvex.objectives.constraints import L2Ball, LpBall

__all__ = ["EuclideanPotential", "PNormPotential", "POTENTIALS"]


def _p_norm_map(w: NDArray[np.float64], p: float) -> NDArray[np.float64]:
    """∇(½‖·‖_p²)(w) = sign(w)|w|^{p−1}·‖w‖_p^{2−p} (0 at w = 0)."""
    norm = np.linalg.norm(w, ord=p)
    if norm == 0.0:
        return np.zeros_like(w)
    return np.sign(w) * np.abs(w) ** (p - 1.0) * norm ** (2.0 - p)


@dataclass(frozen=True)
class EuclideanPotential:
    """Φ(w) = ½‖w‖₂² (projected SGD); its constraint set is an :class:`~dpconvex.objectives.constraints.L2Ball`."""

    name = "euclidean"
    p = 2.0
    constraint_type = L2Ball

    def mirror(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇Φ(w) = w."""
        return w

    def inverse_mirror(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇Φ*(θ) = θ."""
        return theta

    def noise_norm_factor(self, dimension: int) -> float:
        """A bound on E‖Z‖₂ for Z ~ N(0, I_d): √d (Jensen), as in Arora et al. Thm 6."""
        return float(np.sqrt(dimension))


@dataclass(frozen=True)
class PNormPotential:
    """Φ(w) = ½‖w‖_p², 1 < p ≤ 2; its constraint set is an :class:`~dpconvex.objectives.constraints.LpBall` with the
    same p.

    Attributes
    ----------
    p : float
        The exponent, in (1, 2].
    """

    p: float
    name = "p-norm"
    constraint_type = LpBall

    def __post_init__(self) -> None:
        if not (1.0 < self.p <= 2.0):
            raise ValueError(f"p must lie in (1, 2]; got {self.p!r}.")

    @property
    def q(self) -> float:
        """The dual exponent p/(p − 1) ≥ 2."""
        return self.p / (self.p - 1.0)

    def mirror(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇Φ(w)."""
        return _p_norm_map(w, self.p)

    def inverse_mirror(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇Φ*(θ), Φ* = ½‖θ‖_q²."""
        return _p_norm_map(theta, self.q)

    def noise_norm_factor(self, dimension: int) -> float:
        """A bound on E‖Z‖_q for Z ~ N(0, I_d): (d·E|Z₁|^q)^{1/q} (Jensen), E|Z₁|^q = 2^{q/2}Γ((q+1)/2)/√π."""
        moment = 2.0 ** (self.q / 2.0) * gamma_function((self.q + 1.0) / 2.0) / np.sqrt(np.pi)
        return float((dimension * moment) ** (1.0 / self.q))


#: Potentials by name (factories; ``"p-norm"`` takes ``p``).
POTENTIALS = {"euclidean": EuclideanPotential, "p-norm": PNormPotential}
