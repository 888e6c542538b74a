"""Empirical privacy audits: run the real trainer on a worst-case neighbouring pair many times and
test the certificate with threshold tests on the releases.

A failed audit means the certificate is wrong (or the trainer adds less noise than its certificate
assumes).  The verdict holds with confidence ``1 − alpha`` over the trainer's randomness, so a
correct mechanism fails with probability at most ``alpha`` (default 1e-3) over seeds.

Procedure (Jagielski, Ullman, Oprea 2020, arXiv:2006.07709; Nasr et al. 2021, arXiv:2101.04535):
``runs`` releases on each data set; the statistic is the projection of the released parameters on
the target's direction.  Two tests share ``alpha``:

* the **point test**: a threshold chosen on the first half of the runs, and the Clopper–Pearson
  lower bound on ε at the certificate's δ from the second half (:mod:`.statistics`);
* the **profile test**: the certificate read at every δ of a grid (:func:`privacy_profile`) is a
  privacy profile {(ε_j, δ_j)}, and an (ε_j, δ_j)-DP mechanism forces every test to satisfy
  FPR + e^{ε_j}·FNR ≥ 1 − δ_j and its mirror (Kairouz, Oh, Viswanath 2015, arXiv:1311.0776,
  Thm 2.1).  A threshold chosen on the first fifth of the runs is evaluated on the rest; one
  pair of upper confidence limits covers every j.  At moderate rates (ε_j near 0) this is the
  trade-off-curve test, far more powerful than the point test: a Gaussian release certified at
  μ-GDP and trained with half the noise (2μ) fails it with 600 runs, while the point test's
  expected lower bound is then still below ε.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray
from tqdm.auto import tqdm

from dpconvex.audit.statistics import epsilon_lower_bound, profile_margins
from dpconvex.mechanisms import TrainingResult

__all__ = ["NeighbourPair", "AuditTarget", "AuditResult", "AUDITS", "PROFILE_DELTAS", "register", "noise_mutant",
           "privacy_profile", "resolve_target", "run_audit"]


#: δ grid of the privacy-profile test (the target's own δ is added): log-spaced for the tails,
#: linear where most of the power is (ε near 0, rates of 0.1–0.5).  Each point gives a tangent line
#: FPR + e^{ε(δ)}·FNR = 1 − δ of the certified trade-off curve.
PROFILE_DELTAS: tuple[float, ...] = tuple(float(d) for d in np.concatenate(
    [np.geomspace(1e-6, 0.05, 14), np.linspace(0.06, 0.9, 15)]))

#: Bisection steps locating the certificate's total-variation bound min{δ : ε(δ) = 0}.
TV_BISECTIONS = 10


@dataclass(frozen=True)
class NeighbourPair:
    """Two data sets differing in one record (replace-one), and the direction the test projects on.

    Attributes
    ----------
    X, y : ndarray
        The first data set D.
    X_prime, y_prime : ndarray
        Its neighbour D'.
    direction : ndarray
        The vector the audit statistic projects a release on.
    """

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    X_prime: NDArray[np.float64]
    y_prime: NDArray[np.float64]
    direction: NDArray[np.float64]


@dataclass(frozen=True)
class AuditTarget:
    """A mechanism registered for auditing: its worst-case pair and how to run its real trainer.

    ``mechanism`` is the key of :data:`dpconvex.mechanisms.MECHANISMS` the target exercises.
    ``sigma()`` is the calibrated noise parameter in the mechanism's own convention (every
    mechanism's noise standard deviation is linear in it) and ``run(X, y, seed, sigma, delta)``
    calls the real trainer with it; the release must not depend on ``delta`` (checked by
    :func:`privacy_profile`).  ``noise_factor`` scales the noise of the releases but never the
    certificate: 1 for an honest target, 0.5 for the halved-noise mutant (:func:`noise_mutant`).
    ``exact_law``, where the output law is known in closed form, returns for a target the expected
    gap E[stat | D'] − E[stat | D] of the audit statistic and its variance (equal on both data
    sets) under the certified noise ``sigma()``.  ``profile_deltas`` is the δ grid of the
    privacy-profile test (:func:`privacy_profile`).

    Attributes
    ----------
    name : str
        The audit's name (a key of :data:`AUDITS` once registered).
    mechanism : str
        The key of :data:`dpconvex.mechanisms.MECHANISMS` exercised.
    description : str
        What the target runs, in a sentence.
    make_pair : callable
        ``make_pair()``: the worst-case :class:`NeighbourPair`.
    sigma : callable
        ``sigma()``: the calibrated noise parameter.
    run : callable
        ``run(X, y, seed, sigma, delta)``: the real trainer's result.
    delta : float
        δ of the certificate audited.
    exact_law : callable or None
        ``exact_law(target)``: the expected gap and variance of the statistic, when known.
    noise_factor : float
        Scale of the releases' noise (1: honest).
    profile_deltas : tuple of float
        The δ grid of the privacy-profile test.
    """

    name: str
    mechanism: str
    description: str
    make_pair: Callable[[], NeighbourPair]
    sigma: Callable[[], float]
    run: Callable[[NDArray, NDArray, int, float, float], TrainingResult]
    delta: float
    exact_law: Callable[[AuditTarget], tuple[float, float]] | None = None
    noise_factor: float = 1.0
    profile_deltas: tuple[float, ...] = PROFILE_DELTAS

    def release(self, X: NDArray, y: NDArray, seed: int) -> NDArray[np.float64]:
        """Parameters released by one run (noise ``noise_factor · sigma()``)."""
        return self.run(X, y, seed, self.noise_factor * self.sigma(), self.delta).coef


def noise_mutant(target: AuditTarget, factor: float = 0.5) -> AuditTarget:
    """``target`` with its releases trained at ``factor`` times the noise its certificate assumes.

    The mutant's certificate is the honest one (computed with σ) while the output is trained with
    ``factor·σ``: a trainer adding less noise than it claims.  An audit that cannot fail this
    mutant for ``factor = 0.5`` has no power against that bug.

    Parameters
    ----------
    target : AuditTarget
        The honest target.
    factor : float, default=0.5
        The noise's scale, in (0, 1).

    Returns
    -------
    AuditTarget
        The mutant (its name suffixed ``[noise x<factor>]``).
    """
    if not 0.0 < factor < 1.0:
        raise ValueError(f"factor must lie in (0, 1); got {factor!r}.")
    return dataclasses.replace(target, name=f"{target.name}[noise x{factor:g}]",
                               noise_factor=target.noise_factor * factor)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of one audit.

    ``audit_epsilon_lower`` is the lower bound on ε at the certificate's δ (confidence
    1 − alpha/2); ``profile_margin`` is the largest excess of the evaluated test over the certified
    privacy profile (:func:`.statistics.profile_margins`, confidence 1 − alpha/2), attained at
    ``profile_delta``; ``profile_rates`` are that test's observed (FPR, FNR).  ``passed`` iff
    ``audit_epsilon_lower <= certified_epsilon`` and ``profile_margin <= 0``: a correct mechanism
    fails with probability at most alpha (``confidence`` = 1 − alpha).

    Attributes
    ----------
    mechanism : str
        The audited target's name.
    runs : int
        Trainings per data set.
    delta, certified_epsilon : float
        The certificate's δ and ε.
    audit_epsilon_lower : float
        The lower bound on ε.
    ratio : float
        ``audit_epsilon_lower / certified_epsilon``.
    profile_margin, profile_delta : float
        The profile test's largest excess and the δ attaining it.
    profile_rates : tuple of float
        That test's observed (FPR, FNR).
    confidence : float
        1 − alpha.
    bound : str
        The bound of the certificate at δ.
    passed : bool
        The verdict.
    """

    mechanism: str
    runs: int
    delta: float
    certified_epsilon: float
    audit_epsilon_lower: float
    ratio: float
    profile_margin: float
    profile_delta: float
    profile_rates: tuple[float, float]
    confidence: float
    bound: str
    passed: bool

    def to_dict(self) -> dict:
        """Plain dictionary, for JSON output."""
        return asdict(self)


#: Every mechanism must be registered here (see docs/contributing.md).
AUDITS: dict[str, AuditTarget] = {}


def register(target: AuditTarget) -> AuditTarget:
    """Add ``target`` to :data:`AUDITS` (names are unique).

    Parameters
    ----------
    target : AuditTarget
        The target; a ``ValueError`` if its name is taken.

    Returns
    -------
    AuditTarget
        ``target`` itself (so that ``register`` can wrap a definition).
    """
    if target.name in AUDITS:
        raise ValueError(f"an audit named {target.name!r} is already registered.")
    AUDITS[target.name] = target
    return target


def resolve_target(target: str | AuditTarget) -> AuditTarget:
    """``target`` itself, or the registered target of that name (``ValueError`` naming the registered ones).

    Parameters
    ----------
    target : str or AuditTarget
        A name from :data:`AUDITS`, or a target.

    Returns
    -------
    AuditTarget
    """
    if isinstance(target, str):
        if target not in AUDITS:
            raise ValueError(f"mechanism must be one of {sorted(AUDITS)}; got {target!r}.")
        return AUDITS[target]
    return target


def privacy_profile(target: AuditTarget) -> tuple[NDArray, NDArray, str]:
    """The certificate's ε at every δ of ``target.profile_deltas`` (and the target's δ), with its bound.

    The trainer is called with the calibrated σ at each δ on both neighbours (the larger ε is
    kept).  Where the grid reaches ε = 0, the smallest such δ (the certificate's bound on the
    total-variation distance, whose line FPR + FNR ≥ 1 − δ is often the most powerful) is located
    by ``TV_BISECTIONS`` bisection steps in log δ.  The profile describes the released
    mechanism only if the release does not depend on ``delta``; that is checked here (same seed,
    every δ, identical parameters) and a ``ValueError`` is raised otherwise.

    Parameters
    ----------
    target : AuditTarget
        The target whose certificates are read.

    Returns
    -------
    deltas, epsilons : ndarray
        Sorted δ_j and the certified ε_j (``inf`` where the certificate gives no guarantee).
    bound : str
        The bound that gave ε at the target's own δ.
    """
    pair = target.make_pair()
    data = ((pair.X, pair.y), (pair.X_prime, pair.y_prime))
    reference = [target.run(X, y, 0, target.sigma(), target.delta).coef for X, y in data]
    bounds: dict[float, str] = {}

    def epsilon(delta: float) -> float:
        results = [target.run(X, y, 0, target.sigma(), delta) for X, y in data]
        if not all(np.array_equal(r.coef, ref) for r, ref in zip(results, reference)):
            raise ValueError(f"the release of {target.name!r} depends on delta; its privacy profile cannot be "
                             "read off certificates at other deltas.")
        bounds[delta] = results[0].certificate.bound
        return max(r.certificate.epsilon for r in results)

    profile = {float(d): epsilon(float(d)) for d in np.append(target.profile_deltas, target.delta)}
    zeros = [d for d, e in profile.items() if e == 0.0]
    if zeros and min(zeros) > min(profile):
        lo, hi = max(d for d in profile if d < min(zeros)), min(zeros)
        for _ in range(TV_BISECTIONS):
            mid = float(np.sqrt(lo * hi))
            profile[mid] = epsilon(mid)
            lo, hi = (lo, mid) if profile[mid] == 0.0 else (mid, hi)
    deltas = np.array(sorted(profile))
    return deltas, np.array([profile[d] for d in deltas]), bounds[target.delta]


def _best_test(null: NDArray, alternative: NDArray, score: Callable[[NDArray, NDArray], NDArray]) -> tuple[float, int]:
    """Threshold and side (+1: "above ⇒ D'", −1: "below ⇒ D'") maximising ``score(fp, fn)`` on these runs."""
    candidates = np.quantile(np.concatenate([null, alternative]), np.linspace(0.001, 0.999, 400))
    best = (-np.inf, 0.0, 1)
    for side in (1, -1):
        fp, fn = _errors(null, alternative, candidates, side)
        values = score(fp, fn)
        k = int(np.argmax(values))
        if values[k] > best[0]:
            best = (float(values[k]), float(candidates[k]), side)
    return best[1], best[2]


def _errors(null: NDArray, alternative: NDArray, thresholds: NDArray, side: int) -> tuple[NDArray, NDArray]:
    """False positives (D called D') and false negatives (D' called D) of the tests at ``thresholds``."""
    thresholds = np.atleast_1d(thresholds)
    fp = np.count_nonzero(side * null[None, :] > side * thresholds[:, None], axis=1)
    fn = np.count_nonzero(side * alternative[None, :] <= side * thresholds[:, None], axis=1)
    return fp, fn


def run_audit(
    target: str | AuditTarget,
    runs: int = 2000,
    *,
    alpha: float = 1e-3,
    seed: int = 0,
    progress: bool = False,
) -> AuditResult:
    """Audit one mechanism with ``runs`` trainings on each of the two neighbouring data sets.

    The point test and the profile test (module docstring) get alpha/2 each, so a correct
    mechanism fails with probability at most alpha.

    Parameters
    ----------
    target : str or AuditTarget
        A name from :data:`AUDITS` or a target object (e.g. a :func:`noise_mutant`).
    runs : int
        Trainings per data set (≥ 20).  The point test chooses its threshold on the first half and
        evaluates it on the second; the profile test chooses on the first fifth.
    alpha : float
        1 − confidence of the verdict.
    seed : int
        Seeds of the trainings (audits are experiments: reproducible by design).
    progress : bool
        Show a progress bar.

    Returns
    -------
    AuditResult
        The verdict and the statistics behind it.
    """
    target = resolve_target(target)
    if runs < 20:
        raise ValueError(f"runs must be >= 20; got {runs!r}.")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}.")
    deltas, epsilons, bound = privacy_profile(target)
    certified = float(epsilons[np.searchsorted(deltas, target.delta)])
    pair = target.make_pair()
    seeds = np.random.SeedSequence(seed).generate_state(2 * runs)
    statistics = np.empty((2, runs))
    jobs = [(side, i) for i in range(runs) for side in (0, 1)]
    for side, i in tqdm(jobs, desc=f"audit {target.name}", disable=not progress):
        X, y = (pair.X, pair.y) if side == 0 else (pair.X_prime, pair.y_prime)
        statistics[side, i] = float(target.release(X, y, int(seeds[2 * i + side])) @ pair.direction)
    level = alpha / 2.0

    def point(fp: NDArray, fn: NDArray, m: int) -> NDArray:
        return np.atleast_1d(epsilon_lower_bound(fp, m, fn, m, target.delta, level))

    def profile(fp: NDArray, fn: NDArray, m: int) -> tuple[NDArray, NDArray]:
        return profile_margins(fp, m, fn, m, deltas, epsilons, level)

    # The point test needs tail events on both halves; the profile test's moderate rates are found
    # with a fifth of the runs, leaving the rest to measure them: for a Gaussian certified at μ and
    # released at 2μ (600 runs) the margin grows from 0.44 ± 0.24 (halves) to 0.64 ± 0.13.
    half, fifth = runs // 2, runs // 5
    threshold, side = _best_test(statistics[0, :half], statistics[1, :half], lambda fp, fn: point(fp, fn, half))
    lower = float(point(*_errors(statistics[0, half:], statistics[1, half:], threshold, side), runs - half)[0])
    threshold, side = _best_test(statistics[0, :fifth], statistics[1, :fifth], lambda fp, fn: profile(fp, fn, fifth)[0])
    fp, fn = _errors(statistics[0, fifth:], statistics[1, fifth:], threshold, side)
    margins, where = profile(fp, fn, runs - fifth)
    margin = float(margins[0])
    return AuditResult(
        mechanism=target.name,
        runs=runs,
        delta=target.delta,
        certified_epsilon=certified,
        audit_epsilon_lower=lower,
        ratio=lower / certified if certified > 0 else float("inf"),
        profile_margin=margin,
        profile_delta=float(deltas[where[0]]),
        profile_rates=(float(fp[0]) / (runs - fifth), float(fn[0]) / (runs - fifth)),
        confidence=1.0 - alpha,
        bound=bound,
        passed=lower <= certified and margin <= 0.0,
    )
