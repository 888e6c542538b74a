"""The curve a planned run will certify, from its accounting event alone (before the run reads any data).

A mechanism's plan (:mod:`dpconvex.mechanisms.registry`) holds the run's calibrated accounting event,
a function of public quantities only (n, d, the declared bounds, ε, δ); its ``train`` then accounts
that event at δ and certifies the result.  :func:`planned_curve` makes the same account of the same
event and reads the curve from it with :func:`~dpconvex.privacy.dp_events.certificate_curve`, the
function that reads a trained certificate's curve, so that
:meth:`~dpconvex.privacy.ledger.PrivacyLedger.check` can refuse a release before it runs and the
release recorded afterwards has exactly the curve that was checked.  What each ``train`` adds to the
account, it adds here too:

* noisy SGD: the certificate records n, the batch size, the batching and the gradient sensitivity
  (the event's), σ and T = the event's steps: a Poisson run's curve is read from them;
* PNSGD: an ε read off the δ(ε) curve just above the target is certified as the target (``train``
  checks the worst record's δ there first, and refuses the run otherwise), so the planned ε is
  ``min(ε, target)``;
* every other field of a certificate (notes, the run's own constants) does not enter its curve.

``tests/test_ledger_plan.py`` holds the planned curve equal to the trained certificate's curve for
every method of the registry, and the estimators check it again after the run.
"""

from __future__ import annotations

from typing import Any

from dpconvex.accounting.interface import account
from dpconvex.accounting.noisy_gd import NoisyGDEvent
from dpconvex.accounting.noisy_sgd_event import NoisySGDEvent
from dpconvex.accounting.pnsgd_event import PNSGDEvent
from dpconvex.accounting.private_sco import SCOEvent
from dpconvex.accounting.sensitivity import OutputPerturbationEvent
from dpconvex.accounting.tuning_event import TuningEvent
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve

__all__ = ["PLANNED_MECHANISMS", "covers", "planned_curve"]

#: The mechanism named in the certificate of a run of each event type (the curve reads only ``"noisy_gd"``).
PLANNED_MECHANISMS: dict[type, str] = {
    NoisyGDEvent: "noisy_gd", NoisySGDEvent: "noisy_sgd", OutputPerturbationEvent: "output_perturbation",
    PNSGDEvent: "pnsgd", SCOEvent: "sco_noisy_sgd", TuningEvent: "private_selection",
}


def planned_curve(event: Any, delta: float, *, bound: str | None = None,
                  target_epsilon: float | None = None) -> PrivacyCurve:
    """The curve the run ``event`` describes will certify at ``delta`` (module docstring), without running it.

    Parameters
    ----------
    event : event record
        A calibrated event of :func:`dpconvex.accounting.interface.account` (a plan's ``event``, or a
        private selection's :class:`~dpconvex.accounting.tuning_event.TuningEvent`).
    delta : float
        δ of the run's certificate, in (0, 1).
    bound : str, optional
        The plan's ``bound`` (noisy GD and noisy SGD: ``"best"`` or a bound's name); ``None`` for the
        accountants without one.
    target_epsilon : float, optional
        The run's target ε (read by PNSGD only, module docstring).

    Returns
    -------
    PrivacyCurve
        Equal to ``certificate_curve`` of the certificate the run will carry.

    Raises
    ------
    TypeError
        For an event of another type.
    """
    mechanism = PLANNED_MECHANISMS.get(type(event))
    if mechanism is None:
        names = ", ".join(kind.__name__ for kind in PLANNED_MECHANISMS)
        raise TypeError(f"planned_curve takes an event of one of the types {names}; got {type(event).__name__}.")
    privacy = account(event, delta, **({} if bound is None else {"bound": bound}))
    epsilon = privacy.epsilon
    if isinstance(event, PNSGDEvent) and target_epsilon is not None and epsilon > target_epsilon:
        epsilon = float(target_epsilon)  # as pnsgd's train certifies it (module docstring)
    assumptions: dict[str, Any] = {}
    sigma, iterations = 1.0, 1  # read by a Poisson curve only
    if isinstance(event, NoisySGDEvent):
        assumptions = {"n": event.n, "batch_size": event.batch_size, "gradient_sensitivity": event.sensitivity,
                       "batching": event.batching}
        sigma, iterations = event.sigma, event.steps
    planned = PrivacyCertificate(
        mechanism=mechanism, epsilon=epsilon, delta=privacy.delta, bound=privacy.bound, theorem=privacy.theorem,
        conditions=privacy.assumptions, assumptions=assumptions, order=privacy.order, conversion=privacy.conversion,
        sigma=sigma, iterations=iterations, candidates=dict(privacy.candidates))
    return certificate_curve(planned)


def covers(planned: PrivacyCurve, certificate: PrivacyCertificate) -> bool:
    """Whether the filter's check of ``planned`` covers the release ``certificate`` certifies.

    It does when the certificate's curve is ``planned`` itself, or when ``planned`` is an (ε, δ) pair and
    the certificate's curve a pair with ε and δ no larger (a release the basic filter charges less).

    Parameters
    ----------
    planned : PrivacyCurve
        What :meth:`~dpconvex.privacy.ledger.PrivacyLedger.check` was shown before the run.
    certificate : PrivacyCertificate
        The run's certificate.

    Returns
    -------
    bool
    """
    curve = certificate_curve(certificate)
    if planned.kind != "pair" or curve.kind != "pair":
        return curve == planned
    return curve.epsilon <= planned.epsilon and curve.delta <= planned.delta
