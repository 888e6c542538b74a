"""The composition numbers of noisy SGD with the fresh-sample rule (Arora, Marinov, Ullah), for comparison only.

The paper's own accounting (Lemma 2 per step, Theorem 5's advanced composition, Theorem 6's noise)
and dp-accounting's RDP composition of per-step subsampled Gaussians.  None of them is a certificate:
the certified bound is the single-use bound of :mod:`.private_sco` (which re-exports every name here),
whose docstring holds the conventions (σ the standard deviation of the noise added to one record's
(sub)gradient, S = 2L its replace-one sensitivity) and the derivation notes, including why these
numbers are reported and not certified.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ._checks import check_delta

if TYPE_CHECKING:  # the event record is defined with the certified accountant, which imports this module
    from .private_sco import SCOEvent

__all__ = ["LEMMA2_MAX_STEP_EPSILON", "SCO_ORDERS", "SCO_HIGH_ORDERS", "lemma2_step_epsilon", "theorem5_epsilon",
           "theorem6_sigma", "theorem6_guarantee", "paper_epsilon", "dp_accounting_epsilon"]

#: Lemma 2 / Theorem 5 need ε̃ ≤ 1.256 (where e^ε̃ − 1 ≤ 2ε̃).
LEMMA2_MAX_STEP_EPSILON = 1.256

#: RDP orders for the subsampled-Gaussian accountant: dense where optima of moderate ε lie; the
#: sparse high orders (the cost of the without-replacement bound grows with the order) are added
#: only when the optimum sits at the top of the dense set.  Any order set gives a valid bound.
SCO_ORDERS = (1.25, 1.5, 1.75, *range(2, 65))
SCO_HIGH_ORDERS = (80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024)


def lemma2_step_epsilon(sigma: float, sensitivity: float, step_delta: float) -> float:
    """ε̃ = S√(3 log(1/δ_step))/σ of one Gaussian step (Arora et al. Lemma 2, σ = S√(3 log(1/δ))/ε̃ inverted).

    Parameters
    ----------
    sigma : float
        σ > 0, the standard deviation of the noise added to the step's gradient.
    sensitivity : float
        S = 2L, the replace-one sensitivity of one record's gradient.
    step_delta : float
        δ_step in (0, 1).

    Returns
    -------
    float
        ε̃ (Lemma 2 holds only for ε̃ ≤ :data:`~.sco_composition.LEMMA2_MAX_STEP_EPSILON`).
    """
    return sensitivity * math.sqrt(3.0 * math.log(1.0 / step_delta)) / sigma


def theorem5_epsilon(step_epsilon: float, n: int, steps: int, delta_prime: float) -> float:
    """2ε̃√(2τ log(1/δ'))/n + 4τε̃²/n² (Arora et al. Thm 5; ``inf`` when ε̃ > 1.256).

    Parameters
    ----------
    step_epsilon : float
        ε̃ of one Gaussian step (:func:`lemma2_step_epsilon`).
    n : int
        Number of records (each step samples one of them).
    steps : int
        τ, the number of steps composed.
    delta_prime : float
        δ' in (0, 1) of advanced composition.

    Returns
    -------
    float
        ε of the τ steps, at δ = τδ_step/n + δ'.
    """
    if step_epsilon > LEMMA2_MAX_STEP_EPSILON:
        return math.inf
    return (2.0 * step_epsilon * math.sqrt(2.0 * steps * math.log(1.0 / delta_prime)) / n
            + 4.0 * steps * step_epsilon**2 / n**2)


def theorem6_sigma(epsilon: float, delta: float, n: int, sensitivity: float) -> float:
    """σ = 8S√(log(1/δ))/(√n ε) of Arora et al. Thm 6, with the replace-one sensitivity S = 2L for L.

    Parameters
    ----------
    epsilon : float
        The theorem's ε > 0.
    delta : float
        The theorem's δ in (0, 1).
    n : int
        Number of records.
    sensitivity : float
        S = 2L.

    Returns
    -------
    float
        σ, the standard deviation of the noise added at every step.
    """
    return 8.0 * sensitivity * math.sqrt(math.log(1.0 / delta)) / (math.sqrt(n) * epsilon)


def theorem6_guarantee(epsilon: float, delta: float, delta_prime: float, n: int) -> tuple[float, float]:
    """(4ε(√log(1/δ') + 2), δ + δ' + 2e^{−n/16}) of Arora et al. Thm 6 (needs n ≥ 16, ε ≤ 1/(2√n)).

    Parameters
    ----------
    epsilon, delta : float
        The ε and δ the noise of :func:`theorem6_sigma` was set for.
    delta_prime : float
        δ' in (0, 1) of the composition.
    n : int
        Number of records, ≥ 16.

    Returns
    -------
    tuple of float
        The paper's (ε, δ) of the untruncated run.
    """
    if n < 16 or not 0 < epsilon <= 1.0 / (2.0 * math.sqrt(n)):
        raise ValueError(f"Theorem 6 needs n >= 16 and 0 < epsilon <= 1/(2 sqrt(n)); got n={n}, epsilon={epsilon}.")
    return (4.0 * epsilon * (math.sqrt(math.log(1.0 / delta_prime)) + 2.0),
            delta + delta_prime + 2.0 * math.exp(-n / 16.0))


def paper_epsilon(event: SCOEvent, delta: float, splits: int = 99) -> float:
    """ε of Lemma 2 + Theorem 5 at total δ, best split of δ between τδ_step/n and δ' (see module note).

    Parameters
    ----------
    event : SCOEvent
        The run (n, S, σ and τ_max = ``steps``).
    delta : float
        The total δ in (0, 1).
    splits : int, default=99
        Fractions of δ given to δ', evenly spaced in [0.01, 0.99].

    Returns
    -------
    float
        The smallest ε over the splits (``inf`` if Lemma 2 applies to none).
    """
    check_delta(delta)
    best = math.inf
    for fraction in np.linspace(0.01, 0.99, splits):
        delta_prime = fraction * delta
        step_delta = (1.0 - fraction) * delta * event.n / event.steps
        if step_delta >= 1.0:
            continue
        step_epsilon = lemma2_step_epsilon(event.sigma, event.sensitivity, step_delta)
        best = min(best, theorem5_epsilon(step_epsilon, event.n, event.steps, delta_prime))
    return best


@lru_cache(maxsize=1024)
def dp_accounting_epsilon(event: SCOEvent, delta: float) -> float:
    """ε from dp-accounting's RDP accountant: ``steps``-fold composition of a Gaussian on one record
    sampled uniformly from n, replace-one (Wang, Balle, Kasiviswanathan 2019, arXiv:1808.00087, Thm 27).

    Derivation: given the past, a step's law differs between neighbours only if the differing index
    is drawn (probability 1/n; sampling one index with or without replacement is the same) and is
    fresh — then it is a Gaussian step with noise multiplier σ/S; a seen index gives the same
    noise-only step under both.  So each step is a subsampled Gaussian (size 1 of n) or better, and
    RDP composes adaptively.

    Parameters
    ----------
    event : SCOEvent
        The run (n, S, σ and τ_max = ``steps``).
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε, optimised over ``SCO_ORDERS`` (and ``SCO_HIGH_ORDERS`` when the optimum sits at the top).
    """
    import dp_accounting  # imported here: the package loads in ~1 s, and the CLI's other accountants skip it

    check_delta(delta)
    step = dp_accounting.SampledWithoutReplacementDpEvent(
        event.n, 1, dp_accounting.GaussianDpEvent(event.sigma / event.sensitivity))
    epsilon, order = _rdp_epsilon(step, int(event.steps), delta, SCO_ORDERS)
    if order >= SCO_ORDERS[-2]:
        epsilon = min(epsilon, _rdp_epsilon(step, int(event.steps), delta, SCO_HIGH_ORDERS)[0])
    return epsilon


def _rdp_epsilon(step, count: int, delta: float, orders) -> tuple[float, float]:
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant(orders=list(orders), neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(step, count)
    epsilon, order = accountant.get_epsilon_and_optimal_order(delta)
    return float(epsilon), float(order)
