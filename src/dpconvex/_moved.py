"""Import paths that moved when the library was arranged in packages by layer (deprecated aliases)."""

from __future__ import annotations

import importlib
import sys
import warnings

__all__ = ["MOVED", "alias"]

#: Old import path → where the module lives now (docs/contributing.md, "Layout").
MOVED = {
    "dpconvex.losses": "dpconvex.objectives.losses",
    "dpconvex.losses_multiclass": "dpconvex.objectives.multiclass",
    "dpconvex.constraints": "dpconvex.objectives.constraints",
    "dpconvex.mirror_maps": "dpconvex.objectives.mirror_maps",
    "dpconvex.data_dask": "dpconvex.data.dask_data",
    "dpconvex.problem": "dpconvex.mechanisms.problem",
    "dpconvex.private_selection": "dpconvex.mechanisms.selection",
    "dpconvex.certificate": "dpconvex.privacy.certificate",
    "dpconvex.model_selection": "dpconvex.estimators.model_selection",
    "dpconvex.preprocessing": "dpconvex.estimators.preprocessing",
    "dpconvex.model_file": "dpconvex.estimators.model_file",
}


def alias(old: str) -> None:
    """Make ``old`` the module it moved to, with a :class:`DeprecationWarning` naming the new path.

    Parameters
    ----------
    old : str
        A key of :data:`MOVED`; its module object becomes the new module itself, so classes,
        functions and monkeypatching are shared.
    """
    new = MOVED[old]
    warnings.warn(f"{old} moved to {new}; import it from there (the old path will be removed)",
                  DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
