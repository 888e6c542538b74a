"""Losses with vectorised per-example gradients and declared constants.

Every loss is a per-example loss ℓ(w; x, y); the training objective is ``f(w) = (1/n) Σᵢ ℓ(w; xᵢ, yᵢ) + (λ/2)‖w‖²`` with
λ = ``l2_regularization``.  Given the data bounds (``data_norm`` = X ≥ ‖x‖₂, ``label_bound`` = Y ≥ |y| for regression)
and the constraint set, :meth:`Loss.constants` states the constants the privacy theorems need (:class:`LossConstants`).
Clipped gradient sums scale each per-example gradient by :func:`~dpconvex.objectives.clipping.clip_scale`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from dpconvex.accounting._checks import check_positive
from dpconvex.objectives.clipping import clip_scale, row_norms
from dpconvex.objectives.constraints import Constraint

__all__ = [
    "LossConstants",
    "clip_scale",
    "Loss",
    "LogisticLoss",
    "HuberizedHingeLoss",
    "SquaredLoss",
    "QuadraticDistanceLoss",
    "HingeLoss",
    "AbsoluteErrorLoss",
    "LOSSES",
    "row_norms",
]


_row_norms = row_norms  # the name gradient_sum reads: its parameter ``row_norms`` shadows the function


@dataclass(frozen=True)
class LossConstants:
    """Constants of a loss on a constraint set, for given data bounds (see module docstring).

    Attributes
    ----------
    lipschitz : float
        L with ‖∇ℓ(w; x, y)‖ ≤ L on the constraint set (unregularised ℓ).
    gradient_sensitivity : float
        S_g = sup ‖∇ℓ(w; d) − ∇ℓ(w; d')‖ ≤ 2L: the L2 sensitivity of the *sum* of gradients under replace-one
        neighbours (the regulariser cancels in the difference).
    smoothness : float
        β of the regularised per-example loss ℓ + (λ/2)‖w‖² (β_ℓ + λ; ``inf`` for a non-smooth loss).
    strong_convexity : float
        Its strong-convexity constant (λ, plus 1 for the quadratic distance).
    lipschitz_regularized : float
        L + λ·radius, the Lipschitz constant of f on the constraint set.
    """

    lipschitz: float
    gradient_sensitivity: float
    smoothness: float
    strong_convexity: float
    lipschitz_regularized: float


def _regularized_lipschitz(lipschitz: float, l2_regularization: float, constraint: Constraint) -> float:
    """L + λ·radius (just L when λ = 0, also on an unbounded set)."""
    return lipschitz + (l2_regularization * constraint.radius if l2_regularization > 0 else 0.0)


class Loss(ABC):
    """A per-example loss ℓ(w; x, y) with declared constants.

    Attributes
    ----------
    name : str
        Short name used by estimators, the CLI and certificates.
    classification : bool
        Whether labels must be in {−1, +1}.
    smooth : bool
        Whether the loss has a finite smoothness constant (the non-smooth ones need method="sco_noisy_sgd").
    clipping_keeps_convexity : bool
        Whether clipping every per-example gradient to a norm C leaves the gradient field of a convex loss with the
        same smoothness (margin losses, the squared loss, ½‖θ − x‖²; see :mod:`dpconvex.mechanisms.noisy_sgd`).  The
        hidden-state bounds accept clipping only then.
    """

    name: str = ""
    classification: bool = True
    smooth: bool = True
    clipping_keeps_convexity: bool = False

    def parameter_dimension(self, n_features: int) -> int:
        """Length of the flat parameter vector for ``n_features`` features (d; d·K for K-class losses)."""
        return int(n_features)

    def check_labels(self, y: NDArray) -> None:
        """Raise ``ValueError`` unless ``y`` holds labels this loss accepts ({−1, +1} for classification)."""
        if self.classification and not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError(f"the {self.name} loss needs labels in {{-1, +1}}; got {np.unique(y)[:5]}.")

    @abstractmethod
    def values(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Per-example losses, shape (n,)."""

    @abstractmethod
    def gradient_weights(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Scalars gᵢ with ∇ℓ(w; xᵢ, yᵢ) = gᵢ·xᵢ (+ loss-specific terms, see subclasses)."""

    def per_example_gradients(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Per-example gradients of the unregularised loss, shape (n, d)."""
        return self.gradient_weights(w, X, y)[:, None] * X

    def mean_gradient(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """(1/n) Σᵢ ∇ℓ(w; xᵢ, yᵢ), shape (d,), without forming the (n, d) matrix."""
        return X.T @ self.gradient_weights(w, X, y) / X.shape[0]

    def gradient_sum(self, w: NDArray, X: NDArray, y: NDArray, clip_norm: float | None = None,
                     row_norms: NDArray | None = None) -> NDArray[np.float64]:
        """Σᵢ clip(∇ℓ(w; xᵢ, yᵢ)), each gradient scaled to L2 norm ≤ ``clip_norm`` (``None``: no clipping).

        For gᵢ·xᵢ gradients the norm is |gᵢ|·‖xᵢ‖, so the clipped sum is Xᵀ(gᵢ·min(1, C/(|gᵢ|‖xᵢ‖))) — one matrix–vector
        product, no (n, d) matrix.  ``row_norms`` (‖xᵢ‖, shape (n,)) may be passed to avoid recomputing them at every
        step.
        """
        weights = self.gradient_weights(w, X, y)
        if clip_norm is not None:
            norms = np.abs(weights) * (_row_norms(X) if row_norms is None else row_norms)
            weights = weights * clip_scale(norms, clip_norm)
        return X.T @ weights

    def objective(self, w: NDArray, X: NDArray, y: NDArray, l2_regularization: float) -> float:
        """f(w) = mean loss + (λ/2)‖w‖²."""
        return float(np.mean(self.values(w, X, y)) + 0.5 * l2_regularization * (w @ w))

    @abstractmethod
    def loss_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """An upper bound on ℓ(0; x, y) over the declared data domain (bounds ‖w*_λ‖, see estimators)."""

    def gradient_norm_at_zero(self, data_norm: float, label_bound: float | None = None) -> float | None:
        """A bound on ‖∇ℓ(0; x, y)‖ over the data domain (clipping at it changes no gradient at θ = 0), or None.

        None where the loss declares no such clip (e.g. ½‖θ − x‖², whose gradient at 0 is the data itself).  Whether the
        clipped field is still the gradient of a convex loss is ``clipping_keeps_convexity`` (:class:`Loss`).
        """
        return None

    @abstractmethod
    def constants(
        self,
        data_norm: float,
        l2_regularization: float,
        constraint: Constraint,
        label_bound: float | None = None,
    ) -> LossConstants:
        """Declared constants for ‖x‖ ≤ ``data_norm``, |y| ≤ ``label_bound`` on ``constraint``."""


class _MarginLoss(Loss):
    """ℓ(w; x, y) = φ(y·wᵀx) with |φ'| ≤ 1 and φ'' ≤ ``curvature``."""

    curvature: float = 0.0
    clipping_keeps_convexity = True

    @abstractmethod
    def phi(self, z: NDArray) -> NDArray:
        """φ(z)."""

    @abstractmethod
    def dphi(self, z: NDArray) -> NDArray:
        """φ'(z), in [−1, 0]."""

    def values(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        return self.phi(y * (X @ w))

    def loss_at_zero(self, data_norm, label_bound=None) -> float:
        return float(self.phi(np.array(0.0)))

    def gradient_norm_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """‖∇ℓ(0; x, y)‖ ≤ |φ'(0)|·``data_norm``: the largest per-example gradient at θ = 0.

        Clipping every per-example gradient at C ≥ this bound changes no gradient at θ = 0 and, for a margin loss,
        replaces φ'(z) by max(φ'(z), −C/‖x‖): the gradient of a convex loss that equals ℓ wherever |φ'(z)|·‖x‖ ≤ C (for
        the logistic loss: on every example the model classifies with margin z ≥ 0) and grows linearly, with slope
        C/‖x‖, elsewhere.
        """
        return float(abs(self.dphi(np.array(0.0)))) * data_norm

    def gradient_weights(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        return self.dphi(y * (X @ w)) * y

    def constants(self, data_norm, l2_regularization, constraint, label_bound=None) -> LossConstants:
        # ∇ℓ = φ'(z)·y·x with |φ'| ≤ 1, |y| = 1: ‖∇ℓ‖ ≤ X; two such vectors differ by ≤ 2X.
        # Hessian φ''(z)·x xᵀ has norm ≤ curvature·X².
        lipschitz = data_norm
        return LossConstants(
            lipschitz=lipschitz,
            gradient_sensitivity=2.0 * lipschitz,
            smoothness=self.curvature * data_norm**2 + l2_regularization,
            strong_convexity=l2_regularization,
            lipschitz_regularized=_regularized_lipschitz(lipschitz, l2_regularization, constraint),
        )


class LogisticLoss(_MarginLoss):
    """Logistic loss φ(z) = log(1 + e^{−z}); φ'' ≤ 1/4 (Chen et al. 2019 §5.1)."""

    name = "logistic"
    curvature = 0.25

    def phi(self, z):
        return np.logaddexp(0.0, -z)

    def dphi(self, z):
        return -expit(-z)


class HuberizedHingeLoss(_MarginLoss):
    """Huberised hinge of Chen, Lee, Kifer 2019 §5.1 (Chapelle 2007), parameter h > 0.

    φ(z) = 0 for z > 1 + h; (1 + h − z)²/(4h) for |1 − z| ≤ h; 1 − z for z < 1 − h. φ' ∈ [−1, 0] and φ'' ≤ 1/(2h).

    Parameters
    ----------
    h : float, default=0.5
    """

    name = "huber"

    def __init__(self, h: float = 0.5) -> None:
        check_positive(h, "h")
        self.h = float(h)
        self.curvature = 1.0 / (2.0 * self.h)

    def phi(self, z):
        h = self.h
        return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1.0 - z, (1.0 + h - z) ** 2 / (4 * h)))

    def dphi(self, z):
        h = self.h
        return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -1.0, -(1.0 + h - z) / (2 * h)))


class SquaredLoss(Loss):
    """Squared error ℓ(w; x, y) = ½(wᵀx − y)² (ridge regression with λ > 0).

    Its gradient (wᵀx − y)·x is unbounded on R^d, so the constants need a bounded constraint set and a label bound: L =
    (R·X + Y)·X, S_g = 2L, β_ℓ = X².
    """

    name = "squared"
    classification = False
    clipping_keeps_convexity = True

    def values(self, w, X, y):
        return 0.5 * (X @ w - y) ** 2

    def loss_at_zero(self, data_norm, label_bound=None) -> float:
        if label_bound is None:
            raise ValueError("the squared loss needs a finite label_bound.")
        return 0.5 * label_bound**2

    def gradient_weights(self, w, X, y):
        return X @ w - y

    def gradient_norm_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """‖∇ℓ(0; x, y)‖ = |y|·‖x‖ ≤ Y·X: clipping at it changes no gradient at θ = 0.

        The clipped gradient caps the residual wᵀx − y at ±C/‖x‖ (a Huber loss of the residual: convex, as smooth as ℓ),
        and the sensitivity becomes 2C whatever the domain's radius.
        """
        if label_bound is None:
            raise ValueError("the squared loss needs a finite label_bound.")
        return float(label_bound) * data_norm

    def constants(self, data_norm, l2_regularization, constraint, label_bound=None) -> LossConstants:
        if (label_bound is None or not (np.isfinite(label_bound) and label_bound >= 0)
                or not np.isfinite(constraint.radius)):
            raise ValueError(
                "the squared loss has unbounded gradients: it needs a finite label_bound and a "
                "bounded constraint set (radius < inf)."
            )
        lipschitz = (constraint.radius * data_norm + label_bound) * data_norm
        return LossConstants(
            lipschitz=lipschitz,
            gradient_sensitivity=2.0 * lipschitz,
            smoothness=data_norm**2 + l2_regularization,
            strong_convexity=l2_regularization,
            lipschitz_regularized=_regularized_lipschitz(lipschitz, l2_regularization, constraint),
        )


class QuadraticDistanceLoss(Loss):
    """ℓ(θ; x) = ½‖θ − x‖² (private mean estimation; Chourasia et al. eq. (71)).

    ∇ℓ = θ − x, so S_g = sup ‖x − x'‖ = 2X and the loss is 1-smooth and 1-strongly convex: the setting of Chourasia et
    al. Thm 3 / Cor. 2, where noisy GD's output law is Gaussian and known exactly.  Labels are ignored.
    """

    name = "quadratic"
    classification = False
    clipping_keeps_convexity = True

    def values(self, w, X, y):
        return 0.5 * np.sum((w[None, :] - X) ** 2, axis=1)

    def loss_at_zero(self, data_norm, label_bound=None) -> float:
        return 0.5 * data_norm**2

    def gradient_weights(self, w, X, y):  # pragma: no cover - gradients are not of the form gᵢxᵢ
        raise NotImplementedError("QuadraticDistanceLoss gradients are θ − xᵢ, not gᵢ·xᵢ.")

    def per_example_gradients(self, w, X, y):
        return w[None, :] - X

    def mean_gradient(self, w, X, y):
        return w - X.mean(axis=0)

    def gradient_sum(self, w, X, y, clip_norm=None, row_norms=None):
        if clip_norm is None:
            return X.shape[0] * w - X.sum(axis=0)
        gradients = self.per_example_gradients(w, X, y)
        return clip_scale(np.linalg.norm(gradients, axis=1), clip_norm) @ gradients

    def constants(self, data_norm, l2_regularization, constraint, label_bound=None) -> LossConstants:
        lipschitz = constraint.radius + data_norm
        return LossConstants(
            lipschitz=lipschitz,
            gradient_sensitivity=2.0 * data_norm,
            smoothness=1.0 + l2_regularization,
            strong_convexity=1.0 + l2_regularization,
            lipschitz_regularized=_regularized_lipschitz(lipschitz, l2_regularization, constraint),
        )


class HingeLoss(_MarginLoss):
    """Hinge loss φ(z) = max(0, 1 − z) of the linear SVM: convex, non-smooth, L = X.

    The subgradient used is φ'(z) = −1 for z < 1 and 0 for z ≥ 1 (a valid subgradient at the kink), so ‖∂ℓ‖ ≤ X
    everywhere and two records' subgradients differ by at most 2X.
    """

    name = "hinge"
    smooth = False
    curvature = np.inf

    def phi(self, z):
        return np.maximum(0.0, 1.0 - z)

    def dphi(self, z):
        return np.where(z < 1.0, -1.0, 0.0)


class AbsoluteErrorLoss(Loss):
    """Absolute error ℓ(w; x, y) = |wᵀx − y| (least absolute deviations): convex, non-smooth, L = X.

    Subgradient sign(wᵀx − y)·x (0 at the kink), bounded by X whatever y is, so the privacy constants need no label
    bound; ``loss_at_zero`` (|y|) does.
    """

    name = "absolute"
    classification = False
    smooth = False

    def values(self, w, X, y):
        return np.abs(X @ w - y)

    def loss_at_zero(self, data_norm, label_bound=None) -> float:
        if label_bound is None:
            raise ValueError("the absolute-error loss needs a finite label_bound to bound its value at 0.")
        return float(label_bound)

    def gradient_weights(self, w, X, y):
        return np.sign(X @ w - y)

    def constants(self, data_norm, l2_regularization, constraint, label_bound=None) -> LossConstants:
        return LossConstants(
            lipschitz=data_norm,
            gradient_sensitivity=2.0 * data_norm,
            smoothness=np.inf,
            strong_convexity=l2_regularization,
            lipschitz_regularized=_regularized_lipschitz(data_norm, l2_regularization, constraint),
        )


#: Registry of losses by name (factories, so parameters such as h can be passed).
LOSSES = {
    "logistic": LogisticLoss,
    "huber": HuberizedHingeLoss,
    "squared": SquaredLoss,
    "quadratic": QuadraticDistanceLoss,
    "hinge": HingeLoss,
    "absolute": AbsoluteErrorLoss,
}
