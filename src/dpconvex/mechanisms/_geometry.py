"""Which mechanisms accept a constraint set whose projection is not the Euclidean one.

The certificates of noisy GD, noisy SGD, the output-perturbation trainers and PNSGD bound how far
two neighbouring runs drift apart through a projected gradient step, and they use that the
projection Π_C is non-expansive in ℓ2 (or that C has a finite ℓ2 diameter): Bok et al.'s and
Chourasia et al.'s contractive iterations need φ∘Π_C to be c-Lipschitz, Chen et al.'s sensitivity
vector multiplies by ρ at each projected step, and Asoodeh et al.'s contraction coefficient uses
diam(K).  The Euclidean projection onto a closed convex set is 1-Lipschitz in ℓ2; the rescaling
onto an ℓ_p ball (p < 2) is not (:class:`dpconvex.objectives.constraints.LpBall`), so those certificates would
understate ε.  ``sco_noisy_sgd`` is the exception: its single-use bound is one Gaussian mechanism at
the step that reads the changed record, and every later step (mirror map, Bregman projection) is
post-processing, so no property of the projection enters.
"""

from __future__ import annotations

from typing import cast

from dpconvex.objectives.constraints import Constraint

__all__ = ["BREGMAN_PROJECTION_MECHANISMS", "require_euclidean_projection"]

#: Mechanisms whose certificate holds for any projection, including a Bregman projection.
BREGMAN_PROJECTION_MECHANISMS = ("sco_noisy_sgd",)


def require_euclidean_projection(constraint: object, mechanism: str) -> None:
    """Raise ``ValueError`` unless ``constraint.project`` is the Euclidean projection onto a closed convex set.

    Parameters
    ----------
    constraint : Constraint or object
        The set the mechanism would project onto; it must declare ``euclidean_projection`` (anything else,
        ``"auto"`` included, is refused).
    mechanism : str
        The caller's name, quoted in the error.

    Raises
    ------
    ValueError
        If ``constraint.euclidean_projection`` is not True (or the object declares no geometry),
        naming the constraint, the reason and the mechanisms that accept it.
    """
    euclidean = getattr(constraint, "euclidean_projection", None)
    if euclidean is True:
        return
    if euclidean is None:
        raise ValueError(f"constraint must be a constraint set of dpconvex.objectives.constraints (declaring "
                         f"euclidean_projection); {mechanism} got {constraint!r}.")
    constraint = cast(Constraint, constraint)  # it declares euclidean_projection (not True), as a Constraint does
    raise ValueError(
        f"{mechanism} does not accept constraint={constraint.describe()}: its projection is not the Euclidean "
        f"projection, so it is not non-expansive in l2, and the {mechanism} certificate uses non-expansiveness of "
        f"the projection (or an l2 diameter). Use Unconstrained() or an L2Ball; the mechanisms that accept this "
        f"constraint are {', '.join(BREGMAN_PROJECTION_MECHANISMS)} (with a PNormPotential of the same p)."
    )
