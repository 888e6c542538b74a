"""Schema-driven preprocessing of tabular data (Chen, Lee and Kifer, 2019, Section 5).

Categorical columns are one-hot encoded over a declared category set, numerical columns are
scaled to [0, 1] with declared bounds, and every row is then scaled to unit L2 norm. Because
the category sets and bounds are declared up front (a :class:`TabularSchema`), the map from a
record to its feature vector does not depend on the other records, so the preprocessing costs
no privacy. A schema *inferred* from the private data (:meth:`TabularSchema.infer`) breaks
this, and is flagged with ``data_dependent=True`` and a
:class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`; a model trained on its output
has no differential-privacy guarantee (ε = inf).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpconvex.exceptions import DataDependentPreprocessingWarning, PrivacyLeakWarning

__all__ = ["TabularSchema", "preprocess", "feature_names", "read_csv"]


@dataclass(frozen=True)
class TabularSchema:
    """Declared structure of a tabular binary-classification data set.

    Parameters
    ----------
    target : str
        Name of the label column.
    positive_label : str
        Value of ``target`` mapped to +1; every other value is mapped to -1 (one-vs-rest).
    categorical : dict[str, tuple[str, ...]]
        Categorical column -> its categories, in the order of the one-hot block.
    numerical : dict[str, tuple[float, float]]
        Numerical column -> its declared bounds ``(lower, upper)``, ``lower <= upper``.
    data_dependent : bool, default False
        True when any part of the schema was read from the (private) data; training on data
        encoded with such a schema has no differential-privacy guarantee (ε = inf).

    Notes
    -----
    The JSON format read by :meth:`from_json` and written by :meth:`to_json` is::

        {"target": "income", "positive_label": ">50K",
         "categorical": {"sex": ["Female", "Male"], ...},
         "numerical": {"age": [17, 90], ...},
         "data_dependent": false}

    ``"data_dependent"`` is optional (default ``false``); ``"categorical"`` and ``"numerical"``
    may be empty objects. Category values are strings; categorical cells are compared as
    whitespace-stripped strings. Treat the dictionaries as read-only.
    """

    target: str
    positive_label: str
    categorical: dict[str, tuple[str, ...]]
    numerical: dict[str, tuple[float, float]]
    data_dependent: bool = False

    def __post_init__(self) -> None:
        categorical = {str(c): tuple(str(v) for v in cats) for c, cats in self.categorical.items()}
        numerical = {str(c): (float(b[0]), float(b[1])) for c, b in self.numerical.items()}
        for column, cats in categorical.items():
            if not cats or len(set(cats)) != len(cats):
                raise ValueError(
                    f"categorical column {column!r} needs a non-empty list of distinct "
                    f"categories, got {list(cats)}"
                )
        for column, (lower, upper) in numerical.items():
            if not (math.isfinite(lower) and math.isfinite(upper) and lower <= upper):
                raise ValueError(
                    f"numerical column {column!r} needs finite bounds lower <= upper, "
                    f"got ({lower}, {upper})"
                )
        overlap = sorted(set(categorical) & set(numerical))
        if overlap:
            raise ValueError(f"columns declared both categorical and numerical: {overlap}")
        if self.target in categorical or self.target in numerical:
            raise ValueError(f"target column {self.target!r} is also declared as a feature")
        object.__setattr__(self, "positive_label", str(self.positive_label))
        object.__setattr__(self, "categorical", categorical)
        object.__setattr__(self, "numerical", numerical)

    @property
    def columns(self) -> list[str]:
        """Feature columns in feature order: numerical first, then categorical."""
        return [*self.numerical, *self.categorical]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-compatible dictionary described in the class docstring."""
        return {
            "target": self.target,
            "positive_label": self.positive_label,
            "categorical": {c: list(cats) for c, cats in self.categorical.items()},
            "numerical": {c: list(bounds) for c, bounds in self.numerical.items()},
            "data_dependent": self.data_dependent,
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> TabularSchema:
        """Build a schema from the dictionary format described in the class docstring."""
        keys = {"target", "positive_label", "categorical", "numerical", "data_dependent"}
        if not {"target", "positive_label"} <= set(spec) <= keys:
            raise ValueError(
                "schema needs the keys target and positive_label, and only keys among "
                f"{sorted(keys)}; got {sorted(spec)}"
            )
        return cls(
            target=spec["target"],
            positive_label=spec["positive_label"],
            categorical=dict(spec.get("categorical", {})),
            numerical=dict(spec.get("numerical", {})),
            data_dependent=bool(spec.get("data_dependent", False)),
        )

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> TabularSchema:
        """Read a schema from a JSON file (format in the class docstring)."""
        with open(path, encoding="utf-8") as handle:
            return cls.from_dict(json.load(handle))

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write the schema to a JSON file (format in the class docstring)."""
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.to_dict(), handle, indent=2)
            handle.write("\n")

    @classmethod
    def infer(
        cls, frame: pd.DataFrame, target: str, positive_label: str | None = None
    ) -> TabularSchema:
        """Read a schema from the data itself (then no differential-privacy guarantee holds).

        Every column except ``target`` is a feature: numeric (non-boolean) columns become
        numerical with bounds ``(min, max)``, all others categorical with their sorted distinct
        values. Emits :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning` and sets
        ``data_dependent=True``. The minimum, maximum and category set of a column can each
        hinge on one record, so a model trained on data encoded this way has no guarantee:
        ``dpconvex train`` then reports ε = inf.

        Parameters
        ----------
        frame : pandas.DataFrame
            The data.
        target : str
            Name of the label column.
        positive_label : str, optional
            Value of ``target`` mapped to +1. Required unless the target column has exactly two
            distinct values, in which case the one that sorts last (as a string) is chosen,
            e.g. ``">50K"`` over ``"<=50K"`` and ``"1"`` over ``"0"``.

        Returns
        -------
        TabularSchema
        """
        _require_columns(frame, [target])
        labels = _as_strings(frame[target], target)
        read = "" if positive_label is not None else "the positive label, "
        if positive_label is None:
            distinct = sorted(set(labels))
            if len(distinct) != 2:
                raise ValueError(
                    f"positive_label is required: target {target!r} has {len(distinct)} "
                    "distinct values, not 2"
                )
            positive_label = distinct[-1]
        categorical: dict[str, tuple[str, ...]] = {}
        numerical: dict[str, tuple[float, float]] = {}
        for column in frame.columns:
            if column == target:
                continue
            series = frame[column]
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                values = _as_floats(series, str(column))
                numerical[str(column)] = (float(values.min()), float(values.max()))
            else:
                categorical[str(column)] = tuple(sorted(set(_as_strings(series, str(column)))))
        warnings.warn(
            f"TabularSchema.infer read {read}the category sets of {len(categorical)} "
            f"columns and the bounds of {len(numerical)} columns from the data; this "
            "preprocessing is NOT covered by any differential-privacy guarantee, so a model "
            "trained on its output has none (epsilon = inf). Declare the schema in advance "
            "(TabularSchema.from_json) to avoid this.",
            DataDependentPreprocessingWarning,
            stacklevel=2,
        )
        return cls(target, positive_label, categorical, numerical, data_dependent=True)


def feature_names(schema: TabularSchema) -> list[str]:
    """Names of the columns of ``preprocess``'s ``X``.

    Numerical columns come first (named by column), then one block per categorical column
    with one feature ``"column=category"`` per category, in schema order.
    """
    names = list(schema.numerical)
    for column, cats in schema.categorical.items():
        names.extend(f"{column}={cat}" for cat in cats)
    return names


def preprocess(frame: pd.DataFrame, schema: TabularSchema, *,
               allow_data_dependent: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Encode a data frame as unit-norm feature rows and {-1, +1} labels.

    Numerical columns are scaled to [0, 1] by ``(x - lower) / (upper - lower)`` (a column with
    ``lower == upper`` maps to 0); values outside the declared bounds are clipped into [0, 1]
    with a :class:`~dpconvex.exceptions.PrivacyLeakWarning` giving the count. Categorical
    columns are one-hot encoded. Each row is then divided by its L2 norm (an all-zero row stays
    zero). The label is +1 where ``target == schema.positive_label`` and -1 for every other
    value (one-vs-rest). Columns of ``frame`` not in the schema are ignored.

    Parameters
    ----------
    frame : pandas.DataFrame
        The data; must contain the target and every feature column of ``schema``.
    schema : TabularSchema
        Declared categories and bounds.
    allow_data_dependent : bool, default False
        A schema with ``data_dependent=True`` (read from the private data, e.g. by
        :meth:`TabularSchema.infer`) is refused unless this is True: no model trained on its output
        has a privacy guarantee, so whoever opts in must void the certificate
        (:meth:`~dpconvex.certificate.PrivacyCertificate.without_guarantee`), as ``dpconvex train``
        does.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, d)
        Features in the order of :func:`feature_names`; rows have unit L2 norm (or are zero).
    y : numpy.ndarray of int64, shape (n,)
        Labels in {-1, +1}.

    Raises
    ------
    ValueError
        If a column is missing, a categorical value is not in the schema, or a value is
        missing (NaN) or non-numeric in a numerical column; or the schema is data-dependent and
        ``allow_data_dependent`` is False.
    """
    if schema.data_dependent and not allow_data_dependent:
        raise ValueError(
            "the schema is data_dependent (read from the private data), so no model trained on this "
            "preprocessing has a differential-privacy guarantee; declare the schema, or pass "
            "allow_data_dependent=True and void the certificate (PrivacyCertificate.without_guarantee)"
        )
    _require_columns(frame, [schema.target, *schema.columns])
    n = len(frame)
    blocks: list[np.ndarray] = []
    clipped: dict[str, int] = {}
    for column, (lower, upper) in schema.numerical.items():
        values = _as_floats(frame[column], column)
        scaled = (values - lower) / (upper - lower) if upper > lower else values - lower
        outside = int(np.count_nonzero((scaled < 0.0) | (scaled > 1.0)))
        if outside:
            clipped[column] = outside
        blocks.append(np.clip(scaled, 0.0, 1.0).reshape(n, 1))
    for column, cats in schema.categorical.items():
        values = _as_strings(frame[column], column)
        codes = pd.Index(cats, dtype=object).get_indexer(values)
        if np.any(codes < 0):
            unknown = sorted(set(values[codes < 0]))
            raise ValueError(
                f"categorical column {column!r} has values not declared in the schema: "
                f"{unknown}; add them to the schema's category list"
            )
        block = np.zeros((n, len(cats)))
        block[np.arange(n), codes] = 1.0
        blocks.append(block)
    if clipped:
        warnings.warn(
            f"{sum(clipped.values())} numerical values lay outside their declared bounds and "
            f"were clipped into [0, 1] (per column: {clipped})",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    features = np.hstack(blocks) if blocks else np.zeros((n, 0))
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    X = np.divide(features, norms, out=np.zeros_like(features), where=norms > 0)
    labels = _as_strings(frame[schema.target], schema.target)
    y = np.where(labels == schema.positive_label, 1, -1).astype(np.int64)
    return X, y


def read_csv(
    path: str | os.PathLike[str],
    schema: TabularSchema | None = None,
    target: str | None = None,
    positive_label: str | None = None,
) -> tuple[pd.DataFrame, TabularSchema]:
    """Read a CSV file (with a header row) and pair it with a schema.

    The file is read with ``pandas.read_csv(path, skipinitialspace=True)``. With a ``schema``,
    its categorical columns and target are read as strings (``"01234"`` stays ``"01234"``), and
    ``target`` / ``positive_label`` may be given only if they agree with it. Without one, the
    schema is :meth:`TabularSchema.infer`-red from the file (data-dependent, with a
    :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`) and ``target`` is required.

    Returns
    -------
    frame : pandas.DataFrame
    schema : TabularSchema
    """
    if schema is None:
        if target is None:
            raise ValueError("read_csv needs either a schema or a target column name")
        frame = pd.read_csv(path, skipinitialspace=True)
        return frame, TabularSchema.infer(frame, target, positive_label)
    for name, given, declared in [
        ("target", target, schema.target),
        ("positive_label", positive_label, schema.positive_label),
    ]:
        if given is not None and given != declared:
            raise ValueError(f"{name}={given!r} conflicts with the schema's {declared!r}")
    as_text = {column: str for column in [schema.target, *schema.categorical]}
    frame = pd.read_csv(path, skipinitialspace=True, dtype=as_text)
    return frame, schema


def _require_columns(frame: pd.DataFrame, columns: list[str]) -> None:
    """Raise ValueError naming the ``columns`` absent from ``frame``."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"data frame is missing columns: {missing}")


def _as_strings(series: pd.Series, column: str) -> np.ndarray:
    """Whitespace-stripped string values of ``series``; ValueError on missing values."""
    if series.isna().any():
        raise ValueError(
            f"column {column!r} has {int(series.isna().sum())} missing values; fill them "
            "(e.g. with '?') and declare that value as a category"
        )
    return np.array([str(value).strip() for value in series], dtype=object)


def _as_floats(series: pd.Series, column: str) -> np.ndarray:
    """Float values of a numerical column; ValueError on NaN or non-numeric values."""
    try:
        values = pd.to_numeric(series, errors="raise").to_numpy(dtype=np.float64)
    except (ValueError, TypeError) as error:
        raise ValueError(f"numerical column {column!r} has non-numeric values") from error
    if np.isnan(values).any():
        raise ValueError(
            f"numerical column {column!r} has {int(np.isnan(values).sum())} NaN values"
        )
    return values
