"""The bundled data sets (public bounds, unit rows) and their benchmark."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn.datasets

from dpconvex.datasets import BUNDLED, load_bundled, load_bundled_raw
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex_lab import bench_datasets, bench_datasets_report
from dpconvex_lab.bench import DEFAULT
from dpconvex_lab.bench_scaling import TASKS

#: Class counts as the data sets' published descriptions state them (breast cancer "212 - Malignant,
#: 357 - Benign", wine "class_0 (59), class_1 (71), class_2 (48)"; digits: UCI's test set, 1,797 images).
DESCRIBED = {"breast_cancer": (569, 30, [212, 357]), "wine": (178, 13, [59, 71, 48]), "digits": (1797, 64, None)}


def _described_ranges(name: str) -> np.ndarray:
    """(lower, upper) per feature, parsed from the Min and Max columns of the description's summary table."""
    descr = getattr(sklearn.datasets, BUNDLED[name].loader)().DESCR
    rows = re.findall(r"^[A-Za-z][^:\n]*:\s+(-?[\d.]+)\s+(-?[\d.]+)", descr, flags=re.MULTILINE)
    return np.array(rows, dtype=float)


def _encoded_independently(raw: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Clip-and-scale to [0, 1] by the bounds, then unit rows: a second implementation of the map."""
    scaled = np.clip((raw - lower) / (upper - lower), 0.0, 1.0)
    return scaled / np.linalg.norm(scaled, axis=1, keepdims=True)


@pytest.mark.parametrize("name", sorted(DESCRIBED))
def test_loaded_shapes_classes_and_unit_rows(name):
    X, y = load_bundled(name)
    n, d, counts = DESCRIBED[name]
    assert X.shape == (n, d) and y.shape == (n,)
    assert set(np.unique(y)) == set(BUNDLED[name].classes)
    if counts is not None:
        assert np.bincount(y).tolist() == counts
    norms = np.linalg.norm(X, axis=1)
    assert np.all(np.abs(norms - 1.0) <= 1e-12)  # every row of norm 1 (≤ 1 up to rounding)
    assert X.min() >= 0.0


@pytest.mark.parametrize("name", ["breast_cancer", "wine"])
def test_bounds_are_the_published_ranges_and_the_map_matches_a_second_implementation(name):
    ranges = _described_ranges(name)
    schema = BUNDLED[name].schema
    assert ranges.shape == (len(schema.numerical), 2)
    np.testing.assert_array_equal(np.array(list(schema.numerical.values())), ranges)
    raw, _ = load_bundled_raw(name)
    assert list(raw.columns) == list(schema.numerical)
    expected = _encoded_independently(raw.to_numpy(), ranges[:, 0], ranges[:, 1])
    np.testing.assert_allclose(load_bundled(name)[0], expected, rtol=0, atol=1e-12)
    # The rounding clips the docstring documents are real: values outside the printed range.
    outside = (raw.to_numpy() < ranges[:, 0]) | (raw.to_numpy() > ranges[:, 1])
    assert outside.sum() == BUNDLED[name].rounding_clips


def test_digits_bounds_are_the_pixel_range_of_the_definition():
    raw, _ = load_bundled_raw("digits")
    bounds = np.array(list(BUNDLED["digits"].schema.numerical.values()))
    assert np.all(bounds == [0.0, 16.0])
    np.testing.assert_allclose(load_bundled("digits")[0], _encoded_independently(raw.to_numpy(), 0.0, 16.0),
                               rtol=0, atol=1e-12)


def test_scaling_is_public_one_record_does_not_move_the_others(monkeypatch):
    """A data-derived scaling (min/max of the records) would move every row when one record changes."""
    original, _ = load_bundled("breast_cancer")
    bunch = sklearn.datasets.load_breast_cancer()
    bunch.data = bunch.data.copy()
    bunch.data[0] = 1000.0 * bunch.data.max(axis=0)  # far above every declared upper bound
    monkeypatch.setattr(sklearn.datasets, "load_breast_cancer", lambda: bunch)
    with pytest.warns(PrivacyLeakWarning, match="outside their declared bounds"):  # not the documented clips
        changed, _ = load_bundled("breast_cancer")
    np.testing.assert_array_equal(changed[1:], original[1:])
    assert not np.allclose(changed[0], original[0])


def test_unknown_data_set_names_the_parameter():
    with pytest.raises(ValueError, match=r"name must be one of .*breast_cancer.*got name='iris'"):
        load_bundled("iris")


@pytest.mark.parametrize("kwargs, parameter", [({"names": ["iris"]}, "names"), ({"epsilons": [0.0]}, "epsilons"),
                                               ({"repeats": 0}, "repeats"), ({"tasks": ["ridge"]}, "tasks"),
                                               ({"delta": 1.0}, "delta")])
def test_bad_arguments_are_refused_before_any_fit(tmp_path, kwargs, parameter):
    arguments = {"names": ["breast_cancer"], "out": tmp_path, "progress": False, **kwargs}
    with pytest.raises(ValueError, match=parameter):
        bench_datasets.run_datasets(**arguments)
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench_datasets")
    before = "# Benchmark\n\nAn earlier section, kept as it is.\n"
    (out / "BENCHMARKS.md").write_text(before, encoding="utf-8")
    bench_datasets.run_datasets(["breast_cancer"], out=out, quick=True, tasks=("logistic",), progress=False)
    bench_datasets.run_datasets(["breast_cancer"], out=out, quick=True, tasks=("svm",), progress=False)
    return out, before


@pytest.mark.slow
def test_quick_run_writes_every_fit_and_keeps_the_other_task(quick_run):
    out, _ = quick_run
    frame = pd.read_csv(out / bench_datasets.CSV)
    folds, epsilons = bench_datasets.QUICK["folds"], bench_datasets.QUICK["epsilons"]
    for task in ("logistic", "svm"):  # the svm run kept the logistic rows
        rows = frame[frame["task"] == task]
        # per fold: 3 references + per ε (ours + 4 peers)
        assert len(rows) == folds * (3 + len(epsilons) * (1 + len(bench_datasets.PEERS)))
        ours = rows[rows["method"] == DEFAULT]
        assert np.all(ours["certified_epsilon"] <= ours["epsilon"])
        assert sorted(ours["epsilon"].unique()) == sorted(epsilons)


@pytest.mark.slow
def test_quick_run_renders_its_section_after_the_earlier_text(quick_run):
    out, before = quick_run
    text = (out / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert text.startswith(before)
    assert text.count(f"## {bench_datasets.TITLE}") == 1  # the second run replaced it
    assert "### `breast_cancer`, task `logistic` (n = 569, d = 30, 2 classes)" in text
    assert "### `breast_cancer`, task `svm` (n = 569, d = 30, 2 classes)" in text
    summary = [line for line in text.splitlines() if line.startswith("| breast_cancer | 569 | 30 | 2 |")]
    assert len(summary) == 2


@pytest.mark.slow
def test_private_accuracy_beats_the_majority_at_epsilon_one_on_breast_cancer():
    """Five folds at ε = 1: the default's mean accuracy ≥ the majority's + 10 points.

    Measured over 60 noise seeds on these folds, the 5-fold mean had mean 82.7 % (logistic) and
    83.4 % (svm) with sd 1.9 and 1.8 points, against the majority's 62.7 % (357/569): the threshold
    72.7 % is ≥ 5.4 sd below the expected value, so a false failure needs a 5-sd draw (Gaussian
    rate < 1e-7).  A wrong label mapping, encoding or estimator drops the accuracy to about the
    majority or below.
    """
    for task in ("logistic", "svm"):
        frame = bench_datasets.run_dataset_task("breast_cancer", task, epsilons=(1.0,), repeats=1, progress=False)
        majority = frame.loc[frame["method"] == bench_datasets.MAJORITY, "accuracy"].mean()
        assert majority == pytest.approx(357 / 569, abs=0.005)  # stratified folds keep the class shares
        ours = frame.loc[frame["method"] == DEFAULT, "accuracy"].mean()
        assert ours >= majority + 0.10, (task, ours, majority)


def test_standard_error_is_over_the_repetition_means():
    # Two repetitions of two folds: repetition means 0.6 and 0.8 → mean 0.7, se = sd(0.6, 0.8)/√2 = 0.1.
    group = pd.DataFrame({"repeat": [0, 0, 1, 1], "accuracy": [0.5, 0.7, 0.8, 0.8], "bound": "x"})
    assert bench_datasets_report.mean_se(group) == "70.00 ± 10.00"
    assert bench_datasets_report.mean_se(group[group["repeat"] == 0]) == "60.00"


def test_loading_is_quiet_about_the_documented_clips_only():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in BUNDLED:
            load_bundled(name)


@pytest.mark.slow
def test_multiclass_run_fits_the_k_class_peers_and_records_objpert_as_binary_only(tmp_path):
    bench_datasets.run_datasets(["wine"], out=tmp_path, quick=True, progress=False)
    frame = pd.read_csv(tmp_path / bench_datasets.CSV)
    epsilons, folds = bench_datasets.QUICK["epsilons"], bench_datasets.QUICK["folds"]
    for task in ("logistic", "svm"):
        rows = frame[frame["task"] == task]
        # objective perturbation: one record per ε, not run, with the reason
        objpert = rows[rows["method"] == "baseline: objpert"]
        assert len(objpert) == len(epsilons) and objpert["accuracy"].isna().all()
        assert (objpert["bound"] == bench_datasets.BINARY_ONLY).all() and objpert["note"].str.contains("rank").all()
        # DP-SGD under both relations: every fold and ε, with the binary accountants' bounds
        for peer, bound in (("sgd_ma", "add/remove"), ("sgd_ma_replace_one", "replace-one")):
            fits = rows[rows["method"] == f"baseline: {peer}"]
            assert len(fits) == folds * len(epsilons) and fits["accuracy"].notna().all()
            assert fits["bound"].str.contains(bound).all() and (fits["certified_epsilon"] == fits["epsilon"]).all()
            assert fits["note"].str.startswith(bench_datasets.task_loss(task, 3).name).all()
        nonprivate = rows[rows["method"] == bench_datasets.NONPRIVATE]
        assert len(nonprivate) == folds and nonprivate["accuracy"].notna().all()
        ours = rows[rows["method"] == DEFAULT]
        assert len(ours) == folds * len(epsilons) and ours["accuracy"].notna().all()
        assert np.all(ours["certified_epsilon"] <= ours["epsilon"])
    text = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert f"| baseline: objpert | {bench_datasets.BINARY_ONLY} | {bench_datasets.BINARY_ONLY} |  |" in text
    assert sum(line.startswith("| wine | 178 | 13 | 3 |") for line in text.splitlines()) == 2


@pytest.mark.parametrize("task, expected", [("logistic", "multinomial"), ("svm", "one-vs-rest huber")])
def test_the_peers_fit_the_estimators_loss(task, expected):
    assert bench_datasets.task_loss(task, 2) is TASKS[task][1]
    loss = bench_datasets.task_loss(task, 10)
    assert loss.name == expected and loss.parameter_dimension(64) == 640


@pytest.mark.slow
def test_multiclass_private_accuracy_is_far_above_the_majority_on_digits():
    """Two folds of digits at ε = 2: the default and DP-SGD beat the majority (≈ 10 %) by ≥ 30 points.

    Measured over 30 noise seeds on these folds: the default 77.9 % (sd 2.0) multinomial logistic,
    64.3 % (sd 3.1) one-vs-rest SVM; DP-SGD (``sgd_ma`` / ``sgd_ma_replace_one``) 86.1 / 82.0 % (sd
    1.7 / 3.0) on the multinomial loss and 79.9 / 67.3 % (sd 2.3 / 4.1) on the one-vs-rest loss.
    The threshold ≈ 40 % is ≥ 6.6 sd below each.  A wrong class mapping (argmax column ≠ label, or
    the peers' labels not mapped to 0..K−1) gives about 10 %.
    """
    for task in ("logistic", "svm"):
        frame = bench_datasets.run_dataset_task("digits", task, epsilons=(2.0,), repeats=1, folds=2, progress=False)
        majority = frame.loc[frame["method"] == bench_datasets.MAJORITY, "accuracy"].mean()
        assert majority == pytest.approx(0.1, abs=0.005)  # ≈ 180 images per digit
        for method in (DEFAULT, "baseline: sgd_ma", "baseline: sgd_ma_replace_one"):
            accuracy = frame.loc[frame["method"] == method, "accuracy"].mean()
            assert accuracy >= majority + 0.30, (task, method, accuracy, majority)


def test_the_cli_choices_list_the_bundled_data_sets():
    from dpconvex.cli import choices as cli_choices
    from dpconvex_lab.bench_datasets import DATASETS

    assert cli_choices.BENCH_DATASETS == tuple(DATASETS)


@pytest.mark.slow
def test_bench_on_a_bundled_data_set_from_the_cli(tmp_path):
    from dpconvex.cli.main import main

    assert main(["bench", "breast_cancer", "--quick", "--task", "logistic", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "bench_datasets.csv").exists()
    assert "breast_cancer" in (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")


def test_adult_only_bench_options_are_refused_for_a_bundled_data_set(tmp_path, capsys):
    from dpconvex.cli.main import main

    assert main(["bench", "wine", "--no-oracle", "--out", str(tmp_path)]) == 2
    assert "--no-oracle: apply to 'bench adult' only" in capsys.readouterr().err
