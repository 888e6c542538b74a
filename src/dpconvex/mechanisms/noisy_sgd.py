"""Projected noisy mini-batch SGD with a best-of certificate (composition or hidden-state GDP).

Update (the convention of every number in the certificate; :mod:`dpconvex.accounting.noisy_sgd`)::

    θ_{k+1} = Π_C(θ_k − η·[(1/b)(Σ_{i∈B_k} clip(∇ℓ(θ_k; z_i)) + σ·ξ_k) + λθ_k]),   ξ_k ~ N(0, I),

σ is the noise on the *sum* of per-example gradients, b the nominal batch size, θ₀ = 0, and only θ_T (or, with
``output="average"`` / ``"tail_average"``, the mean of θ_1..θ_T / of the last ⌈T/2⌉ iterates) is released.  Batches:
``"poisson"`` (every record independently with probability q = b/n at each step), ``"shuffled"`` (one secret random
partition into ⌈n/b⌉ batches, cycled every epoch) or ``"cyclic"`` (rows in their given order).

Derivation note (clipping keeps the hidden-state conditions).  For the library's losses a clipped per-example gradient
is again the gradient of a convex function with the same smoothness: margin and squared losses have ∇ℓ = φ'(wᵀx)·x, and
clipping to norm C replaces φ' by sign(φ')·min(|φ'|, C/‖x‖), still non-decreasing and no steeper; ½‖θ − x‖² becomes the
Huber function of ‖θ − x‖ (convex, 1-smooth, no longer strongly convex).  So with clipping the step objective is
λ-strongly convex and keeps the declared smoothness, and the sensitivity is min(2C, the declared one).  Poisson batches
need bounded per-example gradients (the composition bound models the differing record's gradient g, ‖g‖ ≤ S_g/2, against
−g): without clipping the declared Lipschitz constant L gives S_g = 2L.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from dpconvex.accounting import noisy_sgd as accountant
from dpconvex.accounting.best_of import bound_notes
from dpconvex.data.checks import make_rng
from dpconvex.mechanisms._batches import _batches
from dpconvex.mechanisms._certify import certify
from dpconvex.mechanisms._geometry import require_euclidean_projection
from dpconvex.mechanisms._keywords import plan_for_shape, train_with_keywords
from dpconvex.mechanisms._step_size import require_step_size
from dpconvex.mechanisms.base import RandomState, TrainingResult, comparator_norm_bound, resolve_constraint
from dpconvex.mechanisms.noisy_sgd_defaults import default_batch_size, default_epochs, default_step_size
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Constraint, L2Ball, Unconstrained
from dpconvex.objectives.losses import Loss, QuadraticDistanceLoss

__all__ = ["noisy_sgd", "plan", "train", "plan_noisy_sgd", "NoisySGDPlan", "default_batch_size", "default_step_size",
           "default_epochs", "OUTPUTS"]

UPDATE_RULE = ("theta <- Proj_C(theta - step_size*((sum of clipped per-example gradients + sigma*N(0, I))/batch_size "
               "+ l2*theta)), batches poisson/shuffled/cyclic")

#: What is released: the last iterate (every bound applies), the mean of all iterates (composition
#: only), or "auto": the mean when the best certificate is composition anyway (averaging is then
#: free, and it is the iterate of the utility bound behind :func:`default_epochs`), else the last.
OUTPUTS = ("auto", "last", "average", "tail_average")
#: The outputs that release a mean of iterates (certified by composition only).
AVERAGED_OUTPUTS = ("average", "tail_average")
#: What the certificate says was released, per resolved output.
RELEASED = {"last": "last iterate only", "average": "mean of all iterates",
            "tail_average": "mean of the last ceil(T/2) iterates"}


@dataclass(frozen=True)
class NoisySGDPlan:
    """Resolved hyperparameters of a run: the calibrated accounting event and how to train it.

    Attributes
    ----------
    event, constraint, clip_norm, strong_convexity, smoothness, lipschitz, bound, output, progress
        The calibrated event, the projection's set, the clip norm (None: none), the declared constants, the
        certifying bound (or ``"best"``), the resolved output and ``progress`` as in :func:`noisy_sgd`.
    """

    event: accountant.NoisySGDEvent
    constraint: Constraint
    clip_norm: float | None
    strong_convexity: float
    smoothness: float
    lipschitz: float
    bound: str
    output: str
    progress: bool | None = None


def _positive_integer(name: str, value, upper: int | None = None) -> int:
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 1
            and (upper is None or value <= upper)):
        limit = f"an integer in [1, {upper}]" if upper is not None else "an integer >= 1"
        raise ValueError(f"{name} must be 'auto' or {limit}; got {value!r}.")
    return int(value)


def plan(problem: Problem, *, batching: str = "poisson", batch_size: int | str = "auto", epochs: int | str = "auto",
         step_size: float | str = "auto", clip_norm: float | None = None, output: str = "auto", bound: str = "best",
         progress: bool | None = None) -> NoisySGDPlan:
    """Resolve the defaults of :func:`noisy_sgd` and calibrate σ from public quantities only (n, d, the declarations).

    Parameters
    ----------
    problem : Problem
        The problem record (only its shape and declarations are read); its ``constraint`` may be ``"auto"`` (the ball of
        radius √(2ℓ(0)/λ)).
    batching, batch_size, epochs, step_size, clip_norm, output, bound, progress
        As in :func:`noisy_sgd`.

    Returns
    -------
    NoisySGDPlan

    Raises
    ------
    ValueError
        Naming the option and its valid range, or the unmet conditions of a requested bound; a constraint whose
        projection is not Euclidean is refused (``_geometry.require_euclidean_projection``).
    """
    loss, n, dimension, l2 = problem.loss, problem.n, problem.dimension, problem.l2
    epsilon, delta, sigma = problem.target.epsilon, problem.target.delta, problem.target.sigma
    if batching not in accountant.BATCHINGS:
        raise ValueError(f"batching must be one of {accountant.BATCHINGS}; got {batching!r}.")
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}; got {output!r}.")
    if output in AVERAGED_OUTPUTS:
        # A mean of iterates is a function of every iterate it averages: only composition certifies it.
        if bound not in ("best", "composition"):
            raise ValueError(f"output={output!r} releases a function of many iterates, so only bound='composition' "
                             f"applies; got bound={bound!r}.")
        bound = "composition"
    if output == "auto" and bound != "best":
        output = "average" if bound == "composition" else "last"
    if clip_norm is not None and not (isinstance(clip_norm, numbers.Real) and math.isfinite(clip_norm)
                                      and clip_norm > 0):
        raise ValueError(f"clip_norm must be None or finite and > 0; got {clip_norm!r}.")
    constraint = resolve_constraint(problem, unregularised="unconstrained")  # documented: λ = 0 trains on R^d
    require_euclidean_projection(constraint, "noisy_sgd")
    constants = problem.constants(constraint)
    lipschitz, sensitivity = constants.lipschitz, constants.gradient_sensitivity
    strong_convexity = constants.strong_convexity
    if batching == "poisson":
        sensitivity = 2.0 * lipschitz  # bounded per-example gradients (module docstring)
    if clip_norm is not None:
        sensitivity = min(2.0 * clip_norm, sensitivity)
        strong_convexity = l2  # derivation note: clipping keeps convexity, not strong convexity
        lipschitz = min(clip_norm, lipschitz)
    quadratic = isinstance(loss, QuadraticDistanceLoss) and clip_norm is None and not constraint.is_constrained
    if not math.isfinite(sensitivity):
        raise ValueError(f"the {loss.name} loss has no finite Lipschitz constant on this domain, so Poisson batches "
                         "need per-example clipping: give clip_norm > 0 (or a bounded constraint).")

    batch_size = default_batch_size(n) if batch_size == "auto" else _positive_integer("batch_size", batch_size, n)
    strong_convexity = _every_batch_strong_convexity(strong_convexity, l2, n, batch_size, batching)
    quadratic = quadratic and strong_convexity == constants.strong_convexity  # its exact law needs equal batches
    if step_size == "auto":
        step_size = default_step_size(constants.smoothness)
    require_step_size(step_size, constants.smoothness)
    if epochs == "auto":
        if epsilon is None:
            raise ValueError("epochs='auto' needs a target epsilon; with sigma, give epochs as an integer >= 1.")
        comparator = comparator_norm_bound(problem.loss_at_zero(), l2, constraint.radius) if l2 > 0 \
            else constraint.radius
        if not math.isfinite(comparator):
            raise ValueError("epochs='auto' needs l2_regularization > 0 or a bounded constraint (a bound on ‖w*‖); "
                             "give epochs as an integer >= 1.")
        epochs = default_epochs(n, dimension, sensitivity, batch_size, float(step_size), epsilon, delta, comparator)
    epochs = _positive_integer("epochs", epochs)

    event = accountant.NoisySGDEvent(
        n=n, batch_size=batch_size, batching=batching, epochs=epochs, step_size=float(step_size),
        sigma=1.0 if sigma is None else float(sigma), sensitivity=float(sensitivity),
        strong_convexity=float(strong_convexity), smoothness=float(constants.smoothness),
        diameter=constraint.diameter if constraint.is_constrained else None,
        permutation_secret=batching == "shuffled", quadratic_loss=quadratic,
        last_iterate_only=output not in AVERAGED_OUTPUTS, clipping=_clipping(loss, clip_norm),
    )
    accountant.candidate_bounds(event, bound)  # refuses unknown, excluded or inapplicable bounds, with the reason
    if epsilon is not None:
        event = dataclasses.replace(event, sigma=accountant.calibrate_sigma(event, epsilon, delta, bound=bound))
    if output == "auto":
        output = "average" if accountant.account(event, delta, bound=bound).bound == "composition" else "last"
        bound = "composition" if output == "average" else bound
        event = dataclasses.replace(event, last_iterate_only=output == "last")
    return NoisySGDPlan(event=event, constraint=constraint, clip_norm=clip_norm, strong_convexity=strong_convexity,
                        smoothness=constants.smoothness, lipschitz=lipschitz, bound=bound, output=output,
                        progress=progress)


def plan_noisy_sgd(n: int, dimension: int, **keywords) -> NoisySGDPlan:
    """:func:`plan` for n records and a ``dimension``-vector parameter, without data.

    Parameters
    ----------
    n, dimension : int
        Records and the parameter vector's length.
    **keywords
        Those of :func:`noisy_sgd` but the data and the seed (its defaults apply; ``_keywords.plan_for_shape``).

    Returns
    -------
    NoisySGDPlan
    """
    return plan_for_shape(noisy_sgd, plan, n, dimension, keywords)


def _clipping(loss: Loss, clip_norm: float | None) -> str:
    """The event's ``clipping``: "glm" where the clipped step stays convex and equally smooth, else "other".

    GLM / margin losses φ(θᵀx; y): clipping caps φ' at ±C/‖x‖, a monotone, equally Lipschitz derivative
    (hidden-state-bounds notes §1.8).  ½‖θ − x‖²: the clipped gradient (θ − x)·min(1, C/‖θ − x‖) is the projection of θ
    − x on the C-ball, the gradient of the Huber function of ‖θ − x‖ (the Moreau envelope of C‖·‖): convex and 1-smooth.
    The strong convexity left is λ's (``plan_noisy_sgd`` sets it so).  The hidden-state bounds refuse clipping of any
    other loss.
    """
    if clip_norm is None:
        return "none"
    return "glm" if loss.clipping_keeps_convexity else "other"


def _every_batch_strong_convexity(strong_convexity: float, l2_regularization: float, n: int, batch_size: int,
                                  batching: str) -> float:
    """The strong convexity m that holds for EVERY step objective F_B = (1/b)Σ_{i∈B} ℓ_i + (λ/2)‖θ‖².

    Derivation note.  The update normalises by the nominal b, so F_B is λ + m_ℓ·|B|/b strongly convex (m_ℓ = the
    per-example loss's own strong convexity, e.g. 1 for ½‖θ − x‖²).  A full batch gives the declared λ + m_ℓ; the
    shorter last batch of a partition with b ∤ n gives λ + m_ℓ·(n − (l − 1)b)/b, and a Poisson batch may be empty (λ).
    The contraction c = max{|1 − ηm|, |1 − ηM|} of the hidden-state bounds must hold at every step, so the smallest
    value is the one to declare.
    """
    own = strong_convexity - l2_regularization
    if batching == "poisson":
        return l2_regularization
    shortest = n - (math.ceil(n / batch_size) - 1) * batch_size
    return l2_regularization + own * shortest / batch_size


def train(problem: Problem, plan: NoisySGDPlan, random_state: RandomState = None) -> TrainingResult:
    """Run the planned noisy SGD on the problem's data and certify the release.

    Parameters
    ----------
    problem, plan, random_state
        The problem :func:`plan` resolved, its plan, and ``random_state`` as in :func:`noisy_sgd`.

    Returns
    -------
    TrainingResult
    """
    event, delta = plan.event, problem.target.delta
    privacy = accountant.account(event, delta, bound=plan.bound)
    coef = _descend(problem, plan, make_rng(random_state))
    notes = bound_notes(privacy) if plan.bound == "best" else []  # the winner, and why each other bound lost
    notes += [f"bound {name!r} left out of the certificate: {reason}"
              for name, reason in accountant.EXCLUDED.items()
              if name == "ye-shokri" and event.batching == "shuffled"]
    certificate = certify("noisy_sgd", privacy, problem, {
        "lipschitz": plan.lipschitz, "gradient_sensitivity": event.sensitivity, "clip_norm": plan.clip_norm,
        "strong_convexity": event.strong_convexity, "smoothness": event.smoothness,
        "batching": event.batching, "batch_size": event.batch_size, "epochs": event.epochs,
        "step_size": event.step_size, "constraint": plan.constraint.describe(), "initialization": "fixed (zero)",
        "update_rule": UPDATE_RULE, "neighbouring": "replace-one", "released": RELEASED[plan.output],
    }, sigma=event.sigma, iterations=event.steps, composition_epsilon=accountant.composition_epsilon(event, delta),
        notes=tuple(notes))
    return TrainingResult(coef=coef, certificate=certificate)


def _descend(problem: Problem, plan: NoisySGDPlan, rng: np.random.Generator) -> NDArray[np.float64]:
    """The released iterate (or mean of iterates) of the planned run, batches and noise drawn from ``rng``."""
    event, constraint, l2 = plan.event, plan.constraint, problem.l2
    dimension, loss, clip = problem.dimension, problem.loss, plan.clip_norm
    theta = np.zeros(dimension)
    total = np.zeros(dimension)
    eta, b, noise = event.step_size, event.batch_size, event.sigma
    steps, report = event.steps, event.batches
    bar = tqdm(total=steps, desc="noisy_sgd", unit="step", disable=None if plan.progress is None else not plan.progress,
               delay=0.0 if plan.progress else 2.0, mininterval=0.5)
    order, batches = _batches(event, rng)
    data = problem.trainable_data() if order is None else problem.trainable_data().permuted(order)
    gradient_sum = data.gradient_sum
    # The projection, inlined for the L2 ball (‖w‖ as np.linalg.norm computes it: √(w·w)) and the identity.
    ball = type(constraint) is L2Ball
    radius = constraint.radius if ball else math.inf
    project = None if ball or type(constraint) is Unconstrained else constraint.project
    # Iterates from step ``first`` on enter the released mean (average: all; tail_average: the last half).
    first = {"average": 1, "tail_average": steps // 2 + 1}.get(plan.output, steps + 1)
    sqrt = math.sqrt
    # ξ_k drawn in blocks of steps (the same stream as one draw per step), ≈ 64k numbers a block.
    block_steps = max(1, min(steps, (1 << 16) // max(dimension, 1)))
    block, row = np.empty((0, dimension)), block_steps
    for step, batch in enumerate(batches, start=1):
        if row == block_steps:
            block = rng.standard_normal((min(block_steps, steps - step + 1), dimension))
            block *= noise
            row = 0
        gradient = gradient_sum(loss, theta, clip, batch) + block[row]
        row += 1
        # θ ← Π_C(θ − η(g/b + λθ)), operation by operation as written (same rounding).
        gradient /= b
        gradient += l2 * theta
        gradient *= eta
        theta = theta - gradient
        if ball:
            norm = sqrt(theta @ theta)
            if not norm <= radius:
                theta *= radius / norm
        elif project is not None:
            theta = project(theta)
        if step >= first:
            total += theta
        if step % report == 0:
            bar.update(report)
    bar.close()
    return total / (steps - first + 1) if first <= steps else theta


def noisy_sgd(X: NDArray, y: NDArray, *, loss: Loss, l2_regularization: float | str, delta: float,
              epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
              label_bound: float | None = None, constraint: Constraint | str = "auto", strict: bool = False,
              batching: str = "poisson", batch_size: int | str = "auto", epochs: int | str = "auto",
              step_size: float | str = "auto", clip_norm: float | None = None, output: str = "auto",
              bound: str = "best", progress: bool | None = None,
              random_state: None | int | np.random.Generator = None) -> TrainingResult:
    """Train by projected noisy mini-batch SGD and certify the release with the best valid bound.

    :func:`plan`, then :func:`train`, on the validated data.

    Parameters
    ----------
    X, y : array_like
        Features (n, d) and targets (n,); rows above ``data_norm`` (and targets above ``label_bound``) are clipped with
        a :class:`~dpconvex.exceptions.PrivacyLeakWarning` (``strict=True``: ``ValueError``).
    loss : Loss
        A smooth per-example loss with declared constants.
    l2_regularization : float
        λ ≥ 0; the hidden-state bound (Bok et al. NoisyCGD) needs λ > 0.
    delta : float
        δ of the certificate, in (0, 1).
    epsilon, sigma : float, optional
        Exactly one: a target ε (σ calibrated, never overshooting) or σ, the noise on the gradient sum.
    data_norm, label_bound : float
        Declared bounds on ‖x‖₂ and |y|.
    strict : bool
        Refuse rows (targets) beyond their bound with a ``ValueError`` instead of clipping them.
    batching : {"poisson", "shuffled", "cyclic"}, default="poisson"
        Poisson subsampling (rate b/n; certified by composition with amplification), one secret random partition cycled
        every epoch, or the rows' given order.  Shuffled and cyclic runs share their bounds (composition over epochs and
        Bok et al. Thm 4.5): no implemented bound relies on the permutation staying secret, so exposing it voids
        nothing.
    batch_size, epochs, step_size : int, int, float or "auto"
        ``"auto"``: :func:`default_batch_size`, :func:`default_epochs` (needs ``epsilon``), :func:`default_step_size`.
        The step must lie in (0, 2/M).
    constraint : Constraint or "auto", default="auto"
        The L2 ball of the projection; ``"auto"`` is the ball of radius √(2ℓ(0)/λ), which holds the regularised
        minimiser (unconstrained when λ = 0).  The bounds use a non-expansive (Euclidean) projection: an ``LpBall`` with
        p < 2 raises ``ValueError``.
    clip_norm : float, optional
        Clip every per-example gradient to this L2 norm (for losses without a finite Lipschitz constant on the domain);
        the sensitivity becomes min(2·clip_norm, declared).
    output : {"auto", "last", "average", "tail_average"}, default="auto"
        Release θ_T, the mean of θ_1..θ_T, or the mean of the last ⌈T/2⌉ iterates (suffix averaging; a mean of iterates
        is a function of each of them, so both means are certified by composition only); ``"auto"`` releases the mean
        when the best certificate is composition anyway (see :data:`OUTPUTS`), else θ_T.
    bound : str, default="best"
        ``"best"`` (smallest ε over the applicable bounds of :data:`dpconvex.accounting.noisy_sgd.BOUNDS`) or one name;
        names in :data:`~dpconvex.accounting.noisy_sgd.EXCLUDED` are refused with the reason.
    progress : bool or None, default=None
        Progress bar over the steps; ``None`` shows it on a terminal for runs longer than 2 s.
    random_state : None, int or Generator
        ``None`` (the only choice for a release) draws batches and noise from an OS-seeded generator.

    Returns
    -------
    TrainingResult
        ``coef``: the released iterate (or mean of iterates), the flat parameter vector; ``certificate``: its
        privacy certificate, by the best valid bound (or the one named by ``bound``).
    """
    return train_with_keywords("noisy_sgd", plan, train, locals())
