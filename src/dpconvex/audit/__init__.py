"""Privacy validation harness: empirical audits of every registered mechanism.

``run_audit(name, runs)`` trains the real mechanism on a worst-case pair of neighbouring data sets
and tests the certificate: a Clopper–Pearson lower bound on ε at its δ, and a test of its whole
privacy profile (:func:`privacy_profile`).  ``noise_mutant(target)`` is the same target with the
trainer adding half the noise its certificate assumes; every target's audit must fail it
(``tests/test_audit_mutations.py``).  Every mechanism must be registered in :data:`~dpconvex.audit.harness.AUDITS` (see
:mod:`.targets`, :mod:`.targets_noisy_sgd`, :mod:`.targets_bounded`, :mod:`.targets_pnsgd`,
:mod:`.targets_sco`, :mod:`.targets_auto`, :mod:`.targets_multiclass`, :mod:`.targets_selection`,
:mod:`.targets_discovery`).
"""

# Importing the target modules registers the targets (the auto ones last: they reuse the others' pairs).
# isort: off
from dpconvex.audit import (targets, targets_noisy_sgd, targets_bounded, targets_pnsgd, targets_sco,  # noqa: F401
               targets_auto, targets_regression, targets_multiclass, targets_selection, targets_discovery)
# isort: on
from dpconvex.audit.harness import (
               AUDITS,
               PROFILE_DELTAS,
               AuditResult,
               AuditTarget,
               NeighbourPair,
               noise_mutant,
               privacy_profile,
               register,
               run_audit,
)
from dpconvex.audit.law import LawCheckResult, run_law_check
from dpconvex.audit.statistics import clopper_pearson_upper, epsilon_lower_bound, profile_margins

__all__ = [
    "AUDITS",
    "AuditResult",
    "AuditTarget",
    "NeighbourPair",
    "PROFILE_DELTAS",
    "noise_mutant",
    "privacy_profile",
    "register",
    "run_audit",
    "LawCheckResult",
    "run_law_check",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
    "profile_margins",
]
