"""The private-selection benchmark's table (:func:`dpconvex.experiments.bench_selection.selection_table`) on
hand-made rows whose means, standard deviations and oracle choice are computed here; the run's arguments."""

from __future__ import annotations

import pandas as pd
import pytest

from dpconvex.experiments.bench_selection import (DEFAULT, FIXED, ORACLE, run_selection_benchmark, selection_table,
                                                  with_other_tasks)


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
