"""Numerical sensitivity of mini-batch SGD for output perturbation (Chen et al.): the schedule and Δ.

Chen, Lee, Kifer 2019, *Rényi Differentially Private ERM for Smooth Objectives*, AISTATS 2019,
arXiv:1808.07090.  The accountant (:mod:`.sensitivity`, which re-exports every name here) turns Δ
into privacy curves.  All functions are pure.

Conventions of the sensitivity computation
------------------------------------------
Replace-one neighbours.  ``smoothness`` = L and ``strong_convexity`` = μ bound the Hessian of every
per-example (regularised) loss, ``μI ⪯ ∇²f ⪯ LI`` (§3.3, eq. 2).  The update is
``w ← w − η·(mean gradient over B_j)`` (eq. 3), the batches B_0..B_{m−1} are processed cyclically,
both neighbours start from the same data-independent w_0, and only ``w_T + N(0, σ² I)`` is released.
``Δ[j]`` bounds ‖w_T − w'_T‖ when the neighbours differ in a record of batch j.

Derivation notes of the sensitivity (where the paper's form needed translation)
-------------------------------------------------------------------------------
* Gradient difference.  Lemma 2's expansion term ``2ηR/|B|`` comes from
  ``‖∇f(w;d) − ∇f(w;d')‖ ≤ 2R`` (supplement, proof of Lemma 2).  We take that supremum as the input
  ``gradient_difference`` (= 2R in the paper), so the expansion is ``η·gradient_difference/|B_j|``.
  An L2 regulariser cancels in the difference: for ``f = ℓ + λ/2‖w‖²`` it is the unregularised
  loss's ``S_g`` (≤ 2L_ℓ for an L_ℓ-Lipschitz ℓ).
* Algorithm 2 line 9 prints ``2ηR/r``; the proof of Lemma 2 gives ``/|B|``.  With unequal batches
  Lemma 2 applies to batch j with ``|B| = |B_j|``, and a uniformly permuted record lands in batch j
  with probability ``q_j = |B_j|/n`` (Lemma 3's weights; Prop. 3 has q_j = 1/m).
* Step sizes: Alg. 2 hard-codes η₀/s; Alg. 3 uses η₀/h with h reset at each averaging.  We replay
  the per-epoch step sizes actually run (:class:`SGDSchedule`), so ρ_s = max{|1 − η_s μ|, |1 − η_s L|}
  is recomputed each epoch.  ρ_s > 1 is allowed: Lemma 2 does not need contraction.
* Averaging (eq. 5): Alg. 3 line 13 averages w_{t−k}, k = 0..mτ−1, i.e. the iterates produced by
  the mτ updates of the last τ epochs (not the averaged start of the window).  By the triangle
  inequality each Δ[j] is replaced by the mean of its last mτ post-update values.
* Projection.  If a trainer projects onto a convex Θ after each update, Π_Θ is 1-Lipschitz, so
  every bound on ‖w − w'‖ above survives it.

Closed form used per epoch (O(m), not O(m²)): with factor ρ and expansions c_j, Δ after update k
(0-based) is ``ρ^{k+1} Δ_start[j] + [j ≤ k] ρ^{k−j} c_j``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import gdp
from ._checks import check_positive

__all__ = ["SGDSchedule", "STEP_RULES", "make_schedule", "sensitivity_vector", "proposition2_sensitivity",
           "outpert_gd_sensitivity"]


def _positive_finite(name: str, value: float, *, allow_zero: bool = False) -> float:
    """:func:`._checks.check_positive` (finite and > 0, or >= 0 with ``allow_zero``), argument order kept."""
    return check_positive(value, name, zero=allow_zero)


def _validate_constants(smoothness: float, strong_convexity: float, gradient_difference: float) -> tuple:
    mu = _positive_finite("strong_convexity", strong_convexity)
    L = float(smoothness)
    if not (np.isfinite(L) and L >= mu):
        raise ValueError(f"smoothness must be finite and >= strong_convexity (= {mu!r}); got {L!r}.")
    return L, mu, _positive_finite("gradient_difference", gradient_difference, allow_zero=True)


def _times(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """a·b for non-negative a, b, with 0·inf = 0 (a zero bound stays zero under any finite ρ^k)."""
    out = np.multiply(a, b)
    return np.where(np.isnan(out), 0.0, out)



@dataclass(frozen=True)
class SGDSchedule:
    """The data-independent schedule of one SGD run, as the trainer actually ran it.

    ``batch_sizes``: |B_0|, …, |B_{m−1}| in processing order, each ≥ 1.  ``epoch_step_sizes``: η of
    every update of epoch s = 1..T, in order (η₀/s for NSGD, η₀/h with restarts for RSGD-AR, constant
    for OutPert-GD), finite and > 0, at least one epoch.  ``averaging_interval``: τ ≥ 1 (after every
    epoch s with s % τ == 0 the iterate becomes the mean of the last m·τ iterates, eq. 5) or None.

    Attributes
    ----------
    batch_sizes : tuple of int
    epoch_step_sizes : tuple of float
    averaging_interval : int or None
    """

    batch_sizes: tuple[int, ...]
    epoch_step_sizes: tuple[float, ...]
    averaging_interval: int | None = None

    def __post_init__(self) -> None:
        sizes = tuple(self.batch_sizes)
        if not sizes or not all(float(b).is_integer() and b >= 1 for b in sizes):
            raise ValueError(f"batch_sizes must be a non-empty sequence of integers >= 1; got {sizes!r}.")
        steps = tuple(float(e) for e in self.epoch_step_sizes)
        if not steps or not all(np.isfinite(e) and e > 0 for e in steps):
            raise ValueError(f"epoch_step_sizes must be a non-empty sequence of finite values > 0; got {steps!r}.")
        tau = self.averaging_interval
        if tau is not None and not (float(tau).is_integer() and tau >= 1):
            raise ValueError(f"averaging_interval must be None or an integer >= 1; got {tau!r}.")
        object.__setattr__(self, "batch_sizes", tuple(int(b) for b in sizes))
        object.__setattr__(self, "epoch_step_sizes", steps)
        object.__setattr__(self, "averaging_interval", None if tau is None else int(tau))

    @property
    def n(self) -> int:
        """Σ_j |B_j|, the number of records."""
        return sum(self.batch_sizes)

    @property
    def probabilities(self) -> NDArray[np.float64]:
        """q_j = |B_j|/n: the chance that a uniformly permuted record lands in batch j."""
        return np.asarray(self.batch_sizes, dtype=float) / self.n


#: Step-size rules of Chen et al.: η₀/s (Alg. 1–2), η₀/h with h reset at each averaging (Alg. 3), η₀.
STEP_RULES = ("inverse-epoch", "restart", "constant")


def make_schedule(
    n: int, batch_size: int, epochs: int, initial_step_size: float, step_rule: str,
    averaging_interval: int | None = None,
) -> SGDSchedule:
    """The schedule of a run over n records: ⌈n/batch_size⌉ near-equal batches (sizes differ by at
    most one, in ``numpy.array_split`` order), ``epochs`` epochs, step sizes by ``step_rule``.

    ``"restart"`` is RSGD-AR's η₀/h: h counts epochs since the last averaging, which happens every
    ``averaging_interval`` epochs (required for this rule, ignored otherwise).

    Parameters
    ----------
    n : int
        Number of records.
    batch_size : int
        Nominal batch size in [1, n].
    epochs : int
        T, the number of epochs.
    initial_step_size : float
        η₀ > 0.
    step_rule : {"inverse-epoch", "restart", "constant"}
        η₀/s, η₀/h (h reset at each averaging) or η₀ (:data:`~.sgd_sensitivity.STEP_RULES`).
    averaging_interval : int or None
        τ ≥ 1 for ``"restart"``.

    Returns
    -------
    SGDSchedule
    """
    if not (1 <= batch_size <= n):
        raise ValueError(f"batch_size must lie in [1, n] = [1, {n}]; got {batch_size!r}.")
    if step_rule not in STEP_RULES:
        raise ValueError(f"step_rule must be one of {STEP_RULES}; got {step_rule!r}.")
    if step_rule == "restart" and not (averaging_interval and averaging_interval >= 1):
        raise ValueError("averaging_interval must be an integer >= 1 with step_rule='restart'; "
                         f"got {averaging_interval!r}.")
    sizes = tuple(len(chunk) for chunk in np.array_split(np.arange(n), int(np.ceil(n / batch_size))))
    epoch_numbers = np.arange(1, int(epochs) + 1)
    divisors = {
        "inverse-epoch": epoch_numbers,
        "restart": (epoch_numbers - 1) % (averaging_interval or 1) + 1,
        "constant": np.ones_like(epoch_numbers),
    }[step_rule]
    tau = averaging_interval if step_rule == "restart" else None
    return SGDSchedule(sizes, tuple(float(initial_step_size) / divisors), tau)


def sensitivity_vector(
    schedule: SGDSchedule, *, smoothness: float, strong_convexity: float, gradient_difference: float
) -> NDArray[np.float64]:
    """Δ[j] ≥ ‖w_T − w'_T‖ when the neighbours differ in batch j (Chen et al. Alg. 2, generalised).

    For each epoch s: ρ_s = max{|1 − η_s μ|, |1 − η_s L|} (Lemma 2, :func:`gdp.gd_contraction`);
    for each batch b in order, ``Δ[:] ← ρ_s Δ[:]`` then ``Δ[b] += η_s·gradient_difference/|B_b|``.
    With averaging, at the end of every epoch s with s % τ == 0, Δ becomes the mean of the Δ vectors
    after each of the last m·τ updates (eq. 5).

    Parameters
    ----------
    schedule : SGDSchedule
        The run's batch sizes, per-epoch step sizes and averaging.
    smoothness, strong_convexity : float
        L ≥ μ > 0, finite: ``μI ⪯ ∇²f ⪯ LI`` for every per-example loss.
    gradient_difference : float
        sup ‖∇f(w;d) − ∇f(w;d')‖ ≥ 0 (the paper's 2R; S_g ≤ 2L_ℓ for an L_ℓ-Lipschitz loss).

    Returns
    -------
    ndarray of shape (m,)
        Δ[j] for each batch j (``inf`` where ρ > 1 overflows).
    """
    L, mu, gd = _validate_constants(smoothness, strong_convexity, gradient_difference)
    if not isinstance(schedule, SGDSchedule):
        raise ValueError(f"schedule must be an SGDSchedule; got {type(schedule).__name__}.")
    sizes = np.asarray(schedule.batch_sizes, dtype=float)
    m, tau = sizes.size, schedule.averaging_interval
    k = np.arange(m + 1)
    delta, window = np.zeros(m), np.zeros(m)
    with np.errstate(over="ignore", invalid="ignore"):
        for s, eta in enumerate(schedule.epoch_step_sizes, start=1):
            rho = gdp.gd_contraction(eta, mu, L)
            powers = np.power(rho, k)  # ρ^0..ρ^m (may overflow to inf when ρ > 1)
            expansion = eta * gd / sizes
            # Closed form of the epoch's m sequential updates (module notes).
            end = _times(powers[m], delta) + _times(expansion, powers[m - 1 - k[:m]])
            if tau is not None:
                partial = np.cumsum(powers)  # Σ_{i≤k} ρ^i
                window += _times(np.sum(powers[1:]), delta) + _times(expansion, partial[m - 1 - k[:m]])
            delta = end
            if tau is not None and s % tau == 0:
                delta, window = window / (m * tau), np.zeros(m)
    return delta

def proposition2_sensitivity(
    step_size: float, batch_size: int, batches: int, *, smoothness: float, strong_convexity: float,
    gradient_difference: float,
) -> float:
    """Chen et al. Prop. 2: constant η, any number of epochs: Δ ≤ η·gd/(|B|(1 − ρ^m)).

    (The paper's ``2ηR/(|B|(1 − ρ^m))`` with gd = 2R.)  Needs ρ = max{|1 − ημ|, |1 − ηL|} < 1,
    i.e. 0 < η < 2/L.

    Parameters
    ----------
    step_size : float
        η > 0, constant.
    batch_size : int
        |B| ≥ 1.
    batches : int
        m ≥ 1, batches per epoch.
    smoothness, strong_convexity : float
        L ≥ μ > 0, finite.
    gradient_difference : float
        sup ‖∇f(w;d) − ∇f(w;d')‖ ≥ 0 (the paper's 2R).

    Returns
    -------
    float
        Δ, a bound on ‖w_T − w'_T‖ after any number of epochs.
    """
    L, mu, gd = _validate_constants(smoothness, strong_convexity, gradient_difference)
    eta = _positive_finite("step_size", step_size)
    for name, value in (("batch_size", batch_size), ("batches", batches)):
        if not (float(value).is_integer() and value >= 1):
            raise ValueError(f"{name} must be an integer >= 1; got {value!r}.")
    rho = gdp.gd_contraction(eta, mu, L)
    if not rho < 1.0:
        raise ValueError(f"step_size must lie in (0, 2/smoothness) = (0, {2.0 / L:.6g}) so that ρ < 1; "
                         f"got {eta!r} (ρ = {rho:.6g}).")
    return eta * gd / (batch_size * (1.0 - rho ** int(batches)))


def outpert_gd_sensitivity(n: int, *, smoothness: float, strong_convexity: float, gradient_difference: float) -> float:
    """OutPert-GD (Chen et al. Prop. 2 with m = 1, η = 2/(L + μ)): Δ = gd/(nμ) (paper: 2R/(nμ)).

    Parameters
    ----------
    n : int
        Number of records, ≥ 1 (one full batch).
    smoothness, strong_convexity : float
        L ≥ μ > 0, finite.
    gradient_difference : float
        gd = sup ‖∇f(w;d) − ∇f(w;d')‖ ≥ 0.

    Returns
    -------
    float
        Δ = gd/(nμ).
    """
    _, mu, gd = _validate_constants(smoothness, strong_convexity, gradient_difference)
    if not (float(n).is_integer() and n >= 1):
        raise ValueError(f"n must be an integer >= 1; got {n!r}.")
    return gd / (n * mu)
