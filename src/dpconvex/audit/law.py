"""Law checks: where a mechanism's output law is known exactly, compare the real trainer's
releases with it.

The statistic is the audit statistic (projection on the canary direction) on both neighbouring
data sets.  The empirical mean gap is z-tested against the exact gap and each side's sample
variance is χ²-tested against the exact variance; a trainer that adds less noise than its
certificate assumes shows a variance ratio below 1 and fails.  With |z| < 4.5 and χ² tails of
1e-6, a correct trainer fails with probability below 1e-5 over seeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from dpconvex.audit.harness import AuditTarget, resolve_target

__all__ = ["LawCheckResult", "run_law_check"]

Z_LIMIT = 4.5
CHI2_TAIL = 1e-6


@dataclass(frozen=True)
class LawCheckResult:
    """Empirical versus exact law of the audit statistic.

    Attributes
    ----------
    mechanism : str
        The target's name.
    runs : int
        Trainings per neighbour.
    expected_gap, observed_gap : float
        E[stat | D'] − E[stat | D], exact and observed.
    gap_z : float
        The z-score of the observed gap.
    expected_variance : float
        The exact variance of the statistic.
    variance_ratios : tuple of float
        Observed over exact variance, on D and on D'.
    variance_interval : tuple of float
        The chi-square acceptance interval of those ratios.
    passed : bool
        Whether the gap and both ratios are within their limits.
    """

    mechanism: str
    runs: int
    expected_gap: float
    observed_gap: float
    gap_z: float
    expected_variance: float
    variance_ratios: tuple[float, float]
    variance_interval: tuple[float, float]
    passed: bool

    def to_dict(self) -> dict:
        """Plain dictionary, for JSON output."""
        return asdict(self)


def run_law_check(target: str | AuditTarget, runs: int = 2000, *, seed: int = 0) -> LawCheckResult:
    """Run the real trainer ``runs`` times on each neighbour and test mean gap and variance.

    Parameters
    ----------
    target : str or AuditTarget
        A name from :data:`~dpconvex.audit.harness.AUDITS` or a target whose ``exact_law`` is known.
    runs : int, default=2000
        Trainings per neighbour (≥ 20).
    seed : int, default=0
        Seeds the trainings.

    Returns
    -------
    LawCheckResult
    """
    target = resolve_target(target)
    if target.exact_law is None:
        raise ValueError(f"the output law of {target.name!r} is not known in closed form.")
    if runs < 20:
        raise ValueError(f"runs must be >= 20; got {runs!r}.")
    pair = target.make_pair()
    seeds = np.random.SeedSequence([seed, 1]).generate_state(2 * runs)
    samples = np.array([
        [target.release(X, y, int(seeds[2 * i + side])) @ pair.direction for i in range(runs)]
        for side, (X, y) in enumerate([(pair.X, pair.y), (pair.X_prime, pair.y_prime)])
    ])
    gap, variance = target.exact_law(target)
    observed = float(samples[1].mean() - samples[0].mean())
    z = (observed - gap) / np.sqrt(2.0 * variance / runs)
    ratios = tuple(float(v) for v in samples.var(axis=1, ddof=1) / variance)
    interval = (
        float(stats.chi2.ppf(CHI2_TAIL, runs - 1) / (runs - 1)),
        float(stats.chi2.isf(CHI2_TAIL, runs - 1) / (runs - 1)),
    )
    passed = abs(z) < Z_LIMIT and all(interval[0] < r < interval[1] for r in ratios)
    return LawCheckResult(target.name, runs, gap, observed, float(z), variance, ratios, interval, passed)
