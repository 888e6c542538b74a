"""What the ``dpconvex`` command prints besides its results: help, version, warnings and notes.

Defaults in every ``--help`` (:class:`DefaultsHelpFormatter`), ``--version`` read from the installed
package's metadata when asked for (:class:`VersionAction`), warnings as one ``dpconvex: warning:``
line without the library's file paths (:func:`cli_warnings`), the refusal of ``train``'s data options
without a data file (:func:`check_data_options`) and the note on a held-out set too small to score
(:func:`small_held_out_note`).  Nothing here imports more than the standard library.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["DEFAULT_MARKER", "MIN_HELD_OUT", "DefaultsHelpFormatter", "VersionAction", "check_data_options",
           "cli_warnings", "format_warning", "package_version", "print_help_of", "small_held_out_note",
           "use_formatter"]

#: A help text that matches this already states its default (in words), so none is appended.
DEFAULT_MARKER = re.compile(r"%\(default\)|\(default[: ]|\bdefault:")

#: Fewest held-out rows whose test accuracy (or R^2) ``train`` prints without a warning note.  With
#: fewer, a single row moves an accuracy by more than 3 percentage points and its 95% interval is
#: wider than +-18 points (binomial, p = 1/2): the number says nothing about the model.
MIN_HELD_OUT = 30

#: ``train`` options that describe the user's data file, with the attribute argparse stores them under.
_DATA_OPTIONS = {"--schema": "schema", "--target": "target", "--positive": "positive", "--save-schema": "save_schema",
                 "--discovery-share": "discovery_share"}


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help formatter that ends every option's help with ``(default: VALUE)``.

    Options whose help already states the default (see :data:`DEFAULT_MARKER`), flags
    (``store_true``: off unless given) and options without a default (``None``: not used unless
    given, or explained in the help) are left as they are; lists are shown space-separated, as
    they are typed.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not _shows_default(action) or DEFAULT_MARKER.search(text):
            return text
        return f"{text} {_default_text(action)}" if text else _default_text(action)


def _shows_default(action: argparse.Action) -> bool:
    """Whether ``action`` is an option with a value to show as its default (not None, SUPPRESS or a flag's bool)."""
    default = action.default
    return bool(action.option_strings) and not (default is None or default is argparse.SUPPRESS
                                                or isinstance(default, bool))


def _default_text(action: argparse.Action) -> str:
    """``(default: VALUE)``, a list space-separated as it is typed, ``%`` escaped for argparse's formatting."""
    default = action.default
    shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else str(default)
    return "(default: {})".format(shown.replace("%", "%%"))


def use_formatter(parser: argparse.ArgumentParser, formatter: type = DefaultsHelpFormatter) -> None:
    """Give ``parser`` and every subcommand's parser below it the help ``formatter``.

    argparse prints no help line for an option without a help text, so such an option with a
    default gets its ``(default: VALUE)`` as its help text.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The top-level parser (``add_parser`` does not pass its parent's formatter on).
    formatter : type, default DefaultsHelpFormatter
        An :class:`argparse.HelpFormatter` subclass.
    """
    parser.formatter_class = formatter
    for action in parser._actions:
        if action.help is None and _shows_default(action):
            action.help = _default_text(action)
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                use_formatter(subparser, formatter)


def print_help_of(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], dict]:
    """The handler of a command run without its subcommand: print ``parser``'s help on stdout (exit status 0).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        ``dpconvex`` or a command group such as ``dpconvex account``.

    Returns
    -------
    callable
        A handler for :meth:`argparse.ArgumentParser.set_defaults`; it returns an empty payload.
    """

    def handler(args: argparse.Namespace) -> dict:
        parser.print_help()
        return {}

    return handler


def package_version() -> str:
    """The installed distribution's version; the package's ``__version__`` when it is not installed.

    Returns
    -------
    str
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dpconvex")
    except PackageNotFoundError:
        try:
            from dpconvex import __version__
        except ImportError:
            return "unknown (not installed)"
        return str(__version__)


class VersionAction(argparse.Action):
    """``--version``: print ``dpconvex VERSION`` on stdout and exit 0 (the version is looked up only then).

    Parameters
    ----------
    option_strings : sequence of str
        The option's names (``--version``).
    dest, default, help
        As for ``argparse.Action``.
    """

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: str = "print the version and exit") -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sys.stdout.write(f"{parser.prog} {package_version()}\n")  # stdout, as argparse's own version action
        parser.exit()


def format_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                   line: str | None = None) -> str:
    """A warning as ``dpconvex: warning: Category: message`` (no file path or source line).

    Parameters
    ----------
    message : Warning or str
        The warning.
    category : type
        Its class.
    filename : str
        The file it was issued from (not shown: the user did not write that file).
    lineno : int
        Its line there (not shown).
    line : str, optional
        The source line (not shown).

    Returns
    -------
    str
        One line, ending in a newline.
    """
    return f"dpconvex: warning: {category.__name__}: {message}\n"


@contextlib.contextmanager
def cli_warnings() -> Iterator[None]:
    """Format the warnings shown while the block runs with :func:`format_warning`; restore the formatter after.

    Only :func:`warnings.formatwarning` is replaced: warnings that are recorded rather than shown
    (``warnings.catch_warnings(record=True)``, ``pytest.warns``) are recorded as before.
    """
    previous = warnings.formatwarning
    warnings.formatwarning = format_warning
    try:
        yield
    finally:
        warnings.formatwarning = previous


def check_data_options(args: argparse.Namespace) -> None:
    """Refuse ``train``'s data-file options (``--schema``, ``--target``, ``--positive``) without a data file.

    Parameters
    ----------
    args : argparse.Namespace
        The ``train`` options.

    Raises
    ------
    ValueError
        Naming the options given and ``--csv``: without a data file ``train`` uses the bundled Adult
        data, whose schema and labels are fixed, and would ignore them.
    """
    if args.csv or args.parquet:
        return
    given = [option for option, name in _DATA_OPTIONS.items() if getattr(args, name) is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise ValueError(f"{', '.join(given)} {verb} to your own data file only (--csv FILE, or --parquet DIR): "
                         f"without --csv, train uses the bundled Adult data (--dataset {args.dataset}), whose "
                         f"schema and labels are fixed. Add --csv FILE, or leave {', '.join(given)} out.")


def small_held_out_note(n_test: int, score: str = "test accuracy") -> str | None:
    """The note printed after a held-out score measured on fewer than :data:`MIN_HELD_OUT` rows; None otherwise.

    Parameters
    ----------
    n_test : int
        The number of held-out rows.
    score : str, default "test accuracy"
        What was measured, as printed (``"test R^2"`` for a regressor).

    Returns
    -------
    str or None
    """
    if n_test >= MIN_HELD_OUT:
        return None
    rows = "row" if n_test == 1 else "rows"
    return (f"note: only {n_test} held-out {rows} (fewer than {MIN_HELD_OUT}): this {score} is too noisy to "
            "mean anything; use a larger file or a larger --test-size")
