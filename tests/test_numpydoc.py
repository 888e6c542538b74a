"""Every public function and class of ``src/dpconvex`` has numpydoc sections (pure ``ast``, no imports).

The rule, for each module-level ``def`` and ``class`` whose name does not start with ``_``, in every module whose
path below ``src/dpconvex`` has no private part (``_checks.py``, ``_batches.py``… are skipped; ``__init__.py`` counts):

* a function with parameters (``self``/``cls`` aside; ``*args``/``**kwargs`` do not count) has a ``Parameters``
  section, and one that returns a value (a ``return`` with a value anywhere in its body) a ``Returns`` or
  ``Yields`` section;
* a class with an ``__init__`` or annotated fields (a dataclass) has a ``Parameters`` or an ``Attributes``
  section.

A section is its title on a line of its own (the numpydoc underline follows); the Sphinx build
(``tests/test_docs.py``) checks that numpydoc can parse it.

The allow-list ratchets, as in ``tests/test_layers.py``: an offender not listed fails, and a listed offender that
is now documented (or gone) fails until its entry is removed.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "dpconvex"

#: Today's offenders, ``"path:name"`` (path relative to the repository root): none left; a new one fails.
UNDOCUMENTED: set[str] = set()


def _offenders(source: str, name: str) -> list[str]:
    """``name:function`` for every public function and class of the module ``source`` lacking its sections."""
    tree = ast.parse(source, filename=name)
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.name.startswith("_"):
            continue
        doc = ast.get_docstring(node) or ""
        if isinstance(node, ast.ClassDef):
            init = any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body)
            fields = any(isinstance(n, ast.AnnAssign) for n in node.body)
            missing = (init or fields) and "Parameters\n" not in doc and "Attributes\n" not in doc
        else:
            args = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                    if a.arg not in ("self", "cls")]
            returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(node))
            missing = ((bool(args) and "Parameters\n" not in doc)
                       or (returns and "Returns\n" not in doc and "Yields\n" not in doc))
        if missing:
            found.append(f"{name}:{node.name}")
    return found


def _public_modules() -> list[pathlib.Path]:
    return [path for path in sorted(PACKAGE.rglob("*.py"))
            if not any(part.startswith("_") and part != "__init__.py" for part in path.relative_to(PACKAGE).parts)]


def test_every_public_function_and_class_has_numpydoc_sections():
    """The module docstring's rule, with the ratchet of :data:`UNDOCUMENTED`."""
    found = {offender for path in _public_modules()
             for offender in _offenders(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())}
    new = sorted(found - UNDOCUMENTED)
    assert not new, f"public functions or classes without their numpydoc sections (module docstring): {new}"
    fixed = sorted(UNDOCUMENTED - found)
    assert not fixed, f"documented now (or gone), remove from UNDOCUMENTED: {fixed}"


def test_the_rule_on_examples():
    """What counts as documented: sections where they are due, nothing asked of private names or of functions
    without parameters and return values, or of classes without fields or ``__init__``."""
    source = '''
def bare(x):
    """No sections."""
    return x


def takes_only(x):
    """Parameters only, and it returns nothing.

    Parameters
    ----------
    x : int
    """


def documented(x):
    """Both.

    Parameters
    ----------
    x : int

    Returns
    -------
    int
    """
    return x


def returns_only():
    """A value, no section."""
    return 1


def no_arguments():
    """Nothing to take or return."""


def _private(x):
    return x


class Record:
    """Fields without sections."""

    x: int


class Described:
    """Fields with their section.

    Attributes
    ----------
    x : int
    """

    x: int


class Plain:
    """No fields, no __init__."""
'''
    assert _offenders(source, "m.py") == ["m.py:bare", "m.py:returns_only", "m.py:Record"]
