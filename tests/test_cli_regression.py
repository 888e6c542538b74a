"""``dpconvex train --model ridge|lad``: regression of a numeric target from a CSV file, scored by R².

The target's declared range [lower, upper] (the schema's ``target_bounds``) maps it onto [-1, 1]
by public constants; the predictions map back, so the held-out R² is on the target's own scale.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.base import is_regressor
from sklearn.metrics import r2_score

from dpconvex import estimators
from dpconvex.cli.choices import MODELS, REGRESSION_MODELS
from dpconvex.cli.main import main
from dpconvex.cli.output import MIN_HELD_OUT
from dpconvex.datasets.holdout import load_train_test
from dpconvex.estimators.model_file import load_model
from dpconvex.exceptions import DataDependentPreprocessingWarning
from dpconvex.privacy.certificate import NO_GUARANTEE

BOUNDS = (25.0, 346.0)


def _write(tmp_path, rows: int = 400, bounds=BOUNDS) -> tuple[str, str]:
    """A CSV file whose target is linear in its features (plus noise), and a schema declaring its range."""
    rng = np.random.default_rng(0)
    age, bmi, sex = rng.integers(20, 80, rows), rng.uniform(18, 40, rows), rng.choice(["F", "M"], rows)
    target = np.clip(25 + 2 * (age - 20) + 4 * (bmi - 18) + 10 * (sex == "M") + rng.normal(0, 10, rows), *BOUNDS)
    data = tmp_path / "data.csv"
    frame = pd.DataFrame({"age": age, "bmi": bmi.round(2), "sex": sex, "progression": target.round(1)})
    frame.to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"target": "progression", "target_bounds": list(bounds),
                                  "numerical": {"age": [0, 100], "bmi": [10, 50]}, "categorical": {"sex": ["F", "M"]}}))
    return str(data), str(schema)


def _json(capsys, argv: list[str]) -> dict:
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def _error(capsys, argv: list[str]) -> str:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.startswith("dpconvex: error: ")
    return err


def test_the_model_choices_are_the_estimators():
    for name, class_name in MODELS.items():
        assert class_name in estimators.__all__
        assert is_regressor(getattr(estimators, class_name)()) == (name in REGRESSION_MODELS)


@pytest.mark.filterwarnings("error::dpconvex.exceptions.DataDependentPreprocessingWarning")
@pytest.mark.parametrize("model", REGRESSION_MODELS)
def test_regression_reports_the_held_out_r2_on_the_target_scale(tmp_path, capsys, model):
    data, schema = _write(tmp_path)
    out = tmp_path / "model.json"
    payload = _json(capsys, ["train", "--csv", data, "--schema", schema, "--model", model, "--seed", "0",
                             "--out", str(out)])
    assert "test_accuracy" not in payload and "classes" not in payload
    assert payload["target_bounds"] == list(BOUNDS) and payload["epsilon"] <= 1.0
    saved = load_model(out)
    assert saved.estimator == MODELS[model] and not saved.is_classifier
    assert (saved.target_scale, saved.target_offset) == ((BOUNDS[1] - BOUNDS[0]) / 2, (BOUNDS[0] + BOUNDS[1]) / 2)
    split = load_train_test(csv=data, schema=schema, seed=0, task="regression")
    assert payload["n_test"] == len(split.y_test)
    assert payload["test_r2"] == pytest.approx(r2_score(split.y_test, saved.predict(split.X_test)), abs=1e-12)
    assert any(note.startswith("test_r2 is computed without noise") for note in payload["certificate"]["notes"])


def test_ridge_default_is_near_the_mean_at_epsilon_1_and_learns_at_10(tmp_path, capsys):
    """The default ridge fit (private mean intercept, lambda by the prediction-noise rule) on 320 training rows.

    Mean held-out R^2 over five seeds: above -0.3 at epsilon = 1 (the fixed lambda = 0.05 without an
    intercept scored -5.1 on this file) and above 0.1 at epsilon = 10 (the least-squares fit: about 0.95; three
    passes of SGD on unit-norm rows stay short of it).
    """
    data, schema = _write(tmp_path)

    def mean_r2(epsilon: str) -> float:
        return float(np.mean([_json(capsys, ["train", "--csv", data, "--schema", schema, "--model", "ridge",
                                             "--seed", str(seed), "--epsilon", epsilon])["test_r2"]
                              for seed in range(5)]))

    assert mean_r2("1") > -0.3
    assert mean_r2("10") > 0.1


def test_regression_prints_r2_and_the_small_held_out_note(tmp_path, capsys):
    data, schema = _write(tmp_path, rows=100)
    assert main(["train", "--csv", data, "--schema", schema, "--model", "lad", "--seed", "0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"test R\^2: -?\d+\.\d{4} on 20 held-out rows", lines[0])
    assert lines[1].startswith(f"note: only 20 held-out rows (fewer than {MIN_HELD_OUT}): this test R^2 is too noisy")


def test_regression_without_a_schema_has_no_guarantee(tmp_path, capsys):
    data, _ = _write(tmp_path)
    with pytest.warns(DataDependentPreprocessingWarning, match="target bounds"):
        payload = _json(capsys, ["train", "--csv", data, "--target", "progression", "--model", "ridge",
                                   "--schema-from-data", "--seed", "0"])
    assert payload["epsilon"] == "inf" and math.isfinite(payload["test_r2"])
    assert any(note.startswith(NO_GUARANTEE) and "target bounds" in note for note in payload["certificate"]["notes"])


def test_predict_with_a_saved_regressor_reports_r2_on_the_file(tmp_path, capsys):
    data, schema = _write(tmp_path)
    out = tmp_path / "model.json"
    assert main(["train", "--csv", data, "--schema", schema, "--model", "ridge", "--seed", "0",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(out), "--csv", data, "--json"]) == 0
    predicted, err = capsys.readouterr()
    frame = pd.read_csv(data)
    expected = load_model(out).predict_frame(frame)
    assert np.array_equal(json.loads(predicted), expected)
    assert f"R^2 {r2_score(frame['progression'], expected):.4f} on the 400 rows of {data}" in err

    one_row = tmp_path / "one.csv"
    frame.head(1).to_csv(one_row, index=False)
    assert main(["predict", "--model", str(out), "--csv", str(one_row)]) == 0
    assert "R^2" not in capsys.readouterr().err  # undefined on one row


@pytest.mark.parametrize("argv, message", [
    (["--model", "ridge", "--positive", "50"], r"positive_label \(--positive\) '50' names the positive class"),
    (["--model", "lad", "--parquet", "table"], r"--parquet trains the classifiers only \(--model logistic, huber, "
                                               r"hinge\); to train --model lad"),
    (["--model", "lad", "--iterations", "5"], "--iterations does not apply to --model lad .* it applies to --model "
                                              "logistic, huber, ridge"),
    (["--model", "lad", "--method", "noisy_gd"], "the absolute loss is not smooth.*use method='sco_noisy_sgd'"),
    (["--model", "logistic"], "the schema declares target_bounds .* use --model ridge or --model lad"),
], ids=["positive", "parquet", "iterations", "smooth-method", "classifier"])
def test_regression_refusals_name_the_option(tmp_path, capsys, argv, message):
    data, schema = _write(tmp_path)
    source = [] if "--parquet" in argv else ["--csv", data]
    assert re.search(message, _error(capsys, ["train", *source, "--schema", schema, *argv]))


@pytest.mark.parametrize("model, option", [("hinge", "--iterations"), ("lad", "--epochs")])
def test_trainer_options_the_model_lacks_are_refused_before_reading_data(capsys, model, option):
    err = _error(capsys, ["train", "--csv", "no-such-file.csv", "--target", "y", "--model", model, option, "3"])
    assert f"{option} does not apply to --model {model}" in err and "no-such-file" not in err


def test_regression_refuses_adult_and_a_class_label_schema(tmp_path, capsys):
    assert "--model ridge/lad need --csv with a numeric target" in _error(capsys, ["train", "--model", "ridge"])
    data, _ = _write(tmp_path)
    labelled = tmp_path / "labelled.json"
    labelled.write_text(json.dumps({"target": "sex", "positive_label": "F", "numerical": {"age": [0, 100]}}))
    err = _error(capsys, ["train", "--csv", data, "--schema", str(labelled), "--model", "ridge"])
    assert "declare \"target_bounds\": [lower, upper] instead" in err


def test_a_regression_schema_is_refused_by_a_parquet_classifier(tmp_path, capsys):
    """--parquet trains classifiers: a schema declaring target_bounds gets the message naming the models that fit it
    (not a TypeError from its absent label set)."""
    import pandas as pd

    data, schema = _write(tmp_path)
    directory = tmp_path / "table"
    directory.mkdir()
    pd.read_csv(data).to_parquet(directory / "part0.parquet")
    err = _error(capsys, ["train", "--parquet", str(directory), "--schema", schema])
    assert "the schema declares target_bounds" in err and "--model ridge or --model lad" in err


@pytest.mark.filterwarnings("error::sklearn.exceptions.UndefinedMetricWarning")
def test_r2_of_one_held_out_row_is_undefined_not_nan(tmp_path, capsys):
    data, schema = _write(tmp_path, rows=5)
    assert main(["train", "--csv", data, "--schema", schema, "--model", "ridge", "--seed", "0"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "test R^2: undefined on 1 held-out row (it needs 2)"
