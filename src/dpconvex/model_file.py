"""A trained model and its certificate in one JSON file, loaded without executing code (no pickle).

:func:`save_model` writes a fitted estimator of :mod:`dpconvex.estimators` (or a ``…CV`` one of
:mod:`dpconvex.model_selection`): its linear parameters, its public label set, the
:class:`~dpconvex.datasets.TabularSchema` that encodes a record into its features (if it was trained
on encoded table rows), the affine map from a regressor's scores to its predictions and its
:class:`~dpconvex.certificate.PrivacyCertificate`.  :func:`load_model` reads it back as a
:class:`SavedModel`, which predicts as the estimator did, bit for bit.  The file is plain JSON::

    {"format": "dpconvex-model", "format_version": 1, "dpconvex_version": "0.1.0",
     "estimator": "PrivateLogisticRegression", "params": {"epsilon": 1.0, ...},
     "coef": [...], "intercept": 0.0, "classes": [-1, 1], "n_features_in": 12,
     "schema": {...} or null, "target_scale": 1.0, "target_offset": 0.0, "certificate": {...}}

``coef`` has shape (d,) for a regressor or two classes and (K, d) for K ≥ 3 classes (``intercept``
then has K entries); ``classes`` is null for a regressor.  Floats are written with every digit
(``repr``), so the parameters read back are the ones trained.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from .certificate import PrivacyCertificate
from ._linear_model import labels_from_scores
from .datasets.tabular import TabularSchema, feature_names

__all__ = ["FORMAT", "FORMAT_VERSION", "SavedModel", "load_model", "save_model"]

#: The ``"format"`` of a model file.
FORMAT = "dpconvex-model"

#: The newest ``"format_version"`` this dpconvex writes and reads.
FORMAT_VERSION = 1

#: The keys of a model file, in the order they are written.
_KEYS = ("format", "format_version", "dpconvex_version", "estimator", "params", "coef", "intercept", "classes",
         "n_features_in", "schema", "target_scale", "target_offset", "certificate")

#: What a label of ``classes`` may be in the file: the JSON scalars.
_LABEL_TYPES = (str, int, float, bool)


@dataclass(frozen=True, eq=False)
class SavedModel:
    """A trained linear model read from a model file: what it predicts, how it encodes a record, what it certifies.

    Attributes
    ----------
    format : str
        ``"dpconvex-model"``.
    format_version : int
        The version of the file format (:data:`FORMAT_VERSION` when written by this dpconvex).
    dpconvex_version : str
        The version of dpconvex that wrote the file.
    estimator : str
        The class name of the estimator that was trained (e.g. ``"PrivateRidge"``).
    params : dict
        Its ``get_params()`` as JSON values (a value JSON has no form for, e.g. a
        ``numpy.random.Generator`` as ``random_state``, is kept as its ``repr`` text).
    coef : numpy.ndarray of float64, shape (d,) or (K, d)
        The weights (read-only).
    intercept : float or numpy.ndarray of float64, shape (K,)
        The intercept(s).
    classes : numpy.ndarray or None
        The label set in the order of the estimator's ``classes_`` (classifiers); None for a regressor.
    n_features_in : int
        d, the number of features a row must have.
    schema : TabularSchema or None
        The feature map of the rows the model was trained on; None when it was trained on arrays.
    target_scale, target_offset : float
        A regressor predicts ``target_scale * score + target_offset`` (``dpconvex train`` trains on
        the target minus the centre of its declared range, divided by its half-width); 1 and 0 for
        a classifier.
    certificate : PrivacyCertificate
        The guarantee of the released parameters (ε = inf when it has none, with the reason in its notes).
    """

    format: str
    format_version: int
    dpconvex_version: str
    estimator: str
    params: dict[str, Any]
    coef: np.ndarray
    intercept: float | np.ndarray
    classes: np.ndarray | None
    n_features_in: int
    schema: TabularSchema | None
    target_scale: float
    target_offset: float
    certificate: PrivacyCertificate

    @property
    def is_classifier(self) -> bool:
        """Whether the model predicts class labels (else real targets)."""
        return self.classes is not None

    def decision_function(self, X: Any) -> np.ndarray:
        """The scores wᵀx + b of encoded rows, as the estimator's ``decision_function`` (regressors: before the
        affine map to the target's scale).

        Parameters
        ----------
        X : array-like of shape (n, d)
            Encoded feature rows (d = ``n_features_in``), finite numbers.

        Returns
        -------
        numpy.ndarray of float64, shape (n,) or (n, K)

        Raises
        ------
        ValueError
            If ``X`` is not a 2-D array of finite numbers with ``n_features_in`` columns.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in:
            raise ValueError(f"X must have shape (n_samples, {self.n_features_in}), as the rows the model was trained "
                             f"on; got shape {X.shape}.")
        if not np.isfinite(X).all():
            raise ValueError("X must contain only finite numbers (no NaN or inf).")
        return X @ self.coef.T + self.intercept

    def predict(self, X: Any) -> np.ndarray:
        """Predictions for encoded rows, by the estimator's rule.

        A classifier with two classes predicts ``classes[1]`` where the score is > 0 and
        ``classes[0]`` elsewhere; with more, the class of the highest score.  A regressor predicts
        ``target_scale * score + target_offset``.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Encoded feature rows.

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        scores = self.decision_function(X)
        if self.classes is None:
            return scores * self.target_scale + self.target_offset
        return labels_from_scores(scores, self.classes)

    def predict_frame(self, frame: pd.DataFrame) -> np.ndarray:
        """Predictions for the records of a data frame, encoded by ``schema`` (unit-norm rows, as ``preprocess``).

        Parameters
        ----------
        frame : pandas.DataFrame
            One record per row, with every feature column of the schema (the target column and
            other columns may be present; they are not read).

        Returns
        -------
        numpy.ndarray, shape (len(frame),)

        Raises
        ------
        ValueError
            If the model has no schema, a feature column is absent (they are named), or a cell
            cannot be encoded (see :func:`~dpconvex.datasets.encoding.encode`).
        """
        from .datasets.encoding import encode

        if self.schema is None:
            raise ValueError("this model was saved without a schema (it was trained on arrays), so it cannot encode "
                             "a data frame; encode the rows as they were for training and call predict(X).")
        missing = [column for column in self.schema.columns if column not in frame.columns]
        if missing:
            raise ValueError(f"the data lack the feature columns {missing} of the model's schema; it reads "
                             f"{self.schema.columns}.")
        return self.predict(encode(frame, self.schema))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the model file (see the module docstring)."""
        return {
            "format": self.format, "format_version": self.format_version, "dpconvex_version": self.dpconvex_version,
            "estimator": self.estimator, "params": self.params, "coef": self.coef.tolist(),
            "intercept": _json_value(self.intercept),
            "classes": None if self.classes is None else _json_value(self.classes),
            "n_features_in": self.n_features_in, "schema": None if self.schema is None else self.schema.to_dict(),
            "target_scale": self.target_scale, "target_offset": self.target_offset,
            "certificate": _json_value(self.certificate.to_dict()),
        }


def save_model(path: str | os.PathLike[str], estimator: Any, *, schema: TabularSchema | None = None,
               target_scale: float = 1.0, target_offset: float = 0.0,
               certificate: PrivacyCertificate | None = None) -> SavedModel:
    """Write a fitted estimator and its certificate to a JSON model file (:func:`load_model` reads it).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write (replaced if it exists).
    estimator : PrivateLinearModel
        A fitted estimator of :mod:`dpconvex.estimators` or :mod:`dpconvex.model_selection`.
    schema : TabularSchema, optional
        The schema that encoded the training rows (as :func:`~dpconvex.datasets.preprocess` does:
        unit-norm rows); lets :meth:`SavedModel.predict_frame` and ``dpconvex predict`` encode new
        records.  None for a model trained on arrays.
    target_scale, target_offset : float, default 1.0 and 0.0
        A regressor trained on ``(y - target_offset) / target_scale`` predicts
        ``target_scale * score + target_offset``; ``target_scale`` > 0.  A classifier's must be 1 and 0.
    certificate : PrivacyCertificate, optional
        The certificate to store; default ``estimator.privacy_report_``.  Give the certificate
        with every note and voiding applied after the fit (e.g. for a schema read from the data).

    Returns
    -------
    SavedModel
        What :func:`load_model` will read from the file.

    Raises
    ------
    ValueError
        If ``estimator`` is not a fitted dpconvex estimator, ``target_scale`` or ``target_offset``
        is not a finite number (``target_scale`` > 0; 1 and 0 for a classifier), or ``schema``
        encodes another number of features.
    """
    from ._linear_model import PrivateLinearModel

    if not isinstance(estimator, PrivateLinearModel) or not hasattr(estimator, "privacy_report_"):
        raise ValueError(f"save_model needs a fitted dpconvex estimator (e.g. PrivateLogisticRegression after fit); "
                         f"got {type(estimator).__name__}: fit it first.")
    classes = getattr(estimator, "classes_", None)
    model = _checked_model({
        "format": FORMAT, "format_version": FORMAT_VERSION, "dpconvex_version": __version__,
        "estimator": type(estimator).__name__, "params": _json_value(estimator.get_params(deep=False)),
        "coef": estimator.coef_.tolist(), "intercept": _json_value(estimator.intercept_),
        "classes": None if classes is None else _json_value(classes), "n_features_in": int(estimator.n_features_in_),
        "schema": None if schema is None else schema.to_dict(), "target_scale": _json_value(target_scale),
        "target_offset": _json_value(target_offset),
        "certificate": _json_value((estimator.privacy_report_ if certificate is None else certificate).to_dict()),
    })
    text = json.dumps(model.to_dict(), indent=1, allow_nan=False)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    return model


def load_model(path: str | os.PathLike[str]) -> SavedModel:
    """Read a model file written by :func:`save_model` (or ``dpconvex train --out``); no code is executed.

    Parameters
    ----------
    path : str or os.PathLike
        The model file.

    Returns
    -------
    SavedModel

    Raises
    ------
    ValueError
        Naming the file and what is wrong: not UTF-8 JSON, not a dpconvex model file, a newer
        format version, missing or unknown keys, a value of the wrong type, or parameters whose
        shapes disagree (with each other, the label set or the schema).
    OSError
        If the file cannot be read.
    """
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        record = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"model file {os.fspath(path)!r} is not JSON ({error}); give a file written by "
                         "dpconvex train --out or dpconvex.model_file.save_model.") from error
    try:
        return _checked_model(record)
    except ValueError as error:
        raise ValueError(f"model file {os.fspath(path)!r}: {error}") from error


def _refuse_constant(name: str) -> None:
    """``json.loads``' hook for ``NaN`` and ``Infinity``, which standard JSON (and a model file) does not hold."""
    raise ValueError(f"{name} is not a JSON number")


def _json_value(value: Any) -> Any:
    """``value`` as JSON values: numpy scalars and arrays as Python numbers and lists, tuples as lists, a
    non-finite float as its text (``"inf"``), anything else JSON has no form for as its ``repr``."""
    if isinstance(value, np.ndarray):
        return [_json_value(item) for item in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    return repr(value)


def _checked_model(record: Any) -> SavedModel:
    """The :class:`SavedModel` of a model file's JSON object; ``ValueError`` saying what is wrong."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ValueError(f"not a dpconvex model file (its \"format\" is {found!r}, not {FORMAT!r}); give a file "
                         "written by dpconvex train --out or dpconvex.model_file.save_model.")
    version = record.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"\"format_version\" must be an integer >= 1; got {version!r}.")
    if version > FORMAT_VERSION:
        raise ValueError(f"format version {version} (written by dpconvex {record.get('dpconvex_version')}) is newer "
                         f"than this dpconvex reads ({FORMAT_VERSION}); upgrade dpconvex to load it.")
    missing = [key for key in _KEYS if key not in record]
    unknown = sorted(set(record) - set(_KEYS))
    if missing or unknown:
        found = " and ".join([*([f"missing keys {missing}"] if missing else []),
                              *([f"unknown keys {unknown}"] if unknown else [])])
        raise ValueError(f"{found}; a model file of format version {FORMAT_VERSION} has exactly the keys "
                         f"{list(_KEYS)}.")
    for key, kind in (("dpconvex_version", str), ("estimator", str), ("params", dict), ("certificate", dict)):
        if not isinstance(record[key], kind):
            raise ValueError(f"\"{key}\" must be a JSON {'object' if kind is dict else 'string'}; "
                             f"got {record[key]!r}.")
    coef, intercept, classes = _parameters(record)
    n_features = record["n_features_in"]
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features != coef.shape[-1]:
        raise ValueError(f"\"n_features_in\" must be the number of columns of \"coef\", {coef.shape[-1]}; "
                         f"got {n_features!r}.")
    schema = None if record["schema"] is None else TabularSchema.from_dict(record["schema"])
    if schema is not None and len(feature_names(schema)) != n_features:
        raise ValueError(f"the schema encodes {len(feature_names(schema))} features, but \"coef\" has {n_features}.")
    scale, offset = (_finite(record, key) for key in ("target_scale", "target_offset"))
    if not scale > 0:
        raise ValueError(f"\"target_scale\" must be > 0; got {scale!r}.")
    if classes is not None and (scale, offset) != (1, 0):
        raise ValueError("a classifier's \"target_scale\" and \"target_offset\" must be 1 and 0 (they map a "
                         f"regressor's scores to its target); got {scale!r} and {offset!r}.")
    try:
        certificate = PrivacyCertificate.from_dict(record["certificate"])
    except (TypeError, KeyError) as error:
        raise ValueError(f"\"certificate\" is not a certificate's to_dict(): {error}.") from error
    if not all(isinstance(getattr(certificate, name), (int, float)) for name in ("epsilon", "delta")):
        raise ValueError(f"the certificate's epsilon and delta must be numbers (\"inf\" for no guarantee); got "
                         f"{certificate.epsilon!r} and {certificate.delta!r}.")
    return SavedModel(format=FORMAT, format_version=version, dpconvex_version=record["dpconvex_version"],
                      estimator=record["estimator"], params=record["params"], coef=coef, intercept=intercept,
                      classes=classes, n_features_in=n_features, schema=schema, target_scale=scale,
                      target_offset=offset, certificate=certificate)


def _finite(record: dict[str, Any], key: str) -> float:
    """``record[key]`` as a float, or ``ValueError`` naming the key unless it is a finite JSON number."""
    value = record[key]
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        raise ValueError(f"\"{key}\" must be a finite number; got {value!r}.")
    return float(value)


def _parameters(record: dict[str, Any]) -> tuple[np.ndarray, float | np.ndarray, np.ndarray | None]:
    """``coef``, ``intercept`` and ``classes`` of a model file, read-only, after checking that their shapes agree."""
    try:
        coef = np.array(record["coef"], dtype=np.float64)
        intercept = np.array(record["intercept"], dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"\"coef\" and \"intercept\" must be numbers or lists of numbers of one length: {error}.") \
            from error
    labels = record["classes"]
    if labels is not None and not (isinstance(labels, list) and all(isinstance(v, _LABEL_TYPES) for v in labels)
                                   and len(set(labels)) == len(labels) >= 2):
        raise ValueError(f"\"classes\" must be null (a regressor) or a list of at least two distinct labels; "
                         f"got {labels!r}.")
    rows = 1 if labels is None or len(labels) == 2 else len(labels)  # one weight vector, or one per class
    d = coef.shape[-1] if coef.ndim else 0
    if d < 1 or coef.shape != ((d,) if rows == 1 else (rows, d)) or intercept.shape != (() if rows == 1 else (rows,)):
        kind = "a regressor" if labels is None else f"{len(labels)} classes"
        expected = "(d,) and a number" if rows == 1 else f"({rows}, d) and {rows} numbers"
        raise ValueError(f"\"coef\" and \"intercept\" of {kind} must have shape {expected}; got {coef.shape} "
                         f"and {intercept.shape}.")
    if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
        raise ValueError("\"coef\" and \"intercept\" must be finite numbers.")
    coef.setflags(write=False)
    if intercept.ndim:
        intercept.setflags(write=False)
    classes = None if labels is None else np.asarray(labels)
    if classes is not None:
        classes.setflags(write=False)
    return coef, float(intercept) if intercept.ndim == 0 else intercept, classes
