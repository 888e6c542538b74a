"""The batches of noisy mini-batch SGD (:mod:`dpconvex.mechanisms.noisy_sgd`): Poisson samples or permutation slices.

The batch sizes are public (they enter the accounting event); which rows a batch holds is secret: the
Poisson memberships and the permutation of a shuffled run are drawn from the run's generator and never
reported.  ``dpconvex.audit.soundness_oracles`` replays the Poisson batches of a run from its logged
gaps (``_poisson_batches_from_gaps``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import noisy_sgd as accountant


def _batches(event: accountant.NoisySGDEvent, rng: np.random.Generator
             ) -> tuple[NDArray[np.int64] | None, Iterator[NDArray[np.int64] | slice]]:
    """The T batches as sorted index arrays (Poisson, drawn lazily) or slices of the once-permuted rows.

    Returns ``(order, batches)``: shuffled/cyclic runs permute the rows once by ``order`` (the
    secret partition of a shuffled run; the identity for cyclic) and then read contiguous slices,
    so no step copies a batch; Poisson batches index the original rows (``order`` is ``None``).

    Poisson batches (every record in every step independently with probability q): the T·n
    memberships, step t on positions t·n … (t + 1)·n − 1, are one Bernoulli(q) sequence, whose
    successes are the partial sums minus one of i.i.d. Geometric(q) gaps on {1, 2, …}.  The gaps
    are drawn by ``rng.geometric(q, size)`` in chunks (each chunk continues the stream where the
    previous one ended, so chunk sizes do not change the law) until the stream passes T·n; step t
    is the successes in its n positions, reduced mod n: a sorted array, O(expected batch) work per
    step.  q = 1 gives gaps of 1, every row.  ``dpconvex.audit.soundness_oracles`` replays the batches
    from the logged gaps by the same rule (:func:`_poisson_batches_from_gaps`).
    """
    n, b = event.n, event.batch_size
    if event.batching == "poisson":
        return None, _poisson_batches(n, event.sampling_rate, event.steps, rng)
    order = rng.permutation(n) if event.batching == "shuffled" else None
    partition = [slice(start, start + b) for start in range(0, n, b)]
    return order, (batch for _ in range(event.epochs) for batch in partition)


#: Expected successes drawn per chunk of geometric gaps (unless one step needs more).
_GAPS_PER_CHUNK = 1 << 16


def _gap_count(q: float, span: int) -> int:
    """Gaps to draw so that their sum passes ``span`` positions but for a 6-sd event (then: draw again)."""
    mean = q * span
    return int(math.ceil(mean + 6.0 * math.sqrt(mean * (1.0 - q)))) + 16


def _poisson_batches(n: int, q: float, steps: int, rng: np.random.Generator) -> Iterator[NDArray[np.int64]]:
    """Yield ``steps`` sorted index arrays, each row independently in each with probability q (see :func:`_batches`)."""
    end = n * steps                     # positions 0 … end − 1 hold every membership of the run
    last = -1                           # position of the latest success drawn
    pending = np.empty(0, dtype=np.int64)
    step = 0
    while step < steps:
        # Span to cover: at least the current step, about _GAPS_PER_CHUNK successes, at most the run.
        span = min(end - 1 - last, max((step + 1) * n - 1 - last, math.ceil(_GAPS_PER_CHUNK / q)))
        positions = np.cumsum(rng.geometric(q, size=_gap_count(q, span)))
        positions += last
        last = int(positions[-1])
        if pending.size:
            positions = np.concatenate((pending, positions))
        done = min(steps, (last + 1) // n)  # steps whose positions are all decided
        if done == step:
            pending = positions
            continue
        cuts = np.searchsorted(positions, n * np.arange(step + 1, done + 1)).tolist()
        rows = positions % n
        start = 0
        for cut in cuts:
            yield rows[start:cut]
            start = cut
        pending = positions[start:]
        step = done


def _poisson_batches_from_gaps(gaps: NDArray, n: int, steps: int) -> list[NDArray]:
    """The batches of :func:`_poisson_batches` from all its geometric gaps, concatenated (for replays)."""
    positions = np.cumsum(np.asarray(gaps, dtype=np.int64)) - 1
    positions = positions[positions < n * steps]
    return np.split(positions % n, np.searchsorted(positions, n * np.arange(1, steps)))
