"""scikit-learn estimators over the private mechanisms.

``__init__`` only stores keyword arguments; ``fit`` validates them (``_parameter_constraints``),
never changes them, and stores what it learned in attributes ending in ``_``:
``coef_``, ``intercept_``, ``classes_`` (classifiers), ``n_features_in_``, ``feature_names_in_``
(when X is a DataFrame with string column names) and ``privacy_report_`` (the
:class:`~dpconvex.privacy.certificate.PrivacyCertificate`).

The classifiers take two or more classes of any label type.  With two, ``coef_`` has shape (d,)
and ``intercept_`` is a float; with K ≥ 3 they have shapes (K, d) and (K,), trained as one
problem on a d×K parameter (:mod:`dpconvex.objectives.multiclass`: multinomial logistic regression,
or the K one-vs-rest SVMs at once as one joint problem) under one
certificate.  The shared fit logic is in ``dpconvex.estimators.base``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin

from dpconvex.estimators.base import (
    COMMON_CONSTRAINTS,
    PRIVATE_MEAN,
    PrivateClassifier,
    PrivateLinearModel,
)
from dpconvex.estimators.nonsmooth import PrivateLADRegressor, PrivateLinearSVC
from dpconvex.estimators.params import Interval, Options
from dpconvex.objectives.constraints import L2Ball, Unconstrained
from dpconvex.objectives.losses import HuberizedHingeLoss, LogisticLoss, Loss, SquaredLoss
from dpconvex.objectives.multiclass import MultinomialLogisticLoss, OneVsRestLoss

__all__ = ["PrivateLogisticRegression", "PrivateHuberSVC", "PrivateRidge", "PrivateLinearSVC", "PrivateLADRegressor"]


class PrivateLogisticRegression(PrivateClassifier):
    """Differentially private L2-regularised logistic regression.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target ε > 0 of the (ε, δ)-DP certificate.
    delta : float, default=1e-8
        Target δ in (0, 1).
    data_norm : float or "from_data", default=1.0
        Declared bound on ‖x‖₂; larger rows are clipped with a ``PrivacyLeakWarning``.
        ``"from_data"`` (explicit opt-in) uses the largest row norm of the training data; the
        certificate then says ε = inf, with a ``PrivacyLeakWarning``.
    l2_regularization : float or "auto", default="auto"
        λ > 0 in f = mean loss + (λ/2)‖w‖².  ``"auto"``: with ``method="auto"``, chosen from public
        quantities by the rule of :mod:`dpconvex.mechanisms.auto`; with any other method, 1e-3 (the
        value fixed in Chen, Lee, Kifer 2019 §5.1).  The value used is ``l2_regularization_``.
    method : {"auto", "noisy_gd", "noisy_sgd", "rsgd_ar", "nsgd", "outpert_gd", "pnsgd", "sco_noisy_sgd"}, \
default="auto"
        The private trainer (see :data:`dpconvex.mechanisms.MECHANISMS`).  ``"auto"`` (the default):
        noisy SGD with Poisson batches, tail averaging and a composition (PLD) certificate, its batch
        size, number of steps and λ chosen by a stated utility bound from n, d, (ε, δ) and the declared
        bounds only (:mod:`dpconvex.mechanisms.auto`; the report's notes give the rule and every
        candidate's score).  The others: noisy GD with hidden
        iterates (Chourasia et al.; Bok et al.), output-perturbed SGD of Chen, Lee, Kifer 2019
        (RSGD-AR: permuted batches, averaging, restarts; NSGD: fixed order; OutPert-GD: full batch),
        one pass of projected noisy SGD with a per-record E_γ certificate (Asoodeh, Diaz, Calmon
        2020; Gaussian noise, ball of radius √(2ℓ(0)/λ); ``privacy_report_.record_profile``),
        or mini-batch noisy SGD with Poisson batches and the best of composition and Bok et al.'s
        hidden-state bound (:func:`dpconvex.mechanisms.noisy_sgd`).
    iterations : int, "auto" or "theorem4", default="auto"
        Number of updates.  ``"theorem4"`` is Chourasia et al. Thm 4's K*; ``"auto"`` caps K* by
        the convex early-stopping optimum (:func:`dpconvex.mechanisms.noisy_gd.default_iterations`).
    step_size : float or "auto", default="auto"
        noisy_gd: η, ``"auto"`` = 1/(2β), inside the conditions of Cor. 1 and of the GDP bound.
        Output perturbation: the initial step η₀, ``"auto"`` = 2/(L + μ) (Chen et al. Prop. 2).
        pnsgd: η, ``"auto"`` minimises a public SGD bound
        (:func:`dpconvex.mechanisms.pnsgd.default_step_size`).
        noisy_sgd: η, ``"auto"`` = 1/M.
    batch_size : int or "auto", default="auto"
        Mini-batch size of rsgd_ar/nsgd (``"auto"``: min(4000, n), Chen et al. §5) and of noisy_sgd
        (``"auto"``: ⌈√n⌉, :func:`dpconvex.mechanisms.noisy_sgd.default_batch_size`); ≤ n.
    epochs : int or "auto", default="auto"
        Passes over the data for the output-perturbation methods (see
        :func:`dpconvex.mechanisms.output_perturbation_sgd`) and noisy_sgd (``"auto"``: the run length
        balancing averaged SGD's error terms, :func:`dpconvex.mechanisms.noisy_sgd.default_epochs`).
        Each method reads only its own options; setting another method's option raises ``ValueError``.
    fit_intercept : bool, default=False
        Learn an intercept, as a constant feature equal to ``data_norm``; the certificate then uses
        the augmented norm bound √2·data_norm, which doubles the noise variance.  Off by default:
        one-hot encoded data (as :func:`dpconvex.datasets.load_adult`) already spans a constant.
    classes : None, "private" or sequence of at least two labels, default=None
        The label set (any sortable label type, e.g. strings), declared in advance; ``classes_``
        holds it sorted.  Two classes: binary logistic regression, the second label positive.
        K ≥ 3: multinomial (softmax) logistic regression on a d×K parameter
        (:class:`~dpconvex.objectives.multiclass.MultinomialLogisticLoss`; per-example gradient bound
        √2·X, smoothness X²/2 + λ), ``coef_`` of shape (K, d).  A label of ``y`` outside them raises
        ``ValueError``; a declared class may be absent from ``y`` (it is trained like the others,
        with no example of its own).  ``None`` reads the labels from the private ``y`` (one record
        can change the set, e.g. when a class has a single record), so, like
        ``data_norm="from_data"``, the certificate says ε = inf with the reason and ``fit`` emits a
        ``PrivacyLeakWarning``; ``y`` must then hold at least two classes.  ``"private"`` releases
        the set by partition selection on ``y`` with a tenth of the budget and composes it with the
        fit (:mod:`dpconvex.estimators.private_classes`): the certificate stays within (ε, δ); a
        label with too few records (about 190 at ε = 1, δ = 1e-8) is not released and its records
        are refused; in memory only.
    strict : bool, default=False
        Raise instead of clipping rows above ``data_norm``.
    random_state : None, int or Generator, default=None
        ``None`` draws noise from an OS-seeded generator (use this for releases); a seed makes
        experiments reproducible.
    ledger : PrivacyLedger or None, default=None
        Records the release (:class:`~dpconvex.privacy.ledger.PrivacyLedger`); its budget filter first
        refuses a fit past the budget, before the fit computes anything from the data
        (``BudgetExceededError``, nothing released, no fitted attribute left; docs/privacy-ledger.md).
    ledger_partition : str or None, default=None
        The partition of records this fit uses, declared to the ``ledger`` (checked and recorded under
        it): a set of records fixed in advance, independently of the data (e.g. a range of rows), and
        disjoint from the other partitions; the ledger composes partitions as a maximum.  ``None``:
        every record.  Needs ``ledger``.

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_, feature_names_in_, privacy_report_
        As in the module docstring.
    l2_regularization_ : float
        The λ the model was trained with (``l2_regularization`` itself is never changed).

    Notes
    -----
    The certificate covers one fit whose hyperparameters were chosen without looking at the private
    data (every certificate states it among its conditions).  Tuning ``epsilon``,
    ``l2_regularization`` or any other parameter on that data, e.g. ``GridSearchCV`` over this
    estimator, is not covered: each fitted model still reports its single-fit ε.  To choose λ on
    the private data use :class:`~dpconvex.estimators.model_selection.PrivateLogisticRegressionCV`, whose one
    certificate covers the selection (docs/model-selection.md).
    """

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, l2_regularization="auto",
                 method="auto", iterations="auto", step_size="auto", batch_size="auto", epochs="auto",
                 fit_intercept=False, classes=None,
                 strict=False, random_state=None, ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.l2_regularization = l2_regularization
        self.method = method
        self.iterations = iterations
        self.step_size = step_size
        self.batch_size = batch_size
        self.epochs = epochs
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition

    def _loss(self) -> Loss:
        return LogisticLoss()

    def _multiclass_loss(self, n_classes: int) -> Loss:
        return MultinomialLogisticLoss(n_classes)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (n, K) in the order of ``classes_``, rows summing to 1: the logistic
        link for two classes, softmax of the scores for more."""
        return self._probabilities(X)


class PrivateHuberSVC(PrivateClassifier):
    """Differentially private linear SVM with the huberised hinge loss (Chen et al. 2019 §5.1).

    With K ≥ 3 classes the K one-vs-rest SVMs are trained at once on a d×K parameter
    (:class:`~dpconvex.objectives.multiclass.OneVsRestLoss`: per-example gradient bound √K·X), which
    certifies the joint run (without subsampling, exactly the GDP composition of the K runs; see
    :mod:`dpconvex.objectives.multiclass`); ``predict`` takes the highest score.

    Parameters
    ----------
    epsilon, delta, data_norm, l2_regularization, method, iterations, step_size, batch_size, epochs
        As in :class:`PrivateLogisticRegression`.
    fit_intercept, classes, strict, random_state, ledger, ledger_partition
        As in :class:`PrivateLogisticRegression`.
    huber_h : float, default=0.5
        h > 0 of the huberised hinge (0.5 as in Chen et al.).

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_, feature_names_in_, privacy_report_, l2_regularization_
        As in :class:`PrivateLogisticRegression`.

    Notes
    -----
    As for :class:`PrivateLogisticRegression`, tuning hyperparameters on the private data (e.g.
    ``GridSearchCV``) is not covered by the certificate; choose λ privately with
    :class:`~dpconvex.estimators.model_selection.PrivateHuberSVCCV`.
    """

    _parameter_constraints = {**PrivateClassifier._parameter_constraints,
                              "huber_h": [Interval(0.0, np.inf, "neither")]}

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, l2_regularization="auto",
                 method="auto", iterations="auto", step_size="auto", batch_size="auto", epochs="auto",
                 fit_intercept=False, classes=None,
                 huber_h=0.5, strict=False, random_state=None, ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.l2_regularization = l2_regularization
        self.method = method
        self.iterations = iterations
        self.step_size = step_size
        self.batch_size = batch_size
        self.epochs = epochs
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.huber_h = huber_h
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition

    def _loss(self) -> Loss:
        return HuberizedHingeLoss(self.huber_h)

    def _multiclass_loss(self, n_classes: int) -> Loss:
        return OneVsRestLoss(HuberizedHingeLoss(self.huber_h), n_classes)


class PrivateRidge(RegressorMixin, PrivateLinearModel):
    """Differentially private ridge regression (squared loss, L2 ball constraint).

    Parameters
    ----------
    epsilon, delta, data_norm, method, iterations, step_size, batch_size, epochs
        As in :class:`PrivateLogisticRegression`.
    strict, random_state, ledger, ledger_partition
        As in :class:`PrivateLogisticRegression`.
    l2_regularization : float or "auto", default="auto"
        λ > 0.  ``"auto"``: with ``method="auto"``, chosen by its rule (the run clips every
        per-example gradient at Y·X, its value bound at w = 0, so the sensitivity 2Y·X does not grow
        with the ball; :mod:`dpconvex.mechanisms.auto`); with another method 0.05 (their sensitivity
        2(R·X + Y)·X grows with the radius R = Y/√λ of the ball that holds the minimiser).
    fit_intercept : {"private_mean", True, False}, default="private_mean"
        ``"private_mean"``: the intercept is the mean of the targets (clipped to ``label_bound``)
        plus Laplace noise, at a share of ε (10 % to 50 %, more for small n:
        :func:`~dpconvex.mechanisms.private_mean.mean_epsilon`); the
        model is fitted to the centred targets (their bound Y + |intercept|) with the rest of ε, and
        the certificate composes both (:mod:`dpconvex.mechanisms.private_mean`).  ``True``: a
        constant feature (norm bound √2·X), as for the classifiers; ``False``: none.
    label_bound : float, default=1.0
        Declared bound on |y|; larger targets are clipped with a ``PrivacyLeakWarning``.
    radius : float or "auto", default="auto"
        Radius R of the L2 ball the iterates are projected on (the squared loss needs a bounded
        domain for a finite sensitivity).  ``"auto"`` is Y/√λ for the model's target bound Y, which
        contains the ridge minimiser (λ/2‖w*‖² ≤ f(w*) ≤ f(0) ≤ Y²/2).

    Attributes
    ----------
    coef_, intercept_, n_features_in_, feature_names_in_, privacy_report_, l2_regularization_
        As in :class:`PrivateLogisticRegression`.

    Notes
    -----
    As for :class:`PrivateLogisticRegression`, tuning hyperparameters on the private data (e.g.
    ``GridSearchCV``) is not covered by the certificate; choose λ privately with
    :class:`~dpconvex.estimators.model_selection.PrivateRidgeCV`.
    """

    _parameter_constraints = {
        **COMMON_CONSTRAINTS,
        "label_bound": [Interval(0.0, np.inf, "neither")],
        "radius": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
        "fit_intercept": [Options((True, False, PRIVATE_MEAN))],
    }
    _fixed_method_l2 = 0.05

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, label_bound=1.0,
                 l2_regularization="auto", radius="auto", method="auto", iterations="auto",
                 step_size="auto", batch_size="auto", epochs="auto", fit_intercept=PRIVATE_MEAN, strict=False,
                 random_state=None, ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.label_bound = label_bound
        self.l2_regularization = l2_regularization
        self.radius = radius
        self.method = method
        self.iterations = iterations
        self.step_size = step_size
        self.batch_size = batch_size
        self.epochs = epochs
        self.fit_intercept = fit_intercept
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition

    def _loss(self) -> Loss:
        return SquaredLoss()

    def _label_bound(self) -> float:
        return self.label_bound

    def _constraint(self, l2: float | str, label_bound: float | None = None):
        if self.radius != "auto":
            return L2Ball(self.radius)
        if l2 == "auto":  # method="auto" chooses λ, and its ball √(2ℓ(0)/λ) = Y/√λ with it
            return Unconstrained()
        return L2Ball((self.label_bound if label_bound is None else label_bound) / np.sqrt(l2))

    def fit(self, X, y):
        """Fit on X (n, d) and real targets y; returns self."""
        X, y, leaks = self._validated_rows(X, y, y_numeric=True)
        self._fit_private(X, y, self._loss(), leaks)
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted targets wᵀx + b."""
        return self._decision(X)
