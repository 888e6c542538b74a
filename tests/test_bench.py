"""The head-to-head benchmark driver (issue 7) on a small separable data set, and its quick mode on Adult."""

from __future__ import annotations

import datetime
import json
import pathlib

import numpy as np
import pandas as pd
import pytest

from dpconvex.cli import main
from dpconvex.experiments import bench, bench_report, bench_scaling

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ADULT = pathlib.Path(__file__).parents[2] / "shared" / "data" / "adult"
METHODS = ("noisy_gd", "noisy_sgd", "auto")
BASELINES = ("nonprivate", "majority", "objpert", "sgd_ma", "diffprivlib")


def _separable(n: int = 600, d: int = 5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm rows with a margin >= 0.2 around a random hyperplane through 0; labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(8 * n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X[np.abs(X @ w) >= 0.2][:n]
    return X, (X @ w > 0).astype(int)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    patch = pytest.MonkeyPatch()
    patch.setattr(bench, "load_adult", lambda subset="all": _separable())
    patch.setattr(bench_scaling, "load_adult", lambda subset="all": _separable())
    try:
        bench.run_adult_benchmark(out_dir=out, task="logistic", epsilons=(0.1, 2.0), repeats=1, methods=METHODS,
                                  baselines=BASELINES, oracle_epsilons=(0.1,), sizes=(300, 600), synthetic=None,
                                  progress=False)
        bench.run_adult_benchmark(out_dir=out, task="svm", epsilons=(2.0,), repeats=1, methods=("noisy_gd",),
                                  baselines=("nonprivate",), oracle_epsilons=(), sizes=(), synthetic=None,
                                  progress=False)
    finally:
        patch.undo()
    return out


def test_every_fit_is_recorded_with_its_certificate(out):
    frame = pd.read_csv(out / "bench_adult_logistic.csv")
    # 5 folds × [2 ε × (3 methods + 3 private baselines) + 2 public baselines + 1 ε × 2 λ × 6 oracle fits]
    assert len(frame) == 5 * (2 * 6 + 2 + 2 * 6)
    ours = frame[frame["method"].isin(METHODS)]
    assert (ours["certified_epsilon"] <= ours["epsilon"] * (1 + 1e-12)).all()
    assert set(frame["kind"]) == {"default", "oracle"} and set(frame[frame["kind"] == "oracle"]["l2"]) == {1e-4, 1e-2}
    nonprivate = frame[frame["method"] == "baseline: nonprivate"]
    assert np.isinf(nonprivate["epsilon"]).all() and nonprivate["accuracy"].mean() > 0.95
    majority = frame[frame["method"] == "baseline: majority"]["accuracy"].mean()
    assert 0.4 < majority < 0.65
    assert ours[ours["epsilon"] == 2.0]["accuracy"].mean() > majority + 0.2
    dpl = frame[frame["method"] == "baseline: diffprivlib"]
    assert dpl["accuracy"].notna().all() or (dpl["bound"] == "unavailable").all()


def test_objective_is_the_training_objective_of_the_released_model(out):
    frame = pd.read_csv(out / "bench_adult_logistic.csv")
    default = frame[frame["kind"] == "default"].groupby("method")["objective"].mean()
    # The non-private fit minimises this objective, so every private model's is larger.
    assert (default.drop("baseline: nonprivate").dropna() >= default["baseline: nonprivate"] - 1e-9).all()


def test_report_has_both_tasks_oracle_timing_and_plots(out):
    text = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    for heading in ("## Task `logistic`", "## Task `svm`", "### Test accuracy (%)", "### Final objective",
                    "### Fit time", "### Certificate", "### Oracle-tuned (NOT PRIVATE", "### Headline (defaults)",
                    "## Processing time vs n"):
        assert heading in text
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


def test_headline_compares_best_of_ours_with_best_baseline():
    rows = []
    for fold in range(2):
        for method, acc, t in (("noisy_gd", 0.80, 2.0), ("noisy_sgd", 0.82, 1.0), ("baseline: sgd_ma", 0.81, 0.5),
                               ("baseline: objpert", 0.70, 0.1)):
            rows.append({"kind": "default", "method": method, "epsilon": 0.1, "accuracy": acc, "fit_time": t})
        rows.append({"kind": "default", "method": "baseline: nonprivate", "epsilon": np.inf, "accuracy": 0.85,
                     "fit_time": 0.5})
    (row,) = bench_report.headline(pd.DataFrame(rows))
    assert (row["best_ours"], row["best_baseline"]) == ("noisy_sgd", "baseline: sgd_ma")
    assert row["ours"] == pytest.approx(0.82) and row["baseline"] == pytest.approx(0.81)
    assert row["time_ratio_default"] == pytest.approx(4.0)


def test_synthetic_problem_has_the_stated_shape_and_noise():
    X, y = bench_scaling.synthetic_problem(20_000, 12, seed=1)
    assert X.shape == (20_000, 12) and np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert set(np.unique(y)) == {-1.0, 1.0}


def test_bad_task_is_refused():
    with pytest.raises(ValueError, match="task must be 'all' or one of"):
        bench.run_adult_benchmark(task="svr")


@pytest.mark.skipif(not ADULT.exists(), reason="needs ../shared/data/adult")
def test_quick_mode_on_adult(tmp_path, capsys):
    code = main(["bench", "adult", "--quick", "--task", "logistic", "--out", str(tmp_path)])
    assert code == 0
    frame = pd.read_csv(tmp_path / "bench_adult_logistic.csv")
    assert set(frame["epsilon"].replace(np.inf, -1)) == {-1, 0.05, 0.2} and frame["fold"].nunique() == 2
    at = frame[frame["epsilon"] == 0.2].groupby("method")["accuracy"].mean()
    # Measured at ε = 0.2 (one seed): noisy GD, noisy SGD and auto 80–82 %; the majority class is 76.1 %.
    assert at[["noisy_gd", "noisy_sgd", "auto"]].min() > 0.78
    assert (frame[frame["method"].isin(["noisy_gd", "noisy_sgd", "auto"])]["certified_epsilon"]
            <= frame[frame["method"].isin(["noisy_gd", "noisy_sgd", "auto"])]["epsilon"]).all()
    assert "## Processing time vs n" in (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
