"""Moved import paths: each old path of ``dpconvex._moved.MOVED`` still imports, warns once with the new
path, and is the new module itself (classes, functions and monkeypatching shared); the public names and
the command's entry point did not move."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import dpconvex
from dpconvex._moved import MOVED

#: Run in one fresh interpreter (a module imports once per process; no alias imports another, as the
#: last test checks): for each old path, "" if it warns naming the new path and is the new module, else why not.
_CHECK_EVERY_OLD_PATH = """
import importlib, json, sys, warnings
from dpconvex._moved import MOVED
failures = {}
for old, new in sorted(MOVED.items()):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    messages = [str(w.message) for w in caught if w.category is DeprecationWarning]
    if module is not importlib.import_module(new):
        failures[old] = f"{old} is {module!r}, not {new}"
    elif not any(new in m and old in m for m in messages):
        failures[old] = f"no DeprecationWarning naming {old} and {new}: {messages}"
    else:
        failures[old] = ""
json.dump(failures, sys.stdout)
"""


@pytest.fixture(scope="module")
def old_path_failures() -> dict:
    run = subprocess.run([sys.executable, "-c", _CHECK_EVERY_OLD_PATH], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_is_the_new_module(old, old_path_failures):
    """In a fresh interpreter (a module imports once per process): the warning names the new path."""
    assert old_path_failures[old] == ""


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
