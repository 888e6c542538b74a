"""Gaussian noisy counts for private schema discovery: partition selection and grid quantile bounds.

Conventions: replace-one neighbours (one record replaced by another), so the number of records n
is public.  Each mechanism adds independent N(0, σ²) noise to a vector of counts in which a record
contributes to one entry; replacing it moves one count down by one and another up by one, an L2
change of at most √2 (:data:`COUNT_SENSITIVITY`).  The Gaussian mechanism with that sensitivity
is μ-GDP with μ = √2/σ (Dong, Roth, Su 2019, arXiv:1905.02383, Thm 2.7), hence
:func:`count_noise`, σ = √2/μ.

Partition selection (:func:`select_partitions`) — Gaussian thresholding, the Gaussian form of the
stability histogram of Korolova, Kenthapadi, Mishra, Ntoulas 2009 (*Releasing search queries and
clicks privately*, WWW; Laplace noise there), studied as differentially private set union by Gopi,
Gulhane, Kulkarni, Shen, Shokouhi, Yekhanin 2020 (ICML, arXiv:2002.09745) and as partition selection
by Desfontaines, Voss, Gipson, Mandayam 2022 (PoPETs 2022(1), arXiv:2006.03684).  Every value present
in the data gets a noisy count c_v + σZ_v; the values whose noisy count exceeds τ are released (the
set only, sorted).

Derivation note (the guarantee: μ = √2/σ plus δ_τ = Φ̄((τ − 1)/σ)).  Let D, D' differ in one
record whose value is a in D and b in D'.  Split the values into *shared* ones (count ≥ 1 in both)
and *fresh* ones (count ≥ 1 in one data set only).  A fresh value has count exactly 1: only a can
be fresh in D (c_a(D') = c_a(D) − 1 = 0) and only b in D'.  The output is a function of
(G, A, B): G the noisy counts of the shared values (a Gaussian mechanism whose means differ by
e_a − e_b restricted to them, L2 norm ≤ √2: tradeoff ≥ G_μ), A the event that a fresh a crosses τ
(probability p = Pr[1 + σZ > τ] = δ_τ under D, 0 under D') and B likewise for a fresh b (0 under D,
p under D').  The three parts have independent noise, so for γ = e^ε the hockey-stick divergence of
the product splits over the outcomes of (A, B):
(A, B) = (0, 0) contributes (1 − p)·H_γ(G_D‖G_D'), (1, 0) contributes p (it has probability 0
under D'), (0, 1) contributes 0 (probability 0 under D).  Hence

    δ(ε) = (1 − p)·δ_G(ε) + p ≤ δ_μ(ε) + δ_τ,   δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),

the μ-GDP curve (:func:`~dpconvex.accounting.gdp.gdp_delta`) plus δ_τ, in both directions (the
reverse divergence swaps the roles of a and b): the second fresh value does *not* add a second δ_τ.
In f-DP terms the selection's tradeoff is at least G_μ ⊗ f_{0,δ_τ} (f_{0,δ}(α) = max(0, 1 − δ − α)
is the tradeoff of the pair above), so composed with a μ₂-GDP training run it is at least
G_{√(μ² + μ₂²)} ⊗ f_{0,δ_τ} (Dong, Roth, Su, Thm 3.2 and Cor. 3.3; ⊗ is commutative and
associative), whose δ(ε) is again at most δ_{√(μ²+μ₂²)}(ε) + δ_τ; several selections add their δ_τ
(f_{0,δ₁} ⊗ f_{0,δ₂} = f_{0,1−(1−δ₁)(1−δ₂)} ≥ f_{0,δ₁+δ₂}).  The threshold that makes p = δ_τ is

    τ = 1 + σ·Φ⁻¹(1 − δ_τ)      (:func:`selection_threshold`; inverse :func:`threshold_delta`).

Releasing the noisy counts of the released values would cost nothing more in this analysis (the
(1, 0) outcome keeps probability 0 under D' whatever it carries), but nothing here needs them.

Bounds of a numerical column (:func:`private_bounds`) — private quantiles from a noisy histogram
over a fixed public grid (:func:`grid_edges`): the edges e_0 < … < e_{m−1} are 0 and ±1, ±2, ±5
times 10^k for integers k in [min_exponent, max_exponent] (default 1e-6 … 5e12, 115 edges); the bins are the open
intervals between consecutive edges, every edge on its own (a value equal to an edge, such as 0, 1
or 100, falls in that edge's point bin) and the two outer rays, 2m + 1 bins, plus one bin for missing
or non-numeric cells.  The whole vector is one Gaussian mechanism (sensitivity √2, μ-GDP, no δ: the
bins are fixed, nothing is fresh).  The count of present values is estimated as n − (noisy missing
count), n public.  The lower bound is the lower edge of the first bin whose noisy cumulative count
(from the bottom) exceeds q_lo·n̂, the upper bound the upper edge of the first bin whose noisy count
from the top exceeds (1 − q_hi)·n̂; both are grid edges rounded outward (the outer rays give e_0 and
e_{m−1}), so they reveal no exact data value and clipping to them is meaningful.  Before the sums,
noisy bin counts at or below σ·Φ⁻¹(1 − :data:`EMPTY_BIN_RATE`/(2m + 1)) are set to 0, so that with
probability at least 1 − EMPTY_BIN_RATE no empty bin counts: without it the noise of the many empty
bins below the data adds up (sd σ√b after b bins) and, for q·n of a few σ, often drags a bound out
to ±5·10^12; with it a sparse tail makes the bounds err inward instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr, ndtri

from dpconvex.accounting._checks import check_delta, check_positive
from dpconvex.data.checks import make_rng

__all__ = ["COUNT_SENSITIVITY", "EMPTY_BIN_RATE", "GRID_MANTISSAS", "MIN_PRESENT_SDS", "STRAY_CUTS", "count_noise",
           "grid_edges", "private_bounds", "select_partitions", "selection_threshold", "threshold_delta"]

#: L2 sensitivity of a count vector under replace-one (a record moves from one count to another).
COUNT_SENSITIVITY = math.sqrt(2.0)

#: A noisy count of present values at or below this many noise standard deviations finds nothing
#: (an empty column passes it with probability Φ̄(5) ≈ 2.9e-7).
MIN_PRESENT_SDS = 5.0

#: The grid's steps within a decade (:func:`grid_edges`): a bound rounded outward to the grid is at most 2.5
#: times the quantile (from 2 to 5); with decades alone (10 times) a regression target's declared scale, and
#: with it the noise of its predictions, could grow tenfold (``docs/BENCHMARKS.md``, bare CSV).
GRID_MANTISSAS = (1, 2, 5)

#: With ``stray_guard``, a quantile is crossed only above this many empty-bin cuts (:func:`private_bounds`).
STRAY_CUTS = 3.0

#: Chance that some empty histogram bin survives the cut of :func:`private_bounds` (before the sums).
EMPTY_BIN_RATE = 0.05

RandomState = None | int | np.random.Generator | np.random.RandomState


def count_noise(mu: float) -> float:
    """Noise standard deviation σ = √2/μ that makes a replace-one count vector μ-GDP.

    Parameters
    ----------
    mu : float
        The mechanism's GDP parameter, > 0.

    Returns
    -------
    float
        σ (Dong, Roth, Su 2019, arXiv:1905.02383, Thm 2.7, with sensitivity :data:`COUNT_SENSITIVITY`).
    """
    return COUNT_SENSITIVITY / check_positive(mu, "mu")


def selection_threshold(sigma: float, delta: float) -> float:
    """Threshold τ = 1 + σ·Φ⁻¹(1 − δ) of Gaussian thresholding: a count-1 value crosses it with probability δ.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    delta : float
        δ_τ, in (0, 1).

    Returns
    -------
    float
        τ (computed as 1 − σ·Φ⁻¹(δ), accurate for tiny δ).
    """
    return 1.0 - check_positive(sigma, "sigma") * float(ndtri(check_delta(delta)))


def threshold_delta(sigma: float, threshold: float) -> float:
    """δ_τ = Pr[1 + σZ > τ] = Φ((1 − τ)/σ): the chance that a value held by one record is released.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, > 0.
    threshold : float
        τ.

    Returns
    -------
    float
        δ_τ, the inverse of :func:`selection_threshold` in δ.
    """
    return float(ndtr((1.0 - float(threshold)) / check_positive(sigma, "sigma")))


def select_partitions(cells: ArrayLike, *, mu: float, delta: float,
                      random_state: RandomState = None) -> tuple[str, ...]:
    """The values of ``cells`` whose Gaussian-noised count exceeds τ (Gaussian thresholding).

    Guarantee (module docstring): for replace-one neighbours, δ(ε) ≤ δ_μ(ε) + ``delta`` for every
    ε ≥ 0, δ_μ the ``mu``-GDP curve.  The noise is σ = :func:`count_noise` (``mu``) and the
    threshold τ = :func:`selection_threshold` (σ, ``delta``).  Values are drawn in sorted order.

    Parameters
    ----------
    cells : array_like of str
        The present (non-missing) cells of one column, one per record that has one.
    mu : float
        GDP parameter of the noisy counts, > 0.
    delta : float
        δ_τ, the probability that a value held by one record only is released, in (0, 1).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default None
        Source of the noise; None (for a release) draws from the operating system's entropy.

    Returns
    -------
    tuple of str
        The released values, sorted; a subset of the values present.
    """
    sigma = count_noise(mu)
    threshold = selection_threshold(sigma, delta)
    values, counts = np.unique(np.asarray(cells, dtype=object).astype(str), return_counts=True)
    noisy = counts + make_rng(random_state).normal(0.0, sigma, size=values.size)
    return tuple(str(value) for value in values[noisy > threshold])


def grid_edges(min_exponent: int = -6, max_exponent: int = 12) -> NDArray[np.float64]:
    """The public grid: 0 and ±m·10^k for m in :data:`GRID_MANTISSAS` and every integer k in [``min_exponent``,
    ``max_exponent``], ascending.

    Parameters
    ----------
    min_exponent, max_exponent : int, default -6 and 12
        Smallest and largest decimal exponent, ``min_exponent <= max_exponent``.

    Returns
    -------
    numpy.ndarray of float64, shape (2·3·(max_exponent − min_exponent + 1) + 1,)
        Exact decimal values (``5e-3`` as Python reads the text, not 5·10.0**-3).
    """
    if not min_exponent <= max_exponent:
        raise ValueError(f"min_exponent must be <= max_exponent; got {min_exponent} and {max_exponent}")
    positive = np.array([float(f"{mantissa}e{k}") for k in range(int(min_exponent), int(max_exponent) + 1)
                         for mantissa in GRID_MANTISSAS])
    return np.concatenate([-positive[::-1], [0.0], positive])


def _bin_edges(edges: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Outward edges (lower, upper) of the 2m + 1 bins: ray, {e_0}, (e_0, e_1), {e_1}, …, {e_{m−1}}, ray."""
    below = np.concatenate([[edges[0]], edges])  # lower edge of the open bin 2j is e_{j−1} (e_0 for the ray)
    above = np.concatenate([edges, [edges[-1]]])  # upper edge of the open bin 2j is e_j (e_{m−1} for the ray)
    lower = np.empty(2 * edges.size + 1)
    upper = np.empty_like(lower)
    lower[0::2], upper[0::2] = below, above
    lower[1::2] = upper[1::2] = edges
    return lower, upper


def _bin_index(values: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.intp]:
    """Bin of each (non-NaN) value: 2j + 1 if it equals e_j, else 2j with j the number of edges below it."""
    below = np.searchsorted(edges, values, side="left")
    on_edge = below < edges.size
    on_edge[on_edge] = edges[below[on_edge]] == values[on_edge]
    return 2 * below + on_edge


def private_bounds(values: ArrayLike, *, mu: float, quantiles: Sequence[float] = (0.01, 0.99),
                   edges: ArrayLike | None = None, stray_guard: bool = False,
                   random_state: RandomState = None) -> tuple[float, float] | None:
    """Grid-rounded private (lower, upper) quantile bounds of a numerical column, or None if none are found.

    The noisy histogram over :func:`grid_edges`' bins and one missing bin (module docstring) is
    ``mu``-GDP for replace-one neighbours (n = ``len(values)`` public); everything after it is
    post-processing.  None when the noisy count of present values n̂ is at most
    :data:`MIN_PRESENT_SDS` noise standard deviations, or the lower bound's bin lies above the
    upper bound's (noise larger than the data's spread).

    Parameters
    ----------
    values : array_like of float
        One cell per record; NaN for a missing or non-numeric cell (±inf fall in the outer rays).
    mu : float
        GDP parameter of the histogram, > 0.
    quantiles : pair of float, default (0.01, 0.99)
        q_lo < q_hi in [0, 1]: the quantiles rounded outward to the grid.
    edges : array_like of float, optional
        A public strictly increasing grid; :func:`grid_edges` () by default.
    stray_guard : bool, default False
        Cross a quantile only above :data:`STRAY_CUTS` times the empty-bin cut as well
        (post-processing, no privacy cost): empty bins that survive the cut (one with probability up
        to :data:`EMPTY_BIN_RATE`) then cannot drag a bound out to the grid's end unless three do
        (probability about EMPTY_BIN_RATE³/6 ≈ 2e-5; two did in one of 150 bench fits).  When the
        quantile's count q·n̂ is below that, the bound moves inward (clips more).  For a regression
        target, whose bounds set the scale of every prediction.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default None
        Source of the noise; None (for a release) draws from the operating system's entropy.

    Returns
    -------
    tuple of float or None
        ``(lower, upper)``, grid edges with ``lower <= upper``.
    """
    q_lo, q_hi = (float(q) for q in quantiles)
    if not 0.0 <= q_lo < q_hi <= 1.0:
        raise ValueError(f"quantiles must be (q_lo, q_hi) with 0 <= q_lo < q_hi <= 1; got {tuple(quantiles)}")
    grid = grid_edges() if edges is None else np.asarray(edges, dtype=float)
    if grid.ndim != 1 or not grid.size or not np.all(np.isfinite(grid)) or np.any(np.diff(grid) <= 0):
        raise ValueError("edges must be a non-empty, finite, strictly increasing sequence of numbers")
    sigma = count_noise(mu)
    data = np.asarray(values, dtype=float).ravel()
    present = ~np.isnan(data)
    counts = np.append(np.bincount(_bin_index(data[present], grid), minlength=2 * grid.size + 1),
                       data.size - np.count_nonzero(present)).astype(float)  # the last bin: missing cells
    noisy = counts + make_rng(random_state).normal(0.0, sigma, size=counts.size)
    n_present, noisy = data.size - noisy[-1], noisy[:-1]
    cut = sigma * float(-ndtri(EMPTY_BIN_RATE / noisy.size))
    noisy = np.where(noisy > cut, noisy, 0.0)
    if not n_present > MIN_PRESENT_SDS * sigma:
        return None
    floor = STRAY_CUTS * cut if stray_guard else 0.0
    from_below = np.flatnonzero(np.cumsum(noisy) > max(q_lo * n_present, floor))
    from_above = np.flatnonzero(np.cumsum(noisy[::-1]) > max((1.0 - q_hi) * n_present, floor))
    if not from_below.size or not from_above.size:
        return None
    low_bin, high_bin = from_below[0], noisy.size - 1 - from_above[0]
    if low_bin > high_bin:
        return None
    lower, upper = _bin_edges(grid)
    return float(lower[low_bin]), float(upper[high_bin])
