"""The fit logic shared by the estimators of :mod:`dpconvex.estimators.linear_model`: linear models and classifiers.

A linear model w (and an intercept) is trained by one private mechanism on validated features; a
classifier first fixes its public label set ``classes_`` (declared, or read from ``y`` with a
note that voids the certificate) and then trains either the binary loss on labels ±1 (two classes)
or its K-class loss on class indices 0..K−1 (:mod:`dpconvex.objectives.multiclass`: multinomial for
logistic regression, one-vs-rest for the SVMs), on a d×K parameter.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import assert_all_finite
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from dpconvex.data.checks import (
    ValidatedRows,
    check_frame,
    check_rows,
    enforce_label_bound,
    enforce_norm_bound,
    input_leaks,
    is_dask_collection,
    make_rng,
)
from dpconvex.estimators.dask_fit import (
    dask_clipped_targets,
    dask_data,
    dask_encoded_labels,
    dask_features,
    dask_label_set,
    dask_largest_row_norm,
    dask_real_targets,
    dask_targets,
    encode_labels,
)
from dpconvex.estimators.params import CLASSES_RULES, COMMON_CONSTRAINTS, PRIVATE_CLASSES_RULES, validate_params
from dpconvex.estimators.private_classes import fit_with_private_classes
from dpconvex.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpconvex.mechanisms import REGISTRY
from dpconvex.mechanisms.auto import AutoPlan
from dpconvex.mechanisms.backends import require_backend
from dpconvex.mechanisms.private_mean import PRIVATE_MEAN, compose_with_mean, mean_epsilon, private_mean
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Unconstrained
from dpconvex.objectives.losses import Loss
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve
from dpconvex.privacy.ledger import covers, planned_curve

__all__ = ["PRIVATE_MEAN", "DATA_NORM_FROM_DATA", "LABELS_FROM_DATA", "METHOD_OPTIONS", "BOUNDED_DOMAIN_METHODS",
           "OPTIMISER_OPTIONS", "FIXED_METHOD_L2", "COMMON_CONSTRAINTS", "CLASSES_RULES", "PrivateLinearModel",
           "PrivateClassifier", "labels_from_scores"]

#: Why ``data_norm="from_data"`` voids the certificate (its warning, and its note via ``without_guarantee``).
DATA_NORM_FROM_DATA = (
    "data_norm='from_data' read the norm bound from the private data (the largest row norm, which one "
    "record can set); give data_norm as a number to keep the guarantee"
)

#: Why ``classes=None`` voids the certificate: the label set was read from the private y (one record
#: can add or change a label), exactly like ``data_norm="from_data"``.
LABELS_FROM_DATA = (
    "classes=None read the label set {labels} from the private labels y (one record can change it); "
    "pass classes={declared} to keep the guarantee"
)

#: Which optimiser hyperparameters each method reads (its registry entry's ``options``); setting another is an error.
METHOD_OPTIONS = {name: spec.options for name, spec in REGISTRY.items()}

#: Methods that choose their own domain (``bounded_domain`` in the registry): an unconstrained model gets the
#: mechanism's data-independent ball (``constraint="auto"``, radius √(2ℓ(0)/λ), which holds the minimiser).
BOUNDED_DOMAIN_METHODS = frozenset(name for name, spec in REGISTRY.items() if spec.bounded_domain)

#: Every optimiser hyperparameter of the estimators: the union of the methods' options.
OPTIMISER_OPTIONS = tuple(sorted(set().union(*METHOD_OPTIONS.values())))

#: λ of ``l2_regularization="auto"`` for every method but ``"auto"`` (which chooses its own by a
#: stated rule, :mod:`dpconvex.mechanisms.auto`): the value fixed in Chen, Lee, Kifer 2019 §5.1.
FIXED_METHOD_L2 = 1e-3



class PrivateLinearModel(BaseEstimator):
    """Shared fit logic: a linear model w (and intercept) trained by a private mechanism.

    The parameters are those of each subclass (e.g.
    :class:`~dpconvex.estimators.linear_model.PrivateLogisticRegression`).

    Attributes
    ----------
    coef_, intercept_ : ndarray or float
        The released weights and intercept.
    l2_regularization_ : float
        The λ the model was trained with.
    privacy_report_ : PrivacyCertificate
        The certificate of the release.
    n_features_in_, feature_names_in_
        As in scikit-learn.
    """

    _parameter_constraints: dict = COMMON_CONSTRAINTS
    #: λ of ``l2_regularization="auto"`` for a method other than ``"auto"``.
    _fixed_method_l2: float = FIXED_METHOD_L2

    def _loss(self) -> Loss:
        raise NotImplementedError

    def _constraint(self, l2: float | str, label_bound: float | None = None):
        return Unconstrained()

    def _label_bound(self) -> float | None:
        return None

    def _validated(self, X, y, **check) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
        """:meth:`_validated_rows` with the features as an array (a dask array stays one)."""
        X, y, leaks = self._validated_rows(X, y, **check)
        return X.X if isinstance(X, ValidatedRows) else X, y, leaks

    def _validated_rows(self, X, y, **check) -> tuple[ValidatedRows, np.ndarray, tuple[str, ...]]:
        """Validate the parameters and the data once: (X's validated rows, y, the input's own leak reasons).

        scikit-learn checks everything but X's finiteness, which the pass that computes the row norms checks
        (:func:`~dpconvex.data.checks.check_rows`: the norms travel with X to the problem, which reads no row again),
        raising scikit-learn's own message.  Should scikit-learn refuse the input, its full validation runs again, so
        that the error is the one it raised first (a non-finite X before a fault of y).  With ``y_numeric=True``
        (regressors) y comes back as float64.  A dask array or DataFrame X stays a dask array (checked block by block
        when the mechanism's data are built, :mod:`dpconvex.estimators.dask_fit`), and so does y: its conversion to
        float runs on the cluster.
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        leaks = input_leaks(X)  # e.g. a data-dependent PublicSchemaTransformer's output
        if is_dask_collection(X):
            # before any pass over the data (even a DataFrame's partition lengths); a classifier's K-class
            # loss is smooth exactly when its binary loss is
            require_backend(self.method, X, self._loss())
            X, names = dask_features(X)
            self.n_features_in_ = X.shape[1]
            if names is not None and all(isinstance(name, str) for name in names):
                self.feature_names_in_ = np.asarray(names, dtype=object)
            elif hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            y = dask_targets(y, X)
            return X, dask_real_targets(y) if check.get("y_numeric") else y, leaks
        check_frame(X)
        try:
            checked, y = validate_data(self, X, y, ensure_min_samples=2, ensure_all_finite=False, **check)
        except ValueError:
            with warnings.catch_warnings():  # the first call's warnings were shown
                warnings.simplefilter("ignore")
                validate_data(self, X, y, ensure_min_samples=2, **check)
            raise
        name = type(self).__name__
        rows = check_rows(checked, refuse=lambda bad: assert_all_finite(checked[bad], estimator_name=name,
                                                                        input_name="X"))
        return rows, np.asarray(y, dtype=float) if check.get("y_numeric") else y, leaks

    def _fit_private(self, X: ValidatedRows, y: np.ndarray, loss: Loss, leaks: tuple[str, ...] = ()) -> None:
        """Train ``loss`` on validated X (its rows, or a dask array), y.

        ``leaks`` name data-dependent choices the caller made (each voids the guarantee).

        Sets ``coef_`` (shape (d,), or (K, d) for a K-class loss), ``intercept_`` (a float, or (K,)),
        ``l2_regularization_``, ``privacy_report_`` and ``_released_intercept_`` (the private mean: drawn, or
        ``_kept_intercept``, set for one refit by :func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`).
        """
        n, dimension = X.shape
        leaks = list(leaks)
        on_cluster = is_dask_collection(X)
        # the ledger's filter, before any pass over the data that computes a release (docs/privacy-ledger.md)
        filtered, planned = self._ledger_budget(), None
        if filtered and (leaks or self.data_norm == "from_data"):  # no guarantee: refused
            self._check_ledger(PrivacyCurve.pair(math.inf, self.delta))
        if filtered and self.fit_intercept == PRIVATE_MEAN:  # the model's plan depends on the mean: the target
            share = mean_epsilon(n, self.epsilon)
            planned = self._check_ledger(PrivacyCurve.pair(share + (self.epsilon - share), self.delta))
        data_norm = self.data_norm
        if data_norm == "from_data":
            # Explicit opt-in: the bound is read from the private data, so no guarantee remains.
            largest = dask_largest_row_norm(X) if on_cluster else X.norms.max()
            data_norm = float(max(largest, np.finfo(float).tiny))
            leaks.append(DATA_NORM_FROM_DATA)
        # Intercept = an extra constant feature equal to data_norm. Clip the original rows to
        # data_norm first; augmented rows then have norm <= √2·data_norm, the certificate's bound.
        column = not isinstance(self.fit_intercept, str) and bool(self.fit_intercept)  # PRIVATE_MEAN: no column
        norm_bound = float(np.sqrt(2.0) * data_norm) if column else float(data_norm)
        epsilon, label_bound, random_state, mean = self.epsilon, self._label_bound(), self.random_state, None
        if self.fit_intercept == PRIVATE_MEAN:
            if on_cluster:  # clipped on the cluster; the count of clipped targets goes to the warning
                y = dask_clipped_targets(y, label_bound, strict=self.strict)
            else:
                y, _ = enforce_label_bound(y, label_bound, strict=self.strict)  # the count stays in the warning
            random_state = make_rng(self.random_state)  # one stream: the intercept's noise, then the model's
            mean = vars(self).pop("_kept_intercept", None)  # fit_with_discovery's refit: kept, for this fit only
            if mean is None:
                mean = private_mean(y, label_bound, mean_epsilon(y.shape[0], self.epsilon), random_state)
            y, label_bound, epsilon = y - mean.value, label_bound + abs(mean.value), self.epsilon - mean.epsilon
        if on_cluster:  # clipped block by block, the intercept's column appended on the workers
            design = dask_data(X, y, data_norm=data_norm, label_bound=label_bound,
                               fit_intercept=column, strict=self.strict,
                               column_names=getattr(self, "feature_names_in_", None), loss=loss)
            y = None
        elif column:
            # the count stays in the warning
            clipped, _ = enforce_norm_bound(X.X, data_norm, strict=self.strict, norms=X.norms)
            design = np.hstack([clipped, np.full((n, 1), data_norm)])  # validated again, in its norms' one pass
        else:
            design = X
        l2 = self.l2_regularization
        if l2 == "auto" and self.method != "auto":
            l2 = self._fixed_method_l2
        spec = REGISTRY[self.method]
        # Estimators without an option (e.g. PrivateLinearSVC has no ``iterations``) use its default.
        options = {name: getattr(self, name, "auto") for name in spec.options}
        for name in (name for name in OPTIMISER_OPTIONS if name not in options):
            if getattr(self, name, "auto") != "auto":
                users = [m for m, names in METHOD_OPTIONS.items() if name in names]
                raise ValueError(f"The '{name}' parameter applies to method in {users}, not {self.method!r}; "
                                 f"leave it 'auto'.")
        constraint = self._constraint(l2, label_bound)
        if spec.bounded_domain and not constraint.is_constrained:
            constraint = "auto"
        problem = Problem.from_arrays(
            design, y, loss=loss, l2_regularization=l2, epsilon=epsilon, delta=self.delta, data_norm=norm_bound,
            label_bound=label_bound, constraint=constraint, strict=self.strict,
            require_smooth=spec.requires_smooth,
        )
        plan = spec.plan(problem, **options)
        if filtered and mean is None:  # the curve the run will certify, from its plan
            inner = plan.plan if isinstance(plan, AutoPlan) else plan
            planned = self._check_ledger(planned_curve(inner.event, self.delta, bound=getattr(inner, "bound", None),
                                                       target_epsilon=problem.target.epsilon))
        for reason in leaks:  # after the checks that raise: a refused fit releases nothing
            warnings.warn(f"{reason}: the release has no differential-privacy guarantee (epsilon = inf)",
                          PrivacyLeakWarning, stacklevel=4)
        result = spec.train(problem, plan, random_state)
        certificate = result.certificate if mean is None else compose_with_mean(result.certificate, mean)
        for reason in leaks:
            certificate = certificate.without_guarantee(reason)
        if planned is not None and not covers(planned, certificate):  # never: tests/test_ledger_plan.py
            self._forget_fit()
            raise RuntimeError(f"the run certified {certificate_curve(certificate)!r}, not the release the ledger's "
                               f"filter checked ({planned!r}); nothing was released or recorded.")
        # One column per class for a K-class loss (row-major d×K, losses_multiclass); (d + 1) rows with the intercept.
        weights = result.coef.reshape(problem.n_features, -1)
        if weights.shape[1] == 1:
            weights = weights[:, 0]
        self.coef_ = weights[:dimension].T.copy()
        # The constant feature equals data_norm, so its weight times data_norm is the intercept.
        intercept = weights[dimension] * data_norm if column else np.zeros(weights.shape[1:])
        if mean is not None:
            intercept = intercept + mean.value
        self.intercept_ = float(intercept) if np.ndim(intercept) == 0 else np.asarray(intercept, dtype=float)
        self.l2_regularization_ = float(result.certificate.assumptions.get("l2_regularization", l2))
        self.privacy_report_, self._released_intercept_ = certificate, mean
        if self.ledger is not None:
            self.ledger.record(certificate, f"{type(self).__name__} fit {len(self.ledger.releases) + 1}",
                               self.ledger_partition)

    def _ledger_budget(self) -> bool:
        """Whether a budget filter applies (``ValueError`` for a ``ledger_partition`` without a ledger)."""
        if self.ledger is None and self.ledger_partition is not None:
            raise ValueError("ledger_partition names a partition of a ledger's records: give ledger= too.")
        return self.ledger is not None and self.ledger.budget is not None

    def _check_ledger(self, planned: PrivacyCurve) -> PrivacyCurve:
        """The ledger's filter on ``planned``; a refusal leaves no fitted attribute (and the releases as they were)."""
        try:
            self.ledger.check(planned, self.ledger_partition)
        except (BudgetExceededError, ValueError):
            self._forget_fit()
            raise
        return planned

    def _forget_fit(self) -> None:
        """Remove every fitted attribute (ending in ``_``, not a dunder): a refused fit leaves none, stale or new."""
        for name in [name for name in vars(self) if name.endswith("_") and not name.startswith("__")]:
            delattr(self, name)

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self)
        check_frame(X)
        X = validate_data(self, X, reset=False)
        return X @ self.coef_.T + self.intercept_


def labels_from_scores(scores: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The classifiers' prediction rule: ``classes[1]`` where a binary margin is > 0, else ``classes[0]``; with
    K columns of scores, the class of the highest (the first on a tie).

    Parameters
    ----------
    scores : ndarray
        Margins, shape (n,), or K-class scores, shape (n, K).
    classes : ndarray
        The sorted label set.

    Returns
    -------
    ndarray
        The predicted labels, shape (n,).
    """
    return classes[(scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(axis=1)]


class PrivateClassifier(ClassifierMixin, PrivateLinearModel):
    """Shared classifier logic: the public label set, then the binary or the K-class loss.

    Attributes
    ----------
    classes_ : ndarray
        The sorted label set (declared, or read from y), besides those of :class:`PrivateLinearModel`.
    """

    _parameter_constraints: dict = {**COMMON_CONSTRAINTS, "classes": PRIVATE_CLASSES_RULES}

    def _multiclass_loss(self, n_classes: int) -> Loss:
        raise NotImplementedError

    def fit(self, X, y):
        """Fit on X (n, d) and labels y (any hashable, sortable type; two or more classes); returns self."""
        if isinstance(self.classes, str) and self.classes == "private":  # released first, composed in
            return fit_with_private_classes(self, X, y)
        X, y, leaks = self._validated_rows(X, y)
        if is_dask_collection(y):
            self.classes_, from_y = dask_label_set(y, None if self.classes is None else self._declared_classes())
            read = (self._labels_read(self.classes_),) if from_y else ()
            labels = dask_encoded_labels(y, self.classes_)
        else:
            self.classes_, read = self._label_set(y)
            labels = encode_labels(y, self.classes_)
        # the binary loss on labels ±1 (the second class positive), else the K-class loss on indices
        loss = self._loss() if self.classes_.size == 2 else self._multiclass_loss(self.classes_.size)
        self._fit_private(X, labels, loss, read + leaks)
        return self

    def _label_set(self, y: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
        """The sorted label set (declared, or read from y) and, if read from y, why that voids the guarantee."""
        if self.classes is not None:
            declared = self._declared_classes()
            outside = ~np.isin(y, declared)
            if outside.any():
                found = list(dict.fromkeys(y[outside].tolist()))[:5]
                raise ValueError(f"y holds labels outside classes={declared.tolist()!r}: {found}; add them to "
                                 "classes, or remove those records.")
            return declared, ()
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"y holds a single class ({classes.tolist()!r}); a classifier needs two or more: "
                             "declare the label set with classes=[...] (a declared class may be absent from y).")
        return classes, (self._labels_read(classes),)

    @staticmethod
    def _labels_read(classes: np.ndarray) -> str:
        """Why a label set read from the private y voids the guarantee (:data:`LABELS_FROM_DATA`)."""
        listed = classes.tolist()
        shown = "{" + ", ".join(repr(label) for label in listed) + "}"
        return LABELS_FROM_DATA.format(labels=shown, declared=listed)

    def _declared_classes(self) -> np.ndarray:
        """The declared ``classes``, sorted (a ``ValueError`` naming it unless ≥ 2 distinct sortable labels)."""
        declared = np.asarray(self.classes)
        if declared.ndim == 1 and declared.dtype == object and any(label is None for label in declared):
            raise ValueError(f"The 'classes' parameter holds None; labels must be values of one sortable type "
                             f"(e.g. all strings or all integers); got {self.classes!r}.")
        try:
            distinct = np.unique(declared).size if declared.ndim == 1 else -1
        except TypeError as error:  # labels that do not sort together, e.g. 1 and "a"
            raise ValueError(f"The 'classes' parameter must hold labels of one sortable type (e.g. all strings "
                             f"or all integers); got {self.classes!r}.") from error
        if declared.ndim != 1 or declared.size < 2 or distinct != declared.size:
            raise ValueError("The 'classes' parameter must be None or a sequence of at least two distinct "
                             f"labels; got {self.classes!r}.")
        return np.unique(declared)

    def decision_function(self, X) -> np.ndarray:
        """Scores: the signed margin wᵀx + b (n,) for two classes (positive means ``classes_[1]``),
        else one column per class (n, K)."""
        return self._decision(X)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels: the sign of the margin (two classes) or the highest score."""
        return labels_from_scores(self.decision_function(X), self.classes_)

    def _probabilities(self, X) -> np.ndarray:
        """Logistic-link probabilities (n, K), rows summing to 1: expit for two classes, softmax otherwise."""
        scores = self.decision_function(X)
        if scores.ndim == 2:
            return softmax(scores, axis=1)
        positive = expit(scores)
        return np.column_stack([1.0 - positive, positive])
