"""Private model selection on UCI Adult: the ``…CV`` estimators against the default and the oracle.

The protocol of :mod:`.bench` (``load_adult("all")``, stratified 5-fold CV from :func:`.bench_protocol.cv_folds`,
δ = 1e-8, labels ±1 with ``classes=[-1, 1]``, one seed per fit) at ε ∈ :data:`SELECTION_EPSILONS`,
for each task (``logistic``: :class:`~dpconvex.PrivateLogisticRegressionCV`; ``svm``:
:class:`~dpconvex.PrivateHuberSVCCV`), with four entries per (task, ε, fold):

* ``<…CV>`` — private selection of λ over its default grid on the training fold (its own
  validation split, certificate ≤ ε including the selection);
* ``auto (default)`` — the estimator as a user gets it (``method="auto"``, λ by its data-independent
  rule): what private selection must beat to be worth its cost;
* ``noisy_gd, λ = 1e-3`` — the CV estimators' trainer at the library's fixed λ
  (:data:`~dpconvex.estimators.base.FIXED_METHOD_L2`) on the whole training fold;
* ``noisy_gd, oracle λ`` — the same trainer at every λ of the grid on the whole training fold; the
  table keeps the λ of best mean test accuracy (NOT private: chosen on the test folds).

Rows go to ``bench_selection.csv`` (a run of some tasks replaces only their rows); :func:`selection_section`
renders them as the section :data:`HEADING` of ``BENCHMARKS.md``.  ``dpconvex bench adult`` runs this
part for each of its tasks (``--no-selection`` skips it and keeps the previous rows;
``--selection-only`` runs nothing else).  The seeds make it reproducible; a release uses
``random_state=None``.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dpconvex.datasets.adult import load_adult
from dpconvex.estimators.base import FIXED_METHOD_L2
from dpconvex.estimators.model_selection import CLASSIFIER_GRID, PrivateHuberSVCCV, PrivateLogisticRegressionCV
from dpconvex_lab.bench_markdown import replace_section
from dpconvex_lab.bench_protocol import cv_folds
from dpconvex_lab.bench_scaling import default_estimator

__all__ = ["HEADING", "SELECTION_EPSILONS", "SELECTION_CSV", "CV_ESTIMATORS", "run_selection_benchmark",
           "selection_section", "selection_table", "with_other_tasks", "with_selection_section"]

SELECTION_EPSILONS = (0.05, 0.1, 0.2, 1.0)
SELECTION_CSV = "bench_selection.csv"
HEADING = "## Private model selection: the `…CV` estimators against the default and the oracle"
CV_ESTIMATORS = {"logistic": PrivateLogisticRegressionCV, "svm": PrivateHuberSVCCV}
DEFAULT, FIXED, ORACLE = "auto (default)", f"noisy_gd, λ = {FIXED_METHOD_L2:g}", "noisy_gd, oracle λ (NOT private)"


def _fit(estimator: Any, X: np.ndarray, y: np.ndarray, X_test: np.ndarray, y_test: np.ndarray) -> dict[str, Any]:
    tic = time.perf_counter()
    estimator.fit(X, y)
    elapsed = time.perf_counter() - tic
    report = estimator.privacy_report_
    return {"accuracy": float(np.mean(estimator.predict(X_test) == y_test)), "l2": float(estimator.l2_regularization_),
            "certified_epsilon": report.epsilon, "bound": report.bound, "fit_time": elapsed}


def run_selection_benchmark(out_dir: str | pathlib.Path = "docs", tasks: Sequence[str] = tuple(CV_ESTIMATORS),
                            epsilons: Sequence[float] = SELECTION_EPSILONS, *, delta: float = 1e-8, seed: int = 0,
                            folds: int | None = None, progress: bool = True,
                            data: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, str]:
    """Fit every entry (module docstring) on every fold; write ``bench_selection.csv`` and the section.

    Parameters
    ----------
    out_dir : path
        Where the CSV goes.
    tasks : sequence of {"logistic", "svm"}
    epsilons : sequence of float
    delta : float
    seed : int
        Seeds the folds (:func:`.bench_protocol.cv_folds`) and every fit.
    folds : int, optional
        Keep only the first ``folds`` of the five folds (quick runs); None keeps all.
    progress : bool
        Show a progress bar.
    data : (X, y), optional
        The data set (labels in {0, 1} or ±1); None: ``load_adult("all")``.

    Returns
    -------
    dict
        The paths of the CSV and of ``BENCHMARKS.md`` (whose section :data:`HEADING` is rewritten in place).
    """
    unknown = [task for task in tasks if task not in CV_ESTIMATORS]
    if unknown:
        raise ValueError(f"tasks must be among {tuple(CV_ESTIMATORS)}; got {list(tasks)!r}.")
    X, y = load_adult("all") if data is None else data
    y = np.where(y == 1, 1, -1)
    splits = cv_folds(X, y, seed=seed, folds=folds)
    grid = tuple(sorted(set(CLASSIFIER_GRID) | {FIXED_METHOD_L2}))
    bar = tqdm(total=len(tasks) * len(splits) * len(epsilons) * (2 + len(grid)), disable=not progress, unit="fit",
               desc="selection bench")
    rows = []
    for task in tasks:
        for f, (train, test) in enumerate(splits):
            data = (X[train], y[train], X[test], y[test])
            for i, epsilon in enumerate(epsilons):
                def fit_seed(j: int) -> int:
                    return int(np.random.SeedSequence([seed, f, i, j]).generate_state(1)[0])

                entries = [(CV_ESTIMATORS[task].__name__, "private", CV_ESTIMATORS[task](
                               epsilon=epsilon, delta=delta, classes=[-1, 1], random_state=fit_seed(0))),
                           (DEFAULT, "default", default_estimator(task, epsilon, delta, fit_seed(1)))]
                entries += [(ORACLE if l2 != FIXED_METHOD_L2 else FIXED, "fixed λ" if l2 == FIXED_METHOD_L2 else "grid",
                             default_estimator(task, epsilon, delta, fit_seed(2 + k), method="noisy_gd",
                                               l2_regularization=l2)) for k, l2 in enumerate(grid)]
                for method, kind, estimator in entries:
                    rows.append({"task": task, "method": method, "kind": kind, "epsilon": float(epsilon), "fold": f,
                                 **_fit(estimator, *data)})
                    bar.update()
    bar.close()
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frame = with_other_tasks(pd.DataFrame(rows), out / SELECTION_CSV)
    frame.to_csv(out / SELECTION_CSV, index=False)
    markdown = replace_section(out / "BENCHMARKS.md", selection_section(frame))
    return {"selection_csv": str(out / SELECTION_CSV), "markdown": str(markdown)}


def with_other_tasks(frame: pd.DataFrame, path: pathlib.Path) -> pd.DataFrame:
    """``frame`` after the rows of ``path`` (if it exists) of the tasks ``frame`` does not hold: a run of one
    task replaces only its own rows."""
    if not path.exists():
        return frame
    previous = pd.read_csv(path)
    return pd.concat([previous[~previous["task"].isin(frame["task"].unique())], frame], ignore_index=True)


def selection_table(frame: pd.DataFrame) -> str:
    """Markdown: per task, mean ± sd test accuracy (%) over folds for each entry and ε, with the λ used.

    The oracle row takes, at each ε, the grid λ of best mean test accuracy (the fixed λ included);
    the ``…CV`` row names the λ it chose most often; the last line gives the certified ε.
    """
    lines = []
    for task, rows in frame.groupby("task", sort=False):
        epsilons = sorted(rows["epsilon"].unique())
        lines += [f"### Task `{task}`", "", "| entry | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |",
                  "|---|" + "---|" * len(epsilons)]
        for method in [m for m in rows["method"].unique() if m != ORACLE] + [ORACLE]:
            cells = []
            for epsilon in epsilons:
                cell = rows[(rows["epsilon"] == epsilon)]
                if method == ORACLE:
                    grid = cell[cell["method"].isin([ORACLE, FIXED])]
                    best = grid.groupby("l2")["accuracy"].mean().idxmax()
                    chosen = grid[grid["l2"] == best]
                    note = f" (λ = {best:g})"
                else:
                    chosen = cell[cell["method"] == method]
                    modal = chosen["l2"].round(12).mode()
                    note = f" (λ = {modal.iloc[0]:.2g})" if method != DEFAULT and len(modal) else ""
                accuracy = 100 * chosen["accuracy"]
                cells.append(f"{accuracy.mean():.2f} ± {accuracy.std(ddof=1) if len(accuracy) > 1 else 0.0:.2f}{note}")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        private = rows[rows["kind"] == "private"]
        lines += ["", f"Folds: {rows['fold'].nunique()}. Largest certified ε / target of the `…CV` fits: "
                      f"{(private['certified_epsilon'] / private['epsilon']).max():.4f}; mean fit time (s) of the "
                      f"`…CV` fits: " + ", ".join(f"ε = {e:g}: {t:.0f}" for e, t in
                                                     private.groupby("epsilon")["fit_time"].mean().items()), ""]
    return "\n".join(lines)


def selection_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of this benchmark's section of ``BENCHMARKS.md``: the protocol, then :func:`selection_table`."""
    return [HEADING, "",
            "Regenerate with `dpconvex bench adult --selection-only` (module `dpconvex_lab.bench_selection`; "
            "the full `dpconvex bench adult` runs it too). The folds of the tasks above, δ = 1e-8, one seed per fit, "
            "test accuracy (%) mean ± sd over folds. `…CV`: private selection of λ over its default grid "
            f"{CLASSIFIER_GRID} (Papernot & Steinke's best of K ~ Poisson runs, E[K] = 10, 20 % of the training "
            "fold for validation; the certificate covers the runs, the scores and the selection). "
            f"`{DEFAULT}`: the estimator as a user gets it. `{FIXED}`: the `…CV` estimators' trainer at the "
            f"library's fixed λ on the whole training fold. `{ORACLE}`: the same trainer at the grid's λ of best "
            "mean test accuracy — chosen on the test folds, so not a private result. See docs/model-selection.md "
            "for when private selection pays.", "", selection_table(frame)]


def with_selection_section(text: str, out: pathlib.Path) -> str:
    """``text`` with this section appended when ``out`` holds :data:`SELECTION_CSV`."""
    path = pathlib.Path(out) / SELECTION_CSV
    if not path.exists():
        return text
    return text.rstrip("\n") + "\n\n" + "\n".join(selection_section(pd.read_csv(path)))
