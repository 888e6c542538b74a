"""The scikit-learn estimators of the non-smooth losses: the hinge SVM and least absolute deviations.

Both train by Arora, Marinov, Ullah's Algorithm 1 (:func:`dpconvex.mechanisms.sco_noisy_sgd`) on a
declared ball; conventions as in :mod:`dpconvex.estimators.linear_model`, which re-exports them.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin

from dpconvex.estimators.base import COMMON_CONSTRAINTS, PrivateClassifier, PrivateLinearModel
from dpconvex.estimators.params import PRIVATE_CLASSES_RULES, Interval, Options
from dpconvex.objectives.constraints import L2Ball, Unconstrained
from dpconvex.objectives.losses import AbsoluteErrorLoss, HingeLoss, Loss
from dpconvex.objectives.multiclass import OneVsRestLoss

__all__ = ["PrivateLADRegressor", "PrivateLinearSVC"]


_NONSMOOTH_CONSTRAINTS = {
    **{name: rules for name, rules in COMMON_CONSTRAINTS.items() if name not in ("iterations", "batch_size", "epochs")},
    "l2_regularization": [Interval(0.0, np.inf, "left")],
    "radius": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
}


class _NonSmoothModel:
    """Shared parts of the non-smooth-loss estimators: their parameters and a declared ball W of radius ``radius``."""

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, radius=1.0, l2_regularization=0.0,
                 method="auto", step_size="auto", fit_intercept=False, strict=False, random_state=None,
                 ledger=None, ledger_partition=None):
        self.epsilon = epsilon
        self.delta = delta
        self.data_norm = data_norm
        self.radius = radius
        self.l2_regularization = l2_regularization
        self.method = method
        self.step_size = step_size
        self.fit_intercept = fit_intercept
        self.strict = strict
        self.random_state = random_state
        self.ledger = ledger
        self.ledger_partition = ledger_partition

    def _constraint(self, l2: float | str, label_bound: float | None = None):
        if self.radius == "auto":
            if not l2 > 0:
                raise ValueError("radius='auto' needs l2_regularization > 0 (radius sqrt(2 loss(0)/l2)); "
                                 "give radius as a number.")
            return Unconstrained()  # the mechanism then uses its own ball (BOUNDED_DOMAIN_METHODS)
        return L2Ball(self.radius)


class PrivateLinearSVC(_NonSmoothModel, PrivateClassifier):
    """Differentially private linear SVM (hinge loss) by noisy SGD with the fresh-sample rule.

    Algorithm 1 of Arora, Marinov, Ullah (:func:`dpconvex.mechanisms.sco_noisy_sgd`): one noisy
    (sub)gradient per fresh record, noise-only steps for seen ones, average of the fresh-step
    iterates, certified by the single-use bound (each record enters at most one Gaussian step;
    :mod:`dpconvex.accounting.private_sco`).

    Parameters
    ----------
    epsilon, delta, data_norm, fit_intercept, strict, random_state, ledger, ledger_partition
        As in :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`.
    radius : float or "auto", default=1.0
        Radius of the L2 ball W the iterates stay in (the paper's D = 2·radius).  With
        ``data_norm=1`` the margins y·wᵀx of W lie in [−1, 1], the scale of the hinge's kink.
        ``"auto"`` (needs λ > 0) is √(2ℓ(0)/λ), which holds the regularised minimiser.
    l2_regularization : float, default=0.0
        λ ≥ 0 (Algorithm 1 has none; λ > 0 adds (λ/2)‖w‖² to every loss).
    method : {"auto", "sco_noisy_sgd"}, default="auto"
        The hinge loss is not smooth, so ``"auto"`` trains sco_noisy_sgd (its note says so); the other
        mechanisms refuse it.
    step_size : float or "auto", default="auto"
        η; ``"auto"`` is Arora et al. Thm 6's D/(√n(L + σ√d)).
    classes : None, "private" or sequence of at least two labels, default=None
        As in :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`: declare the label set to keep
        the guarantee, or release it privately with ``"private"``
        (``None`` reads it from ``y`` and voids it, ε = inf).  K ≥ 3 classes train the K
        one-vs-rest hinge models at once (:class:`~dpconvex.objectives.multiclass.OneVsRestLoss`).

    Notes
    -----
    As for :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`, tuning hyperparameters on the
    private data (e.g.
    ``GridSearchCV``) is not covered by the certificate.  No ``…CV`` estimator trains this loss:
    choose ``radius`` and λ on public data, or use
    :class:`~dpconvex.estimators.model_selection.PrivateHuberSVCCV` (a smooth SVM) to choose λ privately.
    """

    _parameter_constraints = {**_NONSMOOTH_CONSTRAINTS, "classes": PRIVATE_CLASSES_RULES}

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, radius=1.0, l2_regularization=0.0,
                 method="auto", step_size="auto", fit_intercept=False, classes=None, strict=False,
                 random_state=None, ledger=None, ledger_partition=None):
        super().__init__(epsilon=epsilon, delta=delta, data_norm=data_norm, radius=radius,
                         l2_regularization=l2_regularization, method=method, step_size=step_size,
                         fit_intercept=fit_intercept, strict=strict, random_state=random_state, ledger=ledger,
                         ledger_partition=ledger_partition)
        self.classes = classes

    def _loss(self) -> Loss:
        return HingeLoss()

    def _multiclass_loss(self, n_classes: int) -> Loss:
        return OneVsRestLoss(HingeLoss(), n_classes)


class PrivateLADRegressor(_NonSmoothModel, RegressorMixin, PrivateLinearModel):
    """Differentially private least-absolute-deviations regression (loss |wᵀx − y|).

    Trained like :class:`PrivateLinearSVC` (Arora, Marinov, Ullah, Algorithm 1).  The subgradient
    sign(wᵀx − y)·x is bounded by ``data_norm`` whatever the target, so targets are never clipped
    and no label bound is needed.  Parameters as in :class:`PrivateLinearSVC`, except ``classes``.

    Notes
    -----
    As for :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`, tuning hyperparameters on the
    private data (e.g.
    ``GridSearchCV``) is not covered by the certificate.  No ``…CV`` estimator trains this loss:
    choose ``radius`` and λ on public data, or use :class:`~dpconvex.estimators.model_selection.PrivateRidgeCV`
    to choose λ privately for a ridge model.
    """

    _parameter_constraints = _NONSMOOTH_CONSTRAINTS

    def _loss(self) -> Loss:
        return AbsoluteErrorLoss()

    def fit(self, X, y):
        """Fit on X (n, d) and real targets y; returns self."""
        X, y, leaks = self._validated_rows(X, y, y_numeric=True)
        self._fit_private(X, y, self._loss(), leaks)
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted targets wᵀx + b."""
        return self._decision(X)
