"""Which data backend each method reads, and the check that refuses the others before the data are read.

A method's ``train`` reads its data in memory (``"numpy"``:
:class:`~dpconvex.data.in_memory.InMemoryData`) or, for the methods that only need sums of per-example
gradients over the full data, a Poisson sample or a slice of a permutation, also on a Dask cluster
(``"dask"``: :class:`~dpconvex.data.dask_data.DaskData`).  :data:`METHOD_BACKENDS` is the table, in the
registry's order; each :class:`~dpconvex.mechanisms.registry.MechanismSpec`'s ``backends`` is its entry.
The table sits below the trainers (which check their data through :func:`require_backend`) and the
registry (which imports the trainers), so neither imports the other to answer the question.
"""

from __future__ import annotations

from dpconvex.data.checks import is_dask_collection
from dpconvex.objectives.losses import Loss

__all__ = ["NUMPY_ONLY", "ANY_BACKEND", "METHOD_BACKENDS", "trained_method", "data_backend", "require_backend"]

#: In memory only.
NUMPY_ONLY = ("numpy",)
#: In memory or on a Dask cluster (``auto`` only for smooth losses: sco_noisy_sgd reads memory).
ANY_BACKEND = ("numpy", "dask")

#: The data backends each method's ``train`` reads, by ``method`` name, in the registry's order.
METHOD_BACKENDS: dict[str, tuple[str, ...]] = {
    "noisy_gd": ANY_BACKEND,
    "noisy_sgd": ANY_BACKEND,
    "rsgd_ar": NUMPY_ONLY,
    "nsgd": NUMPY_ONLY,
    "outpert_gd": NUMPY_ONLY,
    "pnsgd": NUMPY_ONLY,
    "sco_noisy_sgd": NUMPY_ONLY,
    "auto": ANY_BACKEND,
}


def trained_method(loss: Loss) -> str:
    """The registry name of the mechanism ``method="auto"`` trains ``loss`` with.

    Parameters
    ----------
    loss : Loss
        The per-example loss (only its ``smooth`` flag is read).

    Returns
    -------
    str
        ``"noisy_sgd"``, or ``"sco_noisy_sgd"`` for a non-smooth loss (the only mechanism for one).
    """
    return "noisy_sgd" if loss.smooth else "sco_noisy_sgd"


def data_backend(data: object) -> str:
    """The data backend of ``data``, told without reading it: ``"dask"`` for a dask collection, else its ``backend``.

    ``data`` is what a trainer was handed (arrays, a dask array or DataFrame, a
    :class:`~dpconvex.data.dask_data.DaskData`) or a problem's data (``InMemoryData``, ``DaskData``,
    ``DataShape``); anything without a ``backend`` of its class is ``"numpy"``.

    Parameters
    ----------
    data : object
        The data as above (only its type is read).

    Returns
    -------
    str
        ``"dask"`` or ``"numpy"``.
    """
    return "dask" if is_dask_collection(data) else getattr(type(data), "backend", "numpy")


def require_backend(method: str, data: object, loss: Loss) -> None:
    """``ValueError`` unless ``method`` reads the backend of ``data``, naming the methods that do.

    Call it before any pass over the data: it reads only the type of ``data`` (:func:`data_backend`),
    so a method that cannot train on a Dask collection is refused before the collection is read.
    The backends of a method are its entry of :data:`METHOD_BACKENDS`; ``method="auto"`` stands for
    the mechanism ``auto`` trains ``loss`` with (:func:`trained_method`).  An unknown method passes
    (its plan refuses it).

    Parameters
    ----------
    method : str
        The registry name of the method (or ``"auto"``).
    data : object
        The data the method would read (only its type is read).
    loss : Loss
        The loss (read only for ``method="auto"``).

    Raises
    ------
    ValueError
        When ``method`` cannot read the backend of ``data``.
    """
    backend = data_backend(data)
    if backend == "numpy":  # every method reads memory (tests/test_registry.py)
        return
    if method == "auto":
        method = trained_method(loss)
    if method not in METHOD_BACKENDS or backend in METHOD_BACKENDS[method]:
        return
    supported = [name for name, backends in METHOD_BACKENDS.items() if backend in backends]
    raise ValueError(f"method={method!r} reads its data in memory (NumPy) only and cannot train on a {backend} "
                     f"collection; the methods that can are {supported}. Use one of them, or load the data into "
                     "memory (e.g. X.compute()) if it fits.")
