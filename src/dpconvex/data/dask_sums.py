"""Per-block sums on a Dask cluster, checked: which rows each block holds, where to run, and what came back.

:class:`~dpconvex.data.dask_data.DaskData` hands its blocks and a selection of rows here:
:func:`local_rows` splits the selection by block, :func:`worker_groups` reads from the scheduler
which worker holds which blocks (one group per worker thread), :func:`run_block_sums` submits one
task per group, pinned to its worker, and :func:`checked_results` checks every block's answer
against its row count and the fingerprint recorded when it was validated, so that a block
recomputed from a changed source, or a task the scheduler gave up on, raises ``RuntimeError``
instead of returning a wrong sum.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpconvex.data import dask_blocks as blocks

try:
    import dask
    import distributed
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("dpconvex.data.dask_sums needs Dask: pip install 'dpconvex[dask]'.") from error

__all__ = ["Rows", "checked_results", "expected_rows", "local_rows", "run_block_sums", "worker_groups"]

#: What ``rows`` may be: every row, a slice of positions, or sorted global row indices.
Rows = None | slice | NDArray[np.int64]


def local_rows(rows: Rows, offsets: NDArray[np.int64],
               order: NDArray[np.int64] | None = None) -> list[tuple[int, blocks.LocalRows]]:
    """``rows`` split into (block, local rows) pairs, non-empty blocks only, in block order.

    Parameters
    ----------
    rows : None, slice or ndarray of int64
        Every row; a slice of positions (of ``order``, else of the rows); or sorted global row indices.
    offsets : ndarray of int64, shape (n_blocks + 1,)
        Global index of each block's first row; ``offsets[-1]`` is n.
    order : ndarray of int64, shape (n,), optional
        Global row at each position, for slices of a permutation.

    Returns
    -------
    list of (int, None or slice or ndarray)
        Each block ``rows`` meets, with the rows it selects there (None: all of them).

    Raises
    ------
    ValueError
        ``rows`` of another kind, a slice with a step, or indices unsorted or out of range.
    """
    n, n_blocks = int(offsets[-1]), len(offsets) - 1
    if rows is None:
        return [(index, None) for index in range(n_blocks) if offsets[index + 1] > offsets[index]]
    if isinstance(rows, slice):
        if rows.step not in (None, 1):
            raise ValueError(f"rows as a slice must have step 1 (contiguous positions); got {rows!r}.")
        start, stop, _ = rows.indices(n)
        if order is not None:
            return local_rows(np.sort(order[start:stop]), offsets, order)
        parts = []
        for index in range(n_blocks):
            low, high = max(start, offsets[index]), min(stop, offsets[index + 1])
            if high > low:
                parts.append((index, slice(low - offsets[index], high - offsets[index])))
        return parts
    rows = np.asarray(rows)
    if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError(f"rows must be None, a slice or a 1-D integer array; got {type(rows).__name__} of "
                         f"dtype {rows.dtype} and shape {rows.shape}.")
    if rows.size and (rows[0] < 0 or rows[-1] >= n or np.any(rows[1:] < rows[:-1])):
        raise ValueError(f"rows must be sorted row indices in [0, {n}); got values from {rows.min()} to "
                         f"{rows.max()}{'' if np.all(rows[1:] >= rows[:-1]) else ', not sorted'}.")
    cuts = np.searchsorted(rows, offsets)
    return [(index, rows[cuts[index]:cuts[index + 1]] - offsets[index])
            for index in range(n_blocks) if cuts[index + 1] > cuts[index]]


def expected_rows(rows: Rows, n: int) -> int:
    """How many of the ``n`` rows ``rows`` selects (what the blocks' row counts must add up to).

    Parameters
    ----------
    rows : None, slice or ndarray of int64
        Row selection (None: all).
    n : int
        Number of rows.

    Returns
    -------
    int
    """
    if rows is None:
        return n
    if isinstance(rows, slice):
        return len(range(*rows.indices(n)))
    return int(np.asarray(rows).size)


def worker_groups(client: distributed.Client, futures: list) -> list[tuple[str, list[int]]]:
    """The blocks as (worker address, block indices) groups, one per worker thread, read from the scheduler.

    A block held nowhere yet gets the address "".

    Parameters
    ----------
    client : distributed.Client
    futures : list
        One future per block, in block order.

    Returns
    -------
    list of (str, list of int)
    """
    holders, threads = client.who_has(futures), client.nthreads()
    by_worker: dict[str, list[int]] = {}
    for index, future in enumerate(futures):
        by_worker.setdefault(min(holders.get(future.key) or ("",)), []).append(index)
    placement: list[tuple[str, list[int]]] = []
    for address, indices in by_worker.items():
        count = threads.get(address, 1)
        placement += [(address, indices[thread::count]) for thread in range(min(count, len(indices)))]
    return placement


def run_block_sums(client: distributed.Client, futures: list, groups: list[tuple[str, list[int]]] | None,
                   local: dict[int, blocks.LocalRows], block_sum, *arguments) -> tuple[dict[int, tuple], bool]:
    """``block_sum(block, *arguments, local rows)`` of every block of ``local``, run on the cluster.

    Parameters
    ----------
    client : distributed.Client
        The client whose cluster holds (or recomputes) the blocks.
    futures : list of distributed.Future or of dask.delayed.Delayed
        The blocks: held by the workers, or (out of core) delayed, recomputed from their source.
    groups : list of (str, list of int) or None
        :func:`worker_groups` of held blocks, one task per group pinned to its worker (free to run
        elsewhere if that worker is gone); None for delayed blocks: one task per block, so that a
        worker thread holds one block at a time.
    local : dict
        Block index -> its local rows (:func:`local_rows`).
    block_sum, *arguments
        The function run on each block (``dpconvex.data.dask_blocks``) and its arguments.

    Returns
    -------
    results : dict
        Block index -> (its sum, its row count, its fingerprint), unchecked (:func:`checked_results`).
    moved : bool
        Whether a task ran elsewhere than on the worker it was pinned to (``groups`` is then stale).

    Raises
    ------
    RuntimeError
        The scheduler gave up on a task (``KilledWorker``).
    """
    persisted = groups is not None
    submitted = []
    if not persisted:
        submitted = [("", [index], dask.delayed(blocks.group_sums, pure=False)(
            [futures[index]], [local[index]], block_sum, *arguments)) for index in sorted(local)]
    for address, group in groups or ():
        chosen = [index for index in group if index in local]
        if chosen:
            submitted.append((address, chosen, client.submit(
                blocks.group_sums, [futures[index] for index in chosen], [local[index] for index in chosen],
                block_sum, *arguments, workers=[address] if address else None, allow_other_workers=bool(address),
                pure=False)))
    try:
        tasks = [task for _, _, task in submitted]
        answers = client.gather(tasks) if persisted else client.compute(tasks, sync=True)
    except distributed.KilledWorker as error:
        raise RuntimeError(f"the scheduler gave up on a task of this DaskData after losing the workers that ran "
                           f"it ({error}); no sum was returned. Check the workers' memory and logs, then rebuild "
                           "the DaskData.") from error
    results, moved = {}, False
    for (address, chosen, _), (ran_on, values) in zip(submitted, answers):
        if ran_on != address and persisted:
            moved = True
        results.update(zip(chosen, values))
    return results, moved


def checked_results(results: dict[int, tuple], fingerprints: NDArray[np.int64], expected: int) -> list:
    """The sums of :func:`run_block_sums`' ``results`` in block order, once every block's answer is checked.

    Parameters
    ----------
    results : dict
        Block index -> (its sum, its row count, its fingerprint).
    fingerprints : ndarray of int64
        Each block's CRC-32 when it was validated.
    expected : int
        The number of rows selected (:func:`expected_rows`).

    Returns
    -------
    list
        The blocks' sums, in block order.

    Raises
    ------
    RuntimeError
        A block was recomputed with other content than the one validated, or the blocks' row counts
        do not add up to ``expected``.
    """
    changed = [index for index, (_, _, fingerprint) in results.items() if fingerprint != fingerprints[index]]
    if changed:
        raise RuntimeError(f"block {changed[0]} was recomputed (its worker was lost) with other content than the "
                           "one validated: the source changed since this DaskData was built. No sum was "
                           "returned; rebuild the DaskData from the current data.")
    summed = sum(count for _, count, _ in results.values())
    if summed != expected:
        raise RuntimeError(f"the blocks summed {summed} rows instead of the {expected} selected; no sum was "
                           "returned. Rebuild the DaskData.")
    return [results[index][0] for index in sorted(results)]
