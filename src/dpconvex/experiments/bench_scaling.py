"""Processing time and peak memory versus n (Chen, Lee, Kifer 2019, Fig. 3) for every trainer.

Data: replicates of Adult (rows drawn with replacement, 50k–250k) and a synthetic problem of the
KDDCup99 size (4.9M × 120: unit-norm Gaussian rows, labels from a random hyperplane with 10 %
flipped).  Every method gets a **fixed optimisation budget** so that its cost can be compared
across n (defaults such as noisy GD's iteration count grow with n by design): ten passes over the
data for the multi-pass trainers, one pass for PNSGD, Algorithm 1's own stopping rule for
sco_noisy_sgd; the baselines run their defaults.  ε = 1, δ = 1e-8, logistic loss, λ = 1e-3.
Reported: fit time, rows/s (n / fit time) and peak memory (``tracemalloc``: Python and NumPy
allocations during the fit, excluding the data), and the log–log slope of time against n, which
is 1 for a cost linear in n.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..datasets.adult import load_adult
from ..losses import LogisticLoss
from ..mechanisms import MECHANISMS
from .baselines import BASELINES, BaselineUnavailable

__all__ = ["BUDGETS", "ADULT_SIZES", "SYNTHETIC_SHAPE", "synthetic_problem", "run_scaling", "loglog_slope"]

L2 = 1e-3
#: Fixed work per trainer: ten passes for the multi-pass methods, one for PNSGD, Alg. 1's rule for SCO.
BUDGETS: dict[str, dict[str, Any]] = {
    "noisy_gd": {"iterations": 10},
    "noisy_sgd": {"epochs": 10},
    "rsgd_ar": {"epochs": 10},
    "nsgd": {"epochs": 10},
    "outpert_gd": {"epochs": 10},
    "pnsgd": {},
    "sco_noisy_sgd": {},
}
PASSES = {"noisy_gd": "10", "noisy_sgd": "10", "rsgd_ar": "10", "nsgd": "10", "outpert_gd": "10", "pnsgd": "1",
          "sco_noisy_sgd": "0.5–2 (stops at n/2 fresh records)"}
ADULT_SIZES = (50_000, 100_000, 150_000, 200_000, 250_000)
SYNTHETIC_SHAPE = (4_900_000, 120)
TIMED_BASELINES = ("nonprivate", "objpert", "sgd_ma")


def synthetic_problem(n: int, dimension: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm Gaussian rows; labels sign(wᵀx) with 10 % flipped (float64, ±1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dimension))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sign(X @ rng.standard_normal(dimension))
    y[y == 0] = 1.0
    y[rng.random(n) < 0.1] *= -1.0
    return X, y


def _adult_replicate(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_adult("all")
    rows = np.random.default_rng(seed).integers(0, y.size, n)
    return X[rows], np.where(y[rows] == 1, 1.0, -1.0)


def _trainers() -> dict[str, Callable[[np.ndarray, np.ndarray], Any]]:
    loss = LogisticLoss()
    common = dict(loss=loss, l2_regularization=L2, epsilon=1.0, delta=1e-8, random_state=0)
    trainers = {name: (lambda X, y, name=name: MECHANISMS[name](X, y, **common, **BUDGETS[name]))
                for name in MECHANISMS}
    for name in TIMED_BASELINES:
        trainers[f"baseline: {name}"] = (lambda X, y, name=name: BASELINES[name](
            X, y, loss=loss, epsilon=1.0, delta=1e-8, l2_regularization=L2, random_state=0))
    return trainers


def _measure(train: Callable, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    tracemalloc.start()
    tic = time.perf_counter()
    train(X, y)
    elapsed = time.perf_counter() - tic
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak / 2**20


def run_scaling(sizes: Sequence[int] = ADULT_SIZES, synthetic: tuple[int, int] | None = SYNTHETIC_SHAPE,
                methods: Sequence[str] | None = None, seed: int = 0, progress: bool = True) -> list[dict[str, Any]]:
    """One timed fit per (data set, method): rows with n, data, method, fit_time, rows_per_s, peak_mib.

    A baseline that cannot run (e.g. diffprivlib) is not timed; ``methods`` restricts the trainers
    (names of :data:`dpconvex.mechanisms.MECHANISMS` or ``"baseline: <name>"``).
    """
    trainers = _trainers()
    if methods is not None:
        trainers = {name: trainers[name] for name in methods}
    datasets = [("Adult replicate", n, lambda n=n: _adult_replicate(n, seed)) for n in sizes]
    if synthetic is not None:
        datasets.append(("synthetic", synthetic[0], lambda: synthetic_problem(*synthetic, seed=seed)))
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(datasets) * len(trainers), disable=not progress, unit="fit", desc="time vs n")
    for label, n, make in datasets:
        X, y = make()
        for name, train in trainers.items():
            try:
                elapsed, peak = _measure(train, X, y)
            except BaselineUnavailable as error:  # pragma: no cover - depends on the environment
                rows.append({"data": label, "n": n, "d": X.shape[1], "method": name, "fit_time": np.nan,
                             "rows_per_s": np.nan, "peak_mib": np.nan, "note": str(error)})
            else:
                rows.append({"data": label, "n": n, "d": X.shape[1], "method": name, "fit_time": elapsed,
                             "rows_per_s": n / elapsed, "peak_mib": peak, "note": ""})
            bar.update()
        del X, y
    bar.close()
    return rows


def loglog_slope(rows: Sequence[dict[str, Any]], method: str) -> float:
    """Least-squares slope of log(fit time) on log(n) over ``method``'s rows (1 = linear cost)."""
    points = [(r["n"], r["fit_time"]) for r in rows if r["method"] == method and np.isfinite(r["fit_time"])]
    if len(points) < 2:
        return float("nan")
    n, t = np.log(np.array(points, dtype=float)).T
    return float(np.polyfit(n, t, 1)[0])
