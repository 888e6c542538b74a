"""The candidate runs of one private selection fit (:class:`~dpconvex.estimators.model_selection.PrivateSelectionCV`).

Each candidate is a ``noisy_gd`` fit at one λ of the grid and one per-run budget μ: planned from public
quantities before any data is read (the selection's certificate accounts for those plans), then fitted
and checked to have run exactly as planned.
"""

from __future__ import annotations

import re
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_gd as noisy_gd_accountant
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms.noisy_gd import plan_noisy_gd
from dpconvex.mechanisms.problem import DataShape, PrivacyTarget, Problem
from dpconvex.objectives.losses import Loss

if TYPE_CHECKING:  # the estimator module imports this one
    from dpconvex.estimators.model_selection import PrivateSelectionCV

__all__ = ["CandidateRuns"]


class CandidateRuns:
    """The candidates of one fit: their planned noisy_gd runs (from public quantities), their GDP μ, their fits.

    Parameters
    ----------
    estimator : PrivateSelectionCV
        The ``…CV`` estimator being fitted (its parameters are the candidates').
    n_train, n_features : int
        Records of the training part and features (the intercept's column included if any).
    """

    def __init__(self, estimator: PrivateSelectionCV, n_train: int, n_features: int):
        self.estimator, self.n_train, self.n_features = estimator, n_train, n_features
        self._plans: dict[tuple[float, float], noisy_gd_accountant.NoisyGDEvent] = {}

    def _parameters(self, value: float, mu: float) -> dict[str, Any]:
        """The candidate estimator's parameters at λ = ``value`` and per-run budget μ."""
        estimator = self.estimator
        own = estimator.get_params(deep=False)
        params = {name: own[name] for name in estimator._candidate().get_params(deep=False)
                  if name in own and name not in ("ledger", "ledger_partition")}  # the selection records, once
        params.update(l2_regularization=value, epsilon=gdp.gdp_epsilon(estimator.delta, mu), method="noisy_gd")
        if "classes" in params:
            params["classes"] = estimator.classes_.tolist()
        return params

    def event(self, value: float, mu: float) -> noisy_gd_accountant.NoisyGDEvent:
        """The noisy_gd run the candidate at λ = ``value`` will make, planned as its estimator plans it."""
        key = (value, mu)
        if key not in self._plans:
            estimator, loss = self.estimator, self.loss()
            data_norm = float(np.sqrt(2.0) * estimator.data_norm) if estimator.fit_intercept else estimator.data_norm
            features = self.n_features + int(estimator.fit_intercept)  # the intercept is a constant feature
            self._plans[key] = plan_noisy_gd(
                self.n_train, loss.parameter_dimension(features), loss=loss, l2_regularization=value,
                epsilon=gdp.gdp_epsilon(estimator.delta, mu), delta=estimator.delta, data_norm=data_norm,
                label_bound=estimator._label_bound(), constraint=estimator._constraint(value),
                step_size=estimator.step_size, iterations=estimator.iterations, strict=estimator.strict)
        return self._plans[key]

    def loss(self) -> Loss:
        """The candidates' loss: multi-class for more than two classes."""
        classes = getattr(self.estimator, "classes_", None)
        return (self.estimator._multiclass_loss(classes.size) if classes is not None and classes.size > 2
                else self.estimator._loss())

    def large_delta(self, n: int) -> str | None:
        """:meth:`~dpconvex.mechanisms.problem.Problem.large_delta`'s sentence for a fit on ``n`` records, or None."""
        estimator = self.estimator
        shape = Problem(DataShape(n, self.n_features), self.loss(), "auto", "auto", estimator.data_norm,
                        estimator._label_bound(), PrivacyTarget(estimator.delta, epsilon=estimator.epsilon))
        return shape.large_delta()

    def events(self, grid: NDArray[np.float64], mu: float) -> list[noisy_gd_accountant.NoisyGDEvent]:
        """The planned runs of every candidate of the grid at per-run budget μ."""
        return [self.event(float(value), mu) for value in grid]

    def fit(self, value: float, mu: float, seed: int, X: NDArray, y: NDArray) -> Any:
        """Fit the candidate at λ = ``value``; ``RuntimeError`` if its run is not the planned one."""
        with warnings.catch_warnings():  # the selection warns once, naming all its records (PrivateSelectionCV.fit)
            if (caveat := self.large_delta(self.n_train)) is not None:
                warnings.filterwarnings("ignore", re.escape(caveat), PrivacyLeakWarning)
            model = self.estimator._candidate(**{**self._parameters(value, mu), "random_state": seed}).fit(X, y)
        planned, report = self.event(value, mu), model.privacy_report_
        ran = (report.assumptions["n"], report.sigma, report.iterations, report.assumptions["step_size"],
               report.assumptions["gradient_sensitivity"])
        if ran != (planned.n, planned.sigma, planned.iterations, planned.step_size, planned.sensitivity):
            raise RuntimeError(f"the candidate at l2_regularization={value:g} ran (n, sigma, iterations, step_size, "
                               f"sensitivity) = {ran}, not the planned run the certificate accounts for.")
        return model
