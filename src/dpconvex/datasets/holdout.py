"""Train/held-out splits for the command line: the embedded Adult data or the user's CSV (classes or a number)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from dpconvex.accounting._checks import check_open_unit
from dpconvex.datasets.adult import ADULT_SCHEMA, load_adult
from dpconvex.datasets.cells import require_columns, text_cells
from dpconvex.datasets.csv_reader import read_csv, read_csv_cells
from dpconvex.datasets.encoding import encode
from dpconvex.datasets.labels import check_task, encode_labels
from dpconvex.datasets.private_release import DEFAULT_DISCOVERY_SHARE, discover_for_release
from dpconvex.datasets.private_schema import DiscoveryRecord
from dpconvex.datasets.tabular import DATA_DEPENDENT_SCHEMA_REASON, TabularSchema, preprocess
from dpconvex.exceptions import DataDependentPreprocessingWarning, DiscoverySpentError

__all__ = ["DISCOVERY_STREAM", "HELD_OUT_NOTE", "INFERRED_SCHEMA_REASON", "TrainTestSplit", "load_discovered_split",
           "load_train_test"]

#: The discovery's noise stream under a seed: ``default_rng([seed, DISCOVERY_STREAM])``, not ``default_rng(seed)``,
#: which a training run seeded with the same integer uses (the composition assumes independent noise).
DISCOVERY_STREAM = 1

#: Why training on a CSV read without a schema has no guarantee (``{what}``: what was read).
INFERRED_SCHEMA_REASON = (
    "the schema was read from the data (--schema-from-data), so {what} were read from the "
    "private data (a minimum, maximum or category can hinge on one record); declare them in a "
    "schema file (--schema), or leave both out to discover them privately, to keep the guarantee"
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
        The schema that encoded the rows (UCI Adult's, the declared one, the one discovered privately
        or the one inferred from the file), to encode new rows the same way.
    discovery : DiscoveryRecord or None
        What the private discovery of ``schema`` cost and the training's share of the budget
        (:func:`load_discovered_split`); None for a declared or inferred schema.
    notes : tuple of str
        What the split left out of the held-out part, and why.
    """

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    classes: tuple
    reasons: tuple[str, ...]
    target_bounds: tuple[float, float] | None
    schema: TabularSchema
    discovery: DiscoveryRecord | None = None
    notes: tuple[str, ...] = ()


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
    notes = () if used.provenance is None else (f"the schema was {used.provenance}",)
    return TrainTestSplit(X_train, X_test, y_train, y_test, classes=used.label_set or (), reasons=reasons,
                          target_bounds=used.target_bounds, schema=used, notes=notes)


def load_discovered_split(csv: str, target: str, *, epsilon: float, delta: float,
                          share: float = DEFAULT_DISCOVERY_SHARE, positive: str | None = None,
                          test_size: float = 0.2, seed: int | None = None,
                          task: str = "classification") -> TrainTestSplit:
    """The :class:`TrainTestSplit` of a CSV file without a schema, its schema discovered privately on the training part.

    The file's cells are read as text (:func:`~dpconvex.datasets.csv_reader.read_csv_cells`), split
    as :func:`load_train_test` splits them (the same rows for the same ``seed``), and the schema is
    discovered on the training rows only with ``share`` of (``epsilon``, ``delta``)
    (:func:`~dpconvex.datasets.private_release.discover_for_release`); both parts are then encoded
    with it (:func:`~dpconvex.datasets.encoding.encode`, leniently: a non-numeric cell of a
    numerical column read as missing, unreleased categories in the ``<missing/other>`` feature).
    The split's ``discovery`` carries the training's share; the held-out part drops its rows whose
    label the discovery did not release (multi-class: ``notes`` counts them; they are not private,
    as the held-out score is not).

    Parameters
    ----------
    csv : str
        The CSV file (with a header row).
    target : str
        The label column (a number for ``task="regression"``).
    epsilon, delta : float
        The whole release's budget, discovery and training.
    share : float, default DEFAULT_DISCOVERY_SHARE
        The discovery's share of μ² and of δ, in (0, 1).
    positive : str, optional
        A declared positive label (binary): the label set is then not discovered.
    test_size : float, default 0.2
        Held-out fraction, in (0, 1).
    seed : int, optional
        Seed of the split and of the discovery's noise, drawn from ``numpy.random.default_rng([seed,
        DISCOVERY_STREAM])``: independent of a training run seeded with ``seed`` (None: the noise
        from the operating system).
    task : {"classification", "regression"}, default "classification"

    Returns
    -------
    TrainTestSplit

    Raises
    ------
    ValueError
        If ``target`` is not a column; :class:`~dpconvex.exceptions.DiscoverySpentError` (a
        ``ValueError``) for an error from the discovery on (e.g. fewer than two labels, no target
        bounds, no feature column kept): its budget is spent.
    """
    check_task(task, positive_label=positive)
    check_open_unit(test_size, "test_size")
    frame = read_csv_cells(csv)
    require_columns(frame, [target])
    train, test = train_test_split(frame, test_size=test_size, random_state=seed)
    # a stream of its own: the training seeded with the same integer draws independent noise
    noise = None if seed is None else np.random.default_rng([seed, DISCOVERY_STREAM])
    try:
        return _discovered_split(train, test, target, epsilon=epsilon, delta=delta, share=share, noise=noise,
                                 task=task, positive=positive)
    except ValueError as error:
        raise DiscoverySpentError(str(error)) from error


def _discovered_split(train: pd.DataFrame, test: pd.DataFrame, target: str, *, epsilon: float, delta: float,
                      share: float, noise: np.random.Generator | None, task: str,
                      positive: str | None) -> TrainTestSplit:
    """The discovery on ``train`` and both parts encoded with it (:func:`load_discovered_split`)."""
    schema, record = discover_for_release(train, target, epsilon=epsilon, delta=delta, share=share,
                                          random_state=noise, task=task, positive_label=positive)
    notes: tuple[str, ...] = ()
    if schema.classes is not None:
        released = text_cells(test[target], schema.missing_values)[0]
        unreleased = ~np.isin(released, schema.classes)
        if unreleased.any():
            test = test[~unreleased]
            notes = (f"{int(unreleased.sum())} held-out rows have a label the private discovery did not release "
                     "and are not scored",)
    X_train, X_test = encode(train, schema), encode(test, schema)
    y_train, y_test = encode_labels(train[target], schema), encode_labels(test[target], schema)
    return TrainTestSplit(X_train, X_test, y_train, y_test, classes=schema.label_set or (), reasons=(),
                          target_bounds=schema.target_bounds, schema=schema, discovery=record, notes=notes)
