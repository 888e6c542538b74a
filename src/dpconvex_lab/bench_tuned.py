"""Tuned DP-SGD, the reference of the benchmark headline — NOT PRIVATE: hyperparameters chosen on the test folds.

:func:`run_tuned_dpsgd` fits the DP-SGD baseline (:func:`.dpsgd.sgd_ma`, λ = 1e-3 as in the fixed
references' measurement) at every point of a small grid (:data:`TUNED_GRID`: clipping norm C, learning rate η
in sgd_ma's mean-gradient convention — TF Privacy's, whose tutorial default is 0.15 —, epochs E and
expected batch size b), for each ε and each neighbouring relation, on the same stratified folds as
:func:`.bench.run_task` (:func:`.bench_protocol.cv_folds`: the first repetition's five folds).  The *tuned*
number of an (ε, relation) is the best mean test accuracy over the grid
(:func:`.bench_headline.tuned_best`): the grid point is chosen on the test folds, which leaks them,
so it is an optimistic reference for what tuning DP-SGD can give, with no guarantee for the tuning.

Three relations are run because they are not the same guarantee: ``"replace_one"`` is the one
dpconvex certifies (noise from dp-accounting's PLD under REPLACE_ONE); ``"add_remove"`` is DP-SGD as
usually reported (TF Privacy, Opacus; noise from the RDP accountant of :func:`.dpsgd.sgd_ma_epsilon`)
— the same run has up to about twice the ε under replace-one.  Caveat: at ε = 0.05, δ = 1e-8 that
RDP accountant (integer orders ≤ 256) is loose — its noise multiplier exceeds even the replace-one
PLD's (85.8 vs 79.6 at b = 256, E = 30 on an Adult training fold; the add/remove PLD needs 40.8) —
so the add/remove column understates DP-SGD there; at ε = 0.1 and 0.2 it is within ~6 % of the
add/remove PLD's noise.  ``"add_remove_pld"`` is that tight add/remove calibration (dp-accounting's
PLD, :func:`.dpsgd.calibrate_sgd_add_remove_pld_noise`): the reference for the default compared at
the add/remove guarantee (:mod:`.add_remove`), one accountant on both sides.

Pilot (how :data:`TUNED_GRID` was chosen).  Logistic task, the first fold only (39,073 training
rows), ε ∈ {0.05, 0.1, 0.2}, both relations, the 216 points of :data:`PILOT_GRID`: 1,296 fits in
5 min single-threaded; reproduce with ``run_tuned_dpsgd("logistic", *load_adult("all"),
grid=PILOT_GRID, folds=1)`` (a fit's seed depends only on its fold, ε and grid point, so the
full run repeats the pilot's fits of fold 0).

* C = 0.1 collapses to the majority class (≤ 77.6 %; the majority is 76.1 %) at every lr up to 50:
  dropped.  C ∈ {0.5, 1} kept.
* lr ≤ 0.15 (TF Privacy's default and below) was never best; lr ∈ [0.5, 15] held every cell's best:
  lr ∈ {0.5, 1.5, 5, 15} kept (sgd_ma steps along the mean clipped gradient, so the useful lr
  grows with the batch).
* (E, b): the five schedules of :data:`TUNED_SCHEDULES` (96–458 steps) held the best point of
  every cell in an earlier run of the pilot with other seeds and are within 0.3 points of it here
  (at ε = 0.1 the best was E = 3, b = 4096, C = 1, lr = 15: 82.46 / 82.22 %), less than the
  seed-to-seed sd of one fit's accuracy (0.54 points between the two runs).  E = 30, b = 256 (TF
  Privacy's batch) was never best and costs the most; E = 1 with b ≥ 1024 takes too few steps.
* Best over :data:`TUNED_GRID` on this fold, add/remove / replace-one: ε = 0.05: 81.08 / 81.25 %
  (C = 0.5, lr = 5, E = 10, b = 4096); ε = 0.1: 82.27 / 81.94 % (C = 0.5, lr = 5, E = 30,
  b = 4096); ε = 0.2: 82.76 / 82.58 % (C = 1, lr = 15, E = 10, b = 4096).  TF Privacy's defaults
  with 30 epochs (C = 1, lr = 0.15, b = 256): 77.31 / 77.62, 81.96 / 81.46, 82.17 / 82.35 %.  At
  ε = 0.05 replace-one comes out ahead: the RDP looseness above.
* Cost: 0.18 s per fit on average (0.06 s at E = 3, b = 1024 to 0.39 s at E = 30, b = 4096,
  calibration included); one fold's 240 fits take 48 s (logistic) and 63 s (SVM), so the full
  section (5 folds × 3 ε × 3 relations × 40 points, both tasks: 3,600 fits) takes about 15 min.

The best of 40 noisy grid points is optimistic even beyond the test-fold choice: with a fit's
accuracy varying by ~0.5 points between noise seeds, the maximum over the grid gains a few tenths
of a point from the noise alone.
"""

from __future__ import annotations

import inspect
import numbers
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dpconvex_lab.bench_headline import TUNED_CSV, config_label, tuned_best
from dpconvex_lab.bench_protocol import L2, cv_folds, fit_seed, score_fit, signed_labels
from dpconvex_lab.bench_scaling import TASKS
from dpconvex_lab.dpsgd import NEIGHBOURING, sgd_ma

__all__ = ["TUNED_EPSILONS", "TUNED_GRID", "TUNED_SCHEDULES", "PILOT_GRID", "QUICK_GRID", "GRID_KEYS", "TUNED_CSV",
           "run_tuned_dpsgd", "tuned_best", "config_label"]

#: ε of the tuned reference (the headline's).
TUNED_EPSILONS = (0.05, 0.1, 0.2)
#: The sgd_ma keywords a grid point may set (the others keep sgd_ma's defaults).
GRID_KEYS = ("clip_norm", "learning_rate", "epochs", "batch_size")
#: sgd_ma's defaults of those keywords (TF Privacy's tutorial flags), for a point that omits one.
SGD_MA_DEFAULTS = {key: inspect.signature(sgd_ma).parameters[key].default for key in GRID_KEYS}


def _grid(*points: tuple[float, float, float, int]) -> tuple[dict[str, float], ...]:
    return tuple(dict(zip(GRID_KEYS, point)) for point in points)


#: (epochs, batch size) pairs of :data:`TUNED_GRID`: 96–458 steps on an Adult training fold.
TUNED_SCHEDULES = ((3, 256), (3, 1024), (10, 1024), (10, 4096), (30, 4096))
#: The grid of the tuned section, 40 points: C ∈ {0.5, 1} × lr ∈ {0.5, 1.5, 5, 15} × the
#: (E, b) of :data:`TUNED_SCHEDULES`; chosen by the pilot in the module docstring.
TUNED_GRID: tuple[dict[str, float], ...] = _grid(*((clip, lr, epochs, batch) for clip in (0.5, 1.0)
                                                   for lr in (0.5, 1.5, 5.0, 15.0)
                                                   for epochs, batch in TUNED_SCHEDULES))
#: The pilot's grid (module docstring): C ∈ {0.1, 0.5, 1} × lr ∈ {0.05, 0.15, 0.5, 1.5, 5} × E ∈
#: {1, 3, 10, 30} × b ∈ {256, 1024, 4096}, plus lr = 15 (C ∈ {0.5, 1}) and lr ∈ {15, 50} (C = 0.1)
#: at E ∈ {3, 10, 30}: 216 points.
PILOT_GRID: tuple[dict[str, float], ...] = _grid(
    *((clip, lr, epochs, batch) for clip in (0.1, 0.5, 1.0) for lr in (0.05, 0.15, 0.5, 1.5, 5.0)
      for epochs in (1, 3, 10, 30) for batch in (256, 1024, 4096)),
    *((clip, lr, epochs, batch) for clip, lr in ((0.5, 15.0), (1.0, 15.0), (0.1, 15.0), (0.1, 50.0))
      for epochs in (3, 10, 30) for batch in (256, 1024, 4096)))
#: ``--quick``: two cheap grid points of :data:`TUNED_GRID` (CI).
QUICK_GRID: tuple[dict[str, float], ...] = _grid((0.5, 5.0, 3, 256), (1.0, 1.5, 3, 1024))


def _check_grid(grid: Sequence[Mapping[str, float]]) -> list[dict[str, float]]:
    """The grid points with every key of :data:`GRID_KEYS` (sgd_ma's default where a point omits it)."""
    points = [{**SGD_MA_DEFAULTS, **point} for point in grid]
    if not points:
        raise ValueError("grid must hold at least one point.")
    for point in points:
        unknown = set(point) - set(GRID_KEYS)
        if unknown:
            raise ValueError(f"a grid point may set only {GRID_KEYS}; got {sorted(unknown)}.")
        for key, value in point.items():
            if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0):
                raise ValueError(f"grid point {key} must be finite and > 0; got {value!r}.")
    if len({config_label(point) for point in points}) < len(points):
        raise ValueError("grid holds the same point twice.")
    return points


def _point_seed(seed: int, fold: int, epsilon: float, point: dict[str, float]) -> int:
    """The noise seed of a fit: a function of the fold, ε and the grid point's values only, so a
    point's result does not depend on the rest of the grid (the pilot's fits recur in the full run)."""
    values = (epsilon, *(point[key] for key in GRID_KEYS))
    return fit_seed(seed, fold, 300, *(int(round(1e6 * float(v))) for v in values))


def run_tuned_dpsgd(task: str, X: np.ndarray, y: np.ndarray, *, epsilons: Sequence[float] = TUNED_EPSILONS,
                    relations: Sequence[str] = ("replace_one", "add_remove", "add_remove_pld"),
                    grid: Sequence[Mapping[str, float]] = TUNED_GRID, delta: float = 1e-8, seed: int = 0,
                    folds: int | None = None, progress: bool = False) -> pd.DataFrame:
    """Every DP-SGD fit of the tuned section: a row per (ε, relation, grid point, fold).

    Parameters
    ----------
    task : {"logistic", "svm"}
        The loss (:data:`.bench_scaling.TASKS`: logistic, or the huberised hinge with h = 0.5).
    X, y : Adult's rows and labels (1 = positive class; fitted with labels ±1), as :func:`.bench.run_task`.
    epsilons : the ε of the fits.
    relations : values of :data:`.dpsgd.NEIGHBOURING` (``sgd_ma(neighbouring=...)``).
    grid : mappings of ``sgd_ma`` keywords (:data:`GRID_KEYS`; missing ones take sgd_ma's defaults).
    delta, seed : δ of every fit; the seed of the folds (as :func:`.bench.run_task`'s) and of every fit.
        The fits of one (fold, ε, grid point) share their noise seed across the relations (common
        random numbers: the relations differ only in the noise multiplier); the seed depends on the
        point's values, not on its position in the grid.
    folds : keep only the first ``folds`` of the five folds; None keeps all five.
    progress : show a progress bar.

    Returns
    -------
    pandas.DataFrame
        Columns ``task, epsilon, relation, config`` (:func:`.bench_headline.config_label`), the grid
        keys, ``l2`` (1e-3), ``fold``, ``accuracy`` (test), ``objective`` / ``objective_ref`` (training
        objective at λ = 1e-3), ``noise_multiplier``, ``sampling_rate``, ``steps``,
        ``epsilon_accounted`` (ε of the run under its relation), ``bound`` and ``fit_time`` (s,
        calibration included when not cached).  Choosing a grid point from these accuracies is NOT
        private (:func:`.bench_headline.tuned_best`).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {tuple(TASKS)}; got {task!r}.")
    for relation in relations:
        if relation not in NEIGHBOURING:
            raise ValueError(f"relations must be values of {NEIGHBOURING}; got {relation!r}.")
    points = _check_grid(grid)
    loss = TASKS[task][1]
    splits = cv_folds(X, y, repeats=1, seed=seed, folds=folds)
    bar = tqdm(total=len(splits) * len(epsilons) * len(points) * len(relations), disable=not progress, unit="fit",
               desc=f"tuned DP-SGD {task}")
    rows: list[dict[str, Any]] = []
    for f, (train, test) in enumerate(splits):
        X_train, y_train = X[train], signed_labels(y[train])
        for eps in epsilons:
            for point in points:
                run_seed = _point_seed(seed, f, eps, point)
                for relation in relations:
                    tic = time.perf_counter()
                    fit = sgd_ma(X_train, y_train, loss=loss, epsilon=eps, delta=delta, l2_regularization=L2,
                                 random_state=run_seed, neighbouring=relation, **point)
                    elapsed = time.perf_counter() - tic
                    result = {"coef": fit.coef, "intercept": fit.intercept, "l2": L2}
                    rows.append({"task": task, "epsilon": float(eps), "relation": relation,
                                 "config": config_label(point), **point,
                                 "l2": L2, "fold": f, **score_fit(result, loss, X[train], y[train], X[test], y[test]),
                                 **{key: fit.params[key] for key in ("noise_multiplier", "sampling_rate", "steps",
                                                                     "epsilon_accounted")},
                                 "bound": fit.bound, "fit_time": elapsed})
                    bar.update()
    bar.close()
    return pd.DataFrame(rows)
