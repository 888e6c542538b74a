"""Train/held-out splits for the command line: the embedded Adult data or the user's CSV."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.model_selection import train_test_split

from dpconvex.exceptions import DataDependentPreprocessingWarning

from .adult import load_adult
from .tabular import DATA_DEPENDENT_SCHEMA_REASON, TabularSchema, preprocess, read_csv

__all__ = ["HELD_OUT_NOTE", "INFERRED_SCHEMA_REASON", "load_train_test"]

#: Why training on a CSV read without a schema has no guarantee (``{what}``: what was read).
INFERRED_SCHEMA_REASON = (
    "no schema was given, so {what} were read from the "
    "private data (a minimum, maximum or category can hinge on one record); declare them in a "
    "schema file (--schema) to keep the guarantee"
)


#: For the certificate of a model trained on the training part: the held-out score is a second release.
HELD_OUT_NOTE = (
    "test_accuracy is computed without noise on the held-out rows (never used for training): it is "
    "not covered by this certificate"
)


def load_train_test(
    csv: str | None = None,
    target: str | None = None,
    positive: str | None = None,
    schema: str | None = None,
    test_size: float = 0.2,
    seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """``(X_train, X_test, y_train, y_test, reasons)`` for training from the command line.

    Without ``csv``: UCI Adult's own split (adult.data for training, adult.test held out).
    With ``csv``: the file preprocessed by ``schema`` (a JSON file, see
    :class:`~dpconvex.datasets.TabularSchema`) or, without one, by a schema inferred from the
    data.  ``reasons`` says why a model trained on the result has no differential-privacy
    guarantee, for :meth:`~dpconvex.certificate.PrivacyCertificate.without_guarantee`:
    :data:`INFERRED_SCHEMA_REASON` without a schema,
    :data:`~dpconvex.datasets.tabular.DATA_DEPENDENT_SCHEMA_REASON`
    (with a :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`) for a schema that
    says ``"data_dependent": true``; empty otherwise.

    The held-out part is a uniformly random ``test_size`` fraction drawn without looking at the
    data (not stratified: a split by label would move other records between the parts when one
    label changes, so neighbouring files would give training sets differing in many rows).
    """
    if csv is None:
        X_train, y_train = load_adult("train")
        X_test, y_test = load_adult("test")
        return X_train, X_test, y_train, y_test, ()
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must lie in the open interval (0, 1); got {test_size!r}.")
    declared = TabularSchema.from_json(schema) if schema else None
    if declared is None and target is None:
        raise ValueError("target is required with a CSV file unless a schema file names it.")
    if declared is not None and target is not None and target != declared.target:
        raise ValueError(f"target {target!r} differs from the schema's target {declared.target!r}.")
    if declared is None:
        what = ("the category sets, numeric bounds and positive label" if positive is None
                else "the category sets and numeric bounds")
        reasons = (INFERRED_SCHEMA_REASON.format(what=what),)
    elif declared.data_dependent:
        warnings.warn(DATA_DEPENDENT_SCHEMA_REASON, DataDependentPreprocessingWarning, stacklevel=2)
        reasons = (DATA_DEPENDENT_SCHEMA_REASON,)
    else:
        reasons = ()
    frame, used = read_csv(csv, schema=declared, target=target, positive_label=positive)
    X, y = preprocess(frame, used, allow_data_dependent=True)  # the reasons returned void the certificate
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, random_state=seed)
    return X_train, X_test, y_train, y_test, reasons
