"""mypy (configured in ``pyproject.toml``, ``[tool.mypy]``) finds no error in ``dpconvex.accounting``.

The accountants are the layer every certificate rests on and are fully annotated; a type error there is a bug
waiting for an input.  The other layers are not type-clean yet (see docs/contributing.md, "Guardrails").
Takes a few seconds (mypy starts cold in a fresh cache), hence ``slow``.
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
