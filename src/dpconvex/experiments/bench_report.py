"""Render ``docs/BENCHMARKS.md`` and its plots from the CSVs written by :mod:`.bench`.

Reads every ``bench_adult_<task>.csv`` and ``bench_scaling.csv`` in the output directory, so a run
of one task keeps the other's section.  Plots follow Chen, Lee, Kifer 2019 Fig. 1–2 (accuracy and
objective against ε, log x) and Fig. 3 (fit time against n, log–log).
"""

from __future__ import annotations

import datetime
import os
import pathlib
import platform
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .bench_scaling import BUDGETS, PASSES, loglog_slope

__all__ = ["write_report", "render_markdown", "headline"]

HEADLINE_EPSILONS = (0.05, 0.1, 0.2)
DEFAULT_METHOD = "noisy_gd"  # the estimators' default ``method``


def _is_ours(method: str) -> bool:
    return not method.startswith("baseline: ")


def _mean_sd(values: pd.Series) -> str:
    values = values.dropna()
    if values.empty:
        return "–"
    sd = values.std(ddof=1) if len(values) > 1 else 0.0
    return f"{100 * values.mean():.2f} ± {100 * sd:.2f}"


def _pivot(frame: pd.DataFrame, cell) -> list[str]:
    epsilons = sorted(frame["epsilon"].unique())
    lines = ["| method | " + " | ".join("∞" if np.isinf(e) else f"{e:g}" for e in epsilons) + " |",
             "|---" * (len(epsilons) + 1) + "|"]
    for method, group in frame.groupby("method", sort=False):
        cells = [cell(group[group["epsilon"] == e]) if (group["epsilon"] == e).any() else "" for e in epsilons]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return lines


def headline(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """At ε = 0.05, 0.1, 0.2: the best default dpconvex method vs the best private baseline (mean accuracy)."""
    default = frame[frame["kind"] == "default"]
    nonprivate = default[default["method"] == "baseline: nonprivate"]["fit_time"].mean()
    rows = []
    for eps in HEADLINE_EPSILONS:
        at = default[default["epsilon"] == eps].groupby("method")
        if not len(at):
            continue
        accuracy, fit_time = at["accuracy"].mean().dropna(), at["fit_time"].mean()
        ours = accuracy[[m for m in accuracy.index if _is_ours(m)]]
        peers = accuracy[[m for m in accuracy.index if not _is_ours(m)]]
        rows.append({"epsilon": eps, "best_ours": ours.idxmax(), "ours": ours.max(),
                     "best_baseline": peers.idxmax() if len(peers) else "–",
                     "baseline": peers.max() if len(peers) else np.nan,
                     "time_ratio_default": fit_time.get(DEFAULT_METHOD, np.nan) / nonprivate})
    return rows


def _task_section(task: str, frame: pd.DataFrame, out: pathlib.Path) -> list[str]:
    default, oracle = frame[frame["kind"] == "default"], frame[frame["kind"] == "oracle"]
    folds = frame["fold"].nunique()
    lines = [f"## Task `{task}` ({'logistic regression' if task == 'logistic' else 'huberised-hinge SVM, h = 0.5'})",
             "", f"{folds} test folds per cell. Defaults only; ε = ∞ marks the non-private references.", "",
             "### Test accuracy (%), mean ± sd over folds", ""]
    lines += _pivot(default, lambda g: _mean_sd(g["accuracy"]))
    lines += ["", "### Final objective (mean loss + (λ/2)‖w‖², λ = 1e-3, on the training fold; lower is better)", ""]
    lines += _pivot(default, lambda g: f"{g['objective'].mean():.4f}" if g["objective"].notna().any() else "–")
    lines += ["", "### Fit time (s, mean over folds)", ""]
    lines += _pivot(default, lambda g: f"{g['fit_time'].mean():.2f}" if g["fit_time"].notna().any() else "–")
    lines += ["", "### Certificate (bound that certified the fit; certified ε ≤ target in every fit)", "",
              "| method | bound(s) | largest certified ε / target | note |", "|---|---|---|---|"]
    for method, group in default.groupby("method", sort=False):
        finite = group[np.isfinite(group["epsilon"])]
        ratio = (finite["certified_epsilon"] / finite["epsilon"]).max() if len(finite) else np.nan
        notes = [str(n) for n in group["note"].dropna() if str(n) and str(n) != "nan"]
        notes = (notes[0][:200] + (" … (first fit)" if len(set(notes)) > 1 else "")) if notes else ""
        lines.append(f"| {method} | {', '.join(sorted(group['bound'].astype(str).unique()))} | "
                     f"{'–' if np.isnan(ratio) else f'{ratio:.4f}'} | {notes} |")
    rows = headline(frame)
    if rows:
        lines += ["", "### Headline (defaults)", "",
                  "| ε | best dpconvex method | accuracy (%) | best private baseline | accuracy (%) | "
                  f"fit time of `{DEFAULT_METHOD}` / sklearn non-private |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['epsilon']:g} | {r['best_ours']} | {100 * r['ours']:.2f} | {r['best_baseline']} | "
                  f"{100 * r['baseline']:.2f} | {r['time_ratio_default']:.1f}× |" for r in rows]
    if len(oracle):
        lines += ["", "### Oracle-tuned (NOT PRIVATE: λ chosen on the test folds)", "",
                  f"Every method gets the same grid λ ∈ {{{', '.join(f'{v:g}' for v in sorted({*oracle['l2'], 1e-3}))}}}; "
                  "the cell is the best mean test accuracy (%) and the λ that gave it. Choosing on test folds "
                  "leaks the test data, so these numbers bound what tuning could give; they carry no guarantee.", ""]
        pool = pd.concat([oracle, default[default["epsilon"].isin(oracle["epsilon"].unique())]])
        means = pool.groupby(["method", "epsilon", "l2"])["accuracy"].mean().dropna().reset_index()
        best = means.loc[means.groupby(["method", "epsilon"])["accuracy"].idxmax()]
        lines += _pivot(best.assign(fold=0), lambda g: f"{100 * g['accuracy'].iloc[0]:.2f} (λ = {g['l2'].iloc[0]:g})")
    lines += ["", f"![accuracy and objective vs ε]({_plot_task(task, default, out).name})", ""]
    return lines


def _plot_task(task: str, default: pd.DataFrame, out: pathlib.Path) -> pathlib.Path:
    fig = Figure(figsize=(11, 4.5), dpi=110)
    axes = fig.subplots(1, 2)
    for method, group in default[np.isfinite(default["epsilon"])].groupby("method", sort=False):
        stats = group.groupby("epsilon").agg(acc=("accuracy", "mean"), sd=("accuracy", "std"), obj=("objective", "mean"))
        if stats["acc"].isna().all():
            continue
        style = "-o" if _is_ours(method) else "--s"
        axes[0].errorbar(stats.index, 100 * stats["acc"], yerr=100 * stats["sd"].fillna(0), fmt=style, ms=3,
                         capsize=2, label=method)
        axes[1].plot(stats.index, stats["obj"], style, ms=3, label=method)
    for name, style in (("baseline: nonprivate", "k-"), ("baseline: majority", "k:")):
        ref = default[default["method"] == name]
        if len(ref):
            axes[0].axhline(100 * ref["accuracy"].mean(), color="k", linestyle=style[1:], label=name)
            if name.endswith("nonprivate"):
                axes[1].axhline(ref["objective"].mean(), color="k", linestyle="-", label=name)
    for ax, label in zip(axes, ("test accuracy (%)", "objective (λ = 1e-3)")):
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ = 1e-8)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=6, loc="lower right")
    axes[0].set_title(f"Adult, {task}: accuracy")
    axes[1].set_title(f"Adult, {task}: objective")
    fig.tight_layout()
    path = out / f"bench_adult_{task}.png"
    fig.savefig(path, format="png")
    return path


def _scaling_section(rows: pd.DataFrame, out: pathlib.Path) -> list[str]:
    lines = ["## Processing time vs n (Chen et al. Fig. 3)", "",
             "Logistic loss, ε = 1, λ = 1e-3, one fit per cell. Fixed optimisation budget per method so costs "
             "compare across n (passes over the data: " + ", ".join(f"{m} {p}" for m, p in PASSES.items())
             + "; options " + ", ".join(f"{m} {b}" for m, b in BUDGETS.items() if b)
             + "); baselines with their defaults. Peak memory is `tracemalloc`'s peak of the allocations made "
             "during the fit (the data set itself excluded). The slope is the least-squares slope of log(time) "
             "on log(n) over every size: 1 means cost linear in n.", "",
             "| data | n | d | method | fit time (s) | rows/s | peak memory (MiB) |", "|---|---|---|---|---|---|---|"]
    for _, r in rows.iterrows():
        lines.append(f"| {r['data']} | {int(r['n']):,} | {int(r['d'])} | {r['method']} | {r['fit_time']:.2f} | "
                     f"{r['rows_per_s']:,.0f} | {r['peak_mib']:.0f} |")
    records = rows.to_dict("records")
    lines += ["", "| method | log–log slope of time vs n |", "|---|---|"]
    lines += [f"| {m} | {loglog_slope(records, m):.2f} |" for m in rows["method"].unique()]
    fig = Figure(figsize=(7, 4.5), dpi=110)
    ax = fig.add_subplot()
    for method, group in rows.groupby("method", sort=False):
        ax.plot(group["n"], group["fit_time"], "-o" if _is_ours(method) else "--s", ms=3, label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (rows)")
    ax.set_ylabel("fit time (s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "bench_scaling.png", format="png")
    return lines + ["", "![fit time vs n](bench_scaling.png)", ""]


def render_markdown(out: pathlib.Path, *, command: str, run_time_s: float, delta: float, n: int, dimension: int,
                    today: datetime.date | None = None, provenance: str = "") -> str:
    """The text of ``BENCHMARKS.md`` (and the PNGs beside it) from the CSVs in ``out``.

    ``provenance`` (optional) says how the CSVs were produced when they come from several runs.
    """
    lines = ["# Benchmark: dpconvex against peer methods on UCI Adult", "",
             f"Regenerate with `{command}` (last run {today or datetime.date.today()}, {run_time_s / 60:.1f} min; "
             f"{os.cpu_count()} CPU cores, {platform.machine()}, Python {platform.python_version()}, "
             f"NumPy {np.__version__})." + (f" {provenance}" if provenance else ""), "",
             f"Data: `load_adult(\"all\")` (n = {n}, d = {dimension}, unit-norm rows), repeated stratified 5-fold "
             f"CV, δ = {delta:g}. dpconvex methods use their DEFAULT hyperparameters (λ = 1e-3; step sizes, "
             "iterations, batches chosen by theory), nothing tuned on test folds. Baselines "
             "(`dpconvex.experiments.baselines`): `nonprivate` (scikit-learn L-BFGS on the same objective), "
             "`majority`, `objpert` (objective perturbation, Kifer, Smith, Thakurta 2012), `sgd_ma` (DP-SGD with "
             "per-example clipping and dp-accounting's RDP accountant under add/remove neighbours, Abadi et al. "
             "2016 — our certificates use replace-one, so this favours the baseline), `diffprivlib` (reported "
             "as unavailable when it cannot be imported or fitted). Seeds make the benchmark reproducible; "
             "releases must use `random_state=None`. CSVs: " + ", ".join(f"`{p.name}`" for p in
                                                                       sorted(out.glob("bench_*.csv"))) + ".", ""]
    for path in sorted(out.glob("bench_adult_*.csv")):
        lines += _task_section(path.stem.removeprefix("bench_adult_"), pd.read_csv(path), out)
    scaling = out / "bench_scaling.csv"
    if scaling.exists():
        lines += _scaling_section(pd.read_csv(scaling), out)
    return "\n".join(lines)


def write_report(out: pathlib.Path, **kwargs: Any) -> dict[str, str]:
    """Write ``BENCHMARKS.md`` (and the plots) into ``out``; returns the paths."""
    path = out / "BENCHMARKS.md"
    path.write_text(render_markdown(out, **kwargs), encoding="utf-8")
    return {"markdown": str(path), "pngs": ", ".join(str(p) for p in sorted(out.glob("bench_*.png")))}
