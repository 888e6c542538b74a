"""A regression target in the schema: ``"target_bounds": [lower, upper]``, from the JSON file to the split.

A labelled schema declares exactly one of ``positive_label``, ``classes`` and ``target_bounds``;
``preprocess`` parses a regression target as numbers and clips it into the declared bounds (a
``PrivacyLeakWarning`` names the column, the count and the bounds); ``TabularSchema.infer(...,
task="regression")`` reads the bounds from the data; inferring a *classifier* from a continuous
target (more than 20 distinct numbers) is refused; ``load_train_test(..., task="regression")`` gives
``classes == ()`` and the bounds, and refuses a schema, ``positive`` or the Adult data that do not
fit the task.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpconvex.datasets import TabularSchema, preprocess, read_csv
from dpconvex.datasets.holdout import load_train_test
from dpconvex.exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning

#: scikit-learn's diabetes target (disease progression one year after baseline) ranges over 25..346.
DIABETES = {"target": "progression", "target_bounds": [25, 346], "numerical": {"bmi": [15, 45]},
            "categorical": {"sex": ["F", "M"]}}


def _regression_schema(**changes) -> TabularSchema:
    return TabularSchema.from_dict({**DIABETES, **changes})


def _frame(progression: list) -> pd.DataFrame:
    n = len(progression)
    return pd.DataFrame({"bmi": np.linspace(20, 40, n), "sex": ["F", "M"] * (n // 2) + ["F"] * (n % 2),
                         "progression": progression})


def _csv(tmp_path, n: int = 60, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    bmi = rng.uniform(18, 42, n).round(1)
    frame = pd.DataFrame({"bmi": bmi, "sex": rng.choice(["F", "M"], n),
                          "progression": (8 * bmi - 60 + rng.normal(0, 15, n)).round(0)})
    path = tmp_path / "diabetes.csv"
    frame.to_csv(path, index=False)
    return str(path)


def _schema_file(tmp_path, spec: dict) -> str:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(spec))
    return str(path)


# ----------------------------------------------------------------------------- the declaration
def test_target_bounds_round_trip_through_json(tmp_path) -> None:
    schema = _regression_schema()
    assert schema.target_bounds == (25.0, 346.0) and schema.task == "regression" and schema.label_set is None
    schema.to_json(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text())["target_bounds"] == [25.0, 346.0]
    assert TabularSchema.from_json(tmp_path / "again.json") == schema
    assert TabularSchema.from_dict(schema.to_dict()) == schema


def test_task_names_the_declared_target() -> None:
    assert TabularSchema("y", positive_label="1").task == "binary"
    assert TabularSchema("y", classes=("a", "b", "c")).task == "multiclass"
    assert TabularSchema("y", target_bounds=(0, 1)).task == "regression"
    assert TabularSchema(None, numerical={"x": (0, 1)}).task is None
    binary = TabularSchema("y", positive_label="1").to_dict()
    assert binary["target_bounds"] is None and binary["classes"] is None


@pytest.mark.parametrize("labels", [
    {},
    {"positive_label": "a", "target_bounds": (0, 1)},
    {"classes": ("a", "b"), "target_bounds": (0, 1)},
    {"positive_label": "a", "classes": ("a", "b"), "target_bounds": (0, 1)},
])
def test_a_labelled_schema_declares_exactly_one_of_the_three(labels) -> None:
    with pytest.raises(ValueError, match="target 'y' needs exactly one of") as error:
        TabularSchema("y", **labels)
    for option in ("positive_label", "classes", "target_bounds"):
        assert option in str(error.value)


def test_a_features_only_schema_declares_no_target_bounds() -> None:
    with pytest.raises(ValueError, match=r"features-only schema .* target_bounds=\(0, 1\)"):
        TabularSchema(None, target_bounds=(0, 1))


@pytest.mark.parametrize("bounds", [(5, 5), (6, 5), (0, float("inf")), (float("nan"), 1), (1,), (1, 2, 3), "ab",
                                    5, ("low", "high")])
def test_invalid_target_bounds_are_refused_naming_target_bounds(bounds) -> None:
    with pytest.raises(ValueError, match=r"target_bounds of target 'y' must be \[lower, upper\], two finite numbers "
                                         r"with lower < upper"):
        TabularSchema("y", target_bounds=bounds)


@pytest.mark.parametrize("value", [[25], [25, "346"], "25-346", {"lower": 25}])
def test_a_schema_file_with_target_bounds_of_the_wrong_shape_names_the_key(value) -> None:
    with pytest.raises(ValueError, match=r"schema key 'target_bounds' must be \[lower, upper\] or null"):
        TabularSchema.from_dict({**DIABETES, "target_bounds": value})


# ----------------------------------------------------------------------------- preprocess
def test_preprocess_gives_float_targets_clipped_into_the_bounds_with_a_warning() -> None:
    frame = _frame(["10", "30", "400", " 100 ", "2.5e2", 26])
    with pytest.warns(PrivacyLeakWarning, match=r"2 target values .*target_bounds.*\(column 'progression': 2 "
                                                r"outside \[25, 346\]\)"):
        X, y = preprocess(frame, _regression_schema())
    assert y.dtype == np.float64 and y.tolist() == [25.0, 30.0, 346.0, 100.0, 250.0, 26.0]
    assert X.shape == (6, 3)


def test_targets_within_the_bounds_pass_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        _, y = preprocess(_frame([25, 346.0, 100]), _regression_schema())
    assert y.tolist() == [25.0, 346.0, 100.0]


@pytest.mark.parametrize("cell, needle", [
    ("severe", r"target column 'progression' has 1 non-numeric values \(e\.g\. \['severe'\]\)"),
    ("", r"target column 'progression' has 1 missing values \(rows with index \[1\]\)"),
    (None, r"target column 'progression' has 1 missing values \(rows with index \[1\]\)"),
    ("NA", r"target column 'progression' has 1 missing values"),
])
def test_a_missing_or_non_numeric_target_cell_is_refused_naming_the_column(cell, needle) -> None:
    schema = _regression_schema(missing_values=["", "NA"])
    with pytest.raises(ValueError, match=needle):
        preprocess(_frame(["100", cell, "200"]), schema)


# ----------------------------------------------------------------------------- infer
def test_infer_reads_the_target_bounds_for_regression() -> None:
    frame = _frame(["140", "25.5", "300", "99"])
    with pytest.warns(DataDependentPreprocessingWarning, match=r"target bounds \[25\.5, 300\]"):
        schema = TabularSchema.infer(frame, "progression", task="regression")
    assert schema.task == "regression" and schema.target_bounds == (25.5, 300.0) and schema.data_dependent
    assert schema.positive_label is None and schema.classes is None and "progression" not in schema.columns


@pytest.mark.parametrize("kwargs, needle", [
    ({"target": "progression", "task": "ordinal"}, r"task must be one of \['classification', 'regression'\]"),
    ({"target": "progression", "positive_label": "140", "task": "regression"}, r"positive_label \(--positive\) '140'"),
    ({"target": None, "task": "regression"}, r"task='regression' needs a target column"),
])
def test_infer_refuses_a_task_it_cannot_read(kwargs, needle) -> None:
    with pytest.raises(ValueError, match=needle):
        TabularSchema.infer(_frame(["140", "25", "300"]), **kwargs)


def test_infer_refuses_a_constant_regression_target_naming_the_column() -> None:
    with pytest.raises(ValueError, match=r"target column 'progression' holds the one value 7.*target_bounds"):
        TabularSchema.infer(_frame([7, 7, 7]), "progression", task="regression")


def test_infer_refuses_a_continuous_target_as_a_label_set() -> None:
    """214 distinct numbers (as diabetes' progression has) is no label set: refused, with both fixes."""
    progression = [str(value) for value in range(25, 25 + 214)]
    with pytest.raises(ValueError) as error:
        TabularSchema.infer(_frame(progression), "progression")
    message = str(error.value)
    assert "target column 'progression' has 214 distinct values" in message
    assert '--model ridge or --model lad with "target_bounds": [lower, upper]' in message
    assert '"classes" in a schema, or --positive LABEL' in message


def test_many_numeric_classes_are_refused_only_above_twenty() -> None:
    with pytest.warns(DataDependentPreprocessingWarning, match=r"label set \(20 classes\)"):
        twenty = TabularSchema.infer(_frame([float(k) for k in range(20)] * 2), "progression")
    assert twenty.task == "multiclass" and len(twenty.classes) == 20
    with pytest.raises(ValueError, match="has 21 distinct values"):
        TabularSchema.infer(_frame([float(k) for k in range(21)] * 2), "progression")


def test_many_text_classes_or_a_declared_positive_label_stay_classification() -> None:
    names = [f"site-{k}" for k in range(30)]
    with pytest.warns(DataDependentPreprocessingWarning):
        assert TabularSchema.infer(_frame(names), "progression").task == "multiclass"
    with pytest.warns(DataDependentPreprocessingWarning):
        binary = TabularSchema.infer(_frame([str(k) for k in range(30)]), "progression", positive_label="7")
    assert binary.task == "binary" and binary.positive_label == "7"


def test_a_three_class_numeric_target_still_infers_multi_class() -> None:
    with pytest.warns(DataDependentPreprocessingWarning, match=r"label set \(3 classes\)"):
        schema = TabularSchema.infer(_frame([1, 2, 3, 2, 1, 3]), "progression")
    assert schema.task == "multiclass" and schema.classes == ("1", "2", "3")


# ----------------------------------------------------------------------------- read_csv and load_train_test
def test_read_csv_infers_a_regression_schema_from_a_text_target(tmp_path) -> None:
    with pytest.warns(DataDependentPreprocessingWarning, match="target bounds"):
        frame, schema = read_csv(_csv(tmp_path), target="progression", task="regression")
    values = frame["progression"].astype(float)
    assert schema.target_bounds == (values.min(), values.max())


def test_load_train_test_regression_split_with_a_declared_schema(tmp_path) -> None:
    csv = _csv(tmp_path)
    schema = _schema_file(tmp_path, {**DIABETES, "numerical": {"bmi": [15, 45]}})
    split = load_train_test(csv=csv, schema=schema, test_size=0.25, seed=0, task="regression")
    assert split.classes == () and split.target_bounds == (25.0, 346.0) and split.reasons == ()
    assert split.y_train.dtype == np.float64 and split.y_test.dtype == np.float64
    assert (split.X_train.shape[0], split.X_test.shape[0]) == (45, 15)
    y = np.concatenate([split.y_train, split.y_test])
    assert y.min() >= 25.0 and y.max() <= 346.0


def test_load_train_test_regression_without_a_schema_reads_the_bounds(tmp_path) -> None:
    csv = _csv(tmp_path)
    with pytest.warns(DataDependentPreprocessingWarning):
        split = load_train_test(csv=csv, target="progression", seed=0, task="regression")
    y = np.concatenate([split.y_train, split.y_test])
    assert split.classes == () and split.target_bounds == (y.min(), y.max())
    assert len(split.reasons) == 1 and "target bounds" in split.reasons[0]


def test_load_train_test_classification_keeps_no_target_bounds(tmp_path) -> None:
    split = load_train_test(csv=_csv(tmp_path), schema=_schema_file(tmp_path, {**DIABETES, "target_bounds": None,
                                                                            "positive_label": "150"}), seed=0)
    assert split.classes == (-1, 1) and split.target_bounds is None


@pytest.mark.parametrize("labels, task, needles", [
    ({}, "classification", ["declares target_bounds (a regression target)", "--model ridge or --model lad",
                            "classes/positive_label"]),
    ({"target_bounds": None, "positive_label": "150"}, "regression",
     ["declares positive_label (a class label)", "--model ridge or lad", '"target_bounds": [lower, upper]']),
    ({"target_bounds": None, "classes": ["1", "2"]}, "regression",
     ["declares classes (a class label)", '"target_bounds": [lower, upper]', "--model logistic"]),
])
def test_a_schema_that_does_not_fit_the_task_says_which_models_fit(tmp_path, labels, task, needles) -> None:
    schema = _schema_file(tmp_path, {**DIABETES, **labels})
    with pytest.raises(ValueError) as error:
        load_train_test(csv=_csv(tmp_path), schema=schema, seed=0, task=task)
    for needle in needles:
        assert needle in str(error.value)


def test_adult_has_no_regression_target() -> None:
    with pytest.raises(ValueError, match=r"Adult's target is a class label: --model ridge/lad need --csv with a "
                                         r"numeric target"):
        load_train_test(task="regression")


def test_positive_with_a_regression_task_is_refused_naming_positive(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"positive_label \(--positive\) '150' .*regression.*leave it out"):
        load_train_test(csv=_csv(tmp_path), target="progression", positive="150", task="regression")
    with pytest.raises(ValueError, match=r"positive_label \(--positive\) '150'"):
        load_train_test(csv=_csv(tmp_path), schema=_schema_file(tmp_path, DIABETES), positive="150", task="regression")


def test_an_unknown_task_is_refused_naming_task(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"task must be one of \['classification', 'regression'\] .*; got 'ranking'"):
        load_train_test(task="ranking")
    with pytest.raises(ValueError, match=r"task must be one of"):
        read_csv(_csv(tmp_path), target="progression", task="ranking")
