"""``dpconvex bench planning``: the table it writes (timings are its output, never asserted here)."""

from __future__ import annotations

import pandas as pd
import pytest

from dpconvex.cli.main import main
from dpconvex_lab.bench_planning import HEADING, PLANNING_CSV, run_planning, with_planning_section


def test_the_planning_bench_writes_one_row_per_epsilon_and_its_section(tmp_path):
    result = run_planning(out=tmp_path, epsilons=(1.0, 1e9), repeats=1)
    frame = pd.read_csv(tmp_path / PLANNING_CSV)
    assert frame["epsilon"].tolist() == [1.0, 1e9] and len(result["rows"]) == 2
    ratio = frame["certified_epsilon"] / frame["epsilon"]
    assert ((ratio <= 1.0) & (ratio >= 0.99)).all()  # each certificate meets its target, within the calibration
    assert frame["conversion"].tolist() == ["dp-accounting PLD (pessimistic)", "exact-gdp of the full-batch steps"]
    text = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert text.startswith(HEADING) and text.count("\n| 1") == 2  # the two rows of the table
    assert with_planning_section("# report", tmp_path).endswith(text.rstrip("\n"))


def test_options_of_the_other_benches_are_refused(capsys):
    assert main(["bench", "planning", "--quick"]) == 2
    assert "--quick: not options of 'bench planning'" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--task", "svm"], ["--no-oracle"]])
def test_each_foreign_option_is_named(option, capsys):
    assert main(["bench", "planning", *option]) == 2
    assert option[0] in capsys.readouterr().err
