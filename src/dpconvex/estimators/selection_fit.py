"""The fit shared by the private ``…CV`` estimators: λ selected on the private data, inside one certificate.

:class:`PrivateSelectionCV` runs the algorithm of :mod:`dpconvex.estimators.model_selection`
(split, per-run budget, a random number of candidate runs, the best noisy validation score
released) for the estimator its subclass tunes, and writes the selection's certificate; the
candidate runs themselves are :class:`~dpconvex.estimators.selection_runs.CandidateRuns`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import NDArray
from sklearn.base import is_classifier

from dpconvex.accounting import gdp
from dpconvex.accounting.tuning_event import TuningEvent
from dpconvex.data.checks import clip_rows, enforce_label_bound, is_dask_collection, make_rng, norm_bound_scale
from dpconvex.estimators.selection_runs import CandidateRuns
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms.selection import (
    SCORINGS,
    base_mu,
    best_of_random_runs,
    calibrate_per_run_mu,
    repetition_law,
    score_noise_sd,
    selection_certificate,
    validation_run,
)
from dpconvex.objectives.losses import row_norms
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve
from dpconvex.privacy.ledger import covers, planned_curve

__all__ = ["PrivateSelectionCV"]


class PrivateSelectionCV:
    """The fit shared by the ``…CV`` estimators; a subclass puts it before the estimator it tunes.

    The subclass names that estimator in ``_candidate`` (whose ``_loss``, ``_constraint`` and
    ``_label_bound`` it inherits) and its grid's default; every candidate gets the subclass's
    parameters of the same name.

    Attributes
    ----------
    coef_, intercept_, l2_regularization_, best_score_, cv_results_, privacy_report_
        Set by ``fit`` (see the subclasses' docstrings).
    """

    _candidate: type

    def fit(self, X, y):
        """Select λ privately on (X, y) and release the winning model (:mod:`~dpconvex.estimators.model_selection`).

        Parameters
        ----------
        X : array_like of shape (n, d)
            Features, in memory (NumPy or pandas; a Dask collection is refused).  Rows with
            ‖x‖₂ > ``data_norm`` are clipped once, with a ``PrivacyLeakWarning``.
        y : array_like of shape (n,)
            Labels (classifiers: values of ``classes``), or targets (ridge: clipped to ``label_bound``).

        Returns
        -------
        self
            With ``coef_``, ``intercept_``, ``l2_regularization_``, ``best_score_``, ``cv_results_`` and
            ``privacy_report_`` set (and ``classes_`` for the classifiers).

        Raises
        ------
        ValueError
            Naming the parameter, for a hyperparameter outside its range (including a grid that is not
            a non-empty sequence of distinct numbers > 0, or a split leaving fewer than 2 training
            records or no validation record); for a Dask collection X or y.
        RuntimeError
            If the Poisson law drew no run (:func:`~dpconvex.mechanisms.selection.best_of_random_runs`):
            nothing is released and no fitted attribute is left (nor anything recorded in ``ledger``).
        BudgetExceededError
            If ``ledger``'s budget filter refuses the selection's planned certificate (from public
            quantities: the law of K, the grid's planned runs, ε and δ), before any candidate is trained
            or any row clipped: nothing is released and no fitted attribute is left.

        Warns
        -----
        PrivacyLeakWarning
            Also once, for the whole selection, for a target δ ≥ 1/n with n all the records (both parts):
            :meth:`~dpconvex.mechanisms.problem.Problem.large_delta`'s sentence, which opens the certificate's notes.
        """
        self._forget_fit()
        for name, data in (("X", X), ("y", y)):
            if is_dask_collection(data):
                raise ValueError(
                    f"{type(self).__name__} fits in-memory data only; {name} is a Dask collection. Compute it "
                    "into a NumPy array or pandas object, or train PrivateLogisticRegression, PrivateHuberSVC or "
                    "PrivateRidge (which fit Dask collections) at a fixed l2_regularization.")
        classifier = is_classifier(self)
        X, y, leaks = self._validated(X, y, y_numeric=not classifier)
        if classifier:
            self.classes_, read = self._label_set(y)
            leaks = read + leaks
        grid = self._grid()
        law = repetition_law(self.runs_distribution, self.expected_runs)
        scoring = SCORINGS[self.scoring]
        label_bound = self._label_bound()
        n = y.shape[0]
        n_validation = int(round(self.validation_fraction * n))
        if not 1 <= n_validation <= n - 2:
            raise ValueError(f"validation_fraction={self.validation_fraction!r} leaves {n_validation} of {n} records "
                             "for validation: it must leave at least 1 for validation and 2 for training.")
        # the plan (public quantities only), then the ledger's filter on its certificate, before the data are read
        filtered = self._ledger_budget()
        if filtered and leaks:  # no guarantee: refused
            self._check_ledger(PrivacyCurve.pair(math.inf, self.delta))
        runs = CandidateRuns(self, n - n_validation, X.shape[1])
        mu = calibrate_per_run_mu(law, self.epsilon, self.delta, lambda m: runs.events(grid, m))
        selection_mu = base_mu(mu, runs.events(grid, mu))
        planned = self._check_ledger(planned_curve(TuningEvent(law, base_mu=selection_mu), self.delta)) \
            if filtered else None
        run_epsilon = gdp.gdp_epsilon(self.delta, mu)
        # once, for every run: the clip's factors (no copy of X), applied in the copies of the two parts below
        scale, _ = norm_bound_scale(row_norms(X), self.data_norm, strict=self.strict)
        if label_bound is not None:
            y, _ = enforce_label_bound(y, label_bound, strict=self.strict)
        rng = make_rng(self.random_state)
        order = rng.permutation(n)  # public randomness: positions only
        validation, training = np.sort(order[:n_validation]), np.sort(order[n_validation:])
        sensitivity = scoring.sensitivity(label_bound, n_validation)
        X_train, y_train, X_validation = X[training], y[training], X[validation]
        if scale is not None:  # the parts are copies: their rows above the bound are clipped in place, as in a copy
            X_train, X_validation = clip_rows(X_train, scale[training], copy=False), clip_rows(
                X_validation, scale[validation], copy=False)
        run = validation_run(lambda value, seed: runs.fit(value, mu, seed, X_train, y_train), scoring, X_validation,
                             y[validation], label_bound, mu)

        caveat = runs.large_delta(n)  # the selection reads all n records (the candidates' own warning is dropped)
        for reason in leaks:  # after the checks that raise: a refused fit releases nothing
            warnings.warn(f"{reason}: the release has no differential-privacy guarantee (epsilon = inf)",
                          PrivacyLeakWarning, stacklevel=2)
        if caveat is not None:
            warnings.warn(caveat, PrivacyLeakWarning, stacklevel=2)
        selection = best_of_random_runs(law, grid, run, rng)
        if selection is None:
            self._forget_fit()  # classes_ and n_features_in_ were set while the input was checked
            raise RuntimeError(
                f"no candidate was trained: the Poisson law of the number of runs drew K = 0 (probability "
                f"{math.exp(-law.mean):.2g}); nothing data-dependent was computed, and the certificate covers this "
                "outcome. Fitting again spends the privacy budget again; a larger expected_runs or "
                "runs_distribution='geometric' (K >= 1 always) avoids it.")
        winner = selection.output
        self.coef_, self.intercept_ = winner.coef_, winner.intercept_
        self.l2_regularization_ = selection.value
        self.best_score_ = float(selection.score)
        chosen = grid == selection.value
        self.cv_results_ = {"params": [{"l2_regularization": float(v)} for v in grid], "param_l2_regularization": grid,
                            "selected": chosen, "validation_score": np.where(chosen, self.best_score_, np.nan)}
        certificate = self._certificate(law, grid, mu, selection_mu, run_epsilon, sensitivity, scoring, selection, n,
                                        n_validation, caveat)
        for reason in leaks:
            certificate = certificate.without_guarantee(reason)
        if planned is not None and not covers(planned, certificate):  # never: the same account of the same event
            self._forget_fit()
            raise RuntimeError(f"the selection certified {certificate_curve(certificate)!r}, not the release the "
                               f"ledger's filter checked ({planned!r}); nothing was released or recorded.")
        self.privacy_report_ = certificate
        if self.ledger is not None:  # the selection's one certificate, once (its candidates record nothing)
            self.ledger.record(certificate, f"{type(self).__name__} fit {len(self.ledger.releases) + 1}",
                               self.ledger_partition)
        return self

    def _grid(self) -> NDArray[np.float64]:
        """``l2_regularizations`` as a float array, or ``ValueError`` naming it (booleans refused before the cast)."""
        values = self.l2_regularizations
        try:
            booleans = any(isinstance(v, (bool, np.bool_)) for v in np.ravel(np.asarray(values, dtype=object)))
            grid = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            booleans, grid = False, np.array([np.nan])
        if (booleans or grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid) & (grid > 0))
                or np.unique(grid).size != grid.size):
            raise ValueError("The 'l2_regularizations' parameter must be a non-empty sequence of distinct numbers "
                             f"> 0 (the grid of lambda); got {values!r}.")
        return grid

    def _certificate(self, law, grid, mu, base_mu, run_epsilon, sensitivity, scoring, selection, n,
                     n_validation, caveat) -> PrivacyCertificate:
        """The selection's certificate (:func:`selection_certificate`), with the budget rule and the split; its
        notes open with ``caveat`` (:meth:`~dpconvex.mechanisms.problem.Problem.large_delta` for the n records)
        unless None."""
        report = selection.output.privacy_report_
        notes = (
            *(() if caveat is None else (caveat,)),
            f"budget rule: the whole (epsilon, delta) = ({self.epsilon:g}, {self.delta:g}) goes to the selection and "
            "the winning candidate itself is released (Papernot & Steinke's output; no refit on all data, nothing "
            f"composed after it); every run has the per-run budget mu = {mu:.6g} (GDP), the largest whose selection "
            "meets epsilon at delta",
            f"each run: lambda uniform on {grid.tolist()}, noisy_gd at (epsilon, delta) = ({run_epsilon:.6g}, "
            f"{self.delta:g}) (the mu-GDP point at delta) on {n - n_validation} training records, then {scoring.name} "
            f"on {n_validation} validation records plus N(0, {score_noise_sd(sensitivity, mu):.6g}^2) (sensitivity "
            f"{sensitivity:.6g})",
            f"number of runs K ~ {law.describe()}; K, the other runs' lambda and their scores are not released",
            f"released: l2_regularization = {selection.value:g} (its training certified by noisy_gd's {report.bound}, "
            f"{report.epsilon:.6g} at delta), its model and its noisy validation score {selection.score:.6g}",
        )
        return selection_certificate(
            law, base_mu, self.delta, per_run_mu=mu, iterations=report.iterations, notes=notes,
            assumptions={"n": n, "n_train": n - n_validation, "n_validation": n_validation,
                         "loss": report.assumptions["loss"], "data_norm": self.data_norm,
                         "label_bound": self._label_bound(), "l2_regularizations": grid.tolist(),
                         "l2_regularization": selection.value, "run_epsilon": run_epsilon, "scoring": scoring.name,
                         "score_sensitivity": sensitivity, "score_noise_sd": score_noise_sd(sensitivity, mu),
                         "candidate_mechanism": "noisy_gd",
                         "released": "the winning candidate's model, its lambda and its noisy validation score"})
