"""Output perturbation of mini-batch SGD: the privacy of releasing w_T + N(0, σ² I) (Chen et al.).

Chen, Lee, Kifer 2019, *Rényi Differentially Private ERM for Smooth Objectives*, AISTATS 2019,
arXiv:1808.07090.  All functions are pure; curves are vectorised over ``orders``.  The schedule and
the sensitivity Δ (with the conventions and derivation notes of its computation) are in
:mod:`.sgd_sensitivity`, re-exported here so that every name keeps its path.

Conventions of the output-perturbation accountant
-------------------------------------------------
Replace-one neighbours; ``Δ[j]`` bounds ‖w_T − w'_T‖ when the neighbours differ in a record of batch
j (:func:`~.sgd_sensitivity.sensitivity_vector`); only ``w_T + N(0, σ² I)`` is released, σ the
standard deviation of the output noise.

Derivation note (worst case).  "Worst case = last batch" (§4.1) needs every ρ_s ≤ 1 and equal |B_j|;
we use max_j Δ[j].  This bound also holds for the permuted run: conditionally on the (data-independent,
secret) permutation the release is a Gaussian mechanism of sensitivity ≤ max Δ, hence (max Δ/σ)-GDP,
and mixing over the permutation keeps every hockey-stick divergence below the same curve (joint
convexity), so the permuted run is (max Δ/σ)-GDP too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp

from . import best_of, gdp
from ._checks import check_delta, check_epsilon, check_nonnegative, check_open_unit, check_orders
from .calibration import smallest_noise
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp
from .rounding import round_up_array
from .sgd_sensitivity import (
    STEP_RULES,
    SGDSchedule,
    _positive_finite,
    _validate_constants,
    make_schedule,
    outpert_gd_sensitivity,
    proposition2_sensitivity,
    sensitivity_vector,
)

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


def _vector(name: str, values: ArrayLike) -> NDArray[np.float64]:
    """``orders`` (finite, > 1) or ``sensitivities`` (>= 0, inf allowed) as a non-empty 1-D array."""
    arr = check_orders(values) if name == "orders" else check_nonnegative(values, name, finite=False)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {arr.shape}.")
    return arr


def worst_case_rdp(orders: ArrayLike, sensitivities: ArrayLike, sigma: float) -> NDArray[np.float64]:
    """RDP of the fixed-order release: ``α·max_j Δ[j]²/(2σ²)`` (Chen et al. Lemma 1, Gaussian).

    The adversary places the differing record in the worst batch.  "Worst case = last batch" (§4.1)
    needs every ρ ≤ 1 (and equal batch sizes), so the maximum over j is taken instead.

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1, finite (1-D).
    sensitivities : array_like
        Δ[j] ≥ 0 (1-D, ``inf`` allowed).
    sigma : float
        σ > 0: the standard deviation of the output noise N(0, σ² I).

    Returns
    -------
    ndarray
        ε(α) at each order.
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

    Parameters
    ----------
    orders : array_like
        RDP orders α > 1, finite (1-D).
    sensitivities : array_like
        Δ[j] ≥ 0 (1-D).
    probabilities : array_like
        q_j, shaped as ``sensitivities``.
    sigma : float
        σ > 0: the standard deviation of the output noise.

    Returns
    -------
    ndarray
        ε(α) ≥ 0 at each order.
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
    """RDP curves of the run: ``"worst_case"`` and, if permuted, ``"mixture"``.

    Parameters
    ----------
    event : OutputPerturbationEvent
        The run (its Δ rounded up, :meth:`OutputPerturbationEvent.sensitivities`).
    orders : array_like, default=DEFAULT_ORDERS
        RDP orders α > 1.

    Returns
    -------
    dict of str to ndarray
        ε(α) of each bound.
    """
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

    Parameters
    ----------
    event : OutputPerturbationEvent
        The run (its ``sigma`` ignored).
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    rtol : float, default=1e-4
        Relative resolution of σ, in (0, 1).
    orders : array_like, default=DEFAULT_ORDERS
        RDP orders α > 1 for the mixture bound.

    Returns
    -------
    float
        σ, the standard deviation of the noise added to the output w_T.
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
