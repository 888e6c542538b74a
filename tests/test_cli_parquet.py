"""``dpconvex train --parquet``: a Parquet directory trained on a Dask cluster, with the in-memory certificate.

The command starts a LocalCluster of its own (or joins ``--scheduler``); the reference is the
in-memory estimator fitted on the same table, encoded by the same schema, with the same seed:
the certificate depends only on n, d and the declarations, so the two must be identical.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from dpconvex.cli.main import main
from dpconvex.datasets import TabularSchema
from dpconvex.datasets.encoding import encode, encode_labels
from dpconvex.estimators.linear_model import PrivateLogisticRegression
from test_data_dask import local_cluster

pytestmark = pytest.mark.slow  # trains on a Dask cluster

SCHEMA = {"target": "label", "positive_label": "yes", "categorical": {"colour": ["red", "blue"]},
          "numerical": {"a": [-2, 2], "b": [-2, 2], "c": [-2, 2]}}


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """Three Parquet files of 700 rows: numeric columns, one text column and a text label."""
    directory = tmp_path_factory.mktemp("parquet")
    rng = np.random.default_rng(0)
    parts = []
    for index in range(3):
        part = pd.DataFrame(rng.normal(size=(700, 3)) / 2, columns=list("abc"))
        part["colour"] = rng.choice(["red", "blue"], 700)
        part["label"] = np.where(part["a"] + (part["colour"] == "red") > 0.5, "yes", "no")
        part.to_parquet(directory / f"part{index}.parquet")
        parts.append(part)
    schema_path = directory.parent / "schema.json"
    schema_path.write_text(json.dumps(SCHEMA))
    return directory, schema_path, pd.concat(parts, ignore_index=True)


def run(capsys, *arguments) -> dict:
    assert main(["train", *arguments, "--epsilon", "1", "--seed", "3", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def in_memory_certificate(frame: pd.DataFrame, schema: TabularSchema, **options) -> dict:
    X, y = encode(frame, schema, 1.0), encode_labels(frame["label"], schema)
    fitted = PrivateLogisticRegression(epsilon=1.0, delta=1e-8, classes=[-1, 1], random_state=3, **options).fit(X, y)
    return fitted.privacy_report_.to_dict()


def test_parquet_training_certifies_exactly_as_in_memory(table, capsys):
    directory, schema_path, frame = table
    payload = run(capsys, "--parquet", str(directory), "--schema", str(schema_path))
    expected = in_memory_certificate(frame, TabularSchema.from_dict(SCHEMA))
    certificate = payload["certificate"]
    assert certificate["notes"][:-1] == expected["notes"] and "no held-out accuracy" in certificate["notes"][-1]
    assert {key: value for key, value in certificate.items() if key != "notes"} == \
           {key: value for key, value in expected.items() if key != "notes"}
    assert payload["n_train"] == 2100 and payload["test_accuracy"] is None and payload["epsilon"] <= 1.0


def test_scheduler_joins_a_running_cluster(table, capsys):
    directory, _, frame = table
    numeric = directory.parent / "numeric"
    numeric.mkdir(exist_ok=True)
    frame.drop(columns=["colour"]).to_parquet(numeric / "all.parquet")
    with local_cluster() as client:
        payload = run(capsys, "--parquet", str(numeric), "--target", "label", "--positive", "yes",
                      "--scheduler", client.scheduler.address)
    assert payload["n_train"] == 2100 and payload["classes"] == ["-1", "1"] and payload["epsilon"] <= 1.0


@pytest.mark.parametrize("arguments, message", [
    (["--target", "label", "--positive", "yes"], r"columns \['colour'\] are not numeric: give a --schema"),
    ([], "--target is required with --parquet unless --schema names it"),
    (["--target", "nope"], "--target 'nope' is not a column of the table"),
])
def test_bad_parquet_arguments_are_refused_naming_them(table, capsys, arguments, message):
    directory, _, _ = table
    assert main(["train", "--parquet", str(directory), *arguments]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_held_out_fraction_is_refused_with_parquet(table, capsys):
    """No split of a Parquet directory is drawn: a --test-size other than the default is refused, not ignored."""
    directory, schema_path, _ = table
    assert main(["train", "--parquet", str(directory), "--schema", str(schema_path), "--test-size", "0.3"]) == 2
    assert "--test-size applies to --csv only: with --parquet every row is trained on" in capsys.readouterr().err


def test_scheduler_without_parquet_is_refused(capsys):
    assert main(["train", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler applies to --parquet only" in capsys.readouterr().err


def test_multiclass_schema_with_classes_in_declared_order_encodes_each_label_to_its_class(table, capsys, tmp_path):
    """Classes declared unsorted: each label must map to its own declared class (index in declaration order)."""
    directory, _, frame = table
    multi = tmp_path / "multi"
    multi.mkdir()
    frame.assign(label=np.where(frame["a"] > 0.3, "b", np.where(frame["a"] < -0.3, "c", "a"))).to_parquet(
        multi / "all.parquet")
    spec = {**SCHEMA, "positive_label": None, "classes": ["b", "a", "c"]}
    spec.pop("positive_label")
    (tmp_path / "multi.json").write_text(json.dumps(spec))
    payload = run(capsys, "--parquet", str(multi), "--schema", str(tmp_path / "multi.json"))
    assert payload["classes"] == ["b", "a", "c"] and payload["n_classes"] == 3 and payload["epsilon"] <= 1.0


def test_a_data_dependent_schema_is_refused(table, capsys, tmp_path):
    directory, _, _ = table
    (tmp_path / "inferred.json").write_text(json.dumps({**SCHEMA, "data_dependent": True}))
    assert main(["train", "--parquet", str(directory), "--schema", str(tmp_path / "inferred.json")]) == 2
    assert "--parquet needs a declared schema" in capsys.readouterr().err


def test_positive_with_a_numeric_target_is_refused(table, capsys, tmp_path):
    _, _, frame = table
    numeric = tmp_path / "numeric"
    numeric.mkdir()
    frame.drop(columns=["colour"]).assign(label=np.where(frame["label"] == "yes", 1.0, 0.0)).to_parquet(
        numeric / "all.parquet")
    assert main(["train", "--parquet", str(numeric), "--target", "label", "--positive", "1"]) == 2
    assert "--positive compares label texts, but the target 'label' is numeric" in capsys.readouterr().err


def test_noisy_gd_with_set_iterations_certifies_as_in_memory(table, capsys):
    """--method noisy_gd --iterations 4 (one pass over the table per iteration): the in-memory certificate."""
    directory, schema_path, frame = table
    payload = run(capsys, "--parquet", str(directory), "--schema", str(schema_path), "--method", "noisy_gd",
                  "--iterations", "4")
    expected = in_memory_certificate(frame, TabularSchema.from_dict(SCHEMA), method="noisy_gd", iterations=4)
    certificate = payload["certificate"]
    assert certificate["iterations"] == 4 and certificate["mechanism"] == expected["mechanism"]
    assert {key: value for key, value in certificate.items() if key != "notes"} == \
           {key: value for key, value in expected.items() if key != "notes"}


def test_iterations_with_a_method_that_does_not_read_them_is_refused(table, capsys):
    directory, schema_path, _ = table
    assert main(["train", "--parquet", str(directory), "--schema", str(schema_path), "--iterations", "4"]) == 2
    assert "'iterations' parameter applies to method in ['noisy_gd'], not 'auto'" in capsys.readouterr().err
