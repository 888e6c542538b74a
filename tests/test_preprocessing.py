"""PublicSchemaTransformer, the missing-value options of TabularSchema and robust CSV reading.

Each bad input (missing values in every column type, unseen categories at predict
time, a CSV with a BOM / semicolons / quoted fields, an empty column, a target with missing values) gets
its documented behaviour or a ``ValueError`` naming the column and what to do, through Python and the CLI.
"""

from __future__ import annotations

import json
import math
import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpconvex import PrivateLogisticRegression, PublicSchemaTransformer
from dpconvex.cli.main import main
from dpconvex.data.checks import input_leaks
from dpconvex.datasets import ADULT_SCHEMA, TabularSchema, load_adult, load_adult_raw, preprocess, read_csv
from dpconvex.datasets.tabular import DATA_DEPENDENT_SCHEMA_REASON
from dpconvex.exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning
from dpconvex.privacy.certificate import NO_GUARANTEE

#: Features only; colour has a missing/other slot, age a fill (and so an indicator), income neither.
SCHEMA = TabularSchema(
    target=None,
    positive_label=None,
    categorical={"colour": ("red", "NA", "None")},
    numerical={"age": (0.0, 100.0), "income": (0.0, 50.0)},
    other_slot=True,
    numeric_fill={"age": 0.0},
)
NAMES = ["age", "age=<missing>", "income", "colour=red", "colour=NA", "colour=None", "colour=<missing/other>"]


def _frame(rows: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "colour": rng.choice(["red", "NA", "None"], rows),
        "age": rng.integers(18, 90, rows).astype(float),
        "income": rng.uniform(0, 50, rows).round(2),
    })


def _labels(frame: pd.DataFrame) -> np.ndarray:
    return np.where((frame["age"] > 50) | (frame["colour"] == "red"), 1, -1)


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_text(text, encoding=encoding)
    return path


def _schema_file(folder: Path, **spec) -> Path:
    declared = {"target": "label", "positive_label": "yes", "categorical": {"colour": ["red", "NA", "None", "null"]},
                "numerical": {"age": [0, 100]}, **spec}
    return _write(folder / "schema.json", json.dumps(declared))


def _cli_error(capsys, argv: list[str]) -> str:
    assert main(["train", "--seed", "0", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("dpconvex: error: ") and "Traceback" not in err
    return err


# ----------------------------------------------------------------------------- the feature map
def test_adult_through_the_transformer_is_load_adult_bit_for_bit() -> None:
    transformer = PublicSchemaTransformer(ADULT_SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X = transformer.fit_transform(load_adult_raw())
    expected, _, names = load_adult(return_feature_names=True)
    assert X.shape == (48_842, 108)
    np.testing.assert_array_equal(X, expected)
    assert transformer.get_feature_names_out().tolist() == names


def test_known_answer_with_slot_fill_and_indicator() -> None:
    frame = pd.DataFrame({"colour": ["NA", "blue", None], "age": [50.0, np.nan, 100.0], "income": [25, 0, 50]})
    with pytest.warns(PrivacyLeakWarning, match=r"1 categorical values.*<missing/other>.*'colour': 1"):
        X = PublicSchemaTransformer(SCHEMA).fit_transform(frame)
    raw = np.array([[0.5, 0, 0.5, 0, 1, 0, 0],   # "NA" is a category, not missing
                    [0.0, 1, 0.0, 0, 0, 0, 1],   # age missing: fill 0 + indicator; "blue" undeclared: slot
                    [1.0, 0, 1.0, 0, 0, 0, 1]])  # None: missing, slot (no warning for missing cells)
    np.testing.assert_allclose(X, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=0, atol=1e-15)


def test_feature_names_are_the_output_columns_in_order() -> None:
    transformer = PublicSchemaTransformer(SCHEMA).fit(_frame())
    assert transformer.get_feature_names_out().tolist() == NAMES
    out = clone(transformer).set_output(transform="pandas").fit_transform(_frame())
    assert list(out.columns) == NAMES
    np.testing.assert_array_equal(out.to_numpy(), transformer.transform(_frame()))
    with pytest.raises(ValueError, match=r"input_features lacks.*'colour'"):
        transformer.get_feature_names_out(["age", "income"])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["red", "NA", "None", "unseen", None]),
                  st.one_of(st.none(), st.floats(-1e6, 1e6)), st.floats(-1e6, 1e6)),
        min_size=1, max_size=12),
    row_norm=st.floats(0.01, 100.0),
)
def test_rows_have_the_declared_norm(rows, row_norm) -> None:
    frame = pd.DataFrame(rows, columns=["colour", "age", "income"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # clipping and unseen values are counted
        X = PublicSchemaTransformer(SCHEMA, row_norm=row_norm).fit_transform(frame)
    norms = np.linalg.norm(X, axis=1)
    assert np.all(norms <= row_norm * (1 + 1e-12))
    assert np.all((np.abs(norms - row_norm) <= 1e-12 * row_norm) | (norms == 0))
    assert X.shape == (len(rows), len(NAMES))


def test_fit_learns_nothing_from_the_values() -> None:
    one = PublicSchemaTransformer(SCHEMA).fit(_frame(seed=1))
    other = _frame(seed=2)
    other.loc[0, "colour"] = "never declared"  # fit checks columns only
    two = PublicSchemaTransformer(SCHEMA).fit(other)
    assert pickle.dumps(one) == pickle.dumps(two)
    assert one.feature_names_in_.tolist() == ["colour", "age", "income"] and one.n_features_in_ == 3


# ----------------------------------------------------------------------------- scikit-learn conventions
def test_pipeline_clone_pickle_and_cross_validation() -> None:
    frame = _frame(rows=60)
    y = _labels(frame)
    pipeline = make_pipeline(PublicSchemaTransformer(SCHEMA),
                             PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataDependentPreprocessingWarning)
        scores = cross_val_score(pipeline, frame, y, cv=3)
        fitted = clone(pipeline).fit(frame, y)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(frame), fitted.predict(frame))
    assert math.isfinite(fitted[-1].privacy_report_.epsilon)
    assert fitted[0].certify(fitted[-1].privacy_report_) is fitted[-1].privacy_report_


def test_invalid_parameters_and_inputs_name_what_to_do() -> None:
    for params, needle in [({"row_norm": 0.0}, "'row_norm'"), ({"row_norm": math.inf}, "'row_norm'"),
                           ({"allow_data_dependent": "yes"}, "'allow_data_dependent'")]:
        with pytest.raises(ValueError, match=needle):
            PublicSchemaTransformer(SCHEMA, **params).fit(_frame())
    with pytest.raises(ValueError, match="'schema'"):
        PublicSchemaTransformer({"colour": ["red"]}).fit(_frame())
    with pytest.raises(ValueError, match=r"pandas DataFrame.*pandas.DataFrame\(X, columns"):
        PublicSchemaTransformer(SCHEMA).fit(_frame().to_numpy())
    with pytest.raises(ValueError, match=r"missing columns: \['income'\]"):
        PublicSchemaTransformer(SCHEMA).fit(_frame()).transform(_frame().drop(columns="income"))


#: Checks that feed NumPy arrays (or sparse matrices) to a transformer that reads columns by name.
_NEEDS_A_DATAFRAME = ("feeds a NumPy array or sparse matrix; the transformer reads named columns of a DataFrame "
                      "(tested on frames here)")
_NUMPY_CHECKS = [
    "check_fit_score_takes_y", "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_complex_data", "check_dtype_object",
    "check_estimators_empty_data_messages", "check_pipeline_consistency", "check_estimator_sparse_tag",
    "check_estimator_sparse_array", "check_estimator_sparse_matrix", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_transformer_data_not_an_array", "check_transformer_general",
    "check_transformer_preserve_dtypes", "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_fit2d_1sample", "check_fit2d_1feature", "check_dict_unchanged", "check_fit_idempotent",
    "check_fit_check_is_fitted", "check_n_features_in", "check_fit2d_predict1d",
]


@parametrize_with_checks([PublicSchemaTransformer(SCHEMA)],
                         expected_failed_checks=lambda _: dict.fromkeys(_NUMPY_CHECKS, _NEEDS_A_DATAFRAME),
                         xfail_strict=True)  # an expected failure that starts passing must be removed from the list
def test_scikit_learn_checks(estimator, check) -> None:
    check(estimator)


def test_the_numpy_checks_hold_on_frames() -> None:
    """What the NumPy-only checks above test, on DataFrames: order and subset invariance, idempotent fit."""
    frame = _frame()
    transformer = PublicSchemaTransformer(SCHEMA)
    X = transformer.fit_transform(frame)
    order = np.random.default_rng(0).permutation(len(frame))
    np.testing.assert_array_equal(transformer.transform(frame.iloc[order]), X[order])
    np.testing.assert_array_equal(np.vstack([transformer.transform(frame.iloc[[i]]) for i in range(5)]), X[:5])
    np.testing.assert_array_equal(transformer.fit(frame).transform(frame), X)
    assert transformer.fit(frame) is transformer and transformer.get_params()["schema"] is SCHEMA


# ----------------------------------------------------------------------------- data-dependent schemas
def test_from_dataframe_reads_the_data_and_voids_the_certificate() -> None:
    frame = _frame().assign(label=lambda f: _labels(f))
    frame.loc[0, "income"] = np.nan
    with pytest.warns(DataDependentPreprocessingWarning, match="epsilon = inf"):
        transformer = PublicSchemaTransformer.from_dataframe(frame, target="label")
    schema = transformer.schema
    assert schema.data_dependent and schema.target is None and schema.other_slot
    assert schema.categorical == {"colour": ("NA", "None", "red")}
    assert schema.numerical["income"] == (frame["income"].min(), frame["income"].max())
    assert schema.numeric_fill == {column: lower for column, (lower, _) in schema.numerical.items()}
    pipeline = make_pipeline(transformer, PrivateLogisticRegression(classes=[-1, 1], random_state=0))
    with pytest.raises(ValueError, match="allow_data_dependent=True.*PublicSchemaTransformer.certify"):
        pipeline.fit(frame, frame["label"])
    with pytest.warns(DataDependentPreprocessingWarning, match="epsilon = inf"), \
            pytest.warns(PrivacyLeakWarning, match="no differential-privacy guarantee"):
        pipeline.set_params(publicschematransformer__allow_data_dependent=True).fit(frame, frame["label"])
    # The estimator voids its own certificate: the transformer's output carries the reason.
    own = pipeline[-1].privacy_report_
    assert own.epsilon == math.inf
    assert any(note.startswith(NO_GUARANTEE) and '"data_dependent": true' in note for note in own.notes)
    report = pipeline[0].certify(own)
    assert report.epsilon == math.inf
    assert any(note.startswith(NO_GUARANTEE) and '"data_dependent": true' in note for note in report.notes)
    # Slices keep the mark (cross-validation inside a fitted pipeline); NumPy conversion drops it.
    with pytest.warns(DataDependentPreprocessingWarning):
        encoded = pipeline[0].transform(frame)
    assert input_leaks(encoded[:5]) == input_leaks(encoded.copy()) == (DATA_DEPENDENT_SCHEMA_REASON,)
    assert input_leaks(np.asarray(encoded)) == ()
    with pytest.raises(ValueError, match="set_output.*data-dependent"):
        pipeline[0].set_output(transform="pandas")
    # A declared schema's output is a plain array and the certificate stays finite.
    declared = PublicSchemaTransformer(SCHEMA).fit(_frame())
    assert type(declared.transform(_frame())) is np.ndarray
    with pytest.raises(ValueError, match=r"missing columns: \['nope'\]"):
        PublicSchemaTransformer.from_dataframe(frame, target="nope")


def test_infer_leaves_out_an_empty_column_with_a_warning() -> None:
    frame = _frame().assign(blank="", gone=np.nan)
    with pytest.warns(DataDependentPreprocessingWarning, match=r"Left out \['blank', 'gone'\]"):
        schema = TabularSchema.infer(frame)
    assert schema.columns == ["age", "income", "colour"]


# ----------------------------------------------------------------------------- schema options
def test_schema_options_round_trip_through_json(tmp_path) -> None:
    schema = TabularSchema("label", "yes", {"c": ("a", "?")}, {"n": (0, 5)}, missing_values=("", "-"),
                           other_slot=True, numeric_fill={"n": 2})
    schema.to_json(tmp_path / "s.json")
    assert TabularSchema.from_json(tmp_path / "s.json") == schema
    stored = json.loads((tmp_path / "s.json").read_text())
    assert stored["missing_values"] == ["", "-"] and stored["other_slot"] is True
    assert stored["numeric_fill"] == {"n": 2.0}
    defaults = TabularSchema.from_dict({"target": "t", "positive_label": "y"})
    assert (defaults.missing_values, defaults.other_slot, defaults.numeric_fill) == (("",), False, {})


@pytest.mark.parametrize("spec, needle", [
    ({"numeric_fill": {"n": 9}}, r"numeric_fill.*'n'.*\(0.0, 5.0\)"),
    ({"numeric_fill": {"c": 1}}, r"numeric_fill.*'c'.*not a numerical column"),
    ({"missing_values": ("", "a")}, r"\['a'\] of column 'c' are also missing_values"),
    ({"missing_values": "NA"}, r"missing_values must be a list of strings, e.g. \['NA'\]"),
    ({"other_slot": "yes"}, "other_slot must be True or False"),
    ({"categorical": {"c": ("a", "<missing/other>")}, "other_slot": True}, r"same name: \['c=<missing/other>'\]"),
    ({"positive_label": None}, "target 't' needs exactly one of positive_label .* and classes"),
    ({"classes": ("a", "b")}, "target 't' needs exactly one of positive_label .* and classes"),
    ({"target": None}, "features-only schema .* declares no labels"),
])
def test_schema_rejects_bad_options(spec, needle) -> None:
    base = {"target": "t", "positive_label": "y", "categorical": {"c": ("a", "b")}, "numerical": {"n": (0, 5)}}
    with pytest.raises(ValueError, match=needle):
        TabularSchema(**{**base, **spec})


def test_preprocess_needs_a_target() -> None:
    with pytest.raises(ValueError, match="no target.*PublicSchemaTransformer"):
        preprocess(_frame(), SCHEMA)


# ----------------------------------------------------------------------------- bad input: missing values
def test_missing_values_in_every_column_type_without_declarations(tmp_path) -> None:
    strict = TabularSchema("label", "yes", {"colour": ("red", "NA")}, {"age": (0, 100)})
    frame = pd.DataFrame({"colour": ["red", "", "NA"], "age": [1.0, 2.0, 3.0], "label": ["yes", "no", "no"]})
    with pytest.raises(ValueError, match=r"'colour' has 1 missing values; set other_slot=True"):
        preprocess(frame, strict)
    with pytest.raises(ValueError, match=r"'age' has 1 missing values.*numeric_fill=\{'age': value\}"):
        preprocess(frame.assign(colour="red", age=[1.0, None, 3.0]), strict)
    with pytest.raises(ValueError, match=r"target column 'label' has 2 missing values \(rows with index \[0, 2\]\).*"
                                         "remove those rows"):
        preprocess(frame.assign(colour="red", label=["", "no", None]), strict)


def test_declared_missing_markers() -> None:
    schema = TabularSchema("label", "yes", {"colour": ("red",)}, {"age": (0, 100)}, missing_values=("", "NA", "-9"),
                           other_slot=True, numeric_fill={"age": 0})
    frame = pd.DataFrame({"colour": ["NA", "red"], "age": ["-9", "50"], "label": ["yes", "no"]})
    X, _ = preprocess(frame, schema)
    np.testing.assert_allclose(X, [[0, 1 / math.sqrt(2), 0, 1 / math.sqrt(2)], [0.5, 0, 1, 0] / np.sqrt(1.25)])


def test_unseen_category_at_predict_time_both_modes() -> None:
    frame = _frame()
    new = frame.head(3).assign(colour=["red", "purple", "purple"])
    with pytest.warns(PrivacyLeakWarning, match=r"2 categorical values.*'colour': 2"):
        X = PublicSchemaTransformer(SCHEMA).fit(frame).transform(new)
    np.testing.assert_array_equal(X[1:, -1] > 0, [True, True])
    strict = TabularSchema(None, None, {"colour": ("red", "NA", "None")}, {})
    transformer = PublicSchemaTransformer(strict).fit(frame)
    with pytest.raises(ValueError, match=r"'colour' has values not declared.*\['purple'\].*other_slot=True"):
        transformer.transform(new)


def test_unseen_category_warning_names_up_to_five_values() -> None:
    frame = _frame()
    new = frame.head(8).assign(colour=["red", "g", "f", "e", "d", "c", "b", "b"])
    with pytest.warns(PrivacyLeakWarning, match=r"7 categorical values.*'colour': 7\}; values, up to 5 per column: "
                                                r"\{'colour': \['b', 'c', 'd', 'e', 'f'\]\}"):
        PublicSchemaTransformer(SCHEMA).fit(frame).transform(new)


def test_integer_category_stored_as_float_because_of_a_nan() -> None:
    # pandas stores [1, NaN, 2] as float64: 1.0 must read as the declared "1", not as an unseen value.
    schema = TabularSchema(None, None, {"code": ("1", "2")}, {}, other_slot=True)
    frame = pd.DataFrame({"code": [1, None, 2, 3]})
    assert frame["code"].dtype == np.float64
    with pytest.warns(PrivacyLeakWarning, match=r"'code': 1\}; values.*\['3'\]") as caught:
        X = PublicSchemaTransformer(schema).fit(frame).transform(frame)
    assert len(caught) == 1
    np.testing.assert_array_equal(X, [[1, 0, 0], [0, 0, 1], [0, 1, 0], [0, 0, 1]])
    # A declared float text still matches as it is; a non-integral float is not rounded.
    declared = TabularSchema(None, None, {"code": ("1.0", "2.5")}, {})
    X = PublicSchemaTransformer(declared).fit_transform(pd.DataFrame({"code": [1.0, 2.5]}))
    np.testing.assert_array_equal(X, [[1, 0], [0, 1]])


def test_non_numeric_value_in_a_numerical_column() -> None:
    with pytest.raises(ValueError, match=r"numerical column 'age' has 1 non-numeric values \(e.g. \['NA'\]\).*"
                                         "missing_values"):
        PublicSchemaTransformer(SCHEMA).fit_transform(_frame(3).astype({"age": object}).assign(age=["1", "NA", "3"]))


# ----------------------------------------------------------------------------- bad input: CSV files
_SURVEY = ('colour;age;comment;label\n'
           'NA;30;"late; said ""no""";yes\n'
           'None;;"a, b";no\n'
           'null;45;;yes\n'
           'red;61;x;no\n')


def test_csv_with_bom_semicolons_quotes_and_na_categories(tmp_path) -> None:
    path = _write(tmp_path / "survey.csv", "\ufeff" + _SURVEY)
    frame, schema = read_csv(path, TabularSchema.from_json(_schema_file(tmp_path, numeric_fill={"age": 0})))
    assert list(frame.columns) == ["colour", "age", "comment", "label"]  # no BOM in the first name
    assert frame["colour"].tolist() == ["NA", "None", "null", "red"]  # never turned into missing
    assert frame["comment"].tolist() == ['late; said "no"', "a, b", "", "x"]
    np.testing.assert_array_equal(frame["age"], [30, np.nan, 45, 61])
    X, y = preprocess(frame, schema)
    assert X.shape == (4, 6) and y.tolist() == [1, -1, 1, -1]
    assert X[1, 1] > 0 and X[1, 0] == 0  # age missing: the fill (0) and the indicator


def test_csv_without_schema_keeps_na_as_a_category(tmp_path) -> None:
    path = _write(tmp_path / "survey.csv", _SURVEY.replace(";", ",").replace('"a, b"', "ab"))
    with pytest.warns(DataDependentPreprocessingWarning):
        frame, schema = read_csv(path, target="label", positive_label="yes")
    assert schema.categorical["colour"] == ("NA", "None", "null", "red")
    assert schema.numerical == {"age": (30.0, 61.0)} and frame["age"].isna().sum() == 1
    X, _ = preprocess(frame, schema, allow_data_dependent=True)
    assert X.shape[0] == 4


def test_csv_empty_column(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", "colour,age,notes,label\nred,30,,yes\nNA,40,,no\n")
    declared = TabularSchema("label", "yes", {"colour": ("red", "NA"), "notes": ("x",)}, {"age": (0, 100)})
    frame, _ = read_csv(path, declared)
    with pytest.raises(ValueError, match=r"'notes' has 2 missing values; set other_slot=True"):
        preprocess(frame, declared)
    slotted = TabularSchema("label", "yes", declared.categorical, declared.numerical, other_slot=True)
    X, _ = preprocess(frame, slotted)
    assert np.all(X[:, -1] > 0)  # notes=<missing/other>
    with pytest.warns(DataDependentPreprocessingWarning, match=r"Left out \['notes'\]"):
        _, inferred = read_csv(path, target="label")
    assert "notes" not in inferred.columns


def test_csv_that_is_not_utf8(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", "colour,label\ncafé,yes\n", encoding="latin-1")
    with pytest.raises(ValueError, match="not UTF-8 text.*save it as UTF-8"):
        read_csv(path, target="label")


# ----------------------------------------------------------------------------- the command line
def test_cli_trains_on_a_survey_extract_without_cleaning(tmp_path, capsys) -> None:
    """The issue's report: `NA` categories and empty numeric cells, with a schema declaring the fill."""
    rng = np.random.default_rng(0)
    colour = rng.choice(["NA", "None", "null", "red"], 200)
    age = rng.integers(18, 90, 200).astype(str)
    age[rng.random(200) < 0.2] = ""
    label = np.where((colour == "red") | (rng.random(200) < 0.3), "yes", "no")
    rows = "\n".join(";".join(row) for row in zip(colour, age, label))
    data = _write(tmp_path / "survey.csv", "\ufeffcolour;age;label\n" + rows + "\n")
    schema = _schema_file(tmp_path, numeric_fill={"age": 18}, other_slot=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataDependentPreprocessingWarning)
        assert main(["train", "--csv", str(data), "--schema", str(schema), "--epsilon", "0.1", "--json",
                     "--seed", "0"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n_train"] + payload["n_test"] == 200
    assert payload["epsilon"] <= 0.1
    assert not any(note.startswith(NO_GUARANTEE) for note in payload["certificate"]["notes"])


@pytest.mark.parametrize("rows, spec, needles", [
    ("red,,yes\n", {}, ["'age'", "numeric_fill"]),
    ("purple,3,yes\n", {}, ["'colour'", "purple", "other_slot"]),
    (",3,yes\n", {}, ["'colour'", "missing", "other_slot"]),
    ("red,3,\n", {}, ["target column 'label'", "remove those rows"]),
    ("red,old,yes\n", {}, ["'age'", "non-numeric", "old"]),
    ("red,3,yes\n", {"numeric_fill": {"age": 500}}, ["numeric_fill", "'age'"]),
])
def test_cli_bad_input_exits_2_naming_the_column(tmp_path, capsys, rows, spec, needles) -> None:
    data = _write(tmp_path / "data.csv", "colour,age,label\nred,30,yes\nNA,40,no\n" + rows)
    err = _cli_error(capsys, ["--csv", str(data), "--schema", str(_schema_file(tmp_path, **spec))])
    for needle in needles:
        assert needle in err


def test_cli_unreadable_files_exit_2(tmp_path, capsys) -> None:
    assert "No such file" in _cli_error(capsys, ["--csv", str(tmp_path / "absent.csv"), "--target", "label"])
    data = _write(tmp_path / "data.csv", "colour,label\nred,yes\n")
    broken = _write(tmp_path / "broken.json", '{"target": "label",')
    assert "is not valid JSON" in _cli_error(capsys, ["--csv", str(data), "--schema", str(broken)])
