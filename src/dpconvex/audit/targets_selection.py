"""Audit target for private model selection (:mod:`dpconvex.private_selection`): a pair that changes which λ wins.

``selection`` runs the selection of :class:`~dpconvex.PrivateRidgeCV` on a fixed split — the
algorithm (:func:`~dpconvex.private_selection.best_of_random_runs`), the real noisy_gd trainer for
every candidate, the validation score with its noise (:data:`~dpconvex.private_selection.SCORINGS`)
and the certificate (:func:`~dpconvex.private_selection.selection_certificate`) — at ε = 3,
δ = 1e-3 as every other target (:data:`.targets.NOISY_GD_SETTING`).  The estimator draws its split
independently of the data; the guarantee holds for every split, so auditing one fixed split (the
canary in the training part) audits the mechanism conditionally on it.

Problem (d = 1).  Row 0 is the training part: the canary x = +1, replaced by x = −1, trained with the
loss ½(θ − x)² + (λ/2)θ² (minimiser x/(1 + λ)), whose noisy GD output law is Gaussian (Chourasia et
al. Thm 3's setting; the ``gdp`` bound of Bok et al. is exact for it).  Row 1 is the validation part:
x = 1 with target y = 1, scored by ``neg_mean_absolute_error`` of the prediction θ·x clipped to
[−1, 1] (sensitivity Δ = 2/1).  The grid is λ ∈ {0.01, 3}: θ* = ±0.99 or ±0.25.  On D the
weakly regularised candidate scores −0.01 against −0.75 and wins; on D′ it scores −1.99 against
−1.25 and the strongly regularised one wins — the canary changes which candidate wins, and the
winner's released θ carries its own Gaussian trace of the canary.  Each run is μ-GDP in both parts
(training σ_λ = σ·μ_λ(1) for the run's noise multiplier σ = 1/μ, score noise Δσ), K ~ Poisson(1).

Why these sizes.  The selection's certificate is Papernot & Steinke's RDP bound, loose against the
pair's true privacy, so an audit can only fail a halved-noise trainer if one run's own leakage is
large against the tuning overhead: one training record (the canary's shift is the whole gradient),
E[K] = 1 (the least overhead log E[K]/(α − 1) the theorem allows; K = 0, probability e^{−1},
releases the fixed output θ = 0).  A canary in the validation part only moves the selection, whose
leakage through the scores' noise (sd Δ/μ) is far below the certificate even with half the noise
(computed from the exact law of the winner: at most 0.27 apart in P[the weak λ wins], inside the
certified profile).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..accounting import hyperparameter_tuning as tuning
from ..losses import QuadraticDistanceLoss
from ..mechanisms import TrainingResult, noisy_gd
from ..mechanisms.noisy_gd import plan_noisy_gd
from ..private_selection import SCORINGS, best_of_random_runs, candidate_mu, selection_certificate
from .harness import AuditTarget, NeighbourPair, register
from .targets import NOISY_GD_SETTING

__all__ = ["SELECTION_SETTING", "selection_pair", "selection_release"]

#: The selection: grid of λ, E[K] (Poisson), the candidates' iterations (step: noisy_gd's 1/(2β), contraction
#: 1/2 at both λ, so 20 steps converge), the score.
SELECTION_SETTING = {"epsilon": NOISY_GD_SETTING["epsilon"], "grid": (0.01, 3.0), "expected_runs": 1.05,
                     "iterations": 20,
                     "scoring": "neg_mean_absolute_error", "label_bound": 1.0}
_LAW = tuning.TruncatedNegativeBinomial.with_mean(SELECTION_SETTING["expected_runs"], 1.0)  # geometric
_GRID = np.asarray(SELECTION_SETTING["grid"])


def selection_pair() -> NeighbourPair:
    """Row 0: the training canary x = +1 (replaced by −1); row 1: the validation record x = 1, y = 1."""
    X = np.array([[1.0], [1.0]])
    X_prime = np.array([[-1.0], [1.0]])
    y = np.array([0.0, 1.0])  # row 0's target is not read (the loss ½(θ − x)² has none)
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.ones(1))


def _candidate_options(value: float) -> dict:
    return dict(loss=QuadraticDistanceLoss(), l2_regularization=value, iterations=SELECTION_SETTING["iterations"])


@lru_cache(maxsize=None)
def _unit_sigma(value: float) -> float:
    """The candidate's σ for 1-GDP: its GDP μ is proportional to 1/σ, so μ(σ = 1)."""
    return candidate_mu(plan_noisy_gd(1, 1, delta=NOISY_GD_SETTING["delta"], sigma=1.0, **_candidate_options(value)))


def _base_mu(noise: float) -> float:
    """μ_Q of runs with noise multiplier ``noise``: max(scoring's 1/noise, every candidate's GDP μ)."""
    events = [plan_noisy_gd(1, 1, delta=NOISY_GD_SETTING["delta"], sigma=noise * _unit_sigma(float(v)),
                            **_candidate_options(float(v))) for v in _GRID]
    return max(1.0 / noise, *(candidate_mu(event) for event in events))


@lru_cache(maxsize=None)
def _sigma() -> float:
    """The noise multiplier 1/μ whose selection meets ε = 3 at δ = 1e-3."""
    mu = tuning.calibrate_base_mu(_LAW, SELECTION_SETTING["epsilon"], NOISY_GD_SETTING["delta"],
                                  event_of=lambda m: tuning.TuningEvent(_LAW, base_mu=_base_mu(1.0 / m)))
    return 1.0 / mu


def selection_release(X: np.ndarray, y: np.ndarray, seed: int, sigma: float, delta: float) -> TrainingResult:
    """The selection on the split (row 0 | row 1) with noise multiplier ``sigma``; θ = 0 when K = 0."""
    scoring, bound = SCORINGS[SELECTION_SETTING["scoring"]], SELECTION_SETTING["label_bound"]
    sensitivity = scoring.spread(bound) / 1.0  # one validation record

    def run(value: float, rng: np.random.Generator) -> tuple[TrainingResult, float]:
        result = noisy_gd(X[:1], y[:1], sigma=sigma * _unit_sigma(value), delta=delta,
                          random_state=int(rng.integers(2**63)), **_candidate_options(value))
        score = float(np.mean(scoring.term(X[1:] @ result.coef, y[1:], bound)))
        return result, score + rng.normal(0.0, sensitivity * sigma)

    selection = best_of_random_runs(_LAW, _GRID, run, np.random.default_rng(seed))
    coef = np.zeros(1) if selection is None else selection.output.coef
    iterations = 0 if selection is None else selection.output.certificate.iterations
    certificate = selection_certificate(_LAW, _base_mu(sigma), delta, per_run_mu=1.0 / sigma, iterations=iterations,
                                        assumptions={"l2_regularizations": list(SELECTION_SETTING["grid"])}, notes=())
    return TrainingResult(coef=coef, certificate=certificate)


register(
    AuditTarget(
        name="selection",
        mechanism="noisy_gd",
        description="private selection of lambda in {0.01, 3} (best of K ~ Poisson(1) noisy_gd runs on ½(θ − x)², "
                    "noisy validation score; the training canary changes which lambda wins)",
        make_pair=selection_pair,
        sigma=_sigma,
        run=selection_release,
        delta=NOISY_GD_SETTING["delta"],
    )
)
