"""Train/held-out splits for the command line: the embedded Adult data or the user's CSV (classes or a number)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import train_test_split

from dpconvex.accounting._checks import check_open_unit
from dpconvex.datasets.adult import ADULT_SCHEMA, load_adult
from dpconvex.datasets.csv_reader import read_csv
from dpconvex.datasets.labels import check_task
from dpconvex.datasets.tabular import DATA_DEPENDENT_SCHEMA_REASON, TabularSchema, preprocess
from dpconvex.exceptions import DataDependentPreprocessingWarning

__all__ = ["HELD_OUT_NOTE", "INFERRED_SCHEMA_REASON", "TrainTestSplit", "load_train_test"]

#: Why training on a CSV read without a schema has no guarantee (``{what}``: what was read).
INFERRED_SCHEMA_REASON = (
    "no schema was given, so {what} were read from the "
    "private data (a minimum, maximum or category can hinge on one record); declare them in a "
    "schema file (--schema) to keep the guarantee"
)


#: For the certificate of a model trained on the training part: the held-out score is a second release.
#: ``{score}``: the score's name (``test_accuracy``, ``test_r2``).
HELD_OUT_NOTE = (
    "{score} is computed without noise on the held-out rows (never used for training): it is "
    "not covered by this certificate"
)


@dataclass(frozen=True, eq=False)
class TrainTestSplit:
    """A training part, a held-out part, the label set or target range, and why the guarantee is void (if it is).

    Attributes
    ----------
    X_train, X_test : numpy.ndarray of float64, shape (n_train, d) and (n_test, d)
        Encoded feature rows (unit L2 norm or zero).
    y_train, y_test : numpy.ndarray, shape (n_train,) and (n_test,)
        Labels: int64 in {-1, +1} for a binary schema (and Adult); the label texts for a
        multi-class one; float64 within ``target_bounds`` for regression.
    classes : tuple
        The label set to declare as the estimator's ``classes=``
        (:attr:`~dpconvex.datasets.tabular.TabularSchema.label_set`): ``(-1, 1)`` for a binary schema
        and Adult, the schema's ``classes`` for a multi-class one; ``()`` for regression.
    reasons : tuple of str
        Why a model trained on ``X_train`` has no differential-privacy guarantee, for
        :meth:`~dpconvex.privacy.certificate.PrivacyCertificate.without_guarantee`; empty when it has one.
    target_bounds : tuple of float or None
        Regression: the target's range ``(lower, upper)``, the schema's ``target_bounds`` or, without a
        schema, the target's min and max (read from the data: then ``reasons`` says so); None for
        classification.
    schema : TabularSchema
        The schema that encoded the rows (UCI Adult's, the declared one, or the one inferred from the
        file), to encode new rows the same way.
    """

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    classes: tuple
    reasons: tuple[str, ...]
    target_bounds: tuple[float, float] | None
    schema: TabularSchema


def load_train_test(
    csv: str | None = None,
    target: str | None = None,
    positive: str | None = None,
    schema: str | None = None,
    test_size: float = 0.2,
    seed: int | None = None,
    *,
    task: str = "classification",
) -> TrainTestSplit:
    """The :class:`TrainTestSplit` for training from the command line.

    Without ``csv``: UCI Adult's own split (adult.data for training, adult.test held out).
    With ``csv``: the file preprocessed by ``schema`` (a JSON file, see
    :class:`~dpconvex.datasets.TabularSchema`; binary, multi-class or, for ``task="regression"``,
    regression) or, without one, by a schema inferred from the data (classification: binary with
    ``positive``, or when the target has two distinct values; multi-class otherwise; regression:
    the target's min and max as ``target_bounds``).  The split's ``reasons`` say why a model
    trained on the result has no differential-privacy guarantee: :data:`INFERRED_SCHEMA_REASON` without a schema,
    :data:`~dpconvex.datasets.tabular.DATA_DEPENDENT_SCHEMA_REASON`
    (with a :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`) for a schema that
    says ``"data_dependent": true``; none otherwise.

    The held-out part is a uniformly random ``test_size`` fraction drawn without looking at the
    data (not stratified: a split by label would move other records between the parts when one
    label changes, so neighbouring files would give training sets differing in many rows).

    Parameters
    ----------
    csv : str, optional
        The user's CSV file; None for Adult.
    target : str, optional
        The label column; required with ``csv`` unless ``schema`` names it.
    positive : str, optional
        The label mapped to +1 (binary); not with a multi-class schema, nor for regression.
    schema : str, optional
        Path of a JSON schema file.
    test_size : float, default 0.2
        Held-out fraction, in (0, 1).
    seed : int, optional
        Seed of the split.
    task : {"classification", "regression"}, default "classification"
        ``"regression"`` for a regressor (``--model ridge`` or ``lad``): the target is a number, and a
        schema must declare ``target_bounds``; ``"classification"`` for a classifier, whose schema
        declares ``positive_label`` or ``classes``. Adult's target is a class label.

    Returns
    -------
    TrainTestSplit

    Raises
    ------
    ValueError
        Naming the parameter or column and what to do (see :func:`~dpconvex.datasets.read_csv`
        and :func:`~dpconvex.datasets.preprocess`); saying which models fit the schema, if the task
        does not (:func:`~dpconvex.datasets.labels.check_task`); if ``task="regression"`` without
        ``csv``.
    """
    check_task(task, positive_label=positive)
    if csv is None and task == "regression":
        raise ValueError("Adult's target is a class label: --model ridge/lad need --csv with a numeric target "
                         "(task='regression' needs csv=)")
    if csv is None:
        X_train, y_train = load_adult("train")
        X_test, y_test = load_adult("test")
        return TrainTestSplit(X_train, X_test, y_train, y_test, classes=(-1, 1), reasons=(), target_bounds=None,
                              schema=ADULT_SCHEMA)
    check_open_unit(test_size, "test_size")
    declared = TabularSchema.from_json(schema) if schema else None
    if declared is None and target is None:
        raise ValueError("target is required with a CSV file unless a schema file names it.")
    if declared is not None and target is not None and target != declared.target:
        raise ValueError(f"target {target!r} differs from the schema's target {declared.target!r}.")
    if declared is not None and declared.data_dependent:
        warnings.warn(DATA_DEPENDENT_SCHEMA_REASON, DataDependentPreprocessingWarning, stacklevel=2)
    frame, used = read_csv(csv, schema=declared, target=target, positive_label=positive, task=task)
    if declared is None:
        label = {"binary": "positive label", "multiclass": "label set (classes)"}.get(used.task, "target bounds")
        what = ("the category sets and numeric bounds" if positive is not None
                else f"the category sets, numeric bounds and {label}")
        reasons: tuple[str, ...] = (INFERRED_SCHEMA_REASON.format(what=what),)
    else:
        reasons = (DATA_DEPENDENT_SCHEMA_REASON,) if declared.data_dependent else ()
    X, y = preprocess(frame, used, allow_data_dependent=True)  # the reasons returned void the certificate
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=test_size, random_state=seed)
    return TrainTestSplit(X_train, X_test, y_train, y_test, classes=used.label_set or (), reasons=reasons,
                          target_bounds=used.target_bounds, schema=used)
