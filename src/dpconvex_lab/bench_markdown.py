"""Markdown helpers shared by the benchmark reports: tables, cells, and sections of ``BENCHMARKS.md``.

Every part of the benchmark renders its own section of ``docs/BENCHMARKS.md`` (:mod:`.bench_report`
assembles them); a part run on its own rewrites only its section (:func:`replace_section`).
"""

from __future__ import annotations

import datetime
import os
import pathlib
import platform
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["append_section", "format_ratio", "is_ours", "mean_sd", "pivot", "replace_section", "save_table_run",
           "with_csv_section"]


def is_ours(method: str) -> bool:
    """Whether a row's ``method`` is one of ours (the peers' are ``"baseline: <name>"``)."""
    return not method.startswith("baseline: ")


def mean_sd(values: pd.Series) -> str:
    """``"mean ± sd"`` of fractions, in %; ``–`` without values."""
    values = values.dropna()
    if values.empty:
        return "–"
    sd = values.std(ddof=1) if len(values) > 1 else 0.0
    return f"{100 * values.mean():.2f} ± {100 * sd:.2f}"


def format_ratio(value: float) -> str:
    """A time ratio: one decimal from 1× up, two significant digits below (a 0.04× fit is not 0.0×)."""
    if not np.isfinite(value):
        return "–"
    return f"{value:.1f}×" if value >= 1 else f"{value:.2g}×"


def pivot(frame: pd.DataFrame, cell) -> list[str]:
    """Markdown table of ``cell(rows)`` per method (rows, in order of appearance) and ε (columns, ∞ for inf)."""
    epsilons = sorted(frame["epsilon"].unique())
    lines = ["| method | " + " | ".join("∞" if np.isinf(e) else f"{e:g}" for e in epsilons) + " |",
             "|---" * (len(epsilons) + 1) + "|"]
    for method, group in frame.groupby("method", sort=False):
        cells = [cell(group[group["epsilon"] == e]) if (group["epsilon"] == e).any() else "" for e in epsilons]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return lines


def append_section(text: str, section: list[str]) -> str:
    """``text`` followed by ``section``'s lines after one blank line (the layout of every section)."""
    return text.rstrip("\n") + "\n\n" + "\n".join(section) if text else "\n".join(section)


def with_csv_section(text: str, csv: pathlib.Path, section: Any) -> str:
    """``text`` with ``section(rows of csv)`` appended when the file ``csv`` exists (a part run on its own)."""
    if not pathlib.Path(csv).exists():
        return text
    return text.rstrip("\n") + "\n\n" + "\n".join(section(pd.read_csv(csv)))


def replace_section(path: pathlib.Path, section: list[str]) -> pathlib.Path:
    """Rewrite one section of ``path`` in place and keep every other byte (the other sections' runs).

    The section runs from its heading ``section[0]`` to the next ``## `` heading or the end of the
    file; a file without it gets it appended, a missing file holds it alone.
    """
    lines = path.read_text(encoding="utf-8").split("\n") if path.exists() else []
    if section[0] in lines:
        start = lines.index(section[0])
        end = next((index for index in range(start + 1, len(lines)) if lines[index].startswith("## ")), len(lines))
        before, after = "\n".join(lines[:start]).rstrip("\n"), "\n".join(lines[end:])
    else:
        before, after = "\n".join(lines).rstrip("\n"), ""
    text = (before + "\n\n" if before else "") + "\n".join(section)
    path.write_text(text + ("\n\n" + after if after else "\n"), encoding="utf-8")
    return path


def save_table_run(frame: pd.DataFrame, out: pathlib.Path, csv: str, tables: Sequence[str],
                   section: Callable[[pd.DataFrame], list[str]],
                   summary: Callable[[pd.DataFrame], list[dict[str, Any]]]) -> dict[str, Any]:
    """Stamp a per-table run's records, merge them into ``out/csv`` and rewrite its section of ``BENCHMARKS.md``.

    Parameters
    ----------
    frame : pandas.DataFrame
        This run's records (a ``table`` column); ``run_date`` and ``machine`` are added.
    out : pathlib.Path
        The output directory (created if missing).
    csv : str
        The records' file name in ``out``: the rows of the tables this run did not fit are kept.
    tables : sequence of str
        The tables this run fitted.
    section, summary : callable
        The section's lines and its summary rows (each with ``table``, ``epsilon`` and ``verdict``),
        from every record.

    Returns
    -------
    dict
        ``csv`` and ``markdown`` (paths written) and ``verdicts`` ({table: {ε: verdict}}) of ``tables``.
    """
    out.mkdir(parents=True, exist_ok=True)
    frame = frame.assign(run_date=datetime.date.today().isoformat(),
                         machine=f"{os.cpu_count()} CPU cores, {platform.machine()}, Python "
                                 f"{platform.python_version()}, NumPy {np.__version__}")
    path = out / csv
    if path.exists():  # keep the tables this run did not fit
        previous = pd.read_csv(path)
        frame = pd.concat([previous[~previous["table"].isin(tables)], frame], ignore_index=True)
    frame.to_csv(path, index=False)
    markdown = replace_section(out / "BENCHMARKS.md", section(frame))
    found: dict[str, dict[float, str]] = {}
    for row in summary(frame):
        if row["table"] in tables:
            found.setdefault(row["table"], {})[row["epsilon"]] = row["verdict"]
    return {"csv": str(path), "markdown": str(markdown), "verdicts": found}
