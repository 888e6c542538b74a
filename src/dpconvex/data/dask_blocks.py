"""Blocks of :mod:`dpconvex.data.dask_data`: one validated row block, the functions run on it, and its report.

Every function but :func:`read_reports` and :func:`nonfinite_message` runs inside a Dask task on
the worker that holds the block and returns only small things to the client: a :class:`BlockReport`
once, then one gradient or loss sum per call.  :func:`read_reports` runs on the client and turns
the reports into the errors and the warning of the blockwise checks.  The client's side
(:func:`read_reports`, :func:`nonfinite_message`, :func:`raise_label_error`) is in
:mod:`dpconvex.data.dask_reports`, re-exported here.
"""

from __future__ import annotations

import warnings
import zlib
from dataclasses import dataclass

import numpy as np
from distributed import get_worker
from numpy.typing import NDArray

from dpconvex.data.checks import enforce_label_bound, enforce_norm_bound
from dpconvex.data.dask_reports import nonfinite_message, raise_label_error, read_reports
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.objectives.losses import Loss, row_norms

__all__ = ["Block", "BlockReport", "array_block", "frame_block", "largest_row_norm", "block_checks",
           "raise_label_error", "gradient_sum", "loss_sum", "group_sums", "block_label_error", "read_reports",
           "nonfinite_message"]

#: Rows of a block a task reads: all of them (None), a contiguous range, or sorted local indices.
LocalRows = None | slice | NDArray[np.int64]


@dataclass(frozen=True)
class BlockReport:
    """What the client learns about a block when it is built (no data, only counts and positions).

    Rows are local to the block (0 … ``rows`` − 1); the client adds the block's offset.

    Attributes
    ----------
    rows, rows_over_norm : int
        Rows held, and rows clipped to ``data_norm``.
    fingerprint : int
    nonfinite : tuple of (str, int, int) or None
    largest_norm : float
        Largest row norm before clipping.
    """

    rows: int
    #: CRC-32 of the validated features and labels: a block recomputed after a worker was lost must
    #: reproduce it, or the client refuses its sums (its source changed since it was validated).
    fingerprint: int
    #: ``("X", row, column)`` or ``("y", row, 0)`` of the first NaN/inf, or None.
    nonfinite: tuple[str, int, int] | None
    rows_over_norm: int
    largest_norm: float
    largest_norm_row: int
    labels_over_bound: int
    largest_label: float
    largest_label_row: int


@dataclass(frozen=True)
class Block:
    """A row block as the gradient sums read it: features clipped to ``data_norm``, their norms, labels.

    Attributes
    ----------
    features, labels, norms : ndarray
        Clipped rows (rows, d), clipped targets (rows,) and row norms (rows,).
    report : BlockReport
    """

    features: NDArray[np.float64]
    labels: NDArray[np.float64]
    norms: NDArray[np.float64]
    report: BlockReport


def _fingerprint(features: NDArray, labels: NDArray) -> int:
    return zlib.crc32(np.ascontiguousarray(labels).data, zlib.crc32(np.ascontiguousarray(features).data))


def _first_nonfinite(features: NDArray, labels: NDArray) -> tuple[str, int, int] | None:
    finite = np.isfinite(features)
    if not finite.all():
        row, column = np.argwhere(~finite)[0]
        return "X", int(row), int(column)
    bad_labels = np.flatnonzero(~np.isfinite(labels))
    return ("y", int(bad_labels[0]), 0) if bad_labels.size else None


def array_block(features: NDArray, labels: NDArray, data_norm: float, label_bound: float | None,
                constant_column: float | None = None) -> Block:
    """Validate one row block: finite values, rows clipped to ``data_norm``, targets to ``label_bound``.

    With ``constant_column``, a column of that value is appended to the clipped rows (an intercept's
    constant feature); the report and the fingerprint describe the rows as held.

    The clipping is :func:`~dpconvex.data.checks.enforce_norm_bound` and
    :func:`~dpconvex.data.checks.enforce_label_bound`, the in-memory rules, with their warnings
    silenced here: the client warns once for all blocks (or refuses, with ``strict``) from the
    report.  A block with a non-finite value is returned unclipped; the client refuses it.

    Parameters
    ----------
    features, labels : array_like
        The block's rows of X (rows, d) and targets (rows,).
    data_norm : float
    label_bound : float or None
    constant_column : float or None, optional

    Returns
    -------
    Block
    """
    features = np.asarray(features, dtype=float)
    labels = np.asarray(labels, dtype=float).reshape(-1)
    if features.ndim != 2 or labels.shape[0] != features.shape[0]:
        raise ValueError(f"a block of X must be 2-D with one label per row; got shapes {features.shape} "
                         f"and {labels.shape}.")
    nonfinite = _first_nonfinite(features, labels)
    over = labels_over = 0
    largest = largest_label = 0.0
    largest_row = largest_label_row = -1
    if nonfinite is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            clipped, over = enforce_norm_bound(features, data_norm)
            clipped_labels, labels_over = ((labels, 0) if label_bound is None
                                           else enforce_label_bound(labels, label_bound))
        if over:  # the offending row the client names: the one of largest norm
            original = row_norms(features)
            largest_row = int(np.argmax(original))
            largest = float(original[largest_row])
        if labels_over:
            largest_label_row = int(np.argmax(np.abs(labels)))
            largest_label = float(np.abs(labels[largest_label_row]))
        features, labels = clipped, clipped_labels
        if constant_column is not None:
            features = np.hstack([features, np.full((features.shape[0], 1), float(constant_column))])
    report = BlockReport(rows=features.shape[0], fingerprint=_fingerprint(features, labels), nonfinite=nonfinite,
                         rows_over_norm=over, largest_norm=largest, largest_norm_row=largest_row,
                         labels_over_bound=labels_over, largest_label=largest_label,
                         largest_label_row=largest_label_row)
    norms = row_norms(features) if nonfinite is None else np.empty(0)
    return Block(features=features, labels=labels, norms=norms, report=report)


def frame_block(partition, features: list, label, data_norm: float, label_bound: float | None) -> Block:
    """:func:`array_block` of a pandas partition: columns ``features`` as X, column ``label`` as y.

    X is converted to row-major float64 in one step: pandas hands the columns over column-major,
    and a row take from a column-major block (a Poisson batch) is about 700× slower.

    Parameters
    ----------
    partition : pandas.DataFrame
    features : list
    label
    data_norm : float
    label_bound : float or None

    Returns
    -------
    Block
    """
    columns = partition[features]
    dtypes = set(columns.dtypes)
    one_numpy_dtype = len(dtypes) == 1 and isinstance(next(iter(dtypes)), np.dtype)
    # mixed or nullable (extension) column types: pandas converts them (pd.NA to NaN, refused by the client)
    values = columns.to_numpy() if one_numpy_dtype else columns.to_numpy(dtype=float)
    return array_block(np.asarray(values, dtype=float, order="C"), partition[label].to_numpy(dtype=float),
                       data_norm, label_bound)


def largest_row_norm(features: NDArray) -> tuple[float, tuple[str, int, int] | None]:
    """(max ‖xᵢ‖₂ over a block of X, 0 if it is empty; its first NaN/inf as in :class:`BlockReport`, or None).

    Parameters
    ----------
    features : array_like, shape (rows, d)

    Returns
    -------
    largest : float
    nonfinite : tuple of (str, int, int) or None
    """
    features = np.asarray(features, dtype=float)
    nonfinite = _first_nonfinite(features, np.empty(0))
    largest = 0.0 if nonfinite is not None or features.shape[0] == 0 else float(row_norms(features).max())
    return largest, nonfinite


def block_checks(block: Block, loss: Loss | None) -> tuple[BlockReport, tuple[int, str] | None]:
    """The block's report (the only part of a block that travels to the client) and, given a loss, its
    :func:`block_label_error`: the validating pass checks the labels too (out of core, a pass is a read).

    Parameters
    ----------
    block : Block
    loss : Loss or None

    Returns
    -------
    report : BlockReport
    label_error : tuple of (int, str) or None
    """
    return block.report, None if loss is None else block_label_error(block, loss)


def _rows(block: Block, rows: LocalRows) -> tuple[NDArray, NDArray, NDArray]:
    """Features, labels and norms of ``rows``: views for None and slices, ``take`` copies for indices."""
    if rows is None:
        return block.features, block.labels, block.norms
    if isinstance(rows, slice):
        return block.features[rows], block.labels[rows], block.norms[rows]
    return block.features.take(rows, axis=0), block.labels.take(rows), block.norms.take(rows)


def gradient_sum(block: Block, loss: Loss, w: NDArray, clip_norm: float | None,
                 rows: LocalRows) -> tuple[NDArray[np.float64], int, int]:
    """``(Σ_{i∈rows} clip(∇ℓ(w; xᵢ, yᵢ)), rows summed, fingerprint)``, the sum by ``loss.gradient_sum``.

    Parameters
    ----------
    block : Block
    loss : Loss
    w : ndarray, shape (d,)
    clip_norm : float or None
    rows : None, slice or ndarray of int64

    Returns
    -------
    tuple of (ndarray, int, int)
        Σ of the clipped gradients, rows summed, fingerprint.
    """
    features, labels, norms = _rows(block, rows)
    return loss.gradient_sum(w, features, labels, clip_norm, norms), features.shape[0], block.report.fingerprint


def loss_sum(block: Block, loss: Loss, w: NDArray, rows: LocalRows) -> tuple[float, int, int]:
    """``(Σ_{i∈rows} ℓ(w; xᵢ, yᵢ), rows summed, fingerprint)``.

    Parameters
    ----------
    block : Block
    loss : Loss
    w : ndarray, shape (d,)
    rows : None, slice or ndarray of int64

    Returns
    -------
    tuple of (float, int, int)
    """
    features, labels, _ = _rows(block, rows)
    return float(np.sum(loss.values(w, features, labels))), features.shape[0], block.report.fingerprint


def group_sums(group: list[Block], rows: list[LocalRows], block_sum, *arguments) -> tuple[str, list[tuple]]:
    """One task's work: ``block_sum(block, *arguments, rows)`` for each block of a group held by one worker.

    Returns the address of the worker that ran the task (the client re-reads the blocks' placement
    when it differs from the one the task was sent to) and one ``(sum, rows summed, fingerprint)``
    per block, in the group's order.  Grouping the blocks of a worker into one task per thread
    costs one task's scheduling per thread and call instead of one per block (docs/scale-out.md,
    "Design measurements").

    Parameters
    ----------
    group : list of Block
    rows : list
    block_sum : callable
    *arguments
        ``block_sum``'s arguments between the block and its rows.

    Returns
    -------
    address : str
    sums : list of tuple
    """
    return get_worker().address, [block_sum(block, *arguments, local) for block, local in zip(group, rows)]


def block_label_error(block: Block, loss: Loss) -> tuple[int, str] | None:
    """None if ``loss.check_labels`` accepts the block's labels, else (first offending row, its message).

    The row is found by bisection on prefixes (a prefix fails iff it holds a bad label), so the
    loss's own rule decides and the search costs O(log rows) checks, on failing blocks only.

    Parameters
    ----------
    block : Block
    loss : Loss

    Returns
    -------
    tuple of (int, str) or None
    """
    try:
        loss.check_labels(block.labels)
        return None
    except ValueError as error:
        message = str(error)
    good, bad = 0, block.labels.shape[0]  # the prefix of length `good` passes, of length `bad` fails
    while bad - good > 1:
        middle = (good + bad) // 2
        try:
            loss.check_labels(block.labels[:middle])
            good = middle
        except ValueError:
            bad = middle
    return bad - 1, message
