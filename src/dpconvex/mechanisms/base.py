"""What every mechanism shares: the result record, the shape of ``train``, the comparator bound and the one auto ball.

A mechanism is two functions (:mod:`dpconvex.mechanisms.registry` lists them): ``plan(problem, **options)``,
which reads only the problem's shape and declarations and returns a frozen plan record (the resolved
hyperparameters and the calibrated accounting event), and ``train(problem, plan, random_state)``
(:class:`Train`), which runs the plan on the data and returns a :class:`TrainingResult`.

The auto ball.  A mechanism that needs a bounded set, or that gains from one, accepts
``constraint="auto"``: the L2 ball of radius √(2ℓ(0)/λ) (:func:`auto_ball_radius`), which holds the
minimiser of the regularised objective, so the projection costs no accuracy.  :func:`resolve_constraint`
is the one statement of that rule; at λ = 0 there is no such ball and its answer is a ``ValueError``,
unless the caller can train without a bounded set and says so (``unregularised="unconstrained"``:
noisy SGD and ``method="auto"``, whose bounds hold on all of R^d).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Constraint, L2Ball, Unconstrained
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["RandomState", "TrainingResult", "Train", "comparator_norm_bound", "auto_ball_radius",
           "resolve_constraint", "UNREGULARISED"]

#: The seed of a run: ``None`` (an OS-seeded generator, the only choice for a release), an integer or a generator.
RandomState = None | int | np.random.Generator

#: What :func:`resolve_constraint` answers for ``constraint="auto"`` at λ = 0: ``"refuse"`` (the default, a
#: ``ValueError``: the ball √(2ℓ(0)/λ) does not exist) or ``"unconstrained"`` (train on R^d).
UNREGULARISED = ("refuse", "unconstrained")


@dataclass(frozen=True)
class TrainingResult:
    """Released parameters and their certificate.

    Attributes
    ----------
    coef : ndarray
        The released parameter vector.
    certificate : PrivacyCertificate
        The privacy certificate of the release.
    """

    coef: NDArray[np.float64]
    certificate: PrivacyCertificate


class Train(Protocol):
    """The shape of every mechanism's ``train``: run ``plan`` on the problem's data and certify the release.

    ``problem`` is the one the mechanism's ``plan`` resolved, ``plan`` its plan record, and
    ``random_state`` a :data:`RandomState`.
    """

    def __call__(self, problem: Problem, plan: Any, random_state: RandomState = None, /) -> TrainingResult:
        ...


def comparator_norm_bound(loss_at_zero: float, l2_regularization: float, radius: float) -> float:
    """B = min(radius, √(2ℓ(0)/λ)): f_λ(w*) ≤ f_λ(0) ≤ ℓ(0) and ℓ ≥ 0 give (λ/2)‖w*‖² ≤ ℓ(0).

    Parameters
    ----------
    loss_at_zero : float
        ℓ(0), the declared bound on the loss at w = 0.
    l2_regularization : float
        λ > 0.
    radius : float
        The radius of the constraint set (``inf`` when unconstrained).

    Returns
    -------
    float
        The bound B on the norm of the regularised minimiser.
    """
    return float(min(radius, np.sqrt(2.0 * loss_at_zero / l2_regularization)))


def auto_ball_radius(loss_at_zero: float, l2_regularization: float) -> float:
    """√(2ℓ(0)/λ), the radius of the auto ball: :func:`comparator_norm_bound` with no other bound (λ > 0).

    Parameters
    ----------
    loss_at_zero, l2_regularization : float
        ℓ(0) and λ > 0.

    Returns
    -------
    float
        The radius.
    """
    return comparator_norm_bound(loss_at_zero, l2_regularization, math.inf)


def resolve_constraint(problem: Problem, *, l2: float | None = None,
                       unregularised: Literal["refuse", "unconstrained"] = "refuse",
                       ball: Callable[[float], Constraint] = L2Ball) -> Constraint:
    """The constraint a run projects onto: the problem's own, or for ``"auto"`` the ball of radius √(2ℓ(0)/λ).

    Parameters
    ----------
    problem : Problem
        The problem record; ℓ(0) is its declared :meth:`~dpconvex.mechanisms.problem.Problem.loss_at_zero`,
        read only when the ball is built.
    l2 : float, optional
        λ of the ball (default: the problem's :attr:`~dpconvex.mechanisms.problem.Problem.l2`); ``method="auto"``
        passes the λ it probes with while its own λ is still ``"auto"``.
    unregularised : {"refuse", "unconstrained"}, default="refuse"
        The answer for ``"auto"`` at λ = 0, where the ball does not exist (:data:`UNREGULARISED`).
        ``"refuse"`` raises ``ValueError``: PNSGD and sco_noisy_sgd need a bounded set.
        ``"unconstrained"`` returns :class:`~dpconvex.objectives.constraints.Unconstrained`: noisy SGD and
        ``method="auto"``, whose bounds hold on R^d, keep training unprojected there (documented behaviour).
    ball : callable, default=L2Ball
        ``ball(radius)``, the set of that radius: sco_noisy_sgd's p-norm potential asks for an ℓ_p ball.

    Returns
    -------
    Constraint
        ``problem.constraint`` unless it is ``"auto"``; then ``ball(√(2ℓ(0)/λ))`` for λ > 0.

    Raises
    ------
    ValueError
        For ``"auto"`` at λ = 0 with ``unregularised="refuse"``, or an unknown ``unregularised``.
    """
    if unregularised not in UNREGULARISED:
        raise ValueError(f"unregularised must be one of {UNREGULARISED}; got {unregularised!r}.")
    if problem.constraint != "auto":
        return cast(Constraint, problem.constraint)
    l2 = problem.l2 if l2 is None else l2
    if l2 > 0:  # the ball of radius √(2ℓ(0)/λ) holds the regularised minimiser
        return ball(auto_ball_radius(problem.loss_at_zero(), l2))
    if unregularised == "unconstrained":
        return Unconstrained()
    raise ValueError("constraint='auto' needs l2_regularization > 0 (the ball of radius sqrt(2 loss(0)/l2) holds the "
                     "regularised minimiser); otherwise pass a bounded constraint, e.g. L2Ball(radius).")
