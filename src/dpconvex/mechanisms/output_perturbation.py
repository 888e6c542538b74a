"""Output-perturbation SGD of Chen, Lee, Kifer 2019 (arXiv:1808.07090): NSGD, RSGD-AR, OutPert-GD.

The trainer runs noiseless mini-batch gradient descent on ``f = ℓ + (λ/2)‖w‖²`` from w₀ = 0, records
the schedule it actually ran (batch sizes in processing order, the step size of every epoch,
the averaging interval) and releases ``w_T + N(0, σ² I)``.  The accountant
(:mod:`dpconvex.accounting.sensitivity`) replays that schedule to get the sensitivity vector
Δ[j] (Alg. 2) and certifies the release: worst case over batches (fixed order), or the
permutation mixture of Lemma 3 / Prop. 3 (RSGD-AR), whichever is smaller.

Variants (the ``variant`` argument):

==========  ================================  =======================  ==============
variant     batches                           step size of epoch s     averaging
==========  ================================  =======================  ==============
nsgd        fixed order, size ``batch_size``  η₀/s (Alg. 1)            none
rsgd_ar     permuted once (secret), cyclic    η₀/h, h reset (Alg. 3)   every τ epochs
outpert_gd  one batch of n (full GD)          constant η₀ (Prop. 2)    none
==========  ================================  =======================  ==============
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import sensitivity as accountant
from dpconvex.data.checks import make_rng
from dpconvex.data.in_memory import InMemoryData
from dpconvex.mechanisms._certify import certify
from dpconvex.mechanisms._geometry import require_euclidean_projection
from dpconvex.mechanisms._keywords import train_with_keywords
from dpconvex.mechanisms._step_size import require_step_size
from dpconvex.mechanisms.base import RandomState, TrainingResult
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Constraint, Unconstrained
from dpconvex.objectives.losses import Loss

__all__ = ["VARIANTS", "OutputPerturbationPlan", "plan", "train", "output_perturbation_sgd", "nsgd", "rsgd_ar",
           "outpert_gd"]

VARIANTS = ("nsgd", "rsgd_ar", "outpert_gd")
#: Mini-batch size of Chen et al. §5 ("fixed to 4,000 for RSGD-AR").
DEFAULT_BATCH_SIZE = 4000
#: Passes over the data for the mini-batch variants and RSGD-AR's averaging interval τ: a fixed
#: budget (not tuned on any test data); τ = 5 gives four restarts.
DEFAULT_EPOCHS, DEFAULT_AVERAGING_INTERVAL = 20, 5


def _run(data: InMemoryData, loss: Loss, l2: float, schedule: accountant.SGDSchedule,
         constraint: Constraint) -> NDArray[np.float64]:
    """Noiseless mini-batch GD following ``schedule`` exactly (rows already in batch order)."""
    X, y = data.X, data.y
    bounds = np.concatenate([[0], np.cumsum(schedule.batch_sizes)])
    m, tau = len(schedule.batch_sizes), schedule.averaging_interval
    w = np.zeros(loss.parameter_dimension(X.shape[1]))
    window = np.zeros_like(w)
    for epoch, eta in enumerate(schedule.epoch_step_sizes, start=1):
        for j in range(m):
            batch = slice(bounds[j], bounds[j + 1])
            w = constraint.project(w - eta * (loss.mean_gradient(w, X[batch], y[batch]) + l2 * w))
            window += w
        if tau is not None and epoch % tau == 0:
            # Alg. 3 line 13 / eq. (5): restart from the mean of the last mτ iterates.
            w, window = window / (m * tau), np.zeros_like(w)
    return w


@dataclass(frozen=True)
class OutputPerturbationPlan:
    """A resolved output-perturbation run: the variant and the calibrated event (its schedule and σ).

    Attributes
    ----------
    variant : {"nsgd", "rsgd_ar", "outpert_gd"}
        The variant trained.
    event : OutputPerturbationEvent
        The accounting event: the schedule and the calibrated σ.
    """

    variant: str
    event: accountant.OutputPerturbationEvent


def plan(problem: Problem, *, variant: str = "rsgd_ar", batch_size: int | str = "auto", epochs: int | str = "auto",
         step_size: float | str = "auto", averaging_interval: int | str = "auto") -> OutputPerturbationPlan:
    """Resolve the schedule of :func:`output_perturbation_sgd` and calibrate σ from public quantities only.

    Parameters
    ----------
    problem : Problem
        The problem record (only its shape and declarations are read).
    variant, batch_size, epochs, step_size, averaging_interval
        As in :func:`output_perturbation_sgd`.

    Returns
    -------
    OutputPerturbationPlan

    Raises
    ------
    ValueError
        Naming the option and its valid range, for an objective that is not strongly convex, or
        for a constraint whose projection is not Euclidean.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}.")
    require_euclidean_projection(problem.constraint, variant)  # Δ[j] contracts by ρ through non-expansive projections
    n, epsilon, delta, sigma = problem.n, problem.target.epsilon, problem.target.delta, problem.target.sigma
    constants = problem.constants(problem.resolved_constraint())
    smooth, strong = constants.smoothness, constants.strong_convexity
    if not strong > 0:
        raise ValueError(
            f"output perturbation needs a strongly convex objective: l2_regularization must be > 0 for the "
            f"{problem.loss.name} loss (strong convexity μ = {strong!r})."
        )

    if step_size == "auto":
        step_size = 2.0 / (smooth + strong)
    step_size = require_step_size(step_size, smooth)
    if variant == "outpert_gd":
        if batch_size != "auto":
            raise ValueError("OutPert-GD is full-batch: leave batch_size='auto' (it uses n).")
        batch_size = n
    elif batch_size == "auto":
        batch_size = min(DEFAULT_BATCH_SIZE, n)
    if not (isinstance(batch_size, (int, np.integer)) and 1 <= batch_size <= n):
        raise ValueError(f"batch_size must be 'auto' or an integer in [1, n] = [1, {n}]; got {batch_size!r}.")
    if epochs == "auto":
        rho = max(abs(1 - step_size * strong), abs(1 - step_size * smooth))
        if variant != "outpert_gd":
            epochs = DEFAULT_EPOCHS
        else:  # ρ^T ≤ 1/n; ρ = 0 (L = μ at η = 2/(L+μ)) converges in one epoch
            epochs = max(1, int(np.ceil(np.log(n) / -np.log(rho)))) if rho > 0 else 1
    if not (isinstance(epochs, (int, np.integer)) and epochs >= 1):
        raise ValueError(f"epochs must be 'auto' or an integer >= 1; got {epochs!r}.")
    tau = DEFAULT_AVERAGING_INTERVAL if averaging_interval == "auto" else averaging_interval
    if variant == "rsgd_ar" and not (isinstance(tau, (int, np.integer)) and tau >= 1):
        raise ValueError(f"averaging_interval must be 'auto' or an integer >= 1; got {averaging_interval!r}.")

    rule = {"nsgd": "inverse-epoch", "rsgd_ar": "restart", "outpert_gd": "constant"}[variant]
    schedule = accountant.make_schedule(n, int(batch_size), int(epochs), float(step_size), rule, int(tau))
    event = accountant.OutputPerturbationEvent(
        schedule=schedule, smoothness=smooth, strong_convexity=strong,
        gradient_difference=constants.gradient_sensitivity, sigma=1.0 if sigma is None else float(sigma),
        permuted=variant == "rsgd_ar",
    )
    if epsilon is not None:
        event = dataclasses.replace(event, sigma=accountant.calibrate_output_sigma(event, epsilon, delta))
    return OutputPerturbationPlan(variant=variant, event=event)


def train(problem: Problem, plan: OutputPerturbationPlan, random_state: RandomState = None) -> TrainingResult:
    """Run the planned schedule on the problem's data, release w_T + N(0, σ² I) and certify it.

    Parameters
    ----------
    problem : Problem
        The problem :func:`plan` resolved.
    plan : OutputPerturbationPlan
        Its plan.
    random_state : None, int or Generator
        As in :func:`output_perturbation_sgd`.

    Returns
    -------
    TrainingResult
        The noisy iterate and its certificate (:class:`~dpconvex.mechanisms.base.TrainingResult`).
    """
    event, variant, constraint = plan.event, plan.variant, problem.resolved_constraint()
    schedule = event.schedule
    privacy = accountant.account_output_perturbation(event, problem.target.delta)

    rng = make_rng(random_state)
    order = rng.permutation(problem.n) if variant == "rsgd_ar" else np.arange(problem.n)
    w = _run(problem.in_memory().permuted(order), problem.loss, problem.l2, schedule, constraint)
    released = w + event.sigma * rng.standard_normal(w.shape[0])

    sensitivities = event.sensitivities()
    certificate = certify(variant, privacy, problem, {
        "smoothness": event.smoothness, "strong_convexity": event.strong_convexity,
        "gradient_difference": event.gradient_difference,
        "batch_sizes": list(schedule.batch_sizes), "epoch_step_sizes": list(schedule.epoch_step_sizes),
        "averaging_interval": schedule.averaging_interval, "permuted": event.permuted,
        "sensitivity_max": float(sensitivities.max()), "sensitivity_min": float(sensitivities.min()),
        "constraint": constraint.describe(), "neighbouring": "replace-one",
        "released": "w_T + N(0, sigma^2 I), w_T the final iterate of the schedule"
                    + (" (after RSGD-AR's averaging restarts); the permutation kept secret" if event.permuted
                       else ""),
    }, sigma=event.sigma, iterations=len(schedule.epoch_step_sizes) * len(schedule.batch_sizes))
    return TrainingResult(coef=released, certificate=certificate)


def output_perturbation_sgd(X: NDArray, y: NDArray, *, loss: Loss, l2_regularization: float | str, delta: float,
                            epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
                            label_bound: float | None = None, constraint: Constraint | str = Unconstrained(),
                            strict: bool = False, variant: str = "rsgd_ar", batch_size: int | str = "auto",
                            epochs: int | str = "auto", step_size: float | str = "auto",
                            averaging_interval: int | str = "auto",
                            random_state: None | int | np.random.Generator = None) -> TrainingResult:
    """Train by mini-batch GD and release the last (or averaged) iterate plus Gaussian noise.

    :func:`plan`, then :func:`train`, on the validated data.

    Parameters
    ----------
    X, y, loss, l2_regularization, delta, epsilon, sigma, data_norm, label_bound, constraint, strict, random_state
        As in :func:`dpconvex.mechanisms.noisy_gd` (give exactly one of ``epsilon`` and ``sigma``;
        σ is the standard deviation of the output noise N(0, σ² I); the objective must be strongly
        convex, i.e. λ > 0 except for the quadratic loss).  The sensitivity replay needs a
        non-expansive (Euclidean) projection: an ``LpBall`` with p < 2 raises ``ValueError``.
    variant : {"nsgd", "rsgd_ar", "outpert_gd"}
        See the module docstring.
    batch_size : int or "auto"
        ``"auto"``: min(4000, n) (Chen et al. §5); OutPert-GD always uses n.  Must be ≤ n.
    epochs : int or "auto"
        T.  ``"auto"``: 20 for the mini-batch variants; for OutPert-GD the T with ρ^T ≤ 1/n.
    step_size : float or "auto"
        η₀.  ``"auto"``: 2/(L + μ), the step minimising ρ = max{|1 − ημ|, |1 − ηL|} (Prop. 2 proof).
        Must lie in (0, 2/L) so that the first epoch contracts.
    averaging_interval : int or "auto"
        τ of RSGD-AR (``"auto"``: 5); ignored by the other variants.

    Returns
    -------
    TrainingResult
        The noisy iterate and its certificate.
    """
    return train_with_keywords(variant, plan, train, locals())


def nsgd(X, y, **kwargs) -> TrainingResult:
    """Chen et al. Alg. 1 (fixed batch order, η₀/s); see :func:`output_perturbation_sgd`.

    Parameters
    ----------
    X, y : array_like
        Features and targets.
    **kwargs
        The keywords of :func:`output_perturbation_sgd` but ``variant``.

    Returns
    -------
    TrainingResult
    """
    return output_perturbation_sgd(X, y, variant="nsgd", **kwargs)


def rsgd_ar(X, y, **kwargs) -> TrainingResult:
    """Chen et al. Alg. 3 (permuted batches, averaging, restarts); see :func:`output_perturbation_sgd`.

    Parameters
    ----------
    X, y : array_like
        Features and targets.
    **kwargs
        The keywords of :func:`output_perturbation_sgd` but ``variant``.

    Returns
    -------
    TrainingResult
    """
    return output_perturbation_sgd(X, y, variant="rsgd_ar", **kwargs)


def outpert_gd(X, y, **kwargs) -> TrainingResult:
    """OutPert-GD (Chen et al. Prop. 2; Zhang et al. 2017): full-batch GD at η = 2/(L+μ).

    Parameters
    ----------
    X, y : array_like
        Features and targets.
    **kwargs
        The keywords of :func:`output_perturbation_sgd` but ``variant``.

    Returns
    -------
    TrainingResult
    """
    return output_perturbation_sgd(X, y, variant="outpert_gd", **kwargs)
