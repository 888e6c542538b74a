"""ruff (rule set in ``pyproject.toml``, ``[tool.ruff.lint]``) finds nothing in ``src`` and ``tests``.

So that CI, which runs only the README's test command, also enforces the lint rules
(docs/contributing.md, "Guardrails").
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ruff") is None,
                                reason="ruff is not installed (it is in the test extra: pip install -e '.[test]')")


def test_ruff_finds_nothing():
    """``ruff check src tests`` exits 0 (its report is the failure message)."""
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
