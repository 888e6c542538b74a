"""Private selection: Papernot & Steinke's best of a random number of runs, its scores and its certificate.

The algorithm behind :mod:`dpconvex.estimators.model_selection`'s ``…CV`` estimators, and the code the audit
targets ``selection`` and ``selection-geometric`` run with the noisy_gd trainer directly
(:mod:`dpconvex.audit.targets_selection`), so the audit exercises what ``fit`` runs:

* :func:`best_of_random_runs` — K ~ a repetition law (:func:`repetition_law`), each run draws λ
  uniformly from a grid and returns an output and a noisy score; the largest score wins;
* :func:`validation_run` — one run (the theorem's Q): train the candidate on the training part,
  score it on the validation part and add N(0, (Δ/μ)²) (:func:`score_noise_sd`);
* :class:`Scoring` / :data:`SCORINGS` — validation scores with a stated sensitivity Δ;
* :func:`candidate_mu`, :func:`base_mu`, :func:`calibrate_per_run_mu` — a noisy_gd run's μ-GDP
  guarantee, a run's μ_Q = max(μ, every candidate's μ), and the per-run budget μ whose selection
  meets the target;
* :func:`selection_certificate` — the tuning theorem's account
  (:mod:`dpconvex.accounting.hyperparameter_tuning`) of a selection whose runs are μ_Q-GDP, as a
  :class:`~dpconvex.privacy.certificate.PrivacyCertificate`.

The derivation (why each run is max(training, scoring)-GDP, and why drawing λ at random keeps the
maximum over the grid) is in :mod:`dpconvex.estimators.model_selection`'s docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import hyperparameter_tuning as tuning
from dpconvex.accounting import noisy_gd as noisy_gd_accountant
from dpconvex.accounting.best_of import bound_notes
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["RUNS_DISTRIBUTIONS", "SCORINGS", "SELECTION_CONDITIONS", "Scoring", "Selection", "base_mu",
           "best_of_random_runs", "calibrate_per_run_mu", "candidate_mu", "repetition_law", "score_noise_sd",
           "selection_certificate", "validation_run"]

#: ``runs_distribution`` → shape η of the truncated negative binomial (None: Poisson).
RUNS_DISTRIBUTIONS: dict[str, float | None] = {"poisson": None, "geometric": 1.0, "logarithmic": 0.0}

@dataclass(frozen=True)
class Scoring:
    """A validation score: the mean over the validation part of a per-record term of bounded range.

    Replacing one validation record changes one term, so the score's sensitivity is
    ``spread(label_bound) / n_val``.  Regression terms use predictions clipped to
    [−label_bound, label_bound] (the labels were clipped there), which bounds them.

    Attributes
    ----------
    name : str
        The ``scoring`` value.
    term : callable
        ``term(predictions, y, label_bound)``: the per-record terms (larger is better).
    spread : callable
        ``spread(label_bound)``: the width of the terms' range.
    """

    name: str
    term: Callable[[NDArray, NDArray, float | None], NDArray]
    spread: Callable[[float | None], float]

    def __call__(self, model: Any, X: NDArray, y: NDArray, label_bound: float | None) -> float:
        """The score of a fitted ``model`` on (X, y), without noise."""
        return float(np.mean(self.term(model.predict(X), y, label_bound)))

    def sensitivity(self, label_bound: float | None, n_validation: int) -> float:
        """Δ: replacing one of ``n_validation`` records moves the mean of the terms by at most spread/n_validation."""
        return self.spread(label_bound) / n_validation


def _bound(label_bound: float | None) -> float:
    """The regression scorings' label bound: a number (ridge declares one; None is never passed to them)."""
    return cast(float, label_bound)


def _clipped(predictions: NDArray, bound: float | None) -> NDArray:
    return np.clip(predictions, -_bound(bound), _bound(bound))


#: Every ``scoring`` the estimators accept (classifiers: accuracy; ridge: the other two).
SCORINGS: dict[str, Scoring] = {s.name: s for s in [
    Scoring("accuracy", lambda p, y, b: (p == y).astype(float), lambda b: 1.0),
    Scoring("neg_mean_squared_error", lambda p, y, b: -((_clipped(p, b) - y) ** 2), lambda b: 4.0 * _bound(b)**2),
    Scoring("neg_mean_absolute_error", lambda p, y, b: -np.abs(_clipped(p, b) - y), lambda b: 2.0 * _bound(b)),
]}


def repetition_law(runs_distribution: str, expected_runs: float) -> tuning.RepetitionLaw:
    """The law of the number of runs K: Poisson, or the geometric / logarithmic truncated negative binomial.

    Parameters
    ----------
    runs_distribution : {"poisson", "geometric", "logarithmic"}
        The law's family (a key of :data:`RUNS_DISTRIBUTIONS`).
    expected_runs : float
        E[K].

    Returns
    -------
    RepetitionLaw
        The law (:mod:`dpconvex.accounting.hyperparameter_tuning`).

    Raises
    ------
    ValueError
        Naming ``runs_distribution`` or ``expected_runs`` (which must exceed 1 for the laws with K ≥ 1).
    """
    if runs_distribution not in RUNS_DISTRIBUTIONS:
        raise ValueError(f"runs_distribution must be one of {tuple(RUNS_DISTRIBUTIONS)}; got {runs_distribution!r}.")
    shape = RUNS_DISTRIBUTIONS[runs_distribution]
    if shape is None:
        return tuning.PoissonRepetitions(float(expected_runs))
    if not expected_runs > 1:
        raise ValueError(f"expected_runs must be > 1 for runs_distribution={runs_distribution!r} (K >= 1 always); "
                         f"got expected_runs={expected_runs!r}.")
    return tuning.TruncatedNegativeBinomial.with_mean(float(expected_runs), shape)


def score_noise_sd(sensitivity: float, mu: float) -> float:
    """The standard deviation Δ/μ of the score's Gaussian noise: a score moved by at most Δ is then μ-GDP.

    Parameters
    ----------
    sensitivity : float
        Δ, the score's sensitivity.
    mu : float
        μ > 0.

    Returns
    -------
    float
        Δ/μ.
    """
    return sensitivity / mu


def validation_run(train: Callable[[float, int], Any], scoring: Scoring, X_val: NDArray, y_val: NDArray,
                   label_bound: float | None, mu: float) -> Callable[[float, np.random.Generator], tuple[Any, float]]:
    """The selection's run Q at per-run budget μ, for :func:`best_of_random_runs`.

    Parameters
    ----------
    train : callable
        ``train(λ, seed)``: the candidate at λ fitted on the training part with that seed.
    scoring : Scoring
    X_val, y_val : ndarray
        The validation part.
    label_bound : float or None
        Clips regression predictions in the score (``Scoring``).
    mu : float
        The per-run budget: the score's noise is N(0, (Δ/μ)²), Δ = ``scoring.sensitivity``.

    Returns
    -------
    callable
        ``run(λ, rng) -> (model, noisy score)``; it draws the candidate's seed from ``rng``, then
        the score's noise.
    """
    noise_sd = score_noise_sd(scoring.sensitivity(label_bound, y_val.shape[0]), mu)

    def run(value: float, rng: np.random.Generator) -> tuple[Any, float]:
        model = train(value, int(rng.integers(2**63)))
        return model, scoring(model, X_val, y_val, label_bound) + rng.normal(0.0, noise_sd)

    return run


@dataclass(frozen=True)
class Selection:
    """What the selection releases: the winning run's λ, its fitted output and its noisy score.

    Attributes
    ----------
    value : float
        The winning run's λ.
    output : object
        Its fitted output.
    score : float
        Its noisy score.
    """

    value: float
    output: Any
    score: float


def best_of_random_runs(law: tuning.RepetitionLaw, grid: NDArray[np.float64],
                        run: Callable[[float, np.random.Generator], tuple[Any, float]],
                        rng: np.random.Generator) -> Selection | None:
    """Papernot & Steinke's algorithm: K ~ ``law`` runs, each with λ uniform on ``grid``; the largest score wins.

    Parameters
    ----------
    law : TruncatedNegativeBinomial or PoissonRepetitions
    grid : ndarray
        The values of λ.
    run : callable
        ``run(λ, rng) -> (output, noisy score)``: one run of the base mechanism Q.
    rng : Generator
        Draws K, each λ, and whatever ``run`` draws.

    Returns
    -------
    Selection or None
        The first run of largest score (ties have probability 0 with Gaussian score noise); None if
        the law drew K = 0 (Poisson only, probability exp(−E[K])): no run, nothing data-dependent.
    """
    best = None
    for _ in range(law.sample(rng)):
        value = float(grid[rng.integers(grid.size)])
        output, score = run(value, rng)
        if best is None or score > best.score:
            best = Selection(value, output, score)
    return best


def candidate_mu(event: noisy_gd_accountant.NoisyGDEvent) -> float:
    """μ of a noisy_gd run's μ-GDP guarantee: the least over its accountant's applicable GDP bounds.

    Every candidate has λ > 0 and η < 2/β (the plan enforces it), so the ``gdp`` bound always applies.

    Parameters
    ----------
    event : NoisyGDEvent
        The candidate's planned noisy_gd run.

    Returns
    -------
    float
        μ.
    """
    bounds = noisy_gd_accountant.BOUNDS
    return min(mu(event) for name in noisy_gd_accountant.applicable_bounds(event)
               if (mu := bounds[name].gdp_mu) is not None)


def base_mu(per_run_mu: float, candidates: Iterable[noisy_gd_accountant.NoisyGDEvent]) -> float:
    """μ_Q of a run: max(μ, every candidate's GDP μ) — the score is μ-GDP, the training μ_λ-GDP, and a
    replaced record lies in one part (:mod:`dpconvex.estimators.model_selection`'s derivation note).

    Parameters
    ----------
    per_run_mu : float
        μ, the score's budget.
    candidates : iterable of NoisyGDEvent
        The candidates' planned noisy_gd runs.

    Returns
    -------
    float
        μ_Q.
    """
    return max(per_run_mu, *(candidate_mu(event) for event in candidates))


def calibrate_per_run_mu(law: tuning.RepetitionLaw, epsilon: float, delta: float,
                         candidates_at: Callable[[float], Iterable[noisy_gd_accountant.NoisyGDEvent]]) -> float:
    """The largest per-run budget μ whose selection meets (ε, δ), its runs counted at μ_Q = :func:`base_mu`.

    ``candidates_at(μ)`` gives the candidates' planned noisy_gd runs at the per-run budget μ (one per λ
    of the grid); the search (:func:`~dpconvex.accounting.hyperparameter_tuning.calibrate_base_mu`)
    starts from the μ of runs that are exactly μ-GDP.

    Parameters
    ----------
    law : RepetitionLaw
        The law of the number of runs.
    epsilon, delta : float
        The selection's target (ε, δ).
    candidates_at : callable
        As above.

    Returns
    -------
    float
        The per-run budget μ.
    """
    return tuning.calibrate_base_mu(
        law, epsilon, delta, event_of=lambda mu: tuning.TuningEvent(law, base_mu=base_mu(mu, candidates_at(mu))),
        start=tuning.calibrate_base_mu(law, epsilon, delta))


def selection_certificate(law: tuning.RepetitionLaw, base_mu: float, delta: float, *, per_run_mu: float,
                          iterations: int, assumptions: dict[str, Any], notes: tuple[str, ...]) -> PrivacyCertificate:
    """The certificate of a selection whose runs are ``base_mu``-GDP: the tuning theorem's account at ``delta``.

    ``sigma`` is 1/``base_mu`` (each run is (1/σ)-GDP; ``per_run_mu`` ≤ ``base_mu`` is the budget the
    runs were calibrated to, below it when a candidate's own GDP μ is larger), ``iterations`` those of the
    released run; ``notes`` are followed by why each other bound lost or did not apply.

    Parameters
    ----------
    law : RepetitionLaw
        The law of the number of runs.
    base_mu : float
        μ_Q of every run.
    delta : float
        δ of the certificate.
    per_run_mu : float
        The budget the runs were calibrated to.
    iterations : int
        The released run's iterations.
    assumptions : dict
        Assumptions to record, before the law's.
    notes : tuple of str
        The certificate's first notes.

    Returns
    -------
    PrivacyCertificate
    """
    account = tuning.account(tuning.TuningEvent(law, base_mu=base_mu), delta)
    return PrivacyCertificate(
        mechanism="private_selection", epsilon=account.epsilon, delta=account.delta, bound=account.bound,
        theorem=account.theorem, conditions=account.assumptions + SELECTION_CONDITIONS,
        assumptions={**assumptions, "repetition_law": law.describe(), "expected_runs": law.mean,
                     "per_run_mu": per_run_mu, "base_mu": base_mu,
                     "sigma": "1/base_mu (each run is (1/sigma)-GDP)", "neighbouring": "replace-one"},
        order=account.order, conversion=account.conversion, sigma=1.0 / base_mu, iterations=iterations,
        candidates=account.candidates, notes=(*notes, *bound_notes(account)))


#: What the selection certifies on top of the tuning theorem's own conditions.
SELECTION_CONDITIONS = (
    "validation part drawn from random_state independently of the data (public randomness); a replaced record lies "
    "in one part, so each run is max(training, scoring)-GDP",
    "each run draws lambda uniformly from the grid, independently of the data",
    "each candidate trained by noisy_gd (hidden iterates, replace-one) on the training part",
    "the fit's duration, which grows with K, is not observed by the recipient (K must stay secret)",
    "the grid of lambda and the budget (epsilon, delta, expected_runs, runs_distribution, validation_fraction, "
    "scoring and the candidates' options) chosen without looking at the private data: the selection of lambda "
    "from the grid is covered, but choosing the grid or the budget on the data (e.g. a new grid after reading "
    "best_score_, or GridSearchCV over this estimator) is not: epsilon counts this one selection",
)
