"""The default estimator on a panel of tables (``dpconvex bench panel``), with a verdict per table and ε.

For each table of :data:`.panel_data.TABLES` and each ε of :data:`EPSILONS` (δ = 1e-8 for every
fit, below 1/n² for every n < 10,000 and below 1/n beyond), every entry is fitted on the same
splits: R repetitions of (stratified, for classification) 5-fold cross-validation, the first F folds
of each, S fresh noise seeds per fold (:data:`PLAN`; the generated 1,000,000-row table: one 80/20
split, its rows being independent draws, with 2 seeds).  Entries:

* ``default``: the public estimator with only ε, δ, ``classes=`` (classification) and a seed —
  ``PrivateLogisticRegression()`` for classification, ``PrivateRidge()`` for regression (its target
  mapped onto [−1, 1] by the declared bounds, the range of its default ``label_bound=1``) — so it
  measures whatever the library's default becomes.  Its ``time_ratio`` divides its fit time (cold:
  the library's caches emptied first) by that of the non-private reference, fitted on the same
  training part just before the default's fits at that ε, in this process;
* peers under the same guarantee (replace-one, (ε, δ)): DP-SGD with the best point of the small
  grid :data:`DPSGD_GRID` chosen on the test folds (NOT private: an optimistic reference), objective
  perturbation (binary only), diffprivlib (pure ε) and output perturbation (``method="outpert_gd"``
  with its defaults); a peer that does not apply is recorded once per ε as not run, with the reason;
* references: ``trivial`` (the training part's majority class; its mean target for regression) and
  ``nonprivate`` (scikit-learn's ``LogisticRegression()`` / ``Ridge()`` on the same encoding).

Scores: test accuracy (classification), test R² (regression).  A cell is the mean over every fit ±
its standard error: over the R per-repetition means when R ≥ 2, else the noise-only standard error
over the seeds within each split (conditional on the split).  :func:`verdicts` turns the numbers
into the four checks of the section, records go to ``bench_panel.csv`` and :func:`panel_section`
renders them into ``BENCHMARKS.md``.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold
from tqdm.auto import tqdm

from dpconvex import PrivateLogisticRegression, PrivateRidge
from dpconvex.objectives.losses import LogisticLoss, SquaredLoss
from dpconvex.objectives.multiclass import MultinomialLogisticLoss
from dpconvex_lab.baselines import BaselineUnavailable, diffprivlib_logistic, objpert, sgd_ma
from dpconvex_lab.bench_markdown import save_table_run, with_csv_section
from dpconvex_lab.bench_protocol import fit_seed
from dpconvex_lab.bench_scaling import clear_dpconvex_caches
from dpconvex_lab.panel_data import TABLES, PanelTable, load_panel_table
from dpconvex_lab.panel_report import panel_section, summary_rows, verdicts

__all__ = ["CSV", "DPSGD_GRID", "EPSILONS", "PEERS", "PLAN", "QUICK", "not_applicable", "panel_section", "run_panel",
           "run_table", "verdicts", "with_panel_section"]

EPSILONS = (0.1, 0.5, 1.0, 2.0)
DELTA = 1e-8
CSV = "bench_panel.csv"
L2 = 1e-3  # λ of the baselines, as in the other benchmarks
#: (repetitions R, folds kept per repetition F, noise seeds per fold S); F = 0: one 80/20 split of the rows in order.
PLAN: dict[str, tuple[int, int, int]] = {
    "iris": (4, 5, 1), "wine": (4, 5, 1), "modechoice": (4, 5, 1), "diabetes": (4, 5, 1), "breast_cancer": (4, 5, 1),
    "anes96": (4, 5, 1), "digits": (4, 5, 1), "fair": (2, 5, 1), "randhie": (2, 5, 1), "randhie_any": (2, 5, 1),
    "adult": (2, 5, 1), "admin": (1, 0, 2)}
#: ``--quick``: two small tables and a 20,000-row generated table, two ε, one repetition of two folds.
QUICK = {"tables": ("iris", "diabetes", "admin"), "epsilons": (0.1, 1.0), "plan": (1, 2, 1), "admin_rows": 20_000}
PEERS = ("dpsgd_tuned", "objpert", "diffprivlib", "outpert_gd")
#: DP-SGD grid points (clip C, learning rate, epochs, expected batch): four of the Adult benchmark's tuned grid.  The
#: batch is capped at a tenth of the training rows (a small table still takes several steps per epoch) and the
#: epochs at :data:`LARGE_EPOCHS` beyond :data:`LARGE_ROWS` training rows (thousands of steps already; time budget).
DPSGD_GRID: tuple[dict[str, float], ...] = tuple(
    {"clip_norm": c, "learning_rate": lr, "epochs": e, "batch_size": b}
    for c, lr, e, b in ((0.5, 1.5, 3, 256), (0.5, 5.0, 10, 1024), (1.0, 5.0, 10, 4096), (0.5, 15.0, 10, 4096)))
LARGE_ROWS = 200_000
LARGE_EPOCHS = 3
#: Output perturbation is not run where n·d exceeds this: its fit costs about 2 µs per row and feature here
#: (measured: 9 s on Adult's 39,000 × 108 training part, 19 s on 16,000 × 500, 1,000 s on 800,000 × 500).
OUTPERT_MAX_CELLS = 8e6
OUTPERT_SECONDS_PER_CELL = 2e-6


def _splits(table: PanelTable, plan: tuple[int, int, int], seed: int) -> list[tuple[int, Any, Any]]:
    """(repetition, train, test) of the plan: index arrays, or slices (no copy) for the 80/20 split."""
    repeats, folds, _ = plan
    if folds == 0:
        cut = int(round(0.8 * table.n))
        return [(0, slice(0, cut), slice(cut, table.n))]
    kind = RepeatedKFold if table.task == "regression" else RepeatedStratifiedKFold
    splits = list(kind(n_splits=5, n_repeats=repeats, random_state=seed).split(table.X, table.y))
    return [(k // 5, train, test) for k, (train, test) in enumerate(splits) if k % 5 < folds]


def _scaled_target(table: PanelTable, y: np.ndarray) -> np.ndarray:
    """A regression target mapped onto [−1, 1] by its declared bounds (public constants); labels unchanged."""
    if table.task != "regression":
        return y
    lower, upper = table.target_bounds
    return np.clip((y - (upper + lower) / 2) / ((upper - lower) / 2), -1.0, 1.0)


def _score(table: PanelTable, y_test: np.ndarray, predicted: np.ndarray) -> float:
    if table.task == "regression":
        return float(r2_score(y_test, predicted))
    return float(np.mean(predicted == y_test))


def _estimator(table: PanelTable, epsilon: float, seed: int, **options: Any):
    """The public estimator with only ε, δ, the declared classes, the seed and ``options``."""
    if table.task == "regression":
        return PrivateRidge(epsilon=epsilon, delta=DELTA, random_state=seed, **options)
    return PrivateLogisticRegression(epsilon=epsilon, delta=DELTA, classes=list(table.classes), random_state=seed,
                                     **options)


def _fit_ours(table: PanelTable, epsilon: float, seed: int, X, y, X_test, **options: Any) -> dict[str, Any]:
    estimator = _estimator(table, epsilon, seed, **options)
    clear_dpconvex_caches()  # cold, as a first fit at this n and ε (scikit-learn caches nothing)
    tic = time.perf_counter()
    estimator.fit(X, y)
    elapsed = time.perf_counter() - tic
    report = estimator.privacy_report_
    return {"predicted": estimator.predict(X_test), "fit_time": elapsed, "mechanism": report.mechanism,
            "bound": report.bound, "certified_epsilon": report.epsilon,
            "l2": float(np.max(estimator.l2_regularization_))}


def _nonprivate(table: PanelTable, X, y, X_test) -> dict[str, Any]:
    model = Ridge() if table.task == "regression" else LogisticRegression()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning: scikit-learn's defaults as a user gets them
        tic = time.perf_counter()
        model.fit(X, y)
        elapsed = time.perf_counter() - tic
    return {"predicted": model.predict(X_test), "fit_time": elapsed, "bound": "none (not private)",
            "note": f"scikit-learn {type(model).__name__}() on the same encoding; not private"}


def _trivial(table: PanelTable, y, n_test: int) -> dict[str, Any]:
    if table.task == "regression":
        return {"predicted": np.full(n_test, float(np.mean(y))), "bound": "none (not private)",
                "note": "the training part's mean target; not private"}
    labels, counts = np.unique(y, return_counts=True)
    return {"predicted": np.full(n_test, labels[np.argmax(counts)]), "bound": "none (not private)",
            "note": "the training part's majority class; not private"}


def _loss(table: PanelTable):
    if table.task == "regression":
        return SquaredLoss()
    return LogisticLoss() if table.task == "binary" else MultinomialLogisticLoss(len(table.classes))


def _baseline_labels(table: PanelTable, y: np.ndarray) -> np.ndarray:
    """±1 (the second declared class is +1), class indices 0..K−1, or the scaled target."""
    if table.task == "regression":
        return y.astype(float)
    classes = np.asarray(table.classes)
    if table.task == "binary":
        return np.where(y == classes[1], 1.0, -1.0)
    return np.argmax(y[:, None] == classes[None, :], axis=1).astype(float)


def _from_baseline(table: PanelTable, coef: np.ndarray, X_test) -> np.ndarray:
    """Predictions of a baseline's weights in the table's own labels (or scaled target)."""
    if table.task == "regression":
        return X_test @ coef
    classes = np.asarray(table.classes)
    if table.task == "binary":
        return classes[(X_test @ coef >= 0).astype(int)]
    return classes[np.argmax(X_test @ coef.reshape(X_test.shape[1], -1), axis=1)]


def _diffprivlib_regression(X, y, epsilon: float, seed: int) -> np.ndarray:
    """diffprivlib's LinearRegression (pure ε) with the encoding's public bounds: features in [0, 1], target [−1, 1]."""
    try:
        from diffprivlib.models import LinearRegression as DiffprivlibLinearRegression
    except Exception as error:  # ImportError, or an incompatible scikit-learn at import time
        raise BaselineUnavailable(f"diffprivlib could not be imported: {type(error).__name__}: {error}") from error
    d = X.shape[1]
    try:
        model = DiffprivlibLinearRegression(epsilon=epsilon, bounds_X=(np.zeros(d), np.ones(d)), bounds_y=(-1.0, 1.0),
                                            fit_intercept=False, random_state=seed)
        model.fit(X, y)
    except Exception as error:
        raise BaselineUnavailable(f"diffprivlib LinearRegression failed: {type(error).__name__}: {error}") from error
    return np.asarray(model.coef_, dtype=float).ravel()


def not_applicable(peer: str, table: PanelTable) -> str | None:
    """Why ``peer`` is not run on ``table`` (None when it is)."""
    if peer == "objpert" and table.task != "binary":
        return ("objective perturbation's guarantee (Kifer, Smith, Thakurta 2012) needs a smooth binary margin loss "
                "(rank-one Hessian); the table is " + table.task)
    if peer == "diffprivlib" and table.task == "multiclass":
        return "baselines.diffprivlib_logistic wraps diffprivlib's binary logistic regression only"
    if peer == "diffprivlib":
        try:
            importlib.import_module("diffprivlib.models")
        except Exception as error:  # ImportError, or an incompatible scikit-learn at import time
            return f"diffprivlib could not be imported: {type(error).__name__}: {error}"
    if peer == "outpert_gd" and table.n * table.d > OUTPERT_MAX_CELLS:
        seconds = OUTPERT_SECONDS_PER_CELL * 0.8 * table.n * table.d
        return (f"one fit would take about {seconds:,.0f} s on the {table.n:,} x {table.d} table (2 µs per row and "
                "feature, measured), beyond the panel's time budget")
    return None


def _fit_peer(peer: str, table: PanelTable, epsilon: float, seed: int, X, y, X_test,
              point: dict[str, float] | None = None) -> dict[str, Any]:
    """One fit of a peer: predictions, time, bound, note; BaselineUnavailable when it cannot run here."""
    tic = time.perf_counter()
    if peer == "outpert_gd":
        return {**_fit_ours(table, epsilon, seed, X, y, X_test, method="outpert_gd"), "note": "method='outpert_gd'"}
    labels = _baseline_labels(table, y)
    if peer == "diffprivlib" and table.task == "regression":
        coef, bound, note = _diffprivlib_regression(X, labels, epsilon, seed), "epsilon-DP (diffprivlib)", ""
    else:
        keywords = {"loss": _loss(table), "epsilon": epsilon, "delta": DELTA, "l2_regularization": L2,
                    "random_state": seed}
        if peer == "dpsgd_tuned":
            fit = sgd_ma(X, labels, neighbouring="replace_one", **keywords, **point)
        else:
            fit = (objpert if peer == "objpert" else diffprivlib_logistic)(X, labels, **keywords)
        coef, bound, note = fit.coef, fit.bound, fit.note
    return {"predicted": _from_baseline(table, coef, X_test), "fit_time": time.perf_counter() - tic, "bound": bound,
            "certified_epsilon": epsilon, "note": note[:200], "l2": L2}


def _grid_point(point: dict[str, float], n_train: int) -> dict[str, float]:
    """A :data:`DPSGD_GRID` point for ``n_train`` training rows: batch and epochs capped (see there)."""
    epochs = min(point["epochs"], LARGE_EPOCHS) if n_train > LARGE_ROWS else point["epochs"]
    return {**point, "epochs": epochs, "batch_size": int(min(point["batch_size"], max(8, n_train // 10)))}


def run_table(name: str, *, epsilons: Sequence[float] = EPSILONS, plan: tuple[int, int, int] | None = None,
              seed: int = 0, admin_rows: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Every fit of one table: a row per (entry, ε, repetition, fold, seed).

    Parameters
    ----------
    name : str
        A key of :data:`.panel_data.TABLES`.
    epsilons : the ε of the private entries.
    plan : (repetitions, folds kept per repetition, seeds per fold); None: :data:`PLAN` ``[name]``.
    seed : seeds the splits and every fit.
    admin_rows : rows of the generated table (None: all 1,000,000).
    progress : show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns ``table, task, n, d, method, config, epsilon`` (inf for the references), ``repeat, fold, seed,
        score`` (accuracy or R²; NaN when not run), ``fit_time, sklearn_time, time_ratio, mechanism, bound,
        certified_epsilon, l2, note, plan, table_seconds``.
    """
    start = time.perf_counter()
    table = load_panel_table(name, **({} if admin_rows is None else {"admin_rows": admin_rows}), seed=seed)
    plan = PLAN[name] if plan is None else plan
    splits = _splits(table, plan, seed)
    seeds = plan[2]
    reasons = {peer: not_applicable(peer, table) for peer in PEERS}
    common = {"table": name, "task": table.task, "n": table.n, "d": table.d, "plan": "R={} F={} S={}".format(*plan)}
    rows: list[dict[str, Any]] = []

    def record(method, epsilon, index, result, y_test, config=""):
        predicted = result.pop("predicted", None)
        score = np.nan if predicted is None else _score(table, y_test, predicted)
        rows.append({**common, "method": method, "config": config, "epsilon": float(epsilon), "repeat": index[0],
                     "fold": index[1], "seed": index[2], "score": score, **result})

    for peer, reason in reasons.items():
        for eps in epsilons if reason else ():
            record(peer, eps, (-1, -1, -1), {"bound": "not run", "note": reason}, None)
    per_fit = 2 + sum(len(DPSGD_GRID) if p == "dpsgd_tuned" else 1 for p, r in reasons.items() if r is None)
    bar = tqdm(total=len(splits) * len(epsilons) * seeds * per_fit, disable=not progress, unit="fit", desc=name)
    for f, (r, train, test) in enumerate(splits):
        X, y, X_test = table.X[train], _scaled_target(table, table.y[train]), table.X[test]
        y_test = _scaled_target(table, table.y[test])
        record("trivial", np.inf, (r, f, 0), _trivial(table, y, len(y_test)), y_test)
        for e, eps in enumerate(epsilons):
            reference = _nonprivate(table, X, y, X_test)  # fitted just before the default's fits: the time ratio
            if e == 0:
                record("nonprivate", np.inf, (r, f, 0), dict(reference), y_test)
            for s in range(seeds):
                run_seed = fit_seed(seed, TABLES.index(name), r, f, e, s)
                result = _fit_ours(table, eps, run_seed, X, y, X_test)
                record("default", eps, (r, f, s), {**result, "sklearn_time": reference["fit_time"],
                                                   "time_ratio": result["fit_time"] / reference["fit_time"]}, y_test)
                bar.update(2)
                for k, peer in enumerate(PEERS):
                    if reasons[peer]:
                        continue
                    points = [_grid_point(p, len(y)) for p in DPSGD_GRID] if peer == "dpsgd_tuned" else [None]
                    for j, point in enumerate(points):
                        config = "" if point is None else "C={clip_norm:g}, lr={learning_rate:g}, E={epochs:g}, " \
                                                          "b={batch_size}".format(**point)
                        try:
                            result = _fit_peer(peer, table, eps, fit_seed(run_seed, k, j), X, y, X_test, point)
                        except BaselineUnavailable as error:
                            result = {"bound": "unavailable", "note": str(error).splitlines()[0][:200]}
                        record(peer, eps, (r, f, s), result, y_test, config)
                        bar.update()
    bar.close()
    frame = pd.DataFrame(rows)
    frame["table_seconds"] = time.perf_counter() - start
    return frame


def run_panel(tables: Sequence[str] | None = None, epsilons: Sequence[float] | None = None,
              out: str | os.PathLike = "docs", seed: int = 0, quick: bool = False, *,
              progress: bool = True) -> dict[str, Any]:
    """Run the panel on ``tables``, update ``bench_panel.csv`` and the panel's section of ``BENCHMARKS.md``.

    Parameters
    ----------
    tables : keys of :data:`.panel_data.TABLES`; None: all of them (or :data:`QUICK`'s with ``quick``).
    epsilons : ε of the private entries (each finite and > 0); None: :data:`EPSILONS` (or :data:`QUICK`'s).
    out : directory of the CSV and of ``BENCHMARKS.md``.
    seed : seeds the splits, the generated table and every fit (a release uses ``random_state=None``).
    quick : :data:`QUICK`: two ε, one repetition of two folds, the generated table at 20,000 rows (tests).
    progress : show progress bars.

    Returns
    -------
    dict
        ``csv`` and ``markdown`` (paths written), ``verdicts`` ({table: {ε: verdict line}}) and ``run_time_s``.

    Raises
    ------
    ValueError
        For an unknown table or an ε that is not finite and > 0, before any fit.
    """
    tables = tuple(tables or (QUICK["tables"] if quick else TABLES))
    epsilons = tuple(epsilons or (QUICK["epsilons"] if quick else EPSILONS))
    unknown = [name for name in tables if name not in TABLES]
    if unknown:
        raise ValueError(f"tables must be among {TABLES}; got {unknown}.")
    if not all(np.isfinite(eps) and eps > 0 for eps in epsilons):
        raise ValueError(f"epsilons must be finite and > 0; got {list(epsilons)}.")
    start = time.perf_counter()
    frames = [run_table(name, epsilons=epsilons, plan=QUICK["plan"] if quick else None, seed=seed,
                        admin_rows=QUICK["admin_rows"] if quick else None, progress=progress) for name in tables]
    saved = save_table_run(pd.concat(frames, ignore_index=True), pathlib.Path(out), CSV, tables, panel_section,
                           summary_rows)
    return {**saved, "run_time_s": time.perf_counter() - start}


def with_panel_section(text: str, out: str | os.PathLike) -> str:
    """``text`` (the rest of ``BENCHMARKS.md``) with the panel's section appended when ``out`` holds :data:`CSV`."""
    return with_csv_section(text, pathlib.Path(out) / CSV, panel_section)
