"""Benchmark on three more real data sets (``dpconvex bench breast_cancer|wine|digits``).

The data are scikit-learn's bundled copies, encoded with public bounds
(:mod:`dpconvex.datasets.bundled`): breast cancer (2 classes), wine (3) and digits (10).  For each
data set and task (``logistic``: :class:`~dpconvex.PrivateLogisticRegression`, multinomial for
K > 2; ``svm``: :class:`~dpconvex.PrivateHuberSVC`, one-vs-rest for K > 2) every entry is fitted on
the same folds, stratified 5-fold cross-validation repeated ``repeats`` times
(:func:`.bench.cv_folds`), with a fresh noise seed per fit:

* :data:`.bench.DEFAULT` — the estimator with only ε, δ, the declared ``classes=`` and a seed
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
others'), and :func:`datasets_section` renders them into ``BENCHMARKS.md``: each cell is the mean
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
from dpconvex_lab import bench_report
from dpconvex_lab.baselines import BASELINES, BaselineUnavailable
from dpconvex_lab.bench import DEFAULT, L2, PRIVATE_BASELINES, _fit_seed, cv_folds
from dpconvex_lab.bench_report import replace_section
from dpconvex_lab.bench_scaling import TASKS

__all__ = ["BINARY_ONLY_PEERS", "CSV", "DATASETS", "EPSILONS", "PEERS", "QUICK", "REPEATS", "TITLE",
           "datasets_section", "run_datasets", "run_dataset_task", "task_loss", "with_datasets_section"]

DATASETS = tuple(BUNDLED)
EPSILONS = (0.1, 0.5, 1.0, 2.0)
#: Repetitions of stratified 5-fold CV of a full run.
REPEATS = 20
#: ``quick``: two ε, one repetition, the first two of its five folds (CI).
QUICK = {"epsilons": (0.1, 1.0), "repeats": 1, "folds": 2}
#: The private baselines of the Adult benchmark, in its order.
PEERS = PRIVATE_BASELINES
CSV = bench_report.DATASETS_CSV
TITLE = "More real data: breast cancer, wine, digits (scikit-learn's bundled copies)"
NONPRIVATE = "baseline: nonprivate"
SKLEARN_DEFAULTS = "baseline: scikit-learn defaults"
MAJORITY = "baseline: majority"
SKLEARN_DEFAULT_MODELS = {"logistic": "LogisticRegression()", "svm": "LinearSVC()"}
#: Row order of the tables: ours, the private peers, the non-private references.
_ROW_ORDER = {method: k for k, method in enumerate((DEFAULT, *(f"baseline: {p}" for p in PEERS), NONPRIVATE,
                                                    SKLEARN_DEFAULTS, MAJORITY))}
#: The ``bound`` of a peer not run on a multi-class task.
BINARY_ONLY = "binary only"
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
    """The :data:`.bench.DEFAULT` entry: only ε, δ, the declared classes and the seed."""
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
            record(DEFAULT, eps, f, _fit_ours(task, spec, eps, delta, _fit_seed(seed, *tags, f, e, 0), X[train],
                                              y[train], X[test]), test)
            bar.update()
            for k, peer in peers:
                record(f"baseline: {peer}", eps, f, _fit_baseline(peer, task, spec, eps, delta,
                                                                   _fit_seed(seed, *tags, f, e, k), X[train],
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


# rendering


def _append_section(text: str, section: list[str]) -> str:
    """``text`` followed by ``section``'s lines after one blank line (the layout of every section)."""
    return text.rstrip("\n") + "\n\n" + "\n".join(section) if text else "\n".join(section)


def with_datasets_section(text: str, out: pathlib.Path) -> str:
    """``text`` (the rest of ``BENCHMARKS.md``) with this section appended when ``out`` holds :data:`CSV`."""
    path = pathlib.Path(out) / CSV
    return _append_section(text, datasets_section(pd.read_csv(path))) if path.exists() else text


def _mean_se(group: pd.DataFrame) -> str:
    """``"mean ± se"`` in %, se over the per-repetition means (module docstring); the mean alone if one repetition."""
    per_repeat = group.groupby("repeat")["accuracy"].mean().dropna()
    if per_repeat.empty:
        bounds = group["bound"].astype(str).unique()
        return BINARY_ONLY if BINARY_ONLY in bounds else "–"
    mean = 100 * group["accuracy"].mean()
    if len(per_repeat) < 2:
        return f"{mean:.2f}"
    return f"{mean:.2f} ± {100 * per_repeat.std(ddof=1) / np.sqrt(len(per_repeat)):.2f}"


def _certificate(group: pd.DataFrame) -> str:
    """The bound(s) of an entry's private fits and the largest certified ε / target; or its note."""
    finite = group[np.isfinite(group["epsilon"]) & group["accuracy"].notna()]
    if finite.empty:
        notes = group["note"].dropna().astype(str)
        return notes.iloc[0][:160] if len(notes) else "–"
    ratio = (finite["certified_epsilon"] / finite["epsilon"]).max()
    bounds = ", ".join(sorted(finite["bound"].astype(str).unique()))
    trainers = ", ".join(sorted(str(m) for m in finite["mechanism"].dropna().unique() if str(m) and str(m) != "nan"))
    return f"{bounds}{f' ({trainers})' if trainers else ''}; largest certified ε / target {ratio:.4f}"


def _summary_row(name: str, task: str, frame: pd.DataFrame, epsilons: Sequence[float]) -> str:
    """One data set and task of the summary: its shape, R, the folds, ours at every ε, the references."""
    first, ran = frame.iloc[0], frame[frame["fold"] >= 0]

    def cell(method: str, epsilon: float) -> str:
        group = frame[(frame["method"] == method) & np.isclose(frame["epsilon"], epsilon)]
        return _mean_se(group) if len(group) else "–"

    cells = [cell(DEFAULT, eps) for eps in epsilons]
    cells += [cell(method, np.inf) for method in (NONPRIVATE, SKLEARN_DEFAULTS, MAJORITY)]
    return (f"| {name} | {int(first['n_rows'])} | {int(first['n_features'])} | {int(first['n_classes'])} | {task} | "
            f"{ran['repeat'].nunique()} | {ran['fold'].nunique()} | " + " | ".join(cells) + " |")


def datasets_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of this benchmark's section of ``BENCHMARKS.md``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Records of :func:`run_dataset_task` (``bench_datasets.csv``), any data sets and tasks.

    Returns
    -------
    list of str
        The section, from its heading ``## {TITLE}``: the protocol, a summary table (the default
        entry at every ε against the three references) and, per data set and task, every entry
        at every ε with its certificate or the reason it did not run.
    """
    epsilons = sorted(e for e in frame["epsilon"].unique() if np.isfinite(e))
    clips = {name: spec.rounding_clips for name, spec in BUNDLED.items()}
    lines = [f"## {TITLE}", "",
             "Regenerate with `dpconvex_lab.bench_datasets.run_datasets` (`dpconvex bench breast_cancer|wine"
             f"|digits`); records in `{CSV}`. Data: scikit-learn's installed copies (never downloaded), encoded by "
             "`dpconvex.datasets.load_bundled` with the library's feature map (`datasets.encoding.encode`): every "
             "feature clipped to declared bounds and scaled to [0, 1] by them, each row scaled to unit L2 norm. The "
             "bounds are public: digits' pixels lie in [0, 16] by the data's definition; for breast cancer and "
             "wine they are the Min/Max of the summary statistics in the data's published description "
             "(scikit-learn's `DESCR`). **Those published ranges were computed from the same records**, as Adult's "
             "documented ranges were (Chen, Lee, Kifer 2019 treat them as public): a certificate covers the fixed "
             "map, not the choice of its constants. The description prints them rounded, so "
             f"{clips['breast_cancer']} values of breast cancer and {clips['wine']} of wine fall just outside and "
             "are clipped. The label sets are declared (`classes=`).", "",
             "Protocol: stratified 5-fold cross-validation repeated R times (`bench.cv_folds`; R and the number of "
             "test folds are in the summary), every entry on the same folds, a fresh noise seed per fit; δ = 1e-8 "
             "for every private fit, as on Adult (δ ≪ 1/n for these n). Cell: mean test accuracy (%) over every "
             "fold ± its standard error over the repetitions (sd of the R per-repetition 5-fold means / √R: "
             "partition and privacy noise, conditional on the data set; the mean alone when R = 1). "
             f"`{DEFAULT}` is the estimator with only ε, δ, `classes=` and a seed (`method='auto'`, "
             "`l2_regularization='auto'`): `PrivateLogisticRegression` (multinomial for more than two classes) "
             "for `logistic`, `PrivateHuberSVC` (one-vs-rest for more than two) for `svm`. References (ε = ∞, not "
             "private): `nonprivate` is the exact minimiser of the same objective at λ = 1e-3 without intercept "
             "(`baselines.nonprivate`, the Adult benchmark's reference, on the estimator's loss: multinomial / "
             "one-vs-rest for more than two classes), "
             f"`scikit-learn defaults` is {SKLEARN_DEFAULT_MODELS['logistic']} / {SKLEARN_DEFAULT_MODELS['svm']} "
             "(C = 1, with intercept), `majority` the training fold's most frequent class. The private peers are "
             "the Adult benchmark's with the same settings (λ = 1e-3, their defaults, nothing tuned), on the "
             "estimator's loss. For more than two classes DP-SGD (`sgd_ma`, `sgd_ma_replace_one`) trains the "
             "d·K-parameter multinomial / one-vs-rest loss, every per-example gradient clipped to joint norm C, so "
             "its accounting, which sees only the sampling rate, the steps and the noise multiplier, is the binary "
             "one; objective perturbation's guarantee needs a rank-one loss Hessian, so `objpert` reads "
             f"*{BINARY_ONLY}* there; `diffprivlib` is wrapped for the binary logistic loss only. DP-SGD's "
             "defaults are TF Privacy's MNIST flags (expected batch 256, 60 epochs, learning rate 0.15): on "
             "breast cancer they make about 100 steps from 0, too few to leave the majority class even with "
             "negligible noise; on wine (a training fold is smaller than a batch: 60 full-batch steps) and digits "
             "(about 340 steps) they do. Compare the default with `sgd_ma_replace_one`, DP-SGD under the "
             f"replace-one relation `{DEFAULT}` certifies; `sgd_ma` counts add/remove neighbours, a weaker "
             "guarantee.",
             "", "### Summary: the default estimator against the references (test accuracy, %)", "",
             "| data set | n | d | classes | task | R | test folds | "
             + " | ".join(f"`{DEFAULT}` ε = {e:g}" for e in epsilons)
             + " | nonprivate (λ = 1e-3) | scikit-learn defaults | majority |",
             "|---" * (10 + len(epsilons)) + "|"]
    keys = [(name, task) for name in DATASETS for task in TASKS
            if ((frame["dataset"] == name) & (frame["task"] == task)).any()]
    for name, task in keys:
        lines.append(_summary_row(name, task, frame[(frame["dataset"] == name) & (frame["task"] == task)], epsilons))
    for name, task in keys:
        here = frame[(frame["dataset"] == name) & (frame["task"] == task)]
        here = here.sort_values("method", key=lambda m: m.map(_ROW_ORDER).fillna(len(_ROW_ORDER)), kind="stable")
        first = here.iloc[0]
        lines += ["", f"### `{name}`, task `{task}` (n = {int(first['n_rows'])}, d = {int(first['n_features'])}, "
                      f"{int(first['n_classes'])} classes)", ""]
        table = bench_report._pivot(here, _mean_se)
        groups = [group for _, group in here.groupby("method", sort=False)]  # _pivot's row order
        lines += [table[0] + " certificate or note |", table[1] + "---|"]
        lines += [f"{row} {_certificate(group)} |" for row, group in zip(table[2:], groups)]
    return lines + [""]
