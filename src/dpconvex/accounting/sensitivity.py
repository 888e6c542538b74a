"""Output perturbation of mini-batch SGD: numerical sensitivity and its privacy (Chen et al.).

Chen, Lee, Kifer 2019, *Rényi Differentially Private ERM for Smooth Objectives*, AISTATS 2019,
arXiv:1808.07090.  All functions are pure; curves are vectorised over ``orders``.

Conventions of the output-perturbation accountant
-------------------------------------------------
Replace-one neighbours.  ``smoothness`` = L and ``strong_convexity`` = μ bound the Hessian of every
per-example (regularised) loss, ``μI ⪯ ∇²f ⪯ LI`` (§3.3, eq. 2).  The update is
``w ← w − η·(mean gradient over B_j)`` (eq. 3), the batches B_0..B_{m−1} are processed cyclically,
both neighbours start from the same data-independent w_0, and only ``w_T + N(0, σ² I)`` is released.
``Δ[j]`` bounds ‖w_T − w'_T‖ when the neighbours differ in a record of batch j.

Derivation notes (where the paper's form needed translation)
------------------------------------------------------------
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
* Worst case.  "Worst case = last batch" (§4.1) needs every ρ_s ≤ 1 and equal |B_j|; we use max_j Δ[j].
  This bound also holds for the permuted run: conditionally on the (data-independent, secret)
  permutation the release is a Gaussian mechanism of sensitivity ≤ max Δ, hence (max Δ/σ)-GDP,
  and mixing over the permutation keeps every hockey-stick divergence below the same curve (joint
  convexity), so the permuted run is (max Δ/σ)-GDP too.
* Projection.  If a trainer projects onto a convex Θ after each update, Π_Θ is 1-Lipschitz, so
  every bound on ‖w − w'‖ above survives it.

Closed form used per epoch (O(m), not O(m²)): with factor ρ and expansions c_j, Δ after update k
(0-based) is ``ρ^{k+1} Δ_start[j] + [j ≤ k] ρ^{k−j} c_j``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from . import best_of, gdp
from ._checks import check_delta, check_epsilon, check_nonnegative, check_open_unit, check_orders, check_positive
from .calibration import smallest_noise
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp
from .rounding import round_up_array

__all__ = [
    "SGDSchedule", "STEP_RULES", "make_schedule", "sensitivity_vector", "worst_case_rdp", "mixture_rdp",
    "proposition2_sensitivity", "rdp_curves",
    "outpert_gd_sensitivity", "OutputPerturbationEvent", "account_output_perturbation", "calibrate_output_sigma",
]

_CHEN = "Chen, Lee, Kifer 2019 (arXiv:1808.07090)"
WORST_CASE_THEOREM = (
    f"{_CHEN}, Lemma 2 + Alg. 2 (with eq. (5) averaging), fixed batch order, max_j Δ[j]; Gaussian "
    "mechanism with exact GDP conversion (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13; "
    "Balle & Wang 2018, arXiv:1805.06530, Thm 8)"
)
MIXTURE_THEOREM = (
    f"{_CHEN}, Alg. 2, Lemma 3, Prop. 3 (permuted batches, q_j = |B_j|/n); RDP to (ε, δ) by "
    "Canonne, Kamath, Steinke 2020 (arXiv:2004.00010, Prop. 12)"
)
BASE_ASSUMPTIONS = (
    "replace-one neighbours", "μI ⪯ ∇²f ⪯ LI for every per-example loss (μ > 0)",
    "sup_w ‖∇f(w;d) − ∇f(w;d')‖ ≤ gradient_difference", "same data-independent start w_0 for neighbours",
    "data-independent schedule (batch sizes, per-epoch step sizes, averaging), replayed exactly",
    "only w_T + N(0, σ² I) released",
)
MIXTURE_ASSUMPTIONS = BASE_ASSUMPTIONS + ("records uniformly permuted once before batching; permutation secret",)


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


def _vector(name: str, values: ArrayLike) -> NDArray[np.float64]:
    """``orders`` (finite, > 1) or ``sensitivities`` (>= 0, inf allowed) as a non-empty 1-D array."""
    arr = check_orders(values) if name == "orders" else check_nonnegative(values, name, finite=False)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {arr.shape}.")
    return arr


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
    after each of the last m·τ updates (eq. 5).  Returns an array of shape (m,).
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


def worst_case_rdp(orders: ArrayLike, sensitivities: ArrayLike, sigma: float) -> NDArray[np.float64]:
    """RDP of the fixed-order release: ``α·max_j Δ[j]²/(2σ²)`` (Chen et al. Lemma 1, Gaussian).

    The adversary places the differing record in the worst batch.  "Worst case = last batch" (§4.1)
    needs every ρ ≤ 1 (and equal batch sizes), so the maximum over j is taken instead.
    """
    alpha = _vector("orders", orders)
    sens = _vector("sensitivities", sensitivities)
    sigma = _positive_finite("sigma", sigma)
    return gdp.gdp_rdp(alpha, float(np.max(sens)) / sigma)


def mixture_rdp(orders: ArrayLike, sensitivities: ArrayLike, probabilities: ArrayLike, sigma: float) -> NDArray:
    """RDP of the permuted release (Chen et al. Lemma 3 / Prop. 3 with general weights q_j = |B_j|/n).

    ``ε(α) = log(Σ_j q_j exp(α(α − 1)Δ_j²/(2σ²)))/(α − 1)``, evaluated with
    :func:`scipy.special.logsumexp` so huge exponents do not overflow; clipped at 0 (a Rényi
    divergence is ≥ 0; only rounding of Σq can push it below).  ``probabilities`` must be ≥ 0 and
    sum to 1 (within 1e-9; then renormalised).
    """
    alpha = _vector("orders", orders)
    sens = _vector("sensitivities", sensitivities)
    q = np.asarray(probabilities, dtype=float)
    if q.shape != sens.shape or np.any(~np.isfinite(q)) or np.any(q < 0) or abs(q.sum() - 1.0) > 1e-9:
        raise ValueError("probabilities must be >= 0, sum to 1 and match the shape of sensitivities.")
    sigma = _positive_finite("sigma", sigma)
    keep = q > 0  # zero weights dropped: older scipy lets them set logsumexp's shift
    log_h = logsumexp(np.multiply.outer(alpha * (alpha - 1) / 2, (sens[keep] / sigma) ** 2), 1, b=q[keep] / q.sum())
    return np.maximum(log_h / (alpha - 1.0), 0.0)


def proposition2_sensitivity(
    step_size: float, batch_size: int, batches: int, *, smoothness: float, strong_convexity: float,
    gradient_difference: float,
) -> float:
    """Chen et al. Prop. 2: constant η, any number of epochs: Δ ≤ η·gd/(|B|(1 − ρ^m)).

    (The paper's ``2ηR/(|B|(1 − ρ^m))`` with gd = 2R.)  Needs ρ = max{|1 − ημ|, |1 − ηL|} < 1,
    i.e. 0 < η < 2/L.
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
    """OutPert-GD (Chen et al. Prop. 2 with m = 1, η = 2/(L + μ)): Δ = gd/(nμ) (paper: 2R/(nμ))."""
    _, mu, gd = _validate_constants(smoothness, strong_convexity, gradient_difference)
    if not (float(n).is_integer() and n >= 1):
        raise ValueError(f"n must be an integer >= 1; got {n!r}.")
    return gd / (n * mu)


@dataclass(frozen=True)
class OutputPerturbationEvent:
    """One output-perturbed SGD run: the schedule, the loss constants and the output noise σ.

    ``permuted``: the records were uniformly permuted once (secretly) before batching, enabling
    the mixture bound (Lemma 3); otherwise only the fixed-order worst case applies.

    Attributes
    ----------
    schedule : SGDSchedule
    smoothness, strong_convexity, gradient_difference : float
        L, μ and the bound on two records' gradient difference (the paper's 2R).
    sigma : float
        Standard deviation of the Gaussian noise added to the output.
    permuted : bool
    """

    schedule: SGDSchedule
    smoothness: float
    strong_convexity: float
    gradient_difference: float
    sigma: float
    permuted: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.schedule, SGDSchedule):
            raise ValueError(f"schedule must be an SGDSchedule; got {type(self.schedule).__name__}.")
        _validate_constants(self.smoothness, self.strong_convexity, self.gradient_difference)
        _positive_finite("sigma", self.sigma)
        if not isinstance(self.permuted, (bool, np.bool_)):
            raise ValueError(f"permuted must be a bool; got {self.permuted!r}.")

    def sensitivities(self) -> NDArray[np.float64]:
        """Δ of this run (:func:`sensitivity_vector`), rounded up by :data:`.rounding.ROUNDING_MARGIN` (certified)."""
        return round_up_array(sensitivity_vector(self.schedule, smoothness=self.smoothness,
                                                 strong_convexity=self.strong_convexity,
                                                 gradient_difference=self.gradient_difference))


def rdp_curves(event: OutputPerturbationEvent, orders: ArrayLike = DEFAULT_ORDERS) -> dict[str, NDArray[np.float64]]:
    """RDP curves of the run: ``"worst_case"`` and, if permuted, ``"mixture"``."""
    sens = event.sensitivities()
    curves = {"worst_case": worst_case_rdp(orders, sens, event.sigma)}
    if event.permuted:
        curves["mixture"] = mixture_rdp(orders, sens, event.schedule.probabilities, event.sigma)
    return curves


#: The two bounds (:class:`.best_of.Bound`); registry order breaks ties: worst-case (exact) first.
# mypy cannot infer the Bound's event type from the lambdas (hence the ignore)
_REGISTRY = best_of.BoundRegistry({b.name: b for b in [  # type: ignore[var-annotated]
    best_of.Bound("worst-case", WORST_CASE_THEOREM, BASE_ASSUMPTIONS, lambda e: []),
    best_of.Bound("mixture", MIXTURE_THEOREM, MIXTURE_ASSUMPTIONS,
                  lambda e: [] if e.permuted else ["records uniformly permuted once, secretly, before batching "
                                                   "(permuted=True)"]),
]})


def _account(event: OutputPerturbationEvent, sens: NDArray, q: NDArray, delta: float, orders: NDArray
             ) -> best_of.PrivacyAccount:
    """Best-of account of ``event``, whose sensitivities ``sens`` and batch weights ``q`` are given (cached)."""
    def epsilon_of(name: str) -> tuple[float, float | None]:
        if name == "worst-case":  # fixed order: exactly Gaussian with L2 sensitivity max Δ, i.e. (max Δ/σ)-GDP
            return gdp.gdp_epsilon(delta, float(np.max(sens)) / event.sigma), None
        return epsilon_from_rdp(orders, mixture_rdp(orders, sens, q, event.sigma), delta)

    best = _REGISTRY.best_of(event, epsilon_of)
    return _REGISTRY.account(delta, best, "exact-gdp" if best[0] == "worst-case" else "improved")


def account_output_perturbation(
    event: OutputPerturbationEvent, delta: float, *, orders: ArrayLike = DEFAULT_ORDERS
) -> best_of.PrivacyAccount:
    """(ε, δ)-DP of an output-perturbed SGD run: best of the worst-case and (if permuted) mixture.

    ``"worst-case"``: exact GDP conversion of the Gaussian release with sensitivity max_j Δ[j];
    valid for the permuted run too (see the module notes).  ``"mixture"``: :func:`mixture_rdp`
    converted by :func:`.rdp.epsilon_from_rdp` (improved), optimised over ``orders``.
    The smaller ε wins; ``candidates`` records both (``skipped``: mixture, with the reason, if not permuted).

    Parameters
    ----------
    event : OutputPerturbationEvent
    delta : float
    orders : array_like, optional

    Returns
    -------
    PrivacyAccount
    """
    delta, orders, q = check_delta(delta), _vector("orders", orders), event.schedule.probabilities
    return _account(event, event.sensitivities(), q, delta, orders)


def calibrate_output_sigma(
    event: OutputPerturbationEvent, epsilon: float, delta: float, rtol: float = 1e-4, *,
    orders: ArrayLike = DEFAULT_ORDERS,
) -> float:
    """Smallest σ (within a factor 1 + ``rtol``) whose best-of account meets (ε, δ); never overshoots.

    ε of every candidate depends on σ only through Δ/σ and is non-increasing in σ, so
    :func:`.calibration.smallest_noise` (the library's one calibration, ``tolerance="noise"``) finds
    it from σ = max Δ/μ(ε, δ), where the worst-case candidate alone meets the target (Dong, Roth, Su
    2019, arXiv:1905.02383, Cor. 2.13): ``account(...).epsilon <= epsilon`` holds at the returned σ
    (an evaluated point) and fails at σ/(1 + ``rtol``).  ``event.sigma`` is ignored.  ``ValueError``
    if Δ = 0 (the output does not depend on the data; no σ is needed), for ε, δ or ``rtol`` outside
    their ranges (> 0; (0, 1); (0, 1)), or if no σ within a factor 10¹⁵ of the start is the answer.
    """
    epsilon, delta, rtol = check_epsilon(epsilon), check_delta(delta), check_open_unit(rtol, "rtol")
    orders = _vector("orders", orders)
    sens, q = event.sensitivities(), event.schedule.probabilities
    scale = float(np.max(sens))
    if not 0.0 < scale < np.inf:
        raise ValueError(f"gradient_difference must make max Δ finite and > 0 to calibrate sigma; got Δ = {scale!r}.")
    start = scale / gdp.gdp_mu(epsilon, delta)
    def eps_at(sigma: float) -> float:
        return _account(dataclasses.replace(event, sigma=sigma), sens, q, delta, orders).epsilon

    return smallest_noise(eps_at, epsilon, start, rtol=rtol, tolerance="noise", floor=start * 1e-15,
                          ceiling=start * 1e15)
