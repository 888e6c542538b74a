"""Confidence bounds that turn a distinguishing test's error counts into a lower bound on ε.

An (ε, δ)-DP mechanism forces every test of H0: "trained on D" vs H1: "trained on D'" to satisfy
``FPR + e^ε·FNR ≥ 1 − δ`` and ``FNR + e^ε·FPR ≥ 1 − δ`` (Kairouz, Oh, Viswanath 2015,
arXiv:1311.0776, Thm 2.1).  With Clopper–Pearson upper confidence limits on the two error rates,
``ε ≥ log((1 − δ − FNR_up)/FPR_up)`` (and symmetrically) holds with the stated confidence
(Jagielski, Ullman, Oprea 2020, arXiv:2006.07709, §4; Nasr et al. 2021, arXiv:2101.04535).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["clopper_pearson_upper", "epsilon_lower_bound"]


def clopper_pearson_upper(errors: int, trials: int, alpha: float) -> float:
    """One-sided (1 − alpha) Clopper–Pearson upper limit for a binomial proportion."""
    if trials <= 0:
        raise ValueError(f"trials must be >= 1; got {trials!r}.")
    if not 0 <= errors <= trials:
        raise ValueError(f"errors must lie in [0, trials]; got {errors!r}.")
    if errors == trials:
        return 1.0
    return float(stats.beta.ppf(1.0 - alpha, errors + 1, trials - errors))


def epsilon_lower_bound(
    false_positives: int, negatives: int, false_negatives: int, positives: int, delta: float, alpha: float
) -> float:
    """ε that any (ε, δ)-DP mechanism must exceed, with confidence ≥ 1 − alpha, given the counts.

    Each error rate gets a one-sided limit at level alpha/2 (union bound).  Returns 0 when the
    counts are compatible with ε = 0.
    """
    fpr = clopper_pearson_upper(false_positives, negatives, alpha / 2.0)
    fnr = clopper_pearson_upper(false_negatives, positives, alpha / 2.0)
    candidates = [0.0]
    for a, b in ((fnr, fpr), (fpr, fnr)):
        if 1.0 - delta - a > 0.0 and b > 0.0:
            candidates.append(float(np.log((1.0 - delta - a) / b)))
    return max(candidates)
