"""The panel benchmark: its tables (declared bounds, documented shapes), the generated table, the verdicts, the CLI."""

from __future__ import annotations

import ast
import math
import re
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sklearn.datasets

from dpconvex.cli import choices as cli_choices
from dpconvex.cli.main import main
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex_lab import bench_panel, panel_data
from dpconvex_lab.panel_report import TITLE, verdicts

#: (n, d, task, classes or target bounds) as documented: n from each data set's description, d counted from the
#: declared encoding (numerical columns + the codes of each categorical one).
SKLEARN_SHAPES = {
    "iris": (150, 4, "multiclass", (0, 1, 2)),  # "150 (50 in each of three classes)", 4 numeric attributes
    "diabetes": (442, 9 + 2, "regression", (0.0, 400.0)),  # 9 numerical, sex coded 1 / 2
    "wine": (178, 13, "multiclass", (0, 1, 2)),
    "breast_cancer": (569, 30, "binary", (0, 1)),
    "digits": (1797, 64, "multiclass", tuple(range(10))),
}
STATSMODELS_SHAPES = {
    "fair": (6366, 3 + 5 + 4 + 6 + 6 + 6, "binary", (-1, 1)),  # age, yrs_married, children; 5 coded columns
    "randhie": (20190, 5 + 4 * 2, "regression", (0.0, 52.0)),  # 5 numerical, 4 indicators
    "randhie_any": (20190, 5 + 4 * 2, "binary", (-1, 1)),
    "anes96": (944, 2 + 7 + 7 + 24, "multiclass", tuple(range(7))),  # logpopul, age; selfLR, educ, income codes
    "modechoice": (840 // 4, 3 + 4 * 3 + 2, "multiclass", (1, 2, 3, 4)),  # 210 travellers x 4 modes in the file
}


def _check_table(name: str, expected: tuple) -> panel_data.PanelTable:
    n, d, task, declared = expected
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # no feature value outside its declared bounds
        table = panel_data.load_panel_table(name)
    assert (table.n, table.d, table.task) == (n, d, task) and table.X.shape == (n, d) and table.y.shape == (n,)
    assert not np.isnan(table.X).any() and table.X.min() >= 0.0 and table.X.max() <= 1.0
    assert np.all(np.linalg.norm(table.X, axis=1) <= 1.0 + 1e-12)  # within the declared row norm (data_norm = 1)
    if task == "regression":
        assert table.classes is None and table.target_bounds == declared
        assert declared[0] <= table.y.min() and table.y.max() <= declared[1]
    else:
        assert table.target_bounds is None and table.classes == declared and set(np.unique(table.y)) <= set(declared)
    assert table.source
    return table


@pytest.mark.parametrize("name", sorted(SKLEARN_SHAPES))
def test_sklearn_tables_have_the_documented_shape_and_declared_labels(name):
    _check_table(name, SKLEARN_SHAPES[name])


def test_iris_bounds_are_the_published_min_max_and_its_classes_are_balanced():
    descr = sklearn.datasets.load_iris().DESCR
    printed = re.findall(r"^(sepal|petal) (length|width):\s+([\d.]+)\s+([\d.]+)", descr, flags=re.MULTILINE)
    assert np.array(list(panel_data.IRIS_RANGES.values())).tolist() == [[float(lo), float(hi)]
                                                                         for *_, lo, hi in printed]
    table = panel_data.load_panel_table("iris")
    assert np.bincount(table.y).tolist() == [50, 50, 50]


@pytest.mark.parametrize("name", sorted(STATSMODELS_SHAPES))
def test_statsmodels_tables_have_the_documented_shape_and_declared_labels(name):
    pytest.importorskip("statsmodels", reason=f'the statsmodels tables need statsmodels ({panel_data.INSTALL_HINT})')
    _check_table(name, STATSMODELS_SHAPES[name])


def test_statsmodels_labels_follow_the_documented_variables():
    pytest.importorskip("statsmodels", reason=f'the statsmodels tables need statsmodels ({panel_data.INSTALL_HINT})')
    from statsmodels.datasets import fair, modechoice, randhie

    assert "0 <= coninsurance <= 100" in randhie.NOTE  # lncoins = ln(coinsurance + 1): [0, ln 101]
    assert panel_data.STATSMODELS_TABLES["randhie"]["numerical"]["lncoins"][0] == (0.0, math.log(101.0))
    affairs = fair.load_pandas().data["affairs"].to_numpy()
    assert np.array_equal(panel_data.load_panel_table("fair").y, np.where(affairs > 0, 1, -1))
    visits = randhie.load_pandas().data["mdvis"].to_numpy()
    assert np.count_nonzero(visits > 52) == 12  # the clipped counts the docstring states
    np.testing.assert_array_equal(panel_data.load_panel_table("randhie").y, np.minimum(visits, 52.0))
    raw = modechoice.load_pandas().data
    chosen = raw[raw["choice"] == 1].sort_values("individual")["mode"].to_numpy()
    assert np.array_equal(panel_data.load_panel_table("modechoice").y, chosen.astype(int))


def test_a_missing_statsmodels_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "statsmodels.datasets.anes96", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=re.escape('pip install "dpconvex[bench]"')):
        panel_data.load_panel_table("anes96")


def test_statsmodels_is_imported_only_inside_the_loaders():
    for module in (panel_data, bench_panel):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        names = [alias.name for node in top for alias in node.names] + [node.module or "" for node in top
                                                                         if isinstance(node, ast.ImportFrom)]
        assert not any("statsmodels" in name for name in names)


def test_generated_table_at_a_small_size():
    X, y = panel_data.load_admin(20_000)
    assert sum(panel_data.CARDINALITIES) == 490 and len(panel_data.NUMERICAL) == 10
    assert X.shape == (20_000, 500) and not np.isnan(X).any()
    assert np.all(np.abs(np.linalg.norm(X, axis=1) - 1.0) <= 1e-12)
    assert 0.04 <= np.mean(y == 1) <= 0.06  # about 5 % positive (expected 5.02 %, sd 0.15 % at this size)
    head, _ = panel_data.load_admin(100)
    np.testing.assert_array_equal(head, X[:100])  # the first rows do not depend on the size
    other, _ = panel_data.load_admin(100, seed=1)
    assert not np.array_equal(other, head)
    with pytest.raises(ValueError, match="rows must be an integer >= 1"):
        panel_data.load_admin(0)


def test_generated_table_respects_its_declared_bounds():
    frame = panel_data.admin_frame()
    for column, (lower, upper) in panel_data.NUMERICAL.items():
        assert frame[column].between(lower, upper).all(), column
    for j, size in enumerate(panel_data.CARDINALITIES):
        assert set(frame[f"c{j:02d}"]) <= {str(k) for k in range(size)}


def _verdict(**overrides) -> dict[str, str]:
    numbers = dict(default=80.0, trivial=76.0, trivial_se=0.5, peers={"objpert": (79.0, 0.2)}, nonprivate=81.0,
                   time_ratio=0.5, n=20_000, epsilon=1.0, regression=False)
    return verdicts(**{**numbers, **overrides})


def test_verdicts_met():
    found = _verdict()
    assert [found[key] for key in "abcd"] == ["met", "met", "met", "met"]
    assert found["line"] == "(a) met; (b) met; (c) met; (d) met"


def test_verdicts_not_met_by_the_gap():
    peers = {"objpert": (81.0, 0.2), "dpsgd_tuned": (79.0, 0.1)}
    found = _verdict(default=70.0, trivial=76.0, trivial_se=1.0, peers=peers, nonprivate=83.0, time_ratio=1.25)
    assert found["a"] == f"not met by {76.0 - 70.0:.2f} points"  # 6 points: beyond 2 se = 2
    assert found["b"] == f"not met by {81.0 - 70.0:.2f} points (objpert)"  # the worst peer
    assert found["c"] == f"not met by {83.0 - 2.0 - 70.0:.2f} points"  # beyond the 2-point tolerance
    assert found["d"] == f"not met by {1.25 - 1.0:.2f}× (1.25×)"


def test_verdicts_within_noise_and_not_applicable():
    found = _verdict(default=75.5, trivial=76.0, trivial_se=0.3, peers={}, n=9_999)
    assert found["a"].startswith("met within noise")  # 75.5 >= 76 - 2 * 0.3 = 75.4
    assert _verdict(default=75.3, trivial=76.0, trivial_se=0.3)["a"] == f"not met by {0.7:.2f} points"
    assert found["b"] == "n/a (no peer ran)" and found["c"] == "n/a"  # n < 10,000
    assert _verdict(epsilon=0.5)["c"] == "n/a" and _verdict(time_ratio=float("nan"))["d"] == "n/a"


def test_verdicts_on_r2():
    found = _verdict(default=0.30, trivial=-0.01, trivial_se=0.02, peers={"outpert_gd": (0.31, 0.001)}, nonprivate=0.40,
                     regression=True)
    assert found["a"] == "met"
    assert found["b"] == f"not met by {0.31 - 0.30:.3f} (outpert_gd)"
    assert found["c"] == f"not met by {0.40 - 0.05 - 0.30:.3f}"
    assert _verdict(default=0.36, nonprivate=0.40, regression=True)["c"] == "met"


def test_peers_that_do_not_apply_say_why():
    table = panel_data.PanelTable("t", np.zeros((10, 3)), np.zeros(10), "multiclass", (0, 1, 2), None, "")
    assert "binary" in bench_panel.not_applicable("objpert", table)
    assert "binary logistic" in bench_panel.not_applicable("diffprivlib", table)
    assert bench_panel.not_applicable("dpsgd_tuned", table) is None
    wide = panel_data.PanelTable("t", np.zeros((1, 1)), np.zeros(1), "binary", (-1, 1), None, "")
    object.__setattr__(wide, "X", np.broadcast_to(np.zeros(1), (1_000_000, 500)))
    assert "budget" in bench_panel.not_applicable("outpert_gd", wide)


def test_diffprivlib_regression_gets_the_encodings_public_bounds(monkeypatch):
    seen = {}

    class LinearRegression:
        def __init__(self, **kwargs):
            seen.update(kwargs)

        def fit(self, X, y):
            self.coef_ = np.ones(X.shape[1])
            return self

    models = types.ModuleType("diffprivlib.models")
    models.LinearRegression = LinearRegression
    monkeypatch.setitem(sys.modules, "diffprivlib", types.ModuleType("diffprivlib"))
    monkeypatch.setitem(sys.modules, "diffprivlib.models", models)
    table = panel_data.PanelTable("t", np.full((4, 2), 0.5), np.zeros(4), "regression", None, (0.0, 1.0), "")
    assert bench_panel.not_applicable("diffprivlib", table) is None
    fit = bench_panel._fit_peer("diffprivlib", table, 1.0, 0, table.X, np.zeros(4), table.X)
    np.testing.assert_array_equal(fit["predicted"], np.ones(4))
    assert seen["epsilon"] == 1.0 and seen["bounds_y"] == (-1.0, 1.0)
    np.testing.assert_array_equal(seen["bounds_X"][1], np.ones(2))


def test_the_cli_choices_are_the_panel_tables():
    assert cli_choices.BENCH_PANEL_TABLES == panel_data.TABLES
    assert set(bench_panel.PLAN) == set(panel_data.TABLES)


def test_panel_options_are_refused_where_they_do_not_apply(tmp_path, capsys):
    assert main(["bench", "panel", "--repeats", "2", "--out", str(tmp_path)]) == 2
    assert "--repeats: not options of 'bench panel'" in capsys.readouterr().err
    assert main(["bench", "wine", "--tables", "iris", "--out", str(tmp_path)]) == 2
    assert "--tables applies to 'bench panel' and 'bench discovery' only" in capsys.readouterr().err
    assert not (tmp_path / bench_panel.CSV).exists()


@pytest.mark.slow  # 13-35 s on two shared cores (the generated table's 20,000 rows dominate)
def test_quick_run_writes_the_section(tmp_path):
    (tmp_path / "BENCHMARKS.md").write_text("# Benchmark\n\n## Another section\n\nkept\n", encoding="utf-8")
    assert main(["bench", "panel", "--quick", "--out", str(tmp_path)]) == 0
    frame = pd.read_csv(tmp_path / bench_panel.CSV)
    assert set(frame["table"]) == set(bench_panel.QUICK["tables"])
    assert set(frame.loc[frame["table"] == "admin", "n"]) == {bench_panel.QUICK["admin_rows"]}
    text = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert "## Another section\n\nkept" in text and f"## {TITLE}" in text
    summary = [line for line in text.splitlines() if line.startswith(("| iris |", "| diabetes |", "| admin |"))]
    assert len(summary) == 2 * 3 * len(bench_panel.QUICK["epsilons"])  # the summary and the peers' table
    assert all(re.search(r"\(a\) .*; \(b\) .*; \(c\) .*; \(d\) ", line) for line in summary[:6])
    default = frame[frame["method"] == "default"]
    assert default["score"].notna().all() and (default["time_ratio"] > 0).all()
    objpert = frame[frame["method"] == "objpert"]
    assert (objpert["bound"] == "not run").sum() == 2 * len(bench_panel.QUICK["epsilons"])  # iris and diabetes
