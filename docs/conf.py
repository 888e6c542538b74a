"""Sphinx configuration of the dpconvex documentation (``python -m sphinx -b html -W -n docs OUT``).

The pages are Markdown (MyST); the API reference is built from the numpydoc docstrings by autodoc.
The build is nitpicky: every cross-reference must resolve, and ``tests/test_docs.py`` fails on any
warning.  The network is closed, so there is no intersphinx: references to third-party packages, which
would only resolve through it, are exempted in ``nitpick_ignore_regex`` below, by package name.
"""

import os
import pkgutil
import re
import sys
import types

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

import dpconvex  # noqa: E402  (after the path is set, so this checkout's code is documented)

project = "dpconvex"
author = "dpconvex developers"
release = dpconvex.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
# Generated benchmark outputs (CSV, PNG) are linked from BENCHMARKS.md, not pages of their own.
exclude_patterns = ["_build", "**/*.csv", "**/*.png"]

autodoc_member_order = "bysource"
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc loads autosummary; the API pages are written by hand, so it generates nothing.
autosummary_generate = False

nitpicky = True
#: Objects of the third-party packages dpconvex builds on (numpy, scipy, scikit-learn, pandas,
#: dp-accounting): they would resolve only through intersphinx, which needs the network.
nitpick_ignore_regex = [(r"py:.*", r"(numpy|scipy|sklearn|pandas|dp_accounting)(\..+)?")]

html_theme = "alabaster"


#: Inline literals (``...``), left as they are.
_INLINE_LITERAL = re.compile(r"``.+?``")


def _escape_bars(line: str) -> str:
    """Escape ``|`` outside inline literals: the docstrings write |x| for an absolute value, never an
    RST substitution reference (dpconvex defines none)."""
    pieces, last = [], 0
    for match in _INLINE_LITERAL.finditer(line):
        pieces += [line[last:match.start()].replace("|", r"\|"), match.group()]
        last = match.end()
    return "".join(pieces + [line[last:].replace("|", r"\|")])


def _docstring_bars(app, what, name, obj, options, lines):
    """autodoc-process-docstring: absolute values in docstrings are text, not substitutions."""
    lines[:] = [_escape_bars(line) for line in lines]


def _skip_sklearn_members(app, what, name, obj, skip, options):
    """autodoc-skip-member: methods scikit-learn generates on our estimators (``set_fit_request`` …) are
    documented by scikit-learn, and their docstrings reference its own pages."""
    if getattr(obj, "__module__", "") and obj.__module__.startswith("sklearn."):
        return True
    return None


def _python_object(target: str, module: str | None):
    """The object a docstring names: an absolute ``dpconvex.…`` path, or a name in the docstring's module."""
    candidates = [target] if target.startswith("dpconvex.") else [f"{module}.{target}"] if module else []
    for name in candidates:
        try:
            return pkgutil.resolve_name(name)
        except (ImportError, AttributeError, ValueError):
            continue
    return None


def _resolve_reexport(app, env, node, contnode):
    """missing-reference: a public re-export (``dpconvex.datasets.TabularSchema``, or ``TabularSchema`` in
    a module that imports it) resolves to where the object is documented, its defining module
    (``dpconvex.datasets.tabular.TabularSchema``).  Names that are not Python objects of dpconvex stay
    unresolved, and the nitpicky build reports them."""
    if node.get("refdomain") != "py":
        return None
    obj = _python_object(node["reftarget"].lstrip(".~"), node.get("py:module"))
    if isinstance(obj, types.ModuleType):
        canonical = obj.__name__
    else:
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
        canonical = f"{module}.{qualname}" if module and qualname else None
    if canonical is None or not canonical.startswith("dpconvex.") or canonical == node["reftarget"]:
        return None
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical, node,
                                             contnode)


def setup(app):
    """Register the docstring hooks and the resolution of re-exported names."""
    app.connect("autodoc-process-docstring", _docstring_bars)
    app.connect("autodoc-skip-member", _skip_sklearn_members)
    app.connect("missing-reference", _resolve_reexport)
