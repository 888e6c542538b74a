"""The estimators' fit on Dask collections: features, targets and labels read block by block on the cluster.

:mod:`dpconvex.estimators.base` calls these when ``X`` is a dask array or a dask DataFrame; the
data stay on the cluster of the current ``distributed`` client (:class:`~dpconvex.data.dask_data.DaskData`)
and the in-memory rules apply block by block: the same label encoding (:func:`encode_labels`),
the same checks of the declared label set, the same clipping to ``data_norm`` (before an
intercept's constant column is appended), each violation named by block and row.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpconvex.data.checks import warn_clipped_targets

__all__ = ["encode_labels", "array_with_lengths", "dask_features", "dask_targets", "dask_real_targets",
           "dask_label_set", "dask_encoded_labels", "dask_largest_row_norm", "dask_clipped_targets", "dask_data"]


def encode_labels(y: NDArray, classes: NDArray) -> NDArray[np.float64]:
    """Labels as the loss reads them: ±1 (the second class positive) for two classes, else indices 0..K−1.

    Parameters
    ----------
    y : ndarray
        Labels, only labels of ``classes``.
    classes : ndarray
        The sorted label set.

    Returns
    -------
    ndarray
        ±1 (two classes) or the class indices, as float64.
    """
    indices = np.searchsorted(classes, y)
    return np.where(indices == 1, 1.0, -1.0) if classes.size == 2 else indices.astype(float)


def array_with_lengths(collection) -> object:
    """A dask DataFrame or Series as a dask array whose row chunks are its partitions' lengths.

    ``to_dask_array(lengths=True)`` alone fails on a column selection of a Parquet table (dask
    issue 12411, open in dask 2026.8): the optimiser fuses the partitions of a narrow read, and
    the lengths are counted on one fusion and checked against another.  With the optimiser's
    tuning step (where that fusion happens) switched off for the conversion, one partition is
    one block, as :class:`~dpconvex.data.dask_data.DaskData` expects.

    Parameters
    ----------
    collection : dask DataFrame or Series
        The collection to convert.

    Returns
    -------
    dask array
    """
    import dask

    with dask.config.set({"optimization.tune.active": False}):
        return collection.to_dask_array(lengths=True)


def dask_features(X) -> tuple:
    """``X`` as a float64 dask array with known row chunks, and its column names (None for an array).

    Raises ``ValueError`` for a non-numeric column (named) or an array that is not 2-D.  Missing
    values become NaN, which :class:`~dpconvex.data.dask_data.DaskData` refuses naming block, row and column.

    Parameters
    ----------
    X : dask array or dask DataFrame
        The features.

    Returns
    -------
    X : dask array
        float64, with known row chunks.
    names : list or None
        The column names of a DataFrame.
    """
    import dask.array as da
    import dask.dataframe as dd
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    names = None
    if isinstance(X, dd.DataFrame):
        text = [column for column, dtype in X.dtypes.items() if not (is_numeric_dtype(dtype) or is_bool_dtype(dtype))]
        if text:
            raise ValueError(f"X has non-numeric columns {[str(c) for c in text[:10]]}: encode them with a declared "
                             "schema first, e.g. dpconvex.estimators.preprocessing.PublicSchemaTransformer in a "
                             "Pipeline "
                             "before the estimator (it encodes a dask DataFrame partition by partition).")
        names = list(X.columns)
        X = array_with_lengths(X)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask array or a dask DataFrame (n_samples, n_features); got "
                         f"{type(X).__name__} of shape {getattr(X, 'shape', None)}.")
    return X.astype(float), names


def dask_targets(y, X) -> object:
    """``y`` (dask array or Series, or an ndarray) as a 1-D dask array with X's row chunks.

    Parameters
    ----------
    y : dask array, dask Series or ndarray
        The targets, one per row of ``X``.
    X : dask array
        The features, with known row chunks.

    Returns
    -------
    dask array
    """
    import dask.array as da
    import dask.dataframe as dd

    from dpconvex.data.dask_data import require_known_chunks

    require_known_chunks(X)  # before y is compared with X's length
    if isinstance(y, (dd.Series, dd.DataFrame)):
        if isinstance(y, dd.Series) and str(y.dtype) in ("string", "str"):  # labels as text: NumPy objects
            y = y.astype(object)
        y = array_with_lengths(y)
    if not isinstance(y, da.Array):
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y must be 1-D with one entry per row of X ({X.shape[0]}); got shape {y.shape}.")
        return da.from_array(y, chunks=(X.chunks[0],))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D with one entry per row of X ({X.shape[0]}); got shape {y.shape}.")
    return y if y.chunks[0] == X.chunks[0] else y.rechunk((X.chunks[0],))


def dask_real_targets(y) -> object:
    """A regressor's targets ``y`` (a 1-D dask array) as float64, still on the cluster (lazy).

    Numeric and boolean dtypes are cast; object and text dtypes are converted block by block on the
    workers, as ``np.asarray(y, dtype=float)`` converts them in memory, and an entry that is not a
    number is refused there naming its block and row (``_real_block``).  Other dtypes (dates,
    complex numbers) are refused at once.

    Parameters
    ----------
    y : dask array
        The targets.

    Returns
    -------
    dask array
        float64.
    """
    if y.dtype.kind in "biuf":
        return y.astype(float)
    if y.dtype.kind in "OUS":
        return y.map_blocks(_real_block, dtype=float, meta=np.empty(0))
    raise ValueError(f"y must hold numbers (a regressor's targets); got dtype {y.dtype}: convert it to float first.")


def _real_block(block: NDArray, block_info: dict | None = None) -> NDArray[np.float64]:
    """One block of y as float64 (run on a worker).

    ``ValueError`` naming the block and row of an entry that is not a number.
    """
    try:
        return np.asarray(block, dtype=float)
    except (TypeError, ValueError):
        row = next(row for row, value in enumerate(block) if not _is_number(value))
    index, start = block_info[0]["chunk-location"][0], block_info[0]["array-location"][0][0]
    raise ValueError(f"y must hold numbers (a regressor's targets); block {index} holds {block[row]!r} at row "
                     f"{start + row} (row {row} of the block).")


def _is_number(value) -> bool:
    """Whether ``float(value)`` succeeds."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def dask_label_set(y, declared: NDArray | None) -> tuple[NDArray, bool]:
    """The sorted label set and whether it was read from ``y``: ``declared`` (checked against ``y``) or ``y``'s labels.

    Raises ``ValueError`` for labels of ``y`` outside ``declared`` (the first five found), or, when
    nothing was declared, for labels scikit-learn's ``check_classification_targets`` refuses (as
    in memory: NaN, continuous values) or a single class.

    Parameters
    ----------
    y : dask array
        The labels.
    declared : ndarray or None
        The declared sorted label set.

    Returns
    -------
    classes : ndarray
        The sorted label set.
    read_from_y : bool
        Whether it was read from ``y``.
    """
    import dask.array as da
    from sklearn.utils.multiclass import check_classification_targets

    if declared is None:
        labels = da.unique(y).compute()  # the target type depends only on the distinct labels
        with np.errstate(invalid="ignore"):  # NaN cast to int while sklearn finds it (it then raises)
            check_classification_targets(labels)
        classes = np.unique(labels)
        if classes.size < 2:
            raise ValueError(f"y holds a single class ({classes.tolist()!r}); a classifier needs two or more: "
                             "declare the label set with classes=[...] (a declared class may be absent from y).")
        return classes, True
    outside = ~da.isin(y, declared)
    if bool(outside.any().compute()):
        found = np.unique(y[outside].compute()).tolist()[:5]
        raise ValueError(f"y holds labels outside classes={declared.tolist()!r}: {found}; add them to classes, or "
                         "remove those records.")
    return declared, False


def dask_encoded_labels(y, classes: NDArray) -> object:
    """:func:`encode_labels` block by block (lazy).

    Parameters
    ----------
    y : dask array
        The labels.
    classes : ndarray
        The sorted label set.

    Returns
    -------
    dask array
    """
    return y.map_blocks(encode_labels, classes, dtype=float)


def dask_largest_row_norm(X) -> float:
    """max ‖xᵢ‖₂ over the rows (for ``data_norm="from_data"``, which voids the guarantee), one task per row block.

    Raises ``ValueError`` for a NaN/inf, naming its block, row and column as the blockwise
    validation does (:func:`dpconvex.data.dask_blocks.nonfinite_message`).

    Parameters
    ----------
    X : dask array
        The features.

    Returns
    -------
    float
    """
    import dask

    from dpconvex.data import dask_blocks as blocks

    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    results = dask.compute(*[dask.delayed(blocks.largest_row_norm)(block) for block in X.to_delayed()[:, 0]])
    offsets = np.concatenate(([0], np.cumsum(X.chunks[0])))
    for index, (_, nonfinite) in enumerate(results):
        if nonfinite is not None:
            raise ValueError(blocks.nonfinite_message(nonfinite, index, int(offsets[index]),
                                                      [str(column) for column in range(X.shape[1])]))
    return max(largest for largest, _ in results)


def dask_clipped_targets(y, label_bound: float, *, strict: bool) -> object:
    """``y`` clipped to [−label_bound, label_bound] on its cluster, as ``enforce_label_bound`` clips in memory.

    The count of clipped targets is computed once and goes to the in-memory rule's ``PrivacyLeakWarning``
    (:func:`~dpconvex.data.checks.warn_clipped_targets`; ``strict``: ``ValueError``); it never enters the certificate.

    Parameters
    ----------
    y : dask array
        The targets.
    label_bound : float
        Y.
    strict : bool
        Raise instead of clipping.

    Returns
    -------
    dask array
    """
    count = int((abs(y) > label_bound).sum().compute())
    warn_clipped_targets(count, y.shape[0], label_bound, strict, stacklevel=4)
    return y.clip(-label_bound, label_bound)


def dask_data(X, y, *, data_norm: float, label_bound: float | None, fit_intercept: bool, strict: bool,
              column_names: list | None = None, loss=None):
    """Validate and persist X, y on the cluster: rows clipped to ``data_norm``, then the intercept's column appended.

    Returns the :class:`~dpconvex.data.dask_data.DaskData`; its ``norm_bound`` is the declared bound of
    the rows it holds (√2·data_norm with the intercept's constant column equal to ``data_norm``).
    Given ``loss``, the same pass checks the labels against its rule.

    Parameters
    ----------
    X, y : dask array
        Features and targets.
    data_norm : float
        Declared bound on ‖x‖₂.
    label_bound : float or None
        Declared bound on |y| (regression).
    fit_intercept : bool
        Append the intercept's constant column.
    strict : bool
        Raise instead of clipping.
    column_names : list, optional
        The features' names.
    loss : Loss, optional
        The loss whose label rule to check.

    Returns
    -------
    DaskData
    """
    from dpconvex.data.dask_data import DaskData

    return DaskData.from_array(X, y, data_norm=data_norm, label_bound=label_bound, strict=strict,
                               constant_column=data_norm if fit_intercept else None, column_names=column_names,
                               loss=loss)
