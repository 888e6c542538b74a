"""House rules on the shape of the code, checked statically (``ast`` over ``src/dpconvex/**/*.py`` and
``src/dpconvex_lab/**/*.py``, no imports).

The layers point one way (:data:`LAYERS`, docs/contributing.md "Layout"): ``accounting`` (pure functions) <-
``objectives`` <- ``data`` <- ``privacy`` <- ``datasets`` <- ``mechanisms`` <- ``audit`` <- ``estimators`` <- ``cli``;
the lab (``dpconvex_lab``) sits outside the library and only the CLI loads it, lazily.  Pure Python on purpose
(no import-linter at run time): the contracts are a few lines each, the allow-lists sit beside them with their
reasons, and the whole file runs in well under a second.

Allow-lists ratchet: a listed offender that is gone from the code must leave its list (the test says so), and a
new offender fails.  The coming package refactor is expected to empty them.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "dpconvex"
LAB = SRC / "dpconvex_lab"
DOCS = ROOT / "docs"

#: The library's packages, lowest first: each may import only those before it (and ``exceptions``).
LAYERS = ("accounting", "objectives", "data", "privacy", "datasets", "mechanisms", "audit", "estimators", "cli")
#: Modules at the top level that are not a layer: the package facade, the one exceptions module, and the
#: deprecated aliases of moved modules (``dpconvex._moved.MOVED``).
TOP_LEVEL = ("dpconvex", "dpconvex.exceptions", "dpconvex._moved")

MAX_LINES = 400

#: Rule (d): function-level imports of a ``dpconvex`` module inside ``accounting/`` and ``mechanisms/``,
#: keyed by (file, enclosing function, imported module), each with the reason it is not at module level.
FUNCTION_LEVEL_IMPORTS: dict[tuple[str, str, str], str] = {
    ("src/dpconvex/mechanisms/problem.py", "Problem.from_arrays", "dpconvex.data.dask_data"):
        "not a cycle: Dask is an optional extra, imported only when the data is a Dask collection",
    ("src/dpconvex/estimators/dask_fit.py", "dask_targets", "dpconvex.data.dask_data"):
        "not a cycle: Dask is an optional extra, imported only for a Dask collection",
    ("src/dpconvex/estimators/dask_fit.py", "dask_data", "dpconvex.data.dask_data"):
        "not a cycle: Dask is an optional extra, imported only for a Dask collection",
    ("src/dpconvex/estimators/dask_fit.py", "dask_largest_row_norm", "dpconvex.data.dask_blocks"):
        "not a cycle: Dask is an optional extra, imported only for a Dask collection",
}

#: Rule (e): modules over MAX_LINES lines, with their line count when the list was written (for the record:
#: the test fails when a listed module drops to MAX_LINES or below, not when it grows).
LONG_MODULES: dict[str, int] = {
}

#: Rule (f): references to this project's issue numbers, per file (path relative to the repository root).
ISSUE_REFERENCES: dict[str, int] = {}

#: Words that, just before "issue N", name another project's tracker (not ours).
EXTERNAL_TRACKERS = ("dask", "numpy", "scipy", "scikit-learn", "sklearn", "pandas", "opacus", "dp-accounting",
                     "matplotlib", "pytest", "python", "cpython", "sphinx", "distributed", "pyarrow", "statsmodels")


def _relative(path: pathlib.Path) -> str:
    return path.relative_to(ROOT).as_posix()


@functools.cache
def _modules() -> dict[str, pathlib.Path]:
    """Dotted name -> file, for every module of the library and of the lab."""
    modules = {}
    for path in sorted([*PACKAGE.rglob("*.py"), *LAB.rglob("*.py")]):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


@functools.cache
def _tree(path: pathlib.Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """Every ``dpconvex`` module ``module`` imports: (imported module, enclosing function or None, line).

    Relative imports are resolved; ``from X import name`` counts ``X.name`` when that is a module and ``X``
    otherwise.  Imports under ``if TYPE_CHECKING:`` count too (the layers are about knowledge, not run time).
    """
    path = _modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    known = _modules()
    found: list[tuple[str, str | None, int]] = []

    def visit(node: ast.AST, function: str | None, scope: str = "") -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):  # a class body runs where the class is defined
                visit(child, function, f"{scope}{child.name}.")
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{scope}{child.name}", f"{scope}{child.name}.")
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, function, child.lineno) for alias in child.names
                             if alias.name.split(".")[0] in ("dpconvex", "dpconvex_lab"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] in ("dpconvex", "dpconvex_lab"):
                    for alias in child.names:
                        sub = f"{target}.{alias.name}"
                        found.append((sub if sub in known else target, function, child.lineno))
            visit(child, function)

    visit(_tree(path), None)
    return found


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_cli(module: str) -> bool:
    return _in(module, "dpconvex.cli")


def _layer(module: str) -> str | None:
    """The package of :data:`LAYERS` a library module belongs to (``None`` for the top level and the lab)."""
    parts = module.split(".")
    return parts[1] if parts[0] == "dpconvex" and len(parts) > 1 and parts[1] in LAYERS else None


def _violations(importer_filter, imported_filter) -> list[str]:
    return [f"{module} imports {imported} (line {line})"
            for module in _modules() if importer_filter(module)
            for imported, _, line in _imports(module) if imported_filter(imported)]


def test_accounting_imports_nothing_else_of_dpconvex():
    """(a) ``dpconvex.accounting`` imports nothing of ``dpconvex`` outside ``dpconvex.accounting``."""
    bad = _violations(lambda m: _in(m, "dpconvex.accounting"), lambda i: not _in(i, "dpconvex.accounting"))
    assert not bad, bad


def test_mechanisms_do_not_import_the_layers_above():
    """(b) ``dpconvex.mechanisms`` never imports ``estimators``, ``cli`` or the lab."""
    def above(imported: str) -> bool:
        return _in(imported, "dpconvex.estimators") or _is_cli(imported) or _in(imported, "dpconvex_lab")
    bad = _violations(lambda m: _in(m, "dpconvex.mechanisms"), above)
    assert not bad, bad


def test_every_package_imports_only_the_layers_below_it():
    """(g) A package of :data:`LAYERS` imports only itself, the packages before it and ``dpconvex.exceptions``;
    the package root (``__version__``, the lazy public names) only from ``estimators`` and ``cli``; nothing of the
    library imports a deprecated alias (``dpconvex._moved``)."""
    rank = {name: index for index, name in enumerate(LAYERS)}

    def allowed(importer: str, imported: str) -> bool:
        here, there = _layer(importer), _layer(imported)
        if there is not None:
            return rank[there] <= rank[here]
        if imported == "dpconvex.exceptions":
            return True
        if imported == "dpconvex":
            return here in ("estimators", "cli")
        return _in(imported, "dpconvex_lab") and here == "cli"  # lazily: rule (c)

    bad = [f"{module} ({_layer(module)}) imports {imported} (line {line})"
           for module in _modules() if _layer(module) is not None
           for imported, _, line in _imports(module) if not allowed(module, imported)]
    assert not bad, bad


def test_the_top_level_holds_only_the_facade_the_exceptions_and_the_aliases():
    """(h) Every module directly in ``src/dpconvex`` is the facade, ``exceptions``, ``_moved`` or a deprecated alias
    listed in ``dpconvex._moved.MOVED`` (the tree tells the architecture: everything else lives in a layer)."""
    from dpconvex._moved import MOVED

    top = {module for module in _modules() if module.count(".") <= 1 and _layer(module) is None
           and not _in(module, "dpconvex_lab")}
    assert top - set(TOP_LEVEL) - set(MOVED) == set()
    assert set(MOVED) <= top


def test_only_the_cli_imports_the_lab_and_only_lazily():
    """(c) Outside ``dpconvex_lab`` only the CLI modules (``dpconvex.cli.main*``) import ``dpconvex_lab``,
    and only inside a function (lazily: ``import dpconvex`` never loads the lab)."""
    bad = [f"{module} imports {imported} (line {line}{', at module level' if function is None else ''})"
           for module in _modules() if not _in(module, "dpconvex_lab")
           for imported, function, line in _imports(module)
           if _in(imported, "dpconvex_lab") and (not _is_cli(module) or function is None)]
    assert not bad, bad


def test_no_new_function_level_imports_in_the_library():
    """(d) No import of a ``dpconvex`` module inside a function body in the library (such imports dodge import
    cycles instead of removing them), except the listed ones (an optional extra); the CLI imports each command's
    needs when it runs, and the lab is outside the library."""
    found = {(_relative(_modules()[module]), function, imported)
             for module in _modules() if _in(module, "dpconvex") and not _is_cli(module)
             for imported, function, _ in _imports(module) if function is not None}
    new = sorted(found - FUNCTION_LEVEL_IMPORTS.keys())
    assert not new, f"new function-level imports (move them to module level or break the cycle): {new}"
    assert not FUNCTION_LEVEL_IMPORTS.keys() - found, (
        f"gone from the code, remove from FUNCTION_LEVEL_IMPORTS: {sorted(FUNCTION_LEVEL_IMPORTS.keys() - found)}")
    assert all(reason.strip() for reason in FUNCTION_LEVEL_IMPORTS.values())


def test_no_new_module_over_the_line_limit():
    """(e) No module in ``src/dpconvex`` is over 400 lines, except the listed ones; a listed module that is
    400 lines or shorter must leave the list."""
    lengths = {_relative(path): len(path.read_text(encoding="utf-8").splitlines()) for path in _modules().values()}
    new = {path: n for path, n in lengths.items() if n > MAX_LINES and path not in LONG_MODULES}
    assert not new, f"modules over {MAX_LINES} lines (split them): {new}"
    shrunk = {path: lengths.get(path) for path in LONG_MODULES if lengths.get(path, 0) <= MAX_LINES}
    assert not shrunk, f"now within {MAX_LINES} lines (or gone), remove from LONG_MODULES: {shrunk}"


#: "issue 12", "issues 12 and 14", "issue #12", "#12" (a hash and digits not inside a word, a URL or an entity).
ISSUE_PATTERN = re.compile(r"(?P<word>[\w.-]+\s+)?\bissues?\s*#?\d+|(?<![\w&/#])#\d+\b", re.IGNORECASE)


def _issue_references(path: pathlib.Path) -> int:
    count = 0
    for match in ISSUE_PATTERN.finditer(path.read_text(encoding="utf-8")):
        word = (match.group("word") or "").strip().lower()
        if word not in EXTERNAL_TRACKERS:
            count += 1
    return count


def _text_files() -> list[pathlib.Path]:
    suffixes = {".py", ".md", ".rst", ".txt"}
    return [path for base in (PACKAGE, LAB, DOCS) for path in sorted(base.rglob("*"))
            if path.suffix in suffixes and path.is_file() and "_build" not in path.parts]


def test_no_new_issue_numbers_in_src_and_docs():
    """(f) No reference to this project's issues by number ("issue 12", "#12") in ``src/`` and ``docs/``: say what
    the change is, not where it was discussed.  The listed files may keep their current count, no more; a file
    whose count dropped must lower (or drop) its entry.  "dask issue 12411" (another project's tracker) is fine."""
    found = {_relative(path): n for path in _text_files() if (n := _issue_references(path))}
    new = {path: n for path, n in found.items() if n > ISSUE_REFERENCES.get(path, 0)}
    assert not new, f"new issue-number references (count per file): {new}"
    stale = {path: (n, found.get(path, 0)) for path, n in ISSUE_REFERENCES.items() if found.get(path, 0) < n}
    assert not stale, f"fewer references than listed, update ISSUE_REFERENCES (listed, found): {stale}"


@pytest.mark.parametrize("text, expected", [
    ("see issue 14", 1), ("Issues 14 and 15", 1), ("(issue #7)", 1), ("fixed in #12.", 1), ("dask issue 12411", 0),
    ("colour #1f77b4", 0), ("&#160;", 0), ("https://x.org/a#12", 0), ("# 12 runs", 0), ("tissue 3", 0),
])
def test_the_issue_pattern(tmp_path, text, expected):
    """The pattern of rule (f) on examples."""
    path = tmp_path / "x.md"
    path.write_text(text, encoding="utf-8")
    assert _issue_references(path) == expected
