"""The default's release under add/remove neighbours: a comparison number for DP-SGD as usually reported.

NOT a certificate.

dpconvex certifies replace-one neighbours (one record changed, n public).  DP-SGD is usually
reported under add/remove neighbours (one record added or removed: Abadi et al. 2016,
arXiv:1607.00133; TF Privacy, Opacus; the bench's ``sgd_ma``), and the headline's DP-SGD references for
the SVM (SGD-MA) are add/remove numbers.  The two relations bound different pairs, so one ε number
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
import numbers

from dpconvex.accounting._checks import check_delta, check_positive
from dpconvex.accounting.noisy_sgd import NoisySGDEvent
from dpconvex.mechanisms.auto import plan as auto_plan
from dpconvex.mechanisms.problem import DataShape, PrivacyTarget, Problem
from dpconvex.objectives.losses import Loss

__all__ = ["poisson_add_remove_epsilon", "add_remove_epsilon", "default_event", "matching_epsilon"]


def poisson_add_remove_epsilon(rate: float, noise_multiplier: float, steps: int, delta: float, *,
                               discretization: float = 1e-4) -> float:
    """ε at δ of ``steps`` Poisson-subsampled Gaussian steps under add/remove neighbours (dp-accounting PLD).

    Parameters
    ----------
    rate : float
        Sampling rate q in (0, 1], held fixed as the record count changes by one.
    noise_multiplier : float
        z > 0: the noise sd over one record's contribution bound.
    steps : int
        T ≥ 1.
    delta : float
        δ in (0, 1).
    discretization : float, default 1e-4
        The PLD's value discretisation interval (dp-accounting's default), > 0.

    Returns
    -------
    float
        An upper bound on ε (pessimistic discretisation; the worse of the add and remove directions).

    Raises
    ------
    ValueError
        Naming the parameter outside its range.
    """
    delta = check_delta(delta)
    noise_multiplier = check_positive(noise_multiplier, "noise_multiplier")
    discretization = check_positive(discretization, "discretization")
    if not 0.0 < check_positive(rate, "rate") <= 1.0:
        raise ValueError(f"rate must be in (0, 1]; got {rate!r}.")
    if not (isinstance(steps, numbers.Integral) and steps >= 1):
        raise ValueError(f"steps must be an integer >= 1; got {steps!r}.")
    import dp_accounting  # here: ~1 s to import, only the comparisons need it
    from dp_accounting.pld import pld_privacy_accountant

    accountant = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=discretization)
    accountant.compose(dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(noise_multiplier)),
                       int(steps))
    return float(accountant.get_epsilon(delta))


def add_remove_epsilon(event: NoisySGDEvent, delta: float, *, discretization: float = 1e-4) -> float:
    """ε at ``delta`` of a Poisson noisy SGD run under add/remove neighbours (module docstring).

    Parameters
    ----------
    event : NoisySGDEvent
        A run with ``batching="poisson"`` (its σ as calibrated).
    delta, discretization
        As :func:`poisson_add_remove_epsilon`.

    Returns
    -------
    float
        :func:`poisson_add_remove_epsilon` of q = b/n, z = σ/(S_g/2) and T: an upper bound on the run's ε
        under add/remove, with q = b/n (and the whole plan) held fixed, n treated as public.

    Raises
    ------
    ValueError
        For a run without Poisson batches, or a parameter out of range.
    """
    if event.batching != "poisson":
        raise ValueError(f"add_remove_epsilon needs a run with Poisson batches; got batching={event.batching!r}.")
    return poisson_add_remove_epsilon(min(1.0, event.sampling_rate), event.noise_multiplier, int(event.steps), delta,
                                      discretization=discretization)


def default_event(loss: Loss, n: int, n_features: int, epsilon: float, delta: float) -> NoisySGDEvent:
    """The noisy SGD run the default estimator plans, from the data's shape only (as ``auto`` plans).

    Parameters
    ----------
    loss : Loss
        A smooth loss (the default trains the others with ``sco_noisy_sgd``, no Poisson run).
    n, n_features : int
        Records and features of the training data.
    epsilon, delta : float
        The replace-one target the default is given.

    Returns
    -------
    NoisySGDEvent
        The run of ``method="auto"``, ``l2_regularization="auto"``, ``data_norm=1``, σ calibrated.

    Raises
    ------
    ValueError
        For a non-smooth loss, or a target out of range.
    """
    if not loss.smooth:
        raise ValueError(f"loss must be smooth (the default trains a {loss.name} loss with sco_noisy_sgd, which "
                         f"has no Poisson run); got the non-smooth {loss.name!r} loss.")
    problem = Problem(DataShape(n, n_features), loss, "auto", "auto", 1.0, None, PrivacyTarget(delta, epsilon))
    return auto_plan(problem).plan.event


def matching_epsilon(loss: Loss, n: int, n_features: int, epsilon: float, delta: float, *,
                     rtol: float = 1e-3) -> float:
    """A nominal (replace-one) ε whose default release is (``epsilon``, δ)-DP under add/remove, and a factor
    1 + ``rtol`` more is not.

    Bisection in log ε between a nominal ε whose release meets the add/remove target and one whose
    release does not (the first found from ``epsilon`` itself, the second by doubling); ``auto``'s
    configuration changes in steps with ε, so the add/remove ε need not be monotone in the nominal
    one, and the answer is a point that meets the target with a point at most a factor 1 + ``rtol``
    above it that does not.

    Parameters
    ----------
    loss, n, n_features, delta
        As :func:`default_event`.
    epsilon : float
        The add/remove target.
    rtol : float, default 1e-3
        Relative width of the final bracket.

    Returns
    -------
    float
        The nominal ε to fit the default estimator with (about 2·``epsilon`` at ε ≤ 0.2: module docstring).

    Raises
    ------
    ValueError
        If no nominal ε in [``epsilon``/64, 64·``epsilon``] brackets the target.
    """
    def meets(nominal: float) -> bool:
        return add_remove_epsilon(default_event(loss, n, n_features, nominal, delta), delta) <= epsilon

    low = epsilon
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
