"""mypy (configured in ``pyproject.toml``, ``[tool.mypy]``) finds no error in ``dpconvex.accounting``,
``dpconvex.objectives`` and ``dpconvex.mechanisms``.

The accountants are the layer every certificate rests on and are fully annotated; a type error there is a bug
waiting for an input.  The losses and constraints (``objectives``) and the mechanisms (``mechanisms``, the
problem record every mechanism reads included) are held to the same.  The other modules are not type-clean yet (see
docs/contributing.md, "Guardrails").  Takes a few seconds (mypy starts cold in a fresh cache), hence ``slow``.
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                       reason="mypy is not installed (it is in the test extra: pip install -e '.[test]')"),
]


def test_accounting_is_type_clean(tmp_path):
    """``mypy src/dpconvex/accounting`` reports no error."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache"), "src/dpconvex/accounting"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("target", ["src/dpconvex/objectives", "src/dpconvex/mechanisms"])
def test_objectives_and_mechanisms_are_type_clean(tmp_path, target):
    """``mypy src/dpconvex/objectives`` and ``mypy src/dpconvex/mechanisms`` report no error."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy_cache"), target],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
