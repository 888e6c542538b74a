"""Head-to-head benchmark on UCI Adult (``dpconvex bench adult``), reproducing Chen et al.'s protocol.

Repeated stratified 5-fold cross-validation at ε ∈ {0.01, …, 5}, δ = 1e-8, for two tasks:
``logistic`` (:class:`~dpconvex.PrivateLogisticRegression`) and ``svm`` (the huberised-hinge
:class:`~dpconvex.PrivateHuberSVC`, Chen et al. §5.1).  Every dpconvex method runs with its
**default** hyperparameters (only ε, δ and a per-fit seed are passed); the peer baselines of
:mod:`.baselines` run with theirs.  A separate *oracle-tuned* section gives every method, ours
included, the same small grid of λ and keeps the value best on the test folds — labelled as not
private.  Records go to ``bench_adult_<task>.csv``; :mod:`.bench_report` renders
``BENCHMARKS.md`` and the plots from every CSV present, so ``--task svm`` updates only its part.
The seeds make the benchmark reproducible; a release must use ``random_state=None``.
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import RepeatedStratifiedKFold
from tqdm.auto import tqdm

from ..datasets.adult import load_adult
from ..estimators import PrivateHuberSVC, PrivateLogisticRegression
from ..losses import HuberizedHingeLoss, LogisticLoss
from ..mechanisms import METHODS
from . import bench_report
from .baselines import BASELINES, BaselineUnavailable
from .bench_scaling import ADULT_SIZES, run_scaling

__all__ = ["TASKS", "FULL_EPSILONS", "QUICK", "ORACLE_GRID", "run_adult_benchmark", "run_task"]

TASKS = {"logistic": (PrivateLogisticRegression, LogisticLoss()), "svm": (PrivateHuberSVC, HuberizedHingeLoss(0.5))}
FULL_EPSILONS = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
L2 = 1e-3  # the estimators' default λ; the non-private reference and the baselines use the same
#: λ grid of the oracle-tuned section (the default 1e-3 is reused from the default run).
ORACLE_GRID = (1e-4, 1e-2)
ORACLE_EPSILONS = (0.05, 0.1, 0.2)
PRIVATE_BASELINES = ("objpert", "sgd_ma", "diffprivlib")
#: ``--quick``: two ε, the first two of the five folds, no oracle section, small timing sizes (CI, < 2 min).
QUICK = {"epsilons": (0.05, 0.2), "repeats": 1, "folds": 2, "oracle_epsilons": (), "sizes": (5_000, 10_000),
         "synthetic": None}


def _fit_seed(seed: int, *indices: int) -> int:
    """A per-fit seed derived from ``seed`` and the fit's indices."""
    return int(np.random.SeedSequence([seed, *indices]).generate_state(1)[0])


def _signed(y: np.ndarray) -> np.ndarray:
    return np.where(y == 1, 1.0, -1.0)


def _ours(task: str, method: str, epsilon: float, delta: float, l2: float, seed: int, X, y, loss) -> dict[str, Any]:
    estimator = TASKS[task][0](epsilon=epsilon, delta=delta, method=method, l2_regularization=l2, classes=[-1, 1],
                                 random_state=seed)
    tic = time.perf_counter()
    estimator.fit(X, _signed(y))
    elapsed = time.perf_counter() - tic
    cert = estimator.privacy_report_
    return {"coef": estimator.coef_, "intercept": estimator.intercept_, "fit_time": elapsed, "bound": cert.bound,
            "certified_epsilon": cert.epsilon, "note": ""}


def _baseline(name: str, epsilon: float, delta: float, l2: float, seed: int, X, y, loss) -> dict[str, Any]:
    tic = time.perf_counter()
    try:
        # The non-private baselines ignore ε (recorded as ∞); they are given a valid placeholder.
        fit = BASELINES[name](X, _signed(y), loss=loss, epsilon=epsilon if np.isfinite(epsilon) else 1.0,
                              delta=delta, l2_regularization=l2, random_state=seed)
    except BaselineUnavailable as error:
        return {"coef": None, "intercept": 0.0, "fit_time": np.nan, "bound": "unavailable",
                "certified_epsilon": np.nan, "note": str(error).splitlines()[0][:200]}
    return {"coef": fit.coef, "intercept": fit.intercept, "fit_time": time.perf_counter() - tic, "bound": fit.bound,
            "certified_epsilon": epsilon if name in PRIVATE_BASELINES else np.inf, "note": fit.note}


def _score(result: dict[str, Any], loss, X_train, y_train, X_test, y_test) -> dict[str, Any]:
    if result["coef"] is None:
        return {"accuracy": np.nan, "objective": np.nan}
    margin = X_test @ result["coef"] + result["intercept"]
    return {"accuracy": float(np.mean(np.where(margin > 0, 1.0, -1.0) == _signed(y_test))),
            "objective": loss.objective(result["coef"], X_train, _signed(y_train), L2)}


def run_task(task: str, X: np.ndarray, y: np.ndarray, *, epsilons: Sequence[float], repeats: int,
             methods: Sequence[str], baselines: Sequence[str], oracle_epsilons: Sequence[float],
             delta: float = 1e-8, seed: int = 0, folds: int | None = None, progress: bool = True) -> pd.DataFrame:
    """Every fit of one task: a row per (kind, method, ε, λ, fold) with accuracy, objective, time, bound.

    ``folds`` keeps only the first folds (``--quick``).  ``kind`` is ``"default"`` (ours with defaults, baselines with theirs; ε = inf for the
    non-private ones) or ``"oracle"`` (λ from :data:`ORACLE_GRID`, chosen later on test folds).
    """
    loss = TASKS[task][1]
    splits = list(RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=seed).split(X, y))
    folds = splits if folds is None else splits[:folds]
    private_baselines = [b for b in baselines if b in PRIVATE_BASELINES]
    public_baselines = [b for b in baselines if b not in PRIVATE_BASELINES]
    oracle = [(eps, l2) for eps in oracle_epsilons for l2 in ORACLE_GRID]
    per_fold = (len(epsilons) * (len(methods) + len(private_baselines)) + len(public_baselines)
                + len(oracle) * (len(methods) + len(private_baselines)))
    bar = tqdm(total=len(folds) * per_fold, disable=not progress, unit="fit", desc=f"adult {task}")
    rows: list[dict[str, Any]] = []

    def record(kind, method, epsilon, l2, fold, result, train, test):
        rows.append({"task": task, "kind": kind, "method": method, "epsilon": float(epsilon), "l2": l2, "fold": fold,
                     **_score(result, loss, X[train], y[train], X[test], y[test]),
                     **{k: result[k] for k in ("fit_time", "bound", "certified_epsilon", "note")}})
        bar.update()

    for f, (train, test) in enumerate(folds):
        for k, name in enumerate(public_baselines):
            result = _baseline(name, np.inf, delta, L2, _fit_seed(seed, f, 99, k), X[train], y[train], loss)
            record("default", f"baseline: {name}", np.inf, L2, f, result, train, test)
        runs = [("default", eps, L2) for eps in epsilons] + [("oracle", eps, l2) for eps, l2 in oracle]
        for i, (kind, eps, l2) in enumerate(runs):
            for j, method in enumerate(methods):
                result = _ours(task, method, eps, delta, l2, _fit_seed(seed, f, i, j), X[train], y[train], loss)
                record(kind, method, eps, l2, f, result, train, test)
            for k, name in enumerate(private_baselines):
                result = _baseline(name, eps, delta, l2, _fit_seed(seed, f, i, 50 + k), X[train], y[train], loss)
                record(kind, f"baseline: {name}", eps, l2, f, result, train, test)
    bar.close()
    return pd.DataFrame(rows)


def run_adult_benchmark(
    out_dir: str | os.PathLike = "docs",
    task: str = "all",
    epsilons: Sequence[float] = FULL_EPSILONS,
    repeats: int = 2,
    methods: Sequence[str] = tuple(METHODS),
    baselines: Sequence[str] = tuple(BASELINES),
    oracle_epsilons: Sequence[float] = ORACLE_EPSILONS,
    sizes: Sequence[int] | None = None,
    synthetic: tuple[int, int] | None = (4_900_000, 120),
    quick: bool = False,
    seed: int = 0,
    delta: float = 1e-8,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the benchmark, write ``bench_adult_<task>.csv`` (and the timing CSV), then ``BENCHMARKS.md``.

    Parameters
    ----------
    out_dir : path, default "docs"
    task : {"all", "logistic", "svm"}
    epsilons, repeats, methods, baselines, oracle_epsilons : the grid (see the module docstring).
    sizes, synthetic : Adult replicate sizes and the synthetic shape of the timing part; ``sizes=()``
        and ``synthetic=None`` skip it (the previous timing CSV, if any, is kept).
    quick : bool
        Override the grid with :data:`QUICK` (CI: two ε, two of the five folds, no oracle, small timings).
    seed : int
        Seeds the folds and every fit (reproducibility of the benchmark only).

    Returns
    -------
    dict
        Paths written, ``summary`` ({task: {method: {ε: mean accuracy}}}) and ``run_time_s``.
    """
    if task not in ("all", *TASKS):
        raise ValueError(f"task must be 'all' or one of {tuple(TASKS)}; got {task!r}.")
    folds = None
    if quick:
        epsilons, repeats, oracle_epsilons = QUICK["epsilons"], QUICK["repeats"], QUICK["oracle_epsilons"]
        folds = QUICK["folds"]
        if sizes is None:
            sizes, synthetic = QUICK["sizes"], QUICK["synthetic"]
    sizes = ADULT_SIZES if sizes is None else sizes
    start = time.perf_counter()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_adult("all")
    summary = {}
    for name in TASKS if task == "all" else (task,):
        frame = run_task(name, X, y, epsilons=epsilons, repeats=repeats, methods=methods, baselines=baselines,
                         oracle_epsilons=oracle_epsilons, delta=delta, seed=seed, folds=folds, progress=progress)
        frame.to_csv(out / f"bench_adult_{name}.csv", index=False)
        default = frame[frame["kind"] == "default"]
        summary[name] = {m: g.groupby("epsilon")["accuracy"].mean().to_dict() for m, g in default.groupby("method")}
    if sizes or synthetic is not None:
        pd.DataFrame(run_scaling(sizes, synthetic, seed=seed, progress=progress)).to_csv(out / "bench_scaling.csv",
                                                                                     index=False)
    command = "dpconvex bench adult" + (" --quick" if quick else f" --repeats {repeats}") + (
        f" --task {task}" if task != "all" else "")
    paths = bench_report.write_report(out, command=command, run_time_s=time.perf_counter() - start, delta=delta,
                                      n=int(y.size), dimension=int(X.shape[1]))
    return {**paths, "summary": summary, "run_time_s": time.perf_counter() - start}

