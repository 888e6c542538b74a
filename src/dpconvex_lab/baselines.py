"""Peer baselines for the benchmarks: non-private ERM, the majority label, objective perturbation,
DP-SGD (:mod:`.dpsgd`, re-exported here: ``sgd_ma`` accounted under add/remove neighbours with the
RDP moments accountant, ``sgd_ma_replace_one`` under replace-one with dp-accounting's PLD), and
diffprivlib's logistic regression.

These are *reference points* for ``dpconvex bench``, not part of the core library: each fits the
same objective as dpconvex, f(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + (λ/2)‖w‖² with no intercept, and returns
a :class:`BaselineFit` naming the privacy accounting that covers it.  Every function has the
signature ``(X, y, *, loss, epsilon, delta, l2_regularization, data_norm=1.0, random_state=None)``
(:func:`sgd_ma` adds optimiser options) and :data:`BASELINES` maps names to them:

X : array-like of shape (n, d) — rows with ‖x‖₂ ≤ ``data_norm`` (the private baselines clip or
    rely on clipping); y : array-like of shape (n,) — labels ±1 for the binary classification
    losses, class indices 0..K−1 for the K-class losses of :mod:`dpconvex.objectives.multiclass`
    (``loss.check_labels`` says which; :func:`nonprivate`, :func:`sgd_ma` and
    :func:`sgd_ma_replace_one` accept them, the others are binary);
loss : :class:`dpconvex.objectives.losses.Loss`; epsilon, delta : the (ε, δ) target (ignored by the two
non-private baselines, validated by the others: ``ValueError`` naming the parameter);
l2_regularization : λ ≥ 0; data_norm : the row-norm bound X of the privacy analyses;
random_state : int, ``numpy.random.Generator`` or None (OS entropy) for the privacy noise.

``coef`` has ``loss.parameter_dimension(d)`` entries: d, or d·K (W = ``coef.reshape(d, K)``,
row-major, as the K-class losses lay it out).  Predictions are ``sign(X @ coef + intercept)``
for d entries and the argmax class of X W for d·K (:meth:`BaselineFit.predict`).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize

from dpconvex.accounting._checks import check_epsilon
from dpconvex.data.checks import check_privacy_budget, enforce_norm_bound
from dpconvex.objectives.constraints import Unconstrained
from dpconvex.objectives.losses import LogisticLoss, Loss
from dpconvex_lab.baseline_fit import BaselineFit, BaselineUnavailable, RandomState, check_common

# DP-SGD lives in .dpsgd; re-exported here.
from dpconvex_lab.dpsgd import (  # noqa: F401
    NEIGHBOURING,
    SGD_MA_ORDERS,
    _clipped_sum_fn,
    _quiet_absl,
    calibrate_sgd_ma_noise,
    calibrate_sgd_replace_one_noise,
    sgd_ma,
    sgd_ma_epsilon,
    sgd_ma_replace_one,
    sgd_replace_one_epsilon,
)

__all__ = [
    "BASELINES", "BaselineFit", "BaselineUnavailable", "NEIGHBOURING", "SGD_MA_ORDERS", "calibrate_sgd_ma_noise",
    "calibrate_sgd_replace_one_noise", "diffprivlib_logistic", "majority", "nonprivate", "objpert",
    "objpert_noise_std", "objpert_regularizer", "sgd_ma", "sgd_ma_epsilon", "sgd_ma_replace_one",
    "sgd_replace_one_epsilon",
]

# the deterministic solver



def _minimize(fun_grad: Callable[[NDArray], tuple[float, NDArray]], dimension: int) -> NDArray[np.float64]:
    """L-BFGS-B from 0 in R^dimension to high precision (gtol 1e-10; stops earlier only at float resolution)."""
    result = minimize(fun_grad, np.zeros(dimension), jac=True, method="L-BFGS-B", options={
        "maxiter": 20_000, "maxcor": 20, "gtol": 1e-10, "ftol": 4 * np.finfo(float).eps, "maxls": 50})
    return np.asarray(result.x, dtype=float)


def _erm_fun_grad(loss: Loss, X: NDArray, y: NDArray, quad: float,
                  linear: NDArray | None = None) -> Callable[[NDArray], tuple[float, NDArray]]:
    """w ↦ (mean loss + (quad/2)‖w‖² + linearᵀw, gradient), one pass over X per call."""
    lin = np.zeros(loss.parameter_dimension(X.shape[1])) if linear is None else linear

    def fun_grad(w: NDArray) -> tuple[float, NDArray]:
        value = float(np.mean(loss.values(w, X, y))) + 0.5 * quad * float(w @ w) + float(lin @ w)
        return value, loss.mean_gradient(w, X, y) + quad * w + lin

    return fun_grad


# non-private references


def nonprivate(X: ArrayLike, y: ArrayLike, *, loss: Loss, epsilon: float, delta: float,
               l2_regularization: float, data_norm: float = 1.0,
               random_state: RandomState = None) -> BaselineFit:
    """Exact minimiser of f(w) = mean loss + (λ/2)‖w‖² (no intercept); NOT private.

    Parameters are the common ones of the module docstring.

    For the logistic loss with λ > 0 this is scikit-learn's ``LogisticRegression(C=1/(nλ),
    fit_intercept=False, solver="lbfgs")``: scikit-learn minimises C·Σᵢ ℓᵢ + ½‖w‖² (its
    ``_logistic.py`` scales the penalty by 1/(C·n)), and dividing by C·n gives
    mean ℓ + (1/(2Cn))‖w‖² = f(w) exactly when C = 1/(nλ).  Other losses (or λ = 0, or a single
    class) use SciPy's L-BFGS-B on f with the loss's own mean gradient, in
    ``loss.parameter_dimension(d)`` coordinates: for the K-class losses of
    :mod:`dpconvex.objectives.multiclass` (labels 0..K−1) f is mean ℓ + (λ/2)‖W‖²_F over W ∈ R^{d×K},
    which for :class:`~dpconvex.objectives.multiclass.MultinomialLogisticLoss` is the objective of
    scikit-learn's multinomial ``LogisticRegression(C=1/(nλ), fit_intercept=False)`` (the same
    K columns, none fixed to 0).  ``epsilon``, ``delta``, ``data_norm`` and ``random_state`` are
    ignored.

    Returns
    -------
    BaselineFit
        ``coef`` of length ``loss.parameter_dimension(d)``; ``bound = "none (not private)"``.
    """
    X, y = check_common(X, y, loss, l2_regularization, data_norm)
    n, d = X.shape
    if isinstance(loss, LogisticLoss) and l2_regularization > 0 and np.unique(y).size == 2:
        from sklearn.linear_model import LogisticRegression

        model = LogisticRegression(C=1.0 / (n * l2_regularization), fit_intercept=False,
                                   solver="lbfgs", tol=1e-10, max_iter=10_000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a ConvergenceWarning at float resolution is harmless
            model.fit(X, y)
        # classes_ = [-1, +1]: coef_ is for +1, i.e. the margin loss log(1 + exp(−y·wᵀx)).
        coef = np.asarray(model.coef_, dtype=float).ravel()
        how = "scikit-learn LogisticRegression(C=1/(n·λ), fit_intercept=False, solver='lbfgs')"
    else:
        coef = _minimize(_erm_fun_grad(loss, X, y, l2_regularization), loss.parameter_dimension(d))
        how = "scipy L-BFGS-B on mean loss + (λ/2)‖w‖²"
    return BaselineFit(coef=coef, bound="none (not private)", note=f"{how}; not private.")


def majority(X: ArrayLike, y: ArrayLike, *, loss: Loss, epsilon: float, delta: float,
             l2_regularization: float, data_norm: float = 1.0,
             random_state: RandomState = None) -> BaselineFit:
    """Predict the majority training label everywhere (ties → +1); NOT private (common parameters).

    ``coef`` is zero and ``intercept`` is the majority label, so ``sign(Xw + intercept)`` is that
    label.  The label count is read from the data without noise.
    """
    X, y = check_common(X, y, loss, l2_regularization, data_norm)
    if not loss.classification:
        raise ValueError(f"majority needs a binary classification loss (labels in {{-1, +1}}); got {loss.name!r}.")
    label = 1.0 if np.count_nonzero(y > 0) >= np.count_nonzero(y < 0) else -1.0
    return BaselineFit(coef=np.zeros(X.shape[1]), bound="none (not private)", intercept=label,
                       note=f"constant prediction {label:+.0f} (the training majority, counted "
                            "without noise); not private.")


# objective perturbation (Kifer, Smith, Thakurta 2012)
#
# Source: Kifer, Smith, Thakurta, "Private convex empirical risk minimization and
# high-dimensional regression", COLT 2012 (PMLR 23), Algorithm 1 (objective perturbation) with
# its (ε, δ) guarantee, Theorem 2 — the ObjPert baseline of Chen, Lee, Kifer 2019.  Statement used:
# for a convex ℓ with ‖∇ℓ‖ ≤ ζ, Hessian of rank ≤ 1 with eigenvalues ≤ λ_H, and a convex
# regulariser r, release
#     θ̂ = argmin_θ  (1/n)Σᵢ ℓ(θ; dᵢ) + r(θ)/n + (Δ/(2n))‖θ‖² + bᵀθ/n,
#     Δ ≥ 2λ_H/ε,   b ~ N(0, ζ²(8 log(2/δ) + 4ε)/ε² · I).
# Checked against two independent implementations: TF Privacy's ``KiferRegularizer``
# (tensorflow_privacy/privacy/logistic_regression/multinomial_logistic.py: "variance is based on
# line 5 from Algorithm 1 of Kifer et al. (page 6)", variance = ζ²(8 log(2/δ) + 4ε)/ε², penalty
# (λ_H/(εn))‖θ‖² = (Δ/(2n))‖θ‖² with Δ = 2λ_H/ε, linear term bᵀθ/n on the mean loss) and DPpack's
# ``EmpiricalRiskMinimizationDP.KST`` (R/StatModels.R: Delta <- 2*lambda/eps, Sigma <-
# zeta^2*(8*log(2/delta)+4*eps)/eps^2, objective sum(loss)/n + gamma*r/n + Delta‖θ‖²/(2n) + bᵀθ/n).
#
# Translation to our conventions: ζ = L (``constants(...).lipschitz``, the unregularised loss),
# λ_H = β_ℓ = smoothness − λ (``constants`` adds λ to β).  Our (λ/2)‖θ‖² is r(θ)/n with the convex
# r = (nλ/2)‖θ‖², so the perturbed objective is
#     mean ℓ + (λ/2 + Δ/(2n))‖θ‖² + bᵀθ/n.
# The margin losses φ(y xᵀθ) have Hessian φ''·xxᵀ, rank ≤ 1 (a GLM).  The huberised hinge's φ''
# jumps at z = 1 ± h (no continuous Hessian there); we still run it as a benchmark baseline, an
# extension of the statement that we have not verified.  The theorem number (Thm 2) was not
# checked against the paper's text; the algorithm and its constants were (above).


def objpert_regularizer(smoothness: float, epsilon: float) -> float:
    """Δ = 2β/ε, the smallest extra regulariser of KST12 Alg. 1 (β = Hessian bound of ℓ, no λ)."""
    if not (np.isfinite(smoothness) and smoothness >= 0):
        raise ValueError(f"smoothness must be finite and >= 0; got {smoothness!r}.")
    return 2.0 * smoothness / check_epsilon(epsilon)


def objpert_noise_std(lipschitz: float, epsilon: float, delta: float) -> float:
    """σ = L·√(8 log(2/δ) + 4ε)/ε, the per-coordinate sd of b in KST12 Alg. 1 (δ > 0)."""
    if not (np.isfinite(lipschitz) and lipschitz > 0):
        raise ValueError(f"lipschitz must be finite and > 0; got {lipschitz!r}.")
    check_privacy_budget(epsilon, delta)
    return lipschitz * math.sqrt(8.0 * math.log(2.0 / delta) + 4.0 * epsilon) / epsilon


def objpert(X: ArrayLike, y: ArrayLike, *, loss: Loss, epsilon: float, delta: float,
            l2_regularization: float, data_norm: float = 1.0,
            random_state: RandomState = None) -> BaselineFit:
    """Objective perturbation for (ε, δ)-DP, Kifer, Smith, Thakurta 2012, Alg. 1 / Thm 2.

    Minimises mean ℓ + (λ/2 + Δ/(2n))‖θ‖² + bᵀθ/n with Δ = :func:`objpert_regularizer` (β_ℓ, ε)
    and b ~ N(0, σ²I), σ = :func:`objpert_noise_std` (L, ε, δ), by L-BFGS-B to gtol 1e-10 (the
    theorem assumes the exact minimiser).  L and β_ℓ come from ``loss.constants(data_norm, 0,
    Unconstrained())`` (β_ℓ = smoothness − λ); rows with ‖x‖ > ``data_norm`` are clipped (with a
    warning).  Only smooth margin (GLM) losses qualify: the theorem needs a rank-one Hessian and a
    finite L on R^d.  Parameters are the common ones of the module docstring.

    Returns
    -------
    BaselineFit
        ``params`` holds ``sigma``, ``Delta``, ``lipschitz`` and ``smoothness``.
    """
    check_privacy_budget(epsilon, delta)
    X, y = check_common(X, y, loss, l2_regularization, data_norm)
    if not (loss.classification and loss.smooth):
        raise ValueError(f"objpert needs a smooth margin loss (rank-one Hessian, bounded gradient "
                         f"on R^d), e.g. logistic or huber; got {loss.name!r}.")
    X, _ = enforce_norm_bound(X, data_norm)
    # β_ℓ = smoothness − λ; asking for λ = 0 gives it without the rounding of (β_ℓ + λ) − λ.
    consts = loss.constants(data_norm, 0.0, Unconstrained())
    beta = consts.smoothness
    sigma = objpert_noise_std(consts.lipschitz, epsilon, delta)
    big_delta = objpert_regularizer(beta, epsilon)
    n, d = X.shape
    b = np.random.default_rng(random_state).normal(0.0, sigma, size=d)
    coef = _minimize(_erm_fun_grad(loss, X, y, l2_regularization + big_delta / n, b / n), d)
    return BaselineFit(
        coef=coef, bound="objective perturbation (KST12 Thm 2)",
        note=(f"Kifer, Smith, Thakurta 2012 Alg. 1 (Gaussian b, (ε, δ)-DP): sigma={sigma:.6g}, "
              f"Delta={big_delta:.6g}, L={consts.lipschitz:g}, beta={beta:g}; exact minimiser "
              "assumed (L-BFGS-B, gtol 1e-10)."),
        params={"sigma": sigma, "Delta": big_delta, "lipschitz": consts.lipschitz, "smoothness": beta})


# diffprivlib (IBM)


def diffprivlib_logistic(X: ArrayLike, y: ArrayLike, *, loss: Loss, epsilon: float, delta: float,
                         l2_regularization: float, data_norm: float = 1.0,
                         random_state: RandomState = None) -> BaselineFit:
    """diffprivlib's ``LogisticRegression`` (ε-DP vector mechanism, Chaudhuri et al. 2011).

    Fitted with ``epsilon``, ``data_norm``, ``C = 1/(nλ)`` (its sklearn-style objective, as for
    :func:`nonprivate`) and ``fit_intercept=False``; ``delta`` is unused (pure ε-DP).  Not
    installed by dpconvex.  Parameters are the common ones of the module docstring.

    Raises
    ------
    BaselineUnavailable
        If diffprivlib cannot be imported, its fit fails (known with scikit-learn ≥ 1.9), the loss
        is not the binary logistic loss (a K-class loss included: diffprivlib's own multi-class
        model is one-vs-rest logistic, which this wrapper does not run) or λ = 0; the message
        carries the original error.
    """
    check_privacy_budget(epsilon, delta)
    X, y = check_common(X, y, loss, l2_regularization, data_norm)
    if loss.parameter_dimension(X.shape[1]) != X.shape[1]:
        raise BaselineUnavailable(f"this wrapper fits diffprivlib's binary logistic regression (labels ±1, one "
                                  f"weight vector); got the {loss.name!r} loss on class indices.")
    if not isinstance(loss, LogisticLoss):
        raise BaselineUnavailable(f"diffprivlib implements only the logistic loss; got {loss.name!r}.")
    if l2_regularization <= 0:
        raise BaselineUnavailable("diffprivlib needs l2_regularization > 0 (C = 1/(n·λ) must be finite).")
    try:
        from diffprivlib.models import LogisticRegression as DiffprivlibLR
    except Exception as exc:  # ImportError, or an incompatible sklearn at import time
        raise BaselineUnavailable(f"diffprivlib could not be imported: {type(exc).__name__}: {exc}") from exc
    kwargs: dict[str, Any] = {"epsilon": float(epsilon), "data_norm": float(data_norm),
                              "C": 1.0 / (X.shape[0] * l2_regularization), "fit_intercept": False}
    try:
        if "random_state" in inspect.signature(DiffprivlibLR).parameters:
            kwargs["random_state"] = (int(random_state.integers(2**31 - 1))
                                      if isinstance(random_state, np.random.Generator) else random_state)
        model = DiffprivlibLR(**kwargs)
        model.fit(X, y)
        coef = np.asarray(model.coef_, dtype=float).ravel()
    except Exception as exc:
        raise BaselineUnavailable(f"diffprivlib LogisticRegression failed: {type(exc).__name__}: {exc}") from exc
    if coef.shape != (X.shape[1],):
        raise BaselineUnavailable(f"diffprivlib returned coef_ of shape {coef.shape}; expected ({X.shape[1]},).")
    return BaselineFit(coef=coef, bound="epsilon-DP vector mechanism (Chaudhuri et al. 2011, diffprivlib)",
                       note=f"diffprivlib LogisticRegression(epsilon={epsilon:g}, data_norm={data_norm:g}, "
                            f"C={kwargs['C']:.6g}, fit_intercept=False); delta unused (pure epsilon-DP).",
                       params={"C": kwargs["C"]})


#: name → baseline, all with the signature of :func:`nonprivate`.
BASELINES: dict[str, Callable[..., BaselineFit]] = {
    "nonprivate": nonprivate, "majority": majority, "objpert": objpert, "sgd_ma": sgd_ma,
    "sgd_ma_replace_one": sgd_ma_replace_one, "diffprivlib": diffprivlib_logistic}
