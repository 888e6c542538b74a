"""Train/held-out splits for the command line: the embedded Adult data or the user's CSV."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

from .adult import load_adult
from .tabular import TabularSchema, preprocess, read_csv

__all__ = ["DATA_DEPENDENT_NOTE", "load_train_test"]

#: Recorded in the certificate when category sets or numeric bounds were read from the data.
DATA_DEPENDENT_NOTE = (
    "preprocessing constants (category sets, numeric bounds) were read from the private data: "
    "that preprocessing is not covered by the privacy guarantee; pass a schema to cover it"
)


def load_train_test(
    csv: str | None = None,
    target: str | None = None,
    positive: str | None = None,
    schema: str | None = None,
    test_size: float = 0.2,
    seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """``(X_train, X_test, y_train, y_test, notes)`` for training from the command line.

    Without ``csv``: UCI Adult's own split (adult.data for training, adult.test held out).
    With ``csv``: the file preprocessed by ``schema`` (a JSON file, see
    :class:`~dpconvex.datasets.TabularSchema`) or, without one, by a schema inferred from the
    data — then ``notes`` holds :data:`DATA_DEPENDENT_NOTE` for the certificate.  The held-out
    part is a stratified ``test_size`` fraction.
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
    frame, used = read_csv(csv, schema=declared, target=target, positive_label=positive)
    X, y = preprocess(frame, used)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, stratify=y, random_state=seed)
    notes = (DATA_DEPENDENT_NOTE,) if used.data_dependent else ()
    return X_train, X_test, y_train, y_test, notes
