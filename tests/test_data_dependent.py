"""Every choice read from the private data is visible in the certificate.

``VOIDING`` lists each path through the public API where a bound, scale, category set or label set
is read from the data: its certificate must say ε = ∞ ("inf" in JSON) with the reason in its notes,
and the code must warn with the listed category.  The converse tests check that declaring
everything gives a finite ε and none of those notes.
"""

from __future__ import annotations

import csv
import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from dpconvex.cli.main import main
from dpconvex.estimators.linear_model import (
    PrivateHuberSVC,
    PrivateLADRegressor,
    PrivateLinearSVC,
    PrivateLogisticRegression,
    PrivateRidge,
)
from dpconvex.estimators.preprocessing import PublicSchemaTransformer
from dpconvex.exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning
from dpconvex.privacy.certificate import NO_GUARANTEE, PrivacyCertificate

ROWS = 200
SCHEMA = {
    "target": "label",
    "positive_label": "yes",
    "categorical": {"colour": ["blue", "green", "red"], "size": ["S", "M", "L"]},
    "numerical": {"age": [0, 100], "income": [0, 100]},
}
CLASSIFIERS = (PrivateLogisticRegression, PrivateHuberSVC, PrivateLinearSVC)
REGRESSORS = (PrivateRidge, PrivateLADRegressor)


# ----------------------------------------------------------------------------- building the situations
def _write_csv(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    colour = rng.choice(SCHEMA["categorical"]["colour"], ROWS)
    size = rng.choice(SCHEMA["categorical"]["size"], ROWS)
    age = rng.integers(18, 80, ROWS)
    income = rng.uniform(0.0, 100.0, ROWS).round(2)
    label = np.where((age - 50) / 30 + (income - 50) / 50 + (colour == "red") + rng.normal(0, 0.3, ROWS) > 0,
                     "yes", "no")
    path = folder / "data.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["colour", "size", "age", "income", "label"])
        writer.writerows(zip(colour, size, age, income, label))
    return path


def _write_schema(folder: Path, **changes) -> Path:
    path = folder / "schema.json"
    path.write_text(json.dumps({**SCHEMA, **changes}), encoding="utf-8")
    return path


def _cli(argv: list[str], capsys, as_json: bool = True) -> tuple[float, list[str]]:
    """(ε, notes) of ``dpconvex train`` as printed: the JSON payload, or the text certificate."""
    assert main(["train", "--seed", "0", *argv, *(["--json"] if as_json else [])]) == 0
    out = capsys.readouterr().out
    if as_json:
        payload = json.loads(out)
        epsilon = payload["epsilon"]
        assert epsilon == payload["certificate"]["epsilon"]
        assert not (isinstance(epsilon, float) and math.isinf(epsilon)), "JSON must say \"inf\", not Infinity"
        return float(epsilon), payload["certificate"]["notes"]
    (epsilon,) = re.findall(r"^\((\S+), \S+\)-DP — ", out, flags=re.MULTILINE)
    return float(epsilon), re.findall(r"^  note: (.*)$", out, flags=re.MULTILINE)


def _estimator_data(cls) -> tuple[np.ndarray, np.ndarray]:
    """60 rows inside every default bound (‖x‖ < 1, |y| < 1); labels "pos"/"neg" for classifiers."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X *= 0.9 * rng.uniform(0.1, 1.0, size=(60, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    if cls in REGRESSORS:
        return X, 0.8 * np.tanh(X @ np.array([1.0, -0.5, 0.25]))
    y = np.where(X[:, 0] > 0, "pos", "neg")
    y[:2] = ["pos", "neg"]
    return X, y


def _fit(cls, **params) -> tuple[float, list[str]]:
    report = cls(random_state=0, **params).fit(*_estimator_data(cls)).privacy_report_
    return report.epsilon, list(report.notes)


# ----------------------------------------------------------------------------- the paths
def _csv_without_schema(tmp_path, capsys):
    return _cli(["--csv", str(_write_csv(tmp_path)), "--target", "label", "--positive", "yes",
                 "--schema-from-data"], capsys)


def _csv_without_schema_text(tmp_path, capsys):
    return _cli(["--csv", str(_write_csv(tmp_path)), "--target", "label", "--positive", "yes",
                 "--schema-from-data"], capsys, as_json=False)


def _csv_without_schema_or_positive(tmp_path, capsys):
    return _cli(["--csv", str(_write_csv(tmp_path)), "--target", "label", "--schema-from-data"], capsys)


def _schema_says_data_dependent(tmp_path, capsys):
    schema = _write_schema(tmp_path, data_dependent=True)
    return _cli(["--csv", str(_write_csv(tmp_path)), "--schema", str(schema)], capsys)


def _transformer_from_dataframe(tmp_path, capsys):
    frame = pd.read_csv(_write_csv(tmp_path))
    transformer = PublicSchemaTransformer.from_dataframe(frame, target="label", allow_data_dependent=True)
    model = make_pipeline(transformer, PrivateLogisticRegression(classes=["no", "yes"], random_state=0))
    with pytest.warns(PrivacyLeakWarning, match="no differential-privacy guarantee"):
        report = model.fit(frame, frame["label"])[-1].privacy_report_  # the estimator voids its own report
    assert transformer.certify(report) == report
    return report.epsilon, list(report.notes)


def _from_data(cls):
    def run(tmp_path, capsys):
        return _fit(cls, data_norm="from_data", **({"classes": ["neg", "pos"]} if cls in CLASSIFIERS else {}))
    return run


def _classes_from_y(cls):
    def run(tmp_path, capsys):
        return _fit(cls)  # classes=None, data_norm declared
    return run


#: (id, run(tmp_path, capsys) -> (ε, notes), warning category, text the no-guarantee note must contain)
VOIDING = [
    ("cli-csv-without-schema", _csv_without_schema, DataDependentPreprocessingWarning,
     "the schema was read from the data (--schema-from-data), so the category sets and numeric bounds were read "
     "from the private data"),
    ("cli-csv-without-schema-text", _csv_without_schema_text, DataDependentPreprocessingWarning,
     "the schema was read from the data (--schema-from-data), so the category sets and numeric bounds were read "
     "from the private data"),
    ("cli-csv-without-schema-positive-inferred", _csv_without_schema_or_positive, DataDependentPreprocessingWarning,
     "the category sets, numeric bounds and positive label were read from the private data"),
    ("cli-schema-data-dependent-true", _schema_says_data_dependent, DataDependentPreprocessingWarning,
     'the schema says "data_dependent": true'),
    ("PublicSchemaTransformer.from_dataframe", _transformer_from_dataframe, DataDependentPreprocessingWarning,
     'the schema says "data_dependent": true'),
    *[(f"{cls.__name__}-data_norm=from_data", _from_data(cls), PrivacyLeakWarning,
       "data_norm='from_data' read the norm bound from the private data") for cls in (*CLASSIFIERS, *REGRESSORS)],
    *[(f"{cls.__name__}-classes=None", _classes_from_y(cls), PrivacyLeakWarning,
       "classes=None read the label set {'neg', 'pos'} from the private labels y") for cls in CLASSIFIERS],
]


@pytest.mark.parametrize("run, category, reason", [pytest.param(*rest, id=name) for name, *rest in VOIDING])
def test_data_dependent_choice_voids_the_certificate(tmp_path, capsys, run, category, reason):
    with pytest.warns(category):
        epsilon, notes = run(tmp_path, capsys)
    assert epsilon == math.inf
    assert any(note.startswith(f"{NO_GUARANTEE}: ") and reason in note for note in notes), notes


# ----------------------------------------------------------------------------- the converse: all declared
def _declared_only(notes: list[str]) -> bool:
    return not any(note.startswith(NO_GUARANTEE) or "read from" in note for note in notes)


@pytest.mark.filterwarnings("error::dpconvex.exceptions.DataDependentPreprocessingWarning")
@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_cli_with_a_declared_schema_keeps_a_finite_epsilon(tmp_path, capsys, as_json):
    argv = ["--csv", str(_write_csv(tmp_path)), "--schema", str(_write_schema(tmp_path))]
    epsilon, notes = _cli(argv, capsys, as_json=as_json)
    assert epsilon <= 1.0  # the default --epsilon (the estimators' default)
    assert _declared_only(notes), notes  # in particular no label-set note: train declares classes=[-1, 1]


@pytest.mark.filterwarnings("error::dpconvex.exceptions.PrivacyLeakWarning")
@pytest.mark.parametrize("cls", [*CLASSIFIERS, *REGRESSORS], ids=lambda c: c.__name__)
def test_estimator_with_declared_bounds_and_classes_keeps_a_finite_epsilon(cls):
    epsilon, notes = _fit(cls, data_norm=1.0, **({"classes": ["neg", "pos"]} if cls in CLASSIFIERS else {}))
    assert epsilon <= 1.0
    assert _declared_only(notes), notes


# ----------------------------------------------------------------------------- the one way to void
def test_without_guarantee_voids_every_epsilon_and_keeps_the_rest():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        certificate = PrivateLogisticRegression(classes=["neg", "pos"], random_state=0).fit(
            *_estimator_data(PrivateLogisticRegression)).privacy_report_
    void = certificate.without_guarantee("a bound was read from the data")
    assert void.epsilon == void.composition_epsilon == math.inf
    assert set(void.candidates) == set(certificate.candidates) and set(void.candidates.values()) == {math.inf}
    assert void.notes == (*certificate.notes, f"{NO_GUARANTEE}: a bound was read from the data")
    assert (void.delta, void.bound, void.sigma, void.assumptions) == (
        certificate.delta, certificate.bound, certificate.sigma, certificate.assumptions)
    assert math.isfinite(certificate.epsilon)  # the original is untouched
    assert void.to_dict()["epsilon"] == "inf"
    assert str(void).startswith(f"(inf, {certificate.delta:.3g})-DP — {certificate.mechanism}: {NO_GUARANTEE}")
    # ε only ever grows: notes added later keep it void, and a second reason is added, not replacing
    again = void.with_notes("later").without_guarantee("another reason")
    assert again.epsilon == math.inf and again.notes[-2:] == ("later", f"{NO_GUARANTEE}: another reason")
    assert isinstance(again, PrivacyCertificate)


@pytest.mark.parametrize("passthrough", [False, True], ids=["alone", "beside-passthrough-columns"])
def test_a_data_dependent_schema_inside_a_column_transformer_voids_the_certificate(passthrough):
    """ColumnTransformer stacks its transformers' outputs (np.hstack): the mark, and so the voiding, survives."""
    from sklearn.compose import ColumnTransformer

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"c": rng.choice(["a", "b"], 200), "x": rng.uniform(0, 1, 200), "z": rng.uniform(0, 1, 200)})
    y = np.where(frame["c"] == "a", "p", "q")
    with pytest.warns(DataDependentPreprocessingWarning):
        schema = PublicSchemaTransformer.from_dataframe(frame[["c", "x"]], allow_data_dependent=True)
    parts = [("schema", schema, ["c", "x"])] + ([("rest", "passthrough", ["z"])] if passthrough else [])
    model = make_pipeline(ColumnTransformer(parts), PrivateLogisticRegression(classes=["p", "q"], data_norm=2.0,
                                                                             random_state=0))
    with pytest.warns(PrivacyLeakWarning, match="read from the private data"):
        model.fit(frame, y)
    assert model[-1].privacy_report_.epsilon == math.inf
