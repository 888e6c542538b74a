"""The protocol every Adult benchmark shares: folds, seeds, the fits of ours and of the baselines, the scores.

:mod:`.bench` (the head-to-head table), :mod:`.bench_tuned`, :mod:`.bench_replicates`,
:mod:`.bench_selection`, :mod:`.bench_datasets` and :mod:`.bench_panel` all fit on
:func:`cv_folds` with per-fit seeds from :func:`fit_seed`, fit our estimators through
:func:`fit_ours` and the peers through :func:`fit_baseline`, and score through :func:`score_fit`, so
that their numbers are comparable cell by cell.  The seeds make the benchmark reproducible; a
release must use ``random_state=None``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.model_selection import RepeatedStratifiedKFold

from dpconvex_lab.baselines import BASELINES, BaselineUnavailable
from dpconvex_lab.bench_headline import DEFAULT_METHOD
from dpconvex_lab.bench_scaling import TASKS, clear_dpconvex_caches, default_estimator

__all__ = ["DEFAULT", "L2", "PRIVATE_BASELINES", "cv_folds", "default_method", "fit_baseline", "fit_ours", "fit_seed",
           "score_fit", "signed_labels"]

#: Method name of the rows fitted with the estimator's defaults only (no ``method``, no λ passed):
#: the estimators' default ``method`` (checked by :func:`default_method`) marked as the default.
DEFAULT = DEFAULT_METHOD
L2 = 1e-3  # λ of the non-private reference, of the baselines and of the ``objective_ref`` column
PRIVATE_BASELINES = ("objpert", "sgd_ma", "sgd_ma_replace_one", "diffprivlib")


def fit_seed(seed: int, *indices: int) -> int:
    """A per-fit seed derived from ``seed`` and the fit's indices."""
    return int(np.random.SeedSequence([seed, *indices]).generate_state(1)[0])


def signed_labels(y: np.ndarray) -> np.ndarray:
    """Labels {0, 1} (or ±1) as ±1: +1 where ``y == 1``."""
    return np.where(y == 1, 1.0, -1.0)


def cv_folds(X: np.ndarray, y: np.ndarray, *, repeats: int = 1, seed: int = 0,
             folds: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (train, test) index pairs of the benchmark: repeated stratified 5-fold CV seeded by ``seed``.

    Fold ``f`` of repetition ``r`` is entry ``5r + f``; the first repetition's five folds do not
    depend on ``repeats`` (scikit-learn draws the repetitions in order from one seeded generator),
    so a run with ``repeats=1`` sees the same first five folds as one with ``repeats=2``.
    ``folds`` keeps only the first ``folds`` pairs (``--quick``); None keeps every one.
    """
    splits = list(RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=seed).split(X, y))
    return splits if folds is None else splits[:folds]


def default_method(task: str) -> str:
    """The ``method`` the task's estimator uses by default; :data:`DEFAULT` must name it.

    Parameters
    ----------
    task : {"logistic", "svm"}

    Returns
    -------
    str
        The default ``method`` (``"auto"``), which the bench fits once, as :data:`DEFAULT`.

    Raises
    ------
    RuntimeError
        When the estimators' default changed without :data:`DEFAULT` (the rows would be labelled
        with a method they were not fitted with).
    """
    method = TASKS[task][0]().method
    if DEFAULT != f"{method} (default)":
        raise RuntimeError(f"the {task} estimator's default method is {method!r}, but bench.DEFAULT is {DEFAULT!r}.")
    return method


def fit_ours(task: str, method: str, epsilon: float, delta: float, l2: float | None, seed: int, X, y,
          loss) -> dict[str, Any]:
    """One fit of ours; ``method`` :data:`DEFAULT` and ``l2`` None are not passed (the estimator's defaults)."""
    options: dict[str, Any] = {} if method == DEFAULT else {"method": method}
    if l2 is not None:
        options["l2_regularization"] = l2
    estimator = default_estimator(task, epsilon, delta, seed, **options)
    clear_dpconvex_caches()  # cold: no calibration reused from an earlier fold (scikit-learn caches nothing)
    tic = time.perf_counter()
    estimator.fit(X, signed_labels(y))
    elapsed = time.perf_counter() - tic
    cert = estimator.privacy_report_
    # λ as the estimator used it (``auto`` chooses its own) and the mechanism that ran.
    return {"coef": estimator.coef_, "intercept": estimator.intercept_, "fit_time": elapsed, "bound": cert.bound,
            "certified_epsilon": cert.epsilon, "note": "", "mechanism": cert.mechanism,
            "l2": float(estimator.l2_regularization_)}


def fit_baseline(name: str, epsilon: float, delta: float, l2: float, seed: int, X, y, loss) -> dict[str, Any]:
    """One fit of the baseline ``name`` of :data:`.baselines.BASELINES` (an unavailable one is recorded, not raised)."""
    tic = time.perf_counter()
    try:
        # The non-private baselines ignore ε (recorded as ∞); they are given a valid placeholder.
        fit = BASELINES[name](X, signed_labels(y), loss=loss, epsilon=epsilon if np.isfinite(epsilon) else 1.0,
                              delta=delta, l2_regularization=l2, random_state=seed)
    except BaselineUnavailable as error:
        return {"coef": None, "intercept": 0.0, "fit_time": np.nan, "bound": "unavailable",
                "certified_epsilon": np.nan, "note": str(error).splitlines()[0][:200], "l2": l2}
    return {"coef": fit.coef, "intercept": fit.intercept, "fit_time": time.perf_counter() - tic, "bound": fit.bound,
            "certified_epsilon": epsilon if name in PRIVATE_BASELINES else np.inf, "note": fit.note, "l2": l2}


def score_fit(result: dict[str, Any], loss, X_train, y_train, X_test, y_test) -> dict[str, Any]:
    """Test accuracy; training objective at the fit's own λ (``objective``) and at :data:`L2` (``objective_ref``)."""
    if result["coef"] is None:
        return {"accuracy": np.nan, "objective": np.nan, "objective_ref": np.nan}
    margin = X_test @ result["coef"] + result["intercept"]
    signed = signed_labels(y_train)
    return {"accuracy": float(np.mean(np.where(margin > 0, 1.0, -1.0) == signed_labels(y_test))),
            "objective": loss.objective(result["coef"], X_train, signed, result["l2"]),
            "objective_ref": loss.objective(result["coef"], X_train, signed, L2)}
