"""The feature map of a :class:`~dpconvex.datasets.tabular.TabularSchema`, record by record, and its cell parsers.

One code path: :func:`~dpconvex.datasets.tabular.preprocess` (hence ``load_adult`` and
``dpconvex train --csv``) and :class:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer` both call
:func:`encode`, and :func:`~dpconvex.datasets.csv_reader.read_csv` parses cells with the same
:func:`~dpconvex.datasets.cells.text_cells` / :func:`~dpconvex.datasets.cells.numbers`; the label map of
the target column is :mod:`dpconvex.datasets.labels` (:func:`~dpconvex.datasets.labels.encode_labels`). Every output row
depends on its own record and the declared schema only, so the maps cost no privacy.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpconvex.datasets.cells import (  # noqa: F401 (re-exported: this module was their home)
    EXAMPLES,
    numbers,
    outside_note,
    parse_numbers,
    require_columns,
    text_cells,
)
from dpconvex.datasets.labels import encode_labels  # noqa: F401 (re-exported: this module was its home)
from dpconvex.exceptions import PrivacyLeakWarning

if TYPE_CHECKING:
    from dpconvex.datasets.schema import TabularSchema

__all__ = ["OTHER_SLOT", "MISSING_INDICATOR", "encode", "feature_names", "numbers", "outside_note", "parse_numbers",
           "require_columns", "text_cells"]

#: Suffix of the feature ``"column=<missing/other>"`` of a categorical column (``other_slot=True``).
OTHER_SLOT = "<missing/other>"

#: Suffix of the indicator feature ``"column=<missing>"`` of a numerical column with a declared fill.
MISSING_INDICATOR = "<missing>"

def feature_names(schema: TabularSchema) -> list[str]:
    """Names of the columns of :func:`encode`'s output, i.e. of ``preprocess``'s ``X``.

    Numerical columns come first, each named by its column and followed, if it has a declared
    fill, by its indicator ``"column=<missing>"``; then one block per categorical column with
    one feature ``"column=category"`` per category in schema order and, with
    ``schema.other_slot``, a last feature ``"column=<missing/other>"``.

    Parameters
    ----------
    schema : TabularSchema
        The declared schema; only its column declarations are read, no data.

    Returns
    -------
    list of str
        One name per output column, in the order of :func:`encode`'s columns.
    """
    names: list[str] = []
    for column in schema.numerical:
        names.append(column)
        if column in schema.numeric_fill:
            names.append(f"{column}={MISSING_INDICATOR}")
    for column, cats in schema.categorical.items():
        names.extend(f"{column}={cat}" for cat in cats)
        if schema.other_slot:
            names.append(f"{column}={OTHER_SLOT}")
    return names


def encode(frame: pd.DataFrame, schema: TabularSchema, row_norm: float = 1.0) -> np.ndarray:
    """Encode the schema's feature columns of ``frame`` as rows of L2 norm ``row_norm`` (or zero).

    Numerical columns: missing cells take the declared ``schema.numeric_fill`` value (and the
    column's indicator feature is 1), values are clipped into the declared bounds (with a
    :class:`~dpconvex.exceptions.PrivacyLeakWarning` giving the count and bounds per column) and scaled to [0, 1] by
    ``(x - lower) / (upper - lower)`` (a column with ``lower == upper`` maps to 0). Categorical
    columns are one-hot encoded, a float cell with an integral value reading as the integer
    (``1.0`` as ``"1"``, as pandas stores an integer column with a NaN) unless its float text is
    declared; with ``schema.other_slot`` a missing cell, or a value not among the declared
    categories (with a ``PrivacyLeakWarning`` giving the count and up to 5 of the values per
    column), goes to the column's ``<missing/other>`` feature. Each row is then scaled to L2 norm
    ``row_norm``; an all-zero row stays zero. Columns of ``frame`` not in the schema are ignored.
    A privately discovered schema (:attr:`~dpconvex.datasets.schema.TabularSchema.discovered`) reads a
    non-numeric cell of a numerical column as missing and gives neither warning.

    Parameters
    ----------
    frame : pandas.DataFrame
        Must contain every feature column of ``schema``.
    schema : TabularSchema
    row_norm : float, default 1.0
        The declared L2 norm of the output rows.

    Returns
    -------
    numpy.ndarray of float64, shape (len(frame), len(feature_names(schema)))

    Raises
    ------
    ValueError
        Naming the column and what to do, if a column is absent, a numerical column has a
        non-numeric value or a missing value without a declared fill, or (without
        ``schema.other_slot``) a categorical column has a missing or undeclared value.
    """
    require_columns(frame, schema.columns)
    n = len(frame)
    blocks: list[np.ndarray] = []
    clipped: dict[str, int] = {}
    for column, (lower, upper) in schema.numerical.items():
        values = numbers(frame[column], column, schema.missing_values, lenient=schema.discovered)
        missing = np.isnan(values)
        if column in schema.numeric_fill:
            values = np.where(missing, schema.numeric_fill[column], values)
        elif missing.any():
            raise ValueError(
                f"numerical column {column!r} has {int(missing.sum())} missing values (NaN or "
                f"empty); declare a fill value for it in the schema (numeric_fill={{{column!r}: "
                "value}), which also adds the indicator feature "
                f"'{column}={MISSING_INDICATOR}', or fill them in the data"
            )
        scaled = (values - lower) / (upper - lower) if upper > lower else values - lower
        outside = int(np.count_nonzero((scaled < 0.0) | (scaled > 1.0)))
        if outside:
            clipped[column] = outside
        blocks.append(np.clip(scaled, 0.0, 1.0).reshape(n, 1))
        if column in schema.numeric_fill:
            blocks.append(missing.astype(np.float64).reshape(n, 1))
    others: dict[str, int] = {}
    examples: dict[str, list[str]] = {}
    for column, cats in schema.categorical.items():
        codes, undeclared = _category_codes(frame[column], column, cats, schema)
        if undeclared:
            others[column], examples[column] = len(undeclared), sorted(set(undeclared))[:EXAMPLES]
        block = np.zeros((n, len(cats) + schema.other_slot))
        block[np.arange(n), codes] = 1.0
        blocks.append(block)
    if clipped and not schema.discovered:
        per_column = "; ".join(outside_note(column, count, schema.numerical[column])
                               for column, count in clipped.items())
        warnings.warn(f"{sum(clipped.values())} numerical values lay outside their declared bounds and were clipped "
                      f"to them ({per_column})", PrivacyLeakWarning, stacklevel=3)
    if others and not schema.discovered:
        warnings.warn(
            f"{sum(others.values())} categorical values were not among the declared categories "
            f"and went to their column's {OTHER_SLOT} feature (per column: {others}; values, up to "
            f"{EXAMPLES} per column: {examples}); declare "
            "them in the schema to give them features of their own",
            PrivacyLeakWarning,
            stacklevel=3,
        )
    features = np.hstack(blocks) if blocks else np.zeros((n, 0))
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    return np.divide(features, norms, out=np.zeros_like(features), where=norms > 0) * row_norm


def _integral_text(value: object) -> str | None:
    """``"1"`` for a float cell holding 1.0 (exactly an integer, |x| < 2**53); None otherwise."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer() \
            and abs(value) < 2.0**53:
        return str(int(value))
    return None


def _category_codes(
    series: pd.Series, column: str, cats: tuple[str, ...], schema: TabularSchema
) -> tuple[np.ndarray, list[str]]:
    """One-hot positions of a categorical column's cells, and the undeclared values (one per row).

    A float cell with an integral value whose text (``"1.0"``) is not declared reads as the
    integer (``"1"``): pandas stores an integer column with a NaN as floats.  With
    ``schema.other_slot`` missing and undeclared cells get position ``len(cats)``; without it
    they raise ValueError naming the column and what to do.
    """
    text, missing = text_cells(series, schema.missing_values)
    index = pd.Index(cats, dtype=object)
    codes = index.get_indexer(text)
    for row in np.flatnonzero((codes < 0) & ~missing):
        if (integral := _integral_text(series.iloc[row])) is not None:
            text[row] = integral
            codes[row] = index.get_indexer([integral])[0]
    codes[missing] = -1
    undeclared = (codes < 0) & ~missing
    if schema.other_slot:
        codes[codes < 0] = len(cats)
        return codes, list(text[undeclared])
    if missing.any():
        raise ValueError(
            f"categorical column {column!r} has {int(missing.sum())} missing values; set "
            "other_slot=True in the schema (\"other_slot\": true) to give them a "
            f"'{column}={OTHER_SLOT}' feature, or fill them with a declared category"
        )
    if undeclared.any():
        raise ValueError(
            f"categorical column {column!r} has values not declared in the schema: "
            f"{sorted(set(text[undeclared]))[:EXAMPLES]}; add them to the schema's category "
            f"list, or set other_slot=True to send them to a '{column}={OTHER_SLOT}' feature"
        )
    return codes, []
