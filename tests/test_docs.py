"""The documentation: the README's commands, its links, the generated CLI reference and the Sphinx build."""

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

pytestmark = pytest.mark.skipif(not (DOCS / "conf.py").exists(), reason="docs/ not next to tests/ (installed package)")


def test_readme_shows_the_commands_ci_runs():
    """.ci/run runs the README's install and test commands literally; each is a code block of its own."""
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line for line in ci_script if line.startswith(("pip ", "python "))]
    assert len(commands) == 2, f".ci/run should run exactly the install and the test command, found {commands}"
    readme = README.read_text(encoding="utf-8")
    for command in commands:
        assert f"```\n{command}\n```" in readme, f"README.md must show `{command}` (what .ci/run runs) verbatim"


def test_readme_links_resolve():
    """Every relative link of the README names a file or folder of the repository."""
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    relative = [link for link in links if "://" not in link]
    assert relative, "the README links its docs pages"
    missing = [link for link in relative if not (ROOT / link).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_cli_reference_is_current():
    generator = runpy.run_path(str(DOCS / "generate_cli_reference.py"))
    page = DOCS / "cli.md"
    assert page.exists() and page.read_text(encoding="utf-8") == generator["render"](), (
        "docs/cli.md differs from the command line's --help: run `python docs/generate_cli_reference.py`")


@pytest.mark.slow
def test_sphinx_build_has_no_warning(tmp_path):
    """Nitpicky HTML build of docs/ (API reference from the docstrings): any warning, a broken
    cross-reference included, fails it, and so does a docstring section numpydoc cannot parse (it
    would drop that section from the page)."""
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-n", "-q", str(DOCS),
               str(tmp_path / "html")]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    build = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    numpydoc_warnings = [line for line in build.stderr.splitlines() if "numpydoc" in line]
    assert build.returncode == 0 and not numpydoc_warnings, (
        f"the docs build reports (exit status {build.returncode}):\n{build.stderr}")
