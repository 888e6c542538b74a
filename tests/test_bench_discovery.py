"""The bare-CSV benchmark (dpconvex_lab.bench_discovery): raw tables aligned with the declared ones, the quick run's
records and certificates, its section of BENCHMARKS.md, the CLI wiring."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpconvex.cli.main import main
from dpconvex_lab import bench_discovery
from dpconvex_lab.panel_data import load_panel_table
from dpconvex_lab.panel_raw import load_raw_table

OTHER = "# Benchmarks\n\nintro\n\n## Some other section\n\nits text, kept byte for byte\n"


@pytest.mark.parametrize("name", ["iris", "diabetes", "breast_cancer", "wine", "admin"])
def test_raw_rows_are_the_declared_rows(name):
    raw, table = load_raw_table(name, admin_rows=300), load_panel_table(name, admin_rows=300)
    assert raw.n == table.n and raw.target in raw.frame.columns
    labels = raw.labels()
    if table.task == "regression":
        assert np.allclose(np.clip(labels.astype(float), *table.target_bounds), table.y)
    elif table.task == "binary":  # the label sorting last as text is the declared positive class
        assert np.array_equal(np.where(labels == sorted(set(labels))[-1], table.classes[1], table.classes[0]), table.y)
    else:
        assert np.array_equal(labels, np.asarray([str(v) for v in table.y], dtype=object))


def test_quick_run_on_one_small_table(tmp_path):
    """fair (6,366 rows): the smallest table whose discovery finds its labels (the smaller ones refuse, below)."""
    pytest.importorskip("statsmodels")
    (tmp_path / "BENCHMARKS.md").write_text(OTHER, encoding="utf-8")
    result = bench_discovery.run_discovery(["fair"], quick=True, out=tmp_path, shares=())
    frame = pd.read_csv(result["csv"])
    folds, seeds = bench_discovery.QUICK["plan"]
    assert list(frame.columns) == [*bench_discovery.COLUMNS, "table_seconds", "run_date", "machine"]
    assert len(frame) == 2 * len(bench_discovery.EPSILONS) * folds * seeds  # declared + discovered (default share)
    assert set(frame["method"]) == {"declared", "discovered"} and set(frame["epsilon"]) == set(bench_discovery.EPSILONS)
    assert frame.groupby(["method", "epsilon", "fold", "seed"]).size().eq(1).all()  # paired, one fit each
    found = frame[frame["method"] == "discovered"]
    scored = found[found["status"] == "ok"]
    assert not scored.empty and scored["score"].between(0, 1).all()
    assert (found["status"].eq("ok") | found["status"].str.startswith(("discovery refused: ", "not scored: "))).all()
    assert (scored["certified_epsilon"] <= scored["epsilon"]).all()  # the composed certificate within the request
    assert (scored["training_epsilon"] < scored["epsilon"]).all()
    text = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert text.startswith(OTHER.rstrip("\n")) and f"## {bench_discovery.TITLE}" in text
    assert set(result["verdicts"]["fair"]) == set(bench_discovery.EPSILONS)
    assert all(v.startswith(("met: ", "not met: ")) for v in result["verdicts"]["fair"].values())


def test_a_discovery_that_finds_too_few_labels_is_recorded_not_raised(tmp_path):
    main(["bench", "discovery", "--quick", "--tables", "iris", "--epsilons", "0.01", "--out", str(tmp_path)])
    frame = pd.read_csv(tmp_path / bench_discovery.CSV)
    found = frame[frame["method"] == "discovered"]
    assert found["status"].str.startswith("discovery refused: ").all() and found["score"].isna().all()
    assert "discovery refused" in (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")


def test_options_of_other_benchmarks_are_refused(tmp_path, capsys):
    assert main(["bench", "discovery", "--repeats", "2", "--out", str(tmp_path)]) == 2
    assert "--repeats: not options of 'bench discovery'" in capsys.readouterr().err
    assert not (tmp_path / bench_discovery.CSV).exists()


@pytest.mark.slow
def test_quick_mode_with_the_share_study(tmp_path):
    pytest.importorskip("statsmodels")
    result = bench_discovery.run_discovery(quick=True, out=tmp_path)
    frame = pd.read_csv(result["csv"])
    fair = frame[(frame["table"] == "fair") & (frame["method"] == "discovered")]
    assert set(fair["share"]) == set(bench_discovery.SHARES) | {bench_discovery.DEFAULT_DISCOVERY_SHARE}
    ok = frame[(frame["method"] == "discovered") & (frame["status"] == "ok")]
    assert (ok["certified_epsilon"] <= ok["epsilon"]).all()
    assert "### The discovery's share" in (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
