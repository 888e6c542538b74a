"""How the ``dpconvex`` command behaves around its results: refusals, version, help, defaults, notes and warnings.

Most cases run in-process through :func:`dpconvex.cli.main.main`; the ones about the exit status of the
command itself, or about what Python prints for a warning (pytest records warnings instead of
printing them), run it in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import csv
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import dpconvex
from dpconvex.cli import output as cli_output
from dpconvex.cli.choices import MODELS
from dpconvex.cli.main import build_parser, main
from dpconvex.cli.output import MIN_HELD_OUT

#: Modules the light paths of the command (help, version) must not import (as tests/test_cli_imports.py).
HEAVY = ("matplotlib", "tqdm", "sklearn", "dpconvex_lab", "dpconvex.audit", "dp_accounting")


def _command() -> list[str]:
    """The installed console script, or the module run as one."""
    beside_python = Path(sys.executable).parent / ("dpconvex.exe" if os.name == "nt" else "dpconvex")
    script = str(beside_python) if beside_python.exists() else shutil.which("dpconvex")
    return [script] if script else [sys.executable, "-m", "dpconvex.cli.main"]


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONWARNINGS": ""}
    return subprocess.run([*_command(), *argv], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


def _write_table(directory: Path, rows: int) -> tuple[Path, Path]:
    """A CSV of ``rows`` records (colour, age, label) and its declared schema."""
    data, schema = directory / "data.csv", directory / "schema.json"
    with open(data, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["colour", "age", "label"])
        writer.writerows((("red", "blue")[i % 2], 20 + i % 50, ("yes", "no")[(i // 2) % 2]) for i in range(rows))
    declared = {"target": "label", "positive_label": "yes", "categorical": {"colour": ["blue", "red"]},
                "numerical": {"age": [0, 100]}}
    schema.write_text(json.dumps(declared), encoding="utf-8")
    return data, schema


# ----------------------------------------------------------------------------- data options without --csv
@pytest.mark.parametrize("extra, named", [
    (["--schema", "schema.json"], ["--schema"]),
    (["--target", "label"], ["--target"]),
    (["--positive", "yes"], ["--positive"]),
    (["--schema", "schema.json", "--target", "label"], ["--schema", "--target"]),
], ids=["schema", "target", "positive", "schema-and-target"])
def test_data_options_without_csv_are_refused(capsys, extra, named):
    """Without --csv, train would use Adult and ignore them: exit 2, one line naming them and --csv."""
    assert main(["train", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("dpconvex: error: ") and err.count("\n") == 1
    assert all(option in err for option in named) and "--csv" in err and "Adult" in err


def test_schema_without_csv_exits_2_without_traceback(tmp_path):
    _, schema = _write_table(tmp_path, 10)
    done = _run(["train", "--schema", str(schema)])
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("dpconvex: error: --schema applies to your own data file only (--csv FILE")
    assert "Traceback" not in done.stderr


# ----------------------------------------------------------------------------- version, bare command
def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    out, err = capsys.readouterr()
    assert out == f"dpconvex {importlib.metadata.version('dpconvex')}\n" and err == ""


def test_version_falls_back_to_the_package_attribute(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert cli_output.package_version() == dpconvex.__version__


@pytest.mark.parametrize("argv, prog", [([], "dpconvex"), (["account"], "dpconvex account")], ids=["bare", "account"])
def test_command_without_subcommand_prints_its_help_and_exits_0(capsys, argv, prog):
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"usage: {prog} ") and "positional arguments:" in out and err == ""


def test_bare_command_and_version_exit_0_and_stay_light():
    """Through the command itself: exit status 0, and neither path imports the heavy modules."""
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from dpconvex.cli.main import main
        results = []
        for argv in ([], ["--version"]):
            with contextlib.redirect_stdout(io.StringIO()) as out:
                try:
                    status = main(argv)
                except SystemExit as stop:
                    status = stop.code
            results.append([status, out.getvalue()])
        print(json.dumps({{"results": results, "heavy": [m for m in {HEAVY!r} if m in sys.modules]}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    (bare_status, bare_out), (version_status, version_out) = result["results"]
    assert bare_status == 0 and bare_out.startswith("usage: dpconvex")
    assert version_status == 0 and version_out.startswith("dpconvex ")
    assert result["heavy"] == []
    shown = _run([])
    assert shown.returncode == 0 and shown.stdout.startswith("usage: dpconvex") and shown.stderr == ""


# ----------------------------------------------------------------------------- defaults in --help
def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from _parsers(subparser)


def _help_of(help_text: str, action: argparse.Action) -> str:
    """The lines of ``help_text`` that belong to ``action`` (its invocation line to the next option's)."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+{re.escape(action.option_strings[0])}\b", line))
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\s{2}-", lines[i]) or not lines[i].strip()),
               len(lines))
    return " ".join(line.strip() for line in lines[start:end])


def test_every_option_with_a_default_shows_it_in_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    checked = 0
    for parser in _parsers(build_parser()):
        text = parser.format_help()
        for action in parser._actions:
            default = action.default
            if not action.option_strings or default in (None, argparse.SUPPRESS) or isinstance(default, bool):
                continue  # positional, flag, or no default (not used unless given)
            shown = _help_of(text, action)
            assert re.search(r"\(default[: ]|default:", shown), f"{parser.prog} {action.option_strings[0]}: {shown!r}"
            checked += 1
    assert checked >= 25  # every subcommand has some


@pytest.mark.parametrize("argv, option, shown", [
    (["train"], "--epsilon", "(default: 1.0)"), (["train"], "--delta", "(default: 1e-08)"),
    (["train"], "--model", "(default: logistic)"), (["train"], "--test-size", "(default: 0.2)"),
    (["account", "langevin"], "--bound", "(default: best)"),
    (["account", "langevin"], "--smoothness", "(default: inf)"),
    (["bench", "adult"], "--baselines", "(default: nonprivate majority objpert sgd_ma"),
    (["audit", "all"], "--runs", "(default: 2000)"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_help_shows_the_default_value(capsys, monkeypatch, argv, option, shown):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    block = _help_of(capsys.readouterr().out, argparse.Action([option], dest="x"))
    assert shown in block


# ----------------------------------------------------------------------------- default epsilon
@pytest.mark.parametrize("model", list(MODELS))
def test_train_defaults_are_the_estimators_defaults(model):
    from dpconvex import estimators

    estimator = getattr(estimators, MODELS[model])()
    args = build_parser().parse_args(["train", "--model", model])
    assert args.epsilon == estimator.epsilon == 1.0
    assert args.delta == estimator.delta


# ----------------------------------------------------------------------------- small held-out sets
@pytest.mark.filterwarnings("error::dpconvex.exceptions.DataDependentPreprocessingWarning")
@pytest.mark.parametrize("rows, held_out, noted", [(5, 1, True), (145, 29, True), (150, 30, False)])
def test_small_held_out_set_gets_a_note(tmp_path, capsys, rows, held_out, noted):
    data, schema = _write_table(tmp_path, rows)
    assert main(["train", "--csv", str(data), "--schema", str(schema), "--seed", "0"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    rows_text = f"{held_out} held-out row{'s' if held_out > 1 else ''}"
    assert re.fullmatch(rf"test accuracy: \d\.\d{{4}} on {rows_text}", lines[0])
    note = f"note: only {held_out} held-out row{'s' if held_out > 1 else ''} (fewer than {MIN_HELD_OUT})"
    assert lines[1].startswith(note) == noted
    assert ("too noisy to mean anything" in out) == noted
    assert err == ""


def test_small_held_out_note_goes_to_stderr_with_json(tmp_path, capsys):
    data, schema = _write_table(tmp_path, 5)
    assert main(["train", "--csv", str(data), "--schema", str(schema), "--seed", "0", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["n_test"] == 1
    assert err == (f"dpconvex: note: only 1 held-out row (fewer than {MIN_HELD_OUT}): this test accuracy is too noisy "
                   "to mean anything; use a larger file or a larger --test-size\n")


# ----------------------------------------------------------------------------- warnings
def test_warnings_name_their_category_not_a_file(tmp_path):
    """A CSV without a schema warns (DataDependentPreprocessingWarning): one dpconvex line, no path of the library."""
    data, _ = _write_table(tmp_path, 40)
    done = _run(["train", "--csv", str(data), "--target", "label", "--schema-from-data", "--seed", "0"])
    assert done.returncode == 0, done.stderr
    assert "dpconvex: warning: DataDependentPreprocessingWarning: TabularSchema.infer read" in done.stderr
    assert ".py:" not in done.stderr and "warnings.warn" not in done.stderr
    assert all(line.startswith("dpconvex: ") for line in done.stderr.splitlines())


def test_main_restores_the_warning_format(tmp_path, capsys):
    before = warnings.formatwarning
    assert main(["train", "--schema", "schema.json"]) == 2  # a refusal
    assert main(["account"]) == 0
    assert warnings.formatwarning is before
    capsys.readouterr()
    assert cli_output.format_warning(UserWarning("text"), UserWarning, "/x/y.py", 3) == (
        "dpconvex: warning: UserWarning: text\n")
