"""Multi-class tabular data, from the schema to ``dpconvex train`` (multi-class CSV training).

A schema declares its label set (``"classes"``); ``preprocess`` keeps the label texts and refuses
undeclared ones; ``dpconvex train --csv FILE --target COL`` without ``--positive`` trains a multi-class
model. The shipped fixture ``tests/data/survey_3class.csv`` is a user's export: a UTF-8 BOM, ``;``
delimiters, CRLF line ends, quoted fields holding ``;``, ``,`` and ``""``, ``NA`` as a region, blank
numeric cells and a 3-class target. The end-to-end tests write the real UCI Adult file as a user would
have it (a header row, its ``?`` markers, blank cells) and train on it without cleaning.
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
from sklearn.pipeline import make_pipeline

from dpconvex import PrivateLogisticRegression, PublicSchemaTransformer
from dpconvex.cli.main import main
from dpconvex.datasets import ADULT_SCHEMA, TabularSchema, preprocess, read_csv
from dpconvex.datasets.adult import ADULT_COLUMNS
from dpconvex.datasets.holdout import load_train_test
from dpconvex.exceptions import DataDependentPreprocessingWarning
from dpconvex.privacy.certificate import NO_GUARANTEE

DATA = Path(__file__).parent / "data"
SURVEY, SURVEY_SCHEMA = DATA / "survey_3class.csv", DATA / "survey_3class.schema.json"
ADULT = Path(__file__).parents[2] / "shared" / "data" / "adult"

FEATURES = {"categorical": {"colour": ("red", "blue")}, "numerical": {"age": (0.0, 100.0)}}


def _schema(**labels) -> TabularSchema:
    return TabularSchema(target="label", **{"positive_label": None, **labels}, **FEATURES)


def _frame(labels: list[str]) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"colour": rng.choice(["red", "blue"], len(labels)),
                         "age": rng.integers(0, 100, len(labels)).astype(float), "label": labels})


def _train(capsys, *argv: str) -> dict:
    status = main(["train", "--seed", "0", "--json", *argv])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def _train_error(capsys, *argv: str) -> str:
    status = main(["train", "--seed", "0", *argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith("dpconvex: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def _voided(certificate: dict) -> bool:
    return any(note.startswith(NO_GUARANTEE) for note in certificate["notes"])


# ----------------------------------------------------------------------------- the schema's label set
def test_json_round_trip_and_old_binary_files(tmp_path) -> None:
    schema = TabularSchema.from_json(SURVEY_SCHEMA)
    assert schema.classes == ("basic", "plus", "premium") and schema.positive_label is None
    assert schema.label_set == schema.classes
    schema.to_json(tmp_path / "again.json")
    assert TabularSchema.from_json(tmp_path / "again.json") == schema
    stored = json.loads((tmp_path / "again.json").read_text())
    assert stored["classes"] == ["basic", "plus", "premium"] and stored["positive_label"] is None
    # A file written before "classes" existed: binary, exactly as before.
    old = tmp_path / "old.json"
    old.write_text('{"target": "t", "positive_label": "y", "categorical": {"c": ["a", "b"]}}')
    binary = TabularSchema.from_json(old)
    assert (binary.positive_label, binary.classes, binary.label_set) == ("y", None, (-1, 1))
    assert ADULT_SCHEMA.label_set == (-1, 1)


def test_numeric_classes_are_read_as_their_text() -> None:
    schema = _schema(classes=[0, 1, 2])
    assert schema.classes == ("0", "1", "2")
    _, y = preprocess(_frame(["2", "0", " 1"]), schema)
    assert y.tolist() == ["2", "0", "1"]


@pytest.mark.parametrize("labels, needle", [
    ({"classes": "abc"}, r"classes must be a list of label strings, e.g. \['abc', ...\]"),
    ({"classes": ["a"]}, r"at least 2 distinct labels.*got \['a'\]"),
    ({"classes": ["a", "a"]}, r"at least 2 distinct labels.*got \['a', 'a'\]"),
    ({"classes": ["a", ""]}, "none of them empty"),
    ({"classes": [" a", "b"]}, "padded with spaces"),
    ({"classes": ["a", "b"], "positive_label": "a"}, "needs exactly one of positive_label .* and classes"),
    ({}, "needs exactly one of positive_label .* and classes"),
])
def test_invalid_label_declarations_say_what_to_declare(labels, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        _schema(**labels)


@pytest.mark.parametrize("spec, needle", [
    ([1, 2], r"a schema is a JSON object"),
    ({"target": ["plan"]}, r"schema key 'target' must be a string"),
    ({"target": "plan", "classes": 3}, r"schema key 'classes' must be a list of strings or null; got 3"),
    ({"target": "plan", "positive_label": "a", "numerical": {"age": 5}},
     r"'numerical' must be an object \{\"column\": \[lower, upper\]\}"),
    ({"target": "plan", "positive_label": "a", "numerical": {"age": [0, "9"]}}, r"'numerical' must be"),
    ({"target": "plan", "positive_label": "a", "categorical": {"region": "north"}}, r"'categorical' must be"),
    ({"target": "plan", "positive_label": "a", "numeric_fill": {"age": "0"}}, r"'numeric_fill' must be"),
    ({"target": "plan", "positive_label": "a", "missing_values": "NA"}, r"'missing_values' must be a list of strings"),
    ({"target": "plan", "positive_label": "a", "other_slot": "yes"}, r"'other_slot' must be true or false"),
])
def test_a_schema_file_of_the_wrong_shape_names_the_key(tmp_path, capsys, spec, needle) -> None:
    """Wrong JSON types are a ValueError naming the key (a one-line CLI error), never a TypeError traceback."""
    with pytest.raises(ValueError, match=needle):
        TabularSchema.from_dict(spec)
    (tmp_path / "schema.json").write_text(json.dumps(spec))
    assert "schema" in _train_error(capsys, "--csv", str(SURVEY), "--schema", str(tmp_path / "schema.json"))


def test_a_class_may_not_be_a_missing_value_marker() -> None:
    with pytest.raises(ValueError, match=r"among the missing_values markers \['', 'NA'\]; got \['NA', 'b'\]"):
        TabularSchema("label", None, {}, {}, missing_values=("", "NA"), classes=("NA", "b"))


# ----------------------------------------------------------------------------- preprocess and infer
def test_preprocess_keeps_the_declared_label_texts() -> None:
    frame = _frame(["b", " c", "a", "b"])
    X, y = preprocess(frame, _schema(classes=["a", "b", "c"]))
    assert y.dtype == object and y.tolist() == ["b", "c", "a", "b"]  # stripped like every cell
    # The labels never touch the features: the binary schema of the same features encodes the same X.
    X_binary, y_binary = preprocess(frame, _schema(positive_label="b"))
    np.testing.assert_array_equal(X, X_binary)
    assert y_binary.tolist() == [1, -1, -1, 1]


def test_a_declared_class_absent_from_the_data_is_fine() -> None:
    schema = _schema(classes=["a", "b", "never seen"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, y = preprocess(_frame(["a", "b", "a"]), schema)
    assert set(y) == {"a", "b"} and schema.label_set == ("a", "b", "never seen")


def test_a_label_outside_the_declared_classes_names_the_column_values_and_fix() -> None:
    labels = ["a", "b", "z", "y", "x", "w", "v", "u", "u"]
    with pytest.raises(ValueError, match=r"target column 'label' has 7 labels not among the declared classes "
                                         r"\['a', 'b'\]: \['u', 'v', 'w', 'x', 'y'\] \.\.\.; declare them in the "
                                         r"schema's \"classes\", or remove those rows"):
        preprocess(_frame(labels), _schema(classes=["a", "b"]))


def test_a_missing_label_is_an_error_for_a_multi_class_schema_too() -> None:
    with pytest.raises(ValueError, match=r"target column 'label' has 1 missing values \(rows with index \[1\]\)"):
        preprocess(_frame(["a", "", "b"]), _schema(classes=["a", "b"]))


def test_infer_refuses_a_target_with_one_class() -> None:
    with pytest.raises(ValueError, match=r"target column 'label' has 1 distinct value\(s\) \['a'\]; a classifier "
                                         "needs two classes.*declare the label set"):
        TabularSchema.infer(_frame(["a", "a", " a"]), "label")


# ----------------------------------------------------------------------------- reading the shipped fixture
def test_the_fixture_reads_as_the_csv_module_reads_it() -> None:
    """A second parser (the standard library's, told the encoding and delimiter) gives every cell."""
    with open(SURVEY, encoding="utf-8-sig", newline="") as handle:
        header, *rows = list(csv.reader(handle, delimiter=";"))
    assert SURVEY.read_bytes()[:3] == b"\xef\xbb\xbf"
    frame, _ = read_csv(SURVEY, TabularSchema.from_json(SURVEY_SCHEMA))
    assert list(frame.columns) == header == ["region", "age", "income", "comment", "plan"]
    columns = dict(zip(header, zip(*rows)))
    for name in ("region", "comment", "plan"):
        assert frame[name].tolist() == list(columns[name])
    for name in ("age", "income"):  # declared numerical: blank cells are NaN
        expected = [float(cell) if cell else math.nan for cell in columns[name]]
        np.testing.assert_array_equal(frame[name].to_numpy(), expected)
    assert "NA" in frame["region"].tolist()  # a region, never turned into missing
    assert 'said "call me; later"' in frame["comment"].tolist()  # quoted ';' and '""'
    assert frame["age"].isna().any() and frame["income"].isna().any()


def test_the_fixture_without_a_schema_is_multi_class_with_a_warning() -> None:
    with pytest.warns(DataDependentPreprocessingWarning, match=r"label set \(3 classes\)"):
        frame, schema = read_csv(SURVEY, target="plan")
    assert schema.classes == ("basic", "plus", "premium") and schema.data_dependent
    assert "NA" in schema.categorical["region"] and set(schema.numerical) == {"age", "income"}
    _, y = preprocess(frame, schema, allow_data_dependent=True)
    assert set(y) == {"basic", "plus", "premium"}


def test_positive_label_conflicts_with_a_multi_class_schema() -> None:
    with pytest.raises(ValueError, match=r"positive_label='plus' is for a binary schema, but the schema declares "
                                         r"the classes \['basic', 'plus', 'premium'\]"):
        read_csv(SURVEY, TabularSchema.from_json(SURVEY_SCHEMA), positive_label="plus")


def test_the_split_declares_the_schema_classes() -> None:
    split = load_train_test(csv=str(SURVEY), schema=str(SURVEY_SCHEMA), seed=0)
    assert split.classes == ("basic", "plus", "premium") and split.reasons == ()
    assert len(split.y_train) + len(split.y_test) == 120
    assert set(split.y_train) | set(split.y_test) <= set(split.classes)
    with pytest.warns(DataDependentPreprocessingWarning):
        binary = load_train_test(csv=str(SURVEY), target="plan", positive="premium", seed=0)
    assert binary.classes == (-1, 1) and set(binary.y_train) <= {-1, 1}
    assert "positive label" not in binary.reasons[0] and "label set" not in binary.reasons[0]


# ----------------------------------------------------------------------------- the command line: bad input
def test_cli_refuses_a_label_outside_the_declared_classes(tmp_path, capsys) -> None:
    spec = json.loads(SURVEY_SCHEMA.read_text())
    (tmp_path / "two.json").write_text(json.dumps({**spec, "classes": ["basic", "plus"]}))
    err = _train_error(capsys, "--csv", str(SURVEY), "--schema", str(tmp_path / "two.json"))
    assert "target column 'plan'" in err and "['premium']" in err and '"classes"' in err


def test_cli_refuses_one_class_without_a_schema(tmp_path, capsys) -> None:
    data = tmp_path / "one.csv"
    data.write_text("age,label\n30,yes\n40,yes\n")
    err = _train_error(capsys, "--csv", str(data), "--target", "label", "--schema-from-data")
    assert "target column 'label'" in err and "two classes" in err


def test_cli_trains_on_one_class_when_the_label_set_is_declared(tmp_path, capsys) -> None:
    """One class in the data is a declared class absent, not an error: the schema names both labels."""
    data = tmp_path / "one.csv"
    data.write_text("age,label\n" + "".join(f"{age},yes\n" for age in range(20, 80)))
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"target": "label", "positive_label": "yes", "numerical": {"age": [0, 100]}}))
    payload = _train(capsys, "--csv", str(data), "--schema", str(schema))
    assert payload["n_classes"] == 2 and not _voided(payload["certificate"])


def test_cli_refuses_positive_with_a_multi_class_schema(capsys) -> None:
    err = _train_error(capsys, "--csv", str(SURVEY), "--schema", str(SURVEY_SCHEMA), "--positive", "plus")
    assert "binary schema" in err and "classes" in err


def test_cli_refuses_invalid_classes_in_the_schema_file(tmp_path, capsys) -> None:
    spec = json.loads(SURVEY_SCHEMA.read_text())
    (tmp_path / "bad.json").write_text(json.dumps({**spec, "classes": ["basic"]}))
    err = _train_error(capsys, "--csv", str(SURVEY), "--schema", str(tmp_path / "bad.json"))
    assert "classes of target 'plan'" in err and "at least 2" in err


def test_cli_binary_on_a_multi_class_target_with_positive(capsys) -> None:
    with pytest.warns(DataDependentPreprocessingWarning):
        payload = _train(capsys, "--csv", str(SURVEY), "--target", "plan", "--positive", "premium",
                         "--schema-from-data")
    assert payload["classes"] == ["-1", "1"] and payload["n_classes"] == 2
    assert payload["n_train"] + payload["n_test"] == 120


# ----------------------------------------------------------------------------- multi-class training
def test_cli_trains_three_classes_from_the_fixture(capsys) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataDependentPreprocessingWarning)
        payload = _train(capsys, "--csv", str(SURVEY), "--schema", str(SURVEY_SCHEMA), "--epsilon", "1")
    assert payload["classes"] == ["basic", "plus", "premium"] and payload["n_classes"] == 3
    assert payload["n_train"] + payload["n_test"] == 120
    assert 0.0 <= payload["test_accuracy"] <= 1.0
    assert payload["epsilon"] <= 1.0 and not _voided(payload["certificate"])


def test_cli_declares_a_class_absent_from_the_data(tmp_path, capsys) -> None:
    spec = json.loads(SURVEY_SCHEMA.read_text())
    (tmp_path / "four.json").write_text(json.dumps({**spec, "classes": ["basic", "enterprise", "plus", "premium"]}))
    payload = _train(capsys, "--csv", str(SURVEY), "--schema", str(tmp_path / "four.json"))
    assert payload["classes"] == ["basic", "enterprise", "plus", "premium"] and payload["n_classes"] == 4
    assert not _voided(payload["certificate"])


@pytest.mark.parametrize("model", ["huber", "hinge"])
def test_cli_trains_the_one_vs_rest_models(capsys, model) -> None:
    payload = _train(capsys, "--csv", str(SURVEY), "--schema", str(SURVEY_SCHEMA), "--model", model)
    assert payload["n_classes"] == 3 and payload["model"] == model and not _voided(payload["certificate"])


def test_cli_without_a_schema_reads_the_classes_and_voids_the_guarantee(capsys) -> None:
    with pytest.warns(DataDependentPreprocessingWarning):
        payload = _train(capsys, "--csv", str(SURVEY), "--target", "plan", "--schema-from-data")
    assert payload["classes"] == ["basic", "plus", "premium"] and payload["epsilon"] == "inf"
    assert _voided(payload["certificate"])
    assert any("label set (classes)" in note for note in payload["certificate"]["notes"])


def test_python_pipeline_with_declared_classes() -> None:
    """The Python route of docs/tabular-data.md: the same schema, a Pipeline, string labels."""
    schema = TabularSchema.from_json(SURVEY_SCHEMA)
    frame, _ = read_csv(SURVEY, schema)
    model = make_pipeline(PublicSchemaTransformer(schema),
                          PrivateLogisticRegression(epsilon=1.0, classes=list(schema.classes), random_state=0))
    model.fit(frame.drop(columns=schema.target), frame[schema.target])
    predicted = model.predict(frame)
    assert set(predicted) <= set(schema.classes)
    assert model[-1].classes_.tolist() == ["basic", "plus", "premium"]
    np.testing.assert_allclose(model.predict_proba(frame).sum(axis=1), 1.0, atol=1e-12)
    assert math.isfinite(model[-1].privacy_report_.epsilon)


# ----------------------------------------------------------------------------- the real Adult file, end to end
def _adult_export(folder: Path) -> Path:
    """adult.data as a user's CSV: a header row, the '?' markers kept, native-country's '?' as blank cells."""
    frame = pd.read_csv(ADULT / "adult.data", header=None, names=list(ADULT_COLUMNS), dtype=str,
                        keep_default_na=False, skipinitialspace=True)
    frame["native-country"] = frame["native-country"].replace("?", "")
    path = folder / "adult_export.csv"
    frame.to_csv(path, index=False)
    return path


def _adult_schema(folder: Path, target: str) -> Path:
    """Declared without the data: Adult's public category sets (without '?', now a missing marker) and bounds."""
    categorical = {column: [c for c in cats if c != "?"] for column, cats in ADULT_SCHEMA.categorical.items()
                   if column != target}
    spec = {"target": target, "classes": list(ADULT_SCHEMA.categorical[target]),
            "categorical": {**categorical, "income": ["<=50K", ">50K"]},
            "numerical": {column: list(bounds) for column, bounds in ADULT_SCHEMA.numerical.items()},
            "missing_values": ["", "?"], "other_slot": True,
            "numeric_fill": {column: lower for column, (lower, _) in ADULT_SCHEMA.numerical.items()}}
    path = folder / "adult_schema.json"
    path.write_text(json.dumps(spec))
    return path


@pytest.mark.slow
@pytest.mark.skipif(not ADULT.exists(), reason="needs ../shared/data/adult")
def test_adult_export_trains_seven_marital_statuses_with_a_declared_schema(tmp_path, capsys) -> None:
    """Beats the majority class: the held-out majority share stays within 0.05 of the file's with
    probability > 0.999 (6,513 held-out rows, standard error 0.006), and the model must clear that margin."""
    data, schema = _adult_export(tmp_path), _adult_schema(tmp_path, "marital-status")
    raw = pd.read_csv(data, dtype=str, keep_default_na=False)
    majority = raw["marital-status"].value_counts(normalize=True).iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataDependentPreprocessingWarning)
        payload = _train(capsys, "--csv", str(data), "--schema", str(schema), "--epsilon", "1")
    assert payload["classes"] == list(ADULT_SCHEMA.categorical["marital-status"]) and payload["n_classes"] == 7
    assert payload["n_train"] + payload["n_test"] == len(raw) == 32_561
    assert payload["epsilon"] <= 1.0 and not _voided(payload["certificate"])
    assert payload["test_accuracy"] > majority + 0.05


@pytest.mark.slow
@pytest.mark.skipif(not ADULT.exists(), reason="needs ../shared/data/adult")
def test_adult_export_trains_five_races_without_a_schema(tmp_path, capsys) -> None:
    data = _adult_export(tmp_path)
    with pytest.warns(DataDependentPreprocessingWarning):
        payload = _train(capsys, "--csv", str(data), "--target", "race", "--schema-from-data")
    assert sorted(payload["classes"]) == payload["classes"] and payload["n_classes"] == 5
    assert set(payload["classes"]) == set(pd.read_csv(data, dtype=str)["race"])
    assert payload["epsilon"] == "inf" and _voided(payload["certificate"])


def test_infer_refuses_a_positive_label_absent_from_the_target(tmp_path) -> None:
    """Without a schema everything is read from the data, so a misspelt --positive is caught, not trained as all −1."""
    from dpconvex.datasets import TabularSchema

    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0], "label": ["yes", "no", "yes"]})
    with pytest.raises(ValueError,
                       match=r"positive_label 'nope' does not occur in target column 'label'.*\['no', 'yes'\]"):
        TabularSchema.infer(frame, "label", "nope")
