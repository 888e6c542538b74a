"""Tests for dpconvex.datasets: the shipped Adult data and schema-driven preprocessing."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpconvex.datasets import (
    ADULT_SCHEMA,
    TabularSchema,
    feature_names,
    load_adult,
    load_adult_raw,
    preprocess,
    read_csv,
)
from dpconvex.exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning

MIXED = TabularSchema(
    target="label",
    positive_label="yes",
    categorical={"color": ("red", "green", "blue"), "size": ("S", "L")},
    numerical={"x": (0.0, 10.0)},
)


def _mixed_frame(**overrides: list) -> pd.DataFrame:
    columns = {
        "x": [5.0, 0.0, 10.0],
        "color": ["green", "red", "blue"],
        "size": ["L", "S", "S"],
        "label": ["yes", "no", "maybe"],
    }
    columns.update(overrides)
    return pd.DataFrame(columns)


# ---------------------------------------------------------------------------------- Adult data


@pytest.mark.parametrize(("subset", "rows"), [("all", 48_842), ("train", 32_561), ("test", 16_281)])
def test_adult_row_counts(subset: str, rows: int) -> None:
    raw = load_adult_raw(subset)
    X, y = load_adult(subset)
    assert raw.shape == (rows, 15)
    assert X.shape == (rows, 108) and y.shape == (rows,)
    assert X.dtype == np.float64 and y.dtype == np.int64


def test_adult_rows_unit_norm_and_labels() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the declared schema must need no clipping
        X, y = load_adult()
    norms = np.linalg.norm(X, axis=1)
    assert np.all((np.abs(norms - 1.0) <= 1e-12) | (norms == 0.0))
    assert set(np.unique(y)) == {-1, 1}


def test_adult_positive_rate_matches_raw_frame() -> None:
    _, y = load_adult()
    raw = load_adult_raw()
    assert set(raw["income"]) == {">50K", "<=50K"}
    positives = int((raw["income"] == ">50K").sum())
    assert positives == 11_687  # adult.names: P(>50K) = 23.93 % of 48,842
    assert int(np.sum(y == 1)) == positives
    assert np.mean(y == 1) == pytest.approx(0.2393, abs=5e-5)


def test_adult_first_row_encoding() -> None:
    X, _, names = load_adult("train", return_feature_names=True)
    row = dict(zip(names, X[0]))
    # adult.data line 1: 39, State-gov, ..., 13, ..., Male, 2174, 0, 40, United-States, <=50K
    one_hot = row["sex=Male"]
    assert one_hot > 0 and row["sex=Female"] == 0.0
    assert row["workclass=State-gov"] == pytest.approx(one_hot)
    assert row["age"] / one_hot == pytest.approx((39 - 17) / (90 - 17))
    assert row["capital-gain"] / one_hot == pytest.approx(2174 / 99999)
    assert row["capital-loss"] == 0.0


def test_adult_schema_bounds_and_categories_match_data() -> None:
    raw = load_adult_raw()
    assert not ADULT_SCHEMA.data_dependent
    for column, (lower, upper) in ADULT_SCHEMA.numerical.items():
        assert (raw[column].min(), raw[column].max()) == (lower, upper)
    for column, cats in ADULT_SCHEMA.categorical.items():
        assert set(raw[column]) == set(cats)
    assert (raw["workclass"] == "?").sum() > 0


def test_adult_returns_copies() -> None:
    X, y = load_adult("test")
    X[:] = 7.0
    y[:] = 0
    raw = load_adult_raw("test")
    raw["income"] = "gone"
    X2, y2 = load_adult("test")
    assert np.all(X2 <= 1.0) and set(np.unique(y2)) == {-1, 1}
    assert set(load_adult_raw("test")["income"]) == {">50K", "<=50K"}


def test_adult_feature_names() -> None:
    X, _, names = load_adult("test", return_feature_names=True)
    assert len(names) == X.shape[1] == len(set(names))
    assert names[:2] == ["age", "fnlwgt"] and "native-country=?" in names


@pytest.mark.parametrize("bad", ["Train", "validation", ""])
def test_adult_invalid_subset(bad: str) -> None:
    with pytest.raises(ValueError, match="subset"):
        load_adult(bad)
    with pytest.raises(ValueError, match="train"):
        load_adult_raw(bad)


# ------------------------------------------------------------------------------- preprocessing


def test_preprocess_one_hot_known_answer() -> None:
    X, y = preprocess(_mixed_frame(), MIXED)
    names = ["x", "color=red", "color=green", "color=blue", "size=S", "size=L"]
    assert feature_names(MIXED) == names
    # raw rows: [.5, 0,1,0, 0,1] (norm 1.5); [0, 1,0,0, 1,0] (√2); [1, 0,0,1, 1,0] (√3)
    expected = np.array(
        [
            [1 / 3, 0, 2 / 3, 0, 0, 2 / 3],
            [0, 1 / math.sqrt(2), 0, 0, 1 / math.sqrt(2), 0],
            [1 / math.sqrt(3), 0, 0, 1 / math.sqrt(3), 1 / math.sqrt(3), 0],
        ]
    )
    np.testing.assert_allclose(X, expected, rtol=0, atol=1e-15)
    # before normalisation every one-hot block sums to 1, so after it both blocks sum to 1/norm
    color, size = X[:, 1:4].sum(axis=1), X[:, 4:6].sum(axis=1)
    np.testing.assert_allclose(color, size, rtol=0, atol=1e-15)
    np.testing.assert_allclose(color, [2 / 3, 1 / math.sqrt(2), 1 / math.sqrt(3)], atol=1e-15)
    # one-vs-rest: "maybe" (neither class seen as negative) also becomes -1
    np.testing.assert_array_equal(y, [1, -1, -1])
    assert y.dtype == np.int64


def test_preprocess_numerical_scaling_known_answer() -> None:
    schema = TabularSchema("t", "1", {}, {"a": (-2.0, 2.0), "b": (100.0, 200.0)})
    frame = pd.DataFrame({"a": [1.0, -2.0, 2.0], "b": [125, 100, 200], "t": [1, 0, 1]})
    X, y = preprocess(frame, schema)
    # scaled: [0.75, 0.25] -> /sqrt(0.625) = [3, 1]/sqrt(10); [0, 0] stays zero; [1, 1]/sqrt(2)
    expected = np.array([[3, 1] / np.sqrt(10), [0.0, 0.0], [1, 1] / np.sqrt(2)])
    np.testing.assert_allclose(X, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(y, [1, -1, 1])


def test_preprocess_clips_out_of_bounds_with_warning() -> None:
    schema = TabularSchema("t", "1", {}, {"a": (-2.0, 2.0), "b": (100.0, 200.0)})
    frame = pd.DataFrame({"a": [4.0, 0.0], "b": [50.0, 150.0], "t": ["1", "0"]})
    with pytest.warns(PrivacyLeakWarning, match="2 numerical values"):
        X, _ = preprocess(frame, schema)
    np.testing.assert_allclose(X, [[1.0, 0.0], [1 / math.sqrt(2), 1 / math.sqrt(2)]], atol=1e-15)


def test_preprocess_in_bounds_emits_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        preprocess(_mixed_frame(), MIXED)


def test_preprocess_unknown_category_raises() -> None:
    with pytest.raises(ValueError, match=r"'color'.*purple"):
        preprocess(_mixed_frame(color=["green", "purple", "red"]), MIXED)


def test_preprocess_missing_columns_raise() -> None:
    with pytest.raises(ValueError, match=r"\['size'\]"):
        preprocess(_mixed_frame().drop(columns="size"), MIXED)
    with pytest.raises(ValueError, match="label"):
        preprocess(_mixed_frame().drop(columns="label"), MIXED)


def test_preprocess_missing_values_raise() -> None:
    with pytest.raises(ValueError, match="'x'.*NaN"):
        preprocess(_mixed_frame(x=[1.0, np.nan, 2.0]), MIXED)
    with pytest.raises(ValueError, match="'size'.*missing"):
        preprocess(_mixed_frame(size=["L", None, "S"]), MIXED)
    with pytest.raises(ValueError, match="'x'.*non-numeric"):
        preprocess(_mixed_frame(x=["1", "two", "3"]), MIXED)


# -------------------------------------------------------------------------------------- schema


def test_schema_json_round_trip(tmp_path) -> None:
    path = tmp_path / "schema.json"
    ADULT_SCHEMA.to_json(path)
    assert TabularSchema.from_json(path) == ADULT_SCHEMA
    stored = json.loads(path.read_text())
    assert stored["numerical"]["age"] == [17.0, 90.0]
    assert stored["categorical"]["sex"] == ["Female", "Male"]
    assert stored["target"] == "income" and stored["positive_label"] == ">50K"


def test_schema_from_documented_json(tmp_path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{"target": "t", "positive_label": "y", "categorical": {"c": ["a", "b"]},'
                    ' "numerical": {"n": [0, 5]}}')  # fmt: skip
    schema = TabularSchema.from_json(path)
    assert schema == TabularSchema("t", "y", {"c": ("a", "b")}, {"n": (0.0, 5.0)})
    assert not schema.data_dependent


@pytest.mark.parametrize(
    "kwargs",
    [
        {"categorical": {"c": ("a", "a")}},
        {"categorical": {"c": ()}},
        {"numerical": {"n": (3.0, 1.0)}},
        {"numerical": {"n": (0.0, math.inf)}},
        {"categorical": {"t": ("a",)}},
    ],
)
def test_schema_rejects_invalid_declarations(kwargs: dict) -> None:
    spec = {"categorical": {}, "numerical": {}, **kwargs}
    with pytest.raises(ValueError):
        TabularSchema("t", "y", **spec)


def test_infer_warns_and_reads_data() -> None:
    frame = pd.DataFrame(
        {"n": [3, -1, 7], "c": ["b", "a", "b"], "t": ["<=50K", ">50K", "<=50K"]}
    )
    with pytest.warns(DataDependentPreprocessingWarning, match="read the positive label.*epsilon = inf"):
        schema = TabularSchema.infer(frame, "t")
    assert schema.data_dependent
    assert schema.positive_label == ">50K"
    assert schema.categorical == {"c": ("a", "b")}
    assert schema.numerical == {"n": (-1.0, 7.0)}
    with pytest.raises(ValueError, match="allow_data_dependent=True"):
        preprocess(frame, schema)  # the Python route: no silent finite certificate downstream
    _, y = preprocess(frame, schema, allow_data_dependent=True)
    np.testing.assert_array_equal(y, [-1, 1, -1])


def test_infer_reads_a_multi_class_label_set_unless_a_positive_label_is_given() -> None:
    frame = pd.DataFrame({"n": [1, 2, 3, 4], "t": ["b", "c ", "a", "b"]})
    with pytest.warns(DataDependentPreprocessingWarning, match=r"read the label set \(3 classes\)"):
        schema = TabularSchema.infer(frame, "t")
    assert schema.classes == ("a", "b", "c") and schema.positive_label is None  # stripped, sorted as strings
    assert schema.label_set == schema.classes
    _, y = preprocess(frame, schema, allow_data_dependent=True)
    assert y.tolist() == ["b", "c", "a", "b"]
    with pytest.warns(DataDependentPreprocessingWarning) as caught:
        binary = TabularSchema.infer(frame, "t", positive_label="a")
    assert (binary.positive_label, binary.classes, binary.label_set) == ("a", None, (-1, 1))
    assert "positive label" not in str(caught[0].message)  # given, not read from the data
    assert "label set" not in str(caught[0].message)


def test_read_csv_with_and_without_schema(tmp_path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("zip, income, label\n01234, 10, yes\n99999, 30, no\n")
    schema = TabularSchema("label", "yes", {"zip": ("01234", "99999")}, {"income": (0, 40)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame, same = read_csv(path, schema)
    assert same is schema and list(frame["zip"]) == ["01234", "99999"]
    X, y = preprocess(frame, schema)
    assert X.shape == (2, 3) and list(y) == [1, -1]
    with pytest.raises(ValueError, match="positive_label"):
        read_csv(path, schema, positive_label="no")
    with pytest.raises(ValueError, match="target"):
        read_csv(path)
    with pytest.warns(DataDependentPreprocessingWarning):
        _, inferred = read_csv(path, target="label", positive_label="yes")
    assert inferred.data_dependent and inferred.numerical["income"] == (10.0, 30.0)


def test_read_csv_without_schema_names_numeric_looking_categorical_columns(tmp_path) -> None:
    # One 'NA' in a numeric column makes it categorical: never silently (the column and token are named).
    path = tmp_path / "na.csv"
    path.write_text("age,city,label\n30,a,yes\n40,b,no\nNA,c,yes\n50,d,no\n")
    with pytest.warns(DataDependentPreprocessingWarning,
                      match=r"'age' \(1 of 4 present cells are not numbers: \['NA'\].*missing_values") as caught:
        _, inferred = read_csv(path, target="label")
    assert inferred.categorical["age"] == ("30", "40", "50", "NA")
    assert not any("'city'" in str(w.message) for w in caught)  # a text column is not flagged
    # A ';'-separated file with decimal commas: every number would be a category; the fix is named.
    path = tmp_path / "comma.csv"
    path.write_text("x;w;label\n1,5;2;yes\n2,25;3;no\n3,0;4;yes\n")
    with pytest.warns(DataDependentPreprocessingWarning, match=r"'x' \(non-numeric values \['1,5', '2,25', '3,0'\], "
                      r"numbers with a decimal comma: write them with a decimal point"):
        _, inferred = read_csv(path, target="label")
    assert "x" in inferred.categorical and inferred.numerical["w"] == (2.0, 4.0)
    # At most 5 tokens are listed.
    path = tmp_path / "many.csv"
    path.write_text("v,label\n" + "".join(f"{t},yes\n" for t in ["1", "a", "b", "c", "d", "e", "f"]))
    with pytest.warns(DataDependentPreprocessingWarning, match=r"\['a', 'b', 'c', 'd', 'e'\] \.\.\.;"):
        read_csv(path, target="label", positive_label="yes")


def test_schema_from_dict_rejects_bad_keys() -> None:
    with pytest.raises(ValueError, match="exactly one of positive_label.*and classes"):
        TabularSchema.from_dict({"target": "t"})
    with pytest.raises(ValueError, match="numeric"):
        TabularSchema.from_dict({"target": "t", "positive_label": "y", "numeric": {}})
    with pytest.raises(ValueError, match="needs the key target"):
        TabularSchema.from_dict({"positive_label": "y"})


def test_held_out_split_does_not_depend_on_the_labels(tmp_path) -> None:
    """Relabelling one record leaves the split alone, so neighbouring files give neighbouring training sets.

    A split stratified by label fails this: the class counts change, and with them which rows train.
    """
    from dpconvex.datasets.holdout import load_train_test

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 10, 60).round(3), "z": rng.uniform(0, 10, 60).round(3),
                          "label": rng.choice(["yes", "no"], 60)})
    schema = tmp_path / "schema.json"
    declared = {"target": "label", "positive_label": "yes", "numerical": {"x": [0, 10], "z": [0, 10]}}
    schema.write_text(json.dumps(declared))
    splits = []
    for flip in (False, True):
        if flip:
            frame.loc[0, "label"] = "no" if frame.loc[0, "label"] == "yes" else "yes"
        frame.to_csv(tmp_path / "data.csv", index=False)
        splits.append(load_train_test(csv=str(tmp_path / "data.csv"), schema=str(schema), seed=3))
    first, second = splits
    assert first.reasons == () and first.classes == (-1, 1)
    np.testing.assert_array_equal(first.X_train, second.X_train)
    np.testing.assert_array_equal(first.X_test, second.X_test)
