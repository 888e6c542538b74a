"""Moved import paths: each old path of ``dpconvex._moved.MOVED`` still imports, warns once with the new
path, and is the new module itself (classes, functions and monkeypatching shared); the public names and
the command's entry point did not move."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import dpconvex
from dpconvex._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_is_the_new_module(old):
    """In a fresh interpreter (a module imports once per process): the warning names the new path."""
    new = MOVED[old]
    code = (f"import warnings, importlib\n"
            f"with warnings.catch_warnings(record=True) as caught:\n"
            f"    warnings.simplefilter('always')\n"
            f"    old = importlib.import_module({old!r})\n"
            f"assert old is importlib.import_module({new!r}), old\n"
            f"messages = [str(w.message) for w in caught if w.category is DeprecationWarning]\n"
            f"assert any({new!r} in m and {old!r} in m for m in messages), messages\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


def test_the_public_names_did_not_move():
    for name in dpconvex.__all__:
        assert getattr(dpconvex, name) is not None
    assert importlib.import_module("dpconvex.cli").main is importlib.import_module("dpconvex.cli.main").main


def test_the_library_never_imports_a_moved_path():
    """Nothing imports an alias (it would warn users for our own code): the aliases are not loaded by the
    library's own modules, the command included."""
    code = ("import sys, dpconvex, dpconvex.cli.main, dpconvex.estimators, dpconvex.mechanisms, dpconvex.audit\n"
            "from dpconvex._moved import MOVED\n"
            "loaded = sorted(name for name in MOVED if name in sys.modules)\n"
            "assert not loaded, loaded\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
