"""The Adult benchmark's sections of ``BENCHMARKS.md``: one per task, the default's speed, and time against n.

A task's section (:func:`task_section`) holds its tables of accuracy, objective, fit time, time
ratio and certificates, its headline (:mod:`.bench_headline`), the replicated headline
(:mod:`.bench_replicates`, passed in), the tuned DP-SGD and oracle-tuned tables, and its plot
(Chen, Lee, Kifer 2019 Fig. 1–2: accuracy and objective against ε, log x);
:func:`scaling_section` follows their Fig. 3 (fit time against n, log–log).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpconvex_lab.bench_headline import DEFAULT_METHOD, REFERENCE_L2, headline_section, tuned_section
from dpconvex_lab.bench_markdown import format_ratio, is_ours, mean_sd, pivot
from dpconvex_lab.bench_scaling import BUDGETS, PASSES, SKLEARN_REFERENCE, loglog_slope

__all__ = ["SPEED_TITLE", "TIME_RATIO_TITLE", "scaling_section", "speed_section", "task_section"]

TIME_RATIO_TITLE = "Time ratio to scikit-learn L-BFGS (fit time / sklearn fit time, same process, same fold)"
SPEED_TITLE = "Default fit time vs scikit-learn"


def _lambda_note(group: pd.DataFrame) -> str:
    """``" (λ = v)"`` (or a range) when a cell's fits used a λ other than :data:`REFERENCE_L2`, else ``""``."""
    values = group["l2"].dropna() if "l2" in group else pd.Series(dtype=float)
    if values.empty or np.allclose(values, REFERENCE_L2, rtol=1e-12, atol=0.0):
        return ""
    low, high = values.min(), values.max()
    return f" (λ = {low:.2g})" if np.isclose(low, high, rtol=1e-6, atol=0.0) else f" (λ = {low:.2g}–{high:.2g})"


def _objective_cell(group: pd.DataFrame) -> str:
    """Mean objective of a cell, with its λ when not :data:`REFERENCE_L2`."""
    if not group["objective"].notna().any():
        return "–"
    return f"{group['objective'].mean():.4f}{_lambda_note(group)}"



def task_section(task: str, frame: pd.DataFrame, out: pathlib.Path, tuned: pd.DataFrame | None = None,
                 replicated: list[str] = ()) -> list[str]:
    """Markdown lines of one task's section from its records (and its tuned and replicated parts)."""
    default, oracle = frame[frame["kind"] == "default"], frame[frame["kind"] == "oracle"]
    folds = frame["fold"].nunique()
    per_method = default.groupby("method")["fold"].nunique()
    fewer = ", ".join(f"{m} ({k})" for m, k in per_method[per_method < folds].items())
    fewer = f" Fewer folds (the run of these was stopped before its end): {fewer}." if fewer else ""
    lines = [f"## Task `{task}` ({'logistic regression' if task == 'logistic' else 'huberised-hinge SVM, h = 0.5'})",
             "", f"{folds} test folds per cell.{fewer} Defaults only; ε = ∞ marks the non-private references.", "",
             "### Test accuracy (%), mean ± sd over folds", ""]
    lines += pivot(default, lambda g: mean_sd(g["accuracy"]))
    lines += ["", "### Final objective (mean loss + (λ/2)‖w‖² on the training fold, at the λ the fit used; "
              "lower is better)", "",
              f"λ = {REFERENCE_L2:g} unless the cell names the λ the fits used (`auto` chooses its own, "
              "`l2_regularization_`); such a cell is the objective of a less (or more) regularised problem, so "
              "it compares with the others only through the accuracy above. The CSV's `objective_ref` is every "
              f"model's objective at λ = {REFERENCE_L2:g}.", ""]
    lines += pivot(default, _objective_cell)
    lines += ["", "### Fit time (s, mean over folds)", ""]
    lines += pivot(default, lambda g: f"{g['fit_time'].mean():.2f}" if g["fit_time"].notna().any() else "–")
    if "time_ratio" in default:
        reference = default.drop_duplicates("fold")["sklearn_fit_time"]
        lines += ["", f"### {TIME_RATIO_TITLE}", "",
                  f"Reference: {SKLEARN_REFERENCE.get(task, 'scikit-learn')}, median of 3 fits on each training "
                  f"fold (median over folds {reference.median():.3f} s). Cell: median over folds of the fit's "
                  "time / that fold's reference; 1× = as fast as scikit-learn. Our fits are timed cold (dpconvex's "
                  "calibration caches emptied before each), as a first fit at that n and ε. (`baseline: nonprivate` "
                  "is the exact minimiser, solved to tolerance 1e-10, not this reference.)", ""]
        lines += pivot(default, lambda g: format_ratio(g["time_ratio"].median()))
    lines += ["", "### Certificate (bound that certified the fit; certified ε ≤ target in every fit)", "",
              "| method | trainer that ran | bound(s) | largest certified ε / target | note |",
              "|---|---|---|---|---|"]
    for method, group in default.groupby("method", sort=False):
        finite = group[np.isfinite(group["epsilon"])]
        ratio = (finite["certified_epsilon"] / finite["epsilon"]).max() if len(finite) else np.nan
        notes = [str(n) for n in group["note"].dropna() if str(n) and str(n) != "nan"]
        notes = (notes[0][:200] + (" … (first fit)" if len(set(notes)) > 1 else "")) if notes else ""
        trainers = sorted(str(m) for m in group.get("mechanism", pd.Series(dtype=str)).dropna().unique() if str(m))
        lines.append(f"| {method} | {', '.join(trainers) or '–'} | "
                     f"{', '.join(sorted(group['bound'].astype(str).unique()))} | "
                     f"{'–' if np.isnan(ratio) else f'{ratio:.4f}'} | {notes} |")
    lines += headline_section(task, frame, tuned)
    lines += replicated
    if tuned is not None:
        lines += tuned_section(tuned)
    if len(oracle):
        lines += ["", "### Oracle-tuned (NOT PRIVATE: λ chosen on the test folds)", "",
                  "Every method gets the same grid λ ∈ "
                  f"{{{', '.join(f'{v:g}' for v in sorted(oracle['l2'].unique()))}}} plus its default λ (the "
                  "baselines' is 1e-3; `auto`'s is chosen per fit); the cell is the best mean test accuracy (%) and "
                  "the λ that gave it. Choosing on test folds leaks the test data, so these numbers bound what "
                  "tuning could give; they carry no guarantee.", ""]
        pool = pd.concat([oracle.assign(lam=oracle["l2"].map(lambda v: f"{v:g}")),
                          _default_lambda(default[default["epsilon"].isin(oracle["epsilon"].unique())])])
        means = pool.groupby(["method", "epsilon", "lam"])["accuracy"].mean().dropna().reset_index()
        best = means.loc[means.groupby(["method", "epsilon"])["accuracy"].idxmax()]
        lines += pivot(best.assign(fold=0), lambda g: f"{100 * g['accuracy'].iloc[0]:.2f} (λ = {g['lam'].iloc[0]})")
    lines += ["", f"![accuracy and objective vs ε]({_plot_task(task, default, out).name})", ""]
    return lines


def _default_lambda(default: pd.DataFrame) -> pd.DataFrame:
    """Default rows labelled by their λ: the value if one per (method, ε), else "default, chosen per fit".

    The label (not the per-fold value) is what the oracle groups by, so a λ the estimator chooses
    per fit counts as one grid point instead of letting the best single fold be picked.
    """
    def label(group: pd.DataFrame) -> pd.Series:
        values = group["l2"].dropna().unique()
        text = f"{values[0]:g}, default" if len(values) == 1 else "default, chosen per fit"
        return pd.Series(text, index=group.index)

    if default.empty:
        return default.assign(lam=pd.Series(dtype=str))
    return default.assign(lam=pd.concat([label(g) for _, g in default.groupby(["method", "epsilon"])]))


def _plot_task(task: str, default: pd.DataFrame, out: pathlib.Path) -> pathlib.Path:
    fig = Figure(figsize=(11, 4.5), dpi=110)
    axes = fig.subplots(1, 2)
    for method, group in default[np.isfinite(default["epsilon"])].groupby("method", sort=False):
        stats = group.groupby("epsilon").agg(acc=("accuracy", "mean"), sd=("accuracy", "std"),
                                             obj=("objective", "mean"))
        if stats["acc"].isna().all():
            continue
        style = "-o" if is_ours(method) else "--s"
        width = 2.5 if method == DEFAULT_METHOD else 1.2
        axes[0].errorbar(stats.index, 100 * stats["acc"], yerr=100 * stats["sd"].fillna(0), fmt=style, ms=3,
                         capsize=2, label=method, linewidth=width)
        axes[1].plot(stats.index, stats["obj"], style, ms=3, label=method, linewidth=width)
    for name, style in (("baseline: nonprivate", "k-"), ("baseline: majority", "k:")):
        ref = default[default["method"] == name]
        if len(ref):
            axes[0].axhline(100 * ref["accuracy"].mean(), color="k", linestyle=style[1:], label=name)
            if name.endswith("nonprivate"):
                axes[1].axhline(ref["objective"].mean(), color="k", linestyle="-", label=name)
    for ax, label in zip(axes, ("test accuracy (%)", "objective at the fit's λ (1e-3 but for auto)")):
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


def scaling_section(rows: pd.DataFrame, out: pathlib.Path) -> list[str]:
    """Markdown lines of the timing table (``bench_scaling.csv``); writes ``bench_scaling.png`` into ``out``."""
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
        ax.plot(group["n"], group["fit_time"], "-o" if is_ours(method) else "--s", ms=3, label=method)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (rows)")
    ax.set_ylabel("fit time (s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(out / "bench_scaling.png", format="png")
    return lines + ["", "![fit time vs n](bench_scaling.png)", ""]


def speed_section(rows: pd.DataFrame) -> list[str]:
    """Markdown lines of the default-against-scikit-learn speed table (``bench_default_speed.csv``)."""
    lines = [f"## {SPEED_TITLE}", "",
             "The estimator with only ε, δ, `classes=[-1, 1]` and a seed (`method='auto'`, "
             "`l2_regularization='auto'`), median of 3 cold fits per cell, on all of Adult and on Adult with "
             "every row repeated (`np.tile`); the reference (same data, same process, median of 3 fits, each "
             "run just before one of ours so that a loaded machine slows both alike) is, for "
             "`logistic`, " + SKLEARN_REFERENCE["logistic"] + "; for `svm`, " + SKLEARN_REFERENCE["svm"]
             + ". Each default fit is timed cold (dpconvex's calibration caches emptied first). Trainer, batch "
             "size b and λ as the fitted estimator reports them.", "",
             "| task | data | n | ε | trainer | λ | default fit time (s) | sklearn fit time (s) | ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in rows.iterrows():
        batch = r.get("batch_size", np.nan)
        trainer = f"{r['mechanism']}" + (f", b = {int(batch)}" if pd.notna(batch) else "")
        lines.append(f"| {r['task']} | {r['data']} | {int(r['n']):,} | {r['epsilon']:g} | {trainer} | "
                     f"{r['l2']:.2g} | {r['fit_time']:.2f} | {r['sklearn_fit_time']:.3f} | "
                     f"{format_ratio(r['time_ratio'])} |")
    worst = rows.loc[rows["time_ratio"].idxmax()]
    lines += ["", f"**max ratio: {format_ratio(worst['time_ratio'])}** ({worst['task']}, {worst['data']}, "
                  f"ε = {worst['epsilon']:g}); per task: "
              + ", ".join(f"{task} {format_ratio(g['time_ratio'].max())}"
                          for task, g in rows.groupby("task", sort=False))
              + ".", ""]
    return lines
