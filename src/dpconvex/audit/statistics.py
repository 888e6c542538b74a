"""Confidence bounds that turn a distinguishing test's error counts into a lower bound on ε.

An (ε, δ)-DP mechanism forces every test of H0: "trained on D" vs H1: "trained on D'" to satisfy
``FPR + e^ε·FNR ≥ 1 − δ`` and ``FNR + e^ε·FPR ≥ 1 − δ`` (Kairouz, Oh, Viswanath 2015,
arXiv:1311.0776, Thm 2.1).  With Clopper–Pearson upper confidence limits on the two error rates,
``ε ≥ log((1 − δ − FNR_up)/FPR_up)`` (and symmetrically) holds with the stated confidence
(Jagielski, Ullman, Oprea 2020, arXiv:2006.07709, §4; Nasr et al. 2021, arXiv:2101.04535).

A mechanism that is (ε_j, δ_j)-DP for every point of its privacy profile must satisfy the
inequality at every j for the *same* test; one pair of confidence limits covers all j at once, so
checking the whole profile costs no confidence.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

__all__ = ["clopper_pearson_upper", "epsilon_lower_bound", "profile_margins"]


def _scalar_or_array(value: NDArray[np.float64]) -> float | NDArray[np.float64]:
    return float(value) if value.ndim == 0 else value


def clopper_pearson_upper(errors: ArrayLike, trials: ArrayLike, alpha: float) -> float | NDArray[np.float64]:
    """One-sided (1 − alpha) Clopper–Pearson upper limit for a binomial proportion (vectorised).

    Parameters
    ----------
    errors, trials : int or array of int
        Observed errors out of ``trials`` (broadcast together).
    alpha : float
        1 − confidence.

    Returns
    -------
    float or ndarray
        The upper limit (1 where every trial was an error).
    """
    errors, trials = np.broadcast_arrays(np.asarray(errors), np.asarray(trials))
    if np.any(trials <= 0):
        raise ValueError(f"trials must be >= 1; got {trials!r}.")
    if np.any((errors < 0) | (errors > trials)):
        raise ValueError(f"errors must lie in [0, trials]; got {errors!r}.")
    with np.errstate(invalid="ignore"):
        limit = stats.beta.ppf(1.0 - alpha, errors + 1, np.maximum(trials - errors, 1))
    return _scalar_or_array(np.where(errors == trials, 1.0, limit).astype(float))


def _smallest_epsilons(fpr: NDArray, fnr: NDArray, delta: NDArray) -> NDArray[np.float64]:
    """Smallest ε (possibly negative; −∞ if none) for which the rates satisfy both inequalities at δ.

    ``max(log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR))``; upper confidence limits are never 0.
    """
    best = np.full(np.broadcast_shapes(fpr.shape, fnr.shape, delta.shape), -np.inf)
    for a, b in ((fnr, fpr), (fpr, fnr)):
        slack = 1.0 - delta - a
        with np.errstate(divide="ignore", invalid="ignore"):
            best = np.maximum(best, np.where(slack > 0.0, np.log(slack / b), -np.inf))
    return best


def _upper_limits(false_positives: ArrayLike, negatives: int, false_negatives: ArrayLike, positives: int,
                  alpha: float) -> tuple[NDArray, NDArray]:
    """Clopper–Pearson limits of both error rates, each at level alpha/2 (simultaneous 1 − alpha)."""
    return (np.asarray(clopper_pearson_upper(false_positives, negatives, alpha / 2.0)),
            np.asarray(clopper_pearson_upper(false_negatives, positives, alpha / 2.0)))


def epsilon_lower_bound(
    false_positives: ArrayLike, negatives: int, false_negatives: ArrayLike, positives: int, delta: ArrayLike,
    alpha: float,
) -> float | NDArray[np.float64]:
    """ε that any (ε, δ)-DP mechanism must exceed, with confidence ≥ 1 − alpha, given the counts.

    Each error rate gets a one-sided limit at level alpha/2 (union bound).  Returns 0 when the
    counts are compatible with ε = 0.  Vectorised: the counts and ``delta`` broadcast together.

    Parameters
    ----------
    false_positives, false_negatives : int or array of int
        Error counts of one or several tests.
    negatives, positives : int
        Runs on D and on D'.
    delta : float or array
        δ of the claim.
    alpha : float
        1 − confidence.

    Returns
    -------
    float or ndarray
        The lower bound on ε (≥ 0).
    """
    fpr, fnr = _upper_limits(false_positives, negatives, false_negatives, positives, alpha)
    return _scalar_or_array(np.maximum(_smallest_epsilons(fpr, fnr, np.asarray(delta, dtype=float)), 0.0))


def profile_margins(
    false_positives: ArrayLike, negatives: int, false_negatives: ArrayLike, positives: int, deltas: ArrayLike,
    epsilons: ArrayLike, alpha: float,
) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """How far the counts push ε above a claimed privacy profile {(ε_j, δ_j)}, and where.

    For each pair of counts (a vector of tests), ``max_j (ε_j^low − ε_j)`` with ε_j^low the
    smallest ε compatible with the rates' upper limits at δ_j (not clipped at 0), and the j that
    attains it.  A positive margin means some inequality ``FPR + e^{ε_j}·FNR ≥ 1 − δ_j`` (or its
    mirror) fails for the upper limits: with confidence ≥ 1 − alpha the mechanism is not
    (ε_j, δ_j)-DP, because the same two limits serve every j.

    Parameters
    ----------
    false_positives, false_negatives : int or 1-d array of int
        Error counts of one or several tests.
    negatives, positives : int
        Runs on D and on D'.
    deltas, epsilons : 1-d array
        The claimed profile (ε_j may be ``inf``: no constraint).
    alpha : float
        1 − confidence of the two limits together.

    Returns
    -------
    margins : ndarray
        ``max_j (ε_j^low − ε_j)`` per test.
    where : ndarray of int
        The j attaining it.
    """
    fpr, fnr = _upper_limits(false_positives, negatives, false_negatives, positives, alpha)
    deltas, epsilons = np.asarray(deltas, dtype=float), np.asarray(epsilons, dtype=float)
    excess = _smallest_epsilons(np.atleast_1d(fpr)[:, None], np.atleast_1d(fnr)[:, None], deltas[None, :]) - epsilons
    where = np.argmax(excess, axis=1)
    return excess[np.arange(excess.shape[0]), where], where
