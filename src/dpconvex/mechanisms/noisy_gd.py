"""Projected noisy gradient descent (Chourasia, Ye, Shokri 2021, Alg. 1) with a best-of certificate.

Update (the convention of every number in the certificate)::

    θ_{k+1} = Π_C(θ_k − η (∇L_D(θ_k) + λ θ_k) + √(2η) · N(0, σ² I)),

with ``L_D`` the *mean* per-example loss, λ = ``l2_regularization``; only θ_K is released.
The intermediate iterates stay hidden: that is what the converging bounds
(Cor. 1, Cor. 2, exact quadratic, Bok et al. GDP) require.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_gd as accountant
from dpconvex.accounting.best_of import bound_notes
from dpconvex.accounting.langevin import theorem4_iterations
from dpconvex.data.checks import make_rng
from dpconvex.mechanisms._certify import certify
from dpconvex.mechanisms._geometry import require_euclidean_projection
from dpconvex.mechanisms._keywords import plan_for_shape, train_with_keywords
from dpconvex.mechanisms._step_size import require_step_size
from dpconvex.mechanisms.base import RandomState, TrainingResult, comparator_norm_bound
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Constraint, Unconstrained
from dpconvex.objectives.losses import Loss, QuadraticDistanceLoss

__all__ = ["NoisyGDPlan", "noisy_gd", "plan", "train", "plan_noisy_gd", "default_step_size", "default_iterations"]

UPDATE_RULE = "theta <- Proj_C(theta - step_size*(mean gradient + l2*theta) + sqrt(2*step_size)*sigma*N(0, I))"


def default_step_size(smoothness: float) -> float:
    """η = 1/(2β): the classical smooth-GD step, inside both η < 1/β (Cor. 1) and η < 2/β (GDP).

    Parameters
    ----------
    smoothness : float
        β, the smoothness of the regularised objective.

    Returns
    -------
    float
        η.
    """
    return 0.5 / smoothness


def default_iterations(
    n: int,
    dimension: int,
    sensitivity: float,
    strong_convexity: float,
    step_size: float,
    epsilon: float,
    delta: float,
    comparator_norm: float,
) -> int:
    """``iterations="auto"``: the smaller of Thm 4's K* and the convex early-stopping length.

    * Strongly convex regime: Chourasia et al. Thm 4's K* (:func:`theorem4_iterations`).
    * Convex regime (derivation note): noisy GD with per-step noise √(2η)σ is gradient descent
      with gradient noise of variance 2σ²/η per coordinate, so after run length T = ηK the standard
      projected-GD analysis (Bubeck 2015, arXiv:1405.4980, Thm 3.2 with noisy gradients) bounds
      the excess risk by ``B²/(2T) + dσ² + O(η)``, B = ‖θ₀ − w*‖.  While ηλK ≲ 1 the privacy of the
      run is that of composition, ``μ² = T S_g²/(2σ²n²)`` (Bok et al.'s μ at c → 1), so
      ``dσ² = d T S_g²/(2μ²n²)`` and the sum is minimised at ``T* = B n μ / (S_g √d)``, with μ the
      GDP parameter that meets (ε, δ) exactly (:func:`dpconvex.accounting.gdp.gdp_mu`).
      B is a data-independent bound on ‖w*‖ (see :func:`~dpconvex.mechanisms.base.comparator_norm_bound`).

    Running longer than the smaller of the two only adds noise (convex view) or is unnecessary
    (strongly convex view); the choice uses public quantities only.

    Parameters
    ----------
    n, dimension : int
        Records and the parameter vector's length d.
    sensitivity : float
        S_g, the gradient sensitivity.
    strong_convexity : float
        λ of the regularised objective.
    step_size : float
        η.
    epsilon, delta : float
        The target (ε, δ).
    comparator_norm : float
        B, a data-independent bound on ‖w*‖.

    Returns
    -------
    int
        K ≥ 1.
    """
    k_star = theorem4_iterations(n, dimension, strong_convexity, step_size, epsilon, delta)
    mu = gdp.gdp_mu(epsilon, delta)
    run_length = comparator_norm * n * mu / (sensitivity * np.sqrt(dimension))
    return int(max(1, min(k_star, np.ceil(run_length / step_size))))


def _initial_point(initialization: str, dimension: int, sigma: float, strong_convexity: float,
                   constraint: Constraint, rng: np.random.Generator) -> NDArray[np.float64]:
    if initialization == "stationary":
        # Chourasia et al. Cor. 1 / Lemma 5: θ₀ ~ Π_C(N(0, 2σ²/λ I)).
        return constraint.project(rng.normal(0.0, np.sqrt(2.0 * sigma**2 / strong_convexity), dimension))
    return np.zeros(dimension)


@dataclass(frozen=True)
class NoisyGDPlan:
    """A resolved noisy-GD run: the calibrated accounting event and the bound that certifies it.

    Attributes
    ----------
    event : NoisyGDEvent
        The accounting event (:class:`dpconvex.accounting.noisy_gd.NoisyGDEvent`), σ calibrated.
    bound : str
        ``"best"`` or the name of the bound that certifies the run.
    """

    event: accountant.NoisyGDEvent
    bound: str


def plan(problem: Problem, *, step_size: float | str = "auto", iterations: int | str = "auto", bound: str = "best",
         initialization: str = "auto") -> NoisyGDPlan:
    """Resolve the defaults of :func:`noisy_gd` and calibrate σ from public quantities only (n, d, the declarations).

    Parameters
    ----------
    problem : Problem
        The problem record (only its shape and declarations are read).
    step_size, iterations, bound, initialization
        As in :func:`noisy_gd`.

    Returns
    -------
    NoisyGDPlan
        The event carries the resolved step size, iterations, initialisation and σ.

    Raises
    ------
    ValueError
        Naming the option and its valid range, the unmet conditions of a named bound, or a
        constraint whose projection is not Euclidean (``_geometry.require_euclidean_projection``).
    """
    n, dimension = problem.n, problem.dimension
    epsilon, delta, sigma = problem.target.epsilon, problem.target.delta, problem.target.sigma
    require_euclidean_projection(problem.constraint, "noisy_gd")  # refuses "auto" too (noisy_gd has no ball rule)
    constraint = problem.resolved_constraint()
    constants = problem.constants(constraint)

    if step_size == "auto":
        step_size = default_step_size(constants.smoothness)
    step_size = require_step_size(step_size, constants.smoothness)
    if initialization == "auto":
        initialization = "fixed"
    if initialization == "stationary" and constants.strong_convexity <= 0:
        raise ValueError("initialization='stationary' needs l2_regularization > 0 (θ₀ ~ N(0, 2σ²/λ I)).")
    if iterations in ("auto", "theorem4"):
        if epsilon is None or not problem.l2 > 0:
            raise ValueError(
                f"iterations={iterations!r} needs a target epsilon and l2_regularization > 0; "
                "otherwise give iterations as an integer >= 1."
            )
        if iterations == "theorem4":
            iterations = theorem4_iterations(n, dimension, constants.strong_convexity, step_size, epsilon, delta)
        else:
            bound_b = comparator_norm_bound(problem.loss_at_zero(), problem.l2, constraint.radius)
            iterations = default_iterations(n, dimension, constants.gradient_sensitivity, constants.strong_convexity,
                                            step_size, epsilon, delta, bound_b)
    if not (isinstance(iterations, (int, np.integer)) and iterations >= 1):
        raise ValueError(f"iterations must be 'auto', 'theorem4' or an integer >= 1; got {iterations!r}.")

    event = accountant.NoisyGDEvent(
        n=n,
        sensitivity=constants.gradient_sensitivity,
        step_size=float(step_size),
        sigma=1.0 if sigma is None else float(sigma),
        iterations=int(iterations),
        strong_convexity=constants.strong_convexity,
        smoothness=constants.smoothness,
        initialization=initialization,
        constrained=constraint.is_constrained,
        diameter=constraint.diameter if constraint.is_constrained and np.isfinite(constraint.diameter) else None,
        quadratic_loss=isinstance(problem.loss, QuadraticDistanceLoss) and problem.l2 == 0,
    )
    if bound != "best":
        accountant.rdp_curve(event, bound, [2.0])  # raises ValueError naming the unmet conditions
    if epsilon is not None:
        event = dataclasses.replace(event, sigma=accountant.calibrate_sigma(event, epsilon, delta, bound=bound))
    return NoisyGDPlan(event=event, bound=bound)


def plan_noisy_gd(n: int, dimension: int, **keywords) -> accountant.NoisyGDEvent:
    """The event :func:`plan` calibrates for n records and a ``dimension``-vector parameter, without data.

    Parameters
    ----------
    n, dimension : int
        Records and the parameter vector's length.
    **keywords
        Those of :func:`noisy_gd` but the data and the seed (its defaults apply;
        ``_keywords.plan_for_shape``).

    Returns
    -------
    NoisyGDEvent
        The calibrated event.
    """
    return plan_for_shape(noisy_gd, plan, n, dimension, keywords).event


def train(problem: Problem, plan: NoisyGDPlan, random_state: RandomState = None) -> TrainingResult:
    """Run the planned noisy GD on the problem's data and certify the last iterate.

    Parameters
    ----------
    problem : Problem
        The problem :func:`plan` resolved.
    plan : NoisyGDPlan
        Its plan.
    random_state : None, int or Generator
        As in :func:`noisy_gd`.

    Returns
    -------
    TrainingResult
        The last iterate and its certificate (:class:`~dpconvex.mechanisms.base.TrainingResult`).
    """
    event, bound, constraint, loss = plan.event, plan.bound, problem.resolved_constraint(), problem.loss
    dimension, l2, delta = problem.dimension, problem.l2, problem.target.delta
    constants = problem.constants(constraint)
    privacy = accountant.account(event, delta, bound=bound)
    composition = accountant.account(event, delta, bound="composition").epsilon

    rng = make_rng(random_state)
    theta = _initial_point(event.initialization, dimension, event.sigma, constants.strong_convexity, constraint, rng)
    noise_scale = np.sqrt(2.0 * event.step_size) * event.sigma
    # The data's mean_gradient, not gradient_sum / n: in memory the quadratic loss rounds the two differently.
    mean_gradient = problem.trainable_data().mean_gradient
    for _ in range(event.iterations):
        gradient = mean_gradient(loss, theta) + l2 * theta
        theta = constraint.project(theta - event.step_size * gradient + noise_scale * rng.standard_normal(dimension))

    # the winner, and why each other bound lost or did not apply (Thm 2: never inferred)
    notes = bound_notes(privacy, omit=("theorem2",)) if bound == "best" else []
    certificate = certify("noisy_gd", privacy, problem, {
        "lipschitz": constants.lipschitz,
        "gradient_sensitivity": constants.gradient_sensitivity,
        "strong_convexity": constants.strong_convexity,
        "smoothness": constants.smoothness,
        "step_size": event.step_size,
        "constraint": constraint.describe(),
        "initialization": event.initialization,
        "update_rule": UPDATE_RULE,
        "neighbouring": "replace-one",
        "released": "last iterate only",
    }, sigma=event.sigma, iterations=event.iterations, composition_epsilon=composition, notes=tuple(notes))
    return TrainingResult(coef=theta, certificate=certificate)


def noisy_gd(X: NDArray, y: NDArray, *, loss: Loss, l2_regularization: float | str, delta: float,
             epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
             label_bound: float | None = None, constraint: Constraint | str = Unconstrained(), strict: bool = False,
             step_size: float | str = "auto", iterations: int | str = "auto", bound: str = "best",
             initialization: str = "auto", random_state: None | int | np.random.Generator = None) -> TrainingResult:
    """Train by noisy GD and certify the last iterate: :func:`plan`, then :func:`train`, on the validated data.

    Parameters
    ----------
    X, y : array_like
        Features (n, d) and targets (n,).  Rows with ‖x‖₂ > ``data_norm`` are clipped with a
        :class:`~dpconvex.exceptions.PrivacyLeakWarning` (``strict=True``: ``ValueError``); so
        are regression targets beyond ``label_bound``.  Classification targets must be ±1.
    loss : Loss
        Per-example loss with declared constants.
    l2_regularization : float
        λ ≥ 0 in f = mean loss + (λ/2)‖w‖²; the strongly convex bounds need λ > 0.
    delta : float
        δ of the certificate, in (0, 1).
    epsilon, sigma : float, optional
        Give exactly one: a target ε (σ is then calibrated, never overshooting) or the noise σ.
    data_norm, label_bound : float
        Declared bounds on ‖x‖₂ and |y| (``label_bound`` only for regression losses).
    strict : bool
        Refuse rows (targets) beyond their bound with a ``ValueError`` instead of clipping them.
    step_size : float or "auto"
        η; ``"auto"`` is :func:`default_step_size`.  A named ``bound`` whose step-size condition
        fails raises ``ValueError``.
    iterations : int, "auto" or "theorem4"
        K.  ``"theorem4"`` is Chourasia et al. Thm 4's K* at this step size; ``"auto"`` is
        :func:`default_iterations` (K* capped by the convex early-stopping optimum).  Both need
        ``epsilon`` and λ > 0.
    constraint : Unconstrained or L2Ball
        The set C of the projection, which must be the Euclidean one (non-expansive in ℓ2, as
        every bound uses): an ``LpBall`` with p < 2 raises ``ValueError``.
    bound : str
        ``"best"`` (minimum over every applicable bound) or a name from
        :data:`dpconvex.accounting.noisy_gd.BOUNDS`.
    initialization : {"auto", "fixed", "stationary"}
        ``"auto"`` and ``"fixed"`` start at θ₀ = 0.  ``"stationary"`` draws θ₀ ~ Π_C(N(0, 2σ²/λ I)),
        the start Cor. 1 requires; it is not the default because whenever Cor. 1 applies
        (η < 1/β) the GDP bound of Bok et al. is below it (at most 0.64×) at every order
        (see ``tests/test_accounting_noisy_gd.py``), while the wide random start costs accuracy.
    random_state : None, int or Generator
        ``None`` (default) draws noise from an OS-seeded generator — the only choice for a
        release.  A seed makes runs reproducible, for experiments and tests.

    Returns
    -------
    TrainingResult
        The last iterate and its certificate.
    """
    return train_with_keywords("noisy_gd", plan, train, locals())
