"""Checks of a model file's JSON object (:func:`~dpconvex.estimators.model_file.load_model`): its format, keys,
shapes, label
set and certificate, each refusal naming the key and its valid form."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin

from dpconvex.accounting._checks import check_positive
from dpconvex.datasets.tabular import TabularSchema, feature_names
from dpconvex.estimators import linear_model as estimators
from dpconvex.estimators import model_selection
from dpconvex.estimators.base import PrivateLinearModel
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["FORMAT", "FORMAT_VERSION", "KEYS", "checked_fields"]

#: The ``"format"`` of a model file.
FORMAT = "dpconvex-model"

#: The newest ``"format_version"`` this dpconvex writes and reads.
FORMAT_VERSION = 1

#: The keys of a model file, in the order they are written.
KEYS = ("format", "format_version", "dpconvex_version", "estimator", "params", "coef", "intercept", "classes",
         "n_features_in", "schema", "target_scale", "target_offset", "certificate")

#: What a label of ``classes`` may be in the file: the JSON scalars.
_LABEL_TYPES = (str, int, float, bool)


def checked_fields(record: Any) -> dict[str, Any]:
    """The fields of the :class:`~dpconvex.estimators.model_file.SavedModel` of a model file's JSON object;
    ``ValueError`` saying what is wrong.

    Parameters
    ----------
    record : object
        The parsed JSON.

    Returns
    -------
    dict
        The ``SavedModel``'s keyword arguments.
    """
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ValueError(f"not a dpconvex model file (its \"format\" is {found!r}, not {FORMAT!r}); give a file "
                         "written by dpconvex train --out or dpconvex.estimators.model_file.save_model.")
    version = record.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"\"format_version\" must be an integer >= 1; got {version!r}.")
    if version > FORMAT_VERSION:
        raise ValueError(f"format version {version} (written by dpconvex {record.get('dpconvex_version')}) is newer "
                         f"than this dpconvex reads ({FORMAT_VERSION}); upgrade dpconvex to load it.")
    missing = [key for key in KEYS if key not in record]
    unknown = sorted(set(record) - set(KEYS))
    if missing or unknown:
        found = " and ".join([*([f"missing keys {missing}"] if missing else []),
                              *([f"unknown keys {unknown}"] if unknown else [])])
        raise ValueError(f"{found}; a model file of format version {FORMAT_VERSION} has exactly the keys "
                         f"{list(KEYS)}.")
    for key, kind in (("dpconvex_version", str), ("estimator", str), ("params", dict), ("certificate", dict)):
        if not isinstance(record[key], kind):
            raise ValueError(f"\"{key}\" must be a JSON {'object' if kind is dict else 'string'}; "
                             f"got {record[key]!r}.")
    classifier = _is_classifier(record["estimator"])
    coef, intercept, classes = _parameters(record)
    if classifier != (classes is not None):
        raise ValueError(f"\"estimator\" {record['estimator']!r} is a {'classifier' if classifier else 'regressor'}, "
                         f"so \"classes\" must be {'its label set' if classifier else 'null'}; "
                         f"got {record['classes']!r}.")
    n_features = record["n_features_in"]
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features != coef.shape[-1]:
        raise ValueError(f"\"n_features_in\" must be the number of columns of \"coef\", {coef.shape[-1]}; "
                         f"got {n_features!r}.")
    schema = None if record["schema"] is None else TabularSchema.from_dict(record["schema"])
    if schema is not None and len(feature_names(schema)) != n_features:
        raise ValueError(f"the schema encodes {len(feature_names(schema))} features, but \"coef\" has {n_features}.")
    if schema is not None and schema.task is not None:
        declared = None if schema.label_set is None else sorted(schema.label_set)
        if (None if classes is None else classes.tolist()) != declared:
            raise ValueError(f"\"classes\" {record['classes']!r} is not the sorted label set of the schema's "
                             f"{schema.task} target ({declared!r}).")
    scale, offset = (_finite(record, key) for key in ("target_scale", "target_offset"))
    check_positive(scale, '"target_scale"')
    if classes is not None and (scale, offset) != (1, 0):
        raise ValueError("a classifier's \"target_scale\" and \"target_offset\" must be 1 and 0 (they map a "
                         f"regressor's scores to its target); got {scale!r} and {offset!r}.")
    try:
        certificate = PrivacyCertificate.from_dict(record["certificate"])
    except (TypeError, KeyError) as error:
        raise ValueError(f"\"certificate\" is not a certificate's to_dict(): {error}.") from error
    epsilon, delta = certificate.epsilon, certificate.delta
    if not (isinstance(epsilon, (int, float)) and isinstance(delta, (int, float)) and epsilon >= 0
            and 0 <= delta <= 1 and isinstance(record["certificate"].get("notes", []), list)
            and all(isinstance(note, str) for note in certificate.notes)):
        raise ValueError(f"the certificate's epsilon must be a number >= 0 (\"inf\" for no guarantee), its delta a "
                         f"number in [0, 1] and its notes a list of texts; got {epsilon!r}, {delta!r} and "
                         f"{record['certificate'].get('notes')!r}.")
    return dict(format=FORMAT, format_version=version, dpconvex_version=record["dpconvex_version"],
                estimator=record["estimator"], params=record["params"], coef=coef, intercept=intercept,
                classes=classes, n_features_in=n_features, schema=schema, target_scale=scale,
                target_offset=offset, certificate=certificate)


def _is_classifier(name: str) -> bool:
    """Whether ``name`` is a dpconvex classifier (else a regressor); ``ValueError`` unless it names an estimator."""
    kind = getattr(estimators, name, None) or getattr(model_selection, name, None)
    if not (isinstance(kind, type) and issubclass(kind, PrivateLinearModel) and not name.startswith("_")):
        raise ValueError(f"\"estimator\" must name a dpconvex estimator (e.g. 'PrivateLogisticRegression'); "
                         f"got {name!r}.")
    return issubclass(kind, ClassifierMixin)


def _numbers(value: Any) -> bool:
    """Whether ``value`` is a JSON number (not a boolean) or a (nested) list of them."""
    if isinstance(value, list):
        return all(_numbers(item) for item in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(record: dict[str, Any], key: str) -> float:
    """``record[key]`` as a float, or ``ValueError`` naming the key unless it is a finite JSON number."""
    value = record[key]
    if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
        raise ValueError(f"\"{key}\" must be a finite number; got {value!r}.")
    return float(value)


def _parameters(record: dict[str, Any]) -> tuple[np.ndarray, float | np.ndarray, np.ndarray | None]:
    """``coef``, ``intercept`` and ``classes`` of a model file, read-only, after checking that their shapes agree."""
    for key in ("coef", "intercept"):
        if not _numbers(record[key]):
            raise ValueError(f"\"{key}\" must be a JSON number or a list of numbers (lists of lists for several "
                             f"classes); got {record[key]!r:.200}.")
    try:
        coef = np.array(record["coef"], dtype=np.float64)
        intercept = np.array(record["intercept"], dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"\"coef\" and \"intercept\" must be numbers or lists of numbers of one length: {error}.") \
            from error
    labels = record["classes"]
    if labels is not None and not (isinstance(labels, list) and all(isinstance(v, _LABEL_TYPES) for v in labels)
                                   and len({type(v) for v in labels}) == 1 and len(set(labels)) == len(labels) >= 2):
        raise ValueError(f"\"classes\" must be null (a regressor) or a list of at least two distinct labels of one "
                         "type; "
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
