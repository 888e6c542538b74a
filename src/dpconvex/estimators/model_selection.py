"""Private model selection: choose λ on the private data itself, with the selection inside the certificate.

:class:`PrivateLogisticRegressionCV`, :class:`PrivateHuberSVCCV` and :class:`PrivateRidgeCV` follow
scikit-learn's ``…CV`` estimators (a grid ``l2_regularizations``, ``scoring``, the chosen
``l2_regularization_``, ``best_score_`` and ``cv_results_``) and release one model under one
certificate (``privacy_report_``) that covers every training run, every score and the selection.

The algorithm (Papernot & Steinke 2022, arXiv:2110.03620; :mod:`dpconvex.accounting.hyperparameter_tuning`):

1. Split (public randomness).  A validation part of ``round(validation_fraction·n)`` records is
   drawn uniformly from ``random_state``, independently of the data; the rest is the training part.
2. Budget.  The whole (ε, δ) goes to the selection and its output is released as is (the rule of
   Papernot & Steinke: the winning candidate itself, trained on the training part; no refit, so
   nothing is composed after it).  Every run is calibrated to one per-run budget μ, the largest
   whose selection meets ε at δ (:func:`~dpconvex.accounting.hyperparameter_tuning.calibrate_base_mu`).
3. K ~ ``runs_distribution`` with mean ``expected_runs`` (Poisson by default: for a given mean it
   tries every λ of a grid most often and has no heavy tail; docs/model-selection.md compares the
   laws), drawn from ``random_state``.
4. Each of the K runs (Q) draws λ uniformly from the grid, trains the library's own estimator with
   ``method="noisy_gd"`` on the training part at the (ε₁, δ) that μ-GDP gives at δ, and scores the
   model on the validation part, adding N(0, (Δ/μ)²) to the score (Δ: the score's sensitivity,
   e.g. 1/n_val for accuracy).
5. The run of largest noisy score is released: its model, its λ (``l2_regularization_``) and its
   noisy score (``best_score_``).  K, the other runs' λ and their scores are never released (the
   theorem needs them secret).

Why each run is μ_Q-GDP (derivation note).  Replace-one neighbours differ in one record, which lies
in exactly one part (the split is by position, fixed before the data are read).  In the training
part: the model is a noisy_gd run, μ_λ-GDP by the accountant's GDP bounds (``gdp`` always applies:
λ > 0 and η < 2/β, which the plan enforces; ``shifted-interpolation`` when it does too), and the
score is a post-processing of the model with the (unchanged) validation part and independent
noise.  In the validation part: the model's law does not change and, given the model, the score is
a Gaussian whose mean moves by at most Δ, so μ-GDP.  So each pair is max(μ_λ, μ)-GDP — the maximum
over the parts, not their sum.  λ is drawn independently of the data, so Q's output (λ, model,
score) is a mixture with the same weights under both neighbours, and each hockey-stick divergence
of the mixture is at most the weighted mean of the components' (joint convexity): Q is
μ_Q-GDP with μ_Q = max(μ, max_λ μ_λ).  That is what the accountant takes (Q is then
(α, αμ_Q²/2)-RDP for every α ≥ 1 and has the exact GDP privacy profile).  Each candidate is
calibrated to the (ε₁, δ) of μ-GDP, so μ_λ ≤ μ when a GDP bound won its calibration; the budget
search runs on the actual μ_Q, so the certificate never exceeds ε whatever bound won.

Only ``method="noisy_gd"`` trains the candidates: the accountant needs each run's GDP (or RDP)
guarantee, and the other mechanisms' certificates (PLD for ``auto`` and ``noisy_sgd``'s Poisson
batches, output perturbation's worst-case bounds) do not give one.

The fit itself is :class:`~dpconvex.estimators.selection_fit.PrivateSelectionCV`'s (re-exported
here); this module holds the three estimators, their grids and their parameter rules.
"""

from __future__ import annotations

import numpy as np

from dpconvex.estimators.base import CLASSES_RULES, COMMON_CONSTRAINTS
from dpconvex.estimators.linear_model import PrivateHuberSVC, PrivateLogisticRegression, PrivateRidge
from dpconvex.estimators.params import Instance, Interval, Options
from dpconvex.estimators.selection_fit import PrivateSelectionCV
from dpconvex.mechanisms.selection import RUNS_DISTRIBUTIONS

__all__ = ["PrivateLogisticRegressionCV", "PrivateHuberSVCCV", "PrivateRidgeCV", "PrivateSelectionCV",
           "CLASSIFIER_GRID", "RIDGE_GRID", "MAX_EXPECTED_RUNS"]

#: The grid of λ of the classifiers when none is given: λ = 1e-4 … 1e-2 brackets the λ that UCI Adult's
#: oracle picks for noisy_gd at ε = 0.05 … 1 (docs/BENCHMARKS.md); smaller λ lengthen noisy_gd's runs.
CLASSIFIER_GRID = (1e-4, 1e-3, 1e-2)
#: … and of ridge (around PrivateRidge's default 0.05: a weaker λ widens the ball, hence the noise).
RIDGE_GRID = (0.01, 0.05, 0.25)
#: The largest ``expected_runs``.  Every run is a whole noisy_gd fit, so E[K] is the fit's cost in fits, and
#: more runs buy nothing: at E[K] = 1000 a Poisson K tries every λ of a 100-value grid with probability
#: (1 − e^{−10})^{100} = 0.995, while the repetition's term log(E[K])/(α − 1) keeps shrinking each run's budget.
MAX_EXPECTED_RUNS = 1000.0


_SELECTION_CONSTRAINTS = {
    **{name: COMMON_CONSTRAINTS[name] for name in ("epsilon", "delta", "iterations", "step_size", "fit_intercept",
                                                   "strict", "random_state", "ledger", "ledger_partition")},
    "data_norm": [Interval(0.0, np.inf, "neither")],
    "l2_regularizations": [Instance((list, tuple, np.ndarray))],
    "validation_fraction": [Interval(0.0, 1.0, "neither")],
    "expected_runs": [Interval(1.0, MAX_EXPECTED_RUNS, "both")],
    "runs_distribution": [Options(tuple(RUNS_DISTRIBUTIONS))],
}
_CLASSIFIER_RULES = {**_SELECTION_CONSTRAINTS, "scoring": [Options(("accuracy",))], "classes": CLASSES_RULES}


class PrivateLogisticRegressionCV(PrivateSelectionCV, PrivateLogisticRegression):
    """Differentially private logistic regression with λ chosen privately (module docstring).

    Parameters
    ----------
    epsilon : float, default=1.0
        Target ε > 0 of the one (ε, δ)-DP certificate, selection included.
    delta : float, default=1e-8
        Target δ in (0, 1).
    l2_regularizations : sequence of float, default=(0.0001, 0.001, 0.01)
        The grid of λ > 0 (scikit-learn's ``Cs``, here in the library's λ;
        :data:`~dpconvex.estimators.model_selection.CLASSIFIER_GRID`).
    scoring : {"accuracy"}, default="accuracy"
        The validation score (:data:`~dpconvex.mechanisms.selection.SCORINGS`; its sensitivity is stated there).
    validation_fraction : float in (0, 1), default=0.2
        Share of the records in the validation part (drawn from ``random_state``).
    expected_runs : float in [1, 1000], default=10.0
        E[K], the expected number of training runs (each a whole noisy_gd fit; above 1000 more runs buy
        nothing, :data:`~dpconvex.estimators.model_selection.MAX_EXPECTED_RUNS`).
    runs_distribution : {"poisson", "geometric", "logarithmic"}, default="poisson"
        The law of K (Poisson may draw K = 0, with probability exp(−expected_runs): ``fit`` then
        raises ``RuntimeError`` and releases nothing).
    data_norm, fit_intercept, classes, iterations, step_size, strict, random_state
        As in :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`, for every candidate
        (``method="noisy_gd"``).  ``data_norm`` must be a number.
    ledger : PrivacyLedger or None, default=None
        Records the release, the selection's one certificate, once
        (:class:`~dpconvex.privacy.ledger.PrivacyLedger`); its budget filter first refuses a fit whose
        selection would exceed the budget, before any candidate is trained (``BudgetExceededError``,
        nothing released, no fitted attribute left; docs/privacy-ledger.md).  The candidates record nothing.
    ledger_partition : str or None, default=None
        As in :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`: the partition of records
        the whole selection uses.

    Attributes
    ----------
    coef_, intercept_, n_features_in_, feature_names_in_
        Of the released (winning) model.
    classes_ : ndarray
        The sorted label set (as ``classes``, declared or read from y).
    l2_regularization_ : float
        The chosen λ.
    best_score_ : float
        The released model's noisy validation score (private: part of the selection's output).
    cv_results_ : dict
        ``params``, ``param_l2_regularization`` (the grid), ``selected`` (the chosen λ) and
        ``validation_score`` (``best_score_`` at the chosen λ, nan elsewhere: the other scores are
        not released).
    privacy_report_ : PrivacyCertificate
        The one certificate of the release; its notes give the budget rule, the law of K, the
        per-run budget and the chosen λ.
    """

    _candidate = PrivateLogisticRegression
    _parameter_constraints = _CLASSIFIER_RULES

    def __init__(self, *, epsilon=1.0, delta=1e-8, l2_regularizations=CLASSIFIER_GRID, scoring="accuracy",
                 validation_fraction=0.2, expected_runs=10.0, runs_distribution="poisson", data_norm=1.0,
                 fit_intercept=False, classes=None, iterations="auto", step_size="auto", strict=False,
                 random_state=None, ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.l2_regularizations = l2_regularizations
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.expected_runs = expected_runs
        self.runs_distribution = runs_distribution
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.iterations = iterations
        self.step_size = step_size
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition


class PrivateHuberSVCCV(PrivateSelectionCV, PrivateHuberSVC):
    """Differentially private huberised-hinge SVM with λ chosen privately (module docstring).

    Parameters
    ----------
    epsilon : float, default=1.0
        Target ε > 0 of the one (ε, δ)-DP certificate, selection included.
    delta : float, default=1e-8
        Target δ in (0, 1).
    l2_regularizations : sequence of float, default=(0.0001, 0.001, 0.01)
        The grid of λ > 0 (scikit-learn's ``Cs``, here in the library's λ;
        :data:`~dpconvex.estimators.model_selection.CLASSIFIER_GRID`).
    scoring : {"accuracy"}, default="accuracy"
        The validation score (:data:`~dpconvex.mechanisms.selection.SCORINGS`; its sensitivity is stated there).
    validation_fraction : float in (0, 1), default=0.2
        Share of the records in the validation part (drawn from ``random_state``).
    expected_runs : float in [1, 1000], default=10.0
        E[K], the expected number of training runs (each a whole noisy_gd fit; at most
        :data:`~dpconvex.estimators.model_selection.MAX_EXPECTED_RUNS`).
    runs_distribution : {"poisson", "geometric", "logarithmic"}, default="poisson"
        The law of K (Poisson may draw K = 0: ``fit`` then raises ``RuntimeError`` and releases nothing).
    data_norm, fit_intercept, classes, huber_h, iterations, step_size, strict, random_state
        As in :class:`~dpconvex.estimators.linear_model.PrivateHuberSVC`, for every candidate
        (``method="noisy_gd"``).  ``data_norm`` must be a number.
    ledger, ledger_partition : default=None
        As in :class:`PrivateLogisticRegressionCV`: the selection is checked before any candidate is
        trained and recorded once.

    Attributes
    ----------
    coef_, intercept_, n_features_in_, feature_names_in_, classes_, l2_regularization_
        As in :class:`PrivateLogisticRegressionCV`.
    best_score_, cv_results_, privacy_report_
        As in :class:`PrivateLogisticRegressionCV`.
    """

    _candidate = PrivateHuberSVC
    _parameter_constraints = {**_CLASSIFIER_RULES, "huber_h": [Interval(0.0, np.inf, "neither")]}

    def __init__(self, *, epsilon=1.0, delta=1e-8, l2_regularizations=CLASSIFIER_GRID, scoring="accuracy",
                 validation_fraction=0.2, expected_runs=10.0, runs_distribution="poisson", data_norm=1.0,
                 fit_intercept=False, classes=None, huber_h=0.5, iterations="auto", step_size="auto", strict=False,
                 random_state=None, ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.l2_regularizations = l2_regularizations
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.expected_runs = expected_runs
        self.runs_distribution = runs_distribution
        self.data_norm = data_norm
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.huber_h = huber_h
        self.iterations = iterations
        self.step_size = step_size
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition


class PrivateRidgeCV(PrivateSelectionCV, PrivateRidge):
    """Differentially private ridge regression with λ chosen privately (module docstring).

    Parameters
    ----------
    epsilon : float, default=1.0
        Target ε > 0 of the one (ε, δ)-DP certificate, selection included.
    delta : float, default=1e-8
        Target δ in (0, 1).
    l2_regularizations : sequence of float, default=(0.01, 0.05, 0.25)
        The grid of λ > 0 (scikit-learn's ``alphas``, here in the library's λ;
        :data:`~dpconvex.estimators.model_selection.RIDGE_GRID`).
    scoring : {"neg_mean_squared_error", "neg_mean_absolute_error"}, default="neg_mean_squared_error"
        The validation score (:data:`~dpconvex.mechanisms.selection.SCORINGS`; its sensitivity is stated there).
    validation_fraction : float in (0, 1), default=0.2
        Share of the records in the validation part (drawn from ``random_state``).
    expected_runs : float in [1, 1000], default=10.0
        E[K], the expected number of training runs (each a whole noisy_gd fit; at most
        :data:`~dpconvex.estimators.model_selection.MAX_EXPECTED_RUNS`).
    runs_distribution : {"poisson", "geometric", "logarithmic"}, default="poisson"
        The law of K (Poisson may draw K = 0: ``fit`` then raises ``RuntimeError`` and releases nothing).
    data_norm, label_bound, radius, fit_intercept, iterations, step_size, strict, random_state
        As in :class:`~dpconvex.estimators.linear_model.PrivateRidge`, for every candidate
        (``method="noisy_gd"``).  ``data_norm`` must be a number; ``fit_intercept`` is ``False`` or
        ``True`` (a constant feature; no private mean).
    ledger, ledger_partition : default=None
        As in :class:`PrivateLogisticRegressionCV`: the selection is checked before any candidate is
        trained and recorded once.

    Attributes
    ----------
    coef_, intercept_, n_features_in_, feature_names_in_, l2_regularization_
        As in :class:`PrivateLogisticRegressionCV`.
    best_score_, cv_results_, privacy_report_
        As in :class:`PrivateLogisticRegressionCV`.
    """

    _candidate = PrivateRidge
    _parameter_constraints = {**_SELECTION_CONSTRAINTS,
                              "scoring": [Options(("neg_mean_squared_error", "neg_mean_absolute_error"))],
                              "label_bound": [Interval(0.0, np.inf, "neither")],
                              "radius": [Interval(0.0, np.inf, "neither"), Options(("auto",))]}

    def __init__(self, *, epsilon=1.0, delta=1e-8, l2_regularizations=RIDGE_GRID, scoring="neg_mean_squared_error",
                 validation_fraction=0.2, expected_runs=10.0, runs_distribution="poisson", data_norm=1.0,
                 label_bound=1.0, radius="auto", fit_intercept=False, iterations="auto", step_size="auto",
                 strict=False, random_state=None, ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.l2_regularizations = l2_regularizations
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.expected_runs = expected_runs
        self.runs_distribution = runs_distribution
        self.data_norm = data_norm
        self.label_bound = label_bound
        self.radius = radius
        self.fit_intercept = fit_intercept
        self.iterations = iterations
        self.step_size = step_size
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition
