"""The private-selection benchmark's table (:func:`dpconvex_lab.bench_selection.selection_table`) on
hand-made rows whose means, standard deviations and oracle choice are computed here; the run's arguments."""

from __future__ import annotations

import pandas as pd
import pytest

from dpconvex_lab.bench_selection import (
    DEFAULT,
    FIXED,
    ORACLE,
    run_selection_benchmark,
    selection_table,
    with_other_tasks,
)


def _rows() -> pd.DataFrame:
    rows = []
    for fold, (cv, default, fixed, weak, strong) in enumerate([(0.80, 0.82, 0.79, 0.70, 0.81),
                                                                (0.78, 0.80, 0.77, 0.72, 0.79)]):
        for method, kind, accuracy, l2 in [("PrivateLogisticRegressionCV", "private", cv, 0.01 if fold else 0.001),
                                           (DEFAULT, "default", default, 2e-5), (FIXED, "fixed λ", fixed, 1e-3),
                                           (ORACLE, "grid", weak, 1e-4), (ORACLE, "grid", strong, 1e-2)]:
            rows.append({"task": "logistic", "method": method, "kind": kind, "epsilon": 0.1, "fold": fold,
                         "accuracy": accuracy, "l2": l2, "certified_epsilon": 0.0999 if kind == "private" else 0.1,
                         "bound": "poisson", "fit_time": 10.0 + fold})
    return pd.DataFrame(rows)


def test_the_table_gives_mean_sd_the_oracle_lambda_and_the_certificate():
    table = selection_table(_rows())
    # CV: (80 + 78)/2 = 79.00, sd of {80, 78} = 1.41; its λ: the mode of {1e-3, 1e-2} (ties: the smaller)
    assert "| PrivateLogisticRegressionCV | 79.00 ± 1.41 (λ = 0.001) |" in table
    assert f"| {DEFAULT} | 81.00 ± 1.41 |" in table
    # oracle: λ = 1e-2 has mean 80.0 against 78.0 (1e-3) and 71.0 (1e-4)
    assert f"| {ORACLE} | 80.00 ± 1.41 (λ = 0.01) |" in table
    assert "Largest certified ε / target of the `…CV` fits: 0.9990" in table and "ε = 0.1: 10" in table


def test_an_unknown_task_is_refused_before_any_fit():
    with pytest.raises(ValueError, match="tasks must be among"):
        run_selection_benchmark("unused", tasks=("ridge",))


def test_a_run_of_one_task_keeps_the_other_tasks_rows(tmp_path):
    path = tmp_path / "bench_selection.csv"
    logistic = _rows()
    assert with_other_tasks(logistic, path) is logistic  # no previous file
    svm = logistic.assign(task="svm", accuracy=0.5)
    pd.concat([logistic, svm]).to_csv(path, index=False)
    rerun = logistic.assign(accuracy=0.9)
    merged = with_other_tasks(rerun, path)
    assert len(merged) == len(logistic) + len(svm)
    assert (merged[merged["task"] == "svm"]["accuracy"] == 0.5).all()
    assert (merged[merged["task"] == "logistic"]["accuracy"] == 0.9).all()


def test_bench_adult_selection_only_writes_its_rows_and_section(tmp_path, monkeypatch):
    """``dpconvex bench adult --selection-only`` runs the selection part alone on the bench's data and folds."""
    from dpconvex.cli.main import main
    from dpconvex_lab import bench
    from dpconvex_lab.bench_selection import HEADING, SELECTION_CSV
    from test_bench import _separable

    monkeypatch.setattr(bench, "load_adult", lambda subset="all": _separable(n=400))
    assert main(["bench", "adult", "--selection-only", "--quick", "--task", "svm", "--out", str(tmp_path)]) == 0
    frame = pd.read_csv(tmp_path / SELECTION_CSV)
    # --quick: two of the five folds at ε = 0.05, 0.2; per fold and ε: the CV estimator, the default and noisy_gd at
    # each λ of the grid (1e-4, 1e-3 = the fixed λ, 1e-2)
    assert set(frame["task"]) == {"svm"} and set(frame["epsilon"]) == {0.05, 0.2} and set(frame["fold"]) == {0, 1}
    assert len(frame) == 2 * 2 * 5 and (frame["certified_epsilon"] <= frame["epsilon"] * (1 + 1e-12)).all()
    assert not (tmp_path / "bench_adult_svm.csv").exists()  # nothing else ran
    text = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert text.startswith(HEADING) and "### Task `svm`" in text


def test_bench_adult_selection_only_needs_a_selection_epsilon(tmp_path):
    from dpconvex.cli.main import main

    assert main(["bench", "adult", "--selection-only", "--epsilons", "0.5", "--out", str(tmp_path)]) == 2
