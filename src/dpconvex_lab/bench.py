"""Head-to-head benchmark on UCI Adult (``dpconvex bench adult``), reproducing Chen et al.'s protocol.

Repeated stratified 5-fold cross-validation at ε ∈ {0.01, …, 10}, δ = 1e-8, for two tasks:
``logistic`` (:class:`~dpconvex.PrivateLogisticRegression`) and ``svm`` (the huberised-hinge
:class:`~dpconvex.PrivateHuberSVC`, Chen et al. §5.1).  The entry ``"auto (default)"``
(:data:`DEFAULT`) is the estimator as a user gets it: only ε, δ, ``classes=[-1, 1]`` and a per-fit
seed are passed, so ``method="auto"`` and ``l2_regularization="auto"`` choose the trainer and λ;
it stands for the method ``auto`` (fitting ``method="auto"`` again would repeat the same fit).
Every other named dpconvex method runs with ``method=<name>`` and otherwise its **default**
hyperparameters (λ included: 1e-3 for every method but ``auto``); the peer baselines of
:mod:`.baselines` run with theirs (λ = 1e-3).  Each of our fits records the λ it used (the
estimator's ``l2_regularization_``) and its training objective at that λ.  Every fit also records
``time_ratio``: its fit time over the median of three fits of the scikit-learn reference
(:data:`.bench_scaling.SKLEARN_REFERENCE`) on the same training fold, in the same process.  A
separate *oracle-tuned* section gives every entry, ours included, the same small grid of λ and
keeps the value best on the test folds — labelled as not private.  Records go to
``bench_adult_<task>.csv``; the default estimator's fit time on Adult and on Adult ×10 against
scikit-learn goes to ``bench_default_speed.csv`` (:func:`.bench_scaling.run_default_speed`); DP-SGD
tuned on the test folds under both neighbouring relations (:mod:`.bench_tuned`, not private: the
headline's same-run reference) goes to ``bench_tuned_<task>.csv``; the headline replicated on fresh
noise seeds (:mod:`.bench_replicates`: the default, tuned DP-SGD at its chosen grid point and DP-SGD
with its defaults, several seeds per fold) goes to ``bench_replicates_<task>.csv``;
:mod:`.bench_report` renders ``BENCHMARKS.md`` and the plots from every CSV present, so
``--task svm`` updates only its part.  The seeds make the benchmark reproducible; a release must use
``random_state=None``.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dpconvex.datasets.adult import load_adult
from dpconvex.mechanisms import METHODS
from dpconvex_lab import bench_replicates, bench_report, bench_tuned
from dpconvex_lab.baselines import BASELINES
from dpconvex_lab.bench_protocol import (  # noqa: F401 (DEFAULT, L2, cv_folds, default_method: re-exported)
    DEFAULT,
    L2,
    PRIVATE_BASELINES,
    cv_folds,
    default_method,
)
from dpconvex_lab.bench_protocol import fit_baseline as _baseline  # run_task's seams (a test replaces them)
from dpconvex_lab.bench_protocol import fit_ours as _ours
from dpconvex_lab.bench_protocol import fit_seed as _fit_seed
from dpconvex_lab.bench_protocol import score_fit as _score
from dpconvex_lab.bench_protocol import signed_labels as _signed
from dpconvex_lab.bench_scaling import (
    ADULT_SIZES,
    SPEED_REPLICATIONS,
    TASKS,
    run_default_speed,
    run_scaling,
    sklearn_reference_time,
)
from dpconvex_lab.bench_selection import SELECTION_EPSILONS, run_selection_benchmark

__all__ = ["TASKS", "FULL_EPSILONS", "QUICK", "ORACLE_GRID", "DEFAULT", "default_method", "run_adult_benchmark",
           "run_task"]

FULL_EPSILONS = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: λ grid of the oracle-tuned section (each entry's default λ is added from the default run).
ORACLE_GRID = (1e-4, 1e-2)
ORACLE_EPSILONS = (0.05, 0.1, 0.2)
#: ``--quick``: two ε, the first two of the five folds, no oracle section, small timing sizes, one
#: default-vs-scikit-learn cell on 10 % of Adult (first task only) and the tuned DP-SGD section on
#: :data:`.bench_tuned.QUICK_GRID` (two cheap grid points), and of the named methods only the default's
#: two families (noisy GD and noisy SGD) unless ``methods`` names others (CI, ~2 min).
QUICK = {"epsilons": (0.05, 0.2), "repeats": 1, "folds": 2, "oracle_epsilons": (), "sizes": (5_000, 10_000),
         "synthetic": None, "speed_epsilons": (1.0,), "speed_replications": (0.1,),
         "methods": ("noisy_gd", "noisy_sgd")}
SPEED_CSV = "bench_default_speed.csv"


def _checkpoint(directory: pathlib.Path | None, task: str, fold: int, grid: tuple) -> pathlib.Path | None:
    """Where fold ``fold``'s rows of this grid are kept between an interrupted run and its ``resume``."""
    if directory is None:
        return None
    key = hashlib.sha1(repr(grid).encode()).hexdigest()[:12]
    return directory / f"{task}-{key}-fold{fold}.csv"


def run_task(task: str, X: np.ndarray, y: np.ndarray, *, epsilons: Sequence[float], repeats: int,
             methods: Sequence[str], baselines: Sequence[str], oracle_epsilons: Sequence[float],
             delta: float = 1e-8, seed: int = 0, folds: int | None = None, default: bool = True,
             progress: bool = True, checkpoints: pathlib.Path | None = None) -> pd.DataFrame:
    """Every fit of one task: a row per (kind, method, ε, λ, fold) with accuracy, objective, time, bound.

    Parameters
    ----------
    task : {"logistic", "svm"}
    X, y : Adult's rows and its {0, 1} labels (fitted with labels ±1).
    epsilons, repeats : the ε grid of the ``"default"`` rows and the repetitions of 5-fold CV.
    methods : names of :data:`dpconvex.mechanisms.METHODS`; with ``default``, the estimators'
        default method (``"auto"``) is not fitted again under its own name: :data:`DEFAULT` is it.
    baselines : names of :data:`.baselines.BASELINES`.
    oracle_epsilons : ε of the oracle-tuned rows (λ from :data:`ORACLE_GRID`); ``()`` skips them.
    delta, seed : δ of every fit; the seed of the folds and of every fit.
    folds : keep only the first ``folds`` folds (``--quick``); None keeps every fold.
    default : bool
        Add the entry :data:`DEFAULT` (the estimator with only ε, δ, the label set and the seed).
    progress : bool
        Show a progress bar.
    checkpoints : path, optional
        Directory of per-fold checkpoints: each finished fold's rows are written there, and a fold
        whose checkpoint exists (same task and grid: the file name holds a hash of them) is read
        back instead of fitted — so an interrupted run resumes where it stopped.  The code is not
        part of the key: resume after an interruption, not after changing the trainers.

    Returns
    -------
    pandas.DataFrame
        One row per fit.  ``kind`` is ``"default"`` (ours with defaults — no λ passed —,
        baselines with theirs; ε = inf for the non-private ones) or ``"oracle"`` (λ from
        :data:`ORACLE_GRID`, chosen later on test folds).  ``l2`` is the λ the fit used (the
        estimator's ``l2_regularization_``; 1e-3 for the baselines), ``objective`` the training
        objective at that λ and ``objective_ref`` at λ = 1e-3; ``mechanism`` the trainer that ran.
        ``sklearn_fit_time`` is the median of 3 fits of the scikit-learn reference on that
        training fold in this process, ``time_ratio`` = ``fit_time / sklearn_fit_time`` (NaN for
        an unavailable baseline).
    """
    loss = TASKS[task][1]
    folds = cv_folds(X, y, repeats=repeats, seed=seed, folds=folds)
    private_baselines = [b for b in baselines if b in PRIVATE_BASELINES]
    public_baselines = [b for b in baselines if b not in PRIVATE_BASELINES]
    oracle = [(eps, l2) for eps in oracle_epsilons for l2 in ORACLE_GRID]
    # The default entry's seed index (40) leaves the named methods' seeds as they were without it;
    # it replaces the named fit of the default method (the same estimator, the same options).
    skip = default_method(task) if default else None
    ours = ([(40, DEFAULT)] if default else []) + [(j, m) for j, m in enumerate(methods) if m != skip]
    per_fold = (len(epsilons) * (len(ours) + len(private_baselines)) + len(public_baselines)
                + len(oracle) * (len(ours) + len(private_baselines)))
    bar = tqdm(total=len(folds) * per_fold, disable=not progress, unit="fit", desc=f"adult {task}")
    rows: list[dict[str, Any]] = []

    def record(kind, method, epsilon, fold, result, train, test, reference):
        rows.append({"task": task, "kind": kind, "method": method, "epsilon": float(epsilon), "l2": result["l2"],
                     "fold": fold, **_score(result, loss, X[train], y[train], X[test], y[test]),
                     **{k: result[k] for k in ("fit_time", "bound", "certified_epsilon", "note")},
                     "mechanism": result.get("mechanism", ""), "sklearn_fit_time": reference,
                     "time_ratio": result["fit_time"] / reference})
        bar.update()

    grid = (task, tuple(epsilons), repeats, tuple(methods), tuple(baselines), tuple(oracle_epsilons), delta, seed,
            default)
    done: list[pd.DataFrame] = []
    for f, (train, test) in enumerate(folds):
        saved = _checkpoint(checkpoints, task, f, grid)
        if saved is not None and saved.exists():
            done.append(pd.read_csv(saved))
            bar.update(per_fold)
            continue
        first = len(rows)
        # The scikit-learn reference of this fold's time ratios: same rows, same process, same threads.
        reference = sklearn_reference_time(task, X[train], _signed(y[train]))
        for k, name in enumerate(public_baselines):
            result = _baseline(name, np.inf, delta, L2, _fit_seed(seed, f, 99, k), X[train], y[train], loss)
            record("default", f"baseline: {name}", np.inf, f, result, train, test, reference)
        # Our default-kind fits pass no λ (the estimator's default); the baselines get L2.
        runs = [("default", eps, None) for eps in epsilons] + [("oracle", eps, l2) for eps, l2 in oracle]
        for i, (kind, eps, l2) in enumerate(runs):
            for j, method in ours:
                result = _ours(task, method, eps, delta, l2, _fit_seed(seed, f, i, j), X[train], y[train], loss)
                record(kind, method, eps, f, result, train, test, reference)
            for k, name in enumerate(private_baselines):
                result = _baseline(name, eps, delta, L2 if l2 is None else l2, _fit_seed(seed, f, i, 50 + k),
                                   X[train], y[train], loss)
                record(kind, f"baseline: {name}", eps, f, result, train, test, reference)
        if saved is not None:
            saved.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows[first:]).to_csv(saved.with_suffix(".tmp"), index=False)
            os.replace(saved.with_suffix(".tmp"), saved)
    bar.close()
    frame = pd.concat([*done, pd.DataFrame(rows)], ignore_index=True) if done else pd.DataFrame(rows)
    return frame.sort_values("fold", kind="stable", ignore_index=True)


def run_adult_benchmark(
    out_dir: str | os.PathLike = "docs",
    task: str = "all",
    epsilons: Sequence[float] = FULL_EPSILONS,
    repeats: int = 2,
    methods: Sequence[str] | None = None,
    baselines: Sequence[str] = tuple(BASELINES),
    oracle_epsilons: Sequence[float] = ORACLE_EPSILONS,
    sizes: Sequence[int] | None = None,
    synthetic: tuple[int, int] | None = (4_900_000, 120),
    speed_epsilons: Sequence[float] | None = None,
    speed_replications: Sequence[float] | None = None,
    default: bool = True,
    tuned: bool = True,
    tuned_grid: Sequence[Mapping[str, float]] | None = None,
    replicates: int | None = None,
    selection: bool = True,
    only_selection: bool = False,
    quick: bool = False,
    seed: int = 0,
    delta: float = 1e-8,
    progress: bool = True,
    resume: bool = False,
) -> dict[str, Any]:
    """Run the benchmark, write ``bench_adult_<task>.csv`` (and the timing CSVs), then ``BENCHMARKS.md``.

    Parameters
    ----------
    out_dir : path, default "docs"
    task : {"all", "logistic", "svm"}
    epsilons, repeats, methods, baselines, oracle_epsilons : the grid (see the module docstring);
        ``methods=None``: every method of :data:`dpconvex.mechanisms.METHODS` (:data:`QUICK`'s with ``quick``).
    sizes, synthetic : Adult replicate sizes and the synthetic shape of the timing part; ``sizes=()``
        and ``synthetic=None`` skip it (the previous timing CSV, if any, is kept).
    speed_epsilons, speed_replications : the default-vs-scikit-learn speed table
        (:func:`.bench_scaling.run_default_speed`, rows of the run's tasks replaced in
        ``bench_default_speed.csv``).  None: every ε of :data:`FULL_EPSILONS` on Adult ×1 and ×10,
        or :data:`QUICK`'s single cell with ``quick`` — unless the timing part is switched off
        (``sizes=()`` and ``synthetic=None``, i.e. ``--no-timing``), which skips it too;
        ``speed_epsilons=()`` skips it.
    default : bool
        Include the :data:`DEFAULT` entry (the estimator with only ε, δ, the label set and a seed).
    tuned : bool
        Run the tuned DP-SGD section (:func:`.bench_tuned.run_tuned_dpsgd`, NOT private) for each task
        of the run, at the ε of ``epsilons`` that the headline shows (0.05, 0.1, 0.2), under both
        relations, on the run's first five folds (or ``--quick``'s two), and write
        ``bench_tuned_<task>.csv``; False (``--no-tuned``) keeps a previous CSV, if any.
    tuned_grid : grid points of that section; None: :data:`.bench_tuned.TUNED_GRID`, or
        :data:`.bench_tuned.QUICK_GRID` with ``quick``.
    replicates : int, optional
        Fresh noise seeds per fold of the replicated headline (:func:`.bench_replicates.run_replicates`:
        the default, tuned DP-SGD at the grid point of ``bench_tuned_<task>.csv`` and DP-SGD with its
        defaults, at the headline's ε of ``epsilons``), written to ``bench_replicates_<task>.csv``.
        None: :data:`.bench_replicates.REPLICATE_SEEDS`, or 1 with ``quick``; 0 skips it (a previous
        CSV is kept).
    selection, only_selection : bool
        Run the private-selection part (:func:`.bench_selection.run_selection_benchmark`: the ``…CV``
        estimators against the default and the oracle) for each task of the run, at the ε of
        ``epsilons`` among :data:`.bench_selection.SELECTION_EPSILONS`; False (``--no-selection``)
        keeps the previous ``bench_selection.csv`` rows, and so does ``quick`` (E[K] = 10 noisy_gd fits per
        entry take minutes on Adult).  ``only_selection`` (``--selection-only``)
        runs that part alone, rewrites its section of ``BENCHMARKS.md`` in place and returns.
    quick : bool
        Override the grid with :data:`QUICK` (CI: two ε, two of the five folds, no oracle, small
        timings, one speed cell for the first task, a two-point tuned DP-SGD grid, one replicate).
    seed : int
        Seeds the folds and every fit (reproducibility of the benchmark only).
    resume : bool
        Every finished fold is checkpointed in ``<out_dir>/.bench_checkpoints`` (removed when the task
        ends); ``resume=True`` (``--resume``) reads back the folds an interrupted run of the same grid
        finished instead of fitting them again.  Without it, old checkpoints are discarded.

    Returns
    -------
    dict
        Paths written, ``summary`` ({task: {method: {ε: mean accuracy}}}) and ``run_time_s``.
    """
    if task not in ("all", *TASKS):
        raise ValueError(f"task must be 'all' or one of {tuple(TASKS)}; got {task!r}.")
    folds = None
    timing_off = sizes is not None and len(sizes) == 0 and synthetic is None
    speed_tasks = tuple(TASKS) if task == "all" else (task,)
    if speed_epsilons is None:
        speed_epsilons = () if timing_off else QUICK["speed_epsilons"] if quick else FULL_EPSILONS
    if speed_replications is None:
        speed_replications = QUICK["speed_replications"] if quick else SPEED_REPLICATIONS
    for replication in speed_replications:  # fail before the long part, not after it
        if not replication > 0 or (replication >= 1 and replication != int(replication)):
            raise ValueError(f"a speed replication must be an integer >= 1 or a fraction in (0, 1); "
                             f"got {replication!r}.")
    if methods is None:
        methods = QUICK["methods"] if quick else tuple(METHODS)
    if quick:
        speed_tasks = speed_tasks[:1]
        epsilons, repeats, oracle_epsilons = QUICK["epsilons"], QUICK["repeats"], QUICK["oracle_epsilons"]
        folds = QUICK["folds"]
        if sizes is None:
            sizes, synthetic = QUICK["sizes"], QUICK["synthetic"]
    sizes = ADULT_SIZES if sizes is None else sizes
    if replicates is not None and not (isinstance(replicates, (int, np.integer)) and replicates >= 0):
        raise ValueError(f"replicates must be an integer >= 0; got replicates={replicates!r}.")
    if replicates is None:
        replicates = 1 if quick else bench_replicates.REPLICATE_SEEDS

    start = time.perf_counter()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    selection_epsilons = [eps for eps in epsilons if eps in SELECTION_EPSILONS]
    if only_selection and not selection_epsilons:
        raise ValueError(f"only_selection runs at the epsilons among {SELECTION_EPSILONS}; got {list(epsilons)}.")
    if (quick or not selection) and not only_selection:
        selection_epsilons = []
    X, y = load_adult("all")
    if only_selection:
        return {**run_selection_benchmark(out, TASKS if task == "all" else (task,), selection_epsilons, delta=delta,
                                          seed=seed, folds=folds, progress=progress, data=(X, y)),
                "run_time_s": time.perf_counter() - start}
    summary = {}
    checkpoints = out / ".bench_checkpoints"
    for name in TASKS if task == "all" else (task,):
        stale = sorted(checkpoints.glob(f"{name}-*.csv")) if checkpoints.exists() else []
        for path in [] if resume else stale:
            path.unlink()
        frame = run_task(name, X, y, epsilons=epsilons, repeats=repeats, methods=methods, baselines=baselines,
                         oracle_epsilons=oracle_epsilons, delta=delta, seed=seed, folds=folds, default=default,
                         progress=progress, checkpoints=checkpoints)
        frame.to_csv(out / f"bench_adult_{name}.csv", index=False)
        for path in checkpoints.glob(f"{name}-*.csv"):
            path.unlink()
        defaults = frame[frame["kind"] == "default"]
        summary[name] = {m: g.groupby("epsilon")["accuracy"].mean().to_dict() for m, g in defaults.groupby("method")}
        tuned_epsilons = [eps for eps in epsilons if eps in bench_tuned.TUNED_EPSILONS]
        if tuned and tuned_epsilons:
            grid = tuned_grid if tuned_grid is not None else bench_tuned.QUICK_GRID if quick else bench_tuned.TUNED_GRID
            bench_tuned.run_tuned_dpsgd(name, X, y, epsilons=tuned_epsilons, grid=grid, delta=delta, seed=seed,
                                        folds=folds, progress=progress).to_csv(
                out / bench_report.TUNED_CSV.format(task=name), index=False)
        headline_epsilons = [eps for eps in epsilons if eps in bench_report.HEADLINE_EPSILONS]
        if replicates and headline_epsilons:
            tuned_path = out / bench_report.TUNED_CSV.format(task=name)
            bench_replicates.run_replicates(
                name, X, y, pd.read_csv(tuned_path) if tuned_path.exists() else None, epsilons=headline_epsilons,
                seeds=replicates, delta=delta, seed=seed, folds=folds, progress=progress).to_csv(
                out / bench_replicates.REPLICATES_CSV.format(task=name), index=False)
        if selection_epsilons:
            run_selection_benchmark(out, (name,), selection_epsilons, delta=delta, seed=seed, folds=folds,
                                    progress=progress, data=(X, y))
    if sizes or synthetic is not None:
        pd.DataFrame(run_scaling(sizes, synthetic, seed=seed, progress=progress)).to_csv(out / "bench_scaling.csv",
                                                                                     index=False)
    if len(speed_epsilons) and len(speed_replications):
        speed = pd.DataFrame(run_default_speed(speed_tasks, speed_epsilons, speed_replications, seed=seed,
                                               delta=delta, progress=progress))
        path = out / SPEED_CSV
        if path.exists():  # keep the other task's rows (a ``--task`` run replaces only its own)
            previous = pd.read_csv(path)
            speed = pd.concat([previous[~previous["task"].isin(speed_tasks)], speed], ignore_index=True)
        speed.to_csv(path, index=False)
    command = "dpconvex bench adult" + (" --quick" if quick else f" --repeats {repeats}") + (
        f" --task {task}" if task != "all" else "")
    paths = bench_report.write_report(out, command=command, run_time_s=time.perf_counter() - start, delta=delta,
                                      n=int(y.size), dimension=int(X.shape[1]))
    return {**paths, "summary": summary, "run_time_s": time.perf_counter() - start}

