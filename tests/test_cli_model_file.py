"""Model files: ``dpconvex.estimators.model_file`` (save, load, predict), ``dpconvex train --out``, ``predict``.

A loaded model must predict exactly what the estimator predicts (bit for bit, on the same rows),
carry the same certificate (a void one stays void), and refuse a file that is not a model file,
naming the file and what is wrong.
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpconvex import estimators
from dpconvex.cli.main import main
from dpconvex.datasets import ADULT_SCHEMA, TabularSchema, load_adult_raw, preprocess
from dpconvex.estimators.model_file import FORMAT, FORMAT_VERSION, SEEDED_REASON, load_model, save_model
from dpconvex.privacy.certificate import NO_GUARANTEE

ROWS = 120


def _rows(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unit-norm rows and three targets: a binary label, a 3-class label and a number."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(ROWS, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    binary = np.where(X[:, 0] > 0, "yes", "no")
    multi = np.array(["a", "b", "c"])[np.argmax(X[:, :3], axis=1)]
    return X, binary, multi, X @ np.array([0.5, -0.2, 0.1, 0.3])


def _fitted(name: str, **params):
    X, binary, multi, number = _rows()
    fits = {
        "logistic-binary": (estimators.PrivateLogisticRegression, binary, {"classes": ["no", "yes"]}),
        "logistic-multiclass": (estimators.PrivateLogisticRegression, multi,
                                {"classes": ["a", "b", "c"], "fit_intercept": True}),
        "huber": (estimators.PrivateHuberSVC, binary, {"classes": ["no", "yes"], "fit_intercept": True}),
        "huber-multiclass": (estimators.PrivateHuberSVC, multi, {"classes": ["a", "b", "c"]}),
        "hinge": (estimators.PrivateLinearSVC, binary, {"classes": ["no", "yes"]}),
        "ridge": (estimators.PrivateRidge, number, {"fit_intercept": True}),
        "lad": (estimators.PrivateLADRegressor, number, {}),
    }
    model_class, y, declared = fits[name]
    return model_class(random_state=0, **declared, **params).fit(X, y), X


MODELS = ["logistic-binary", "logistic-multiclass", "huber", "huber-multiclass", "hinge", "ridge", "lad"]


@pytest.mark.parametrize("name", MODELS)
def test_a_loaded_model_predicts_bit_for_bit_as_the_estimator(tmp_path, name):
    estimator, X = _fitted(name)
    save_model(tmp_path / "model.json", estimator)
    model = load_model(tmp_path / "model.json")
    other = np.random.default_rng(1).normal(size=(50, X.shape[1]))  # rows it was not trained on
    for rows in (X, other):
        assert np.array_equal(model.predict(rows), estimator.predict(rows))
        assert model.predict(rows).dtype == estimator.predict(rows).dtype
    if model.is_classifier:
        assert np.array_equal(model.decision_function(other), estimator.decision_function(other))
        assert np.array_equal(model.classes, estimator.classes_)
    assert np.array_equal(model.coef, estimator.coef_) and np.array_equal(model.intercept, estimator.intercept_)
    assert model.certificate == estimator.privacy_report_.without_guarantee(SEEDED_REASON)  # fitted with a seed
    assert model.estimator == type(estimator).__name__ and model.n_features_in == X.shape[1]
    assert (model.format, model.format_version) == (FORMAT, FORMAT_VERSION)
    assert model.params == json.loads(json.dumps({**estimator.get_params(), "random_state": None}))


def test_a_regressor_maps_its_scores_to_the_target(tmp_path):
    estimator, X = _fitted("ridge")
    save_model(tmp_path / "model.json", estimator, target_scale=160.5, target_offset=np.float64(185.5))
    assert np.array_equal(load_model(tmp_path / "model.json").predict(X), estimator.predict(X) * 160.5 + 185.5)


def test_a_void_certificate_stays_void(tmp_path):
    estimator, _ = _fitted("logistic-binary")
    void = estimator.privacy_report_.without_guarantee("the bounds were read from the data")
    save_model(tmp_path / "model.json", estimator, certificate=void)
    record = json.loads((tmp_path / "model.json").read_text())["certificate"]
    assert record["epsilon"] == "inf"
    loaded = load_model(tmp_path / "model.json").certificate
    assert loaded == void.without_guarantee(SEEDED_REASON) and math.isinf(loaded.epsilon)  # fitted with a seed
    assert any(note.startswith(NO_GUARANTEE) for note in loaded.notes)


def test_parameters_json_has_no_form_for_are_kept_as_text(tmp_path):
    estimator, _ = _fitted("lad", **{"radius": np.float64(2.0)})
    estimator.set_params(random_state=np.random.default_rng(3))  # after the fit: the parameters as saved
    save_model(tmp_path / "model.json", estimator)
    params = load_model(tmp_path / "model.json").params
    assert params["radius"] == 2.0 and type(params["radius"]) is float
    assert params["random_state"] is None  # never written


def test_predict_frame_encodes_with_the_schema(tmp_path):
    frame = load_adult_raw("test").head(300)
    X, y = preprocess(frame, ADULT_SCHEMA)
    estimator = estimators.PrivateLogisticRegression(classes=[-1, 1], random_state=0).fit(X, y)
    save_model(tmp_path / "model.json", estimator, schema=ADULT_SCHEMA)
    model = load_model(tmp_path / "model.json")
    assert model.schema == ADULT_SCHEMA
    assert np.array_equal(model.predict_frame(frame.drop(columns=["income"])), estimator.predict(X))
    with pytest.raises(ValueError, match=r"lack the feature columns \['age', 'sex'\]"):
        model.predict_frame(frame.drop(columns=["age", "sex"]))
    save_model(tmp_path / "arrays.json", estimator)
    with pytest.raises(ValueError, match="saved without a schema"):
        load_model(tmp_path / "arrays.json").predict_frame(frame)


def test_decision_function_refuses_rows_of_another_width(tmp_path):
    estimator, X = _fitted("ridge")
    save_model(tmp_path / "model.json", estimator)
    model = load_model(tmp_path / "model.json")
    with pytest.raises(ValueError, match=r"shape \(n_samples, 4\).*got shape \(120, 3\)"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="finite"):
        model.predict(np.full((1, 4), np.nan))


@pytest.mark.parametrize("estimator, change, message", [
    ("unfitted", {}, "needs a fitted dpconvex estimator"),
    ("sklearn", {}, "got LogisticRegression"),
    ("ridge", {"target_offset": math.inf}, "target_offset"),
    ("ridge", {"target_scale": 0.0}, "\"target_scale\" must be finite and > 0; got \"target_scale\"=0.0"),
    ("hinge", {"target_offset": 1.0}, "classifier's \"target_scale\" and \"target_offset\" must be 1 and 0"),
    ("hinge", {"schema": ADULT_SCHEMA}, "the schema encodes 108 features, but \"coef\" has 4"),
], ids=["unfitted", "not-dpconvex", "infinite-offset", "zero-scale", "classifier-offset", "schema-width"])
def test_save_model_refuses(tmp_path, estimator, change, message):
    from sklearn.linear_model import LogisticRegression

    fitted = {"unfitted": estimators.PrivateRidge(), "sklearn": LogisticRegression()}.get(estimator)
    if fitted is None:
        fitted, _ = _fitted(estimator)
    with pytest.raises(ValueError, match=message):
        save_model(tmp_path / "model.json", fitted, **change)
    assert not (tmp_path / "model.json").exists()


def _edited(tmp_path: Path, edit) -> Path:
    """A saved binary logistic model whose JSON object was changed by ``edit`` (or replaced by its return)."""
    estimator, _ = _fitted("logistic-binary")
    save_model(tmp_path / "model.json", estimator)
    record = json.loads((tmp_path / "model.json").read_text())
    record = edit(record) or record
    path = tmp_path / "edited.json"
    path.write_text(record if isinstance(record, str) else json.dumps(record))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda r: "{\"format\": ", "is not JSON"),
    (lambda r: json.dumps(r).replace("1e-08", "NaN", 1), "is not JSON .*NaN"),
    (lambda r: [1, 2], "not a dpconvex model file .*'list'"),
    (lambda r: r.update(format="sklearn-pickle"), "its \"format\" is 'sklearn-pickle', not 'dpconvex-model'"),
    (lambda r: r.update(format_version=FORMAT_VERSION + 1), "format version 2 .* is newer .* upgrade dpconvex"),
    (lambda r: r.update(format_version="1"), "\"format_version\" must be an integer"),
    (lambda r: r.pop("coef") and r.update(weights=[]), r"missing keys \['coef'\] and unknown keys \['weights'\]"),
    (lambda r: r.update(note="x"), r"^model file '[^']*': unknown keys \['note'\]; a model file of format version 1 "),
    (lambda r: r.update(coef=r["coef"][:-1]), "\"n_features_in\" must be the number of columns of \"coef\", 3"),
    (lambda r: r.update(coef=[r["coef"], r["coef"]]), r"of 2 classes must have shape \(d,\) and a number"),
    (lambda r: r.update(intercept=[0.0, 1.0]), r"got \(4,\) and \(2,\)"),
    (lambda r: r.update(coef=[1, "x", 2, 3]), "\"coef\" must be a JSON number or a list of numbers"),
    (lambda r: r.update(intercept="1"), "\"intercept\" must be a JSON number or a list of numbers"),
    (lambda r: r.update(classes=["no", "no"]), "\"classes\" must be null .* two distinct labels"),
    (lambda r: r.update(target_offset="3"), "\"target_offset\" must be a finite number"),
    (lambda r: r.update(classes=None), "'PrivateLogisticRegression' is a classifier, so \"classes\" must be its label"),
    (lambda r: r.update(classes=[1, "1"]), "\"classes\" must be null .* two distinct labels of one type"),
    (lambda r: r.update(estimator="os.system"), "\"estimator\" must name a dpconvex estimator"),
    (lambda r: r.update(target_scale=2.0), "classifier's \"target_scale\" and \"target_offset\" must be 1 and 0"),
    (lambda r: r.update(params=[]), "\"params\" must be a JSON object"),
    (lambda r: r["certificate"].__delitem__("epsilon"), r"missing fields \['epsilon'\]"),
    (lambda r: r["certificate"].update(epsilon="one"), "the certificate's epsilon must be a number >= 0"),
    (lambda r: r["certificate"].update(epsilon=-1.0), "the certificate's epsilon must be a number >= 0"),
    (lambda r: r["certificate"].update(delta=5.0), "its delta a number in \\[0, 1\\]"),
    (lambda r: r["certificate"].update(notes="a note"), "its notes a list of texts"),
    (lambda r: "[" * 100_000 + "]" * 100_000, "is not JSON \\(RecursionError"),
    (lambda r: r.update(schema={"target": 3}), "schema key 'target'"),
], ids=["truncated", "nan", "list", "format", "newer", "version-text", "keys", "unknown-key", "width", "coef-rows",
        "intercept-shape", "coef-text", "intercept-text", "classes", "offset-text", "classes-null", "classes-mixed",
        "estimator", "classifier-scale", "params", "certificate", "certificate-epsilon", "certificate-negative",
        "certificate-delta", "certificate-notes", "nested", "schema"])
def test_load_model_refuses_naming_the_file(tmp_path, edit, message):
    path = _edited(tmp_path, edit)
    with pytest.raises(ValueError, match=message) as info:
        load_model(path)
    assert f"model file {str(path)!r}" in str(info.value)


def test_an_unchanged_file_loads(tmp_path):
    """The edits above start from a file that loads: each refusal is the edit's doing."""
    assert load_model(_edited(tmp_path, lambda record: None)).is_classifier


# ----------------------------------------------------------------------------- the command line
def _write_table(directory: Path, rows: int = 150) -> tuple[Path, Path]:
    """A CSV file (colour, age, label) and its declared binary schema."""
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], rows)
    age = rng.integers(18, 80, rows)
    label = np.where((age > 45) ^ (colour == "red"), "yes", "no")
    data = directory / "data.csv"
    pd.DataFrame({"colour": colour, "age": age, "label": label}).to_csv(data, index=False)
    schema = directory / "schema.json"
    schema.write_text(json.dumps({"target": "label", "positive_label": "yes", "numerical": {"age": [0, 100]},
                                  "categorical": {"colour": ["blue", "green", "red"]}}))
    return data, schema


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def _predictions(text: str) -> list[str]:
    rows = list(csv.reader(text.splitlines()))
    assert rows[0] == ["prediction"]
    return [row[0] for row in rows[1:]]


@pytest.mark.filterwarnings("error::dpconvex.exceptions.DataDependentPreprocessingWarning")
def test_train_out_then_predict_with_a_schema(tmp_path, capsys):
    data, schema = _write_table(tmp_path)
    model_path = tmp_path / "model.json"
    status, out, err = _run(capsys, ["train", "--csv", str(data), "--schema", str(schema),
                                     "--out", str(model_path)])
    assert status == 0, err
    assert out.splitlines()[-1] == f"saved the model and its certificate to {model_path}"
    model = load_model(model_path)
    assert model.schema == TabularSchema.from_json(schema) and model.certificate.epsilon <= 1.0
    assert str(model.certificate) in out  # the certificate printed is the one saved
    frame = pd.read_csv(data)
    expected = model.predict(preprocess(frame.astype({"age": float}), model.schema)[0])

    status, out, err = _run(capsys, ["predict", "--model", str(model_path), "--csv", str(data)])
    assert status == 0, err
    assert _predictions(out) == [str(value) for value in expected] and set(_predictions(out)) <= {"-1", "1"}
    first, score = err.splitlines()
    assert first.startswith(f"dpconvex: model certificate: {str(model.certificate).splitlines()[0]}")
    accuracy = float(np.mean(expected == np.where(frame["label"] == "yes", 1, -1)))
    assert score.startswith(f"dpconvex: accuracy {accuracy:.4f} on the 150 rows of {data}, computed without noise")

    unlabelled = tmp_path / "unlabelled.csv"
    frame.drop(columns=["label"]).head(7).to_csv(unlabelled, index=False)
    status, out, err = _run(capsys, ["predict", "--model", str(model_path), "--csv", str(unlabelled), "--json"])
    assert status == 0 and json.loads(out) == expected[:7].tolist()
    assert len(err.splitlines()) == 1 and "accuracy" not in err  # no target column: no score

    written = tmp_path / "predictions.csv"
    status, out, err = _run(capsys, ["predict", "--model", str(model_path), "--csv", str(unlabelled),
                                     "--output", str(written)])
    assert status == 0 and out == "" and f"wrote 7 predictions to {written}" in err
    assert _predictions(written.read_text()) == [str(value) for value in expected[:7]]


def test_train_out_without_a_schema_saves_a_void_certificate_and_the_inferred_schema(tmp_path, capsys):
    data, _ = _write_table(tmp_path)
    model_path = tmp_path / "model.json"
    with pytest.warns(Warning):
        status, out, err = _run(capsys, ["train", "--csv", str(data), "--target", "label", "--schema-from-data",
                                         "--seed", "0", "--out", str(model_path), "--json"])
    assert status == 0, err
    assert json.loads(out)["model_file"] == str(model_path)
    model = load_model(model_path)
    assert math.isinf(model.certificate.epsilon) and model.schema.data_dependent
    assert any(note.startswith(NO_GUARANTEE) for note in model.certificate.notes)
    status, out, err = _run(capsys, ["predict", "--model", str(model_path), "--csv", str(data)])
    assert status == 0 and len(_predictions(out)) == 150
    assert "no differential-privacy guarantee" in err.splitlines()[0]


def test_train_out_on_adult(tmp_path, capsys):
    model_path = tmp_path / "adult.json"
    status, out, err = _run(capsys, ["train", "--out", str(model_path), "--json"])
    assert status == 0, err
    model = load_model(model_path)
    assert model.schema == ADULT_SCHEMA and model.certificate.to_dict() == json.loads(out)["certificate"]
    test = load_adult_raw("test")
    accuracy = float(np.mean(model.predict_frame(test) == preprocess(test, ADULT_SCHEMA)[1]))
    assert accuracy == pytest.approx(json.loads(out)["test_accuracy"], abs=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--parquet", "table"], "--out applies to --csv and the embedded data"),
    (["--csv", "data.csv"], "--out '{tmp}' is a directory"),
    (["--csv", "data.csv", "--out", "{tmp}/missing/model.json"], "the directory '{tmp}/missing' does not exist"),
], ids=["parquet", "directory", "missing-directory"])
def test_train_out_refuses(tmp_path, capsys, argv, message):
    argv = [part.format(tmp=tmp_path) for part in argv]
    out_path = [] if "--out" in argv else ["--out", str(tmp_path)]
    status, out, err = _run(capsys, ["train", *argv, *out_path, "--target", "label"])
    assert status == 2 and out == ""
    assert message.format(tmp=tmp_path) in err and err.startswith("dpconvex: error: ")


def test_predict_refuses_naming_the_file_and_columns(tmp_path, capsys):
    data, schema = _write_table(tmp_path)
    model_path = tmp_path / "model.json"
    assert _run(capsys, ["train", "--csv", str(data), "--schema", str(schema), "--seed", "0",
                         "--out", str(model_path)])[0] == 0
    pd.read_csv(data).drop(columns=["age"]).to_csv(tmp_path / "no_age.csv", index=False)
    status, out, err = _run(capsys, ["predict", "--model", str(model_path), "--csv", str(tmp_path / "no_age.csv")])
    assert status == 2 and out == ""
    assert f"--csv '{tmp_path / 'no_age.csv'}': the data lack the feature columns ['age']" in err

    estimator, _ = _fitted("ridge")
    save_model(tmp_path / "arrays.json", estimator)
    status, out, err = _run(capsys, ["predict", "--model", str(tmp_path / "arrays.json"), "--csv", str(data)])
    assert status == 2 and f"--model '{tmp_path / 'arrays.json'}' was saved without a schema" in err

    status, out, err = _run(capsys, ["predict", "--model", str(data), "--csv", str(data)])
    assert status == 2 and f"model file '{data}' is not JSON" in err


def test_predict_on_a_regression_model_reports_r2(tmp_path, capsys):
    """A regressor's predictions carry the target offset; the score on a file with the target is R^2."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 80)
    frame = pd.DataFrame({"x": x, "y": 100 + 3 * x})
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    schema = TabularSchema(target="y", numerical={"x": (0, 10)}, target_bounds=(100, 130))
    estimator = estimators.PrivateLADRegressor(random_state=0, fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = preprocess(frame, schema)
    estimator.fit(X, y - 115)
    save_model(tmp_path / "model.json", estimator, schema=schema, target_offset=115.0)
    status, out, err = _run(capsys, ["predict", "--model", str(tmp_path / "model.json"), "--csv", str(data)])
    assert status == 0, err
    predictions = np.array(_predictions(out), dtype=float)
    assert np.array_equal(predictions, estimator.predict(X) + 115.0)
    from sklearn.metrics import r2_score

    assert f"R^2 {r2_score(y, predictions):.4f} on the 80 rows" in err


def test_a_seeded_fit_is_saved_without_its_seed_and_certifies_nothing(tmp_path, capsys):
    """A seed makes the noise reproducible (docs/SECURITY.md): --out with --seed writes no seed and a void
    certificate, and says so; the same run without --seed keeps its certificate."""
    data, schema = _write_table(tmp_path)
    seeded, unseeded = tmp_path / "seeded.json", tmp_path / "unseeded.json"
    status, out, err = _run(capsys, ["train", "--csv", str(data), "--schema", str(schema), "--seed", "0",
                                     "--out", str(seeded)])
    assert status == 0 and f"{seeded} certifies epsilon = inf" in err and "fixed seed" in err
    model = load_model(seeded)
    assert math.isinf(model.certificate.epsilon) and model.params["random_state"] is None
    assert f"{NO_GUARANTEE}: {SEEDED_REASON}" in model.certificate.notes
    assert _run(capsys, ["train", "--csv", str(data), "--schema", str(schema), "--out", str(unseeded)])[0] == 0
    assert load_model(unseeded).certificate.epsilon <= 1.0


@pytest.mark.parametrize("option", ["--csv", "--schema"])
def test_out_never_replaces_an_input_file(tmp_path, capsys, option):
    data, schema = _write_table(tmp_path)
    before = {path: path.read_bytes() for path in (data, schema)}
    target = data if option == "--csv" else schema
    status, out, err = _run(capsys, ["train", "--csv", str(data), "--schema", str(schema), "--out", str(target)])
    assert status == 2 and f"--out {str(target)!r} is the {option} file of this run" in err
    assert {path: path.read_bytes() for path in before} == before
