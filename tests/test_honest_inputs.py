"""Inputs that pass but mislead: a δ of 1/n or more, tuning on the private data, schema papercuts, converted output.

Each case goes through the public API and checks that the message names the parameter or column:
a target δ ≥ 1/n warns naming n and 1/n and puts the same sentence in the certificate's notes (ε unchanged);
every single-fit certificate states that tuning on the private data is not covered; a features-only
schema needs no ``positive_label``; the clipping warning names the column's declared bounds; the
warning of a data-dependent transformer says that converting its output drops the mark.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from dpconvex import (
    PrivateHuberSVC,
    PrivateLADRegressor,
    PrivateLinearSVC,
    PrivateLogisticRegression,
    PrivateRidge,
    PublicSchemaTransformer,
)
from dpconvex.datasets import TabularSchema
from dpconvex.exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning
from dpconvex.mechanisms import METHODS
from dpconvex.objectives.losses import LogisticLoss

ROOT = Path(__file__).resolve().parents[1]


def _data(n: int = 10, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= 1.01 * np.linalg.norm(X, axis=1, keepdims=True)  # within data_norm = 1: no clipping warning
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


# ------------------------------------------------------------------------------------------ delta >= 1/n
def test_an_estimator_with_delta_at_least_one_over_n_warns_naming_n_and_one_over_n() -> None:
    X, y = _data(n=10)
    model = PrivateLogisticRegression(epsilon=0.1, delta=0.5, classes=[-1, 1], random_state=0)
    with pytest.warns(PrivacyLeakWarning, match=r"delta=0\.5 is at least 1/n = 0\.1 \(n = 10 records\)") as caught:
        model.fit(X, y)
    message = str(next(w.message for w in caught if "1/n" in str(w.message)))
    assert "permits releasing a record outright" in message
    report = model.privacy_report_
    assert any(note == message for note in report.notes)  # the same sentence, stated once (Problem.large_delta)
    assert 0 < report.epsilon <= 0.1 * (1 + 1e-5) and report.delta == 0.5  # epsilon is not changed


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_mechanism_warns_and_notes_a_delta_of_one_over_n(name: str) -> None:
    X, y = _data(n=20)
    with pytest.warns(PrivacyLeakWarning, match=r"delta=0\.05 is at least 1/n = 0\.05 \(n = 20 records\)"):
        certificate = METHODS[name](X, y, loss=LogisticLoss(), l2_regularization=0.1, delta=0.05, epsilon=1.0,
                                    random_state=0).certificate
    assert any("1/n = 0.05" in note and "releasing a record outright" in note for note in certificate.notes)
    assert math.isfinite(certificate.epsilon)


def test_a_delta_below_one_over_n_passes_without_warning_or_note() -> None:
    X, y = _data(n=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        model = PrivateLogisticRegression(epsilon=1.0, delta=0.049, classes=[-1, 1], random_state=0).fit(X, y)
    assert not any("1/n" in note for note in model.privacy_report_.notes)


# ------------------------------------------------------------------------------ tuning on the private data
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_certificate_says_tuning_on_the_private_data_is_not_covered(name: str) -> None:
    X, y = _data(n=40)
    certificate = METHODS[name](X, y, loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0,
                                random_state=0).certificate
    tuning = [c for c in certificate.conditions if "GridSearchCV" in c]
    assert len(tuning) == 1, certificate.conditions
    assert "without looking at the private data" in tuning[0] and "not covered" in tuning[0]
    assert "PrivateLogisticRegressionCV" in tuning[0] and "dpconvex.model_selection" in tuning[0]
    assert tuning[0] in str(certificate)


@pytest.mark.parametrize("estimator, cv", [
    (PrivateLogisticRegression, "PrivateLogisticRegressionCV"), (PrivateHuberSVC, "PrivateHuberSVCCV"),
    (PrivateRidge, "PrivateRidgeCV"), (PrivateLinearSVC, "PrivateHuberSVCCV"), (PrivateLADRegressor, "PrivateRidgeCV"),
])
def test_each_estimator_docstring_has_a_notes_paragraph_on_tuning(estimator: type, cv: str) -> None:
    notes = estimator.__doc__.split("Notes\n    -----", 1)
    assert len(notes) == 2, f"{estimator.__name__} has no Notes section"
    assert "GridSearchCV" in notes[1] and "not covered" in notes[1] and cv in notes[1]


@pytest.mark.skipif(not (ROOT / "docs").is_dir(), reason="docs/ not next to tests/ (installed package)")
def test_the_docs_users_read_say_tuning_is_not_covered() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    selection = (ROOT / "docs" / "model-selection.md").read_text(encoding="utf-8")
    for text in (quickstart, selection):
        assert "GridSearchCV" in text and "not covered" in text and "PrivateLogisticRegressionCV" in text


# ------------------------------------------------------------------------------------------- papercuts
def test_a_schema_without_target_needs_no_positive_label() -> None:
    schema = TabularSchema(target=None, numerical={"age": (17, 90)}, categorical={"colour": ("red", "blue")})
    assert schema.positive_label is None and schema.label_set is None
    assert schema == TabularSchema(None, None, {"colour": ("red", "blue")}, {"age": (17, 90)})  # positional still works
    assert TabularSchema(target="t", positive_label="y").positive_label == "y"


def test_the_categories_passed_where_positive_label_goes_name_positive_label() -> None:
    with pytest.raises(ValueError, match=r"positive_label must be a label or None.*by keyword"):
        TabularSchema(None, {"colour": ("red", "blue")})


def test_clipping_warning_names_the_declared_bounds() -> None:
    schema = TabularSchema(target=None, numerical={"age": (17, 90), "hours": (0, 99.5)})
    frame = pd.DataFrame({"age": [10.0, 50.0, 100.0], "hours": [1.0, 2.0, 200.0]})
    with pytest.warns(PrivacyLeakWarning) as caught:
        PublicSchemaTransformer(schema).fit_transform(frame)
    message = str(caught[0].message)
    assert "3 numerical values lay outside their declared bounds" in message
    assert "column 'age': 2 outside [17, 90]" in message and "column 'hours': 1 outside [0, 99.5]" in message
    assert "[0, 1]" not in message


@pytest.mark.skipif(not (ROOT / "README.md").is_file(), reason="README.md not next to tests/ (installed package)")
def test_the_readme_shows_a_plain_user_install_beside_the_developer_one() -> None:
    setup = (ROOT / "README.md").read_text(encoding="utf-8").split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert "```\npip install -e .\n```" in setup and '```\npip install -e ".[test]"\n```' in setup


# ------------------------------------------------------------------ data-dependent schema: converted output
def _survey(rows: int = 30) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(18, 90, rows).astype(float), "colour": rng.choice(["red", "blue"], rows)})
    return frame, np.where(frame["age"] > 50, 1, -1)


def test_data_dependent_opt_in_warns_that_conversion_drops_the_mark() -> None:
    frame, y = _survey()
    with pytest.warns(DataDependentPreprocessingWarning):
        transformer = PublicSchemaTransformer.from_dataframe(frame, allow_data_dependent=True)
    with pytest.warns(DataDependentPreprocessingWarning) as caught:
        Xt = transformer.fit_transform(frame)
    message = " ".join(str(w.message) for w in caught)
    for words in ("np.asarray", "pd.DataFrame", "new array", "drops the mark", "Pipeline"):
        assert words in message, words
    # What the warning describes: the converted array no longer voids the model's certificate ...
    converted = PrivateLogisticRegression(classes=[-1, 1], random_state=0).fit(np.asarray(Xt), y)
    assert math.isfinite(converted.privacy_report_.epsilon)
    # ... while the Pipeline it recommends does.
    with pytest.warns(DataDependentPreprocessingWarning):
        pipeline = make_pipeline(PublicSchemaTransformer.from_dataframe(frame, allow_data_dependent=True),
                                 PrivateLogisticRegression(classes=[-1, 1], random_state=0))
    with pytest.warns(PrivacyLeakWarning, match="epsilon = inf"), \
            pytest.warns(DataDependentPreprocessingWarning, match="Pipeline"):
        pipeline.fit(frame, y)
    assert math.isinf(pipeline[-1].privacy_report_.epsilon)
