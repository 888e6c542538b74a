"""A bare CSV against a declared schema: the default after a private schema discovery (``dpconvex bench discovery``).

For each table of :data:`.panel_data.TABLES` and ε of :data:`EPSILONS` (δ = 1e-8), on the splits of
:data:`PLAN` (the first F folds of ``bench panel``'s first repetition of (stratified) 5-fold CV; F = 0:
one 80/20 split in row order) and S seeds per split, the default estimator (``PrivateLogisticRegression()``
/ ``PrivateRidge()`` with only ε, δ, ``classes=`` and a seed) is fitted twice with the same training seed:

* ``declared``: on the table encoded with its declared schema (:func:`.panel_data.load_panel_table`);
* ``discovered``: on its raw cells (:func:`.panel_raw.load_raw_table`), the schema discovered with a
  ``share`` of the budget (``PublicSchemaTransformer.discover``; nothing declared but the label column
  and the task), the model trained with the rest (``fit_with_discovery``): one certificate, ε ≤ the
  requested.  Labels: binary ±1 by the discovered positive label, multi-class the label texts, a
  regression target clipped to the discovered bounds and mapped onto [−1, 1].  A discovery that finds
  fewer than two labels, or misses a label the training part holds, is recorded as ``discovery refused:
  <reason>``; two labels released on a multi-class table are not scored.

Scores: test accuracy, or test R² against the declared run's target (predictions in its units).  The
goal, for n ≥ :data:`GOAL_ROWS`: at most :data:`GOAL` points lost (of accuracy, or of 100·R²).  The
share study refits the discovered entry at each share of :data:`SHARES` on those tables.
"""

from __future__ import annotations

import os
import pathlib
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

from dpconvex import PrivateLogisticRegression, PrivateRidge
from dpconvex.datasets.labels import encode_labels
from dpconvex.datasets.private_release import DEFAULT_DISCOVERY_SHARE
from dpconvex.estimators.discovered_fit import fit_with_discovery
from dpconvex.estimators.preprocessing import PublicSchemaTransformer
from dpconvex.exceptions import CalibrationError, PrivacyLeakWarning
from dpconvex_lab.bench_markdown import save_table_run, with_csv_section
from dpconvex_lab.bench_protocol import fit_seed
from dpconvex_lab.panel_data import TABLES, PanelTable, load_panel_table
from dpconvex_lab.panel_raw import RawTable, load_raw_table

__all__ = ["CSV", "EPSILONS", "GOAL", "PLAN", "QUICK", "SHARES", "TITLE", "discovery_section", "run_discovery",
           "run_table", "share_rows", "summary_rows", "with_discovery_section"]

TITLE = "Bare CSV: private schema discovery"
CSV = "bench_discovery.csv"
EPSILONS = (0.1, 1.0)
DELTA = 1e-8
SHARES = (0.1, 0.3, 0.5)  #: the share study's (the library's default is always fitted too)
GOAL, GOAL_ROWS = {0.1: 3.0, 1.0: 1.0}, 5_000  #: at most GOAL[ε] points lost, on tables of at least GOAL_ROWS rows
#: (folds F of the first repetition, noise seeds S per fold); F = 0: one 80/20 split of the rows in order.
PLAN: dict[str, tuple[int, int]] = {**{name: (5, 3) for name in TABLES}, "adult": (3, 3), "admin": (0, 3)}
#: Rows of the generated table: the discovery reads its 40 columns cell by cell (about 20 s per 160,000 rows).
ADMIN_ROWS = 100_000
#: The columns of a fit's record (then ``table_seconds``, ``run_date``, ``machine``).
COLUMNS = ("table", "task", "n", "plan", "method", "share", "epsilon", "fold", "seed", "score", "status",
           "certified_epsilon", "training_epsilon", "d", "fit_time", "discovery_time", "dropped", "types", "labels")
#: ``--quick``: two small tables and fair (its share study), two folds, one seed.
QUICK = {"tables": ("iris", "diabetes", "fair"), "plan": (2, 1), "admin_rows": 20_000}


def _splits(table: PanelTable, folds: int, seed: int) -> list[tuple[Any, Any]]:
    """The first ``folds`` folds of ``bench panel``'s first repetition (the same arrays whatever its R), or 80/20."""
    if folds == 0:
        cut = int(round(0.8 * table.n))
        return [(np.arange(cut), np.arange(cut, table.n))]
    kind = RepeatedKFold if table.task == "regression" else RepeatedStratifiedKFold
    return list(kind(n_splits=5, n_repeats=1, random_state=seed).split(table.X, table.y))[:folds]


def _estimator(task: str, epsilon: float, seed: int, classes) -> Any:
    if task == "regression":
        return PrivateRidge(epsilon=epsilon, delta=DELTA, random_state=seed)
    return PrivateLogisticRegression(epsilon=epsilon, delta=DELTA, classes=list(classes), random_state=seed)


def _to_unit(y: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    return np.clip((y - (bounds[1] + bounds[0]) / 2) / ((bounds[1] - bounds[0]) / 2), -1.0, 1.0)


def _from_unit(predicted: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    return (bounds[1] + bounds[0]) / 2 + (bounds[1] - bounds[0]) / 2 * predicted


def _score(task: str, truth: np.ndarray, predicted: np.ndarray) -> float:
    if task == "regression":
        return float(1.0 - np.sum((truth - predicted) ** 2) / np.sum((truth - truth.mean()) ** 2))
    return float(np.mean(predicted == truth))


def _declared(table: PanelTable, train, test, epsilon: float, seed: int) -> dict[str, Any]:
    y = table.y[train] if table.task != "regression" else _to_unit(table.y[train], table.target_bounds)
    tic = time.perf_counter()
    estimator = _estimator(table.task, epsilon, seed, table.classes).fit(table.X[train], y)
    elapsed, predicted = time.perf_counter() - tic, estimator.predict(table.X[test])
    if table.task == "regression":
        predicted = _from_unit(predicted, table.target_bounds)
    return {"score": _score(table.task, table.y[test], predicted), "fit_time": elapsed, "d": table.d, "status": "ok",
            "certified_epsilon": estimator.privacy_report_.epsilon}


def _discovered(raw: RawTable, table: PanelTable, train, test, epsilon: float, share: float,
                seed: int) -> dict[str, Any]:
    """Discovery, encoding and fit on the raw cells of ``train``; scored on ``test`` as the declared run is."""
    frame, frame_test, labels = raw.frame.iloc[train], raw.frame.iloc[test], raw.labels()
    tic = time.perf_counter()
    try:
        transformer = PublicSchemaTransformer.discover(frame, raw.target, epsilon=epsilon, delta=DELTA, share=share,
                                                       random_state=fit_seed(seed, 1), task=raw.task).fit(frame)
    except ValueError as error:
        return {"status": f"discovery refused: {str(error).splitlines()[0]}", "fit_time": time.perf_counter() - tic}
    schema = transformer.schema
    found = {"discovery_time": time.perf_counter() - tic, "dropped": "; ".join(sorted(transformer.discovery.dropped)),
             "types": f"{len(schema.numerical)} numerical, {len(schema.categorical)} categorical"}
    if raw.task == "regression":
        y, classes = _to_unit(labels[train].astype(float), schema.target_bounds), None
        found["labels"] = "[{:g}, {:g}]".format(*schema.target_bounds)
    elif schema.classes is None:
        classes, y = [-1, 1], np.where(labels[train] == schema.positive_label, 1, -1)
        found["labels"] = f"2 (positive {schema.positive_label})"
        if table.task == "multiclass":
            return {**found, "status": f"not scored: 2 of the {len(table.classes)} labels released (a binary model)",
                    "fit_time": time.perf_counter() - tic}
    else:
        # the library's rule: a withheld label is trained as the first released one, record by record
        classes, found["labels"] = list(schema.classes), str(len(schema.classes))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            y = encode_labels(frame[raw.target], schema)
    X = None
    try:
        X, X_test = transformer.transform(frame), transformer.transform(frame_test)
        model, certificate = fit_with_discovery(_estimator(table.task, epsilon, seed, classes), X, y,
                                                transformer.discovery)
    except (ValueError, CalibrationError) as error:  # a failure
        dropped_all = X is not None and X.shape[1] == 0  # every feature column dropped by the discovery
        prefix = "discovery refused" if dropped_all else "failed"
        return {**found, "status": f"{prefix}: {str(error).splitlines()[0]}", "fit_time": time.perf_counter() - tic}
    predicted = model.predict(X_test)
    if raw.task == "regression":
        truth, predicted = table.y[test], _from_unit(predicted, schema.target_bounds)
    elif schema.classes is None:
        truth = np.where(labels[test] == schema.positive_label, 1, -1)
    else:
        truth = labels[test]
    return {**found, "score": _score(table.task, truth, predicted), "certified_epsilon": certificate.epsilon,
            "training_epsilon": model.privacy_report_.epsilon, "d": X.shape[1], "status": "ok",
            "fit_time": time.perf_counter() - tic}


def run_table(name: str, *, epsilons: Sequence[float] = EPSILONS, plan: tuple[int, int] | None = None,
              shares: Sequence[float] = (), seed: int = 0, admin_rows: int = ADMIN_ROWS) -> pd.DataFrame:
    """Every fit of one table: a row per (entry, share, ε, fold, seed).

    Parameters
    ----------
    name : str
        A key of :data:`.panel_data.TABLES`.
    epsilons : sequence of float
        The requested ε of every fit.
    plan : (folds, seeds), optional
        None: :data:`PLAN` ``[name]``.
    shares : sequence of float
        Shares besides the library's default, fitted on tables of at least :data:`GOAL_ROWS` rows.
    seed, admin_rows : int
        Seeds the splits, the generated table and every fit; rows of the generated table.

    Returns
    -------
    pandas.DataFrame
        Columns ``table, task, n, plan, method`` (``declared`` or ``discovered``), ``share`` (NaN for declared),
        ``epsilon, fold, seed, score`` (accuracy or R²; NaN when not scored), ``status, certified_epsilon,
        training_epsilon, d, fit_time, discovery_time, dropped, types, labels, table_seconds``.
    """
    start = time.perf_counter()
    options = {"admin_rows": admin_rows, "seed": seed}
    table, raw = load_panel_table(name, **options), load_raw_table(name, **options)
    folds, seeds = PLAN[name] if plan is None else plan
    shares = sorted({DEFAULT_DISCOVERY_SHARE, *(shares if table.n >= GOAL_ROWS else ())})
    common = {"table": name, "task": table.task, "n": table.n, "plan": f"F={folds} S={seeds}"}
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping and unreleased-category notices of the discovered encoding
        for f, (train, test) in enumerate(_splits(table, folds, seed)):
            for e, eps in enumerate(epsilons):
                for s in range(seeds):
                    run_seed = fit_seed(seed, TABLES.index(name), 0, f, e, s)  # bench panel's seed of this fit
                    index = {"epsilon": float(eps), "fold": f, "seed": s}
                    rows.append({**common, "method": "declared", "share": np.nan, **index,
                                 **_declared(table, train, test, eps, run_seed)})
                    for share in shares:
                        rows.append({**common, "method": "discovered", "share": share, **index,
                                     **_discovered(raw, table, train, test, eps, share, run_seed)})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["table_seconds"] = time.perf_counter() - start
    return frame


def _paired(frame: pd.DataFrame, share: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(declared rows, discovered rows at ``share``), aligned on (fold, seed)."""
    declared = frame[frame["method"] == "declared"].set_index(["fold", "seed"]).sort_index()
    found = frame[(frame["method"] == "discovered") & np.isclose(frame["share"], share)].set_index(["fold", "seed"])
    return declared, found.reindex(declared.index)


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    se = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else np.nan
    return (float(values.mean()) if values.size else np.nan), se


def _cell(frame: pd.DataFrame, share: float) -> dict[str, Any]:
    """The numbers of one (table, ε) at one share: scores, paired difference in points, refusals."""
    declared, found = _paired(frame, share)  # scores in points: 100 × accuracy or R²
    refused = found[found["status"] != "ok"]["status"]
    return {"declared": _mean_se(100 * declared["score"].to_numpy(float)),
            "discovered": _mean_se(100 * found["score"].to_numpy(float)),
            "difference": _mean_se(100 * (found["score"] - declared["score"]).to_numpy(float)),
            "refused": len(refused), "fits": len(found), "reason": refused.iloc[0] if len(refused) else "",
            "declared_epsilon": float(declared["certified_epsilon"].max()),
            "discovered_epsilon": float(found["certified_epsilon"].max())}


def _verdict(n: int, epsilon: float, cell: dict[str, Any]) -> str:
    difference, se = cell["difference"]
    lost = f"discovered − declared {difference:+.2f} ± {se:.2f} points" if np.isfinite(difference) else "no fit scored"
    notes = []
    if cell["refused"]:  # the reason's first clause (the CSV keeps it whole)
        notes.append(f"{cell['reason'].split('; ')[0]} ({cell['refused']} of {cell['fits']} fits)")
    if cell["discovered_epsilon"] > epsilon:
        notes.append(f"certificate ε {cell['discovered_epsilon']:.4g} exceeds the requested {epsilon:g}")
    if n < GOAL_ROWS or epsilon not in GOAL:
        verdict = f"{lost} (small table: no goal)" if n < GOAL_ROWS else f"{lost} (no goal at this ε)"
    else:
        met = np.isfinite(difference) and -difference <= GOAL[epsilon] and not cell["refused"]
        verdict = f"{'met' if met else 'not met'}: {lost} (goal: ≥ −{GOAL[epsilon]:g})"
    return "; ".join([verdict, *notes])


def _pm(value: tuple[float, float] | float, digits: str = ".2f") -> str:
    mean, se = value if isinstance(value, tuple) else (value, np.nan)
    return "–" if not np.isfinite(mean) else f"{mean:{digits}}" + (f" ± {se:{digits}}" if np.isfinite(se) else "")


def summary_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per (table, ε) at the default share: declared, discovered, difference, certificates, verdict."""
    rows = []
    for (table, epsilon), group in frame.groupby(["table", "epsilon"], sort=False):
        cell = _cell(group, DEFAULT_DISCOVERY_SHARE)
        found = group[(group["method"] == "discovered") & np.isclose(group["share"], DEFAULT_DISCOVERY_SHARE)]
        dropped = [text for text in found["dropped"] if isinstance(text, str)]
        counts = pd.Series([c for text in dropped for c in text.split("; ") if c], dtype=object).value_counts()
        declared = group[group["method"] == "declared"]
        rows.append({"table": table, "n": int(group["n"].iloc[0]), "task": group["task"].iloc[0],
                     "plan": group["plan"].iloc[0], "epsilon": float(epsilon), **cell,
                     "d": f"{int(declared['d'].iloc[0])} / {found['d'].median():.0f}" if found["d"].notna().any()
                     else f"{int(declared['d'].iloc[0])} / –",
                     "types": found["types"].mode().iloc[0] if found["types"].notna().any() else "–",
                     "labels": found["labels"].mode().iloc[0] if found["labels"].notna().any() else "–",
                     "dropped": ", ".join(f"{c} ({k}/{len(found)})" for c, k in counts.items()) or "none",
                     "time": (float(declared["fit_time"].median()), float(found["fit_time"].median())),
                     "verdict": _verdict(int(group["n"].iloc[0]), float(epsilon), cell)})
    return rows


def share_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """One row per (table, ε, share) of the tables fitted at several shares."""
    rows = []
    for (table, epsilon), group in frame.groupby(["table", "epsilon"], sort=False):
        shares = sorted(group["share"].dropna().unique())
        for share in shares if len(shares) > 1 else ():
            rows.append({"table": table, "n": int(group["n"].iloc[0]), "epsilon": float(epsilon), "share": share,
                         **_cell(group, share)})
    return rows


def _recommendation(rows: list[dict[str, Any]]) -> list[str]:
    """Per ε, the mean difference over the study's tables at each share (``rows`` not empty), and the best share."""
    study = pd.DataFrame([{"epsilon": r["epsilon"], "share": r["share"], "difference": r["difference"][0],
                           "refused": r["refused"]} for r in rows])
    means = study.groupby(["share", "epsilon"])["difference"].mean().unstack()
    worst = study.groupby("share")["difference"].min()
    refused = study.groupby("share")["refused"].sum()
    best = min(means.index, key=lambda share: (refused[share], -means.loc[share].mean()))
    lines = ["Mean difference (discovered − declared, points) over the study's tables:", "",
             "| share | " + " | ".join(f"ε = {e:g}" for e in means.columns) + " | worst cell | refused fits |",
             "|---" * (len(means.columns) + 3) + "|"]
    for share, row in means.iterrows():
        lines.append(f"| {share:g}{' (default)' if np.isclose(share, DEFAULT_DISCOVERY_SHARE) else ''} | "
                     + " | ".join(f"{v:+.2f}" for v in row) + f" | {worst[share]:+.2f} | {int(refused[share])} |")
    return [*lines, "", f"Measured choice (fewest refused fits, then the largest mean difference): share = {best:g} "
                        f"(the library's default is {DEFAULT_DISCOVERY_SHARE:g})."]


def discovery_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of the section of ``BENCHMARKS.md``."""
    frame = frame.sort_values("table", key=lambda names: names.map(TABLES.index), kind="stable")
    dates = ", ".join(sorted(frame["run_date"].astype(str).unique()))
    admin = frame.loc[frame["table"] == "admin", "n"]
    seconds = frame.groupby("table")["table_seconds"].first().sum() / 60
    lines = [f"## {TITLE}", "",
             "Regenerate with `OPENBLAS_NUM_THREADS=1 dpconvex bench discovery --out docs` (`--tables` for "
             f"some; records in `bench_discovery.csv`; run {dates} on {frame['machine'].iloc[0]}, {seconds:.1f} min "
             "for the tables shown; module `dpconvex_lab.bench_discovery`, raw cells `dpconvex_lab.panel_raw`). Each "
             "panel table is fitted twice by the default (`PrivateLogisticRegression()` / `PrivateRidge()` with only "
             "ε, δ = 1e-8, `classes=` and a seed) on the same splits and training seeds: *declared*, encoded by its "
             "declared schema (as in the panel), and *discovered*, from its raw cells with nothing declared but the "
             "label column and the task: `PublicSchemaTransformer.discover(..., share=...)` reads the columns' "
             "types, bounds, categories and the label set (or target bounds) privately, `fit_with_discovery` trains "
             "with the rest, and the certificate of the pair is one (ε, δ) ≤ the requested. Coded columns stay "
             "numbers (a bare CSV has no types), so the discovery reads them as numerical."
             + (f" The generated table runs at {int(admin.iloc[0]):,} rows (not 1,000,000: the discovery reads 40 "
                "columns cell by cell, about 20 s per 160,000 training rows and ε)." if len(admin) else ""),
             "",
             f"Splits: the first F folds of `bench panel`'s first repetition of (stratified) 5-fold CV (F = 0: one "
             f"80/20 split), S seeds per fold. Cells: mean ± standard error over the F·S fits, accuracy in % or 100·R² "
             f"(against the declared target); *difference*: discovered − declared in points, paired by fit. "
             f"Discovery share {DEFAULT_DISCOVERY_SHARE:g} (the library's default) in the first table. Goal, for "
             f"n ≥ {GOAL_ROWS:,}: at most {GOAL[1.0]:g} point lost at ε = 1 and {GOAL[0.1]:g} at ε = 0.1 (for the "
             "regression table, points of 100·R²). ε certified: the largest over the fits, declared / discovered. "
             "Time: median seconds per fit, declared / discovered (discovery, encoding and fits included).",
             "", "### Declared against discovered", "",
             "| table | n | task | plan | ε | declared | discovered | difference | ε certified | d | discovered "
             "types | labels | dropped columns | time (s) | verdict |", "|---" * 15 + "|"]
    for r in summary_rows(frame):
        lines.append(f"| {r['table']} | {r['n']:,} | {r['task']} | {r['plan']} | {r['epsilon']:g} | "
                     f"{_pm(r['declared'])} | {_pm(r['discovered'])} | {_pm(r['difference'])} | "
                     f"{_pm(r['declared_epsilon'], '.4g')} / {_pm(r['discovered_epsilon'], '.4g')} | {r['d']} | "
                     f"{r['types']} | {r['labels']} | {r['dropped']} | {r['time'][0]:.3g} / {r['time'][1]:.3g} | "
                     f"{r['verdict']} |")
    shares = share_rows(frame)
    if shares:
        lines += ["", "### The discovery's share", "",
                  f"The discovered entry refitted at each share on the tables of n ≥ {GOAL_ROWS:,} (same splits and "
                  "seeds; the share is of μ² and of δ).", "",
                  "| table | n | ε | share | discovered | difference | ε certified | refused |", "|---" * 8 + "|"]
        for r in shares:
            lines.append(f"| {r['table']} | {r['n']:,} | {r['epsilon']:g} | {r['share']:g} | {_pm(r['discovered'])} | "
                         f"{_pm(r['difference'])} | {_pm(r['discovered_epsilon'], '.4g')} | {r['refused']} |")
        lines += ["", *_recommendation(shares)]
    return lines


def run_discovery(tables: Sequence[str] | None = None, epsilons: Sequence[float] | None = None,
                  out: str | os.PathLike = "docs", seed: int = 0, quick: bool = False, *,
                  shares: Sequence[float] = SHARES, admin_rows: int | None = None) -> dict[str, Any]:
    """Run the comparison on ``tables``; update ``bench_discovery.csv`` and the section of ``BENCHMARKS.md``.

    Parameters
    ----------
    tables : sequence of str, optional
        Keys of :data:`.panel_data.TABLES`; None: all (or :data:`QUICK`'s with ``quick``).
    epsilons : sequence of float, optional
        Requested ε (finite, > 0); None: :data:`EPSILONS`.
    out : str or path
        Directory of the CSV and of ``BENCHMARKS.md``.
    seed : int
        Seeds the splits, the generated table and every fit.
    quick : bool
        :data:`QUICK`: its tables, two folds, one seed, the generated table at 20,000 rows (tests).
    shares, admin_rows
        The share study's shares (see :func:`run_table`); rows of the generated table (None: :data:`ADMIN_ROWS`).

    Returns
    -------
    dict
        ``csv``, ``markdown`` (paths written), ``verdicts`` ({table: {ε: verdict}}) and ``run_time_s``.

    Raises
    ------
    ValueError
        For an unknown table or an ε that is not finite and > 0, before any fit.
    """
    tables, epsilons = tuple(tables or (QUICK["tables"] if quick else TABLES)), tuple(epsilons or EPSILONS)
    if any(name not in TABLES for name in tables):
        raise ValueError(f"tables must be among {TABLES}; got {[name for name in tables if name not in TABLES]}.")
    if not all(np.isfinite(eps) and eps > 0 for eps in epsilons):
        raise ValueError(f"epsilons must be finite and > 0; got {list(epsilons)}.")
    rows = admin_rows or (QUICK["admin_rows"] if quick else ADMIN_ROWS)
    start = time.perf_counter()
    frame = pd.concat([run_table(name, epsilons=epsilons, plan=QUICK["plan"] if quick else None, shares=shares,
                                 seed=seed, admin_rows=rows) for name in tables], ignore_index=True)
    saved = save_table_run(frame, pathlib.Path(out), CSV, tables, discovery_section, summary_rows)
    return {**saved, "run_time_s": time.perf_counter() - start}


def with_discovery_section(text: str, out: str | os.PathLike) -> str:
    """``text`` (the rest of ``BENCHMARKS.md``) with the discovery's section appended when ``out`` holds :data:`CSV`."""
    return with_csv_section(text, pathlib.Path(out) / CSV, discovery_section)
