"""Private hyperparameter selection: the Rényi DP of releasing the best of a random number K of runs.

A base mechanism Q (e.g. "draw a hyperparameter at random, train with it, score the model with
noise") is run K times on the same data, K drawn independently of the data from a known law; only
the best of the K outputs is released (best in a total order fixed in advance, e.g. the largest
noisy score).  K and the other K − 1 outputs stay secret: releasing K voids every bound here (given
K = k the release is the best of k runs, whose privacy loss grows with k).

Statements (Papernot & Steinke 2022, "Hyperparameter Tuning with Renyi Differential Privacy",
ICLR 2022, arXiv:2110.03620; restated from the paper as implemented by Google's dp-accounting,
``dp_accounting.rdp.rdp_privacy_accountant._compute_rdp_repeat_and_select``, which cites these
theorem numbers, and by autodp's ``PrivateSelection``):

* Definition 1 (truncated negative binomial D_{η,γ}, η ∈ (−1, ∞), γ ∈ (0, 1)), on k = 1, 2, …:
  P[K = k] = (1 − γ)^k / (γ^{−η} − 1) · ∏_{ℓ=0}^{k−1} (ℓ + η)/(ℓ + 1) for η ≠ 0, and
  P[K = k] = (1 − γ)^k / (k·log(1/γ)) for η = 0 (the logarithmic law); η = 1 is the geometric law
  P[K = k] = γ(1 − γ)^{k−1}.  E[K] = η(1 − γ)/(γ(1 − γ^η)) (η ≠ 0), (1/γ − 1)/log(1/γ) (η = 0).
* Theorem 2 (truncated negative binomial).  If Q is (λ, ε)-RDP and (λ̂, ε̂)-RDP, with λ ∈ (1, ∞),
  λ̂ ∈ [1, ∞), and K ~ D_{η,γ}, the best of K runs is (λ, ε')-RDP with
  ε' = ε + (1 + η)(1 − 1/λ̂)ε̂ + (1 + η)·log(1/γ)/λ̂ + log(E[K])/(λ − 1).
* Theorem 6 (Poisson).  If Q is (λ, ε)-RDP and (ε̂, δ̂)-DP with λ ∈ (1, ∞) and
  e^{ε̂} ≤ 1 + 1/(λ − 1), and K ~ Poisson(μ_K) (K = 0: a fixed, data-independent output), the best
  of K runs is (λ, ε')-RDP with ε' = ε + μ_K·δ̂ + log(μ_K)/(λ − 1).  (As dp-accounting, we require
  μ_K ≥ 1.)

Conventions.  RDP curves are pairs (orders α > 1, values) as in :mod:`.rdp` (Mironov 2017,
arXiv:1702.07476, Def. 4); λ̂ (``hat order``) and ε̂ are the auxiliary order and value of Thm 2;
(ε, δ) is read off the result by the "improved" conversion of :mod:`.rdp` at the caller's δ —
the only δ of the release (no δ is split between runs).  Neighbouring relation: the theorems
compare A(x) and A(x') for one pair of neighbours using only Q's divergences on that pair, so they
hold for whichever relation Q's curve is stated in — replace-one throughout this library.

A base is described by its RDP curve, or by μ when Q is μ-GDP (Dong, Roth, Su 2019,
arXiv:1905.02383): then Q is (α, αμ²/2)-RDP for every α ≥ 1 (α = 1: the Kullback–Leibler
divergence μ²/2 of N(0, 1) and N(μ, 1)) and (ε̂, δ_μ(ε̂))-DP with the exact δ_μ of
:func:`.gdp.gdp_delta`.

Derivation notes (where our evaluation differs from a literal reading).

1. λ̂ for a μ-GDP base.  (1 − 1/λ̂)ε̂ + log(1/γ)/λ̂ = (λ̂ − 1)μ²/2 + L/λ̂ (L = log(1/γ)) is convex in
   λ̂ with minimiser λ̂* = √(2L)/μ; on [1, ∞) the minimum is √(2L)·μ − μ²/2 if λ̂* ≥ 1, else L
   (λ̂ = 1, where the ε̂ term vanishes).  For a curve, the minimum over the curve's orders (as
   dp-accounting does).
2. Monotone envelope.  Rényi divergence is non-decreasing in the order (van Erven & Harremoës 2014,
   IEEE Trans. Inf. Theory 60(7), Thm 3), so (α_j, ε'_j)-RDP implies (α_i, ε'_j)-RDP for α_i ≤ α_j:
   every order takes the least ε' of the orders above it (dp-accounting does the same for Thm 2;
   it is a property of the release, so we apply it to Thm 6 too).
3. δ̂ of a curve base (Thm 6) is the improved conversion's δ at ε̂ (dp-accounting's
   ``compute_delta``), an upper bound on Q's δ there.

Not implemented (``EXCLUDED``): Liu & Talwar 2019 (arXiv:1811.07971), random stopping — the same
algorithm as the geometric law (η = 1): its pure-ε statement (3ε) needs an ε-DP base, which a
Gaussian-noise base never is (its RDP grows without bound in the order), and we could not check its
approximate-DP statement against the paper's text; Thm 2 with η = 1 covers that algorithm.

Pure and vectorised over the orders; imports nothing of the library but the accounting siblings.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import best_of, gdp
from ._checks import check_delta, check_epsilon, check_orders, check_positive
from .calibration import smallest_noise
from .rdp import DEFAULT_ORDERS, epsilon_from_rdp
from .tuning_event import PoissonRepetitions, RepetitionLaw, TruncatedNegativeBinomial, TuningEvent

__all__ = ["TruncatedNegativeBinomial", "PoissonRepetitions", "RepetitionLaw", "TuningEvent", "TuningBound", "BOUNDS",
           "EXCLUDED", "tuning_rdp", "account", "calibrate_base_mu"]


def _monotone(orders: NDArray[np.float64], rdp: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each order's least RDP over the orders at or above it (note 2), in the input's order."""
    index = np.argsort(orders, kind="stable")
    envelope = np.minimum.accumulate(rdp[index][::-1])[::-1]
    out = np.empty_like(envelope)
    out[index] = envelope
    return out


def _hat_term(event: TuningEvent, log_inverse_gamma: float) -> float:
    """min over λ̂ ≥ 1 of (1 − 1/λ̂)ε̂(λ̂) + log(1/γ)/λ̂ (note 1), before the factor 1 + η."""
    if event.base_mu is not None:
        mu = event.base_mu
        root = math.sqrt(2.0 * log_inverse_gamma)
        return root * mu - mu**2 / 2.0 if root >= mu else log_inverse_gamma
    orders, rdp = np.asarray(event.base_orders), np.asarray(event.base_rdp)
    return float(np.min((1.0 - 1.0 / orders) * rdp + log_inverse_gamma / orders))


def _tnb_rdp(orders: NDArray[np.float64], event: TuningEvent) -> NDArray[np.float64]:
    """Thm 2 at every order, then the monotone envelope."""
    law = cast(TruncatedNegativeBinomial, event.law)
    constant = (1.0 + law.shape) * _hat_term(event, -math.log(law.gamma))
    return _monotone(orders, event.base_curve(orders) + constant + math.log(law.mean) / (orders - 1.0))


def _poisson_rdp(orders: NDArray[np.float64], event: TuningEvent) -> NDArray[np.float64]:
    """Thm 6 at every order with ε̂ = log(1 + 1/(λ − 1)) (the largest its condition allows), then the envelope."""
    mean = event.law.mean
    delta_hat = event.base_delta(np.log1p(1.0 / (orders - 1.0)))
    return _monotone(orders, event.base_curve(orders) + mean * delta_hat + math.log(mean) / (orders - 1.0))


@dataclass(frozen=True)
class TuningBound(best_of.Bound[TuningEvent]):
    """A bound (:class:`.best_of.Bound`) with the RDP curve it gives the release: ``rdp(orders, event)``.

    Attributes
    ----------
    rdp : callable
        ``rdp(orders, event)``: the release's RDP ε at each order.
    """

    rdp: Callable[[NDArray[np.float64], TuningEvent], NDArray[np.float64]]


_ASSUMPTIONS = ("K drawn independently of the data from the stated law; K and the other runs' outputs stay secret",
                "the runs are independent, identically distributed runs of Q on the same data",
                "the best output is chosen by a total order fixed in advance (e.g. the largest noisy score)")

#: Registry of the bounds, keyed by the name a certificate reports.
BOUNDS: dict[str, TuningBound] = {b.name: b for b in [
    TuningBound(
        "truncated-negative-binomial",
        "Papernot & Steinke 2022 (arXiv:2110.03620), Thm 2: best of K ~ truncated negative binomial runs",
        _ASSUMPTIONS + ("Q satisfies its RDP curve at every order used, and at the auxiliary order",),
        lambda e: [] if isinstance(e.law, TruncatedNegativeBinomial) else ["K ~ truncated negative binomial"],
        _tnb_rdp,
    ),
    TuningBound(
        "poisson",
        "Papernot & Steinke 2022 (arXiv:2110.03620), Thm 6: best of K ~ Poisson runs",
        _ASSUMPTIONS + ("Q satisfies its RDP curve, and (eps_hat, delta_hat)-DP with exp(eps_hat) <= 1 + 1/(order - 1)",
                        "K = 0 releases nothing data-dependent (a fixed output, or an error)"),
        lambda e: [] if isinstance(e.law, PoissonRepetitions) else ["K ~ Poisson"],
        _poisson_rdp,
    ),
]}

#: Bounds named in the literature but not implemented, with the reason (requesting one raises ValueError).
EXCLUDED: dict[str, str] = {
    "liu-talwar": ("Liu & Talwar 2019 (arXiv:1811.07971), random stopping: its pure-epsilon statement needs an "
                   "epsilon-DP base, which a Gaussian-noise base never is, and its approximate-DP statement could not "
                   "be checked against the paper; the same algorithm is the geometric law of "
                   "truncated-negative-binomial (shape 1)"),
}

_REGISTRY = best_of.BoundRegistry(BOUNDS, EXCLUDED)


def tuning_rdp(event: TuningEvent, bound: str, orders: ArrayLike = DEFAULT_ORDERS) -> NDArray[np.float64]:
    """The release's RDP at ``event.orders(orders)`` by the named bound (``ValueError`` if it does not apply).

    Parameters
    ----------
    event : TuningEvent
        The tuning run.
    bound : str
        Name of a bound in :data:`BOUNDS`.
    orders : array_like, optional
        RDP orders (a curve event evaluates at its own orders instead).

    Returns
    -------
    ndarray
        RDP ε at each order of ``event.orders(orders)``.
    """
    at = event.orders(check_orders(orders))
    return _REGISTRY.require(event, bound).rdp(at, event)


def account(event: TuningEvent, delta: float, *, bound: str = "best",
            orders: ArrayLike = DEFAULT_ORDERS) -> best_of.PrivacyAccount:
    """(ε, δ)-DP of the release: one named bound, or the smallest ε of the applicable ones.

    Each bound's RDP curve is converted by the "improved" conversion of :mod:`.rdp` at ``delta``,
    minimised over the orders (a curve event's own, else ``orders``); ``candidates`` holds every
    applicable bound's ε and ``skipped`` every other bound's unmet conditions.

    Parameters
    ----------
    event : TuningEvent
        The tuning run.
    delta : float
        Target δ, in (0, 1).
    bound : str, optional
        ``"best"`` or one bound's name.
    orders : array_like, optional
        RDP orders to optimise over.

    Returns
    -------
    PrivacyAccount
        The certified ε (rounded up) with the winning bound and its provenance.
    """
    delta = check_delta(delta)
    at = event.orders(check_orders(orders))

    def epsilon_of(name: str) -> tuple[float, float]:
        return epsilon_from_rdp(at, BOUNDS[name].rdp(at, event), delta)

    return _REGISTRY.account(delta, _REGISTRY.best_of(event, epsilon_of, bound=bound), "improved")


def calibrate_base_mu(law: RepetitionLaw, epsilon: float, delta: float, *,
                      event_of: Callable[[float], TuningEvent] | None = None, start: float | None = None,
                      orders: ArrayLike = DEFAULT_ORDERS, rtol: float = 1e-4) -> float:
    """The largest per-run budget μ (within ``rtol`` in ε) whose selection meets (ε, δ); never overshoots.

    By default each run of Q is μ-GDP; ``event_of(μ)`` describes the selection whose runs are
    calibrated to the per-run budget μ otherwise (e.g. Q's actual μ-GDP parameter or RDP curve when
    its parts are calibrated to μ).  The best-of ε at ``delta`` (:func:`account`) grows with the
    base's curve (every term of Thms 2 and 6 does), so :func:`.calibration.smallest_noise` on 1/μ
    finds the answer: a point at which that ε was evaluated and is at most ``epsilon``, with
    ε ≥ (1 − rtol)·``epsilon`` there or a bracket narrower than a factor 1 + rtol.  (Should
    ``event_of`` not grow with μ, the answer still meets the target; only its optimality is lost.)

    Parameters
    ----------
    law : TruncatedNegativeBinomial or PoissonRepetitions
    epsilon, delta : float
        The target.
    event_of : callable, optional
        μ ↦ :class:`TuningEvent` of the selection at per-run budget μ; None: ``TuningEvent(law, base_mu=μ)``.
    start : float, optional
        A first guess of μ (default: 0.7 × the μ that meets the target without tuning,
        :func:`.gdp.gdp_mu`); only the number of evaluations depends on it.
    orders : array_like
        Orders of a GDP base.
    rtol : float

    Returns
    -------
    float
        μ > 0.

    Raises
    ------
    ValueError
        For an argument outside its range, or no μ in [1e-12, 1e6] meeting the target (e.g. ε so
        small that log E[K]/(α − 1) exceeds it at every order).
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    make = (lambda mu: TuningEvent(law, base_mu=mu)) if event_of is None else event_of

    def epsilon_at(noise: float) -> float:
        return account(make(1.0 / noise), delta, orders=orders).epsilon

    mu0 = 0.7 * gdp.gdp_mu(epsilon, delta) if start is None else check_positive(start, "start")
    return 1.0 / smallest_noise(epsilon_at, epsilon, 1.0 / mu0, rtol=rtol, floor=1e-6, ceiling=1e12)
