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

HEADER = """# CLI reference

Every command's `--help`, generated from `dpconvex.cli.build_parser()` by
`python docs/generate_cli_reference.py` (do not edit by hand; a test fails when this page is out of
date). Examples of what the commands are for: [Command line and your own data](usage.md).
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
    from dpconvex.cli import build_parser

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
    return "\n".join([HEADER, *sections])


def main() -> None:
    """Write the page."""
    CLI_PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {CLI_PAGE}")


if __name__ == "__main__":
    main()
