"""The ``dpconvex`` command imports its heavy modules only for the subcommands that need them.

Each case runs the command in a fresh interpreter and lists which of :data:`HEAVY` ended up in
``sys.modules``: ``dpconvex --help`` and every ``dpconvex account ...`` must load none of them.  The
parsers' choices come from :mod:`dpconvex.cli.choices`, which must list exactly the registries it names,
and the package's own names (``from dpconvex import PrivateLogisticRegression``) are imported on first use.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpconvex
from dpconvex.cli import choices as cli_choices

#: What ``--help`` and ``account`` must not import (plotting, progress bars, scikit-learn, benchmark, audit;
#: dp-accounting's PLD library, about 1 s, only where a subcommand composes a PLD: see below).
HEAVY = ("matplotlib", "tqdm", "sklearn", "dpconvex_lab", "dpconvex.audit", "dp_accounting")

_SRC = str(Path(dpconvex.__file__).resolve().parents[1])

#: Executes ``dpconvex/__init__.py``'s imports neither: a bare package object with the same search path.
_BARE_PACKAGE = """
import importlib.util, types
spec = importlib.util.find_spec("dpconvex")
package = types.ModuleType("dpconvex")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["dpconvex"] = package
"""

_ACCOUNT = {
    "langevin": ["account", "langevin", "--n", "100", "--sensitivity", "4", "--step-size", "0.02", "--sigma", "0.1",
                 "--iterations", "10", "--order", "10"],
    "output-perturbation": ["account", "output-perturbation", "--n", "100", "--batch-size", "10", "--epochs", "2",
                            "--step-size", "0.1", "--smoothness", "1", "--strong-convexity", "0.1",
                            "--gradient-bound", "1", "--sigma", "1", "--delta", "1e-5"],
    "sco": ["account", "sco", "--n", "100", "--lipschitz", "1", "--sigma", "1", "--delta", "1e-5"],
    "noisy-sgd": ["account", "noisy-sgd", "--n", "100", "--batch-size", "10", "--epochs", "1", "--batching",
                  "shuffled", "--step-size", "0.1", "--sigma", "1", "--lipschitz", "1", "--delta", "1e-5"],
    "pnsgd": ["account", "pnsgd", "--n", "20", "--lipschitz", "1", "--smoothness", "1", "--step-size", "0.1",
              "--sigma", "1", "--diameter", "1", "--noise", "gaussian", "--delta", "1e-5"],
}

def _heavy_modules_after(argv: list[str], bare_package: bool) -> list[str]:
    """Run ``main(argv)`` in a fresh interpreter; return the :data:`HEAVY` modules it imported."""
    code = "import contextlib, io, json, sys\n" + (_BARE_PACKAGE if bare_package else "") + textwrap.dedent(f"""
        from dpconvex.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main({argv!r})
            except SystemExit as stop:  # --help
                status = stop.code
        print(json.dumps({{"status": status, "heavy": [name for name in {HEAVY!r} if name in sys.modules]}}))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([_SRC, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["status"] == 0, done.stderr
    return result["heavy"]


#: The account families whose numbers come from dp-accounting itself (its RDP conversion and accountant).
_USES_DP_ACCOUNTING = {"output-perturbation", "sco"}

_CASES = [pytest.param(["--help"], [], id="help"),
          *(pytest.param(argv, ["dp_accounting"] if name in _USES_DP_ACCOUNTING else [], id=f"account-{name}")
            for name, argv in _ACCOUNT.items())]


@pytest.mark.parametrize("argv, needed", _CASES)
def test_the_cli_modules_import_nothing_heavy(argv, needed):
    """The command's own modules (cli, cli_account, cli_audit, cli_choices, the accountants) stay light;
    dp-accounting (about 1 s to import) loads only for the families that compute with it."""
    assert _heavy_modules_after(argv, bare_package=True) == needed


@pytest.mark.parametrize("argv", [pytest.param(["--help"], id="help"),
                                  pytest.param(_ACCOUNT["langevin"], id="langevin")])
def test_the_installed_command_imports_nothing_heavy(argv):
    """As the console script runs it: ``import dpconvex.cli.main`` executes the package's ``__init__`` first."""
    assert _heavy_modules_after(argv, bare_package=False) == []


def test_the_probe_sees_a_handler_import():
    """The probe can fail: a subcommand whose handler needs the audit imports it, and the probe lists it."""
    heavy = _heavy_modules_after(["soundness", "--methods", "noisy_gd", "--samples", "1", "--polish", "1", "--json"],
                                 bare_package=True)
    assert "dpconvex.audit" in heavy


def test_the_choices_are_the_registries():
    from dpconvex.audit import AUDITS
    from dpconvex.mechanisms import METHOD_ADVICE, METHODS
    from dpconvex_lab.baselines import BASELINES
    from dpconvex_lab.bench import FULL_EPSILONS, TASKS

    assert cli_choices.METHODS == tuple(METHODS)
    assert set(cli_choices.REPRODUCTION_METHODS) == set(METHOD_ADVICE)
    assert cli_choices.AUDIT_TARGETS == tuple(AUDITS)
    assert cli_choices.BENCH_TASKS == tuple(TASKS)
    assert cli_choices.BENCH_EPSILONS == tuple(FULL_EPSILONS)
    assert cli_choices.BENCH_BASELINES == tuple(BASELINES)


def test_the_package_names_resolve_on_first_use():
    """``dpconvex.__all__``'s names, imported lazily, are listed by ``dir`` and are their modules' classes."""
    for name in dpconvex.__all__:
        assert name in dir(dpconvex)
        value = getattr(dpconvex, name)
        if name != "__version__":
            module = importlib.import_module(value.__module__)
            assert module.__name__.startswith("dpconvex.") and getattr(module, name) is value
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(dpconvex, "no_such_name")  # noqa: B009 -- the lazy module __getattr__ under test
