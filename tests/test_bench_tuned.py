"""DP-SGD under both neighbouring relations (dpconvex_lab.dpsgd) and the tuned DP-SGD section.

Oracles are independent of the code under test: dp-accounting's PLD and RDP accountants called
directly (REPLACE_ONE and ADD_OR_REMOVE_ONE), scikit-learn's fold generator, and pandas
aggregations written out in the tests.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.rdp import RdpAccountant
from sklearn.model_selection import StratifiedKFold

from dpconvex.accounting.noisy_sgd_bounds import poisson_pld_epsilon
from dpconvex.cli.main import main
from dpconvex.objectives.losses import LogisticLoss
from dpconvex_lab import baselines as B
from dpconvex_lab import bench, bench_report, bench_tuned, dpsgd

NR = dp_accounting.NeighboringRelation
# (ε, δ, q, T): a small-data case and two Adult-sized DP-SGD runs (b = 256, 30 epochs; b = 4096, 1 epoch).
CASES = [(1.0, 1e-5, 0.05, 200), (0.1, 1e-8, 256 / 39_073, 4_579), (0.05, 1e-8, 4096 / 39_073, 10)]


def _pld_eps(z: float, q: float, steps: int, delta: float, relation, interval: float = 1e-4) -> float:
    """ε of T Poisson-subsampled Gaussian steps straight from dp-accounting's PLD accountant."""
    accountant = PLDAccountant(relation, value_discretization_interval=interval)
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps)
    return float(accountant.get_epsilon(delta))


def _rdp_eps(z: float, q: float, steps: int, delta: float, orders) -> float:
    accountant = RdpAccountant(orders=orders, neighboring_relation=NR.ADD_OR_REMOVE_ONE)
    accountant.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps))
    return float(accountant.get_epsilon(delta))


def _data(n: int = 300, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm rows, labels ±1 from a random hyperplane with 10 % flipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.sign(X @ rng.normal(size=d))
    y[rng.random(n) < 0.1] *= -1
    return X, np.where(y > 0, 1.0, -1.0)


# (a)-(c): the replace-one calibration --------------------------------------------------------


@pytest.mark.parametrize("eps, delta, q, steps", CASES)
def test_replace_one_calibration_never_overshoots(eps, delta, q, steps):
    rtol = 1e-3
    z = dpsgd.calibrate_sgd_replace_one_noise(eps, delta, q, steps, rtol=rtol)
    assert poisson_pld_epsilon(q, z, steps, delta) <= eps
    # smallest_noise's stopping rule: ε(z) within rtol below the target, or z within a factor 1 + rtol
    # of a point that overshoots (ε decreases at least like 1/z, so either puts z within ~rtol)
    assert (poisson_pld_epsilon(q, z, steps, delta) >= eps * (1 - rtol)
            or poisson_pld_epsilon(q, z / (1 + rtol), steps, delta) > eps)
    # The convention z = σ/C is dp-accounting's REPLACE_ONE noise multiplier: its own PLD at a fixed
    # interval agrees to within the discretisation slack (a factor 2 in z would be far off).
    assert _pld_eps(z, q, steps, delta, NR.REPLACE_ONE) == pytest.approx(eps, rel=5e-3)


@pytest.mark.parametrize("eps, delta, q, steps", CASES)
def test_replace_one_needs_more_noise_than_add_remove(eps, delta, q, steps):
    # At the same (q, T, z), replace-one's ε is at least add/remove's (same accountant, same interval) ...
    for z in (2.0, 10.0, 40.0):
        assert (_pld_eps(z, q, steps, delta, NR.REPLACE_ONE, interval=1e-3)
                >= _pld_eps(z, q, steps, delta, NR.ADD_OR_REMOVE_ONE, interval=1e-3))
    # ... so the replace-one z already meets ε under add/remove: the add/remove z is no larger.
    z = dpsgd.calibrate_sgd_replace_one_noise(eps, delta, q, steps)
    assert _pld_eps(z, q, steps, delta, NR.ADD_OR_REMOVE_ONE) <= eps


@pytest.mark.parametrize("eps", [0.1, 0.2])
def test_replace_one_z_exceeds_the_rdp_add_remove_z(eps):
    q, steps, delta = 256 / 39_073, 4_579, 1e-8
    assert dpsgd.calibrate_sgd_replace_one_noise(eps, delta, q, steps) >= B.calibrate_sgd_ma_noise(eps, delta, q, steps)


def test_rdp_add_remove_is_loose_at_epsilon_005():
    """The caveat the report prints: at ε = 0.05, δ = 1e-8 the RDP accountant (integer orders ≤ 256)
    needs more noise than even replace-one's PLD; the add/remove PLD needs about half."""
    q, steps, delta, eps = 256 / 39_073, 4_579, 1e-8, 0.05
    z = dpsgd.calibrate_sgd_replace_one_noise(eps, delta, q, steps)
    assert _rdp_eps(z, q, steps, delta, tuple(range(2, 65)) + (80, 96, 128, 192, 256)) > eps
    assert _pld_eps(0.55 * z, q, steps, delta, NR.ADD_OR_REMOVE_ONE) <= eps


def test_sgd_ma_replace_one_fit_uses_the_pld_calibration():
    X, y = _data(1000, 4, seed=3)
    fit = B.sgd_ma(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3, random_state=0,
                   epochs=2, neighbouring="replace_one")
    q, steps, z = fit.params["sampling_rate"], int(fit.params["steps"]), fit.params["noise_multiplier"]
    assert q == pytest.approx(256 / 1000) and steps == math.ceil(2 / q)
    assert poisson_pld_epsilon(q, z, steps, 1e-5) <= 1.0 < poisson_pld_epsilon(q, z * (1 - 2e-3), steps, 1e-5)
    assert fit.params["epsilon_accounted"] <= 1.0
    assert "replace-one" in fit.bound and "PLD" in fit.bound and "replace-one" in fit.note
    same = B.BASELINES["sgd_ma_replace_one"](X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5,
                                            l2_regularization=1e-3, random_state=0, epochs=2)
    assert np.array_equal(same.coef, fit.coef) and same.bound == fit.bound
    usual = B.sgd_ma(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3, random_state=0,
                     epochs=2)
    assert "add/remove" in usual.bound and "RDP" in usual.bound and "add/remove" in usual.note
    assert usual.params["noise_multiplier"] < z


def test_bad_neighbouring_is_refused():
    X, y = _data(50)
    with pytest.raises(ValueError,
                       match=r"neighbouring must be one of \('add_remove', 'replace_one', 'add_remove_pld'\)"):
        B.sgd_ma(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3, neighbouring="bogus")
    with pytest.raises(TypeError, match="neighbouring"):
        B.sgd_ma_replace_one(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3,
                             neighbouring="add_remove")
    with pytest.raises(ValueError, match="relations"):
        bench_tuned.run_tuned_dpsgd("logistic", X, y, relations=("bogus",))
    for grid, message in (([{"clip": 1.0}], "may set only"), ([{"learning_rate": -1.0}], "learning_rate"),
                          ([{"epochs": 2}, {"epochs": 2.0}], "twice"), ([], "at least one")):
        with pytest.raises(ValueError, match=message):
            bench_tuned.run_tuned_dpsgd("logistic", X, y, grid=grid)


def test_baselines_reexports_the_dpsgd_module():
    for name in ("sgd_ma", "sgd_ma_epsilon", "calibrate_sgd_ma_noise", "SGD_MA_ORDERS", "_quiet_absl",
                 "_clipped_sum_fn", "sgd_ma_replace_one", "calibrate_sgd_replace_one_noise"):
        assert getattr(B, name) is getattr(dpsgd, name)
    assert B.BASELINES["sgd_ma"] is dpsgd.sgd_ma


# (d): the tuned section ----------------------------------------------------------------------

GRID = ({"clip_norm": 0.5, "learning_rate": 0.5, "epochs": 2, "batch_size": 64},
        {"clip_norm": 0.1, "learning_rate": 1.5, "epochs": 1})  # batch_size: sgd_ma's default 256
EPSILONS = (0.1, 0.2)


@pytest.fixture(scope="module")
def tuned():
    X, y = _data()
    seen: list[np.ndarray] = []
    real = bench_tuned.sgd_ma

    def recording(X_train, y_train, **kwargs):
        seen.append(X_train)
        return real(X_train, y_train, **kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(bench_tuned, "sgd_ma", recording)
    try:
        frame = bench_tuned.run_tuned_dpsgd("svm", X, y, epsilons=EPSILONS, grid=GRID, seed=3)
    finally:
        patch.undo()
    return X, y, frame, seen


def test_tuned_run_has_a_row_per_epsilon_relation_config_and_fold(tuned):
    X, y, frame, seen = tuned
    assert len(frame) == len(EPSILONS) * 3 * len(GRID) * 5 == len(seen)
    keys = frame[["epsilon", "relation", "config", "fold"]].drop_duplicates()
    assert len(keys) == len(frame)
    assert set(frame["epsilon"]) == set(EPSILONS)
    assert set(frame["relation"]) == {"replace_one", "add_remove", "add_remove_pld"}
    assert set(frame["fold"]) == set(range(5)) and frame["config"].nunique() == len(GRID)
    assert set(frame["batch_size"]) == {64, 256} and (frame["l2"] == 1e-3).all()
    assert frame["accuracy"].between(0, 1).all() and (frame["epsilon_accounted"] <= frame["epsilon"]).all()
    # Replace-one needs more noise for the same run; the bound names the relation.
    wide = frame.pivot_table(index=["epsilon", "config", "fold"], columns="relation", values="noise_multiplier")
    assert (wide["replace_one"] >= wide["add_remove"]).all()
    # The PLD is tight to its grid, RDP is an upper bound: never less noise under add/remove by RDP than by PLD.
    assert (wide["add_remove"] >= wide["add_remove_pld"] * (1 - 1e-3)).all()
    bounds = frame.groupby("relation")["bound"].first()
    assert bounds.to_dict() == {"replace_one": "PLD accountant (replace-one)",
                                "add_remove_pld": "PLD accountant (add/remove)",
                                "add_remove": "RDP moments accountant (add/remove)"}
    # The folds are the benchmark's: stratified 5-fold CV seeded like run_task (the fits of one fold come first).
    folds = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=np.random.RandomState(3)).split(X, y))
    per_fold = len(EPSILONS) * 3 * len(GRID)
    for f, (train, _) in enumerate(folds):
        assert all(np.array_equal(x, X[train]) for x in seen[f * per_fold:(f + 1) * per_fold])
    assert [len(t) for t, _ in folds] == [len(t) for t, _ in bench.cv_folds(X, y, seed=3)]


def _bench_frame(accuracy: float) -> pd.DataFrame:
    """A minimal ``bench_adult_<task>.csv``: the default entry and sgd_ma at ε = 0.1 and 0.2, five folds."""
    rows = []
    for fold in range(5):
        for eps in EPSILONS:
            for method, acc in ((bench.DEFAULT, accuracy), ("baseline: sgd_ma", 0.50)):
                rows.append({"task": "svm", "kind": "default", "method": method, "epsilon": eps, "l2": 1e-3,
                             "fold": fold, "accuracy": acc, "objective": 0.5, "objective_ref": 0.5, "fit_time": 0.1,
                             "bound": "b", "certified_epsilon": eps, "note": "", "mechanism": "",
                             "sklearn_fit_time": 0.05, "time_ratio": 2.0})
    return pd.DataFrame(rows)


def _render(out) -> str:
    return bench_report.render_markdown(out, command="test", run_time_s=1.0, delta=1e-8, n=300, dimension=4)


def test_report_renders_the_tuned_section_and_headline_columns(tuned, tmp_path):
    _, _, frame, _ = tuned
    # Independent: the best mean over folds per (ε, relation), by hand.
    means = {key: g.groupby("config")["accuracy"].mean() for key, g in frame.groupby(["epsilon", "relation"])}
    best = {key: round(100 * m.max(), 2) for key, m in means.items()}
    default = round((best[(0.1, "replace_one")] + 0.01) / 100, 6)  # just above replace-one's at ε = 0.1
    _bench_frame(default).to_csv(tmp_path / "bench_adult_svm.csv", index=False)
    frame.to_csv(tmp_path / bench_report.TUNED_CSV.format(task="svm"), index=False)
    text = _render(tmp_path)
    assert f"### {bench_report.TUNED_TITLE}" in text
    section = text.split(f"### {bench_report.TUNED_TITLE}")[1].split("\n###")[0]
    for (eps, relation), value in best.items():
        label = bench_report.RELATION_NAMES[relation]
        (line,) = [l for l in section.splitlines() if l.startswith(f"| {eps:g} | {label} |")]
        assert line.split("|")[3].strip().startswith(f"{value:.2f} ±")
        assert means[(eps, relation)].idxmax() in line
    headline = text.split("### Headline: the default estimator against DP-SGD")[1].split("\n###")[0]
    header = [c.strip() for c in [l for l in headline.splitlines() if l.startswith("| ε |")][0].strip("|").split("|")]
    same, usual = (header.index(bench_report.TUNED_LABELS[r]) for r in ("replace_one", "add_remove"))
    assert usual == same + 1 and header[same - 1] == bench_report.HEADLINE_LABELS["svm"][0]
    for eps in EPSILONS:
        (line,) = [l for l in headline.splitlines() if l.startswith(f"| {eps:g} |")]
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[same].split(" (")[0] == f"{best[(eps, 'replace_one')]:g}"
        assert cells[usual] == f"{best[(eps, 'add_remove')]:g}"
        met = float(cells[1]) >= best[(eps, "replace_one")]
        assert cells[same].endswith("(met)" if met else "(NOT met)")
    (row,) = [r for r in bench_report.headline(_bench_frame(default), "svm", frame) if r["epsilon"] == 0.1]
    assert row["tuned_replace_one_met"] and row["tuned_replace_one"] == best[(0.1, "replace_one")]
    # The reference (svm: the same run's sgd_ma, 50 %) keeps its own verdict.
    assert row["dpsgd"] == 50.0 and row["dpsgd_met"]


def test_report_renders_without_the_tuned_csv(tmp_path):
    _bench_frame(0.8).to_csv(tmp_path / "bench_adult_svm.csv", index=False)
    text = _render(tmp_path)
    assert bench_report.TUNED_TITLE not in text
    headline = text.split("### Headline: the default estimator against DP-SGD")[1].split("\n###")[0]
    (line,) = [l for l in headline.splitlines() if l.startswith("| 0.1 |")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[3] == cells[4] == "–" and cells[2] == "50 (met)"
    (row,) = [r for r in bench_report.headline(_bench_frame(0.8), "svm") if r["epsilon"] == 0.1]
    assert np.isnan(row["tuned_replace_one"]) and np.isnan(row["tuned_add_remove"]) and not row["tuned_replace_one_met"]


def test_cli_no_tuned_switches_the_section_off(monkeypatch, tmp_path):
    calls: list[dict] = []
    monkeypatch.setattr(bench, "run_adult_benchmark", lambda **kwargs: calls.append(kwargs) or {})
    assert main(["bench", "adult", "--no-tuned", "--out", str(tmp_path)]) == 0
    assert main(["bench", "adult", "--out", str(tmp_path)]) == 0
    assert [c["tuned"] for c in calls] == [False, True]


def test_tuned_grid_is_small_and_documented():
    assert 0 < len(bench_tuned.TUNED_GRID) <= 40 and len(bench_tuned.QUICK_GRID) == 2
    labels = {bench_report.config_label(p) for p in bench_tuned.TUNED_GRID}
    assert len(labels) == len(bench_tuned.TUNED_GRID)  # no duplicate grid point
    assert all(set(p) == set(bench_tuned.GRID_KEYS) for p in bench_tuned.TUNED_GRID)
