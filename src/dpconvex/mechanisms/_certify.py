"""The certificate of a release: the accountant's statement, the problem's declarations, then the run's own numbers."""

from __future__ import annotations

from typing import Any

from dpconvex.accounting.best_of import PrivacyAccount
from dpconvex.mechanisms.problem import Problem
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["TUNING_CONDITION", "certify"]

#: The condition every mechanism's certificate states: its ε is that of one fit, so choosing ε, λ or any other
#: hyperparameter by looking at the private data (e.g. ``GridSearchCV`` over the estimator) is not covered.
TUNING_CONDITION = (
    "hyperparameters (epsilon, delta, lambda, the method and its options) chosen without looking at the private "
    "data: tuning them on it (e.g. GridSearchCV over a private estimator) is not covered: epsilon counts this one "
    # the old import path, kept so that certificates stay bit for bit what they were (it still imports)
    "fit; tune lambda with the CV estimators of dpconvex.model_selection (PrivateLogisticRegressionCV, "
    "PrivateHuberSVCCV, PrivateRidgeCV), whose certificate covers the selection"
)


def certify(mechanism: str, privacy: PrivacyAccount, problem: Problem, assumptions: dict[str, Any], *,
            sigma: float, iterations: int, **details: Any) -> PrivacyCertificate:
    """The :class:`~dpconvex.privacy.certificate.PrivacyCertificate` of one run.

    Parameters
    ----------
    mechanism : str
        The trainer's name.
    privacy : PrivacyAccount
        The accountant's statement: ε, δ, the bound, its theorem and conditions, the RDP order,
        the conversion and every candidate bound's ε.
    problem : Problem
        The problem trained; its :meth:`~dpconvex.mechanisms.problem.Problem.declared_assumptions` open the
        certificate's assumptions, and its :meth:`~dpconvex.mechanisms.problem.Problem.large_delta` (a target
        δ ≥ 1/n permits releasing a record outright) opens the notes.
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
        Its conditions are the accountant's, then :data:`TUNING_CONDITION`; ε is the accountant's.
    """
    caveat = problem.large_delta()
    notes = (*(() if caveat is None else (caveat,)), *details.pop("notes", ()))
    return PrivacyCertificate(
        mechanism=mechanism,
        epsilon=privacy.epsilon,
        delta=privacy.delta,
        bound=privacy.bound,
        theorem=privacy.theorem,
        conditions=(*privacy.assumptions, TUNING_CONDITION),
        assumptions={**problem.declared_assumptions(), **assumptions},
        order=privacy.order,
        conversion=privacy.conversion,
        sigma=sigma,
        iterations=iterations,
        candidates=privacy.candidates,
        notes=notes,
        **details,
    )
