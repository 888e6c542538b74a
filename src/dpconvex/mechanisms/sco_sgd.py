"""Private stochastic convex optimisation for non-smooth losses (Arora, Marinov, Ullah, Algorithm 1).

Online stochastic mirror descent (eq. 2) with the fresh-sample rule::

    sample y_t ~ Unif[n];  g_t = ∇f(w_t; z_{y_t}) + λw_t if y_t is fresh, else 0
    w̃ = ∇Φ*(∇Φ(w_t) − η(g_t + ξ_t)),  ξ_t ~ N(0, σ² I),  w_{t+1} = argmin_{u ∈ W} D_Φ(u ‖ w̃)

until half of the records have been seen (|F| ≥ n/2) or τ_max = 2n steps, whichever comes
first; the output is the average of the iterates w_t at which a fresh gradient was taken (those
are the points of the online regret bound, Thm 4), each taken before its step's update, so the
last fresh record's gradient never reaches it.  Only that average is released and certified
(:mod:`dpconvex.accounting.private_sco`, single use); the trajectory stays hidden.
Φ = ½‖·‖₂² (default) is projected SGD, as printed in Algorithm 1; Φ = ½‖·‖_p² (1 < p ≤ 2) with an
ℓ_p ball is the ℓ_p/ℓ_q variant (:mod:`dpconvex.objectives.mirror_maps`).  Subgradients suffice: f need only be
convex and L-Lipschitz.

When to use: this is a faithful reproduction of Arora, Marinov, Ullah's private SCO algorithm for
non-smooth losses, and the library's only trainer for non-smooth losses (hinge, absolute error:
``PrivateLinearSVC``, ``PrivateLADRegressor``) and for non-Euclidean ℓ_p balls (Φ = ½‖·‖_p²).  Do
not pick it for a smooth loss when accuracy matters: on UCI Adult (logistic, defaults,
docs/BENCHMARKS.md) it scores 46.9–67.2 % at ε = 0.01–1, below the majority class (76.07 %),
where the default ``method="auto"`` reaches 80.8–82.8 % at ε = 0.1–1.  Use ``method="auto"`` for
accuracy (``METHOD_ADVICE["sco_noisy_sgd"]`` in :mod:`dpconvex.mechanisms`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import cast

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import private_sco as accountant
from dpconvex.accounting.rounding import round_up
from dpconvex.data.checks import make_rng
from dpconvex.mechanisms._certify import certify
from dpconvex.mechanisms._keywords import train_with_keywords
from dpconvex.mechanisms._step_size import require_step_size
from dpconvex.mechanisms.base import RandomState, TrainingResult, resolve_constraint
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Constraint, L2Ball, LpBall
from dpconvex.objectives.losses import Loss, LossConstants
from dpconvex.objectives.mirror_maps import POTENTIALS, EuclideanPotential, PNormPotential

__all__ = ["SCOPlan", "sco_noisy_sgd", "plan", "train", "default_step_size"]

UPDATE_RULE = ("w <- Bregman-project(grad Phi*(grad Phi(w) - step_size*(g + xi))), g = subgradient of a fresh "
               "record (+ l2*w) or 0 for a seen one, xi ~ N(0, sigma^2 I); stop at n/2 distinct records or 2n steps; "
               "output = mean of the iterates where fresh gradients were taken")


def default_step_size(n: int, diameter: float, lipschitz: float, sigma: float, noise_norm_factor: float,
                      strong_convexity_of_potential: float = 1.0) -> float:
    """η = √(p − 1)·D/(√n (L + σ·E‖ξ/σ‖_*)): Arora et al. Thm 6's step, D/(√n(L + σ√d)) for Φ = ½‖·‖₂².

    For Φ = ½‖·‖_p², (p − 1)-strongly convex w.r.t. ‖·‖_p, the same OSMD regret bound (Bubeck and
    Cesa-Bianchi 2012, Thm 5.5, as used in Thm 4) is balanced by the extra factor √(p − 1), with the
    dual-norm bounds L_q ≤ L₂ (q ≥ 2) and E‖ξ‖_q ≤ σ·``noise_norm_factor``.

    Parameters
    ----------
    n : int
        The number of records.
    diameter : float
        D, the diameter of W.
    lipschitz : float
        L, the Lipschitz constant on W.
    sigma : float
        σ, the noise's standard deviation.
    noise_norm_factor : float
        The potential's bound on E‖ξ/σ‖_* (√d for the Euclidean one).
    strong_convexity_of_potential : float, default=1.0
        p − 1 for Φ = ½‖·‖_p² (1 for the Euclidean potential).

    Returns
    -------
    float
        η.
    """
    return math.sqrt(strong_convexity_of_potential) * diameter / (
        math.sqrt(n) * (lipschitz + sigma * noise_norm_factor))


def _potential_ball(potential: EuclideanPotential | PNormPotential, radius: float) -> Constraint:
    """The ball of ``radius`` whose Bregman projection ``potential`` implements (L2, or ℓ_p with the potential's p)."""
    return LpBall(radius, potential.p) if isinstance(potential, PNormPotential) else L2Ball(radius)


def _resolve_geometry(potential: str | EuclideanPotential | PNormPotential,
                      problem: Problem) -> tuple[EuclideanPotential | PNormPotential, Constraint]:
    if isinstance(potential, str):
        if potential not in POTENTIALS or potential == "p-norm":
            raise ValueError(f"potential must be 'euclidean' or a PNormPotential(p) instance; got {potential!r}.")
        potential = POTENTIALS[potential]()
    if not isinstance(potential, (EuclideanPotential, PNormPotential)):
        raise ValueError(f"potential must be 'euclidean' or a PNormPotential(p) instance; got {potential!r}.")
    # "auto": the ball of radius √(2ℓ(0)/λ) in the potential's geometry; refused at λ = 0 (W must be bounded)
    constraint = resolve_constraint(problem, ball=partial(_potential_ball, potential))
    if not isinstance(constraint, potential.constraint_type) or getattr(constraint, "p", 2.0) != potential.p:
        raise ValueError(
            f"constraint must be 'auto' or a bounded set matching the potential ({potential.constraint_type.__name__}"
            f" with p = {potential.p:g}, whose Bregman projection is implemented); got {constraint!r}."
        )
    return potential, constraint


@dataclass(frozen=True)
class SCOPlan:
    """A resolved run of Algorithm 1: the event (σ, n, sensitivity), the set W, the mirror map, the step size
    and the loss's constants on W.

    Attributes
    ----------
    event : SCOEvent
        The accounting event (σ, n, sensitivity).
    constraint : Constraint
        The bounded set W.
    potential : EuclideanPotential or PNormPotential
        The mirror map Φ.
    step_size : float
        η.
    constants : LossConstants
        The loss's constants on W.
    """

    event: accountant.SCOEvent
    constraint: Constraint
    potential: EuclideanPotential | PNormPotential
    step_size: float
    constants: LossConstants


def plan(problem: Problem, *, step_size: float | str = "auto",
         potential: str | EuclideanPotential | PNormPotential = "euclidean") -> SCOPlan:
    """Resolve the set, the mirror map and the step of :func:`sco_noisy_sgd`, and calibrate σ, from public quantities.

    Parameters
    ----------
    problem : Problem
        The problem record (only its shape and declarations are read); its ``constraint`` may be
        ``"auto"`` (the ball of radius √(2ℓ(0)/λ)).
    step_size, potential
        As in :func:`sco_noisy_sgd`.

    Returns
    -------
    SCOPlan

    Raises
    ------
    ValueError
        For n < 2, a target ε with n = 2, a constraint that does not match the potential, or a
        bad step size.
    """
    n, dimension, target = problem.n, problem.dimension, problem.target
    if n < 2:
        raise ValueError(f"sco_noisy_sgd needs n >= 2 records; got {n}.")
    potential, constraint = _resolve_geometry(potential, problem)
    # ‖w‖₂ ≤ ‖w‖_p for p ≤ 2: the L2 ball of the same radius holds W, so its constants are valid on W.
    constants = problem.constants(L2Ball(constraint.radius))
    sigma = target.sigma
    if target.epsilon is not None:
        sigma = accountant.calibrate_sco_sigma(n, constants.gradient_sensitivity, float(target.epsilon),
                                               float(target.delta))
    sigma = cast(float, sigma)  # calibrated, or the target's sigma (PrivacyTarget holds exactly one of the two)
    event = accountant.SCOEvent(n=n, sensitivity=constants.gradient_sensitivity, sigma=float(sigma), steps=2 * n)
    if step_size == "auto":
        step_size = default_step_size(n, constraint.diameter, constants.lipschitz_regularized, event.sigma,
                                      potential.noise_norm_factor(dimension), potential.p - 1.0)
    step_size = require_step_size(step_size)
    return SCOPlan(event=event, constraint=constraint, potential=potential, step_size=step_size, constants=constants)


def train(problem: Problem, plan: SCOPlan, random_state: RandomState = None) -> TrainingResult:
    """Run Algorithm 1 as planned on the problem's data and certify the averaged output.

    Parameters
    ----------
    problem : Problem
        The problem :func:`plan` resolved.
    plan : SCOPlan
        Its plan.
    random_state : None, int or Generator
        As in :func:`sco_noisy_sgd`.

    Returns
    -------
    TrainingResult
        The averaged output and its certificate (:class:`~dpconvex.mechanisms.base.TrainingResult`).
    """
    event, constraint, potential, step_size = plan.event, plan.constraint, plan.potential, plan.step_size
    n, dimension, l2, loss, delta = problem.n, problem.dimension, problem.l2, problem.loss, problem.target.delta
    data, max_steps = problem.in_memory(), event.steps
    X, y = data.X, data.y
    privacy = accountant.account_sco(event, delta)

    rng = make_rng(random_state)
    w = np.zeros(dimension)
    seen = np.zeros(n, dtype=bool)
    fresh_sum, fresh_count, steps = np.zeros(dimension), 0, 0
    while fresh_count < n / 2 and steps < max_steps:
        index = int(rng.integers(n))
        noise = rng.normal(0.0, event.sigma, dimension)
        if seen[index]:
            gradient = np.zeros(dimension)
        else:
            seen[index] = True
            fresh_sum += w
            fresh_count += 1
            gradient = loss.per_example_gradients(w, X[index:index + 1], y[index:index + 1])[0] + l2 * w
        w = constraint.project(potential.inverse_mirror(potential.mirror(w) - step_size * (gradient + noise)))
        steps += 1
    notes = ["certified by the single-use bound for the released average only (the last fresh record's "
             "gradient never reaches it); the paper's Lemma 2 + Thm 5 and per-step subsampled-Gaussian "
             "composition are smaller but rest on an unproven step (hidden set of seen records), so they are only "
             "reported, by `dpconvex account sco`"]
    if fresh_count < n / 2:
        notes.append(f"stopped at tau_max = 2n = {max_steps} steps with {fresh_count} fresh records "
                     "(probability <= 2 exp(-n/16), Arora et al. Thm 2)")

    certificate = certify("sco_noisy_sgd", privacy, problem, {
        "lipschitz": plan.constants.lipschitz, "gradient_sensitivity": event.sensitivity,
        "step_size": float(step_size), "constraint": constraint.describe(), "diameter": constraint.diameter,
        "potential": potential.name if potential.p == 2.0 else f"{potential.name} (p = {potential.p:g})",
        "max_steps": max_steps,
        # τ depends only on the sampled indices, never on the data: reporting it costs no privacy.
        "steps_run": steps, "fresh_steps": fresh_count,
        "sigma_convention": "xi ~ N(0, sigma^2 I) added to the (sub)gradient",
        "update_rule": UPDATE_RULE, "neighbouring": "replace-one",
        "released": "average of the fresh-step iterates (each taken before its step's update); the trajectory "
                    "stays hidden",
    }, sigma=event.sigma, iterations=max_steps,
        # Every iterate published: the single-use bound must then count the last fresh record too.
        composition_epsilon=round_up(accountant.single_use_epsilon(event, delta, released="trajectory")),
        notes=tuple(notes))
    return TrainingResult(coef=fresh_sum / fresh_count, certificate=certificate)


def sco_noisy_sgd(X: NDArray, y: NDArray, *, loss: Loss, l2_regularization: float | str = 0.0, delta: float,
                  epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
                  label_bound: float | None = None, constraint: Constraint | str = "auto", strict: bool = False,
                  step_size: float | str = "auto", potential: str | EuclideanPotential | PNormPotential = "euclidean",
                  random_state: None | int | np.random.Generator = None) -> TrainingResult:
    """Train by Algorithm 1 of Arora, Marinov, Ullah and certify the averaged output.

    :func:`plan`, then :func:`train`, on the validated data.

    When to use: a faithful reproduction of Arora, Marinov, Ullah's non-smooth private SCO algorithm
    — the only trainer for non-smooth losses (hinge, absolute error) and non-Euclidean ℓ_p balls.
    Not for accuracy with a smooth loss on real tabular data: on UCI Adult (logistic,
    docs/BENCHMARKS.md) it scores 46.9–67.2 % at ε ≤ 1, below the majority class (76.07 %); use
    ``method="auto"`` (80.8–82.8 % at ε = 0.1–1) instead.

    Parameters
    ----------
    X, y : array_like
        Features (n ≥ 2, d) and targets.  Rows above ``data_norm`` are clipped with a
        :class:`~dpconvex.exceptions.PrivacyLeakWarning` (``strict=True``: ``ValueError``).
    loss : Loss
        Convex, L-Lipschitz (smooth or not): hinge, absolute error, logistic, huberised hinge, …
    delta : float
        δ of the certificate, in (0, 1).
    epsilon, sigma : float, optional
        Give exactly one: a target ε (σ is then the smallest the single-use certificate allows, never
        overshooting) or σ, the standard deviation of ξ.  With n = 2 the output is w_0 = 0 whatever
        the data (ε = δ = 0 for every σ), so a target ε is refused with a ``ValueError``: pass σ.
    l2_regularization : float
        λ ≥ 0 added to f (it cancels in the neighbours' gradient difference, so privacy is
        unchanged; it only adds λR to the Lipschitz constant the step size uses).
    data_norm, label_bound : float
        Declared bounds on ‖x‖₂ (and |y|, for ``constraint="auto"`` with the absolute error).
    strict : bool
        Refuse rows (targets) beyond their bound with a ``ValueError`` instead of clipping them.
    step_size : float or "auto"
        η > 0; ``"auto"`` is :func:`default_step_size` (Thm 6) at the run's σ.
    constraint : L2Ball, LpBall or "auto"
        The bounded set W (an :class:`~dpconvex.objectives.constraints.L2Ball` for the Euclidean potential,
        an :class:`~dpconvex.objectives.constraints.LpBall` with the potential's p for the p-norm one).
        ``"auto"``: the ball of radius √(2ℓ(0)/λ), which holds the regularised minimiser (λ > 0).
    potential : "euclidean" or PNormPotential
        The mirror map Φ.
    random_state : None, int or Generator
        ``None`` (default): OS-seeded noise and sampling — the only choice for a release.

    Returns
    -------
    TrainingResult
        The averaged output and its certificate.
    """
    return train_with_keywords("sco_noisy_sgd", plan, train, locals(), require_smooth=False)
