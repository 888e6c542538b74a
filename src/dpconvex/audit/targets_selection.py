"""Audit targets for private model selection: a validation record that flips which λ wins.

``selection`` and ``selection-geometric`` run what :meth:`~dpconvex.estimators.model_selection.PrivateSelectionCV.fit`
runs, from the same code (:mod:`dpconvex.mechanisms.selection`): the runs
(:func:`~dpconvex.mechanisms.selection.validation_run`: the candidate trained on the training part by the
real noisy_gd trainer, its accuracy on the validation part plus N(0, (Δ/μ)²)), the best of K of them
(:func:`~dpconvex.mechanisms.selection.best_of_random_runs`), the per-run budget
(:func:`~dpconvex.mechanisms.selection.calibrate_per_run_mu` over
:func:`~dpconvex.mechanisms.selection.base_mu`) and the certificate
(:func:`~dpconvex.mechanisms.selection.selection_certificate`), at ε = 3, δ = 1e-3 as every other
target (:data:`.targets.NOISY_GD_SETTING`).  The split is fixed (the training rows, then one
validation row): the estimator draws its split independently of the data and the guarantee holds
for every split, so auditing one split audits the mechanism conditionally on it.  The candidates are
trained by calling noisy_gd with the per-run noise directly, not through the estimator's candidate
runner: the estimator's own split and candidate plan are checked by the unit tests of
``tests/test_model_selection.py`` (the model never sees the validation rows; the score's noise law).

The pair (d = 2).  The training part: 3,600 rows e₁ with label +1 and 400 rows e₂ with label −1,
trained on the squared loss ½(θᵀx − y)² + (λ/2)‖θ‖² (noisy_gd, 30 steps of η = 1/(2β) from 0 in the
ball of radius 1.5), so θ_λ → (0.9/(0.9 + λ), −0.1/(0.1 + λ)): the weak λ = 0.1 keeps the rare
direction e₂, the strong λ = 3 shrinks it away.  At the validation row x = (0.269, 0.963) the weak
candidate predicts −1 (θᵀx ≈ −0.21 after 30 steps) and the strong one +1 (≈ +0.031); the training
noise moves these by under a tenth of their distance to 0 (sd 0.015 and 0.0009 at the smaller
per-run μ, 0.455).  The validation label is −1 on D and +1 on D′: the weak candidate's accuracy
is 1 on D and 0 on D′, the strong one's 0 and 1 — the record moves both scores by the full
sensitivity Δ = 1 in opposite directions and flips which λ wins.

The release and the statistic.  The release is (λ, noisy score) of the winner (the model carries
no trace of the validation record); the target returns (λ, score, T) with T = ±(score − ½), + when
the weak λ won, and the audit projects on T.  Whatever K is, the per-run law of the scores is the
same mixture on D and D′, so the likelihood ratio of (λ, score) is exp(T/σ²) with σ = Δ/μ the
score's noise: T is the most powerful statistic (Neyman–Pearson), and with K = 1 it is a Gaussian
shift of exactly μ, the per-run budget.  K = 0 (Poisson) releases the fixed (0, 0, 0).

Two laws of K, because no one E[K] lets the audit catch both kinds of bug.  ``selection`` draws K ~
Poisson(10), the estimators' default (Thm 6): the certificate charges the repetition about half the
budget (per-run μ = 0.455 against 0.964 for one run at ε = 3), and a certificate that forgot it
(one run at μ = 0.964, K ~ Poisson(10) still drawn) fails at 1,000 runs, while halving the score's
noise stays under the certificate there (the repetition overhead dwarfs it).  ``selection-geometric``
draws K from the geometric law with E[K] = 1.05 (Thm 2; K = 1 in 95 % of the releases, per-run μ =
0.846), where the release is nearly one run's Gaussian shift and halving the score's noise fails at
3,000 runs.  Both catch a score without noise at once.  (A canary in the training part, as this
target had before, audits noisy_gd's own noise — the ``noisy-gd`` targets do — and needed 8,000 runs.)
"""

from __future__ import annotations

from functools import cache, partial

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import hyperparameter_tuning as tuning
from dpconvex.accounting.noisy_gd import NoisyGDEvent
from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.audit.targets import NOISY_GD_SETTING
from dpconvex.mechanisms import TrainingResult, noisy_gd
from dpconvex.mechanisms.noisy_gd import plan_noisy_gd
from dpconvex.mechanisms.selection import (
    SCORINGS,
    base_mu,
    best_of_random_runs,
    calibrate_per_run_mu,
    candidate_mu,
    selection_certificate,
    validation_run,
)
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import SquaredLoss

__all__ = ["SELECTION_LAWS", "SELECTION_SETTING", "LinearClassifier", "candidate_options", "candidate_sigma",
           "selection_pair", "selection_release"]

#: The selection: grid of λ (weak, strong), the candidates' noisy_gd options, the training part (rows e₁ and e₂,
#: labels +1 and −1), the validation row and its label on D (−1; +1 on D′), the score.
SELECTION_SETTING = {"epsilon": NOISY_GD_SETTING["epsilon"], "grid": (0.1, 3.0), "iterations": 30, "radius": 1.5,
                     "rows_e1": 3600, "rows_e2": 400, "validation_x": (0.269, 0.963), "validation_y": -1.0,
                     "scoring": "accuracy"}
#: target name → the law of K.
SELECTION_LAWS: dict[str, tuning.RepetitionLaw] = {
    "selection": tuning.PoissonRepetitions(10.0),
    "selection-geometric": tuning.TruncatedNegativeBinomial.with_mean(1.05, 1.0),
}
_GRID = np.asarray(SELECTION_SETTING["grid"])
_N_TRAIN = SELECTION_SETTING["rows_e1"] + SELECTION_SETTING["rows_e2"]


class LinearClassifier:
    """A noisy_gd output used as a ±1 classifier: ``predict(X)`` is the sign of Xθ (+1 at 0).

    Parameters
    ----------
    coef : ndarray
        θ.
    """

    def __init__(self, coef: NDArray[np.float64]):
        self.coef = coef

    def predict(self, X: NDArray) -> NDArray[np.float64]:
        """±1 labels."""
        return np.where(X @ self.coef >= 0.0, 1.0, -1.0)


def selection_pair() -> NeighbourPair:
    """The training rows, then the validation row x = (0.269, 0.963) with label −1 (D) or +1 (D′).

    Returns
    -------
    NeighbourPair
    """
    setting = SELECTION_SETTING
    rows = [(1.0, 0.0)] * setting["rows_e1"] + [(0.0, 1.0)] * setting["rows_e2"] + [setting["validation_x"]]
    X = np.array(rows)
    y = np.concatenate([np.ones(setting["rows_e1"]), -np.ones(setting["rows_e2"]), [setting["validation_y"]]])
    y_prime = y.copy()
    y_prime[-1] = -y[-1]
    return NeighbourPair(X=X, y=y, X_prime=X.copy(), y_prime=y_prime, direction=np.array([0.0, 0.0, 1.0]))


def candidate_options(value: float) -> dict:
    """The noisy_gd keywords of the candidate at λ = ``value`` (but the noise, the data and the seed).

    Parameters
    ----------
    value : float
        λ.

    Returns
    -------
    dict
    """
    return dict(loss=SquaredLoss(), l2_regularization=value, iterations=SELECTION_SETTING["iterations"],
                constraint=L2Ball(SELECTION_SETTING["radius"]), data_norm=1.0, label_bound=1.0)


@cache
def _unit_mu(value: float) -> float:
    """The candidate's GDP μ at noise σ = 1."""
    return candidate_mu(plan_noisy_gd(_N_TRAIN, 2, delta=NOISY_GD_SETTING["delta"], sigma=1.0,
                                      **candidate_options(value)))


def candidate_sigma(value: float, sigma: float) -> float:
    """noisy_gd's σ for the candidate at λ = ``value`` when the per-run budget is μ = 1/``sigma``.

    The candidate's GDP μ is proportional to 1/σ (every GDP bound of noisy_gd is), so σ = μ(σ = 1)·``sigma``
    makes it μ-GDP, as its score.

    Parameters
    ----------
    value : float
        λ.
    sigma : float
        1/μ, the per-run budget.

    Returns
    -------
    float
    """
    return _unit_mu(value) * sigma


def _candidates_at(mu: float) -> list[NoisyGDEvent]:
    """Every candidate's planned run when the per-run budget is μ."""
    return [plan_noisy_gd(_N_TRAIN, 2, delta=NOISY_GD_SETTING["delta"], sigma=candidate_sigma(float(v), 1.0 / mu),
                          **candidate_options(float(v))) for v in _GRID]


@cache
def _sigma(law: tuning.RepetitionLaw) -> float:
    """1/μ for the per-run budget μ whose selection meets ε = 3 at δ = 1e-3 (the harness's noise parameter)."""
    return 1.0 / calibrate_per_run_mu(law, SELECTION_SETTING["epsilon"], NOISY_GD_SETTING["delta"], _candidates_at)


@cache
def _certificate(law: tuning.RepetitionLaw, sigma: float, delta: float):
    mu = 1.0 / sigma
    return selection_certificate(law, base_mu(mu, _candidates_at(mu)), delta, per_run_mu=mu,
                                 iterations=SELECTION_SETTING["iterations"],
                                 assumptions={"l2_regularizations": list(SELECTION_SETTING["grid"])}, notes=())


def selection_release(law: tuning.RepetitionLaw, X: NDArray, y: NDArray, seed: int, sigma: float,
                      delta: float) -> TrainingResult:
    """The selection on the split (rows but the last | the last row) at per-run budget 1/``sigma``.

    Parameters
    ----------
    law : RepetitionLaw
        The law of the number of runs K.
    X, y : ndarray
        One of the neighbouring data sets.
    seed : int
        Seeds the selection.
    sigma : float
        1/μ, the per-run budget.
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
        (λ, noisy score, T) of the winner as ``coef`` ((0, 0, 0) when K = 0) and the certificate.
    """
    X_train, y_train = X[:-1], y[:-1]

    def train(value: float, candidate_seed: int) -> LinearClassifier:
        # bound="gdp" names the bound of the candidate's own certificate (unused here); the training is the same
        result = noisy_gd(X_train, y_train, sigma=candidate_sigma(value, sigma), delta=delta,
                          random_state=candidate_seed, bound="gdp", **candidate_options(value))
        return LinearClassifier(result.coef)

    run = validation_run(train, SCORINGS[SELECTION_SETTING["scoring"]], X[-1:], y[-1:], None, 1.0 / sigma)
    selection = best_of_random_runs(law, _GRID, run, np.random.default_rng(seed))
    if selection is None:
        coef = np.zeros(3)
    else:
        sign = 1.0 if selection.value == _GRID[0] else -1.0
        coef = np.array([selection.value, selection.score, sign * (selection.score - 0.5)])
    return TrainingResult(coef=coef, certificate=_certificate(law, sigma, delta))


for _name, _law in SELECTION_LAWS.items():
    register(
        AuditTarget(
            name=_name,
            mechanism="noisy_gd",
            description=f"private selection of lambda in {{0.1, 3}}: best of K ~ {_law.describe()} noisy_gd runs "
                        "(squared loss, d = 2) scored by noisy validation accuracy; the validation record flips "
                        "which lambda wins; statistic: the winner's signed score",
            make_pair=selection_pair,
            sigma=partial(_sigma, _law),
            run=partial(selection_release, _law),
            delta=NOISY_GD_SETTING["delta"],
        )
    )
