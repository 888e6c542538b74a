"""Write docs/cli.md: the ``--help`` of ``dpconvex`` and of every subcommand, from the code.

Run ``python docs/generate_cli_reference.py`` after changing the command line;
``tests/test_docs.py`` fails while docs/cli.md differs from what this script generates.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

#: Terminal width the help is wrapped at, so the page does not depend on the terminal it was made in.
HELP_COLUMNS = 100

#: The page this script writes.
CLI_PAGE = Path(__file__).resolve().parent / "cli.md"

#: The page's introduction; ``{epsilon}``, ``{delta}`` and ``{min_held_out}`` are filled in from the code.
HEADER = """# CLI reference

Every command's `--help`, generated from `dpconvex.cli.main.build_parser()` by
`python docs/generate_cli_reference.py` (do not edit by hand; a test fails when this page is out of
date). Examples of what the commands are for: [Command line and your own data](usage.md).

Conventions of every command:

- `dpconvex --version` prints `dpconvex VERSION` (the installed package's version). `dpconvex` or
  `dpconvex account` without a subcommand prints its help on stdout and exits with status 0.
- Each option's help ends with its default, `(default: VALUE)`, or says in words what happens
  without it. Flags (`--json`, `--quick`, ...) are off unless given; an option shown without a
  default is not used unless given. `dpconvex train --epsilon` and `--delta` default to the Python
  estimators' own defaults (ε = {epsilon}, δ = {delta}).
- Invalid input exits with status 2 and one line `dpconvex: error: ...` on stderr, naming the
  option; argparse's own refusals (an unknown option, a missing required one) print the usage
  first. `train`'s `--schema`, `--target` and `--positive` describe your own data file: without
  `--csv` (or `--parquet`) they are refused rather than ignored.
- Warnings are printed on stderr as `dpconvex: warning: Category: message`, without the
  library's file paths.
- `train` on a CSV prints, after the test accuracy (R² for the regressors `--model ridge` and `lad`), a note
  when fewer than {min_held_out} rows were held out: such a score is too noisy to mean anything (with `--json`
  the note goes to stderr).
- `train --out FILE` writes the trained model, its schema and its certificate to one JSON model file (no
  pickle: `dpconvex.load_model` reads it without executing code); the seed is never stored, and the file of a
  run with `--seed` certifies nothing (a seed makes the noise reproducible: release models trained without one). `predict --model FILE --csv DATA` encodes
  DATA's records with the saved schema and writes one prediction per row on stdout (CSV with the header
  `prediction`, or a JSON list with `--json`; a binary model predicts 1 for the schema's positive label and
  -1 otherwise). On stderr it prints the first line of the model's certificate and, when DATA has the target
  column, the accuracy or R² on DATA's rows: computed without noise, not covered by the certificate.
"""


def _commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every subcommand's parser below it, depth first in registration order."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                yield from _commands(subparser)


def render() -> str:
    """The Markdown text of docs/cli.md, with the help wrapped at :data:`HELP_COLUMNS` columns."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from dpconvex.cli.main import build_parser
    from dpconvex.cli.choices import DEFAULT_DELTA, DEFAULT_EPSILON
    from dpconvex.cli.output import MIN_HELD_OUT

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        sections = [f"## `{command.prog}`\n\n```text\n{command.format_help().rstrip()}\n```\n"
                    for command in _commands(build_parser())]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    header = HEADER.format(epsilon=DEFAULT_EPSILON, delta=DEFAULT_DELTA, min_held_out=MIN_HELD_OUT)
    return "\n".join([header, *sections])


def main() -> None:
    """Write the page."""
    CLI_PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {CLI_PAGE}")


if __name__ == "__main__":
    main()
