"""What :class:`~dpconvex.data.dask_data.DaskData` is built from: the user's collections, checked and cut into pieces.

A *piece* is the delayed task that reads one row block of a dask array or DataFrame and validates
it on a worker (``dpconvex.data.dask_blocks.array_block``, ``frame_block``).
This module checks what the user hands over (types, shapes, chunk sizes, numeric columns, the
declared bounds), makes the pieces, finds the client, and tells whether the validated data fit in
the cluster's memory; it reads no row itself.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import NDArray

from dpconvex.data import dask_blocks as blocks

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import distributed
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("dpconvex.data.dask_inputs needs Dask: pip install 'dpconvex[dask]'.") from error

__all__ = ["array_pieces", "check_bounds", "current_client", "fits_in_cluster_memory", "frame_pieces",
           "require_known_chunks"]


def array_pieces(X: da.Array, y: da.Array | NDArray, data_norm: float, label_bound: float | None,
                 constant_column: float | None) -> tuple[da.Array, list]:
    """Check a dask array X (n, d) and labels y (n,) and make one validating piece per row block.

    Parameters
    ----------
    X, y, data_norm, label_bound, constant_column
        As in :meth:`DaskData.from_array <dpconvex.data.dask_data.DaskData.from_array>`.

    Returns
    -------
    X : dask.array.Array
        X with its column chunks merged (the row chunks are the blocks).
    pieces : list of dask.delayed.Delayed
        One ``dpconvex.data.dask_blocks.array_block`` per row block, with its labels.

    Raises
    ------
    ValueError
        Wrong types or shapes, unknown row-chunk sizes, bounds or ``constant_column`` that are not
        finite and > 0.
    """
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array (n_samples, n_features); got {type(X).__name__} "
                         f"{getattr(X, 'shape', '')}. In-memory arrays go to the NumPy data access.")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    require_known_chunks(X)
    y = y if isinstance(y, da.Array) else np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D with X.shape[0] = {X.shape[0]} entries; got shape {y.shape}.")
    if not isinstance(y, da.Array):
        y = da.from_array(y, chunks=(X.chunks[0],))
    elif y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    check_bounds(data_norm, label_bound)
    if constant_column is not None and not (isinstance(constant_column, numbers.Real)
                                            and np.isfinite(constant_column) and constant_column > 0):
        raise ValueError(f"constant_column must be None or finite and > 0; got {constant_column!r}.")
    pieces = [dask.delayed(blocks.array_block, pure=True)(features, labels, data_norm, label_bound, constant_column)
              for features, labels in zip(X.to_delayed()[:, 0], y.to_delayed())]
    return X, pieces


def frame_pieces(frame: dd.DataFrame, label: str, features: list | None, data_norm: float,
                 label_bound: float | None) -> tuple[list, list[str]]:
    """Check a dask DataFrame's columns and make one validating piece per partition.

    Parameters
    ----------
    frame, label, features, data_norm, label_bound
        As in :meth:`DaskData.from_dataframe <dpconvex.data.dask_data.DaskData.from_dataframe>`.

    Returns
    -------
    pieces : list of dask.delayed.Delayed
        One ``dpconvex.data.dask_blocks.frame_block`` per partition.
    column_names : list of str
        The feature columns' ``repr``, for the messages.

    Raises
    ------
    ValueError
        Not a dask DataFrame, a missing or non-numeric column (named), no feature column, or bounds
        that are not finite and > 0.
    """
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if not isinstance(frame, dd.DataFrame):
        raise ValueError(f"frame must be a dask DataFrame; got {type(frame).__name__}.")
    columns = list(frame.columns)
    features = [column for column in columns if column != label] if features is None else list(features)
    absent = [column for column in [label, *features] if column not in columns]
    if absent:
        raise ValueError(f"columns {absent} are not in the frame; its columns are {columns[:20]}.")
    text = [column for column in [label, *features]
            if not (is_numeric_dtype(frame.dtypes[column]) or is_bool_dtype(frame.dtypes[column]))]
    if text:
        raise ValueError(f"columns {text} are not numeric: encode them with a declared schema first "
                         "(dpconvex.estimators.preprocessing.PublicSchemaTransformer), or leave them out of "
                         "features.")
    if not features:
        raise ValueError(f"features must name at least one column other than the label {label!r}.")
    check_bounds(data_norm, label_bound)
    pieces = [dask.delayed(blocks.frame_block, pure=True)(partition, features, label, data_norm, label_bound)
              for partition in frame.to_delayed()]
    return pieces, [repr(column) for column in features]


def fits_in_cluster_memory(client: distributed.Client, nbytes: int, share: float = 0.5) -> bool:
    """Whether ``nbytes`` take at most ``share`` of the workers' memory limits; False if a worker has no
    limit (nothing to compare with: read from the source rather than risk holding too much).

    Parameters
    ----------
    client : distributed.Client
    nbytes : int
        Size of the data.
    share : float, optional
        Share of the workers' summed memory limits the data may take.

    Returns
    -------
    bool
    """
    limits = [worker.get("memory_limit") or 0 for worker in client.scheduler_info()["workers"].values()]
    return bool(limits) and 0 not in limits and nbytes <= share * sum(limits)


def require_known_chunks(X: da.Array) -> None:
    """``ValueError`` saying what to do when ``X``'s row chunks have unknown sizes.

    Parameters
    ----------
    X : dask.array.Array
    """
    if any(np.isnan(size) for size in X.chunks[0]):
        raise ValueError("X has unknown row-chunk sizes (e.g. after boolean indexing): call "
                         "X.compute_chunk_sizes() first, or use from_dataframe for a table.")


def current_client(client: distributed.Client | None) -> distributed.Client:
    """``client``, or the current one; ``ValueError`` saying how to start one if there is none.

    Parameters
    ----------
    client : distributed.Client or None

    Returns
    -------
    distributed.Client
    """
    if client is not None:
        return client
    try:
        return distributed.get_client()
    except ValueError as error:
        raise ValueError("no Dask client: pass client=, or start one first, e.g. distributed.Client() for a "
                         "LocalCluster or distributed.Client('tcp://scheduler:8786') for an existing "
                         "cluster.") from error


def check_bounds(data_norm: float, label_bound: float | None) -> None:
    """``ValueError`` unless ``data_norm`` (and ``label_bound``, if given) is a finite real number > 0.

    Parameters
    ----------
    data_norm : float
        Bound on ‖xᵢ‖₂.
    label_bound : float or None
        Bound on |yᵢ|, or None.
    """
    bounds = {"data_norm": data_norm} if label_bound is None else {"data_norm": data_norm, "label_bound": label_bound}
    for name, value in bounds.items():
        if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be finite and > 0; got {value!r}.")
