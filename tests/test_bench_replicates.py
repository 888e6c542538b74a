"""The replicated headline (dpconvex_lab.bench_replicates).

Fresh noise seeds for the default and its DP-SGD references.

Oracles: the tuned section's own records (which grid point won, which seeds it used), and means,
standard errors and differences recomputed here with NumPy from the records.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpconvex_lab import add_remove, bench, bench_replicates, bench_report, bench_tuned

GRID = ({"clip_norm": 0.5, "learning_rate": 0.5, "epochs": 2, "batch_size": 64},
        {"clip_norm": 1.0, "learning_rate": 1.5, "epochs": 1, "batch_size": 128})
EPSILONS = (0.1, 0.2)
SEEDS = 2


def _data(n: int = 300, d: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Unit-norm rows, labels in {0, 1} from a random hyperplane with 10 % flipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X @ rng.normal(size=d) > 0).astype(int)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


pytestmark = pytest.mark.slow  # the fixture fits every replicated entry


@pytest.fixture(scope="module")
def run():
    """The tuned section, then the replicated entries with every sgd_ma call's seed and grid point recorded."""
    X, y = _data()
    tuned = bench_tuned.run_tuned_dpsgd("svm", X, y, epsilons=EPSILONS, grid=GRID, seed=3)
    calls: list[dict] = []
    real = bench_replicates.sgd_ma

    def recording(X_train, y_train, **kwargs):
        calls.append(kwargs)
        return real(X_train, y_train, **kwargs)

    patch = pytest.MonkeyPatch()
    patch.setattr(bench_replicates, "sgd_ma", recording)
    try:
        frame = bench_replicates.run_replicates("svm", X, y, tuned, epsilons=EPSILONS, seeds=SEEDS, seed=3)
    finally:
        patch.undo()
    return tuned, frame, calls


def test_every_entry_is_fitted_on_fresh_seeds_per_fold(run):
    tuned, frame, calls = run
    assert len(frame) == 5 * len(EPSILONS) * len(bench_replicates.ENTRIES) * SEEDS
    keys = frame[["epsilon", "entry", "fold", "replicate"]].drop_duplicates()
    assert len(keys) == len(frame) and set(frame["entry"]) == set(bench_replicates.ENTRIES)
    assert frame["accuracy"].between(0, 1).all()
    # The tuned entries refit the grid point the tuned section chose on the test folds (best mean accuracy).
    for (eps, relation), group in tuned.groupby(["epsilon", "relation"]):
        winner = group.groupby("config")["accuracy"].mean().idxmax()
        entry = "tuned DP-SGD, " + ("replace-one" if relation == "replace_one" else "add/remove")
        assert set(frame[(frame["epsilon"] == eps) & (frame["entry"] == entry)]["config"]) == {winner}
    tuned_calls = [c for c in calls if "clip_norm" in c]
    assert len(tuned_calls) == 5 * len(EPSILONS) * 3 * SEEDS  # replace-one, add/remove by RDP and by PLD
    # Fresh seeds: none of the replicated fits reuses a seed of the tuned section's fits, and no two share one.
    selection_seeds = {bench_tuned._point_seed(3, f, eps, {**bench_tuned.SGD_MA_DEFAULTS, **point})
                       for f in range(5) for eps in EPSILONS for point in GRID}
    replicated = [c["random_state"] for c in tuned_calls]
    assert not selection_seeds & set(replicated)
    assert len(set(replicated)) == len(replicated)  # each (fold, ε, entry, replicate) has its own seed


def test_summary_and_section_match_an_independent_computation(run):
    _, frame, _ = run
    summary = bench_replicates.replicate_summary(frame)
    for (eps, entry), group in frame.groupby(["epsilon", "entry"]):
        (row,) = summary[(summary["epsilon"] == eps) & (summary["entry"] == entry)].to_dict("records")
        values = 100 * group["accuracy"].to_numpy()
        assert row["mean"] == pytest.approx(values.mean())
        # Conditional on the folds: the within-fold variances over seeds, averaged over folds, over the fits.
        within = [100 * g["accuracy"].to_numpy() for _, g in group.groupby("fold")]
        pooled = np.mean([np.var(v, ddof=1) for v in within])
        assert row["se"] == pytest.approx(np.sqrt(pooled / values.size))
        assert row["fits"] == 5 * SEEDS and row["folds"] == 5
    text = "\n".join(bench_replicates.replicates_section("svm", frame))
    for eps in EPSILONS:
        # One line per ε in each table: the headline's, then the one at the add/remove guarantee.
        line, same_guarantee = [l for l in text.splitlines() if l.startswith(f"| {eps:g} |")]
        cells = [c.strip() for c in line.strip("|").split("|")]
        means = {e: 100 * frame[(frame["epsilon"] == eps) & (frame["entry"] == e)]["accuracy"].mean()
                 for e in bench_replicates.ENTRIES}
        assert cells[1].startswith(f"{means[bench.DEFAULT]:.2f} ±")
        gap = means[bench.DEFAULT] - means["tuned DP-SGD, replace-one"]
        verdict = "met" if round(means[bench.DEFAULT], 2) >= round(means["tuned DP-SGD, replace-one"], 2) else "NOT met"
        assert cells[3].startswith(f"{verdict} ({gap:+.2f} ±")
        cells = [c.strip() for c in same_guarantee.strip("|").split("|")]
        (nominal,) = set(frame[(frame["epsilon"] == eps) & (frame["entry"] == bench_replicates.DEFAULT_ADD_REMOVE)]
                         ["config"])
        assert cells[1] == nominal.removeprefix("nominal eps=")
        mine = means[bench_replicates.DEFAULT_ADD_REMOVE]
        assert cells[2].startswith(f"{mine:.2f} ±")
        for column, reference in ((4, "tuned DP-SGD, add/remove (PLD)"), (6, "sgd_ma defaults, add/remove (PLD)"),
                                  (8, "tuned DP-SGD, add/remove"), (10, "sgd_ma defaults, add/remove")):
            assert cells[column - 1].startswith(f"{means[reference]:.2f} ±")
            gap = mine - means[reference]
            assert cells[column].startswith(("met" if round(mine, 2) >= round(means[reference], 2) else "NOT met")
                                            + f" ({gap:+.2f} ±")


def _records(default: float, reference: float, sd: float) -> pd.DataFrame:
    """Five folds × four seeds of the default and of tuned replace-one DP-SGD at ε = 0.05, accuracies ± sd."""
    rows = []
    for entry, centre in ((bench.DEFAULT, default), ("tuned DP-SGD, replace-one", reference)):
        for fold in range(5):
            for r in range(4):
                rows.append({"task": "logistic", "epsilon": 0.05, "entry": entry, "config": "", "fold": fold,
                             "replicate": r, "accuracy": centre + sd * (1 if (fold + r) % 2 else -1)})
    return pd.DataFrame(rows)


def test_verdicts_and_the_goal_column():
    # Default 81.60 % vs 81.40 %: met, +0.20; the goal at ε = 0.05 is 81.5 (met).
    text = "\n".join(bench_replicates.replicates_section("logistic", _records(0.816, 0.814, 0.005)))
    (line,) = [l for l in text.splitlines() if l.startswith("| 0.05 |")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    # Within each fold the 4 seeds are ±0.5 points (two of each): variance 4·0.25/3, over 20 fits.
    se = np.sqrt(0.25 * 4 / 3 / 20)
    assert cells[1] == f"81.60 ± {se:.2f}" and cells[2] == f"81.40 ± {se:.2f}"
    assert cells[3] == f"met (+0.20 ± {np.hypot(se, se):.2f}, within noise)"  # 0.20 < 2 · 0.18
    assert cells[4] == "–" and cells[5] == "–"  # entries not run
    references = bench_report.HEADLINE_REFERENCES["logistic"]
    assert cells[-2] == f"{references['dpsgd'][0.05]:g} (met)"  # 81.60 >= 80.8
    assert cells[-1] == f"{references['goal'][0.05]:g} (met)"  # 81.60 >= 81.5
    text = "\n".join(bench_replicates.replicates_section("logistic", _records(0.810, 0.814, 0.0)))
    (line,) = [l for l in text.splitlines() if l.startswith("| 0.05 |")]
    assert "NOT met (-0.40 ± 0.00)" in line and line.rstrip(" |").endswith("(NOT met)")  # no noise: no "within"
    assert bench_replicates.replicates_section("logistic", pd.DataFrame()) == []


def test_bad_arguments_are_refused():
    X, y = _data(60)
    for seeds in (0, 1.5, -1):
        with pytest.raises(ValueError, match=r"seeds must be an integer >= 1; got seeds="):
            bench_replicates.run_replicates("logistic", X, y, None, seeds=seeds)
    with pytest.raises(ValueError, match="task must be one of"):
        bench_replicates.run_replicates("ridge", X, y, None)
    with pytest.raises(ValueError, match=r"replicates must be an integer >= 0"):
        bench.run_adult_benchmark(task="logistic", replicates=-1, out_dir="/nonexistent/never-written")


def test_without_tuned_records_the_tuned_entries_are_skipped():
    X, y = _data(120)
    frame = bench_replicates.run_replicates("logistic", X, y, None, epsilons=(0.2,), seeds=1, folds=2)
    assert set(frame["entry"]) == {bench.DEFAULT, "sgd_ma defaults, add/remove", "sgd_ma defaults, replace-one",
                                   bench_replicates.DEFAULT_ADD_REMOVE, "sgd_ma defaults, add/remove (PLD)"}
    assert len(frame) == 2 * 5 and set(frame["fold"]) == {0, 1}


def test_the_add_remove_entry_fits_the_default_at_the_matching_nominal_epsilon():
    """The entry is the default estimator at matching_epsilon's nominal ε (same seeds as a direct fit), and
    running a subset of the entries keeps each entry's seeds (they depend on its position in ENTRIES)."""
    X, y = _data(200)
    entry = bench_replicates.DEFAULT_ADD_REMOVE
    frame = bench_replicates.run_replicates("logistic", X, y, None, epsilons=(0.2,), seeds=2, folds=2,
                                            entries=(entry, bench.DEFAULT))
    assert set(frame["entry"]) == {entry, bench.DEFAULT} and len(frame) == 2 * 2 * 2
    whole = bench_replicates.run_replicates("logistic", X, y, None, epsilons=(0.2,), seeds=2, folds=2)
    pd.testing.assert_frame_equal(frame.reset_index(drop=True),
                                  whole[whole["entry"].isin([entry, bench.DEFAULT])].reset_index(drop=True))
    splits = bench.cv_folds(X, y, repeats=1, seed=0, folds=2)
    loss = bench.TASKS["logistic"][1]
    for f, (train, test) in enumerate(splits):
        nominal = add_remove.matching_epsilon(loss, len(train), X.shape[1], 0.2, 1e-8)
        assert 0.3 < nominal < 0.5  # about twice the add/remove ε (central-limit regime, add_remove's docstring)
        rows = frame[(frame["entry"] == entry) & (frame["fold"] == f)]
        assert set(rows["config"]) == {f"nominal eps={nominal:.5g}"}
        k = bench_replicates.ENTRIES.index(entry)
        for r, accuracy in zip(rows["replicate"], rows["accuracy"]):
            seed = bench._fit_seed(0, f, bench_replicates._SEED_TAG, 0, k, r)
            direct = bench._ours("logistic", bench.DEFAULT, nominal, 1e-8, None, seed, X[train], y[train], loss)
            assert accuracy == bench._score(direct, loss, X[train], y[train], X[test], y[test])["accuracy"]
    with pytest.raises(ValueError, match="entries must be a non-empty subset of"):
        bench_replicates.run_replicates("logistic", X, y, None, entries=("auto",))
