"""Processing time and peak memory versus n (Chen, Lee, Kifer 2019, Fig. 3) for every trainer, and
the default estimator's fit time against scikit-learn's.

Data: replicates of Adult (rows drawn with replacement, 50k–250k) and a synthetic problem of the
KDDCup99 size (4.9M × 120: unit-norm Gaussian rows, labels from a random hyperplane with 10 %
flipped).  Every method gets a **fixed optimisation budget** so that its cost can be compared
across n (defaults such as noisy GD's iteration count grow with n by design): ten passes over the
data for the multi-pass trainers, one pass for PNSGD, Algorithm 1's own stopping rule for
sco_noisy_sgd; the baselines run their defaults.  ε = 1, δ = 1e-8, logistic loss, λ = 1e-3.
Reported: fit time, rows/s (n / fit time) and peak memory (``tracemalloc``: Python and NumPy
allocations during the fit, excluding the data), and the log–log slope of time against n, which
is 1 for a cost linear in n.

:func:`run_default_speed` times the estimators as a user gets them (only ε, δ, the label set and a
seed passed) on Adult and on Adult with its rows repeated 10×, against the scikit-learn reference of
:func:`sklearn_reference_time` fitted in the same process on the same data.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from dpconvex.datasets.adult import load_adult
from dpconvex.estimators.linear_model import PrivateHuberSVC, PrivateLogisticRegression
from dpconvex.mechanisms import MECHANISMS
from dpconvex.objectives.losses import HuberizedHingeLoss, LogisticLoss
from dpconvex_lab.baselines import BASELINES, BaselineUnavailable

__all__ = ["BUDGETS", "ADULT_SIZES", "SYNTHETIC_SHAPE", "TASKS", "SPEED_EPSILONS", "SPEED_REPLICATIONS",
           "SKLEARN_REFERENCE", "synthetic_problem", "run_scaling", "loglog_slope", "default_estimator",
           "sklearn_reference_time", "replicated_adult", "run_default_speed", "clear_dpconvex_caches"]

L2 = 1e-3
#: The benchmark's tasks: estimator class and the loss it fits.
TASKS = {"logistic": (PrivateLogisticRegression, LogisticLoss()), "svm": (PrivateHuberSVC, HuberizedHingeLoss(0.5))}
#: ε grid and Adult replication factors of :func:`run_default_speed` (a factor r < 1 is a random r·n-row subset).
SPEED_EPSILONS = (0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
SPEED_REPLICATIONS = (1, 10)
#: Fits per cell of :func:`run_default_speed` (each side; medians are reported).
SPEED_FITS = 3
#: What the time ratios divide by, per task (fitted on the same training rows, λ = 1e-3, no intercept).
SKLEARN_REFERENCE = {
    "logistic": "scikit-learn LogisticRegression(solver='lbfgs', C=1/(n·λ), fit_intercept=False), "
                "scikit-learn's default tol and max_iter",
    "svm": "SciPy L-BFGS-B on mean huberised hinge + (λ/2)‖w‖² from w = 0 with the stopping rule of "
           "scikit-learn's lbfgs (gtol 1e-4, maxiter 100, maxls 50, ftol 64·eps; scikit-learn has no "
           "huberised-hinge estimator)",
}
#: scipy.optimize.minimize options of scikit-learn's ``LogisticRegression(solver="lbfgs")`` with its
#: defaults tol = 1e-4 and max_iter = 100 (``sklearn/linear_model/_logistic.py``, scikit-learn 1.9).
SKLEARN_LBFGS_OPTIONS = {"maxiter": 100, "maxls": 50, "gtol": 1e-4, "ftol": 64 * np.finfo(float).eps}
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


def default_estimator(task: str, epsilon: float, delta: float, seed: int,
                      **options: Any) -> PrivateLogisticRegression | PrivateHuberSVC:
    """The task's estimator with only ε, δ, ``classes=[-1, 1]``, the seed and ``options`` set.

    Parameters
    ----------
    task : {"logistic", "svm"}
    epsilon, delta : the privacy target.
    seed : int
        ``random_state`` (reproducible benchmark; a release uses None).
    **options
        Further estimator parameters (e.g. ``method``, ``l2_regularization``), passed only when
        given: everything else is the library's default (``method="auto"``,
        ``l2_regularization="auto"``), so the default rows follow the estimator's defaults.

    Returns
    -------
    PrivateLogisticRegression or PrivateHuberSVC
        Unfitted; after ``fit``, ``l2_regularization_`` is the λ it used.
    """
    return TASKS[task][0](epsilon=epsilon, delta=delta, classes=[-1, 1], random_state=seed, **options)


def clear_dpconvex_caches() -> int:
    """Empty every ``functools`` cache of the loaded ``dpconvex`` modules (noise calibrations, …).

    A timed fit then pays what a first fit at its (n, ε, δ) pays: without this, every fold after
    the first (same n, same ε) reuses the calibration of the first, and the time ratios would
    flatter the library against scikit-learn, which caches nothing.

    Returns
    -------
    int
        The number of caches emptied.
    """
    count = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "dpconvex" or name.startswith("dpconvex.")):
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and getattr(value, "__module__", None) == name:
                value.cache_clear()
                count += 1
    return count


def _sklearn_fit(task: str, X: np.ndarray, y: np.ndarray) -> float:
    """Seconds of one fit of :data:`SKLEARN_REFERENCE` ``[task]`` on (X, y), labels ±1."""
    if task == "logistic":
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=1.0 / (y.size * L2), fit_intercept=False, solver="lbfgs")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a ConvergenceWarning would still be a fair timing
            tic = time.perf_counter()
            model.fit(X, y)
            return time.perf_counter() - tic
    from scipy.optimize import minimize

    loss = TASKS[task][1]

    def fun_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        return float(np.mean(loss.values(w, X, y))) + 0.5 * L2 * float(w @ w), loss.mean_gradient(w, X, y) + L2 * w

    tic = time.perf_counter()
    minimize(fun_grad, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options=SKLEARN_LBFGS_OPTIONS)
    return time.perf_counter() - tic


def sklearn_reference_time(task: str, X: np.ndarray, y: np.ndarray, fits: int = 3) -> float:
    """Median fit time (s) of ``fits`` fits of :data:`SKLEARN_REFERENCE` ``[task]`` on (X, y) (labels ±1).

    Run in the caller's process with its thread settings, so a ratio to a fit timed beside it
    compares like with like.
    """
    return float(np.median([_sklearn_fit(task, X, y) for _ in range(fits)]))


def replicated_adult(replication: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """Adult (``load_adult("all")``, labels ±1) with its rows tiled ``replication`` times, and a label.

    An integer factor ≥ 1 repeats every row (``np.tile``, labels likewise); a factor below 1 keeps a
    random subset of round(factor·n) rows (the small ``--quick`` cell).
    """
    X, y = load_adult("all")
    y = np.where(y == 1, 1.0, -1.0)
    if replication >= 1:
        if replication != int(replication):
            raise ValueError(f"a replication >= 1 must be an integer; got {replication!r}.")
        factor = int(replication)
        if factor == 1:
            return X, y, "Adult"
        return np.tile(X, (factor, 1)), np.tile(y, factor), f"Adult ×{factor}"
    if replication <= 0:
        raise ValueError(f"replication must be positive; got {replication!r}.")
    rows = np.sort(np.random.default_rng(seed).choice(y.size, max(2, round(replication * y.size)), replace=False))
    return X[rows], y[rows], f"Adult, {100 * replication:g} % of rows"


def run_default_speed(tasks: Sequence[str] = tuple(TASKS), epsilons: Sequence[float] = SPEED_EPSILONS,
                      replications: Sequence[float] = SPEED_REPLICATIONS, seed: int = 0, delta: float = 1e-8,
                      progress: bool = True) -> list[dict[str, Any]]:
    """Fit time of the default estimator vs scikit-learn per (replication, task, ε), interleaved medians.

    Parameters
    ----------
    tasks : names of :data:`TASKS`.
    epsilons : the ε of the default fits (δ = ``delta``).
    replications : Adult replication factors (:func:`replicated_adult`).
    seed : int
        Seeds the fits (and the subset of a factor < 1).
    delta : float
    progress : bool
        Show a progress bar.

    Returns
    -------
    list of dict
        One row per cell: task, data, replication, n, d, epsilon, fit_time (median of
        :data:`SPEED_FITS` cold default fits: only ε, δ, ``classes=[-1, 1]`` and a seed passed,
        dpconvex's caches emptied before each), sklearn_fit_time (median of as many fits of
        :data:`SKLEARN_REFERENCE` on the same data, each run just before one of ours, so that a
        loaded machine slows both alike), time_ratio, the trainer that ran (``mechanism``) and its
        ``batch_size`` (NaN if it has none), the λ the estimator used (``l2_regularization_``) and
        the certified ε.
    """
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(replications) * len(tasks) * len(epsilons), disable=not progress, unit="fit",
               desc="default vs sklearn")
    for r, replication in enumerate(replications):
        X, y, label = replicated_adult(replication, seed)
        for t, task in enumerate(tasks):
            for e, epsilon in enumerate(epsilons):
                references, times = [], []
                for _ in range(SPEED_FITS):  # interleaved: each of ours right after a reference fit
                    references.append(_sklearn_fit(task, X, y))
                    estimator = default_estimator(task, epsilon, delta,
                                                  int(np.random.SeedSequence([seed, r, t, e]).generate_state(1)[0]))
                    clear_dpconvex_caches()  # a cold fit, as a user's first one
                    tic = time.perf_counter()
                    estimator.fit(X, y)
                    times.append(time.perf_counter() - tic)
                reference, elapsed = float(np.median(references)), float(np.median(times))
                cert = estimator.privacy_report_
                rows.append({"task": task, "data": label, "replication": replication, "n": y.size, "d": X.shape[1],
                             "epsilon": float(epsilon), "fit_time": elapsed, "sklearn_fit_time": reference,
                             "time_ratio": elapsed / reference, "mechanism": cert.mechanism,
                             "batch_size": cert.assumptions.get("batch_size", np.nan),
                             "l2": float(estimator.l2_regularization_), "certified_epsilon": cert.epsilon})
                bar.update()
        del X, y
    bar.close()
    return rows
