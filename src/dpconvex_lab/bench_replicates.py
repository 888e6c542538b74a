"""The headline replicated: the default and its DP-SGD references re-fitted with fresh noise seeds.

The headline of :mod:`.bench_headline` compares one fit per fold of the default estimator with the
best of 40 DP-SGD grid points chosen on the test folds (:mod:`.bench_tuned`).  Both numbers carry
the noise of one privacy-noise draw per fold (about ±0.5 points per fit on Adult at ε ≤ 0.2), and
the tuned one also the part of the *winner's curse* that comes from that noise: the maximum of 40
noisy means is biased upwards by the noise alone.  This section removes the noise part, not the
choice on the test folds:

* the grid point of each (ε, relation) is still the one :func:`.bench_headline.tuned_best` chose on
  the test folds (so the reference stays tuned on the test folds, NOT private), but its accuracy
  is measured again on ``seeds`` fresh noise seeds per fold, none of them used in the choice;
* the default estimator (``auto (default)``) and DP-SGD with its own defaults (``sgd_ma``: the
  SGD-MA reference of the SVM task's headline, under add/remove as usually reported and under
  replace-one, dpconvex's guarantee) are fitted on the same number of fresh seeds per fold;
* so is the default at the *same add/remove guarantee* as the add/remove references
  (:data:`DEFAULT_ADD_REMOVE`): the estimator with only a nominal ε, δ, the label set and a seed,
  the nominal (replace-one) ε chosen by :func:`.add_remove.matching_epsilon` so that its release is
  (ε, δ)-DP under add/remove at the table's ε (a comparison, not a dpconvex certificate), with
  DP-SGD calibrated under add/remove by the same PLD accountant (``neighbouring="add_remove_pld"``:
  the tuned grid point chosen for that calibration, and ``sgd_ma``'s defaults) beside the RDP ones.

Every entry is a mean over folds × seeds.  What is compared is the mechanisms on these five
folds, so the standard error is conditional on the folds (the privacy noise only): with s_f² the
variance over the seeds within fold f, F folds and S seeds, se = √(mean_f s_f² / (F·S)).  The
spread between folds (the split's sampling error) is common to every entry and cancels from their
differences, whose standard error is √(se₁² + se₂²) (independent noise seeds).  A verdict is *met*
when the default's mean, rounded as printed, is at least the reference's; a gap within two
standard errors is marked *within noise*.  The fits use the benchmark's folds
(:func:`.bench_protocol.cv_folds`) and δ; records go to ``bench_replicates_<task>.csv`` and
:func:`replicates_section` renders them under the headline.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dpconvex_lab.add_remove import matching_epsilon
from dpconvex_lab.bench_headline import HEADLINE_EPSILONS, HEADLINE_REFERENCES, config_label, tuned_best
from dpconvex_lab.bench_protocol import DEFAULT, L2, cv_folds, fit_ours, fit_seed, score_fit, signed_labels
from dpconvex_lab.bench_scaling import TASKS
from dpconvex_lab.bench_tuned import GRID_KEYS
from dpconvex_lab.dpsgd import sgd_ma

__all__ = ["REPLICATES_CSV", "REPLICATE_SEEDS", "DEFAULT_ADD_REMOVE", "ENTRIES", "RELATIONS", "run_replicates",
           "replicate_summary",
           "replicates_section"]

#: File of a task's replicated headline records, beside its bench CSV.
REPLICATES_CSV = "bench_replicates_{task}.csv"
#: Fresh noise seeds per fold of every entry.
REPLICATE_SEEDS = 8
#: The default estimator at the nominal ε whose release meets the table's ε under add/remove.
DEFAULT_ADD_REMOVE = f"{DEFAULT}, same add/remove guarantee"
#: The entries: the default, tuned DP-SGD (grid point fixed by the tuned section) under each
#: relation, DP-SGD with sgd_ma's defaults under each relation, the default at the add/remove ε
#: (last: an entry's position seeds its fits, so the others keep their seeds).
ENTRIES = (DEFAULT, "tuned DP-SGD, replace-one", "tuned DP-SGD, add/remove", "sgd_ma defaults, add/remove",
           "sgd_ma defaults, replace-one", DEFAULT_ADD_REMOVE, "tuned DP-SGD, add/remove (PLD)",
           "sgd_ma defaults, add/remove (PLD)")
#: The neighbouring relation of each DP-SGD entry (``sgd_ma(neighbouring=...)``).
RELATIONS = {"tuned DP-SGD, replace-one": "replace_one", "tuned DP-SGD, add/remove": "add_remove",
             "sgd_ma defaults, add/remove": "add_remove", "sgd_ma defaults, replace-one": "replace_one",
             "tuned DP-SGD, add/remove (PLD)": "add_remove_pld", "sgd_ma defaults, add/remove (PLD)": "add_remove_pld"}
#: Seed tag of the replicated fits (the bench's own fits use other tags: no seed is shared with the choice).
_SEED_TAG = 500


def _tuned_point(tuned: pd.DataFrame, best: pd.DataFrame, epsilon: float, relation: str) -> dict[str, float] | None:
    """The grid point the tuned section chose for (ε, relation), as sgd_ma keywords; None if not run."""
    row = best[np.isclose(best["epsilon"].astype(float), epsilon) & (best["relation"] == relation)]
    if not len(row):
        return None
    record = tuned[tuned["config"] == row["config"].iloc[0]].iloc[0]
    point = {key: float(record[key]) for key in GRID_KEYS}
    point["batch_size"] = int(point["batch_size"])
    return point


def _fit_entry(entry: str, task: str, epsilon: float, delta: float, seed: int, X_train, y_train,
               point: dict[str, float] | None) -> dict[str, Any] | None:
    """One fit of ``entry``: a result dict for :func:`.bench_protocol.score_fit`, or None when the entry was not run."""
    loss = TASKS[task][1]
    if entry == DEFAULT:
        return fit_ours(task, DEFAULT, epsilon, delta, None, seed, X_train, y_train, loss)
    if entry == DEFAULT_ADD_REMOVE:
        return fit_ours(task, DEFAULT, point["nominal_epsilon"], delta, None, seed, X_train, y_train, loss)
    if entry.startswith("sgd_ma defaults"):
        point = {}  # sgd_ma's own defaults, as the bench's baselines
    if point is None:
        return None
    fit = sgd_ma(X_train, signed_labels(y_train), loss=loss, epsilon=epsilon, delta=delta, l2_regularization=L2,
                 random_state=seed, neighbouring=RELATIONS[entry], **point)
    return {"coef": fit.coef, "intercept": fit.intercept, "l2": L2}


def run_replicates(task: str, X: np.ndarray, y: np.ndarray, tuned: pd.DataFrame | None, *,
                   epsilons: Sequence[float] = HEADLINE_EPSILONS, seeds: int = REPLICATE_SEEDS,
                   delta: float = 1e-8, seed: int = 0, folds: int | None = None,
                   progress: bool = False, entries: Sequence[str] = ENTRIES) -> pd.DataFrame:
    """Fit every entry of ``entries`` (default :data:`ENTRIES`) on ``seeds`` fresh noise seeds per fold.

    Parameters
    ----------
    task : {"logistic", "svm"}
    X, y : Adult's rows and labels (1 = positive class), as :func:`.bench.run_task`.
    tuned : pandas.DataFrame or None
        The task's tuned DP-SGD records (``bench_tuned_<task>.csv``); they fix the tuned entries' grid
        points (:func:`.bench_headline.tuned_best`, chosen on the test folds: NOT private).  None skips
        the tuned entries.
    epsilons : the ε of the headline.
    seeds : int
        Noise seeds per fold and entry (≥ 1).
    delta, seed, folds : δ; the seed of the folds and fits; keep only the first ``folds`` folds.
    progress : show a progress bar.
    entries : a subset of :data:`ENTRIES` (each keeps its seeds: they depend on its position there).

    Returns
    -------
    pandas.DataFrame
        Columns ``task, epsilon, entry, config, fold, replicate, accuracy``; ``config`` is the tuned grid
        point, the nominal ε of :data:`DEFAULT_ADD_REMOVE` (``"nominal eps=…"``) or ``""``.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {tuple(TASKS)}; got {task!r}.")
    if not (isinstance(seeds, (int, np.integer)) and seeds >= 1):
        raise ValueError(f"seeds must be an integer >= 1; got seeds={seeds!r}.")
    unknown = [entry for entry in entries if entry not in ENTRIES]
    if unknown or not entries:
        raise ValueError(f"entries must be a non-empty subset of {ENTRIES}; got {tuple(entries)!r}.")
    best = tuned_best(tuned)
    splits = cv_folds(X, y, repeats=1, seed=seed, folds=folds)
    bar = tqdm(total=len(splits) * len(epsilons) * len(entries) * seeds, disable=not progress, unit="fit",
               desc=f"replicated headline {task}")
    rows: list[dict[str, Any]] = []
    for f, (train, test) in enumerate(splits):
        for e, eps in enumerate(epsilons):
            for k, entry in enumerate(ENTRIES):
                if entry not in entries:
                    continue
                point = _tuned_point(tuned, best, eps, RELATIONS[entry]) if entry.startswith("tuned") else None
                if entry == DEFAULT_ADD_REMOVE:  # from the training fold's shape only, as auto plans
                    point = {"nominal_epsilon": matching_epsilon(TASKS[task][1], len(train), X.shape[1], eps, delta)}
                for r in range(seeds):
                    run_seed = fit_seed(seed, f, _SEED_TAG, e, k, r)
                    result = _fit_entry(entry, task, eps, delta, run_seed, X[train], y[train], point)
                    bar.update()
                    if result is None:
                        continue
                    score = score_fit(result, TASKS[task][1], X[train], y[train], X[test], y[test])
                    config = ("" if point is None else f"nominal eps={point['nominal_epsilon']:.5g}"
                              if entry == DEFAULT_ADD_REMOVE else config_label(point))
                    rows.append({"task": task, "epsilon": float(eps), "entry": entry, "config": config,
                                 "fold": f, "replicate": r, "accuracy": score["accuracy"]})
    bar.close()
    return pd.DataFrame(rows)


def replicate_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (ε, entry): mean accuracy and its standard error conditional on the folds (module docstring).

    Parameters
    ----------
    frame : pandas.DataFrame
        Records of :func:`run_replicates`.

    Returns
    -------
    pandas.DataFrame
        Columns ``epsilon, entry, mean`` (%), ``se`` (%: √(mean over folds of the within-fold variance
        over seeds / fits); 0 with one seed per fold), ``fits``, ``folds``, ``config``.
    """
    groups = frame.groupby(["epsilon", "entry"], sort=False)
    summary = groups["accuracy"].agg(mean="mean", fits="count").reset_index()
    within = frame.groupby(["epsilon", "entry", "fold"], sort=False)["accuracy"].var(ddof=1)
    pooled = within.groupby(level=["epsilon", "entry"], sort=False).mean().fillna(0.0)
    summary["folds"] = groups["fold"].nunique().to_numpy()
    summary["config"] = groups["config"].first().to_numpy()
    summary["mean"] *= 100.0
    keys = pd.MultiIndex.from_frame(summary[["epsilon", "entry"]])
    summary["se"] = 100.0 * np.sqrt(pooled.reindex(keys).fillna(0.0).to_numpy() / summary["fits"].to_numpy())
    return summary


def _by_epsilon(summary: pd.DataFrame) -> Iterator[tuple[float, dict[str, pd.Series | None]]]:
    """(ε, {entry: its summary row or None}) for every ε of ``summary``, in increasing ε."""
    for eps in sorted(summary["epsilon"].unique()):
        here = summary[summary["epsilon"] == eps].set_index("entry")
        yield eps, {entry: here.loc[entry] if entry in here.index else None for entry in ENTRIES}


def _cell(row: pd.Series | None) -> str:
    return "–" if row is None else f"{row['mean']:.2f} ± {row['se']:.2f}"


def _versus(mine: pd.Series | None, reference: pd.Series | None) -> str:
    """``"met (+0.12 ± 0.05)"``: default − reference ± its standard error; ``", within noise"`` if |gap| < 2 se."""
    if mine is None or reference is None:
        return "–"
    gap = mine["mean"] - reference["mean"]
    se = float(np.hypot(mine["se"], reference["se"]))
    verdict = "met" if round(mine["mean"], 2) >= round(reference["mean"], 2) else "NOT met"
    return f"{verdict} ({gap:+.2f} ± {se:.2f}{', within noise' if abs(gap) < 2 * se else ''})"


def _fixed(references: dict, key: str, eps: float, mine: pd.Series | None) -> str:
    """A fixed headline reference (``"dpsgd"`` or ``"goal"``) with the default's verdict; ``–`` if none."""
    values = references.get(key)
    target = values.get(float(eps)) if isinstance(values, dict) else None
    if target is None or mine is None:
        return "–"
    return f"{target:g} ({'met' if round(mine['mean'], 2) >= target else 'NOT met'})"


def replicates_section(task: str, frame: pd.DataFrame) -> list[str]:
    """Markdown lines of the replicated headline.

    Parameters
    ----------
    task : str
        Selects the headline's fixed references (:data:`.bench_headline.HEADLINE_REFERENCES`).
    frame : pandas.DataFrame or None
        Records of :func:`run_replicates`.

    Returns
    -------
    list of str
        The section's lines; empty without records.
    """
    if frame is None or frame.empty:
        return []
    summary = replicate_summary(frame)
    fits = int(summary["fits"].max())
    folds = int(summary["folds"].max())
    references = HEADLINE_REFERENCES.get(task, {})
    lines = ["", "### Headline replicated: fresh noise seeds (mean ± standard error)", "",
             f"Every entry re-fitted on {fits // max(folds, 1)} fresh noise seeds on each of the {folds} folds "
             f"(`{REPLICATES_CSV.format(task=task)}`; `dpconvex_lab.bench_replicates`): the one-fit-per-fold "
             "headline above carries about ±0.5 points of privacy noise per fit, and its tuned DP-SGD is the "
             "best of 40 noisy grid points (biased upwards by the noise alone). Here the tuned grid point is "
             "the one chosen above on the test folds (still NOT private: this removes the noise part of the "
             "selection bias, not the choice on the test folds), its accuracy measured on seeds not used in the "
             "choice. Standard errors are conditional on these folds (privacy noise only; the folds are common "
             "to every entry). *met* = the default's mean, rounded as printed, is at least the reference's; in "
             "brackets default − reference ± the standard error of the difference, *within noise* when the gap "
             "is under two standard errors.", "",
             f"| ε | `{DEFAULT}` | tuned DP-SGD, replace-one (same guarantee) | default vs it | tuned DP-SGD, "
             "add/remove | default vs it | `sgd_ma` defaults, add/remove (SGD-MA as reported) | default vs it | "
             "`sgd_ma` defaults, replace-one | fixed tuned DP-SGD reference (%) | our goal (%) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for eps, row in _by_epsilon(summary):
        mine = row[DEFAULT]
        lines.append(f"| {eps:g} | {_cell(mine)} | {_cell(row[ENTRIES[1]])} | {_versus(mine, row[ENTRIES[1]])} | "
                     f"{_cell(row[ENTRIES[2]])} | {_versus(mine, row[ENTRIES[2]])} | {_cell(row[ENTRIES[3]])} | "
                     f"{_versus(mine, row[ENTRIES[3]])} | {_cell(row[ENTRIES[4]])} | "
                     f"{_fixed(references, 'dpsgd', eps, mine)} | {_fixed(references, 'goal', eps, mine)} |")
    return lines + _add_remove_table(summary)


def _add_remove_table(summary: pd.DataFrame) -> list[str]:
    """The default at the add/remove references' own guarantee (:data:`DEFAULT_ADD_REMOVE`); empty if not run."""
    if DEFAULT_ADD_REMOVE not in set(summary["entry"]):
        return []
    references = ("tuned DP-SGD, add/remove (PLD)", "sgd_ma defaults, add/remove (PLD)", "tuned DP-SGD, add/remove",
                  "sgd_ma defaults, add/remove")
    lines = ["", "At the add/remove guarantee: the default estimator fitted at the nominal (replace-one) ε whose "
             "release is (ε, δ)-DP under add/remove neighbours by dp-accounting's PLD (`dpconvex_lab.add_remove`; "
             "q = b/n and the whole plan computed from n and held fixed, n treated as public as DP-SGD's "
             "accountants do; a comparison number, not a dpconvex certificate: the fit's own certificate is the "
             "nominal ε, replace-one), against DP-SGD calibrated under add/remove by the same PLD accountant "
             "(like for like; the tuned grid point chosen on the test folds under that calibration) and by the "
             "RDP accountant as DP-SGD is usually reported (looser: up to about twice the noise at ε = 0.05). "
             "Same seeds per fold and verdict rule as above.", "",
             "| ε (add/remove) | nominal ε (replace-one) | `auto (default)` at it | tuned DP-SGD, add/remove, PLD | "
             "default vs it | `sgd_ma` defaults, add/remove, PLD | default vs it | tuned DP-SGD, add/remove, RDP | "
             "default vs it | `sgd_ma` defaults, add/remove, RDP (SGD-MA as reported) | default vs it |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for eps, row in _by_epsilon(summary):
        mine = row[DEFAULT_ADD_REMOVE]
        nominal = "–" if mine is None else str(mine["config"]).removeprefix("nominal eps=")
        cells = " | ".join(f"{_cell(row[r])} | {_versus(mine, row[r])}" for r in references)
        lines.append(f"| {eps:g} | {nominal} | {_cell(mine)} | {cells} |")
    return lines
