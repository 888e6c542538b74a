"""The core lemma of shifted interpolation as a generic accountant for deterministic batch schedules.

Convention (as :mod:`dpconvex.accounting.noisy_sgd`).  Step k uses batch B_k and
``θ_{k+1} = Π_C(θ_k − η·[(1/b)(Σ_{i∈B_k} ∇ℓ(θ_k; z_i) + σ·ξ_k) + ∇r(θ_k)])``, ξ_k ~ N(0, I): noise σ on
the gradient *sum*, nominal batch size b, so the iterate noise sd is ``ν = ησ/b`` and, under replace-one
neighbours, a step whose batch holds the differing record shifts the update by at most
``s_k = η·S_g/b`` (S_g = gradient sensitivity, 2L for L-Lipschitz losses); other steps have s_k = 0.
The gradient-step maps φ_k are c-Lipschitz, c = max{|1 − ηm|, |1 − ηM|} ≤ 1 (c = 1 for convex
M-smooth losses with η ≤ 2/M), and θ_{k+1} = Π_C(φ_k(θ_k) + noise) is the lemma's contractive noisy
iteration (Π_C is 1-Lipschitz).  θ_0 is data-independent and only θ_t is released.

Core lemma (Bok, Su, Altschuler 2024, arXiv:2403.00278, Lemma C.3, as restated by Li et al. NeurIPS
2025 Lemma B.3; notes §1.2): for every window start τ and γ_{τ+1..t} ∈ [0, 1] with γ_t = 1, θ_t is
``sqrt(Σ_{k>τ} a_k²)/ν``-GDP where a_k = γ_k(c b_{k−1} + s_k), b_k = (1 − γ_k)(c b_{k−1} + s_k) and
b_τ ≥ ‖θ_τ − θ'_τ‖ a.s.: b_0 = 0 at τ = 0; b_τ = D (diameter of C) for τ ≥ 1 on a bounded domain.
With b as variable (notes §1.2, checked here against a scipy QP):
``V = min Σ a_k²  s.t.  a_k + b_k = c·b_{k−1} + s_k,  a, b ≥ 0,  b_t = 0,  b_τ = B_τ``, minimised over τ.

Derivation note (the algorithm; proofs in docs/derivations/shifted_interpolation.md).

1. Taut string.  Put u_k = c^{−k} a_k.  Unrolling b_k = c^{k−τ}B_τ + Σ_{τ<j≤k} c^{k−j}(s_j − a_j) ≥ 0
   and b_t = 0 gives U_k := Σ_{τ<j≤k} u_j ≤ c^{−τ}B_τ + Σ_{τ<j≤k} c^{−j}s_j, with equality at k = t,
   and Σ a_k² = Σ c^{2k} u_k².  In the clock X_k = Σ_{j≤k} c^{−2j} (X_k = k at c = 1) and the barrier
   S_k = Σ_{j≤k} c^{−j}s_j this is the minimum energy Σ (ΔU)²/ΔX of a path from A_τ = (X_τ, S_τ −
   c^{−τ}B_τ) to P_t = (X_t, S_t) staying below the points P_k = (X_k, S_k), k > τ.  The minimiser
   is the greatest convex minorant of {A_τ} ∪ {P_k}: a tangent segment from A_τ to the lower convex
   hull of the P_k, then that hull.  Its slopes are ≥ 0 (A_τ lies below every P_k, s ≥ 0), so u ≥ 0
   holds automatically; its energy is Σ_segments (ΔS)²/ΔX.
2. Only P_k with s_{k+1} > 0, and P_t, can bind (U is non-decreasing and S is flat elsewhere).
3. V is non-decreasing in B_τ, in every s_k and in c: from a solution for the larger data, b'_k =
   min(b_k, c'b'_{k−1} + s'_k) and a'_k = the rest is feasible with a' ≤ a.  Hence a
   window starting at τ with s_τ = 0 is beaten by the one starting at τ − 1 (pay a_τ = 0, arrive with
   b_τ = cD ≤ D), and τ = 1 with s_1 = 0 by τ = 0: the candidates are τ = 0 and the steps τ < t
   whose batch holds the record.  All windows share the hull of the P_k, so one backward sweep
   (monotone-chain stack; energy-to-end stored per vertex) plus a binary-searched tangent per
   candidate gives every window: O(m log m) for m nonzero shifts, independent of the zeros.
4. Truncation (c < 1).  Only windows inside the last K steps, c^K ≈ 1e-30, are optimised: the τ = 0
   program with a_k = 0 forced up to k0 = t − K (it arrives with b_{k0} = Σ_{j≤k0} c^{k0−j}s_j), or the
   D window at k0 if D is smaller.  Both are feasible, so the value is an upper bound, above V by
   O(c^K·max s/(1 − c)); it keeps c^{±2k} inside double range.
5. Worst case over the record's position.  Moving a shift one step later (s_r → s_{r+1}) never lowers
   V (carry it unpaid: b_r grows by s_r, then c·s_r ≤ s_r is available at r + 1; windows starting at r
   only lose shifts).  In a cyclic schedule the last batch of the cycle is the others delayed, so it
   is the worst position for every c and D; a shorter last batch has the same s = ηS_g/b (nominal b),
   so it is too.  For other orders every distinct batch is evaluated (one sparse sweep each).

The closed forms for NoisyGD and NoisyCGD (and Bok et al.'s constrained forms) are in
:mod:`.shifted_closed_forms`, re-exported here so that every name keeps its path.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .shifted_closed_forms import (
    _check,
    _energy_mu,
    _noise,
    bok_constrained_cgd_mu,
    bok_constrained_gd_mu,
    cgd_closed_form_mu,
    gd_closed_form_mu,
    gd_factor,
)

__all__ = [
    "lemma_mu",
    "batch_partition",
    "schedule_shifts",
    "worst_case_mu",
    "gd_factor",
    "gd_closed_form_mu",
    "cgd_closed_form_mu",
    "bok_constrained_gd_mu",
    "bok_constrained_cgd_mu",
]

#: Steps whose contraction to the end is below this are folded into the window start (note 4).
HORIZON = 1e-30


def _energy(steps: NDArray, values: NDArray, t: int, c: float, diameter: float | None) -> float:
    """min Σa² of the core lemma; ``values`` > 0 are the shifts at the sorted 1-based ``steps``."""
    if diameter == 0.0:
        return 0.0  # C is a point: θ_t is constant (window τ = t, b_t = D = 0)
    if t == 0 or steps.size == 0:
        return 0.0
    if c == 0.0:  # every step forgets the past
        return float(values[-1]) ** 2 if steps[-1] == t else 0.0
    start = 0.0
    if c < 1.0:  # note 4: fold the steps before k0 into the window start
        lc = math.log(c)
        horizon = max(1, int(math.log(HORIZON) / lc))
        if t > horizon:
            k0 = t - horizon
            early = steps <= k0
            start = float(np.sum(values[early] * np.exp((k0 - steps[early]) * lc)))
            start = start if diameter is None else min(start, diameter)
            steps, values, t = steps[~early] - k0, values[~early], horizon
        if t == 1:  # c ≤ 1e-30: a_1 = c·b_0 + s_1
            return (c * start + (float(values[0]) if steps.size else 0.0)) ** 2
        one_minus_c2 = -math.expm1(2.0 * lc)

        def dx(i: int, j: int) -> float:  # X_j − X_i = Σ_{i<q≤j} c^{−2q}
            return math.exp(-2.0 * j * lc) * -math.expm1(2.0 * (j - i) * lc) / one_minus_c2

        if steps.size == 0:  # only the folded-in distance is left to pay: one straight segment
            return start * start / dx(0, t)
        weight = np.exp(-steps * lc)  # c^{−r}
    else:
        def dx(i: int, j: int) -> float:
            return float(j - i)

        weight = np.ones(steps.size)
    cum = np.cumsum(values * weight)  # S at each shift step (inclusive)
    before = np.concatenate(([0.0], cum[:-1]))  # S_{r−1}
    vertices = {int(r) - 1: float(y) for r, y in zip(steps, before) if r >= 2}
    vertices[t] = float(cum[-1])
    queries: dict[int, float] = {0: -start}  # window start τ ↦ height of A_τ
    if diameter is not None:
        for r, y, w in zip(steps.tolist(), cum.tolist(), weight.tolist()):
            if r < t:
                queries[r] = y - w * diameter
    hk: list[int] = []  # hull vertices, index 0 = P_t, top = leftmost
    hy: list[float] = []
    hr: list[float] = []  # energy from the vertex to the end along the hull
    he: list[float] = []  # slope of the edge to the right neighbour
    best = math.inf
    for k in sorted(set(vertices) | set(queries), reverse=True):
        if k in queries:  # tangent from A_k: the leftmost vertex p with slope(A, v_p) ≤ he[p]
            y = queries[k]
            lo, hi = 0, len(hk) - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if (hy[mid] - y) / dx(k, hk[mid]) <= he[mid]:
                    lo = mid
                else:
                    hi = mid - 1
            d = hy[lo] - y
            best = min(best, d * d / dx(k, hk[lo]) + hr[lo])
        if k in vertices:
            y = vertices[k]
            while len(hk) >= 2 and (hy[-1] - y) / dx(k, hk[-1]) >= he[-1]:
                hk.pop(), hy.pop(), hr.pop(), he.pop()
            if hk:
                d = hy[-1] - y
                slope = d / dx(k, hk[-1])
                hk.append(k), hy.append(y), hr.append(hr[-1] + d * slope), he.append(slope)
            else:
                hk.append(k), hy.append(y), hr.append(0.0), he.append(math.inf)
    return max(best, 0.0)


def _sparse(shifts: ArrayLike) -> tuple[NDArray, NDArray, int]:
    s = np.asarray(shifts, dtype=float)
    if s.ndim != 1 or np.any(~np.isfinite(s)) or np.any(s < 0):
        raise ValueError("shifts must be a 1-D array of finite values >= 0.")
    steps = np.flatnonzero(s > 0)
    return steps + 1, s[steps], s.size


def lemma_mu(shifts: ArrayLike, contraction: float, noise_sd: ArrayLike, diameter: float | None = None):
    """μ-GDP of the last iterate from the core lemma: ``sqrt(min Σ a_k²)/noise_sd`` (module note).

    Parameters
    ----------
    shifts : array_like
        s_1..s_t ≥ 0: the bound on how far the neighbours' step maps differ at each step
        (η·S_g/b where the batch can hold the differing record, else 0).
    contraction : float
        c ∈ [0, 1], Lipschitz constant of every step map.
    noise_sd : array_like
        ν > 0, sd of the Gaussian noise on the iterate (ησ/b).  Vectorised.
    diameter : float or None
        D of the constraint set (enables windows with b_τ = D); None: unconstrained.

    Returns
    -------
    float or ndarray
        The best μ over all window starts τ and interpolation weights (exact optimum up to the
        note-4 truncation, which only errs upwards).
    """
    c, diameter = _check(contraction, diameter)
    value = _energy(*_sparse(shifts), c, diameter)
    return _energy_mu(value, noise_sd)


def batch_partition(n: int, batch_size: int) -> tuple[int, ...]:
    """Sizes of the fixed partition of n records into ⌈n/b⌉ batches of b (the last one possibly shorter).

    Parameters
    ----------
    n : int
        Number of records.
    batch_size : int
        b, 1 ≤ b ≤ n.

    Returns
    -------
    tuple of int
        ⌊n/b⌋ sizes b, then n mod b if it is not 0.
    """
    n, b = int(n), int(batch_size)
    if not 1 <= b <= n:
        raise ValueError(f"need 1 <= batch_size <= n; got n = {n}, batch_size = {b}.")
    return (b,) * (n // b) + ((n % b,) if n % b else ())


def _schedule(batch_sizes: Sequence[int], epochs: int | None, step_size: float, sensitivity: float,
              batch_size: int | None, order: ArrayLike | None) -> tuple[float, int, NDArray | None, int]:
    """(shift s = ηS_g/b, nominal b, order or None for cyclic, number of steps t)."""
    sizes = np.asarray(batch_sizes, dtype=int)
    if sizes.ndim != 1 or sizes.size == 0 or np.any(sizes < 1):
        raise ValueError("batch_sizes must be a non-empty sequence of positive sizes.")
    b = int(sizes.max()) if batch_size is None else int(batch_size)
    if b < sizes.max():
        raise ValueError(f"batch_size (the nominal b) must be >= every batch size; got {b}.")
    if not (step_size > 0 and sensitivity >= 0):
        raise ValueError("need step_size > 0 and sensitivity >= 0.")
    if order is None:
        if epochs is None or int(epochs) < 0:
            raise ValueError("epochs must be an integer >= 0 for the cyclic schedule.")
        return step_size * sensitivity / b, b, None, sizes.size * int(epochs)
    if epochs is not None:
        raise ValueError("give either epochs (cyclic schedule) or order (the batch of every step), not both.")
    idx = np.asarray(order, dtype=int)
    if idx.ndim != 1 or np.any(idx < 0) or np.any(idx >= sizes.size):
        raise ValueError("order must be a 1-D sequence of batch indices in [0, len(batch_sizes)).")
    return step_size * sensitivity / b, b, idx, idx.size


def schedule_shifts(batch_sizes: Sequence[int], epochs: int | None, step_size: float, sensitivity: float, *,
                    batch_size: int | None = None, order: ArrayLike | None = None) -> NDArray[np.float64]:
    """Shift sequences of a deterministic schedule, one row per batch that may hold the differing record.

    Row j, column k−1 is s_k = η·S_g/b if step k uses batch j, else 0.  The schedule is the fixed
    partition ``batch_sizes`` cycled in index order for ``epochs`` epochs (cyclic, or shuffled once
    and then cycled), or, with ``epochs=None``, any fixed ``order`` (batch index of every step).
    b is the nominal batch size (default the largest batch): our update divides by b for every
    batch, so a shorter batch has the same shift bound and noise sd (:mod:`dpconvex.accounting.noisy_sgd`).
    Records in the same batch share a row.

    Parameters
    ----------
    batch_sizes : sequence of int
        The fixed partition (e.g. :func:`batch_partition`), sizes ≥ 1.
    epochs : int or None
        E ≥ 0 for the cyclic schedule; None when ``order`` is given.
    step_size, sensitivity : float
        η > 0 and S_g ≥ 0 (the replace-one sensitivity of one record's gradient).
    batch_size : int or None
        Nominal b ≥ every batch size (default: the largest batch).
    order : array_like of int or None
        Batch index of every step, for any other deterministic schedule.

    Returns
    -------
    ndarray of shape (len(batch_sizes), t)
        The shifts.
    """
    shift, _, idx, t = _schedule(batch_sizes, epochs, step_size, sensitivity, batch_size, order)
    l = len(batch_sizes)
    if idx is None:
        idx = np.tile(np.arange(l), t // l)
    out = np.zeros((l, t))
    out[idx, np.arange(t)] = shift
    return out


def worst_case_mu(batch_sizes: Sequence[int], epochs: int | None, step_size: float, sensitivity: float,
                  sigma: ArrayLike, contraction: float, diameter: float | None = None, *,
                  batch_size: int | None = None, order: ArrayLike | None = None):
    """μ-GDP of the last iterate, worst case over the differing record's position, from the core lemma.

    Noise σ on the gradient sum (iterate noise ησ/b), shift η·S_g/b; schedule as in
    :func:`schedule_shifts`.  Cyclic (``order=None``): one sparse evaluation, the last batch of the
    cycle (module note 5), O(E log E).  Given ``order``: one sparse evaluation per distinct batch,
    O(t log t) in all.  Vectorised over ``sigma`` (the optimum does not depend on σ).

    Parameters
    ----------
    batch_sizes : sequence of int
        The fixed partition (e.g. :func:`batch_partition`); sizes may differ.
    epochs : int or None
        E for the cyclic schedule (t = E·l steps); None when ``order`` is given.
    step_size, sensitivity : float
        η > 0 and S_g ≥ 0 (2L under replace-one for L-Lipschitz losses).
    sigma : array_like
        σ > 0, sd of the noise on the gradient sum.  Vectorised.
    contraction : float
        c ∈ [0, 1] of every gradient step (:func:`~.noisy_sgd_bounds.contraction`).
    diameter : float or None
        D of the constraint set; None: unconstrained.
    batch_size : int or None
        Nominal b dividing every batch (default: the largest batch).
    order : array_like of int or None
        Batch index of every step, for any other deterministic schedule.

    Returns
    -------
    float or ndarray
        μ, shaped as ``sigma`` (exact optimum up to the note-4 truncation, which only errs upwards).
    """
    c, diameter = _check(contraction, diameter)
    shift, b, idx, t = _schedule(batch_sizes, epochs, step_size, sensitivity, batch_size, order)
    nu = _noise(step_size * np.asarray(sigma, dtype=float) / b)
    value = 0.0
    if shift > 0 and t > 0:
        if idx is None:
            l = len(batch_sizes)
            steps = np.arange(l, t + 1, l)
            value = _energy(steps, np.full(steps.size, shift), t, c, diameter)
        else:
            by_batch = np.argsort(idx, kind="stable")
            bounds = np.searchsorted(idx[by_batch], np.arange(len(batch_sizes) + 1))
            for j in range(len(batch_sizes)):
                steps = by_batch[bounds[j]:bounds[j + 1]] + 1
                value = max(value, _energy(steps, np.full(steps.size, shift), t, c, diameter))
    mu = math.sqrt(value) / nu
    return float(mu) if mu.ndim == 0 else mu

