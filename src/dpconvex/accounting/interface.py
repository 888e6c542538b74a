"""One accountant interface: every family's run is an event record; one :func:`account`, one :func:`calibrate`.

``account(event, delta, **options)`` certifies (ε, δ) for the run an event record describes, and
``calibrate(event, epsilon, delta, **options)`` returns **the same event with its noise set** to the
smallest level (within the family's stated tolerance) whose certificate meets (ε, δ); the noise the
event carries on the way in is ignored.  Both dispatch on the event's type through one registry,
:data:`FAMILIES`; an event of any other type raises ``TypeError`` naming the supported ones.  Every
calibration is one run of :func:`.calibration.smallest_noise`, inside the family's own calibration,
so the answer is the family function's, bit for bit, and never overshoots: the account of the
returned event states at most ε.  ε and δ are checked first, alike for every family
(:mod:`._checks`: ε finite and > 0, δ in (0, 1)).

The families (event record: the noise field ``calibrate`` sets; the theorems; the options of
``account`` / of ``calibrate``):

* :class:`.noisy_gd.NoisyGDEvent`: ``sigma``; best of Chourasia, Ye, Shokri 2021 (arXiv:2102.05855)
  App. E, Thm 2, Cor. 1, Cor. 2, Thm 3 (proof) and Bok, Su, Altschuler 2024 (arXiv:2403.00278) §4,
  Lemma C.3; ``bound``, ``conversion``, ``orders`` / ``bound``, ``orders``, ``rtol``.
* :class:`.noisy_sgd_event.NoisySGDEvent`: ``sigma``; best of the Poisson-subsampled Gaussian PLD or
  Dong, Roth, Su 2019 (arXiv:1905.02383) Cor. 3.3, Bok et al. 2024 Thm 4.5 and Lemma C.3, the exact
  law of the quadratic loss; ``bound`` / ``bound``, ``rtol``.
* :class:`.sensitivity.OutputPerturbationEvent`: ``sigma``; best of Chen, Lee, Kifer 2019
  (arXiv:1808.07090) Lemma 2 with Alg. 2 (worst case) and Lemma 3 with Prop. 3 (mixture);
  ``orders`` / ``rtol``, ``orders``.
* :class:`.pnsgd_event.PNSGDEvent`: ``sigma`` (Gaussian) or ``scale`` (Laplace); Asoodeh, Diaz,
  Calmon 2020 (arXiv:2001.06546) Thm 4, Thm 3, Thm 5 (random stopping); none / ``rtol``.
* :class:`.private_sco.SCOEvent`: ``sigma``; the single-use bound (:mod:`.private_sco` note) for
  Arora, Marinov, Ullah 2020 (arXiv:2002.09609) Alg. 1, with the exact Gaussian curve (Dong, Roth, Su
  2019, Cor. 2.13); none / none.
* :class:`.tuning_event.TuningEvent`: ``base_mu`` (the per-run μ, the inverse of a noise level);
  Papernot & Steinke 2022 (arXiv:2110.03620) Thm 2, Thm 6; ``bound``, ``orders`` / ``start``,
  ``orders``, ``rtol``.

The family functions stay (the mechanisms call them) and give the same numbers:
``account(event, delta)`` is :func:`.noisy_gd.account`, :func:`.noisy_sgd.account`,
:func:`.sensitivity.account_output_perturbation`, :func:`.hockey_stick.account_pnsgd`,
:func:`.private_sco.account_sco` or :func:`.hyperparameter_tuning.account`, and the noise of
``calibrate`` is that of :func:`.noisy_gd.calibrate_sigma`, :func:`.noisy_sgd.calibrate_sigma`,
:func:`.sensitivity.calibrate_output_sigma`, :func:`.hockey_stick.calibrate_pnsgd_noise` (for any
record the event names, not only the worst), :func:`.private_sco.calibrate_sco_sigma` or
:func:`.hyperparameter_tuning.calibrate_base_mu` (a base given by its μ; a base given by its RDP
curve has no noise level to set: use ``calibrate_base_mu(..., event_of=...)``).  Pure; imports
nothing of the library outside :mod:`dpconvex.accounting`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from numpy.typing import ArrayLike

from . import hockey_stick, hyperparameter_tuning, noisy_gd, noisy_sgd, private_sco, sensitivity
from ._checks import check_delta, check_epsilon
from .best_of import PrivacyAccount
from .noisy_gd import NoisyGDEvent
from .noisy_sgd_event import NoisySGDEvent
from .pnsgd_event import NOISES, PNSGDEvent
from .private_sco import SCOEvent
from .rdp import DEFAULT_ORDERS
from .sensitivity import OutputPerturbationEvent
from .tuning_event import TuningEvent

__all__ = ["Family", "FAMILIES", "account", "calibrate", "event_types"]


@dataclass(frozen=True)
class Family:
    """One accountant family: its event record, its account and its noise calibration.

    Parameters
    ----------
    name : str
        The family, as the documentation names it.
    event : type
        Its frozen event record.
    account : callable
        ``account(event, delta, **options) -> PrivacyAccount``.
    noise : callable
        ``noise(event, epsilon, delta, **options) -> dict``: the event's noise field(s) set to the calibrated
        level, ready for ``dataclasses.replace``.
    theorem : str
        The results the account rests on.
    """

    name: str
    event: type
    account: Callable[..., PrivacyAccount]
    noise: Callable[..., dict[str, float]]
    theorem: str


def _noisy_gd(event: NoisyGDEvent, epsilon: float, delta: float, **options: Any) -> dict[str, float]:
    return {"sigma": noisy_gd.calibrate_sigma(event, epsilon, delta, **options)}


def _noisy_sgd(event: NoisySGDEvent, epsilon: float, delta: float, **options: Any) -> dict[str, float]:
    return {"sigma": noisy_sgd.calibrate_sigma(event, epsilon, delta, **options)}


def _output(event: OutputPerturbationEvent, epsilon: float, delta: float, **options: Any) -> dict[str, float]:
    return {"sigma": sensitivity.calibrate_output_sigma(event, epsilon, delta, **options)}


def _pnsgd(event: PNSGDEvent, epsilon: float, delta: float, *, rtol: float = 1e-9) -> dict[str, float]:
    return {NOISES[event.noise][0]: hockey_stick._calibrate(event, epsilon, delta, rtol)}


def _sco(event: SCOEvent, epsilon: float, delta: float) -> dict[str, float]:
    return {"sigma": private_sco._calibrate(event, epsilon, delta)}


def _tuning(event: TuningEvent, epsilon: float, delta: float, *, start: float | None = None,
            orders: ArrayLike = DEFAULT_ORDERS, rtol: float = 1e-4) -> dict[str, float]:
    if event.base_mu is None:
        raise ValueError("a base given by its RDP curve has no noise level to calibrate; describe it by base_mu, or "
                         "call hyperparameter_tuning.calibrate_base_mu with event_of.")
    return {"base_mu": hyperparameter_tuning.calibrate_base_mu(event.law, epsilon, delta, start=start, orders=orders,
                                                               rtol=rtol)}


#: The registry of :func:`account` and :func:`calibrate`: event type → :class:`Family` (the module's table).
#:
#: :meta hide-value:
FAMILIES: Mapping[type, Family] = {family.event: family for family in [
    Family("full-batch noisy GD", NoisyGDEvent, noisy_gd.account, _noisy_gd,
           "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855); Bok, Su, Altschuler 2024 (arXiv:2403.00278): best of"),
    Family("noisy mini-batch SGD", NoisySGDEvent, noisy_sgd.account, _noisy_sgd,
           "Poisson PLD or Dong, Roth, Su 2019 (arXiv:1905.02383) Cor. 3.3; Bok, Su, Altschuler 2024 "
           "(arXiv:2403.00278) Thm 4.5, Lemma C.3; exact quadratic law: best of"),
    Family("output perturbation", OutputPerturbationEvent, sensitivity.account_output_perturbation, _output,
           "Chen, Lee, Kifer 2019 (arXiv:1808.07090) Lemma 2, Alg. 2, Lemma 3, Prop. 3: best of"),
    Family("PNSGD", PNSGDEvent, hockey_stick.account_pnsgd, _pnsgd,
           "Asoodeh, Diaz, Calmon 2020 (arXiv:2001.06546) Thm 3, 4, 5"),
    Family("private SCO (fresh-sample noisy SGD)", SCOEvent, private_sco.account_sco, _sco,
           "single use on Arora, Marinov, Ullah 2020 (arXiv:2002.09609) Alg. 1; Dong, Roth, Su 2019 "
           "(arXiv:1905.02383) Cor. 2.13"),
    Family("private selection", TuningEvent, hyperparameter_tuning.account, _tuning,
           "Papernot & Steinke 2022 (arXiv:2110.03620) Thm 2, Thm 6: best of"),
]}


def event_types() -> tuple[type, ...]:
    """The event records :func:`account` and :func:`calibrate` accept, in the order of the module's table.

    Returns
    -------
    tuple of type
        The event record classes.
    """
    return tuple(FAMILIES)


def _family(event: object, verb: str) -> Family:
    """The family of ``event`` (its type or a base class of it), or ``TypeError`` naming the supported types."""
    for cls in type(event).__mro__:
        if cls in FAMILIES:
            return FAMILIES[cls]
    names = ", ".join(cls.__name__ for cls in FAMILIES)
    raise TypeError(f"{verb} takes an event record of one of the types {names}; got {type(event).__name__}.")


def account(event: object, delta: float, **options: Any) -> PrivacyAccount:
    """The certified (ε, δ) of the run ``event`` describes, by its family's accountant (module table).

    Parameters
    ----------
    event : event record
        A :class:`.noisy_gd.NoisyGDEvent`, :class:`.noisy_sgd_event.NoisySGDEvent`,
        :class:`.sensitivity.OutputPerturbationEvent`, :class:`.pnsgd_event.PNSGDEvent`,
        :class:`.private_sco.SCOEvent` or :class:`.tuning_event.TuningEvent`.
    delta : float
        δ in (0, 1).
    **options
        The family accountant's keywords (module table), e.g. ``bound="gdp"`` for noisy GD.

    Returns
    -------
    PrivacyAccount
        Exactly the family accountant's.

    Raises
    ------
    TypeError
        For an event of another type (naming the supported ones) or an option its family does not take.
    ValueError
        For δ outside (0, 1), or as the family accountant raises it (e.g. a bound that does not apply).
    """
    family = _family(event, "account")
    check_delta(delta)
    return family.account(event, delta, **options)


def calibrate(event: Any, epsilon: float, delta: float, **options: Any) -> Any:
    """``event`` with its noise set to the smallest level whose certificate meets (ε, δ).

    The noise field is the family's (module table: ``sigma``, PNSGD's ``sigma`` or ``scale``, private
    selection's ``base_mu``); its value on the way in is ignored.  The level is the family calibration's
    (one :func:`.calibration.smallest_noise` search, within the tolerance that function states), so
    ``account(calibrate(event, epsilon, delta), delta).epsilon <= epsilon``: never overshoots.

    Parameters
    ----------
    event : event record
        As for :func:`account`.
    epsilon : float
        The target ε, finite and > 0.
    delta : float
        The target δ, in (0, 1).
    **options
        The family calibration's keywords (module table), e.g. ``rtol``.

    Returns
    -------
    event record
        ``dataclasses.replace(event, <noise field>=level)``, of the same type.

    Raises
    ------
    TypeError
        For an event of another type (naming the supported ones) or an option its family does not take.
    ValueError
        For ε or δ outside their ranges, or as the family calibration raises it (e.g. no noise is needed).
    """
    family = _family(event, "calibrate")
    check_epsilon(epsilon)
    check_delta(delta)
    return dataclasses.replace(event, **family.noise(event, epsilon, delta, **options))
