"""Reading a CSV export as a data frame paired with a :class:`~dpconvex.datasets.tabular.TabularSchema`.

Every cell is read as text, so only the schema's ``missing_values`` mean missing (``NA`` and
``null`` stay categories); numerical columns are then parsed by
:func:`~dpconvex.datasets.encoding.numbers`, the parser of the feature map. Without a declared
schema one is inferred from the file, and a model trained on it has no guarantee. The file's shape
is checked first: every record has as many fields as the header (a ragged row is refused, naming
its line), and there is a header and at least one record.
"""

from __future__ import annotations

import csv
import os
import warnings
from collections import Counter
from collections.abc import Iterator
from typing import TextIO

import pandas as pd

from dpconvex.datasets.cells import EXAMPLES, numbers, text_cells
from dpconvex.datasets.labels import check_task
from dpconvex.datasets.schema import DEFAULT_MISSING_VALUES, TabularSchema
from dpconvex.exceptions import DataDependentPreprocessingWarning

__all__ = ["read_csv", "read_csv_cells"]

#: The delimiters detected, in order of preference when the header line has as many of two.
_DELIMITERS = ",;\t|"

#: The likely cause of a file that the CSV readers cannot split into records.
_UNCLOSED_QUOTE = "look for a quote '\"' that is never closed, and quote every field holding the delimiter"


def read_csv(
    path: str | os.PathLike[str],
    schema: TabularSchema | None = None,
    target: str | None = None,
    positive_label: str | None = None,
    *,
    task: str = "classification",
) -> tuple[pd.DataFrame, TabularSchema]:
    """Read a CSV file (with a header row) and pair it with a schema.

    Every cell is read as text, so ``NA``, ``None``, ``null`` and ``N/A`` stay values
    (categories) and ``"01234"`` stays ``"01234"``; only the schema's ``missing_values`` (by
    default the empty cell) mean missing. The file may start with a UTF-8 byte-order mark; the
    delimiter (``,``, ``;``, tab or ``|``) is detected from its start (if that is not conclusive,
    it is the one the header line has most of); fields may be quoted
    (``"Smith, J."``, also across lines); spaces after a delimiter are skipped; blank lines are
    skipped. Every other line (record) must have as many fields as the header: a short or long
    one is refused, naming its line number as an editor shows it (the header is line 1; a record
    whose quoted field spans lines is numbered by the line where it starts), as are an empty file
    and a header without records. Numerical columns are then parsed
    as floats (NaN where missing). With a ``schema``, its numerical columns are parsed, and
    ``target`` / ``positive_label`` may be given only if they agree with it (``positive_label``
    not at all with a multi-class schema), and ``task`` must fit its target
    (:func:`~dpconvex.datasets.labels.check_task`). Without one, every column except ``target`` whose
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
    task : {"classification", "regression"}, default "classification"
        What the target is for: a class label, or a number (``"regression"``: without a schema,
        the inferred schema's ``target_bounds`` are the target's min and max).

    Returns
    -------
    frame : pandas.DataFrame
    schema : TabularSchema

    Raises
    ------
    ValueError
        If the file is not UTF-8 text or not a CSV table (empty, a header without records, a
        record with more or fewer fields than the header: naming the file and the line), a
        numerical column of the schema has non-numeric values, or ``target`` / ``positive_label``
        / ``task`` are missing or conflict with the schema.
    """
    check_task(task, schema, positive_label)
    if schema is None:
        if target is None:
            raise ValueError("read_csv needs either a schema or a target column name")
        frame = read_csv_cells(path)
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
        return frame, TabularSchema.infer(frame, target, positive_label, task=task)
    for name, given, declared in [
        ("target", target, schema.target),
        ("positive_label", positive_label, schema.positive_label),
    ]:
        if given is not None and given != declared:
            raise ValueError(f"{name}={given!r} conflicts with the schema's {declared!r}")
    frame = read_csv_cells(path)
    for column in schema.numerical:
        if column in frame.columns:
            frame[column] = numbers(frame[column], column, schema.missing_values, lenient=schema.discovered)
    return frame, schema


def _numeric_lookalike(series: pd.Series, column: str) -> str | None:
    """What to say of a column that failed to parse as numbers but looks numeric, or None.

    It looks numeric when some present cell is a number (the others, up to
    :data:`~dpconvex.datasets.encoding.EXAMPLES` of them, are named: ``'NA'``, ``'?'`` ...), or
    when every present cell is a number written with a decimal comma (``'1,5'``).
    """
    text, missing = text_cells(series, DEFAULT_MISSING_VALUES)
    present = pd.Series(text[~missing], dtype=object)
    if present.empty:
        return None
    parsed = pd.to_numeric(present, errors="coerce").notna().to_numpy()
    tokens = sorted(set(present[~parsed]))
    shown = f"{tokens[:EXAMPLES]}{' ...' if len(tokens) > EXAMPLES else ''}"
    comma = pd.to_numeric(present[~parsed].str.replace(",", ".", regex=False), errors="coerce").notna()
    if comma.all() and present[~parsed].str.contains(",", regex=False).all():
        return (f"{column!r} (non-numeric values {shown}, numbers with a decimal comma: write them "
                "with a decimal point, e.g. '1.5' for '1,5', and a ',' or ';' delimiter)")
    if parsed.any():
        return (f"{column!r} ({int((~parsed).sum())} of {parsed.size} present cells are not numbers: "
                f"{shown}; if they mark missing values, list them in the schema's missing_values)")
    return None


def read_csv_cells(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Every cell of a CSV file as text, nothing parsed or inferred (the reading of :func:`read_csv`).

    UTF-8 with or without byte-order mark; the delimiter detected; every record checked to have as
    many fields as the header.  For private schema discovery
    (:func:`~dpconvex.datasets.private_schema.discover_schema`), which reads the cells itself.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.

    Returns
    -------
    pandas.DataFrame
        Of strings (an empty cell is ``""``).

    Raises
    ------
    ValueError
        As :func:`read_csv` does for a file that is not UTF-8 text or not a CSV table.
    """
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            sample = handle.read(1 << 16)
        try:
            delimiter = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
        except csv.Error:  # a single column, or ragged rows: the header line decides ("," if it has none)
            delimiter = max(_DELIMITERS, key=sample.lstrip().partition("\n")[0].count)
        _check_shape(path, delimiter)
        return pd.read_csv(path, sep=delimiter, dtype=str, keep_default_na=False,
                           encoding="utf-8-sig", skipinitialspace=True)
    except pd.errors.ParserError as error:  # e.g. the last field's quote never closed: no record is ragged
        raise ValueError(f"{os.fspath(path)!r} cannot be read as CSV ({error}): {_UNCLOSED_QUOTE}") from error
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{os.fspath(path)!r} is not UTF-8 text (byte {error.start}: {error.reason}); "
            "save it as UTF-8 (e.g. 'CSV UTF-8' in a spreadsheet program)"
        ) from error


def _blank(row: list[str]) -> bool:
    """A blank line (nothing, or only spaces), which pandas skips: no record."""
    return len(row) <= 1 and not "".join(row).strip()


def _check_shape(path: str | os.PathLike[str], delimiter: str) -> None:
    """Refuse an empty file, a header without records, and records whose field count is not the header's.

    One pass of :mod:`csv` over the file, with the dialect pandas reads it with, counting the fields of
    each record (no row is kept); only when that finds a fault does a second pass locate it
    (:func:`_shape_fault`; lines of spaces count as fields in the first pass, so it may find none).
    """
    name = os.fspath(path)
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter, skipinitialspace=True)
        try:
            header = next((row for row in reader if not _blank(row)), None)
            widths = Counter(map(len, reader))
        except csv.Error as error:
            raise ValueError(f"{name!r} line {reader.line_num} cannot be read as CSV ({error}): "
                             f"{_UNCLOSED_QUOTE}") from error
    if header is None:
        raise ValueError(f"{name!r} is empty: a CSV file needs a header line naming the columns, then one line "
                         "per record")
    if set(widths) <= {0, len(header)} and widths[len(header)]:
        return
    with open(path, encoding="utf-8-sig", newline="") as handle:
        fault = _shape_fault(name, handle, delimiter)
    if fault is not None:
        raise fault


def _records(handle: TextIO, delimiter: str) -> Iterator[tuple[int, int, list[str]]]:
    """Every record with the lines it starts and ends on (1-based, as an editor numbers lines); no blank line."""
    reader = csv.reader(handle, delimiter=delimiter, skipinitialspace=True)
    end = 0
    for row in reader:
        start, end = end + 1, reader.line_num
        if not _blank(row):
            yield start, end, row


def _shape_fault(name: str, handle: TextIO, delimiter: str) -> ValueError | None:
    """The error for a file with no record, or with records that do not have the header's field count; else None."""
    records = _records(handle, delimiter)
    _, _, header = next(records)
    ragged, count = [], 0
    for line, end, row in records:
        count += 1
        if len(row) != len(header):
            ragged.append((line, end, len(row)))
    if not count:
        return ValueError(f"{name!r} has a header line ({len(header)} columns) but no records: add the data rows "
                          "below the header, or check that this is the exported file")
    if not ragged:
        return None
    line, end, width = ragged[0]
    more = (f" ({len(ragged)} lines differ from the header: {', '.join(str(at) for at, _, _ in ragged[:EXAMPLES])}"
            f"{' ...' if len(ragged) > EXAMPLES else ''})" if len(ragged) > 1 else "")
    fix = (f"most likely a field holds the delimiter {delimiter!r} without quotes: quote it (\"Smith{delimiter} J.\"), "
           "or remove the extra fields" if width > len(header) else
           "give every record one field per column (an empty field is a missing value), or remove the line")
    if end > line:  # a quoted field runs over several lines: most often a quote left open
        fix = f"the record runs on to line {end}: {_UNCLOSED_QUOTE}; or {fix}"
    return ValueError(f"{name!r} line {line} has {width} fields, the header has {len(header)}{more}: {fix}")
