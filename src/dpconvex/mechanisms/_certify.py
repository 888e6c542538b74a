"""The certificate of a release: the accountant's statement, the problem's declarations, then the run's own numbers."""

from __future__ import annotations

from typing import Any

from ..accounting.best_of import PrivacyAccount
from ..certificate import PrivacyCertificate
from ..problem import Problem

__all__ = ["certify"]


def certify(mechanism: str, privacy: PrivacyAccount, problem: Problem, assumptions: dict[str, Any], *,
            sigma: float, iterations: int, **details: Any) -> PrivacyCertificate:
    """The :class:`~dpconvex.certificate.PrivacyCertificate` of one run.

    Parameters
    ----------
    mechanism : str
        The trainer's name.
    privacy : PrivacyAccount
        The accountant's statement: ε, δ, the bound, its theorem and conditions, the RDP order,
        the conversion and every candidate bound's ε.
    problem : Problem
        The problem trained; its :meth:`~dpconvex.problem.Problem.declared_assumptions` open the
        certificate's assumptions.
    assumptions : dict
        The mechanism's own numbers (constants, step size, schedule, what was released, ...).
    sigma : float
        The noise parameter, in the mechanism's convention.
    iterations : int
        Number of updates.
    **details
        The certificate's optional fields: ``composition_epsilon``, ``notes``, ``record_profile``.

    Returns
    -------
    PrivacyCertificate
    """
    return PrivacyCertificate(
        mechanism=mechanism,
        epsilon=privacy.epsilon,
        delta=privacy.delta,
        bound=privacy.bound,
        theorem=privacy.theorem,
        conditions=privacy.assumptions,
        assumptions={**problem.declared_assumptions(), **assumptions},
        order=privacy.order,
        conversion=privacy.conversion,
        sigma=sigma,
        iterations=iterations,
        candidates=privacy.candidates,
        **details,
    )
