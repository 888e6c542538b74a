"""Data access on a Dask cluster: sums of clipped per-example gradients over row blocks held by workers.

:class:`DaskData` is the Dask implementation of the data-access interface every trainer reads its
data through (the in-memory one lives in ``dpconvex.mechanisms.problem``): attributes ``n`` and
``n_features``, and

* ``gradient_sum(loss, w, clip_norm, rows)`` = Σ_{i∈rows} clip(∇ℓ(w; xᵢ, yᵢ)), exactly
  ``loss.gradient_sum(w, X[rows], y[rows], clip_norm, row_norms[rows])`` of the validated data;
* ``loss_sum(loss, w)`` = Σᵢ ℓ(w; xᵢ, yᵢ) over all rows, for reports.

``rows`` is ``None`` (every row), a ``slice`` of positions (see *Permuted batches*) or a sorted
int64 array of global row indices (a Poisson batch, drawn on the client from the mechanism's own
generator, so the noise, the batches and the certificate are the in-memory run's).

Design
------
*Blocks.*  The rows are cut into the collection's row blocks (dask-array row chunks, dask-DataFrame
partitions; the inputs are checked and cut in ``dpconvex.data.dask_inputs``).  Each block is read,
checked and stored once on a worker (``dpconvex.data.dask_blocks``):
finite values, rows above ``data_norm`` clipped (``strict``: refused), targets above
``label_bound`` likewise, the row norms computed once.  The client receives one small
``BlockReport`` per block and raises or warns from them: a violation
names the block, the global row and the column; rows clipped give one
:class:`~dpconvex.exceptions.PrivacyLeakWarning` with the total count, as in memory.  The data never
travels to the client.

*Gradient sums.*  The client splits ``rows`` by block and submits one task per worker thread
(``dpconvex.data.dask_sums``), pinned to the worker holding its blocks and carrying only their
local rows; each block returns a d-vector, added on the client in block order, so the sum differs
from the in-memory one by floating-point reassociation only.

*Permuted batches.*  Shuffled and cyclic runs read contiguous slices of positions of a fixed
permutation ``order`` held on the client (8·n bytes) by :meth:`DaskData.permuted`: a slice becomes
``sort(order[slice])`` and proceeds as a Poisson batch; the data never move.

*Worker loss.*  Blocks are futures of a graph that reads the source: a dead worker's blocks are
recomputed and its tasks retried.  Every result carries the block's row count and the CRC-32 of
its validated content, so a recomputed block that differs (the source changed) or a task given up
on (``KilledWorker``) raises ``RuntimeError`` — never a silently wrong sum.

Benchmark
---------
Why futures, what a pass and a Poisson step cost, and what would make small batches fast: the
section *Design measurements* of ``docs/scale-out.md``; ``dpconvex bench scale`` measures the rest.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from dpconvex.data import dask_blocks as blocks
from dpconvex.data.dask_inputs import (
    array_pieces,
    current_client,
    fits_in_cluster_memory,
    frame_pieces,
    require_known_chunks,
)
from dpconvex.data.dask_sums import Rows, checked_results, expected_rows, local_rows, run_block_sums, worker_groups
from dpconvex.objectives.losses import Loss

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import distributed
    from dask.delayed import Delayed
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("dpconvex.data.dask_data needs Dask: pip install 'dpconvex[dask]'.") from error

__all__ = ["DaskData", "fits_in_cluster_memory", "require_known_chunks"]



class DaskData:
    """Validated rows held by a Dask cluster, with the gradient and loss sums of the data-access interface.

    Build it with :meth:`from_array` or :meth:`from_dataframe`; the constructor only stores
    already-validated blocks.

    Parameters
    ----------
    client : distributed.Client
        The client whose cluster holds the blocks.
    futures : list of distributed.Future or of dask.delayed.Delayed
        One per row block, each computing a ``dpconvex.data.dask_blocks.Block``: futures of blocks
        held by the workers, or (out of core) the delayed blocks, recomputed from their source at
        every call.
    offsets : ndarray of int64, shape (n_blocks + 1,)
        Global index of each block's first row; ``offsets[-1]`` is n.
    fingerprints : ndarray of int64, shape (n_blocks,)
        Each block's CRC-32 when it was validated.
    n_features : int
        Columns of the rows held (with a ``constant_column``, the appended column included).
    norm_bound : float
        The bound every held row was validated at, ‖x‖₂ ≤ norm_bound.
    label_bound : float or None
        The bound every held target was validated at, |y| ≤ label_bound (None: not bounded).
    strict : bool
        Whether rows and targets above their bounds were refused (True) or clipped (False).
    order : ndarray of int64, shape (n,), optional
        Global row at each position, for slices of a permutation (:meth:`permuted`).

    Attributes
    ----------
    client, n_features, norm_bound, label_bound, strict
        As given (read-only, like every attribute: what was validated cannot be changed afterwards).
    n : int
        Rows.
    n_blocks : int
        Row blocks.
    persisted : bool
        Whether the blocks stay in the workers' memory (else each call reads them from their source).
    """

    #: The data backend's name, as the registry's ``backends`` list them.
    backend = "dask"

    def __init__(self, client: distributed.Client, futures: list, offsets: NDArray[np.int64],
                 fingerprints: NDArray[np.int64], n_features: int, *, norm_bound: float, label_bound: float | None,
                 strict: bool, order: NDArray[np.int64] | None = None) -> None:
        self._client = client
        self._futures = futures
        self._offsets = offsets
        self._fingerprints = fingerprints
        self._n_features = int(n_features)
        self._norm_bound, self._label_bound, self._strict = float(norm_bound), label_bound, bool(strict)
        self._order = order
        self._placement: list[tuple[str, list[int]]] | None = None
        self._labels_checked_for: Loss | None = None  # the loss whose label rule the build pass checked

    @property
    def client(self) -> distributed.Client:
        """The client whose cluster holds the blocks."""
        return self._client

    @property
    def n(self) -> int:
        """Rows."""
        return int(self._offsets[-1])

    @property
    def n_features(self) -> int:
        """Columns of the rows held."""
        return self._n_features

    @property
    def n_blocks(self) -> int:
        """Row blocks."""
        return len(self._futures)

    @property
    def persisted(self) -> bool:
        """Whether the blocks stay in the workers' memory (else each call reads them from their source)."""
        return not (self._futures and isinstance(self._futures[0], Delayed))

    @property
    def norm_bound(self) -> float:
        """The bound every held row was validated at, ‖x‖₂ ≤ norm_bound."""
        return self._norm_bound

    @property
    def label_bound(self) -> float | None:
        """The bound every held target was validated at, |y| ≤ label_bound (None: not bounded)."""
        return self._label_bound

    @property
    def strict(self) -> bool:
        """Whether rows and targets above their bounds were refused (True) or clipped (False) when validated."""
        return self._strict

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_array(cls, X: da.Array, y: da.Array | NDArray, *, data_norm: float, label_bound: float | None = None,
                   strict: bool = False, constant_column: float | None = None, persist: bool | None = None,
                   client: distributed.Client | None = None, column_names: list | None = None,
                   loss: Loss | None = None) -> DaskData:
        """Validate and persist a dask array X (n, d) and labels y (n,) on the cluster, block by block.

        Parameters
        ----------
        X : dask.array.Array
            Features, chunked along rows (column chunks are merged); the row chunks are the blocks.
        y : dask.array.Array or ndarray
            Labels or targets, shape (n,); rechunked to X's row chunks.
        data_norm : float
            Declared bound on ‖x‖₂; rows above it are clipped with a
            :class:`~dpconvex.exceptions.PrivacyLeakWarning` (``strict``: ``ValueError``).
        label_bound : float, optional
            Declared bound on |y| for regression targets (clipped likewise); None: not checked.
        strict : bool, default=False
            Refuse rows or targets above their bounds instead of clipping them.
        constant_column : float, optional
            Append a column equal to this value to every row after the row is clipped to
            ``data_norm`` (an intercept's constant feature); the rows then satisfy
            ‖x‖₂ ≤ √(data_norm² + constant_column²) = ``norm_bound``.
        persist : bool, optional
            Keep the validated blocks in the workers' memory (True), or read, validate and reduce each
            block from its source at every call, holding one block per worker thread at a time
            (False: out of core).  Default: persist when the validated data (8·n·(d + 3) bytes) take
            at most half the cluster's memory (:func:`fits_in_cluster_memory`).  The sums are the same.
        client : distributed.Client, optional
            Defaults to the current client (``distributed.get_client()``).
        column_names : list, optional
            Names of X's columns, used in the messages (e.g. a DataFrame's columns); default: their indices.
        loss : Loss, optional
            Check the labels against ``loss.check_labels`` in the validating pass (as :meth:`check_labels`).

        Raises
        ------
        ValueError
            Wrong types or shapes, NaN/inf (naming block, row and column), or, with ``strict``,
            rows above ``data_norm`` / targets above ``label_bound`` (naming block and row).
        """
        X, pieces = array_pieces(X, y, data_norm, label_bound, constant_column)
        client = current_client(client)
        if persist is None:
            persist = fits_in_cluster_memory(client, 8 * X.shape[0] * (X.shape[1] + 3))
        names = ([str(column) for column in range(X.shape[1])] if column_names is None
                 else [repr(c) for c in column_names])
        if len(names) != X.shape[1]:
            raise ValueError(f"column_names must name the {X.shape[1]} columns of X; got {len(names)} names.")
        return cls._build(pieces, names, data_norm, label_bound, strict, client, persist, constant_column, loss)

    @classmethod
    def from_dataframe(cls, frame: dd.DataFrame, label: str, *, features: list | None = None, data_norm: float,
                       label_bound: float | None = None, strict: bool = False, persist: bool | None = None,
                       client: distributed.Client | None = None) -> DaskData:
        """Validate and persist a dask DataFrame of numeric columns; each partition is a block.

        Parameters
        ----------
        frame : dask.dataframe.DataFrame
            The table, e.g. ``dask.dataframe.read_parquet(directory)``; only numeric (or boolean)
            columns may be used: encode categories first with a declared schema.
        label : str
            The column holding the labels or targets.
        features : list, optional
            The feature columns, in order; default: every column but ``label``.
        data_norm, label_bound, strict, persist, client
            As in :meth:`from_array` (the default of ``persist`` is decided once n is known, after the
            pass that validates the blocks).

        Raises
        ------
        ValueError
            A missing or non-numeric column (named), missing values or NaN/inf (naming block,
            row and column), or, with ``strict``, rows or targets above their bounds.
        """
        pieces, names = frame_pieces(frame, label, features, data_norm, label_bound)
        return cls._build(pieces, names, data_norm, label_bound, strict, current_client(client), persist)

    @classmethod
    def _build(cls, pieces: list, column_names: list[str], data_norm: float, label_bound: float | None,
               strict: bool, client: distributed.Client, persist: bool | None,
               constant_column: float | None = None, loss: Loss | None = None) -> DaskData:
        """Validate the blocks on the workers, check their reports on the client, keep them there or at their source.

        Persisted: the blocks are computed once and stay in the workers' memory.  Otherwise one
        pass computes only the reports (each block is dropped once reported), and every later call
        recomputes the blocks it reads from ``pieces``; ``persist=None`` decides after that pass.
        ``constant_column``: the one the pieces append to the rows (see :meth:`from_array`); ``loss``:
        whose label rule the same pass checks.
        """
        if persist:
            futures = client.compute(pieces)
            checks = client.gather(client.map(blocks.block_checks, futures, [loss] * len(futures), pure=False))
        else:
            checks = client.compute([dask.delayed(blocks.block_checks)(piece, loss) for piece in pieces], sync=True)
        reports = [report for report, _ in checks]
        offsets = blocks.read_reports(reports, column_names, data_norm, label_bound, strict)
        if persist is None and fits_in_cluster_memory(client, 8 * int(offsets[-1]) * (len(column_names) + 3)):
            persist, futures = True, client.compute(pieces)
        fingerprints = np.array([report.fingerprint for report in reports], dtype=np.int64)
        appended = constant_column is not None
        data = cls(client, futures if persist else pieces, offsets, fingerprints, len(column_names) + appended,
                   norm_bound=np.hypot(data_norm, constant_column) if appended else data_norm,
                   label_bound=label_bound, strict=strict)
        if loss is not None:
            blocks.raise_label_error([error for _, error in checks], offsets)
            data._labels_checked_for = loss
        return data

    def permuted(self, order: NDArray) -> DaskData:
        """The same blocks read in the order ``order`` (global row at each position) by slices of ``rows``.

        Raises ``ValueError`` unless ``order`` is a permutation of 0 … n − 1.
        """
        order = np.asarray(order)
        if (order.shape != (self.n,) or not np.issubdtype(order.dtype, np.integer)
                or not np.array_equal(np.sort(order), np.arange(self.n))):
            raise ValueError(f"order must be a permutation of 0..{self.n - 1} "
                             f"(an integer array of length n = {self.n}).")
        return type(self)(self.client, self._futures, self._offsets, self._fingerprints, self.n_features,
                          norm_bound=self.norm_bound, label_bound=self.label_bound, strict=self.strict,
                          order=order.astype(np.int64))

    # -- data access ------------------------------------------------------------------------------

    def gradient_sum(self, loss: Loss, w: NDArray, clip_norm: float | None, rows: Rows = None) -> NDArray[np.float64]:
        """Σ_{i∈rows} clip(∇ℓ(w; xᵢ, yᵢ)): ``loss.gradient_sum`` per block, added on the client in block order.

        Parameters
        ----------
        loss : Loss
            The per-example loss.
        w : ndarray, shape (loss.parameter_dimension(n_features),)
            The parameter.
        clip_norm : float or None
            Clip every per-example gradient to this L2 norm; None: no clipping.
        rows : None, slice or ndarray of int64
            Every row; a slice of positions (of :meth:`permuted`'s order, else of the rows); or
            sorted global row indices.

        Raises
        ------
        ValueError
            ``rows`` of another kind, unsorted or out of range.
        RuntimeError
            A block lost with its worker could not be recomputed, or was recomputed with other
            content than the one validated.
        """
        total = np.zeros(loss.parameter_dimension(self.n_features))
        for vector in self._sums(blocks.gradient_sum, rows, loss, np.asarray(w, dtype=float), clip_norm):
            total += vector
        return total

    def mean_gradient(self, loss: Loss, w: NDArray) -> NDArray[np.float64]:
        """(1/n) Σᵢ ∇ℓ(w; xᵢ, yᵢ), unclipped, over every row: :meth:`gradient_sum` divided by n."""
        return self.gradient_sum(loss, w, None) / self.n

    def loss_sum(self, loss: Loss, w: NDArray) -> float:
        """Σᵢ ℓ(w; xᵢ, yᵢ) over every row (for reports; divide by ``n`` for the mean)."""
        return float(sum(self._sums(blocks.loss_sum, None, loss, np.asarray(w, dtype=float))))

    def check_labels(self, loss: Loss) -> None:
        """Raise ``ValueError`` naming the block and row of the first label ``loss.check_labels`` refuses.

        A pass over the blocks, unless the pass that built this DaskData checked them for ``loss``.
        """
        if loss is self._labels_checked_for:
            return
        if self.persisted:
            errors = self.client.gather([self.client.submit(blocks.block_label_error, future, loss, pure=False)
                                         for future in self._futures])
        else:
            errors = self.client.compute([dask.delayed(blocks.block_label_error)(piece, loss)
                                          for piece in self._futures], sync=True)
        blocks.raise_label_error(errors, self._offsets)


    # -- helpers ----------------------------------------------------------------------------------

    def _local_rows(self, rows: Rows) -> list[tuple[int, blocks.LocalRows]]:
        """``rows`` split into (block, local rows) pairs, non-empty blocks only, in block order (:func:`local_rows`)."""
        return local_rows(rows, self._offsets, self._order)

    def _groups(self) -> list[tuple[str, list[int]]]:
        """The blocks as (worker address, block indices) groups, one per worker thread (:func:`worker_groups`).

        Cached until a task runs elsewhere than on the worker it was sent to (a worker was lost and
        its blocks were recomputed on others).
        """
        if self._placement is None:
            self._placement = worker_groups(self.client, self._futures)
        return self._placement

    def _sums(self, block_sum, rows: Rows, *arguments) -> list:
        """``block_sum(block, *arguments, local rows)`` of every block ``rows`` meets, in block order, checked.

        One task per group of ``_groups`` (held blocks) or per block (out of core); every block's
        result is checked against its row count and the fingerprint recorded when it was validated;
        see the module docstring (*Worker loss*).
        """
        local = dict(self._local_rows(rows))
        groups = self._groups() if self.persisted else None
        results, moved = run_block_sums(self.client, self._futures, groups, local, block_sum, *arguments)
        if moved:
            self._placement = None
        return checked_results(results, self._fingerprints, expected_rows(rows, self.n))
