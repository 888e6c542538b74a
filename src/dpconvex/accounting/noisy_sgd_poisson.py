"""Poisson-subsampled composition of the noisy mini-batch SGD accountant: dp-accounting's PLD and its routes.

Pure functions of (q, z, T): ``rate`` q = b/n is the Poisson sampling rate, ``noise_multiplier``
z = σ/(S_g/2) the noise standard deviation over the per-record contribution bound (σ on the gradient
*sum*, S_g the replace-one sensitivity of one record's gradient, so each record's clipped contribution
has norm ≤ S_g/2), ``steps`` T.  A replace-one step is the pair (1 − q)N(0, z²) + qN(∓1, z²) (the
derivation note of :mod:`dpconvex.accounting.noisy_sgd`).  The other formulas of the accountant are in
:mod:`.noisy_sgd_bounds`, which re-exports every name here.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from . import gdp
from .poisson_pld import bounded_discretization
from .poisson_pld import poisson_pld as _poisson_pld

__all__ = [
    "poisson_pld_epsilon",
    "poisson_pld_delta",
    "poisson_route",
    "PLD_ROUTE",
    "FULL_BATCH_ROUTE",
    "PLD_DISCRETIZATION",
    "PLD_RELATIVE_DISCRETIZATION",
    "PLD_DELTA_DISCRETIZATION",
    "PLD_FINEST_DISCRETIZATION",
    "PLD_TAIL_TRUNCATION",
    "poisson_clt_epsilon",
    "poisson_clt_slope",
    "poisson_clt_noise_multiplier",
]

#: Coarsest discretisation of dp-accounting's privacy-loss distribution (used when the estimate of
#: ε below is large or unknown).  Its estimates are pessimistic (upper bounds on δ(ε)) at any
#: interval; the interval only trades tightness for time, never validity.
PLD_DISCRETIZATION = 1e-2
#: The interval as a fraction of the central-limit estimate of ε: slack about 0.1 % of ε at small ε.
PLD_RELATIVE_DISCRETIZATION = 1e-3
#: Interval of δ(ε) evaluations (no ε-relative choice: they are asked at any ε, e.g. on a whole curve).
PLD_DELTA_DISCRETIZATION = 1e-4
#: Finest interval ever used (ε below ~1e-3 would otherwise cost seconds per evaluation).
PLD_FINEST_DISCRETIZATION = 1e-6


#: Tail mass dp-accounting's self-composition may truncate (pessimistically, into the mass at
#: infinity), its default; a δ(ε) query at δ ≲ 1e3 × this would read ε = ∞, so an ε query at δ uses
#: min(this, δ/1000) instead (``_tail_truncation``).
PLD_TAIL_TRUNCATION = 1e-15


def _tail_truncation(delta: float | None) -> float:
    return PLD_TAIL_TRUNCATION if delta is None else min(PLD_TAIL_TRUNCATION, 1e-3 * delta)


def _discretization_for(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """Interval for one PLD evaluation: :data:`PLD_RELATIVE_DISCRETIZATION` × the central-limit ε.

    The estimate is ε(δ) of μ = q√(T(e^{4/z²} − 1)) (Bu et al. 2020, Thm 5, shift 2; the inverse of
    :func:`poisson_clt_noise_multiplier`), clipped to [:data:`PLD_FINEST_DISCRETIZATION`,
    :data:`PLD_DISCRETIZATION`].  A deterministic function of the event, so a calibration and the
    certificate of its result evaluate the same discretised PLD; one evaluation instead of a coarse
    pass followed by a refined one.  Where the central limit overstates ε (large ε, small q) the
    interval is the coarse one: slack ≲ 2 % of ε there.
    """
    estimate = poisson_clt_epsilon(rate, noise_multiplier, steps, delta)
    if not (math.isfinite(estimate) and estimate > 0):
        return PLD_DISCRETIZATION
    return float(np.clip(estimate * PLD_RELATIVE_DISCRETIZATION, PLD_FINEST_DISCRETIZATION, PLD_DISCRETIZATION))


def poisson_pld_epsilon(rate: float, noise_multiplier: float, steps: int, delta: float,
                        discretization: float | None = None) -> float:
    """ε(δ) of ``steps`` Poisson-subsampled Gaussian steps, replace-one, from dp-accounting's PLD.

    ``noise_multiplier`` is σ/(S_g/2): noise sd over the per-record contribution bound.  The PLD
    accountant models a replace-one step as the pair (1 − q)N(0, z²) + qN(∓1, z²) (the record's
    contribution replaced by its opposite), composes with pessimistic discretisation and tail
    truncation (truncated mass counts as infinite loss: at most min(1e-15, δ/1000) of the δ), and
    returns an upper bound on ε at every discretisation interval: ``discretization`` as given, else
    ``_discretization_for`` the event.  See the derivation note in
    :mod:`dpconvex.accounting.noisy_sgd`.

    The result is the smaller of that and the full-batch GDP bound ε(δ; 2√T/z) (``_full_batch_mu``),
    also valid at q < 1: subsampling never weakens a step.  Derivation: the step's pair is
    P = (1 − q)N(0, z²) + qN(−1, z²) against Q = (1 − q)N(0, z²) + qN(1, z²), and every hockey-stick
    divergence H_α (α > 0) is jointly convex, so H_α(P‖Q) ≤ (1 − q)H_α(N(0, z²)‖N(0, z²)) +
    qH_α(N(−1, z²)‖N(1, z²)) ≤ H_α(N(−1, z²)‖N(1, z²)) (Balle, Barthe, Gaboardi 2018, arXiv:1807.01647,
    §3); as these divergences at every α fix the trade-off function, each step is (2/z)-GDP and T
    adaptive steps are (2√T/z)-GDP (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 3.3).  The GDP bound
    takes over at huge ε (σ so small that the PLD's grid is beyond its caps: ε = ∞ from the PLD),
    so every ε has a finite certificate reached in bounded time.

    Parameters
    ----------
    rate : float
        q = b/n in (0, 1] (q ≥ 1: the full-batch GDP bound alone).
    noise_multiplier : float
        z = σ/(S_g/2) > 0.
    steps : int
        T, the number of steps.
    delta : float
        δ in (0, 1).
    discretization : float or None
        The PLD's interval; None: chosen from the event.

    Returns
    -------
    float
        ε(δ), an upper bound.
    """
    args = (float(rate), float(noise_multiplier), int(steps))
    full_batch = gdp.gdp_epsilon(float(delta), _full_batch_mu(*args))
    if args[0] >= 1.0:
        return full_batch
    interval = _discretization_for(*args, float(delta)) if discretization is None else float(discretization)
    return min(_pld_epsilon(*args, interval, float(delta)), full_batch)


def _full_batch_mu(rate: float, noise_multiplier: float, steps: int) -> float:
    """μ of T full-batch steps, each the Gaussian pair N(∓1, z²): exactly (2√T/z)-GDP (Dong, Roth, Su 2019,
    arXiv:1905.02383, Cor. 3.3), the composition itself at q = 1 and an upper bound at q < 1."""
    return 2.0 * math.sqrt(steps) / noise_multiplier


#: How :func:`poisson_pld_epsilon` obtained its ε (:func:`poisson_route`), for the certificate's ``conversion``.
PLD_ROUTE = "dp-accounting PLD (pessimistic)"
FULL_BATCH_ROUTE = "exact-gdp of the full-batch steps"


def poisson_route(rate: float, noise_multiplier: float, steps: int, delta: float) -> str:
    """Which of the two bounds of :func:`poisson_pld_epsilon` gave its value: ``PLD_ROUTE`` or
    ``FULL_BATCH_ROUTE`` (q = 1, or a PLD beyond its caps or above the GDP bound).

    Parameters
    ----------
    rate : float
    noise_multiplier : float
    steps : int
    delta : float

    Returns
    -------
    str
    """
    args = (float(rate), float(noise_multiplier), int(steps))
    if args[0] >= 1.0:
        return FULL_BATCH_ROUTE
    full_batch = gdp.gdp_epsilon(float(delta), _full_batch_mu(*args))
    pld = _pld_epsilon(*args, _discretization_for(*args, float(delta)), float(delta))
    return PLD_ROUTE if pld < full_batch else FULL_BATCH_ROUTE


@lru_cache(maxsize=256)
def _pld_epsilon(rate: float, noise_multiplier: float, steps: int, discretization: float, delta: float) -> float:
    """Cached ε(δ): a trainer's certificate and its composition baseline ask for the same value.

    ∞ (certifies nothing: more noise is needed) where the PLD cannot be built within its size caps
    (:func:`.poisson_pld.bounded_discretization`), so planning takes bounded time and memory at any σ.
    """
    truncation = _tail_truncation(delta)
    interval = bounded_discretization(rate, noise_multiplier, steps, discretization, truncation)
    if math.isinf(interval):
        return math.inf
    return float(_poisson_pld(rate, noise_multiplier, steps, interval, truncation).get_epsilon_for_delta(delta))


def poisson_pld_delta(rate: float, noise_multiplier: float, steps: int, epsilon: float) -> float:
    """δ(ε) of the same composition (pessimistic, i.e. an upper bound), discretisation ``PLD_DELTA_DISCRETIZATION``;
    the smaller of that and the full-batch GDP δ(ε; 2√T/z), as in :func:`poisson_pld_epsilon`.

    Parameters
    ----------
    rate : float
    noise_multiplier : float
    steps : int
    epsilon : float

    Returns
    -------
    float
    """
    args = (float(rate), float(noise_multiplier), int(steps))
    full_batch = float(gdp.gdp_delta(float(epsilon), _full_batch_mu(*args)))
    if args[0] >= 1.0:
        return full_batch
    truncation = _tail_truncation(None)
    interval = bounded_discretization(*args, PLD_DELTA_DISCRETIZATION, truncation)
    if math.isinf(interval):
        return full_batch
    return min(float(_poisson_pld(*args, interval, truncation).get_delta_for_epsilon(float(epsilon))), full_batch)


def poisson_clt_epsilon(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """ε(δ) of μ = q√(T(e^{4/z²} − 1)), the inverse of :func:`poisson_clt_noise_multiplier`.

    An approximation (Bu et al. 2020, Thm 5, shift 2), not a bound: ``inf`` where e^{4/z²}
    overflows, 0 at z = ∞.

    Parameters
    ----------
    rate : float
    noise_multiplier : float
    steps : int
    delta : float

    Returns
    -------
    float
    """
    exponent = 4.0 / (noise_multiplier * noise_multiplier)
    if exponent > 700.0:
        return math.inf
    mu = rate * math.sqrt(steps * math.expm1(exponent))
    return float(gdp.gdp_epsilon(delta, mu)) if mu > 0 else 0.0


def poisson_clt_slope(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """d log ε / d log z of :func:`poisson_clt_epsilon` at z (one-sided difference, step 10⁻³); nan if undefined.

    Parameters
    ----------
    rate : float
        q, the Poisson sampling rate.
    noise_multiplier : float
        z = σ/(S_g/2).
    steps : int
        T.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The slope (negative), or nan where ε is 0 or infinite.
    """
    here = poisson_clt_epsilon(rate, noise_multiplier, steps, delta)
    there = poisson_clt_epsilon(rate, noise_multiplier * 1.001, steps, delta)
    if not (0 < there <= here < math.inf):
        return math.nan
    return math.log(there / here) / math.log(1.001)


def poisson_clt_noise_multiplier(rate: float, steps: int, mu: float) -> float:
    """Noise multiplier z = σ/(S_g/2) at which T Poisson steps are μ-GDP in the central-limit regime.

    Bu, Dong, Long, Su 2020 (arXiv:1911.11607), Thm 5: T steps of rate q with a Gaussian of
    sensitivity 1 and noise z tend to μ-GDP with μ = q√(T(e^{1/z²} − 1)).  Replace-one moves the
    differing record's contribution from g to −g (shift 2, not 1: the derivation note of
    :mod:`dpconvex.accounting.noisy_sgd`), so the shift-2 version is used:
    z = 2/√log(1 + μ²/(q²T)).  An approximation, not a bound: it starts the exact calibration and
    ranks ``method="auto"``'s candidates; no certificate uses it.

    Parameters
    ----------
    rate : float
    steps : int
    mu : float

    Returns
    -------
    float
    """
    return float(2.0 / math.sqrt(math.log1p(mu * mu / (rate * rate * steps))))
