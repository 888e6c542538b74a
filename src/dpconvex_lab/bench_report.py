"""Render ``docs/BENCHMARKS.md`` and its plots from the CSVs written by :mod:`.bench` and the other parts.

Reads every ``bench_adult_<task>.csv``, ``bench_tuned_<task>.csv`` (:mod:`.bench_tuned`),
``bench_replicates_<task>.csv`` (:mod:`.bench_replicates`), ``bench_scaling.csv``,
``bench_default_speed.csv`` and the other parts' CSVs (selection, data sets, scale, planning, panel)
in the output directory, so a run of one task keeps the other's section; a part run on its own
rewrites only its own section.  The sections themselves are rendered by :mod:`.bench_adult_report`
(the Adult tasks, speed and timing), :mod:`.bench_headline` (the headline and tuned DP-SGD) and each
part's module; the shared Markdown helpers are :mod:`.bench_markdown`'s (re-exported here).
"""

from __future__ import annotations

import datetime
import os
import pathlib
import platform
from typing import Any

import numpy as np
import pandas as pd

from dpconvex_lab.bench_adult_report import (
    SPEED_TITLE,
    TIME_RATIO_TITLE,
    scaling_section,
    speed_section,
    task_section,
)
from dpconvex_lab.bench_datasets_report import CSV as DATASETS_CSV
from dpconvex_lab.bench_datasets_report import with_datasets_section
from dpconvex_lab.bench_discovery import with_discovery_section
from dpconvex_lab.bench_headline import (  # noqa: F401 (re-exported: the report's vocabulary)
    DEFAULT_METHOD,
    HEADLINE_EPSILONS,
    HEADLINE_LABELS,
    HEADLINE_REFERENCES,
    REFERENCE_L2,
    RELATION_NAMES,
    SAME_RUN_DPSGD,
    TUNED_CSV,
    TUNED_LABELS,
    TUNED_TITLE,
    config_label,
    headline,
    tuned_best,
)
from dpconvex_lab.bench_ledger import with_ledger_section
from dpconvex_lab.bench_markdown import replace_section, with_csv_section  # noqa: F401 (re-exported)
from dpconvex_lab.bench_panel import with_panel_section
from dpconvex_lab.bench_planning import with_planning_section
from dpconvex_lab.bench_replicates import REPLICATES_CSV, replicates_section
from dpconvex_lab.bench_scale import with_scale_section
from dpconvex_lab.bench_selection import with_selection_section

__all__ = ["write_report", "render_markdown", "headline", "HEADLINE_REFERENCES", "SAME_RUN_DPSGD", "DEFAULT_METHOD",
           "DATASETS_CSV", "TUNED_CSV", "TUNED_TITLE", "TUNED_LABELS", "config_label", "tuned_best",
           "SPEED_TITLE", "TIME_RATIO_TITLE"]


def _threads() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - scikit-learn depends on it
        return ""
    pools = sorted({(p.get("internal_api", "?"), p.get("num_threads", "?")) for p in threadpool_info()})
    return "; thread pools " + ", ".join(f"{api} {n}" for api, n in pools) if pools else ""


def render_markdown(out: pathlib.Path, *, command: str, run_time_s: float, delta: float, n: int, dimension: int,
                    today: datetime.date | None = None, provenance: str = "") -> str:
    """The text of ``BENCHMARKS.md`` (and the PNGs beside it) from the CSVs in ``out``.

    ``provenance`` (optional) says how the CSVs were produced when they come from several runs.
    """
    lines = ["# Benchmark: dpconvex against peer methods on UCI Adult", "",
             f"Regenerate with `{command}` (last run {today or datetime.date.today()}, {run_time_s / 60:.1f} min; "
             f"{os.cpu_count()} CPU cores, {platform.machine()}, Python {platform.python_version()}, "
             f"NumPy {np.__version__}{_threads()})." + (f" {provenance}" if provenance else ""), "",
             f"Data: `load_adult(\"all\")` (n = {n}, d = {dimension}, unit-norm rows), repeated stratified 5-fold "
             f"CV, δ = {delta:g}. `{DEFAULT_METHOD}` is the estimator as a user gets it: only ε, δ, "
             "`classes=[-1, 1]` and a seed are passed, so `method='auto'` and `l2_regularization='auto'` "
             "choose the trainer, its configuration and λ (it is the `auto` method; fitting `method='auto'` "
             "again would repeat it). The other dpconvex methods get `method=<name>` and otherwise their "
             "DEFAULT hyperparameters (λ = 1e-3; step sizes, iterations, batches chosen by theory); the λ of "
             "every fit is in the CSV's `l2` column; nothing is tuned on test folds. Every fit's `time_ratio` "
             "divides its fit time "
             "by the median of 3 fits of the scikit-learn reference on the same training fold in the same "
             "process. Baselines "
             "(`dpconvex_lab.baselines`): `nonprivate` (scikit-learn L-BFGS on the same objective), "
             "`majority`, `objpert` (objective perturbation, Kifer, Smith, Thakurta 2012), `sgd_ma` (DP-SGD with "
             "per-example clipping and dp-accounting's RDP accountant under add/remove neighbours, Abadi et al. "
             "2016 — our certificates use replace-one, so this favours the baseline), `sgd_ma_replace_one` (the "
             "same DP-SGD with its noise from dp-accounting's PLD under replace-one: our guarantee), "
             "`diffprivlib` (reported "
             "as unavailable when it cannot be imported or fitted). Seeds make the benchmark reproducible; "
             "releases must use `random_state=None`. CSVs: " + ", ".join(f"`{p.name}`" for p in
                                                                       sorted(out.glob("bench_*.csv"))
                                                                       if p.name != DATASETS_CSV) + ".", ""]
    for path in sorted(out.glob("bench_adult_*.csv")):
        task = path.stem.removeprefix("bench_adult_")
        tuned, replicates = out / TUNED_CSV.format(task=task), out / REPLICATES_CSV.format(task=task)
        lines += task_section(task, pd.read_csv(path), out, pd.read_csv(tuned) if tuned.exists() else None,
                               replicates_section(task, pd.read_csv(replicates)) if replicates.exists() else [])
    speed = out / "bench_default_speed.csv"
    if speed.exists():
        lines += speed_section(pd.read_csv(speed))
    scaling = out / "bench_scaling.csv"
    if scaling.exists():
        lines += scaling_section(pd.read_csv(scaling), out)
    text = with_scale_section(with_datasets_section(with_selection_section("\n".join(lines), out), out), out)
    return with_discovery_section(with_ledger_section(with_panel_section(with_planning_section(text, out), out), out),
                                  out)


def write_report(out: pathlib.Path, **kwargs: Any) -> dict[str, str]:
    """Write ``BENCHMARKS.md`` (and the plots) into ``out``; returns the paths."""
    path = out / "BENCHMARKS.md"
    path.write_text(render_markdown(out, **kwargs), encoding="utf-8")
    return {"markdown": str(path), "pngs": ", ".join(str(p) for p in sorted(out.glob("bench_*.png")))}
