"""Benchmark on three more real data sets (``dpconvex bench breast_cancer|wine|digits``).

The data are scikit-learn's bundled copies, encoded with public bounds
(:mod:`dpconvex.datasets.bundled`): breast cancer (2 classes), wine (3) and digits (10).  For each
data set and task (``logistic``: :class:`~dpconvex.PrivateLogisticRegression`, multinomial for
K > 2; ``svm``: :class:`~dpconvex.PrivateHuberSVC`, one-vs-rest for K > 2) every entry is fitted on
the same folds, stratified 5-fold cross-validation repeated ``repeats`` times
(:func:`.bench_protocol.cv_folds`), with a fresh noise seed per fit:

* :data:`.bench_protocol.DEFAULT` — the estimator with only ε, δ, the declared ``classes=`` and a seed
  (``method="auto"``, ``l2_regularization="auto"``);
* the private peers of the Adult benchmark, :data:`PEERS` (λ = 1e-3, their defaults), on the
  loss of the task's estimator (:func:`task_loss`: for K > 2 the multinomial or one-vs-rest
  huberised-hinge loss on a d·K parameter, labels 0..K−1), except :data:`BINARY_ONLY_PEERS` on
  K > 2 classes, recorded as not run, with the reason;
* non-private references: :func:`.baselines.nonprivate`, the exact minimiser of the same
  objective (the same loss) at λ = 1e-3 without intercept, scikit-learn with its defaults
  (``LogisticRegression()`` / ``LinearSVC()``: C = 1, with intercept) and the majority class of
  the training fold.

Records go to ``bench_datasets.csv`` (a run replaces the rows of its data sets and keeps the
others'), and :func:`.bench_datasets_report.datasets_section` renders them into ``BENCHMARKS.md``: each cell is the mean
test accuracy over every fold and repetition ± its standard error over the repetitions (the
standard deviation of the ``repeats`` per-repetition means, each a complete 5-fold estimate with
its own partition and noise, over √repeats; conditional on the data set, which is not resampled).
"""

from __future__ import annotations

import numbers
import os
import pathlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from tqdm.auto import tqdm

from dpconvex.datasets.bundled import BUNDLED, BundledDataset, load_bundled
from dpconvex.objectives.losses import Loss
from dpconvex_lab.baselines import BASELINES, BaselineUnavailable
from dpconvex_lab.bench_datasets_report import (  # noqa: F401 (re-exported: the records' vocabulary)
    BINARY_ONLY,
    CSV,
    DATASETS,
    MAJORITY,
    NONPRIVATE,
    PEERS,
    SKLEARN_DEFAULT_MODELS,
    SKLEARN_DEFAULTS,
    TITLE,
    datasets_section,
    with_datasets_section,
)
from dpconvex_lab.bench_markdown import replace_section
from dpconvex_lab.bench_protocol import DEFAULT, L2, PRIVATE_BASELINES, cv_folds, fit_seed
from dpconvex_lab.bench_scaling import TASKS

__all__ = ["BINARY_ONLY_PEERS", "CSV", "DATASETS", "EPSILONS", "PEERS", "QUICK", "REPEATS", "TITLE",
           "datasets_section", "run_datasets", "run_dataset_task", "task_loss", "with_datasets_section"]

EPSILONS = (0.1, 0.5, 1.0, 2.0)
#: Repetitions of stratified 5-fold CV of a full run.
REPEATS = 20
#: ``quick``: two ε, one repetition, the first two of its five folds (CI).
QUICK = {"epsilons": (0.1, 1.0), "repeats": 1, "folds": 2}
#: Peers that are binary by method, not run on K > 2 classes: objective perturbation's guarantee
#: (Kifer, Smith, Thakurta 2012, :func:`.baselines.objpert`) needs a loss Hessian of rank one, and
#: the multinomial and one-vs-rest Hessians have rank up to K − 1 and K.
BINARY_ONLY_PEERS = ("objpert",)


def task_loss(task: str, n_classes: int) -> Loss:
    """The loss the task's estimator fits on ``n_classes`` classes, for the baselines.

    Parameters
    ----------
    task : {"logistic", "svm"}
    n_classes : int
        K ≥ 2.

    Returns
    -------
    Loss
        The binary loss of :data:`.bench_scaling.TASKS` (labels ±1) for K = 2; for K > 2 the
        estimator's own K-class loss (labels 0..K−1): multinomial logistic for ``logistic``,
        one-vs-rest huberised hinge for ``svm``.
    """
    estimator, binary = TASKS[task]
    return binary if n_classes == 2 else estimator()._multiclass_loss(n_classes)


def _baseline_labels(y: np.ndarray, classes: Sequence[int]) -> np.ndarray:
    """The labels :func:`task_loss` takes: ±1 (``classes[1]`` is +1) for two classes, indices 0..K−1 beyond."""
    classes = np.asarray(classes)
    if classes.size == 2:
        return np.where(y == classes[1], 1.0, -1.0)
    return np.argmax(y[:, None] == classes[None, :], axis=1).astype(float)


def _class_labels(predicted: np.ndarray, classes: Sequence[int]) -> np.ndarray:
    """Back from :meth:`.baselines.BaselineFit.predict` (±1, or indices 0..K−1) to the declared classes."""
    classes = np.asarray(classes)
    return classes[(predicted > 0).astype(int)] if classes.size == 2 else classes[predicted.astype(int)]


def _fit_ours(task: str, spec: BundledDataset, epsilon: float, delta: float, seed: int, X_train, y_train,
              X_test) -> dict[str, Any]:
    """The :data:`.bench_protocol.DEFAULT` entry: only ε, δ, the declared classes and the seed."""
    estimator = TASKS[task][0](epsilon=epsilon, delta=delta, classes=list(spec.classes), random_state=seed)
    tic = time.perf_counter()
    estimator.fit(X_train, y_train)
    elapsed = time.perf_counter() - tic
    report = estimator.privacy_report_
    return {"predictions": estimator.predict(X_test), "fit_time": elapsed, "bound": report.bound,
            "certified_epsilon": report.epsilon, "mechanism": report.mechanism, "note": "",
            "l2": float(np.max(estimator.l2_regularization_))}


def _fit_baseline(name: str, task: str, spec: BundledDataset, epsilon: float, delta: float, seed: int, X_train,
                  y_train, X_test) -> dict[str, Any]:
    """A baseline of :mod:`.baselines` (a peer, or ``nonprivate`` at ε = ∞) at λ = 1e-3 on :func:`task_loss`."""
    loss = task_loss(task, len(spec.classes))
    private = name in PRIVATE_BASELINES
    tic = time.perf_counter()
    try:
        # nonprivate ignores ε (recorded as ∞); it is given a valid placeholder.
        fit = BASELINES[name](X_train, _baseline_labels(y_train, spec.classes), loss=loss,
                              epsilon=epsilon if private else 1.0, delta=delta, l2_regularization=L2,
                              random_state=seed)
    except BaselineUnavailable as error:
        return {"predictions": None, "fit_time": np.nan, "bound": "unavailable", "certified_epsilon": np.nan,
                "mechanism": "", "note": str(error).splitlines()[0][:200], "l2": L2}
    fit_time = time.perf_counter() - tic
    return {"predictions": _class_labels(fit.predict(X_test), spec.classes), "fit_time": fit_time,
            "bound": fit.bound, "certified_epsilon": epsilon if private else np.inf, "mechanism": "",
            "note": f"{loss.name} loss: {fit.note}", "l2": L2}


def _fit_reference(method: str, task: str, X_train, y_train, X_test) -> dict[str, Any]:
    """A scikit-learn reference: :data:`SKLEARN_DEFAULTS` or :data:`MAJORITY`."""
    tic = time.perf_counter()
    model = DummyClassifier(strategy="most_frequent") if method == MAJORITY else (
        LogisticRegression() if task == "logistic" else LinearSVC())
    predictions = model.fit(X_train, y_train).predict(X_test)
    note = ("the training fold's most frequent label, counted without noise" if method == MAJORITY
            else f"scikit-learn {SKLEARN_DEFAULT_MODELS[task]}: C = 1, with intercept")
    return {"predictions": predictions, "fit_time": time.perf_counter() - tic, "bound": "none (not private)",
            "certified_epsilon": np.inf, "mechanism": "", "note": f"{note}; not private.", "l2": np.nan}


def _not_run(name: str, classes: int) -> dict[str, Any]:
    """The record of a :data:`BINARY_ONLY_PEERS` peer on a multi-class task."""
    return {"predictions": None, "fit_time": np.nan, "bound": BINARY_ONLY, "certified_epsilon": np.nan,
            "mechanism": "", "l2": L2,
            "note": f"baselines.{name}'s guarantee needs a rank-one loss Hessian (binary only); the {classes}-class "
                    "losses' have higher rank, so it is not run"}


def run_dataset_task(name: str, task: str, *, epsilons: Sequence[float] = EPSILONS, repeats: int = REPEATS,
                     delta: float = 1e-8, seed: int = 0, folds: int | None = None,
                     progress: bool = True) -> pd.DataFrame:
    """Every fit of one data set and task: a row per (method, ε, fold).

    Parameters
    ----------
    name : a key of :data:`dpconvex.datasets.bundled.BUNDLED`.
    task : {"logistic", "svm"}
    epsilons : the ε of the private entries.
    repeats : repetitions of stratified 5-fold CV (≥ 1).
    delta, seed : δ of every private fit; the seed of the folds and of every fit.
    folds : keep only the first ``folds`` folds (``quick``); None keeps all 5·repeats.
    progress : show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, task, method, epsilon`` (inf for the non-private references), ``repeat,
        fold, accuracy`` (NaN when the entry did not run), ``fit_time, bound, certified_epsilon,
        mechanism, l2`` (λ of the fit; ``auto`` chooses its own), ``note, n_rows, n_features,
        n_classes``.  A :data:`BINARY_ONLY_PEERS` peer on K > 2 classes has one row per ε with
        ``bound`` :data:`BINARY_ONLY`, ``fold`` and ``repeat`` −1.
    """
    if name not in BUNDLED:
        raise ValueError(f"name must be one of {DATASETS}; got name={name!r}.")
    spec = BUNDLED[name]
    if task not in TASKS:
        raise ValueError(f"task must be one of {tuple(TASKS)}; got task={task!r}.")
    X, y = load_bundled(name)
    splits = cv_folds(X, y, repeats=repeats, seed=seed, folds=folds)
    binary = len(spec.classes) == 2
    tags = (DATASETS.index(name), tuple(TASKS).index(task))
    common = {"dataset": name, "task": task, "n_rows": X.shape[0], "n_features": X.shape[1],
              "n_classes": len(spec.classes)}
    rows: list[dict[str, Any]] = []

    def record(method: str, epsilon: float, fold: int, result: dict[str, Any], test) -> None:
        predictions = result.pop("predictions")
        accuracy = np.nan if predictions is None else float(np.mean(predictions == y[test]))
        rows.append({**common, "method": method, "epsilon": float(epsilon), "repeat": fold // 5 if fold >= 0 else -1,
                     "fold": fold, "accuracy": accuracy, **result})

    not_run = () if binary else BINARY_ONLY_PEERS
    for eps in epsilons:
        for peer in not_run:
            record(f"baseline: {peer}", eps, -1, _not_run(peer, len(spec.classes)), None)
    # k: the peer's seed index, its place in PEERS whether or not the others run
    peers = [(k, peer) for k, peer in enumerate(PEERS, start=1) if peer not in not_run]
    bar = tqdm(total=len(splits) * (3 + len(epsilons) * (1 + len(peers))), disable=not progress, unit="fit",
               desc=f"{name} {task}")
    for f, (train, test) in enumerate(splits):
        record(NONPRIVATE, np.inf, f, _fit_baseline("nonprivate", task, spec, np.inf, delta, None, X[train],
                                                    y[train], X[test]), test)
        for method in (SKLEARN_DEFAULTS, MAJORITY):
            record(method, np.inf, f, _fit_reference(method, task, X[train], y[train], X[test]), test)
        bar.update(3)
        for e, eps in enumerate(epsilons):
            record(DEFAULT, eps, f, _fit_ours(task, spec, eps, delta, fit_seed(seed, *tags, f, e, 0), X[train],
                                              y[train], X[test]), test)
            bar.update()
            for k, peer in peers:
                record(f"baseline: {peer}", eps, f, _fit_baseline(peer, task, spec, eps, delta,
                                                                   fit_seed(seed, *tags, f, e, k), X[train],
                                                                   y[train], X[test]), test)
                bar.update()
    bar.close()
    return pd.DataFrame(rows)


def run_datasets(names: Sequence[str] = DATASETS, epsilons: Sequence[float] = EPSILONS,
                 out: str | os.PathLike = "docs", seed: int = 0, repeats: int = REPEATS, quick: bool = False, *,
                 tasks: Sequence[str] = tuple(TASKS), delta: float = 1e-8, progress: bool = True) -> dict[str, Any]:
    """Run the benchmark on ``names``, update ``bench_datasets.csv`` and this section of ``BENCHMARKS.md``.

    Parameters
    ----------
    names : sequence of str
        Keys of :data:`dpconvex.datasets.bundled.BUNDLED` (``breast_cancer``, ``wine``, ``digits``).
    epsilons : sequence of float
        ε of the private entries (each > 0).
    out : path, default "docs"
        Directory of the CSV and of ``BENCHMARKS.md``.
    seed : int
        Seeds the folds and every fit (reproducibility of the benchmark; a release uses
        ``random_state=None``).
    repeats : int
        Repetitions of stratified 5-fold CV (≥ 1).
    quick : bool
        Override ``epsilons`` and ``repeats`` with :data:`QUICK` (two ε, two folds; CI).
    tasks : sequence of {"logistic", "svm"}
    delta : float
        δ of every private fit.
    progress : bool
        Show progress bars.

    Returns
    -------
    dict
        ``csv`` and ``markdown`` (paths written), ``summary`` ({data set: {task: {ε: mean accuracy of
        the default entry}}}) and ``run_time_s``.

    Raises
    ------
    ValueError
        Naming the parameter, for an unknown data set or task, an ε ≤ 0, δ outside (0, 1) or
        ``repeats`` < 1, before any fit.
    """
    unknown = [name for name in names if name not in BUNDLED]
    if unknown or not len(names):
        raise ValueError(f"names must be a non-empty list of {DATASETS}; got names={list(names)!r}.")
    if not len(tasks) or any(task not in TASKS for task in tasks):
        raise ValueError(f"tasks must be a non-empty list of {tuple(TASKS)}; got tasks={list(tasks)!r}.")
    folds = None
    if quick:
        epsilons, repeats, folds = QUICK["epsilons"], QUICK["repeats"], QUICK["folds"]
    if not len(epsilons) or not all(isinstance(eps, numbers.Real) and np.isfinite(eps) and eps > 0
                                    for eps in epsilons):
        raise ValueError(f"epsilons must be finite and > 0; got epsilons={list(epsilons)!r}.")
    if not (isinstance(delta, numbers.Real) and 0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1); got delta={delta!r}.")
    if not (isinstance(repeats, (int, np.integer)) and repeats >= 1):
        raise ValueError(f"repeats must be an integer >= 1; got repeats={repeats!r}.")
    start = time.perf_counter()
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frames = [run_dataset_task(name, task, epsilons=epsilons, repeats=repeats, delta=delta, seed=seed, folds=folds,
                               progress=progress) for name in names for task in tasks]
    frame = pd.concat(frames, ignore_index=True)
    path = out / CSV
    if path.exists():  # keep the rows of the data sets and tasks this run did not fit
        previous = pd.read_csv(path)
        ran = previous["dataset"].isin(names) & previous["task"].isin(tasks)
        frame = pd.concat([previous[~ran], frame], ignore_index=True)
    frame.to_csv(path, index=False)
    markdown = replace_section(out / "BENCHMARKS.md", datasets_section(frame))
    default = frame[frame["method"] == DEFAULT]
    summary = {name: {task: group.groupby("epsilon")["accuracy"].mean().to_dict()
                      for task, group in default[default["dataset"] == name].groupby("task")} for name in names}
    return {"csv": str(path), "markdown": str(markdown), "summary": summary,
            "run_time_s": time.perf_counter() - start}

