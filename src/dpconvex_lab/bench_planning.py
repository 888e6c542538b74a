"""Planning at any ε: time, memory and certified ε of the default estimator on a tiny problem.

Users set a huge ε to compare with a non-private fit; every ε in (0, ∞) must plan in bounded time
and memory (goal: under 1 s and 200 MB on 100 × 3).  Written to ``bench_planning.csv`` and the
section :data:`HEADING` of ``BENCHMARKS.md``; regenerate with ``dpconvex bench planning``.

Each cell fits ``PrivateLogisticRegression(epsilon=ε, classes=[-1, 1])`` on the same generated
problem in one process, after
one warm-up fit at ε = 1 so that imports and first-call caches are not counted; BLAS runs on one
thread.  Time: the median of
``repeats`` fits, each with a fresh calibration (the calibration cache is cleared).  Memory: the
peak of Python-tracked allocations (``tracemalloc``, NumPy's buffers included) of one more fit,
measured apart because tracing slows allocation.
"""

from __future__ import annotations

import pathlib
import statistics
import time
import tracemalloc
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from dpconvex import PrivateLogisticRegression
from dpconvex_lab.bench_markdown import replace_section, with_csv_section
from dpconvex_lab.bench_scaling import clear_dpconvex_caches

__all__ = ["EPSILONS", "HEADING", "PLANNING_CSV", "planning_section", "run_planning", "with_planning_section"]

HEADING = "## Planning at any ε: time and memory of the default on a tiny problem"
PLANNING_CSV = "bench_planning.csv"
EPSILONS = (0.01, 0.1, 1.0, 1e2, 1e4, 1e6, 1e9, 1e12)


def _problem(rows: int, features: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, features)) / np.sqrt(features)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, np.where(X[:, 0] > 0, 1, -1)


def _fit(X: np.ndarray, y: np.ndarray, epsilon: float, seed: int) -> PrivateLogisticRegression:
    clear_dpconvex_caches()  # each fit calibrates afresh
    return PrivateLogisticRegression(epsilon=epsilon, classes=[-1, 1], random_state=seed).fit(X, y)


def run_planning(*, out: str | pathlib.Path = "docs", epsilons: tuple[float, ...] = EPSILONS, rows: int = 100,
                 features: int = 3, repeats: int = 3, seed: int = 0) -> dict[str, Any]:
    """Time and trace the default fit at each ε; write the CSV and the section of ``BENCHMARKS.md``.

    Parameters
    ----------
    out : str or pathlib.Path, default "docs"
        Directory of the CSV and ``BENCHMARKS.md``.
    epsilons : tuple of float
        The targets.
    rows, features : int, default 100 and 3
        Size of the generated problem (unit-norm rows, labels by the sign of the first feature).
    repeats : int, default 3
        Timed fits per ε (the median is reported).
    seed : int, default 0
        Seed of the data and of the fits.

    Returns
    -------
    dict
        Paths of the CSV and of ``BENCHMARKS.md``, and the measured rows.
    """
    X, y = _problem(rows, features, seed)
    with threadpool_limits(1):
        measured = [{**_measure(X, y, epsilon, repeats, seed), "rows": rows, "features": features, "repeats": repeats}
                    for epsilon in (1.0, *epsilons)][1:]  # 1.0: warm-up
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(measured)
    frame.to_csv(out / PLANNING_CSV, index=False)
    markdown = replace_section(out / "BENCHMARKS.md", planning_section(frame))
    return {"csv": str(out / PLANNING_CSV), "markdown": str(markdown), "rows": measured}


def _measure(X: np.ndarray, y: np.ndarray, epsilon: float, repeats: int, seed: int) -> dict[str, Any]:
    """One row of the table: the median fit time, the traced peak and the certificate at ``epsilon``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model = _fit(X, y, epsilon, seed)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    try:
        _fit(X, y, epsilon, seed)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    report = model.privacy_report_
    return {"epsilon": epsilon, "fit_s": statistics.median(times), "peak_mb": peak / 2**20,
            "certified_epsilon": report.epsilon, "conversion": report.conversion,
            "sigma": report.sigma, "steps": report.iterations, "train_accuracy": model.score(X, y)}


def planning_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of this benchmark's section of ``BENCHMARKS.md``, from the rows of :data:`PLANNING_CSV`."""
    rows, features, repeats = (int(frame[name].iloc[0]) for name in ("rows", "features", "repeats"))
    lines = [HEADING, "",
             "Regenerate with `dpconvex bench planning` (module `dpconvex_lab.bench_planning`). "
             f"`PrivateLogisticRegression(epsilon=ε, classes=[-1, 1])` on {rows} × {features} generated rows, one "
             f"process, one BLAS thread; fit time = median of {repeats} fits, each calibrating afresh (planning is "
             "nearly all of it); peak = Python-tracked allocations of one more fit (`tracemalloc`). "
             "Goal: under 1 s and 200 MB at every ε.", "",
             "| target ε | fit (s) | peak (MB) | certified ε | certified / target | how ε was computed | σ | steps |",
             "|---|---|---|---|---|---|---|---|"]
    for row in frame.to_dict("records"):
        lines.append(f"| {row['epsilon']:g} | {row['fit_s']:.2f} | {row['peak_mb']:.0f} | "
                     f"{row['certified_epsilon']:.6g} | {row['certified_epsilon'] / row['epsilon']:.5f} | "
                     f"{row['conversion']} | {row['sigma']:.3g} | {int(row['steps'])} |")
    return lines


def with_planning_section(text: str, out: pathlib.Path) -> str:
    """``text`` with this section appended when ``out`` holds :data:`PLANNING_CSV`."""
    return with_csv_section(text, pathlib.Path(out) / PLANNING_CSV, planning_section)
