"""The default's release under add/remove neighbours: a comparison number for DP-SGD as usually reported, NOT a certificate.

dpconvex certifies replace-one neighbours (one record changed, n public).  DP-SGD is usually
reported under add/remove neighbours (one record added or removed: Abadi et al. 2016,
arXiv:1607.00133; TF Privacy, Opacus; the bench's ``sgd_ma``), and the issue 14 references for the
SVM (SGD-MA) are add/remove numbers.  The two relations bound different pairs, so one ε number
does not mean the same guarantee under both: comparing the default at ε = 0.1 (replace-one) with
DP-SGD at ε = 0.1 (add/remove) gives DP-SGD about twice the budget.  This module gives the other
like-for-like comparison (the bench's ``sgd_ma_replace_one`` gives the first): the default
calibrated so that its release meets the reference's ε *under add/remove*.

Derivation note.  The default trains Poisson noisy SGD (:mod:`dpconvex.mechanisms.auto`): T steps,
each record in a step's batch with probability q = b/n, the sum of per-example gradients of norm
≤ G (clipped, or the loss's Lipschitz bound) plus N(0, σ²I), divided by the fixed b.  Under
add/remove, with q and b held fixed as the record count changes by one (the convention of the
accountants DP-SGD is reported with), one step is the pair N(0, z²) against
(1 − q)N(0, z²) + qN(1, z²) in units of G, z = σ/G — dp-accounting's
``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` under ``ADD_OR_REMOVE_ONE``, composed T times by
its PLD accountant (pessimistic discretisation: an upper bound on ε).  Our events record the
replace-one sensitivity 2G, so z = σ/(sensitivity/2) (:mod:`dpconvex.accounting.noisy_sgd`).  In
the central-limit regime the replace-one pair has twice the mean shift, so the add/remove ε of a
release is about half its replace-one ε (Bu, Dong, Long, Su 2020, arXiv:1911.11607, Thm 5:
μ ∝ q√T·shift/z).
"""

from __future__ import annotations

import math

from ..accounting.noisy_sgd import NoisySGDEvent
from ..losses import Loss
from ..mechanisms.auto import plan as auto_plan
from ..problem import DataShape, PrivacyTarget, Problem

__all__ = ["add_remove_epsilon", "default_event", "matching_epsilon"]


def add_remove_epsilon(event: NoisySGDEvent, delta: float, *, discretization: float = 1e-4) -> float:
    """ε at ``delta`` of a Poisson noisy SGD run under add/remove neighbours (dp-accounting PLD; module docstring).

    Parameters
    ----------
    event : NoisySGDEvent
        A run with ``batching="poisson"`` (its σ as calibrated).
    delta : float
        δ in (0, 1).
    discretization : float, default 1e-4
        The PLD's value discretisation interval (dp-accounting's default).

    Returns
    -------
    float
        An upper bound on the run's ε under add/remove, with q = b/n held fixed.

    Raises
    ------
    ValueError
        For a run without Poisson batches.
    """
    if event.batching != "poisson":
        raise ValueError(f"add_remove_epsilon needs a run with Poisson batches; got batching={event.batching!r}.")
    import dp_accounting  # here: ~1 s to import, only the comparison needs it
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=discretization)
    noise_multiplier = event.sigma / (event.sensitivity / 2.0)
    step = dp_accounting.PoissonSampledDpEvent(min(1.0, event.sampling_rate),
                                               dp_accounting.GaussianDpEvent(noise_multiplier))
    accountant.compose(step, event.steps)
    return float(accountant.get_epsilon(delta))


def default_event(loss: Loss, n: int, n_features: int, epsilon: float, delta: float) -> NoisySGDEvent:
    """The noisy SGD run the default (``method="auto"``, ``l2_regularization="auto"``, ``data_norm=1``) plans
    for n records of ``n_features`` features at a replace-one (ε, δ); from the shape only, as ``auto`` plans."""
    problem = Problem(DataShape(n, n_features), loss, "auto", "auto", 1.0, None, PrivacyTarget(delta, epsilon))
    return auto_plan(problem).plan.event


def matching_epsilon(loss: Loss, n: int, n_features: int, epsilon: float, delta: float, *,
                     rtol: float = 1e-3) -> float:
    """The largest nominal (replace-one) ε, to a factor 1 + ``rtol``, whose default release is (``epsilon``, δ)-DP
    under add/remove.

    Bisection in log ε between a nominal ε whose release meets the add/remove target and one whose
    release does not (the first found from ``epsilon`` itself, the second by doubling); ``auto``'s
    configuration changes in steps with ε, so the add/remove ε need not be monotone in the nominal
    one, and the answer is a point that meets the target with a point at most a factor 1 + ``rtol``
    above it that does not.

    Returns
    -------
    float
        The nominal ε to fit the default estimator with (about 2·``epsilon``: module docstring).

    Raises
    ------
    ValueError
        If no nominal ε in [``epsilon``/64, 64·``epsilon``] brackets the target.
    """
    def meets(nominal: float) -> bool:
        return add_remove_epsilon(default_event(loss, n, n_features, nominal, delta), delta) <= epsilon

    low, high = epsilon, epsilon
    while not meets(low):
        low /= 2.0
        if low < epsilon / 64:
            raise ValueError(f"no nominal epsilon >= {epsilon / 64:g} meets add/remove epsilon={epsilon!r}.")
    high = 2.0 * low
    while meets(high):
        low, high = high, 2.0 * high
        if high > 64 * epsilon:
            raise ValueError(f"every nominal epsilon up to {64 * epsilon:g} meets add/remove epsilon={epsilon!r}.")
    while high / low > 1.0 + rtol:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if meets(middle) else (low, middle)
    return low
