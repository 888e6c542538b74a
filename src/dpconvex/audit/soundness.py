"""Adversarial soundness search: noiseless runs of every mechanism against what its certificate assumes.

Every certificate of dpconvex rests on a deterministic claim about the trainer with its noise
switched off: how far apart the released parameters of two neighbouring data sets can be (the
trajectory sensitivity), or how large the one per-step shift is that the differing record causes.
The claim of each mechanism is stated *from the certificate's own numbers* by its oracle
(:mod:`dpconvex.audit.soundness_oracles`), and this module searches for neighbouring data sets
that break it:

* the real trainer runs with a :class:`~dpconvex.audit.noiseless.NoiselessGenerator`, which
  returns zero for every Gaussian and Laplace draw but draws batches, permutations and stopping
  times for real (and logs them, so the oracle knows which steps touched the differing record);
* both neighbours run with the same seed, so they share every data-independent draw;
* the data (rows in the ball of radius ``data_norm``, labels in their range, the replacement
  record) are optimised — random sampling, then Nelder–Mead from the best start — to maximise
  ``observed / assumed``.  A ratio above 1 means the certificate is smaller than the truth.

``sco_noisy_sgd`` has no trajectory oracle: its single-use bound assumes only that the differing
record's (sub)gradient moves the dual iterate by at most ηS_g, so the search maximises
sup over w ∈ W of ‖∇f(w; z) − ∇f(w; z')‖₂ against S_g directly.  The probed calls and their
settings are :mod:`dpconvex.audit.soundness_scenarios`' (:class:`Scenario`, :func:`scenarios`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from dpconvex.audit.noiseless import NoiselessGenerator
from dpconvex.audit.soundness_oracles import ORACLES
from dpconvex.audit.soundness_oracles import sgd_batches as _sgd_batches  # noqa: F401 (its former name)
from dpconvex.audit.soundness_scenarios import (  # noqa: F401 (re-exported: the search's settings)
    CONSTRAINT_FIELD_VALUES,
    DATA_NORM,
    DIMENSION,
    L2_VALUES,
    LABEL_BOUND,
    METHOD_OPTIONS,
    SIZES,
    SIZES_BY_METHOD,
    Scenario,
    example_constraints,
    scenarios,
)
from dpconvex.objectives import constraints as constraints_module
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["NoiselessGenerator", "Scenario", "SearchResult", "ORACLES", "scenarios", "search", "example_constraints"]

#: Distinct base records of a searched data set (plus the differing record and its replacement).
DISTINCT = 2


@dataclass(frozen=True)
class SearchResult:
    """Largest ``observed / assumed`` found for one scenario, with the pair of numbers that gave it
    (``None`` ratio: the trainer refused the scenario, with its message in ``refusal``).

    Attributes
    ----------
    scenario : str
        The scenario's label.
    mechanism : str or None
        The certificate's mechanism (None when refused).
    ratio : float or None
        The largest ``observed / assumed``.
    observed, assumed : float
        The distance between the two releases and the certificate's bound on it, at that ratio.
    refusal : str
        The trainer's message, when it refused.
    """

    scenario: str
    mechanism: str | None
    ratio: float | None
    observed: float = math.nan
    assumed: float = math.nan
    refusal: str = ""


def _records(params: NDArray, count: int, classification: bool) -> tuple[NDArray, NDArray]:
    """Map free parameters to ``count`` records: rows in the ball of radius DATA_NORM, labels in range."""
    raw = params.reshape(count, DIMENSION + 1)
    rows = raw[:, :DIMENSION]
    norms = np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    X = DATA_NORM * np.tanh(norms) * rows / norms
    y = np.where(raw[:, DIMENSION] >= 0, 1.0, -1.0) if classification else LABEL_BOUND * np.tanh(raw[:, DIMENSION])
    return X, y


def _pair(params: NDArray, n: int, record: int, classification: bool):
    """Neighbours of size n built from DISTINCT base records (interleaved) plus the differing record.

    Worst cases are data sets of few distinct points, and a large n with few distinct points keeps
    the search low-dimensional while making each record's per-step shift small, which is where a
    locally expansive map (e.g. a non-Euclidean projection) shows.
    """
    X_all, y_all = _records(params, DISTINCT + 2, classification)
    kinds = np.arange(n) % DISTINCT
    X, y = X_all[kinds], y_all[kinds]
    X[record], y[record] = X_all[DISTINCT], y_all[DISTINCT]
    X_prime, y_prime = X.copy(), y.copy()
    X_prime[record], y_prime[record] = X_all[DISTINCT + 1], y_all[DISTINCT + 1]
    return X, y, X_prime, y_prime


def _nelder_mead(objective: Callable[[NDArray], float], start: NDArray, budget: int) -> tuple[float, NDArray]:
    found = optimize.minimize(lambda p: -objective(p), start, method="Nelder-Mead",
                              options={"maxfev": budget, "xatol": 1e-8, "fatol": 1e-12})
    return -float(found.fun), found.x


def _maximise(objective: Callable[[NDArray], float], dimension: int, rng: np.random.Generator, samples: int,
              polish: int, structure: tuple[int, Callable[[NDArray], NDArray]] | None = None) -> float:
    """Largest value of ``objective`` found by sampling and Nelder–Mead (normal starts, random scales).

    With ``structure = (k, embed)`` the search first runs in a k-dimensional family of structured
    worst-case candidates (``embed`` maps it into the full space: e.g. identical base records and a
    record against its opposite), from its two best random starts, then polishes the best point in
    the full space; otherwise it samples and polishes in the full space directly.
    """
    if structure is None:
        structure = (dimension, lambda p: p)
    size, embed = structure
    # Scales log-uniform in [0.1, 3]: the maps tanh(‖u‖)·u/‖u‖ then reach every norm in the data ball.
    starts = rng.normal(size=(samples, size)) * np.exp(rng.uniform(np.log(0.1), np.log(3.0), size=(samples, 1)))
    values = [objective(embed(start)) for start in starts]
    best, best_point = max(values), embed(starts[int(np.argmax(values))])
    for index in np.argsort(values)[::-1][:2]:
        value, point = _nelder_mead(lambda q: objective(embed(q)), starts[index], polish)
        if value > best:
            best, best_point = value, embed(point)
    if size < dimension:
        best = max(best, _nelder_mead(objective, best_point, polish)[0])
    return best


def _opposite_record(reduced: NDArray) -> NDArray:
    """(base record, differing record) → identical base records and a replacement that is the
    differing record's opposite with the same label (the classic worst case of replace-one)."""
    base, record = reduced[: DIMENSION + 1], reduced[DIMENSION + 1:]
    opposite = np.concatenate([-record[:DIMENSION], record[DIMENSION:]])
    return np.concatenate([np.tile(base, DISTINCT), record, opposite])


def _gradient_gap_search(scenario: Scenario, cert: PrivacyCertificate, rng: np.random.Generator,
                         samples: int, polish: int) -> tuple[float, float]:
    """sup over w ∈ W and records z, z' of ‖∇f(w; z) − ∇f(w; z')‖₂ against the certified S_g."""
    loss, constraint = scenario.loss, scenario.constraint
    radius = cert.assumptions["diameter"] / 2.0  # the certificate's own domain (also when constraint="auto")
    project = constraint.project if not isinstance(constraint, str) else constraints_module.L2Ball(radius).project

    def gap(params: NDArray) -> float:
        w = project(radius * 3.0 * np.tanh(params[:DIMENSION]))
        X, y = _records(params[DIMENSION:], 2, loss.classification)
        g = loss.per_example_gradients(w, X, y)
        return float(np.linalg.norm(g[0] - g[1]))

    observed = _maximise(gap, DIMENSION + 2 * (DIMENSION + 1), rng, samples, polish)
    return observed, float(cert.assumptions["gradient_sensitivity"])


def search(scenario: Scenario, *, sizes: tuple[int, ...] | None = None, samples: int = 16, polish: int = 80,
           seed: int = 0) -> SearchResult:
    """Largest ``observed / assumed`` over neighbouring data sets (noise off), or the trainer's refusal.

    Parameters
    ----------
    scenario : Scenario
        The trainer call to probe.
    sizes : tuple of int, optional
        Data set sizes to search (default: the method's).
    samples, polish : int
        Random starts and local refinement steps of the search.
    seed : int
        Seeds the search and the trainings.

    Returns
    -------
    SearchResult
    """
    rng = np.random.default_rng(seed)
    sizes = SIZES_BY_METHOD.get(scenario.method, SIZES) if sizes is None else sizes
    classification = scenario.loss.classification
    dimension = (DISTINCT + 2) * (DIMENSION + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            X, y, _, _ = _pair(rng.normal(size=dimension), sizes[0], 0, classification)
            probe, _ = scenario.train(X, y, seed)
        except ValueError as refusal:
            return SearchResult(scenario.label(), None, None, refusal=str(refusal))
        cert = probe.certificate
        if cert.mechanism not in ORACLES:
            raise KeyError(f"no soundness oracle for mechanism {cert.mechanism!r}: add one to ORACLES.")
        oracle = ORACLES[cert.mechanism]
        if oracle is None:
            observed, assumed = _gradient_gap_search(scenario, cert, rng, samples, polish)
            return SearchResult(scenario.label(), cert.mechanism, observed / assumed, observed, assumed)
        best = {"ratio": 0.0, "observed": math.nan, "assumed": math.nan}
        for n in sizes:
            for record in (0, n - 1):
                def ratio(params: NDArray, n: int = n, record: int = record) -> float:
                    X, y, X_prime, y_prime = _pair(params, n, record, classification)
                    first, log = scenario.train(X, y, seed)
                    second, _ = scenario.train(X_prime, y_prime, seed)
                    assumed = oracle(first.certificate, record, log)
                    observed = float(np.linalg.norm(first.coef - second.coef))
                    value = observed / assumed if assumed > 0 else (math.inf if observed > 1e-12 else 0.0)
                    if value > best["ratio"]:
                        best.update(ratio=value, observed=observed, assumed=assumed)
                    return value

                _maximise(ratio, dimension, rng, samples, polish, (2 * (DIMENSION + 1), _opposite_record))
    return SearchResult(scenario.label(), cert.mechanism, best["ratio"], best["observed"], best["assumed"])


def _search_one(arguments: tuple[Scenario, int, int, int]) -> SearchResult:
    scenario, samples, polish, seed = arguments
    return search(scenario, samples=samples, polish=polish, seed=seed)


def sweep(cover: str = "each", *, methods: tuple[str, ...] | None = None, samples: int = 16, polish: int = 80,
          seed: int = 0, workers: int = 1) -> list[SearchResult]:
    """:func:`search` over every scenario of :func:`scenarios` (``workers`` > 1: in parallel processes).

    Parameters
    ----------
    cover : {"each", "all"}
        As in :func:`scenarios`.
    methods : tuple of str, optional
        Restrict to these methods.
    samples, polish, seed : int
        As in :func:`search`.
    workers : int
        Processes to run the searches in.

    Returns
    -------
    list of SearchResult
    """
    jobs = [(scenario, samples, polish, seed) for scenario in scenarios(cover, methods)]
    if workers <= 1:
        return [_search_one(job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_search_one, jobs, chunksize=1))


def summary(results: list[SearchResult]) -> dict[str, dict[str, float | int]]:
    """Per mechanism: scenarios searched, largest ratio observed/certified, and refusals (by method).

    Parameters
    ----------
    results : list of SearchResult
        The searches' results.

    Returns
    -------
    dict
        Method → ``{"accepted": int, "refused": int, "largest_ratio": float}``.
    """
    table: dict[str, dict[str, float | int]] = {}
    for result in results:
        method = result.scenario.split(" | ")[0]
        row = table.setdefault(method, {"accepted": 0, "refused": 0, "largest_ratio": 0.0})
        if result.ratio is None:
            row["refused"] += 1
        else:
            row["accepted"] += 1
            row["largest_ratio"] = max(row["largest_ratio"], result.ratio)
    return table
