"""Empirical privacy audits: run the real trainer on a worst-case neighbouring pair many times and
lower-bound ε from how well a threshold test tells the two apart.

A lower bound above the certificate's ε means the certificate is wrong (or the trainer adds less
noise than its certificate assumes): a failed audit.  The bound holds with confidence
``1 − alpha`` over the trainer's randomness, so a correct mechanism fails with probability at
most ``alpha`` (default 1e-3) over seeds.

Procedure (Jagielski, Ullman, Oprea 2020, arXiv:2006.07709; Nasr et al. 2021, arXiv:2101.04535):
``runs`` releases on each data set; the statistic is the projection of the released parameters
on the canary direction; the threshold and side are chosen on the first half of the runs and the
Clopper–Pearson bound (:mod:`.statistics`) is computed on the second half only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from ..certificate import PrivacyCertificate
from ..mechanisms import TrainingResult
from .statistics import epsilon_lower_bound

__all__ = ["NeighbourPair", "AuditTarget", "AuditResult", "AUDITS", "register", "run_audit"]


@dataclass(frozen=True)
class NeighbourPair:
    """Two data sets differing in one record (replace-one), and the direction the test projects on."""

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    X_prime: NDArray[np.float64]
    y_prime: NDArray[np.float64]
    direction: NDArray[np.float64]


@dataclass(frozen=True)
class AuditTarget:
    """A mechanism registered for auditing: its worst-case pair and how to run its real trainer.

    ``mechanism`` is the key of :data:`dpconvex.mechanisms.MECHANISMS` the target exercises.
    ``exact_law``, where the output law is known in closed form, returns the expected gap
    E[stat | D'] − E[stat | D] of the audit statistic and its variance (equal on both data sets).
    """

    name: str
    mechanism: str
    description: str
    make_pair: Callable[[], NeighbourPair]
    train: Callable[[NDArray, NDArray, int], TrainingResult]
    exact_law: Callable[[], tuple[float, float]] | None = None


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit (``passed`` iff ``audit_epsilon_lower <= certified_epsilon``)."""

    mechanism: str
    runs: int
    delta: float
    certified_epsilon: float
    audit_epsilon_lower: float
    ratio: float
    confidence: float
    bound: str
    passed: bool

    def to_dict(self) -> dict:
        """Plain dictionary, for JSON output."""
        return asdict(self)


#: Every mechanism must be registered here (see the README's contributor notes).
AUDITS: dict[str, AuditTarget] = {}


def register(target: AuditTarget) -> AuditTarget:
    """Add ``target`` to :data:`AUDITS` (names are unique)."""
    if target.name in AUDITS:
        raise ValueError(f"an audit named {target.name!r} is already registered.")
    AUDITS[target.name] = target
    return target


def _best_threshold(null: NDArray, alternative: NDArray, delta: float, alpha: float) -> tuple[float, int]:
    """Threshold and side (+1: "above ⇒ D'", −1: "below ⇒ D'") maximising the bound on these runs."""
    candidates = np.quantile(np.concatenate([null, alternative]), np.linspace(0.001, 0.999, 400))
    best = (-1.0, 0.0, 1)
    for side in (1, -1):
        for t in candidates:
            fp = int(np.count_nonzero(side * null > side * t))
            fn = int(np.count_nonzero(side * alternative <= side * t))
            value = epsilon_lower_bound(fp, null.size, fn, alternative.size, delta, alpha)
            if value > best[0]:
                best = (value, float(t), side)
    return best[1], best[2]


def run_audit(
    target: str | AuditTarget,
    runs: int = 2000,
    *,
    alpha: float = 1e-3,
    seed: int = 0,
    progress: bool = False,
) -> AuditResult:
    """Audit one mechanism with ``runs`` trainings on each of the two neighbouring data sets.

    Parameters
    ----------
    target : str or AuditTarget
        A name from :data:`AUDITS` or a target object.
    runs : int
        Trainings per data set (≥ 20); half choose the test, half evaluate it.
    alpha : float
        1 − confidence of the lower bound.
    seed : int
        Seeds of the trainings (audits are experiments: reproducible by design).
    """
    if isinstance(target, str):
        if target not in AUDITS:
            raise ValueError(f"mechanism must be one of {sorted(AUDITS)}; got {target!r}.")
        target = AUDITS[target]
    if runs < 20:
        raise ValueError(f"runs must be >= 20; got {runs!r}.")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    pair = target.make_pair()
    seeds = np.random.SeedSequence(seed).generate_state(2 * runs)
    statistics = np.empty((2, runs))
    certificates: list[PrivacyCertificate] = []
    jobs = [(side, i) for i in range(runs) for side in (0, 1)]
    for side, i in tqdm(jobs, desc=f"audit {target.name}", disable=not progress):
        X, y = (pair.X, pair.y) if side == 0 else (pair.X_prime, pair.y_prime)
        result = target.train(X, y, int(seeds[2 * i + side]))
        statistics[side, i] = float(result.coef @ pair.direction)
        if i == 0:
            certificates.append(result.certificate)
    certified = max(c.epsilon for c in certificates)
    delta = max(c.delta for c in certificates)
    half = runs // 2
    threshold, side = _best_threshold(statistics[0, :half], statistics[1, :half], delta, alpha)
    null, alternative = statistics[0, half:], statistics[1, half:]
    fp = int(np.count_nonzero(side * null > side * threshold))
    fn = int(np.count_nonzero(side * alternative <= side * threshold))
    lower = epsilon_lower_bound(fp, null.size, fn, alternative.size, delta, alpha)
    return AuditResult(
        mechanism=target.name,
        runs=runs,
        delta=delta,
        certified_epsilon=certified,
        audit_epsilon_lower=lower,
        ratio=lower / certified if certified > 0 else float("inf"),
        confidence=1.0 - alpha,
        bound=certificates[0].bound,
        passed=lower <= certified,
    )
