"""The shape of a CSV file: every record has the header's field count, and there is a header and a record.

``read_csv`` refuses a short (ragged) row, which pandas would pad with empty cells, and a long one,
which pandas would refuse in its own words or, on the first data line, silently read as an index
column; the message names the file, the line (as an editor numbers it: the header is line 1, a record
is numbered by the line it starts on) and both field counts. An empty file, a file of spaces and a
header without records are refused naming the file. Blank lines are skipped; quoted fields may hold
the delimiter and line breaks.
"""

from __future__ import annotations

import json
import re

import pytest

from dpconvex.cli.main import main
from dpconvex.datasets import TabularSchema, read_csv

HEADER = "a,b,c,d,label\n"
ROW = "1,2,x,y,yes\n"
SCHEMA = TabularSchema("label", positive_label="yes", numerical={"a": (0, 9), "b": (0, 9)},
                       categorical={"c": ("x", "z"), "d": ("y", "w")})


def _write(path, text: str, newline: str | None = None) -> str:
    with open(path, "w", encoding="utf-8", newline=newline) as handle:
        handle.write(text)
    return str(path)


def _refusal(path: str) -> str:
    with pytest.raises(ValueError) as error:
        read_csv(path, SCHEMA)
    message = str(error.value)
    assert repr(path) in message  # the file is named
    return message


def test_a_short_row_names_the_line_and_both_counts(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", HEADER + ROW * 5 + "1,2,x\n" + ROW)
    message = _refusal(path)
    assert f"{path!r} line 7 has 3 fields, the header has 5" in message
    assert "one field per column" in message


@pytest.mark.parametrize("line", [2, 9])
def test_a_long_row_names_the_line_and_the_unquoted_delimiter(tmp_path, line) -> None:
    """On line 2 pandas would take the first column for an index without a word; later, raise its own error."""
    path = _write(tmp_path / "data.csv", HEADER + ROW * (line - 2) + "1,2,Smith, J.,y,yes\n" + ROW * 3)
    message = _refusal(path)
    assert f"line {line} has 6 fields, the header has 5" in message
    assert "delimiter ','" in message and 'quote it ("Smith, J.")' in message


def test_several_ragged_rows_are_counted_and_listed(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", HEADER + ROW + "1,2\n" + ROW + "1,2,x,y,yes,extra\n" + "1\n")
    message = _refusal(path)
    assert "line 3 has 2 fields" in message and "(3 lines differ from the header: 3, 5, 6)" in message


def test_line_numbers_with_a_semicolon_delimiter_and_crlf_ends(tmp_path) -> None:
    """The ragged row also defeats the delimiter sniffer: the header line decides (";")."""
    text = "\ufeff" + (HEADER + ROW * 3 + "1;2;x\n").replace(",", ";").replace("\n", "\r\n")
    path = _write(tmp_path / "data.csv", text, newline="")
    assert "line 5 has 3 fields, the header has 5" in _refusal(path)


def test_a_quoted_newline_counts_the_lines_it_spans(tmp_path) -> None:
    """A record is numbered by the line it starts on; a quoted line break moves the records after it down."""
    quoted = '1,2,x,"line one\nline two, with a comma",yes\n'
    path = _write(tmp_path / "data.csv", HEADER + quoted + ROW + "1,2,x\n")  # lines 2-3, 4, then 5
    assert "line 5 has 3 fields" in _refusal(path)
    ragged_record = _write(tmp_path / "ragged.csv", HEADER + ROW + '1,"two\nlines",x\n' + ROW)
    assert "line 3 has 3 fields" in _refusal(ragged_record)


def test_quoted_delimiters_and_newlines_are_read_as_one_field(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", 'a,b,c,d,label\n1,2,"x, or z","y\nstill y",yes\n3,4,x,"say ""w""",no\n')
    frame, _ = read_csv(path, TabularSchema("label", positive_label="yes"))
    assert frame["c"].tolist() == ["x, or z", "x"]
    assert frame["d"].tolist() == ["y\nstill y", 'say "w"']
    assert frame["a"].tolist() == ["1", "3"]


def test_blank_lines_are_skipped(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", "\n" + HEADER + ROW + "\n   \n" + ROW + "\n\n" + "1,2\n")
    assert "line 9 has 2 fields" in _refusal(path)  # the blank lines count as lines, not as records
    fixed = _write(tmp_path / "fixed.csv", HEADER + ROW + "\n   \n" + ROW + "\n")
    frame, _ = read_csv(fixed, SCHEMA)
    assert len(frame) == 2 and frame["label"].tolist() == ["yes", "yes"]


@pytest.mark.parametrize("text", ["", "   \n\n \t \n"])
def test_an_empty_file_is_refused_naming_it(tmp_path, text) -> None:
    path = _write(tmp_path / "empty.csv", text)
    assert f"{path!r} is empty: a CSV file needs a header line" in _refusal(path)


@pytest.mark.parametrize("text", ["a,b,c,d,label", "a,b,c,d,label\n", "a,b,c,d,label\n\n  \n"])
def test_a_header_without_records_is_refused_naming_the_file(tmp_path, text) -> None:
    path = _write(tmp_path / "header.csv", text)
    assert f"{path!r} has a header line (5 columns) but no records" in _refusal(path)


def test_the_shape_is_checked_without_a_schema_too(tmp_path) -> None:
    path = _write(tmp_path / "data.csv", HEADER + ROW + "1,2,x,y\n")
    with pytest.raises(ValueError, match=re.escape(f"{path!r} line 3 has 4 fields, the header has 5")):
        read_csv(path, target="label")


def test_the_cli_reports_a_ragged_row_in_one_line(tmp_path, capsys) -> None:
    path = _write(tmp_path / "data.csv", HEADER + ROW * 3 + "1,2,x\n")
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA.to_dict()))
    assert main(["train", "--csv", path, "--schema", str(schema), "--seed", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("dpconvex: error: ") and err.count("\n") == 1
    assert "line 5 has 3 fields, the header has 5" in err


def test_a_quote_never_closed_is_named_as_the_likely_cause(tmp_path) -> None:
    """Mid-file it swallows the lines after it into one ragged record; in the last field, pandas' own error."""
    middle = _write(tmp_path / "middle.csv", HEADER + '1,2,"x,y,yes\n' + ROW * 2)
    message = _refusal(middle)
    assert "line 2 has 3 fields" in message and "runs on to line 4" in message
    assert "quote '\"' that is never closed" in message
    last = _write(tmp_path / "last.csv", HEADER + ROW + '1,2,x,y,"yes\n')
    assert "cannot be read as CSV" in _refusal(last) and "never closed" in _refusal(last)
