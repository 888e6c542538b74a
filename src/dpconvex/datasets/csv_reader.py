"""Reading a CSV export as a data frame paired with a :class:`~dpconvex.datasets.tabular.TabularSchema`.

Every cell is read as text, so only the schema's ``missing_values`` mean missing (``NA`` and
``null`` stay categories); numerical columns are then parsed by
:func:`~dpconvex.datasets.encoding.numbers`, the parser of the feature map. Without a declared
schema one is inferred from the file, and a model trained on it has no guarantee.
"""

from __future__ import annotations

import csv
import os
import warnings

import pandas as pd

from dpconvex.datasets.encoding import _EXAMPLES, numbers, text_cells
from dpconvex.datasets.tabular import DEFAULT_MISSING_VALUES, TabularSchema
from dpconvex.exceptions import DataDependentPreprocessingWarning

__all__ = ["read_csv"]


def read_csv(
    path: str | os.PathLike[str],
    schema: TabularSchema | None = None,
    target: str | None = None,
    positive_label: str | None = None,
) -> tuple[pd.DataFrame, TabularSchema]:
    """Read a CSV file (with a header row) and pair it with a schema.

    Every cell is read as text, so ``NA``, ``None``, ``null`` and ``N/A`` stay values
    (categories) and ``"01234"`` stays ``"01234"``; only the schema's ``missing_values`` (by
    default the empty cell) mean missing. The file may start with a UTF-8 byte-order mark; the
    delimiter (``,``, ``;``, tab or ``|``) is detected from its start; fields may be quoted
    (``"Smith, J."``); spaces after a delimiter are skipped. Numerical columns are then parsed
    as floats (NaN where missing). With a ``schema``, its numerical columns are parsed, and
    ``target`` / ``positive_label`` may be given only if they agree with it (``positive_label``
    not at all with a multi-class schema). Without one, every column except ``target`` whose
    present cells are all numbers is parsed, and the schema is inferred from the file by
    :meth:`~dpconvex.datasets.tabular.TabularSchema.infer` (data-dependent, with a
    :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`); ``target`` is required.
    A column that becomes categorical although it looks numeric (some cells are numbers and
    others, e.g. ``NA``, are not; or numbers with a decimal comma, ``1,5``) is named in a
    further ``DataDependentPreprocessingWarning`` with up to 5 of its non-numeric values and
    the fix (a schema declaring it numerical with those markers in ``missing_values``; decimal
    points).

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    schema : TabularSchema, optional
        The declared schema; None to infer one (no guarantee).
    target : str, optional
        The label column; required without ``schema``.
    positive_label : str, optional
        The label mapped to +1 (see :meth:`~dpconvex.datasets.tabular.TabularSchema.infer`; without
        it and without a schema, a target with more than two distinct values gives a multi-class
        schema).

    Returns
    -------
    frame : pandas.DataFrame
    schema : TabularSchema

    Raises
    ------
    ValueError
        If the file is not UTF-8 text or not a CSV table, a numerical column of the schema
        has non-numeric values, or ``target`` / ``positive_label`` are missing or conflict
        with the schema.
    """
    if schema is None:
        if target is None:
            raise ValueError("read_csv needs either a schema or a target column name")
        frame = _read_text(path)
        lookalikes: list[str] = []
        for column in frame.columns:
            if column != target:
                try:
                    frame[column] = numbers(frame[column], str(column), DEFAULT_MISSING_VALUES)
                except ValueError:  # some present cell is not a number: a categorical column
                    if (note := _numeric_lookalike(frame[column], str(column))) is not None:
                        lookalikes.append(note)
        if lookalikes:
            warnings.warn(
                "read_csv inferred these columns as categorical although their cells look numeric: "
                + "; ".join(lookalikes) + ". Each distinct value becomes a category of its own. "
                "If they are numbers, pass a schema that declares them numerical (with its "
                "missing_values listing markers such as 'NA'), or correct the file.",
                DataDependentPreprocessingWarning,
                stacklevel=2,
            )
        return frame, TabularSchema.infer(frame, target, positive_label)
    if positive_label is not None and schema.classes is not None:
        raise ValueError(
            f"positive_label={positive_label!r} is for a binary schema, but the schema declares the classes "
            f"{list(schema.classes)} (multi-class); leave positive_label out, or declare \"positive_label\" "
            "instead of \"classes\" in the schema"
        )
    for name, given, declared in [
        ("target", target, schema.target),
        ("positive_label", positive_label, schema.positive_label),
    ]:
        if given is not None and given != declared:
            raise ValueError(f"{name}={given!r} conflicts with the schema's {declared!r}")
    frame = _read_text(path)
    for column in schema.numerical:
        if column in frame.columns:
            frame[column] = numbers(frame[column], column, schema.missing_values)
    return frame, schema


def _numeric_lookalike(series: pd.Series, column: str) -> str | None:
    """What to say of a column that failed to parse as numbers but looks numeric, or None.

    It looks numeric when some present cell is a number (the others, up to
    :data:`~dpconvex.datasets.encoding._EXAMPLES` of them, are named: ``'NA'``, ``'?'`` ...), or
    when every present cell is a number written with a decimal comma (``'1,5'``).
    """
    text, missing = text_cells(series, DEFAULT_MISSING_VALUES)
    present = pd.Series(text[~missing], dtype=object)
    if present.empty:
        return None
    parsed = pd.to_numeric(present, errors="coerce").notna().to_numpy()
    tokens = sorted(set(present[~parsed]))
    shown = f"{tokens[:_EXAMPLES]}{' ...' if len(tokens) > _EXAMPLES else ''}"
    comma = pd.to_numeric(present[~parsed].str.replace(",", ".", regex=False), errors="coerce").notna()
    if comma.all() and present[~parsed].str.contains(",", regex=False).all():
        return (f"{column!r} (non-numeric values {shown}, numbers with a decimal comma: write them "
                "with a decimal point, e.g. '1.5' for '1,5', and a ',' or ';' delimiter)")
    if parsed.any():
        return (f"{column!r} ({int((~parsed).sum())} of {parsed.size} present cells are not numbers: "
                f"{shown}; if they mark missing values, list them in the schema's missing_values)")
    return None


def _read_text(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Every cell of a CSV file as text; UTF-8 with or without BOM; delimiter detected."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            sample = handle.read(1 << 16)
        try:
            delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
        except csv.Error:  # e.g. a single column: nothing to detect
            delimiter = ","
        return pd.read_csv(path, sep=delimiter, dtype=str, keep_default_na=False,
                           encoding="utf-8-sig", skipinitialspace=True)
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{os.fspath(path)!r} is not UTF-8 text (byte {error.start}: {error.reason}); "
            "save it as UTF-8 (e.g. 'CSV UTF-8' in a spreadsheet program)"
        ) from error
