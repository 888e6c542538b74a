"""The 100 golden configurations: every public trainer, estimator, private selection and accountant, seeded.

Each :class:`GoldenConfiguration` has a stable id (``family/name/variant``) and a ``run`` that
re-computes its release from a fixed ``random_state`` on the small data sets of :mod:`.golden_data`.
This module holds the trainers of :mod:`dpconvex.mechanisms` (and the private mean of regression
intercepts); :mod:`.golden_estimators` the scikit-learn estimators and the private selection
(``…CV``) estimators; :mod:`.golden_accounting` the accountants' public functions.
:func:`golden_configurations` lists them all, in the order of the golden file.

Releases depend on ``random_state`` only: every trainer draws its noise (and batches, stopping time,
validation split, number of selection runs) from ``dpconvex.data.checks.make_rng(random_state)``,
which seeds a generator from the operating system only for ``random_state=None``, and no
configuration here passes ``None``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from dpconvex import mechanisms
from dpconvex.mechanisms.private_mean import private_mean
from dpconvex.objectives.constraints import L2Ball, LpBall
from dpconvex.objectives.losses import (
    AbsoluteErrorLoss,
    HingeLoss,
    HuberizedHingeLoss,
    LogisticLoss,
    QuadraticDistanceLoss,
    SquaredLoss,
)
from dpconvex.objectives.mirror_maps import PNormPotential
from dpconvex.objectives.multiclass import MultinomialLogisticLoss
from golden.golden_accounting import accounting_configurations
from golden.golden_data import (
    DELTA,
    binary_data,
    multiclass_data,
    regression_data,
    scalar_data,
)
from golden.golden_estimators import estimator_configurations, selection_configurations
from golden.golden_records import GoldenConfiguration

__all__ = ["CONFIGURATION_COUNT", "golden_configuration_ids", "golden_configurations"]

#: The number of configurations the golden file holds.
CONFIGURATION_COUNT = 100


def _trainer(trainer: Callable[..., Any], data: Callable[[], tuple], seed: int,
             **keywords: Any) -> Callable[[], dict[str, Any]]:
    """The run of ``trainer(X, y, random_state=seed, **keywords)`` on ``data()``: its ``coef`` and certificate.

    The keywords are deep-copied at every run (losses and constraints are fresh objects each time).
    """

    def run() -> dict[str, Any]:
        X, y = data()
        result = trainer(X, y, random_state=seed, **copy.deepcopy(keywords))
        return {"coef": result.coef, "certificate": result.certificate}

    return run


def _private_mean(bound: float, epsilon: float, seed: int) -> Callable[[], dict[str, Any]]:
    """The run of :func:`~dpconvex.mechanisms.private_mean.private_mean` on the regression targets within ``bound``.

    The targets are clipped here, as the regressors clip them before the private mean reads them.
    """

    def run() -> dict[str, Any]:
        _, y = regression_data()
        clipped = y.clip(-bound, bound)
        return {"private_mean": private_mean(clipped, bound, epsilon, random_state=seed)}

    return run


#: The keywords of a logistic-loss run and of a squared-loss (regression) run with targets bounded by 1.
_LOGISTIC = {"loss": LogisticLoss(), "delta": DELTA}
_REGRESSION = {"loss": SquaredLoss(), "label_bound": 1.0, "delta": DELTA}


def _trainer_configurations() -> list[GoldenConfiguration]:
    """The configurations of the public trainers of :mod:`dpconvex.mechanisms` and of the private mean."""
    binary, multiclass, regression = binary_data, multiclass_data, regression_data
    noisy_gd, noisy_sgd, pnsgd = mechanisms.noisy_gd, mechanisms.noisy_sgd, mechanisms.pnsgd
    sco, auto = mechanisms.sco_noisy_sgd, mechanisms.auto
    table = {
        # noisy_gd: bounds, iteration rules, initialisations, losses and constraints
        "noisy_gd/logistic-eps1": _trainer(noisy_gd, binary, 101, **_LOGISTIC, l2_regularization=0.01, epsilon=1.0),
        "noisy_gd/logistic-eps0.3-bound-gdp": _trainer(noisy_gd, binary, 102, **_LOGISTIC, l2_regularization=0.05,
                                                       epsilon=0.3, bound="gdp"),
        "noisy_gd/huber-theorem4": _trainer(noisy_gd, binary, 103, loss=HuberizedHingeLoss(0.5), delta=DELTA,
                                            l2_regularization=0.01, epsilon=0.5, iterations="theorem4"),
        "noisy_gd/squared-l2ball": _trainer(noisy_gd, regression, 104, **_REGRESSION, l2_regularization=0.05,
                                            epsilon=1.0, constraint=L2Ball(2.0)),
        "noisy_gd/logistic-sigma-iterations50": _trainer(noisy_gd, binary, 105, **_LOGISTIC, l2_regularization=0.01,
                                                         sigma=2.0, iterations=50, step_size=0.5),
        "noisy_gd/logistic-stationary-start": _trainer(noisy_gd, binary, 106, **_LOGISTIC, l2_regularization=0.1,
                                                       epsilon=2.0, initialization="stationary"),
        "noisy_gd/quadratic-mean-l2zero": _trainer(noisy_gd, binary, 107, loss=QuadraticDistanceLoss(), delta=DELTA,
                                                   l2_regularization=0.0, epsilon=1.0, iterations=30),
        "noisy_gd/multinomial-3-classes": _trainer(noisy_gd, multiclass, 108, loss=MultinomialLogisticLoss(3),
                                                   delta=DELTA, l2_regularization=0.01, epsilon=1.0),
        "noisy_gd/logistic-l2ball-shifted-interpolation": _trainer(
            noisy_gd, binary, 109, **_LOGISTIC, l2_regularization=0.01, epsilon=1.0, constraint=L2Ball(1.5),
            bound="shifted-interpolation"),
        # noisy_sgd: batchings, batch sizes, outputs, clipping, σ given
        "noisy_sgd/logistic-poisson-defaults": _trainer(noisy_sgd, binary, 201, **_LOGISTIC, l2_regularization=0.01,
                                                        epsilon=1.0),
        "noisy_sgd/logistic-shuffled-batch32-epochs3": _trainer(noisy_sgd, binary, 202, **_LOGISTIC,
                                                                l2_regularization=0.01, epsilon=1.0,
                                                                batching="shuffled", batch_size=32, epochs=3),
        "noisy_sgd/logistic-cyclic-batch40-epochs2": _trainer(noisy_sgd, binary, 203, **_LOGISTIC,
                                                              l2_regularization=0.01, epsilon=0.5, batching="cyclic",
                                                              batch_size=40, epochs=2),
        "noisy_sgd/squared-clip0.5": _trainer(noisy_sgd, regression, 204, **_REGRESSION, l2_regularization=0.05,
                                              epsilon=1.0, clip_norm=0.5),
        "noisy_sgd/logistic-output-average": _trainer(noisy_sgd, binary, 205, **_LOGISTIC, l2_regularization=0.01,
                                                      epsilon=2.0, output="average"),
        "noisy_sgd/logistic-output-tail-average": _trainer(noisy_sgd, binary, 206, **_LOGISTIC,
                                                           l2_regularization=0.01, epsilon=2.0,
                                                           output="tail_average"),
        "noisy_sgd/logistic-sigma-batch20-epochs2": _trainer(noisy_sgd, binary, 207, **_LOGISTIC,
                                                             l2_regularization=0.01, sigma=1.5, batch_size=20,
                                                             epochs=2),
        "noisy_sgd/multinomial-poisson": _trainer(noisy_sgd, multiclass, 208, loss=MultinomialLogisticLoss(3),
                                                  delta=DELTA, l2_regularization=0.01, epsilon=1.0),
        "noisy_sgd/huber-shuffled-output-last": _trainer(noisy_sgd, binary, 209, loss=HuberizedHingeLoss(0.5),
                                                         delta=DELTA, l2_regularization=0.02, epsilon=1.0,
                                                         batching="shuffled", batch_size=48, epochs=2,
                                                         output="last"),
        # output perturbation (Chen, Lee, Kifer 2019): the three variants and the generic trainer
        "rsgd_ar/logistic-defaults": _trainer(mechanisms.rsgd_ar, binary, 301, **_LOGISTIC, l2_regularization=0.01,
                                              epsilon=1.0),
        "rsgd_ar/logistic-batch50-epochs2": _trainer(mechanisms.rsgd_ar, binary, 302, **_LOGISTIC,
                                                     l2_regularization=0.01, epsilon=0.5, batch_size=50, epochs=2),
        "rsgd_ar/logistic-sigma": _trainer(mechanisms.rsgd_ar, binary, 303, **_LOGISTIC, l2_regularization=0.01,
                                           sigma=0.1, epochs=2),
        "nsgd/logistic-defaults": _trainer(mechanisms.nsgd, binary, 304, **_LOGISTIC, l2_regularization=0.01,
                                           epsilon=1.0),
        "nsgd/huber-batch40-epochs3": _trainer(mechanisms.nsgd, binary, 305, loss=HuberizedHingeLoss(0.5),
                                               delta=DELTA, l2_regularization=0.01, epsilon=1.0, batch_size=40,
                                               epochs=3),
        "outpert_gd/logistic-epochs5": _trainer(mechanisms.outpert_gd, binary, 306, **_LOGISTIC,
                                                l2_regularization=0.01, epsilon=1.0, epochs=5),
        "outpert_gd/squared-l2ball": _trainer(mechanisms.outpert_gd, regression, 307, **_REGRESSION,
                                              l2_regularization=0.05, epsilon=1.0, constraint=L2Ball(2.0)),
        "output_perturbation_sgd/rsgd_ar-averaging2": _trainer(
            mechanisms.output_perturbation_sgd, binary, 308, **_LOGISTIC, l2_regularization=0.01, epsilon=1.0,
            variant="rsgd_ar", batch_size=30, epochs=4, averaging_interval=2),
        # pnsgd: noise families, random stopping, σ given, step size given
        "pnsgd/logistic-gaussian": _trainer(pnsgd, binary, 401, **_LOGISTIC, l2_regularization=0.05, epsilon=1.0),
        "pnsgd/logistic-random-stop": _trainer(pnsgd, binary, 402, **_LOGISTIC, l2_regularization=0.05, epsilon=1.0,
                                               random_stop=True),
        "pnsgd/logistic-laplace-d1": _trainer(pnsgd, scalar_data, 403, **_LOGISTIC, l2_regularization=0.05,
                                              epsilon=1.0, noise="laplace"),
        "pnsgd/logistic-sigma-l2ball": _trainer(pnsgd, binary, 404, **_LOGISTIC, l2_regularization=0.05, sigma=1.0,
                                                constraint=L2Ball(1.0)),
        "pnsgd/huber-step0.1": _trainer(pnsgd, binary, 405, loss=HuberizedHingeLoss(0.5), delta=DELTA,
                                        l2_regularization=0.05, epsilon=2.0, step_size=0.1),
        # sco_noisy_sgd: non-smooth losses, l_p geometry, λ > 0, σ given
        "sco_noisy_sgd/hinge-l2ball": _trainer(sco, binary, 501, loss=HingeLoss(), delta=DELTA, epsilon=1.0,
                                               constraint=L2Ball(1.0)),
        "sco_noisy_sgd/absolute-l2ball": _trainer(sco, regression, 502, loss=AbsoluteErrorLoss(), delta=DELTA,
                                                  epsilon=1.0, constraint=L2Ball(1.0)),
        "sco_noisy_sgd/hinge-pnorm1.5": _trainer(sco, binary, 503, loss=HingeLoss(), delta=DELTA, epsilon=1.0,
                                                 constraint=LpBall(1.0, 1.5), potential=PNormPotential(1.5)),
        "sco_noisy_sgd/logistic-l2-auto-ball": _trainer(sco, binary, 504, **_LOGISTIC, l2_regularization=0.01,
                                                        epsilon=1.0),
        "sco_noisy_sgd/hinge-sigma": _trainer(sco, binary, 505, loss=HingeLoss(), delta=DELTA, sigma=1.0,
                                              constraint=L2Ball(1.0)),
        # auto: each loss family, λ chosen or given
        "auto/logistic": _trainer(auto, binary, 601, **_LOGISTIC, epsilon=1.0),
        "auto/logistic-l2-given": _trainer(auto, binary, 602, **_LOGISTIC, epsilon=0.5, l2_regularization=0.01),
        "auto/squared": _trainer(auto, regression, 603, **_REGRESSION, epsilon=1.0),
        "auto/huber": _trainer(auto, binary, 604, loss=HuberizedHingeLoss(0.5), delta=DELTA, epsilon=1.0),
        "auto/hinge-l2ball": _trainer(auto, binary, 605, loss=HingeLoss(), delta=DELTA, epsilon=1.0,
                                       constraint=L2Ball(1.0)),
        "auto/multinomial-3-classes": _trainer(auto, multiclass, 606, loss=MultinomialLogisticLoss(3), delta=DELTA,
                                               epsilon=1.0),
        # the private mean of regression intercepts
        "private_mean/bound1-eps0.1": _private_mean(1.0, 0.1, 701),
        "private_mean/bound1-eps1": _private_mean(1.0, 1.0, 702),
        "private_mean/bound2-eps0.5": _private_mean(2.0, 0.5, 703),
    }
    return [GoldenConfiguration(f"trainer/{name}", run) for name, run in table.items()]


def golden_configurations() -> list[GoldenConfiguration]:
    """Every golden configuration, in the order of the golden file: trainers, estimators, selection, accountants.

    Raises
    ------
    RuntimeError
        If there are not exactly :data:`CONFIGURATION_COUNT` configurations or two share an id.
    """
    configurations = [*_trainer_configurations(), *estimator_configurations(), *selection_configurations(),
                      *accounting_configurations()]
    ids = [configuration.id for configuration in configurations]
    if len(ids) != CONFIGURATION_COUNT or len(set(ids)) != len(ids):
        raise RuntimeError(f"expected {CONFIGURATION_COUNT} configurations with distinct ids; got {len(ids)} "
                           f"({len(set(ids))} distinct).")
    return configurations


def golden_configuration_ids() -> list[str]:
    """The ids of :func:`golden_configurations`, in order."""
    return [configuration.id for configuration in golden_configurations()]
