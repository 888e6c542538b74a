"""Verdicts and the ``BENCHMARKS.md`` section of the panel benchmark (:mod:`.bench_panel`).

A cell is the mean score over every fit of an entry (test accuracy in %, or test R²) ± its standard
error: with R ≥ 2 repetitions, the standard deviation of the R per-repetition means over √R (the
split and the privacy noise); with one repetition and S ≥ 2 noise seeds per split, the noise-only
error √(mean over splits of the variance over seeds / fits), conditional on the splits; none with
one fit per split.  A comparison of the default with another entry uses the standard error of
their difference: paired by repetition when R ≥ 2 (the entries share the splits), else
√(se₁² + se₂²).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TITLE", "panel_section", "summary_rows", "verdicts"]

TITLE = "Panel: the default on every table"
#: Tolerance of check (c): the default within this of the non-private model (accuracy points, or R²).
NONPRIVATE_TOLERANCE = {"classification": 2.0, "regression": 0.05}
#: Check (c) applies from this many rows, at ε = 1.
NONPRIVATE_MIN_ROWS = 10_000
#: The non-private references, deterministic given the split.
REFERENCES = ("trivial", "nonprivate")
PEER_NAMES = {"dpsgd_tuned": "DP-SGD tuned on the test folds", "objpert": "objective perturbation",
              "diffprivlib": "diffprivlib", "outpert_gd": "output perturbation"}


def _gap(value: float, regression: bool) -> str:
    return f"{value:.3f}" if regression else f"{value:.2f} points"


def _at_least(mine: float, other: float, se: float, regression: bool) -> str:
    """Whether ``mine`` ≥ ``other`` within noise, i.e. ``mine`` ≥ ``other`` − 2 se: "met", "met within noise (…)"
    or "not met by X"."""
    se = 0.0 if not np.isfinite(se) else se
    if mine >= other:
        return "met"
    if mine >= other - 2.0 * se:
        return f"met within noise (−{_gap(other - mine, regression)}, se {_gap(se, regression)})"
    return f"not met by {_gap(other - mine, regression)}"


def verdicts(*, default: float, trivial: float, trivial_se: float, peers: Mapping[str, tuple[float, float]],
             nonprivate: float, time_ratio: float, n: int, epsilon: float, regression: bool) -> dict[str, str]:
    """The four checks of a table at one ε, from the numbers.

    Parameters
    ----------
    default, trivial, nonprivate : float
        Mean scores (accuracy in %, or R²) of the default, the trivial predictor and the non-private model.
    trivial_se : float
        Standard error of the difference default − trivial (NaN: none).
    peers : mapping of str to (float, float)
        Each peer that ran: its mean score and the standard error of the difference default − peer.
    time_ratio : float
        The default's median fit time over the non-private reference's.
    n : int
        Rows of the table.
    epsilon : float
    regression : bool
        Scores are R² (tolerance of (c) 0.05) rather than accuracy in % (2 points).

    Returns
    -------
    dict of str to str
        ``a`` (default ≥ trivial within noise: default ≥ trivial − 2 se), ``b`` (default ≥ every peer, the same
        rule; the worst peer named), ``c`` (n ≥ 10,000 at ε = 1: default ≥ non-private − tolerance; else
        "n/a"), ``d`` (time ratio ≤ 1) — each "met", "met within noise (…)", "not met by X" or "n/a" — and
        ``line``, the four joined.
    """
    found = {"a": _at_least(default, trivial, trivial_se, regression)}
    if not peers:
        found["b"] = "n/a (no peer ran)"
    else:
        worst = min(peers, key=lambda name: default - peers[name][0] + 2.0 * np.nan_to_num(peers[name][1]))
        verdict = _at_least(default, peers[worst][0], peers[worst][1], regression)
        found["b"] = verdict if verdict == "met" else f"{verdict} ({worst})"
    tolerance = NONPRIVATE_TOLERANCE["regression" if regression else "classification"]
    if n < NONPRIVATE_MIN_ROWS or not math.isclose(epsilon, 1.0) or not np.isfinite(nonprivate):
        found["c"] = "n/a"
    else:
        short = nonprivate - tolerance - default
        found["c"] = "met" if short <= 0 else f"not met by {_gap(short, regression)}"
    if not np.isfinite(time_ratio):
        found["d"] = "n/a"
    else:
        found["d"] = "met" if time_ratio <= 1.0 else f"not met by {time_ratio - 1.0:.2f}× ({time_ratio:.2f}×)"
    found["line"] = "; ".join(f"({key}) {found[key]}" for key in "abcd")
    return found


def _scale(task: str) -> float:
    return 1.0 if task == "regression" else 100.0


def _per_repeat(fits: pd.DataFrame) -> pd.Series:
    return fits.groupby("repeat")["score"].mean()


def _stat(fits: pd.DataFrame) -> tuple[float, float]:
    """Mean and standard error (module docstring) of an entry's scores, in display units; NaN mean if none ran."""
    fits = fits[fits["score"].notna()]
    if fits.empty:
        return np.nan, np.nan
    scale = _scale(str(fits["task"].iloc[0]))
    per_repeat = _per_repeat(fits)
    if len(per_repeat) >= 2:
        return scale * fits["score"].mean(), scale * per_repeat.std(ddof=1) / math.sqrt(len(per_repeat))
    within = fits.groupby("fold")["score"].var(ddof=1).dropna()
    if len(within):
        se = math.sqrt(within.mean() / len(fits))
    else:  # one fit per split: none for a private entry; the references are deterministic given the split
        se = 0.0 if fits["method"].isin(REFERENCES).all() else np.nan
    return scale * fits["score"].mean(), scale * se


def _difference_se(mine: pd.DataFrame, other: pd.DataFrame) -> float:
    """Standard error of mean(mine) − mean(other): paired by repetition when there are ≥ 2, else from each."""
    a, b = _per_repeat(mine[mine["score"].notna()]), _per_repeat(other[other["score"].notna()])
    if len(a) >= 2 and a.index.equals(b.index):
        return _scale(str(mine["task"].iloc[0])) * (a - b).std(ddof=1) / math.sqrt(len(a))
    return float(np.hypot(_stat(mine)[1], _stat(other)[1]))


def _best_tuned(fits: pd.DataFrame) -> pd.DataFrame:
    """The DP-SGD fits of the grid point with the best mean score (chosen on the test folds: NOT private)."""
    means = fits[fits["score"].notna()].groupby("config")["score"].mean()
    return fits[fits["config"] == means.idxmax()] if len(means) else fits.iloc[:0]


def summary_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Per (table, ε): the default, the references, the best peer, the time ratio and the verdicts.

    Parameters
    ----------
    frame : pandas.DataFrame
        Records of :func:`.bench_panel.run_table` (``bench_panel.csv``), any tables.

    Returns
    -------
    list of dict
        Keys ``table, task, n, d, plan, epsilon, default, default_se, trivial, nonprivate, best_peer,
        best_peer_score, peers`` ({peer: (mean, se)} of the peers that ran; DP-SGD at its best grid point),
        ``not_run`` ({peer: reason}), ``time_ratio`` and ``verdict`` (the line of :func:`verdicts`).
    """
    rows = []
    for name, here in frame.groupby("table", sort=False):
        task = str(here["task"].iloc[0])
        refs = {method: here[here["method"] == method] for method in REFERENCES}
        for eps in sorted(e for e in here["epsilon"].unique() if np.isfinite(e)):
            cell = here[np.isclose(here["epsilon"], eps)]
            mine = cell[cell["method"] == "default"]
            default, default_se = _stat(mine)
            peers, not_run = {}, {}
            for peer in PEER_NAMES:
                fits = cell[cell["method"] == peer]
                fits = _best_tuned(fits) if peer == "dpsgd_tuned" else fits
                mean, _ = _stat(fits)
                if np.isfinite(mean):
                    peers[peer] = (mean, _difference_se(mine, fits))
                elif len(cell[cell["method"] == peer]):
                    notes = cell[cell["method"] == peer]["note"].dropna().astype(str)
                    not_run[peer] = notes.iloc[0] if len(notes) else "not run"
            best = max(peers, key=lambda p: peers[p][0]) if peers else None
            trivial, nonprivate = _stat(refs["trivial"])[0], _stat(refs["nonprivate"])[0]
            ratio = float(mine["time_ratio"].median()) if len(mine) else np.nan
            found = verdicts(default=default, trivial=trivial, trivial_se=_difference_se(mine, refs["trivial"]),
                             peers=peers, nonprivate=nonprivate, time_ratio=ratio, n=int(here["n"].iloc[0]),
                             epsilon=float(eps), regression=task == "regression")
            rows.append({"table": name, "task": task, "n": int(here["n"].iloc[0]), "d": int(here["d"].iloc[0]),
                         "plan": str(here["plan"].iloc[0]), "epsilon": float(eps), "default": default,
                         "default_se": default_se, "trivial": trivial, "nonprivate": nonprivate, "best_peer": best,
                         "best_peer_score": peers[best][0] if best else np.nan, "peers": peers, "not_run": not_run,
                         "time_ratio": ratio, "verdict": found["line"]})
    return rows


def _number(value: float, task: str, se: float = np.nan) -> str:
    if not np.isfinite(value):
        return "–"
    digits = 3 if task == "regression" else 2
    return f"{value:.{digits}f}" + (f" ± {se:.{digits}f}" if np.isfinite(se) else "")


def panel_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of the panel's section of ``BENCHMARKS.md``, from its heading ``## {TITLE}``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Records of :func:`.bench_panel.run_table` (``bench_panel.csv``).

    Returns
    -------
    list of str
        The protocol, the summary (table × ε: default / trivial / best peer / non-private / time ratio /
        verdict), every peer's cell and the reasons a peer did not run.
    """
    rows = summary_rows(frame)
    runs = [f"{', '.join(sorted(frame[column].dropna().astype(str).unique())) or '–'}" if column in frame else "–"
            for column in ("run_date", "machine")]
    minutes = frame.groupby("table")["table_seconds"].first().sum() / 60 if "table_seconds" in frame else np.nan
    lines = [f"## {TITLE}", "",
             f"Regenerate with `OPENBLAS_NUM_THREADS=1 dpconvex bench panel --out docs` (`--tables` for some; records "
             f"in `bench_panel.csv`; run {runs[0]} on {runs[1]}, {minutes:.1f} min for the tables shown, loading "
             "included; tables and bounds: `dpconvex_lab.panel_data`, runner `dpconvex_lab.bench_panel`). Every table "
             "is encoded with declared "
             "public bounds (unit-norm rows); δ = 1e-8 for every private fit. The *default* is the public estimator "
             "with only ε, δ, `classes=` and a seed: `PrivateLogisticRegression()` for classification, "
             "`PrivateRidge()` for regression (target mapped onto [−1, 1] by its declared bounds), so these numbers "
             "follow whatever the library's default becomes. Splits: R repetitions of (stratified) 5-fold CV, the "
             "first F folds of each, S noise seeds per fold (F = 0: one 80/20 split of the generated table, whose "
             "rows are independent draws). Score: test accuracy (%) or test R². Cell: mean ± standard error "
             "(over the R per-repetition means when R ≥ 2; else over the noise seeds, conditional on the split; "
             "none with one fit per split). Peers under the same guarantee (replace-one, (ε, δ)): DP-SGD "
             "(`sgd_ma`, PLD under replace-one, λ = 1e-3) at the best of four grid points chosen on the test "
             "folds (NOT private: optimistic), objective perturbation (binary only), diffprivlib (pure ε), output "
             "perturbation (`method='outpert_gd'`, its defaults). References: trivial (training majority class / "
             "mean target) and non-private scikit-learn `LogisticRegression()` / `Ridge()` on the same encoding. "
             "Time ratio: median over fits of the default's fit time (cold caches) over the non-private model's, "
             "fitted on the same training part just before the default's fits at that ε, same process.", "",
             "Verdict per table and ε, from the numbers: (a) default ≥ trivial within noise (default ≥ trivial − "
             "2 se of the difference); (b) default ≥ every peer that ran, the same rule (the worst peer named); "
             "(c) for n ≥ 10,000 at ε = 1, default within 2 points (R² within 0.05) of non-private; (d) time "
             "ratio ≤ 1. *not met by X*: the gap in points (or R²), for (c) beyond the tolerance.", "",
             "### Summary", "",
             "| table | n | d | task | plan | ε | default | trivial | best peer | non-private | time ratio | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        task = r["task"]
        peer = "–" if r["best_peer"] is None else f"{_number(r['best_peer_score'], task)} ({r['best_peer']})"
        lines.append(f"| {r['table']} | {r['n']:,} | {r['d']} | {task} | {r['plan']} | {r['epsilon']:g} | "
                     f"{_number(r['default'], task, r['default_se'])} | {_number(r['trivial'], task)} | {peer} | "
                     f"{_number(r['nonprivate'], task)} | {r['time_ratio']:.2g}× | {r['verdict']} |")
    lines += ["", "### Every peer (mean; in brackets the standard error of default − peer)", "",
              "| table | ε | " + " | ".join(PEER_NAMES.values()) + " |", "|---|---|" + "---|" * len(PEER_NAMES)]
    reasons: dict[tuple[str, str], str] = {}
    for r in rows:
        cells = []
        for peer in PEER_NAMES:
            if peer in r["peers"]:
                mean, se = r["peers"][peer]
                cells.append(f"{_number(mean, r['task'])} ({_number(se, r['task'])})")
            else:
                reasons.setdefault((r["table"], peer), r["not_run"].get(peer, "not run"))
                cells.append("not run")
        lines.append(f"| {r['table']} | {r['epsilon']:g} | " + " | ".join(cells) + " |")
    if reasons:
        lines += ["", "Not run: " + "; ".join(f"{PEER_NAMES[peer]} on {table}: {reason}"
                                              for (table, peer), reason in reasons.items()) + "."]
    tuned = frame[(frame["method"] == "dpsgd_tuned") & frame["score"].notna()]
    if len(tuned):
        chosen = [f"{name} ε = {eps:g}: {_best_tuned(g)['config'].iloc[0]}"
                  for (name, eps), g in tuned.groupby(["table", "epsilon"], sort=False)]
        lines += ["", "DP-SGD grid points chosen on the test folds (batch capped at a tenth of the training rows, "
                  "epochs at 3 beyond 200,000 training rows): "
                  + "; ".join(chosen) + "."]
    return lines + [""]
