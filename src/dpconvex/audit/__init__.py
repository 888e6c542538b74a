"""Privacy validation harness: empirical audits of every registered mechanism.

``run_audit(name, runs)`` trains the real mechanism on a worst-case pair of neighbouring data sets
and returns a Clopper–Pearson lower bound on ε to compare with the certificate.  Every mechanism
must be registered in :data:`AUDITS` (see :mod:`.targets`, :mod:`.targets_pnsgd`, :mod:`.targets_sco`).
"""

from . import targets, targets_noisy_sgd, targets_pnsgd, targets_sco  # noqa: F401  (registers the targets)
from .harness import AUDITS, AuditResult, AuditTarget, NeighbourPair, register, run_audit
from .law import LawCheckResult, run_law_check
from .statistics import clopper_pearson_upper, epsilon_lower_bound

__all__ = [
    "AUDITS",
    "AuditResult",
    "AuditTarget",
    "NeighbourPair",
    "register",
    "run_audit",
    "LawCheckResult",
    "run_law_check",
    "clopper_pearson_upper",
    "epsilon_lower_bound",
]
