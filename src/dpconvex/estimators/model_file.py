"""A trained model and its certificate in one JSON file, loaded without executing code (no pickle).

:func:`save_model` writes a fitted estimator of :mod:`dpconvex.estimators.linear_model` (or a ``…CV`` one of
:mod:`dpconvex.estimators.model_selection`): its linear parameters, its public label set, the
:class:`~dpconvex.datasets.TabularSchema` that encodes a record into its features (if it was trained
on encoded table rows), the affine map from a regressor's scores to its predictions and its
:class:`~dpconvex.privacy.certificate.PrivacyCertificate`.  :func:`load_model` reads it back as a
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

from dpconvex import __version__
from dpconvex.datasets.encoding import encode
from dpconvex.datasets.tabular import TabularSchema
from dpconvex.estimators.base import PrivateLinearModel, labels_from_scores
from dpconvex.estimators.model_file_checks import FORMAT, FORMAT_VERSION, checked_fields
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["FORMAT", "FORMAT_VERSION", "SEEDED_REASON", "SavedModel", "load_model", "save_model"]

#: Why the file of a model fitted with a fixed seed certifies nothing (its note, via ``without_guarantee``).
SEEDED_REASON = ("the model was trained with a fixed seed (random_state, --seed), so anyone who knows or guesses "
                 "it can reproduce the noise and subtract it (docs/SECURITY.md); the seed is not stored. To "
                 "release a model, train it without a seed")

@dataclass(frozen=True, eq=False)
class SavedModel:
    """A trained linear model read from a model file: what it predicts, how it encodes a record, what it certifies.

    Attributes
    ----------
    format : str
        ``"dpconvex-model"``.
    format_version : int
        The version of the file format (:data:`~dpconvex.estimators.model_file_checks.FORMAT_VERSION` when written by
        this dpconvex).
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
        A fitted estimator of :mod:`dpconvex.estimators.linear_model` or :mod:`dpconvex.estimators.model_selection`.
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
        An estimator fitted with a ``random_state`` is stored without it and with this certificate
        voided (:data:`SEEDED_REASON`): a seeded fit is for experiments, never a release.

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
    if not isinstance(estimator, PrivateLinearModel) or not hasattr(estimator, "privacy_report_"):
        raise ValueError(f"save_model needs a fitted dpconvex estimator (e.g. PrivateLogisticRegression after fit); "
                         f"got {type(estimator).__name__}: fit it first.")
    classes = getattr(estimator, "classes_", None)
    params = estimator.get_params(deep=False)
    certificate = estimator.privacy_report_ if certificate is None else certificate
    for name in ("ledger", "ledger_partition"):  # where the release was recorded is no part of the model
        if name in params:
            params[name] = None
    if params.get("random_state") is not None:  # the seed is never written, and a seeded release certifies nothing
        params["random_state"] = None
        certificate = certificate.without_guarantee(SEEDED_REASON)
    model = SavedModel(**checked_fields({
        "format": FORMAT, "format_version": FORMAT_VERSION, "dpconvex_version": __version__,
        "estimator": type(estimator).__name__, "params": _json_value(params),
        "coef": estimator.coef_.tolist(), "intercept": _json_value(estimator.intercept_),
        "classes": None if classes is None else _json_value(classes), "n_features_in": int(estimator.n_features_in_),
        "schema": None if schema is None else schema.to_dict(), "target_scale": _json_value(target_scale),
        "target_offset": _json_value(target_offset),
        "certificate": _json_value(certificate.to_dict()),
    }))
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
    except (UnicodeDecodeError, ValueError, RecursionError) as error:  # RecursionError: absurdly nested JSON
        raise ValueError(f"model file {os.fspath(path)!r} is not JSON ({type(error).__name__}: {error}); give a "
                         "file written by dpconvex train --out or "
                         "dpconvex.estimators.model_file.save_model.") from error
    try:
        return SavedModel(**checked_fields(record))
    except (ValueError, RecursionError) as error:
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
