"""scikit-learn estimators over the private mechanisms.

``__init__`` only stores keyword arguments; ``fit`` validates them (``_parameter_constraints``),
never changes them, and stores what it learned in attributes ending in ``_``:
``coef_``, ``intercept_``, ``classes_`` (classifiers), ``n_features_in_`` and
``privacy_report_`` (the :class:`~dpconvex.certificate.PrivacyCertificate`).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import enforce_norm_bound, input_leaks
from ._params import Instance, Interval, Options, validate_params
from .constraints import L2Ball, Unconstrained
from .exceptions import PrivacyLeakWarning
from .losses import AbsoluteErrorLoss, HingeLoss, HuberizedHingeLoss, Loss, LogisticLoss, SquaredLoss, row_norms
from .mechanisms import METHODS

__all__ = ["PrivateLogisticRegression", "PrivateHuberSVC", "PrivateRidge", "PrivateLinearSVC", "PrivateLADRegressor"]


#: Why ``data_norm="from_data"`` voids the certificate (its warning, and its note via ``without_guarantee``).
DATA_NORM_FROM_DATA = (
    "data_norm='from_data' read the norm bound from the private data (the largest row norm, which one "
    "record can set); give data_norm as a number to keep the guarantee"
)

#: Why ``classes=None`` voids the certificate: the label set was read from the private y (one record
#: can add or change a label), exactly like ``data_norm="from_data"``.
LABELS_FROM_DATA = (
    "classes=None read the label set {{{a}, {b}}} from the private labels y (one record can change it); "
    "pass classes=[{a}, {b}] to keep the guarantee"
)

_COMMON_CONSTRAINTS = {
    "epsilon": [Interval(0.0, np.inf, "neither")],
    "delta": [Interval(0.0, 1.0, "neither")],
    "data_norm": [Interval(0.0, np.inf, "neither"), Options(("from_data",))],
    "l2_regularization": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
    "method": [Options(tuple(METHODS))],
    "iterations": [Interval(1, np.inf, "left", integral=True), Options(("auto", "theorem4"))],
    "step_size": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
    "batch_size": [Interval(1, np.inf, "left", integral=True), Options(("auto",))],
    "epochs": [Interval(1, np.inf, "left", integral=True), Options(("auto",))],
    "fit_intercept": [Options((True, False))],
    "strict": [Options((True, False))],
    "random_state": [Options((None,)), Interval(0, np.inf, "left", integral=True),
                     Instance((np.random.Generator, np.random.RandomState))],
}

#: The binary classifiers' ``classes``: None (read from y) or the two labels.
_CLASSES_RULES = [Options((None,)), Instance((list, tuple, np.ndarray))]


#: Which optimiser hyperparameters each method reads; setting another one is an error.
METHOD_OPTIONS = {
    "noisy_gd": ("step_size", "iterations"),
    "noisy_sgd": ("step_size", "batch_size", "epochs"),
    "auto": (),
    "nsgd": ("step_size", "batch_size", "epochs"),
    "rsgd_ar": ("step_size", "batch_size", "epochs"),
    "outpert_gd": ("step_size", "epochs"),
    "pnsgd": ("step_size",),
    "sco_noisy_sgd": ("step_size",),
}

#: Methods that choose their own domain: an unconstrained model gets the mechanism's data-independent
#: ball (``constraint="auto"``, radius √(2ℓ(0)/λ), which holds the minimiser).  pnsgd and
#: sco_noisy_sgd need a bounded domain; noisy_sgd and auto project on it because it costs nothing.
BOUNDED_DOMAIN_METHODS = frozenset({"pnsgd", "sco_noisy_sgd", "noisy_sgd", "auto"})

#: λ of ``l2_regularization="auto"`` for every method but ``"auto"`` (which chooses its own by a
#: stated rule, :mod:`dpconvex.mechanisms.auto`): the value fixed in Chen, Lee, Kifer 2019 §5.1.
FIXED_METHOD_L2 = 1e-3


class _PrivateLinearModel(BaseEstimator):
    """Shared fit logic: a linear model w (and intercept) trained by a private mechanism."""

    _parameter_constraints: dict = _COMMON_CONSTRAINTS

    def _loss(self) -> Loss:
        raise NotImplementedError

    def _constraint(self, l2: float):
        return Unconstrained()

    def _label_bound(self) -> float | None:
        return None

    def _fit_private(self, X: np.ndarray, y: np.ndarray, leaks: tuple[str, ...] = ()) -> None:
        """Train on validated X, y; ``leaks`` name data-dependent choices the caller made (each voids the guarantee)."""
        loss = self._loss()
        n, dimension = X.shape
        leaks = list(leaks)
        data_norm = self.data_norm
        if data_norm == "from_data":
            # Explicit opt-in: the bound is read from the private data, so no guarantee remains.
            data_norm = float(max(row_norms(X).max(), np.finfo(float).tiny))
            leaks.append(DATA_NORM_FROM_DATA)
        if self.fit_intercept:
            # Intercept = an extra constant feature equal to data_norm. Clip the original rows to
            # data_norm first; augmented rows then have norm <= √2·data_norm, the certificate's bound.
            X, _ = enforce_norm_bound(X, data_norm, strict=self.strict)  # the count stays in the warning
            design = np.hstack([X, np.full((n, 1), data_norm)])
            norm_bound = float(np.sqrt(2.0) * data_norm)
        else:
            design, norm_bound = X, float(data_norm)
        l2 = self.l2_regularization
        if l2 == "auto" and self.method != "auto":
            l2 = FIXED_METHOD_L2
        # Estimators without an option (e.g. PrivateLinearSVC has no ``iterations``) use its default.
        options = {name: getattr(self, name, "auto") for name in METHOD_OPTIONS[self.method]}
        for name in {"step_size", "iterations", "batch_size", "epochs"} - set(options):
            if getattr(self, name, "auto") != "auto":
                users = [m for m, names in METHOD_OPTIONS.items() if name in names]
                raise ValueError(f"The '{name}' parameter applies to method in {users}, not {self.method!r}; "
                                 f"leave it 'auto'.")
        constraint = self._constraint(l2)
        if self.method in BOUNDED_DOMAIN_METHODS and not constraint.is_constrained:
            constraint = "auto"
        for reason in leaks:  # after the checks that raise: a refused fit releases nothing
            warnings.warn(f"{reason}: the release has no differential-privacy guarantee (epsilon = inf)",
                          PrivacyLeakWarning, stacklevel=3)
        result = METHODS[self.method](
            design,
            y,
            loss=loss,
            l2_regularization=l2,
            epsilon=self.epsilon,
            delta=self.delta,
            data_norm=norm_bound,
            label_bound=self._label_bound(),
            constraint=constraint,
            strict=self.strict,
            random_state=self.random_state,
            **options,
        )
        self.coef_ = result.coef[:dimension].copy()
        self.l2_regularization_ = float(result.certificate.assumptions.get("l2_regularization", l2))
        # The constant feature equals data_norm, so its weight times data_norm is the intercept.
        self.intercept_ = float(result.coef[dimension] * data_norm) if self.fit_intercept else 0.0
        certificate = result.certificate
        for reason in leaks:
            certificate = certificate.without_guarantee(reason)
        self.privacy_report_ = certificate

    def _decision(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return X @ self.coef_ + self.intercept_


class _PrivateBinaryClassifier(ClassifierMixin, _PrivateLinearModel):
    _parameter_constraints: dict = {**_COMMON_CONSTRAINTS, "classes": _CLASSES_RULES}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit on X (n, d) and binary labels y; returns self."""
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        encoded = input_leaks(X)  # e.g. a data-dependent PublicSchemaTransformer's output
        X, y = validate_data(self, X, y, ensure_min_samples=2)
        self.classes_, leaks = self._label_set(y)
        signed = np.where(y == self.classes_[1], 1.0, -1.0)
        self._fit_private(np.asarray(X, dtype=float), signed, leaks + encoded)
        return self

    def _label_set(self, y: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
        """The sorted label set (declared, or read from y) and, if read from y, why that voids the guarantee."""
        if self.classes is not None:
            declared = np.asarray(self.classes)
            if declared.ndim != 1 or declared.size != 2 or np.unique(declared).size != 2:
                raise ValueError(f"The 'classes' parameter must be None or two distinct labels; got {self.classes!r}.")
            outside = ~np.isin(y, declared)
            if outside.any():
                found = list(dict.fromkeys(y[outside].tolist()))[:5]
                raise ValueError(f"y holds labels outside classes={declared.tolist()!r}: {found}.")
            return np.unique(declared), ()
        target_type = type_of_target(y, input_name="y", raise_unknown=True)
        classes = np.unique(y)
        if target_type != "binary" or classes.size != 2:
            raise ValueError(
                "Only binary classification is supported: y must hold exactly two classes; got "
                f"target type {target_type!r} with {classes.size} class(es)."
            )
        first, second = (repr(label) for label in classes.tolist())
        return classes, (LABELS_FROM_DATA.format(a=first, b=second),)

    def decision_function(self, X) -> np.ndarray:
        """Signed margin wᵀx + b; positive means ``classes_[1]``."""
        return self._decision(X)

    def predict(self, X) -> np.ndarray:
        """Predicted class labels."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class PrivateLogisticRegression(_PrivateBinaryClassifier):
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
    method : {"auto", "noisy_gd", "noisy_sgd", "rsgd_ar", "nsgd", "outpert_gd", "pnsgd", "sco_noisy_sgd"}, default="auto"
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
        balancing averaged SGD's error terms, :func:`dpconvex.mechanisms.noisy_sgd.default_epochs`).  Each method reads only its own
        options; setting another method's option raises ``ValueError``.
    fit_intercept : bool, default=False
        Learn an intercept, as a constant feature equal to ``data_norm``; the certificate then uses
        the augmented norm bound √2·data_norm, which doubles the noise variance.  Off by default:
        one-hot encoded data (as :func:`dpconvex.datasets.load_adult`) already spans a constant.
    classes : None or sequence of two labels, default=None
        The label set, declared in advance; ``classes_`` holds it sorted, and the second label is
        the positive class.  A label of ``y`` outside them raises ``ValueError``; ``y`` may hold only
        one of them.  ``None`` reads the two labels from the private ``y`` (one record can change
        the set, e.g. when a class has a single record), so, like ``data_norm="from_data"``, the
        certificate says ε = inf with the reason and ``fit`` emits a ``PrivacyLeakWarning``.
    strict : bool, default=False
        Raise instead of clipping rows above ``data_norm``.
    random_state : None, int or Generator, default=None
        ``None`` draws noise from an OS-seeded generator (use this for releases); a seed makes
        experiments reproducible.

    Attributes
    ----------
    coef_, intercept_, classes_, n_features_in_, privacy_report_
        As in the module docstring.
    l2_regularization_ : float
        The λ the model was trained with (``l2_regularization`` itself is never changed).
    """

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, l2_regularization="auto",
                 method="auto", iterations="auto", step_size="auto", batch_size="auto", epochs="auto",
                 fit_intercept=False, classes=None,
                 strict=False, random_state=None):
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

    def _loss(self) -> Loss:
        return LogisticLoss()

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities from the logistic link."""
        from scipy.special import expit

        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])


class PrivateHuberSVC(_PrivateBinaryClassifier):
    """Differentially private linear SVM with the huberised hinge loss (Chen et al. 2019 §5.1).

    Parameters are those of :class:`PrivateLogisticRegression` (including ``classes``), plus
    ``huber_h`` (h > 0, default 0.5 as in Chen et al.).
    """

    _parameter_constraints = {**_PrivateBinaryClassifier._parameter_constraints,
                              "huber_h": [Interval(0.0, np.inf, "neither")]}

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, l2_regularization="auto",
                 method="auto", iterations="auto", step_size="auto", batch_size="auto", epochs="auto",
                 fit_intercept=False, classes=None,
                 huber_h=0.5, strict=False, random_state=None):
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

    def _loss(self) -> Loss:
        return HuberizedHingeLoss(self.huber_h)


class PrivateRidge(RegressorMixin, _PrivateLinearModel):
    """Differentially private ridge regression (squared loss, L2 ball constraint).

    Parameters are those of :class:`PrivateLogisticRegression` (but ``l2_regularization`` is a
    number, default 0.05: the squared loss's sensitivity 2(R·X + Y)·X grows with the radius
    R = Y/√λ of the ball that contains the minimiser, so a weak regulariser costs far more noise
    than for the bounded-gradient classifiers), plus:

    label_bound : float, default=1.0
        Declared bound on |y|; larger targets are clipped with a ``PrivacyLeakWarning``.
    radius : float or "auto", default="auto"
        Radius R of the L2 ball the iterates are projected on (the squared loss needs a bounded
        domain for a finite sensitivity).  ``"auto"`` is label_bound/√λ, which contains the ridge
        minimiser (λ/2‖w*‖² ≤ f(w*) ≤ f(0) ≤ Y²/2).
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "l2_regularization": [Interval(0.0, np.inf, "neither")],  # it sets the ball, hence the sensitivity
        "label_bound": [Interval(0.0, np.inf, "neither")],
        "radius": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
    }

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, label_bound=1.0,
                 l2_regularization=0.05, radius="auto", method="auto", iterations="auto",
                 step_size="auto", batch_size="auto", epochs="auto", fit_intercept=False, strict=False, random_state=None):
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

    def _loss(self) -> Loss:
        return SquaredLoss()

    def _label_bound(self) -> float:
        return self.label_bound

    def _constraint(self, l2: float):
        radius = self.label_bound / np.sqrt(l2) if self.radius == "auto" else self.radius
        return L2Ball(radius)

    def fit(self, X, y):
        """Fit on X (n, d) and real targets y; returns self."""
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        leaks = input_leaks(X)
        X, y = validate_data(self, X, y, ensure_min_samples=2, y_numeric=True)
        self._fit_private(np.asarray(X, dtype=float), np.asarray(y, dtype=float), leaks)
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted targets wᵀx + b."""
        return self._decision(X)


# ----------------------------------------------------------------------------- non-smooth losses
_NONSMOOTH_CONSTRAINTS = {
    **{name: rules for name, rules in _COMMON_CONSTRAINTS.items() if name not in ("iterations", "batch_size", "epochs")},
    "l2_regularization": [Interval(0.0, np.inf, "left")],
    "radius": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
}


class _NonSmoothModel:
    """Shared parts of the non-smooth-loss estimators: their parameters and a declared ball W of radius ``radius``."""

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, radius=1.0, l2_regularization=0.0,
                 method="auto", step_size="auto", fit_intercept=False, strict=False, random_state=None):
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

    def _constraint(self, l2: float):
        if self.radius == "auto":
            if not l2 > 0:
                raise ValueError("radius='auto' needs l2_regularization > 0 (radius sqrt(2 loss(0)/l2)); "
                                 "give radius as a number.")
            return Unconstrained()  # the mechanism then uses its own ball (BOUNDED_DOMAIN_METHODS)
        return L2Ball(self.radius)


class PrivateLinearSVC(_NonSmoothModel, _PrivateBinaryClassifier):
    """Differentially private linear SVM (hinge loss) by noisy SGD with the fresh-sample rule.

    Algorithm 1 of Arora, Marinov, Ullah (:func:`dpconvex.mechanisms.sco_noisy_sgd`): one noisy
    (sub)gradient per fresh record, noise-only steps for seen ones, average of the fresh-step
    iterates, certified by the single-use bound (each record enters at most one Gaussian step;
    :mod:`dpconvex.accounting.private_sco`).

    Parameters
    ----------
    epsilon, delta, data_norm, fit_intercept, strict, random_state
        As in :class:`PrivateLogisticRegression`.
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
    classes : None or sequence of two labels, default=None
        As in :class:`PrivateLogisticRegression`: declare the label set to keep the guarantee
        (``None`` reads it from ``y`` and voids it, ε = inf).
    """

    _parameter_constraints = {**_NONSMOOTH_CONSTRAINTS, "classes": _CLASSES_RULES}

    def __init__(self, *, epsilon=1.0, delta=1e-8, data_norm=1.0, radius=1.0, l2_regularization=0.0,
                 method="auto", step_size="auto", fit_intercept=False, classes=None, strict=False,
                 random_state=None):
        super().__init__(epsilon=epsilon, delta=delta, data_norm=data_norm, radius=radius,
                         l2_regularization=l2_regularization, method=method, step_size=step_size,
                         fit_intercept=fit_intercept, strict=strict, random_state=random_state)
        self.classes = classes

    def _loss(self) -> Loss:
        return HingeLoss()


class PrivateLADRegressor(_NonSmoothModel, RegressorMixin, _PrivateLinearModel):
    """Differentially private least-absolute-deviations regression (loss |wᵀx − y|).

    Trained like :class:`PrivateLinearSVC` (Arora, Marinov, Ullah, Algorithm 1).  The subgradient
    sign(wᵀx − y)·x is bounded by ``data_norm`` whatever the target, so targets are never clipped
    and no label bound is needed.  Parameters as in :class:`PrivateLinearSVC`, except ``classes``.
    """

    _parameter_constraints = _NONSMOOTH_CONSTRAINTS

    def _loss(self) -> Loss:
        return AbsoluteErrorLoss()

    def fit(self, X, y):
        """Fit on X (n, d) and real targets y; returns self."""
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        leaks = input_leaks(X)
        X, y = validate_data(self, X, y, ensure_min_samples=2, y_numeric=True)
        self._fit_private(np.asarray(X, dtype=float), np.asarray(y, dtype=float), leaks)
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted targets wᵀx + b."""
        return self._decision(X)
