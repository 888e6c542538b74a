"""The head-to-head benchmark driver on a small separable data set, and its quick mode on Adult."""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pytest

from dpconvex.cli.main import main
from dpconvex.mechanisms.auto import select_configuration
from dpconvex_lab import bench, bench_replicates, bench_report, bench_scaling, dpsgd

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ADULT = pathlib.Path(__file__).parents[2] / "shared" / "data" / "adult"
METHODS = ("noisy_gd", "noisy_sgd", "auto")
BASELINES = ("nonprivate", "majority", "objpert", "sgd_ma", "diffprivlib")
#: Two cheap DP-SGD grid points for the tuned section of the fixture run.
TUNED_GRID = ({"clip_norm": 0.5, "learning_rate": 0.5, "epochs": 2, "batch_size": 64},
              {"clip_norm": 0.1, "learning_rate": 1.5, "epochs": 1, "batch_size": 128})


def _separable(n: int = 600, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm rows with a margin >= 0.2 around a random hyperplane through 0; labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(8 * n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X[np.abs(X @ w) >= 0.2][:n]
    return X, (X @ w > 0).astype(int)


pytestmark = pytest.mark.slow  # the fixture runs the whole benchmark; the Adult test runs quick mode on Adult


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    patch = pytest.MonkeyPatch()
    patch.setattr(bench, "load_adult", lambda subset="all": _separable())
    patch.setattr(bench_scaling, "load_adult", lambda subset="all": _separable())
    try:
        bench.run_adult_benchmark(out_dir=out, task="logistic", epsilons=(0.1, 2.0), repeats=1, methods=METHODS,
                                  baselines=BASELINES, oracle_epsilons=(0.1,), sizes=(300, 600), synthetic=None,
                                  speed_epsilons=(0.5, 2.0), speed_replications=(1, 2), tuned_grid=TUNED_GRID,
                                  replicates=2, progress=False)
        # --no-timing (sizes=(), synthetic=None) skips the speed table unless it is asked for explicitly.
        bench.run_adult_benchmark(out_dir=out, task="svm", epsilons=(0.05, 2.0), repeats=1, methods=("noisy_gd",),
                                  baselines=("nonprivate", "sgd_ma"), oracle_epsilons=(), sizes=(), synthetic=None,
                                  speed_epsilons=(2.0,), speed_replications=(1,), tuned=False, replicates=0,
                                  progress=False)
    finally:
        patch.undo()
    return out


def test_every_fit_is_recorded_with_its_certificate(out):
    frame = pd.read_csv(out / "bench_adult_logistic.csv")
    # 5 folds × [2 ε × (auto as the default entry + 2 other methods + 3 private baselines) + 2 public
    #            baselines + 1 ε × 2 λ × 6 oracle fits]: method="auto" is not fitted twice.
    assert len(frame) == 5 * (2 * 6 + 2 + 2 * 6)
    assert bench.DEFAULT in set(frame["method"]) and "auto" not in set(frame["method"])
    assert set(METHODS) - {"auto"} <= set(frame["method"])
    ours = frame[frame["method"].isin((bench.DEFAULT, *METHODS))]
    assert (ours["certified_epsilon"] <= ours["epsilon"] * (1 + 1e-12)).all()
    assert set(frame["kind"]) == {"default", "oracle"} and set(frame[frame["kind"] == "oracle"]["l2"]) == {1e-4, 1e-2}
    nonprivate = frame[frame["method"] == "baseline: nonprivate"]
    assert np.isinf(nonprivate["epsilon"]).all() and nonprivate["accuracy"].mean() > 0.95
    majority = frame[frame["method"] == "baseline: majority"]["accuracy"].mean()
    assert 0.4 < majority < 0.65
    assert ours[ours["epsilon"] == 2.0]["accuracy"].mean() > majority + 0.2
    dpl = frame[frame["method"] == "baseline: diffprivlib"]
    assert dpl["accuracy"].notna().all() or (dpl["bound"] == "unavailable").all()


def test_default_entry_is_fitted_with_the_estimator_defaults(out):
    assert bench.default_method("logistic") == bench.default_method("svm") == "auto"
    assert bench.DEFAULT == "auto (default)"
    frame = pd.read_csv(out / "bench_adult_logistic.csv")
    default = frame[frame["method"] == bench.DEFAULT]
    assert len(default[default["kind"] == "default"]) == 5 * 2 and len(default[default["kind"] == "oracle"]) == 5 * 2
    assert set(default[default["kind"] == "default"]["epsilon"]) == {0.1, 2.0}
    # No λ passed: the row records the λ the auto rule chose from public quantities (n, d, ε, δ, loss).
    n_train, d = int(0.8 * _separable()[1].size), _separable()[0].shape[1]
    for _, row in default[default["kind"] == "default"].iterrows():
        choice = select_configuration(n_train, d, loss=bench.TASKS["logistic"][1], l2_regularization="auto",
                                      epsilon=row["epsilon"], delta=1e-8)
        assert row["l2"] == pytest.approx(choice.l2_regularization, rel=1e-9)
    # The other methods use the fixed λ = 1e-3 of l2_regularization="auto" outside method="auto".
    others = frame[(frame["kind"] == "default") & frame["method"].isin(["noisy_gd", "noisy_sgd"])]
    assert (others["l2"] == bench_report.REFERENCE_L2).all()
    assert (default["mechanism"] == "noisy_sgd").all()
    assert (default["certified_epsilon"] <= default["epsilon"] * (1 + 1e-12)).all()
    svm = pd.read_csv(out / "bench_adult_svm.csv")
    assert set(svm[svm["method"] == bench.DEFAULT]["epsilon"]) == {0.05, 2.0}


def test_every_available_fit_has_a_time_ratio_to_sklearn(out):
    for task in ("logistic", "svm"):
        frame = pd.read_csv(out / f"bench_adult_{task}.csv")
        assert (frame["sklearn_fit_time"] > 0).all()
        # One reference per training fold, shared by every fit on it.
        assert (frame.groupby("fold")["sklearn_fit_time"].nunique() == 1).all()
        available = frame[frame["bound"] != "unavailable"]
        assert len(available) and np.isfinite(available["time_ratio"]).all() and (available["time_ratio"] > 0).all()
        assert np.allclose(available["time_ratio"], available["fit_time"] / available["sklearn_fit_time"])
        assert frame[frame["bound"] == "unavailable"]["time_ratio"].isna().all()


def test_default_speed_table(out):
    rows = pd.read_csv(out / "bench_default_speed.csv")
    n = _separable()[1].size
    logistic, svm = rows[rows["task"] == "logistic"], rows[rows["task"] == "svm"]
    # The svm run replaced only its own rows.
    assert len(logistic) == 2 * 2 and len(svm) == 1
    assert set(logistic["epsilon"]) == {0.5, 2.0} and set(logistic["n"]) == {n, 2 * n}
    assert set(logistic["data"]) == {"Adult", "Adult ×2"}
    assert (rows["fit_time"] > 0).all() and (rows["sklearn_fit_time"] > 0).all()
    assert np.allclose(rows["time_ratio"], rows["fit_time"] / rows["sklearn_fit_time"])
    assert (rows["certified_epsilon"] <= rows["epsilon"] * (1 + 1e-12)).all()
    # The λ and batch size auto chose (not 1e-3): the rule's, on the fitted rows.
    for _, row in rows.iterrows():
        X, _ = _separable()
        choice = select_configuration(int(row["n"]), X.shape[1], loss=bench.TASKS[row["task"]][1],
                                      l2_regularization="auto", epsilon=row["epsilon"], delta=1e-8)
        assert row["l2"] == pytest.approx(choice.l2_regularization, rel=1e-9)
        assert row["mechanism"] == "noisy_sgd" and row["batch_size"] == choice.chosen.batch_size


def test_replicated_adult_tiles_rows_and_labels(monkeypatch):
    X0, y0 = _separable(n=50)
    monkeypatch.setattr(bench_scaling, "load_adult", lambda subset="all": (X0, y0))
    X, y, label = bench_scaling.replicated_adult(3)
    assert label == "Adult ×3" and X.shape == (150, X0.shape[1])
    assert np.array_equal(X[100:], X0) and np.array_equal(y[:50], np.where(y0 == 1, 1.0, -1.0))
    X, y, label = bench_scaling.replicated_adult(0.2)
    assert X.shape[0] == y.size == 10 and "20 %" in label
    with pytest.raises(ValueError, match="integer"):
        bench_scaling.replicated_adult(1.5)


def test_clearing_the_caches_makes_every_timed_fit_cold():
    import sys

    X, y = _separable(n=200)
    bench_scaling.default_estimator("logistic", 1.0, 1e-8, 0).fit(X, np.where(y == 1, 1.0, -1.0))
    cached = [v for name, m in list(sys.modules.items()) if name.startswith("dpconvex.") and m is not None
              for v in vars(m).values() if hasattr(v, "cache_info") and getattr(v, "__module__", None) == name]
    assert any(f.cache_info().currsize for f in cached)  # the fit filled some calibration cache
    assert bench_scaling.clear_dpconvex_caches() >= len({id(f) for f in cached}) > 0
    assert not any(f.cache_info().currsize for f in cached)


def test_objective_is_the_training_objective_of_the_released_model(out):
    frame = pd.read_csv(out / "bench_adult_logistic.csv")
    default = frame[frame["kind"] == "default"].groupby("method")["objective_ref"].mean()
    # The non-private fit minimises the λ = 1e-3 objective, so every private model's is larger.
    assert (default.drop("baseline: nonprivate").dropna() >= default["baseline: nonprivate"] - 1e-9).all()
    # ``objective`` is at the λ the fit used: the same where that is 1e-3, lower where auto chose less.
    fits = frame[frame["objective"].notna()]
    at_ref = fits["l2"] == bench_report.REFERENCE_L2
    assert np.allclose(fits[at_ref]["objective"], fits[at_ref]["objective_ref"])
    weaker = fits["l2"] < bench_report.REFERENCE_L2
    assert weaker.any() and (fits[weaker]["objective"] <= fits[weaker]["objective_ref"]).all()


def test_report_has_both_tasks_oracle_timing_and_plots(out):
    text = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    for heading in ("## Task `logistic`", "## Task `svm`", "### Test accuracy (%)", "### Final objective",
                    "### Fit time", "### Certificate", "### Oracle-tuned (NOT PRIVATE",
                    f"### {bench_report.TIME_RATIO_TITLE}",
                    "### Headline: the default estimator against DP-SGD", f"## {bench_report.SPEED_TITLE}",
                    "**max ratio:", "## Processing time vs n"):
        assert heading in text
    assert "### Headline (defaults)" not in text
    assert text.count(f"### {bench_report.TIME_RATIO_TITLE}") == 2 and text.count("### Headline: the default") == 2
    assert f"| {bench.DEFAULT} |" in text and "| auto |" not in text  # auto's row is the default entry
    # The objective table names the λ auto chose (not 1e-3) in its cells.
    objective = text.split("### Final objective")[1].split("\n### ")[0]
    (line,) = [l for l in objective.splitlines() if l.startswith(f"| {bench.DEFAULT} |")]
    assert line.count("(λ = ") == 2
    assert "trainer that ran" in text
    assert "dpconvex bench adult --repeats 1 --task svm" in text
    for png in ("bench_adult_logistic.png", "bench_adult_svm.png", "bench_scaling.png"):
        assert (out / png).read_bytes()[:8] == PNG_MAGIC


def test_timing_rows_cover_every_trainer(out):
    rows = pd.read_csv(out / "bench_scaling.csv")
    expected = set(bench_scaling.BUDGETS) | {f"baseline: {b}" for b in bench_scaling.TIMED_BASELINES}
    assert set(rows["method"]) == expected and set(rows["n"]) == {300, 600}
    assert (rows["rows_per_s"] == rows["n"] / rows["fit_time"]).all() and (rows["peak_mib"] >= 0).all()


def test_loglog_slope_recovers_a_power_law():
    rows = [{"method": "m", "n": n, "fit_time": 3e-6 * n**1.0} for n in (1e4, 5e4, 2.5e5)]
    rows += [{"method": "q", "n": n, "fit_time": 1e-9 * n**2} for n in (1e4, 5e4, 2.5e5)]
    assert bench_scaling.loglog_slope(rows, "m") == pytest.approx(1.0)
    assert bench_scaling.loglog_slope(rows, "q") == pytest.approx(2.0)


def test_headline_compares_the_default_with_the_references():
    rows = []
    for fold, ratio in enumerate((3.0, 5.0)):
        for method, acc in ((bench.DEFAULT, 0.8195), ("noisy_gd", 0.80), ("noisy_sgd", 0.82),
                            ("baseline: sgd_ma", 0.81), ("baseline: objpert", 0.70)):
            rows.append({"kind": "default", "method": method, "epsilon": 0.1, "accuracy": acc, "fold": fold,
                         "time_ratio": ratio if method == bench.DEFAULT else 1.0})
        rows.append({"kind": "default", "method": "baseline: nonprivate", "epsilon": np.inf, "accuracy": 0.85,
                     "fold": fold, "time_ratio": 1.0})
    frame = pd.DataFrame(rows)
    (row,) = bench_report.headline(frame, "logistic")
    assert (row["best_ours"], row["best_baseline"]) == ("noisy_sgd", "baseline: sgd_ma")
    assert row["default"] == pytest.approx(0.8195) and row["time_ratio_default"] == pytest.approx(4.0)
    # 81.95 % (as printed) >= 81.9 (tuned DP-SGD at ε = 0.1) but < 82.2 (the goal).
    assert (row["dpsgd"], row["goal"]) == (81.9, 82.2) and row["dpsgd_met"] and not row["goal_met"]
    # svm: both references are the same run's sgd_ma (81 %), which 81.95 % meets.
    (row,) = bench_report.headline(frame, "svm")
    assert row["dpsgd"] == row["goal"] == pytest.approx(81.0) and row["dpsgd_met"] and row["goal_met"]
    (row,) = bench_report.headline(frame[frame["method"] != "baseline: sgd_ma"], "svm")
    assert np.isnan(row["goal"]) and not row["goal_met"]
    # No tuned DP-SGD records: those references are NaN and their verdict is not met.
    assert np.isnan(row["tuned_replace_one"]) and np.isnan(row["tuned_add_remove"]) and not row["tuned_replace_one_met"]


def test_headline_references_are_printed_where_the_report_shows_them(out):
    text = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    refs = bench_report.HEADLINE_REFERENCES
    assert refs["logistic"]["dpsgd"] == {0.05: 80.8, 0.1: 81.9, 0.2: 82.5}
    assert refs["logistic"]["goal"] == {0.05: 81.5, 0.1: 82.2, 0.2: 82.6}
    assert refs["svm"]["dpsgd"] == refs["svm"]["goal"] == bench_report.SAME_RUN_DPSGD == "baseline: sgd_ma"
    svm = pd.read_csv(out / "bench_adult_svm.csv")
    sgd_ma = svm[(svm["method"] == "baseline: sgd_ma") & (svm["epsilon"] == 0.05)]["accuracy"].mean()
    expected = {"logistic": refs["logistic"], "svm": {"dpsgd": {0.05: round(100 * sgd_ma, 2)},
                                                       "goal": {0.05: round(100 * sgd_ma, 2)}}}
    for task, epsilon in (("logistic", 0.1), ("svm", 0.05)):  # the ε each fixture run has in the headline grid
        section = text.split(f"## Task `{task}`")[1].split("\n## ")[0]
        headline = section.split("### Headline: the default estimator against DP-SGD")[1].split("\n###")[0]
        (line,) = [l for l in headline.splitlines() if l.startswith(f"| {epsilon:g} |")]
        cells = [c.strip() for c in line.strip("|").split("|")]
        for cell, key in ((cells[2], "dpsgd"), (cells[5], "goal")):
            reference = expected[task][key][epsilon]
            assert cell.split(" (")[0] == f"{reference:g}" and cell.endswith(("(met)", "(NOT met)"))
            met = float(cells[1]) >= reference
            assert cell.endswith("(met)") == met
        assert cells[6].endswith("×")
        # The tuned DP-SGD columns: the logistic run ran the section (at its headline ε, 0.1), the svm run not.
        if task == "svm":
            assert cells[3] == cells[4] == "–"
        else:
            tuned = pd.read_csv(out / bench_report.TUNED_CSV.format(task=task))
            best = {r: round(100 * g.groupby("config")["accuracy"].mean().max(), 2)
                    for r, g in tuned[tuned["epsilon"] == epsilon].groupby("relation")}
            assert cells[3].split(" (")[0] == f"{best['replace_one']:g}" and cells[4] == f"{best['add_remove']:g}"
            assert cells[3].endswith("(met)") == (float(cells[1]) >= best["replace_one"])


def test_replicated_headline_runs_at_the_headline_epsilons(out):
    frame = pd.read_csv(out / "bench_replicates_logistic.csv")
    # 5 folds × the headline's ε of the run (0.1) × every entry × 2 seeds; the tuned entries refit the tuned
    # CSV's winners.
    entries = bench_replicates.ENTRIES
    assert len(frame) == 5 * 1 * len(entries) * 2
    assert set(frame["epsilon"]) == {0.1} and set(frame["replicate"]) == {0, 1}
    tuned = pd.read_csv(out / bench_report.TUNED_CSV.format(task="logistic"))
    best = bench_report.tuned_best(tuned)
    for entry in (e for e in entries if e.startswith("tuned")):
        winner = best[best["relation"] == bench_replicates.RELATIONS[entry]]["config"].item()
        assert set(frame[frame["entry"] == entry]["config"]) == {winner}
    assert not (out / "bench_replicates_svm.csv").exists()  # replicates=0
    text = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert text.count("### Headline replicated: fresh noise seeds") == 1


def test_tuned_section_runs_on_the_benchmark_folds(out):
    tuned = pd.read_csv(out / bench_report.TUNED_CSV.format(task="logistic"))
    # 5 folds × 1 headline ε of the run (0.1; 2.0 is not a headline ε) × 3 relations × 2 grid points.
    assert len(tuned) == 5 * 1 * 3 * 2 and set(tuned["epsilon"]) == {0.1}
    assert set(tuned["relation"]) == set(dpsgd.NEIGHBOURING) and set(tuned["fold"]) == set(range(5))
    assert not (out / bench_report.TUNED_CSV.format(task="svm")).exists()  # tuned=False
    text = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert text.count(f"### {bench_report.TUNED_TITLE}") == 1
    assert text.split("## Task `svm`")[1].count(bench_report.TUNED_TITLE) == 0


def test_synthetic_problem_has_the_stated_shape_and_noise():
    X, y = bench_scaling.synthetic_problem(20_000, 12, seed=1)
    assert X.shape == (20_000, 12) and np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_bad_task_is_refused():
    with pytest.raises(ValueError, match="task must be 'all' or one of"):
        bench.run_adult_benchmark(task="svr")
    # A bad speed replication is refused before any fit (not after the long part of the run).
    with pytest.raises(ValueError, match="speed replication"):
        bench.run_adult_benchmark(task="logistic", speed_replications=(1.5,), out_dir="/nonexistent/never-written")


@pytest.mark.skipif(not ADULT.exists(), reason="needs ../shared/data/adult")
def test_quick_mode_on_adult(tmp_path, capsys):
    code = main(["bench", "adult", "--quick", "--task", "logistic", "--out", str(tmp_path)])
    assert code == 0
    frame = pd.read_csv(tmp_path / "bench_adult_logistic.csv")
    assert set(frame["epsilon"].replace(np.inf, -1)) == {-1, 0.05, 0.2} and frame["fold"].nunique() == 2
    at = frame[frame["epsilon"] == 0.2].groupby("method")["accuracy"].mean()
    # Measured at ε = 0.2 (one seed): noisy GD, noisy SGD and auto 80–82 %; the majority class is 76.1 %.
    ours = [bench.DEFAULT, "noisy_gd", "noisy_sgd"]
    assert "auto" not in at.index  # the default entry is auto
    assert at[ours].min() > 0.78
    mine = frame[frame["method"].isin(ours)]
    assert (mine["certified_epsilon"] <= mine["epsilon"]).all()
    available = frame[frame["bound"] != "unavailable"]
    assert (frame["sklearn_fit_time"] > 0).all() and np.isfinite(available["time_ratio"]).all()
    assert (available["time_ratio"] > 0).all()
    tuned = pd.read_csv(tmp_path / bench_report.TUNED_CSV.format(task="logistic"))  # 2 folds × 2 ε × 3 relations × 2
    assert len(tuned) == 24 and set(tuned["epsilon"]) == {0.05, 0.2} and set(tuned["fold"]) == {0, 1}
    replicated = pd.read_csv(tmp_path / "bench_replicates_logistic.csv")  # 2 folds × 2 ε × every entry × 1 seed
    assert len(replicated) == 4 * len(bench_replicates.ENTRIES) and set(replicated["replicate"]) == {0}
    speed = pd.read_csv(tmp_path / "bench_default_speed.csv")  # the quick mode's single cell
    assert len(speed) == 1 and speed["task"].tolist() == ["logistic"] and (speed["time_ratio"] > 0).all()
    text = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    for heading in ("## Processing time vs n", f"## {bench_report.SPEED_TITLE}", bench_report.TIME_RATIO_TITLE,
                    "### Headline: the default estimator against DP-SGD", bench_report.TUNED_TITLE,
                    bench_report.TUNED_LABELS["replace_one"]):
        assert heading in text


def test_an_interrupted_run_resumes_from_its_fold_checkpoints(tmp_path, monkeypatch):
    """Each finished fold is checkpointed; a second run of the same grid reads the folds back (no fit is
    made: the trainers are replaced by a function that fails) and returns the same rows; another grid
    (other ε) does not read them."""
    X, y = _separable(300, 4)
    options = dict(epsilons=(1.0,), repeats=1, methods=(), baselines=("majority",), oracle_epsilons=(), folds=2,
                   progress=False, checkpoints=tmp_path)
    first = bench.run_task("logistic", X, y, **options)
    assert len(list(tmp_path.glob("logistic-*-fold*.csv"))) == 2

    def no_fit(*args, **kwargs):
        raise AssertionError("a checkpointed fold was fitted again")

    monkeypatch.setattr(bench, "_ours", no_fit)
    monkeypatch.setattr(bench, "_baseline", no_fit)
    monkeypatch.setattr(bench, "sklearn_reference_time", no_fit)
    again = bench.run_task("logistic", X, y, **options)
    pd.testing.assert_frame_equal(again[["method", "fold", "accuracy", "fit_time"]],
                                  first[["method", "fold", "accuracy", "fit_time"]], check_dtype=False)
    with pytest.raises(AssertionError, match="fitted again"):
        bench.run_task("logistic", X, y, **{**options, "epsilons": (2.0,)})


def test_speed_cells_interleave_reference_and_default_fits(monkeypatch):
    """Per cell: SPEED_FITS scikit-learn fits, each right before one default fit, and the medians."""
    calls, times = [], iter([1.0, 9.0, 2.0])

    def reference(task, X, y):
        calls.append("sklearn")
        return next(times)

    class Fake:
        l2_regularization_ = 0.0

        def fit(self, X, y):
            calls.append("ours")
            self.privacy_report_ = type("C", (), {"mechanism": "noisy_sgd", "assumptions": {}, "epsilon": 1.0})()
            return self

    monkeypatch.setattr(bench_scaling, "_sklearn_fit", reference)
    monkeypatch.setattr(bench_scaling, "default_estimator", lambda *a, **k: Fake())
    rows = bench_scaling.run_default_speed(("logistic",), (1.0,), (0.01,), progress=False)
    assert calls == ["sklearn", "ours"] * bench_scaling.SPEED_FITS
    assert len(rows) == 1 and rows[0]["sklearn_fit_time"] == 2.0  # the median of 1, 9, 2
