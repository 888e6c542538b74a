"""Every ``method`` the estimators and the command line accept, listed once: how it plans and trains, what it reads.

Each :class:`MechanismSpec` names the mechanism's ``plan(problem, **options)`` (pure: it reads only
the problem's shape and declarations) and ``train(problem, plan, random_state)``, its public
keyword trainer, the optimiser hyperparameters the estimators forward to it, and where it applies.
The tables :data:`dpconvex.mechanisms.METHODS`, :data:`~dpconvex.mechanisms.MECHANISMS` and
:data:`~dpconvex.mechanisms.METHOD_ADVICE`, and the estimators' option and domain rules, are views
of :data:`REGISTRY`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from dpconvex.mechanisms.auto import auto
from dpconvex.mechanisms.auto import plan as auto_plan
from dpconvex.mechanisms.auto import train as auto_train
from dpconvex.mechanisms.backends import METHOD_BACKENDS, NUMPY_ONLY
from dpconvex.mechanisms.base import Train, TrainingResult
from dpconvex.mechanisms.noisy_gd import noisy_gd
from dpconvex.mechanisms.noisy_gd import plan as noisy_gd_plan
from dpconvex.mechanisms.noisy_gd import train as noisy_gd_train
from dpconvex.mechanisms.noisy_sgd import noisy_sgd
from dpconvex.mechanisms.noisy_sgd import plan as noisy_sgd_plan
from dpconvex.mechanisms.noisy_sgd import train as noisy_sgd_train
from dpconvex.mechanisms.output_perturbation import nsgd, outpert_gd, rsgd_ar
from dpconvex.mechanisms.output_perturbation import plan as output_perturbation_plan
from dpconvex.mechanisms.output_perturbation import train as output_perturbation_train
from dpconvex.mechanisms.pnsgd import plan as pnsgd_plan
from dpconvex.mechanisms.pnsgd import pnsgd
from dpconvex.mechanisms.pnsgd import train as pnsgd_train
from dpconvex.mechanisms.sco_sgd import plan as sco_plan
from dpconvex.mechanisms.sco_sgd import sco_noisy_sgd
from dpconvex.mechanisms.sco_sgd import train as sco_train

__all__ = ["MechanismSpec", "REGISTRY"]


@dataclass(frozen=True)
class MechanismSpec:
    """One ``method``: its plan and train functions, its public trainer, its options and where it applies.

    Attributes
    ----------
    name : str
        The ``method`` name of the estimators and ``dpconvex train --method``.
    summary : str
        One line: what runs and what certifies it.
    function : callable
        The public keyword trainer ``function(X, y, *, loss=..., ...)``.
    plan : callable
        ``plan(problem, **options)``: the resolved, calibrated run, from public quantities only.
    train : callable
        ``train(problem, plan, random_state)`` → :class:`~dpconvex.mechanisms.base.TrainingResult`
        (:class:`~dpconvex.mechanisms.base.Train`).
    options : tuple of str
        The optimiser hyperparameters of the estimators it reads (``step_size``, ``iterations``,
        ``batch_size``, ``epochs``); setting any other one is an error.
    requires_smooth : bool
        Whether it refuses a loss without a finite smoothness constant.
    bounded_domain : bool
        Whether it chooses its own ball (``constraint="auto"``, radius √(2ℓ(0)/λ), which holds the
        minimiser) when the model is unconstrained: needed by pnsgd and sco_noisy_sgd, free for
        noisy_sgd and auto.
    backends : tuple of str
        The data backends its ``train`` reads: its entry of
        :data:`dpconvex.mechanisms.backends.METHOD_BACKENDS` (``"numpy"``, and ``"dask"`` for the methods
        that only need sums of per-example gradients over the full data), the table the trainers check
        their data against (``tests/test_registry.py`` holds the two equal).
    advice : str or None
        For the faithful paper reproductions that are not accurate trainers: one line that
        ``dpconvex train --method`` prints on stderr.
    """

    name: str
    summary: str
    function: Callable[..., TrainingResult]
    plan: Callable[..., Any]
    train: Train
    options: tuple[str, ...] = ()
    requires_smooth: bool = True
    bounded_domain: bool = False
    backends: tuple[str, ...] = NUMPY_ONLY
    advice: str | None = None


_OUTPUT_PERTURBATION: dict[str, Any] = dict(train=output_perturbation_train,
                                            options=("step_size", "batch_size", "epochs"))

#: Every method, in the order the estimators, the command line and the documentation list them.
#: Accuracies of the advice are the logistic task of docs/BENCHMARKS.md (UCI Adult, 5 test folds,
#: defaults), at ε = 0.01 … 1.
REGISTRY: dict[str, MechanismSpec] = {spec.name: spec for spec in (
    MechanismSpec("noisy_gd", "projected noisy GD, last iterate only, best of the hidden-state and composition bounds "
                  "(Chourasia, Ye, Shokri 2021; Bok et al.)", noisy_gd, noisy_gd_plan, noisy_gd_train,
                  options=("step_size", "iterations"), backends=METHOD_BACKENDS["noisy_gd"]),
    MechanismSpec("noisy_sgd", "projected noisy mini-batch SGD (Poisson, shuffled or cyclic batches), best of "
                  "composition and the hidden-state bounds", noisy_sgd, noisy_sgd_plan, noisy_sgd_train,
                  options=("step_size", "batch_size", "epochs"), bounded_domain=True,
                  backends=METHOD_BACKENDS["noisy_sgd"]),
    MechanismSpec("rsgd_ar", "output-perturbed SGD with permuted batches, averaging and restarts (Chen, Lee, Kifer "
                  "2019, Alg. 3)", rsgd_ar, partial(output_perturbation_plan, variant="rsgd_ar"),
                  **_OUTPUT_PERTURBATION),
    MechanismSpec("nsgd", "output-perturbed SGD in a fixed batch order, step eta_0/s (Chen, Lee, Kifer 2019, Alg. 1)",
                  nsgd, partial(output_perturbation_plan, variant="nsgd"), **_OUTPUT_PERTURBATION),
    MechanismSpec("outpert_gd", "output-perturbed full-batch GD (Chen, Lee, Kifer 2019, Prop. 2; Zhang et al. 2017)",
                  outpert_gd, partial(output_perturbation_plan, variant="outpert_gd"),
                  train=output_perturbation_train, options=("step_size", "epochs")),
    MechanismSpec("pnsgd", "one pass of projected noisy SGD with a per-record E_gamma certificate (Asoodeh, Diaz, "
                  "Calmon 2020)", pnsgd, pnsgd_plan, pnsgd_train, options=("step_size",), bounded_domain=True,
                  advice="pnsgd is a faithful reproduction of Asoodeh, Diaz, Calmon 2020 (per-record E_gamma "
                         "certificate for one pass of projected noisy SGD); on UCI Adult it scores at or below the "
                         "majority class (76.07 %) at every epsilon <= 1 (44.2-75.5 %, docs/BENCHMARKS.md) -- use "
                         "method='auto' for accuracy"),
    MechanismSpec("sco_noisy_sgd", "private SCO for non-smooth losses and l_p balls, single-use certificate (Arora, "
                  "Marinov, Ullah, Alg. 1)", sco_noisy_sgd, sco_plan, sco_train, options=("step_size",),
                  requires_smooth=False, bounded_domain=True,
                  advice="sco_noisy_sgd is a faithful reproduction of Arora, Marinov, Ullah's non-smooth private SCO "
                         "algorithm (the only trainer for hinge/absolute-error losses and l_p balls); on UCI Adult "
                         "(logistic) it scores below the majority class (76.07 %) at every epsilon <= 1 "
                         "(46.9-67.2 %, docs/BENCHMARKS.md) -- for a smooth loss use method='auto' for accuracy"),
    MechanismSpec("auto", "the default: noisy SGD configured by a stated utility bound from public quantities, or "
                  "sco_noisy_sgd for a non-smooth loss", auto, auto_plan, auto_train, requires_smooth=False,
                  bounded_domain=True, backends=METHOD_BACKENDS["auto"]),
)}
