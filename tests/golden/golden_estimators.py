"""Golden configurations of the scikit-learn estimators and of the private selection (``…CV``) estimators.

Each records what a fitted estimator releases: ``coef_``, ``intercept_``, the λ it trained with
(``l2_regularization_``), for a selection also its noisy validation score (``best_score_``), and its
certificate (``privacy_report_``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from dpconvex.estimators.linear_model import (
    PrivateHuberSVC,
    PrivateLADRegressor,
    PrivateLinearSVC,
    PrivateLogisticRegression,
    PrivateRidge,
)
from dpconvex.estimators.model_selection import (
    PrivateHuberSVCCV,
    PrivateLogisticRegressionCV,
    PrivateRidgeCV,
)
from golden.golden_data import (
    breast_cancer_data,
    multiclass_data,
    regression_data,
    zero_one_data,
)
from golden.golden_records import GoldenConfiguration

__all__ = ["estimator_configurations", "selection_configurations"]


def _fitted(estimator: type, data: Callable[[], tuple], seed: int, **parameters: Any) -> Callable[[], dict[str, Any]]:
    """The run of ``estimator(random_state=seed, **parameters).fit(X, y)`` on ``data()``: what it releases.

    The parameters are deep-copied at every run.
    """

    def run() -> dict[str, Any]:
        X, y = data()
        model = estimator(random_state=seed, **copy.deepcopy(parameters)).fit(X, y)
        released = {"coef": model.coef_, "intercept": model.intercept_,
                    "l2_regularization": model.l2_regularization_}
        if hasattr(model, "best_score_"):
            released["best_score"] = model.best_score_
        return {**released, "certificate": model.privacy_report_}

    return run


def estimator_configurations() -> list[GoldenConfiguration]:
    """The estimators of :mod:`dpconvex.estimators.linear_model`: methods, intercepts, label sets, multi-class fits."""
    binary, multiclass, regression = zero_one_data, multiclass_data, regression_data
    logistic, huber, ridge = PrivateLogisticRegression, PrivateHuberSVC, PrivateRidge
    declared, three = {"classes": [0, 1]}, {"classes": [0, 1, 2]}
    table = {
        # PrivateLogisticRegression
        "PrivateLogisticRegression/auto": _fitted(logistic, binary, 1001, **declared),
        "PrivateLogisticRegression/noisy_gd-eps0.5": _fitted(logistic, binary, 1002, **declared, method="noisy_gd",
                                                             epsilon=0.5, l2_regularization=0.01),
        "PrivateLogisticRegression/noisy_sgd-batch32-epochs2": _fitted(logistic, binary, 1003, **declared,
                                                                       method="noisy_sgd", batch_size=32, epochs=2),
        "PrivateLogisticRegression/noisy_gd-fit-intercept": _fitted(logistic, binary, 1004, **declared,
                                                                    method="noisy_gd", fit_intercept=True),
        "PrivateLogisticRegression/auto-3-classes": _fitted(logistic, multiclass, 1005, **three),
        "PrivateLogisticRegression/auto-classes-from-data": _fitted(logistic, binary, 1006),
        "PrivateLogisticRegression/rsgd_ar-epochs3": _fitted(logistic, binary, 1007, **declared, method="rsgd_ar",
                                                             epochs=3),
        "PrivateLogisticRegression/pnsgd": _fitted(logistic, binary, 1008, **declared, method="pnsgd",
                                                   l2_regularization=0.05),
        "PrivateLogisticRegression/breast-cancer-auto": _fitted(logistic, breast_cancer_data, 1009, **declared,
                                                                epsilon=2.0, delta=1e-7),
        # PrivateHuberSVC
        "PrivateHuberSVC/auto": _fitted(huber, binary, 1101, **declared),
        "PrivateHuberSVC/noisy_gd-h0.2": _fitted(huber, binary, 1102, **declared, method="noisy_gd", huber_h=0.2,
                                                 l2_regularization=0.01),
        "PrivateHuberSVC/noisy_gd-3-classes": _fitted(huber, multiclass, 1103, **three, method="noisy_gd"),
        "PrivateHuberSVC/outpert_gd": _fitted(huber, binary, 1104, **declared, method="outpert_gd", epochs=4),
        # PrivateRidge
        "PrivateRidge/auto-private-mean": _fitted(ridge, regression, 1201),
        "PrivateRidge/auto-private-mean-eps0.5": _fitted(ridge, regression, 1202, epsilon=0.5, label_bound=1.5),
        "PrivateRidge/noisy_gd-fit-intercept-column": _fitted(ridge, regression, 1203, method="noisy_gd",
                                                              fit_intercept=True),
        "PrivateRidge/noisy_sgd-no-intercept": _fitted(ridge, regression, 1204, method="noisy_sgd",
                                                       fit_intercept=False, l2_regularization=0.1),
        "PrivateRidge/nsgd-radius2": _fitted(ridge, regression, 1205, method="nsgd", radius=2.0),
        # the non-smooth estimators (sco_noisy_sgd)
        "PrivateLinearSVC/defaults": _fitted(PrivateLinearSVC, binary, 1301, **declared),
        "PrivateLinearSVC/3-classes-fit-intercept": _fitted(PrivateLinearSVC, multiclass, 1302, **three,
                                                            fit_intercept=True),
        "PrivateLinearSVC/radius-auto-l2": _fitted(PrivateLinearSVC, binary, 1303, **declared, radius="auto",
                                                   l2_regularization=0.01),
        "PrivateLADRegressor/defaults": _fitted(PrivateLADRegressor, regression, 1401),
        "PrivateLADRegressor/radius2-fit-intercept": _fitted(PrivateLADRegressor, regression, 1402, radius=2.0,
                                                             fit_intercept=True, epsilon=0.5),
    }
    return [GoldenConfiguration(f"estimator/{name}", run) for name, run in table.items()]


def selection_configurations() -> list[GoldenConfiguration]:
    """The private selection estimators of :mod:`dpconvex.estimators.model_selection`: each law of K, scoring, loss."""
    binary, multiclass, regression = zero_one_data, multiclass_data, regression_data
    few_runs = {"expected_runs": 4.0}  # the Poisson law draws K = 0 with probability e^-4: seeds below draw K > 0
    table = {
        "PrivateLogisticRegressionCV/poisson": _fitted(PrivateLogisticRegressionCV, binary, 2001, classes=[0, 1],
                                                       **few_runs),
        "PrivateLogisticRegressionCV/geometric-eps2": _fitted(PrivateLogisticRegressionCV, binary, 2002,
                                                              classes=[0, 1], runs_distribution="geometric",
                                                              epsilon=2.0, **few_runs),
        "PrivateLogisticRegressionCV/3-classes": _fitted(PrivateLogisticRegressionCV, multiclass, 2003,
                                                         classes=[0, 1, 2], validation_fraction=0.3, **few_runs),
        "PrivateHuberSVCCV/poisson": _fitted(PrivateHuberSVCCV, binary, 2101, classes=[0, 1], **few_runs),
        "PrivateHuberSVCCV/logarithmic-grid4": _fitted(PrivateHuberSVCCV, binary, 2102, classes=[0, 1],
                                                       runs_distribution="logarithmic",
                                                       l2_regularizations=(1e-3, 3e-3, 1e-2, 3e-2), **few_runs),
        "PrivateRidgeCV/mean-squared-error": _fitted(PrivateRidgeCV, regression, 2201, **few_runs),
        "PrivateRidgeCV/mean-absolute-error-intercept": _fitted(PrivateRidgeCV, regression, 2202,
                                                                scoring="neg_mean_absolute_error",
                                                                fit_intercept=True, **few_runs),
    }
    return [GoldenConfiguration(f"selection/{name}", run) for name, run in table.items()]
