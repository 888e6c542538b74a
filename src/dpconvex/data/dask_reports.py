"""The client's side of the blockwise checks of :mod:`dpconvex.data.dask_data`: the blocks' reports read.

The blocks (``dpconvex.data.dask_blocks``, which re-exports every name here) are built and checked
inside Dask tasks; each returns a small ``BlockReport`` (counts and positions, no data) and, for a
loss with a label rule, the first offending row.  These functions run on the client: they turn the
reports into the offsets of the blocks, the errors (naming block, global row and column) and the
:class:`~dpconvex.exceptions.PrivacyLeakWarning` of clipped rows and targets.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from dpconvex.exceptions import PrivacyLeakWarning

if TYPE_CHECKING:  # the block record lives with the tasks, which re-export this module's functions
    from dpconvex.data.dask_blocks import BlockReport

__all__ = ["read_reports", "nonfinite_message", "raise_label_error"]


def raise_label_error(errors: list, offsets: NDArray[np.int64]) -> None:
    """``ValueError`` naming block and row for the first of the blocks' label errors that is not None.

    Parameters
    ----------
    errors : list
        Each block's ``dask_blocks.block_label_error``, in block order.
    offsets : ndarray of int64
        Global index of each block's first row.

    Raises
    ------
    ValueError
        For the first error that is not None.
    """
    for index, error in enumerate(errors):
        if error is not None:
            row, message = error
            raise ValueError(f"block {index}, row {offsets[index] + row} (row {row} of the block): {message}")


def read_reports(reports: list[BlockReport], column_names: list[str], data_norm: float, label_bound: float | None,
                 strict: bool) -> NDArray[np.int64]:
    """The blocks' offsets (global index of each block's first row, then n), after the blockwise checks.

    Raises ``ValueError`` for an empty table, a NaN/inf (naming block, global row and column) or,
    with ``strict``, rows above ``data_norm`` or targets above ``label_bound`` (naming the block and
    row of the largest); without ``strict`` the clipped rows and targets give one
    :class:`~dpconvex.exceptions.PrivacyLeakWarning` each, with the total count.

    Parameters
    ----------
    reports : list of BlockReport
        Each block's report (``dask_blocks.BlockReport``), in block order.
    column_names : list of str
        The feature columns, to name a column holding a NaN/inf.
    data_norm : float
        The declared bound on ‖xᵢ‖₂ the blocks clipped to.
    label_bound : float or None
        The declared bound on |yᵢ| (None: targets not bounded).
    strict : bool
        Refuse rows or targets above their bound instead of warning that they were clipped.

    Returns
    -------
    ndarray of int64
        The offsets, one per block and then n (so ``len(reports) + 1`` entries).
    """
    offsets = np.concatenate(([0], np.cumsum([report.rows for report in reports]))).astype(np.int64)
    if offsets[-1] == 0 or not column_names:
        raise ValueError(f"X must have at least one sample and one feature; got shape ({offsets[-1]}, "
                         f"{len(column_names)}).")
    for index, report in enumerate(reports):
        if report.nonfinite is not None:
            raise ValueError(nonfinite_message(report.nonfinite, index, int(offsets[index]), column_names))
    _report_clipping(reports, offsets, "rows have L2 norm above", f"data_norm={data_norm:g}",
                     "rows_over_norm", "largest_norm", "largest_norm_row", "||x||_2 <= data_norm", strict)
    if label_bound is not None:
        _report_clipping(reports, offsets, "targets have |y| above", f"label_bound={label_bound:g}",
                         "labels_over_bound", "largest_label", "largest_label_row", "|y| <= label_bound", strict)
    return offsets


def nonfinite_message(nonfinite: tuple[str, int, int], index: int, offset: int, column_names: list[str]) -> str:
    """The error for a NaN/inf at ``nonfinite`` (as in ``dask_blocks.BlockReport``) of block ``index``.

    The block's first row is ``offset``.

    Parameters
    ----------
    nonfinite : tuple of (str, int, int)
    index : int
    offset : int
    column_names : list of str

    Returns
    -------
    str
    """
    name, row, column = nonfinite
    where = f"column {column_names[column]}" if name == "X" else "the label"
    return (f"{name} must contain only finite values (no NaN or inf); block {index} has one at row {offset + row} "
            f"(row {row} of the block), {where}.")


def _report_clipping(reports: list, offsets: NDArray[np.int64], what: str, bound: str, count: str, largest: str,
                     largest_row: str, rule: str, strict: bool) -> None:
    """Warn once (``PrivacyLeakWarning``) with the total count of clipped rows, or refuse them with ``strict``.

    ``count``, ``largest`` and ``largest_row`` name the ``BlockReport`` fields; the row named
    is the block's largest value of the block with the largest one.
    """
    total = sum(getattr(report, count) for report in reports)
    if not total:
        return
    index = max(range(len(reports)), key=lambda block: getattr(reports[block], largest))
    row = getattr(reports[index], largest_row)
    message = (f"{total} of {offsets[-1]} {what} {bound} (largest {getattr(reports[index], largest):.4g}, "
               f"in block {index} at row {offsets[index] + row}, row {row} of the block)")
    if strict:
        raise ValueError(message + f"; with strict=True they must satisfy {rule}.")
    warnings.warn(message + "; they were clipped to the bound.", PrivacyLeakWarning, stacklevel=5)
