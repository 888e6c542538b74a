"""One column's cells as a table holds them: text, numbers, missing markers, and the messages about them.

The parsers every reader of tabular data shares (:mod:`dpconvex.datasets.encoding`,
:mod:`dpconvex.datasets.labels`, :mod:`dpconvex.datasets.schema`, :mod:`dpconvex.datasets.csv_reader`);
each cell's value depends on that cell and the declared missing markers only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["EXAMPLES", "numbers", "outside_note", "parse_numbers", "require_columns", "text_cells"]

#: How many offending values an error message lists.
EXAMPLES = 5


def require_columns(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise ValueError naming the ``columns`` absent from ``frame``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The data.
    columns : sequence of str
        The columns it must contain.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Listing every column of ``columns`` that ``frame`` lacks.
    """
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"data frame is missing columns: {missing}")


def text_cells(series: pd.Series, missing_values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Whitespace-stripped text of every cell, and where a cell is missing.

    A cell is missing when it is NaN/None, or when its stripped text is one of
    ``missing_values`` (compared with the cell's text, e.g. ``""`` for an empty CSV cell).

    Parameters
    ----------
    series : pandas.Series
        One column.
    missing_values : sequence of str
        Cell texts that mean missing (the schema's ``missing_values``).

    Returns
    -------
    text : numpy.ndarray of str (object)
        ``str(cell).strip()`` of every cell (a float cell keeps its float text, ``"1.0"``; a
        categorical column reads it as ``"1"`` when ``"1.0"`` is not declared, see
        :func:`~dpconvex.datasets.encoding.encode`).
    missing : numpy.ndarray of bool
    """
    text = np.array([str(value).strip() for value in series], dtype=object)
    missing = series.isna().to_numpy(dtype=bool)
    if missing_values:
        missing = missing | np.isin(text, list(missing_values))
    return text, missing


def parse_numbers(series: pd.Series, missing_values: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parser of numeric cells: float values, where a cell is missing, and the texts that are not numbers.

    Parameters
    ----------
    series : pandas.Series
        One column: numbers, or texts of numbers (a numeric dtype is taken as it is).
    missing_values : sequence of str
        Cell texts that mean missing (see :func:`text_cells`).

    Returns
    -------
    values : numpy.ndarray of float64, shape (len(series),)
        NaN where a cell is missing or not a number.
    missing : numpy.ndarray of bool, shape (len(series),)
    non_numeric : numpy.ndarray of str (object)
        The text of every present cell that is not a number, in row order.
    """
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return values, np.isnan(values), np.array([], dtype=object)
    text, missing = text_cells(series, missing_values)
    values = np.full(len(text), np.nan)
    values[~missing] = pd.to_numeric(pd.Series(text[~missing], dtype=object), errors="coerce")
    return values, missing, text[np.isnan(values) & ~missing]


def numbers(series: pd.Series, column: str, missing_values: Sequence[str], *, lenient: bool = False) -> np.ndarray:
    """Float values of a numerical column, NaN where a cell is missing (see :func:`parse_numbers`).

    Parameters
    ----------
    series : pandas.Series
        One column: numbers, or texts of numbers (a numeric dtype is taken as it is).
    column : str
        The column's name, for the message.
    missing_values : sequence of str
        Cell texts that mean missing.
    lenient : bool, default False
        Read a non-numeric cell as missing instead of refusing it (a privately discovered schema,
        :attr:`~dpconvex.datasets.schema.TabularSchema.discovered`).

    Returns
    -------
    numpy.ndarray of float64, shape (len(series),)

    Raises
    ------
    ValueError
        Naming the column and some of its non-numeric values (unless ``lenient``).
    """
    values, _, non_numeric = parse_numbers(series, missing_values)
    if non_numeric.size and not lenient:
        raise ValueError(
            f"numerical column {column!r} has {non_numeric.size} non-numeric values "
            f"(e.g. {sorted(set(non_numeric))[:EXAMPLES]}); correct them, declare the column "
            "categorical, or list such markers in the schema's missing_values"
        )
    return values


def outside_note(column: str, count: int, bounds: tuple[float, float]) -> str:
    """How a clipping warning names one column: ``"column 'age': 2 outside [17, 90]"``.

    Parameters
    ----------
    column : str
        The clipped column.
    count : int
        How many of its values lay outside ``bounds``.
    bounds : tuple of float
        The declared ``(lower, upper)``.

    Returns
    -------
    str
    """
    return f"column {column!r}: {count} outside [{bounds[0]:.10g}, {bounds[1]:.10g}]"
