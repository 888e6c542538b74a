"""K-class losses on a d×K parameter, with their constants: softmax cross-entropy and one-vs-rest.

:class:`MultinomialLogisticLoss` is multinomial logistic regression; :class:`OneVsRestLoss` sums K
binary margin losses (class k against the rest), so that one run of any mechanism trains the K
one-vs-rest models at once under one certificate.

Parameter layout
----------------
The parameter is a *flat* vector w ∈ R^{d·K}, the row-major (C-order) reshape of the d×K matrix
W = ``w.reshape(d, K)``: ``w[i*K + k] = W[i, k]``, column k holding the weights of class k.  The
Frobenius geometry on W is the Euclidean geometry on w (‖W‖_F = ‖w‖₂), so mechanisms written for
vectors, constraint sets and the regulariser (λ/2)‖w‖² apply unchanged.  Gradients use the same
layout: ∇_w ℓ = vec(x (p − e_y)ᵀ) = x ⊗ (p − e_y) (Kronecker product, x outer).

Labels
------
y holds class indices 0, …, K−1 (integers, or floats with integer values as ``check_training_data``
returns them).  The loss is a classifier but not a ±1-label one, so ``classification`` is False:
that flag means "labels must be in {−1, +1}" (see :class:`~dpconvex.objectives.losses.Loss`); the loss checks
its own labels and refuses any outside 0..K−1.

Derivation note (constants for ‖x‖₂ ≤ X, s = Wᵀx, p = softmax(s))
------------------------------------------------------------------
ℓ(W; x, y) = logsumexp(s) − s_y = −log p_y, computed with :func:`scipy.special.log_softmax`.

* **Gradient bound, L = √2·X.**  ∇ℓ = x ⊗ (p − e_y), so ‖∇ℓ‖_F = ‖x‖·‖p − e_y‖ and
  ‖p − e_y‖² = (1 − p_y)² + Σ_{k≠y} p_k² ≤ (1 − p_y)² + (Σ_{k≠y} p_k)² = 2(1 − p_y)² ≤ 2.
  Equality would need p_y = 0 and all the remaining mass on one class j ≠ y; softmax has full
  support, so √2·X is a supremum approached (s_j − s_k → ∞ for all k ≠ j) but never attained.
* **Gradient sensitivity, S_g = 2L = 2√2·X** (the library's replace-one convention, the bound
  ‖∇ℓ(W; d) − ∇ℓ(W; d')‖ ≤ ‖∇ℓ(W; d)‖ + ‖∇ℓ(W; d')‖).  No tighter constant holds for d ≥ 2: take
  x' = −x rotated by a small angle, so x and x' are linearly independent, and let column j of W
  be M·(x + x') with the other columns 0.  Both logit vectors then grow like M·(X² + x·x') > 0 in
  coordinate j, so p, p' → e_j and, with y = y' ≠ j, the difference → (x − x') ⊗ (e_j − e_y),
  of norm → 2X·√2.  (With the *same* x the difference x ⊗ (e_{y'} − e_y) has norm exactly √2·X.)
* **Smoothness, β_ℓ = X²/2 (Frobenius geometry).**  ∇²ℓ = (x xᵀ) ⊗ (diag(p) − p pᵀ), whose
  operator norm is ‖x‖²·λ_max(diag(p) − p pᵀ).  For a unit v ∈ R^K, vᵀ(diag(p) − p pᵀ)v = Σ p_k v_k²
  − (Σ p_k v_k)² is the variance of a random variable equal to v_k with probability p_k; by
  Popoviciu's inequality it is ≤ (max v − min v)²/4 ≤ 2(v_a² + v_b²)/4 ≤ 1/2.  The same bound
  follows from Böhning's Loewner bound diag(p) − p pᵀ ≼ ½(I − 11ᵀ/K) (D. Böhning, "Multinomial
  logistic regression algorithm", Ann. Inst. Stat. Math. 44 (1992) 197–200).  It is attained for
  p = (½, ½, 0, …) and v ∝ e_1 − e_2: exactly at W = 0 when K = 2, in the limit when K > 2.
  *K = 2 against the binary loss:* W = [w/2, −w/2] gives logits ±wᵀx/2, ℓ = log(1 + e^{−y·wᵀx})
  (class 0 ↔ y = +1), the binary logistic loss.  The map w ↦ W has operator norm 1/√2, so the
  chain rule scales gradients by 1/√2 and Hessians by 1/2: √2·X ↦ X and X²/2 ↦ X²/4, the binary
  :class:`~dpconvex.objectives.losses.LogisticLoss` constants exactly — the factors come from the
  parametrisation, not from slack.
* **Strong convexity, μ = λ (from the regulariser only).**  The Hessian is positive semidefinite
  (a variance), so ℓ is convex, but not strictly: adding a common vector c to every column leaves
  softmax unchanged (logits shift by cᵀx·1), so the directions c ⊗ 1 are flat.  The regularised
  objective is λ-strongly convex and no more.
* **Clipping at the gradient norm at 0.**  At W = 0, p = 1/K and ‖∇ℓ‖ = ‖x‖·√((K − 1)/K), so
  clipping at C = X·√((K − 1)/K) (:meth:`MultinomialLogisticLoss.gradient_norm_at_zero`) changes
  no gradient at the start of a run and cuts the sensitivity from 2√2·X to 2C.  For a margin loss
  clipping leaves the gradient field of a convex loss.  Here the clipped per-example field is
  x ⊗ h(s) with h(a) = a·min(1, c/‖a‖), a = p − e_y, c = C/‖x‖; where clipping is active its
  Jacobian in s is c(I − â âᵀ)(diag(p) − p pᵀ)/‖a‖, symmetric only if â is an eigenvector of
  diag(p) − p pᵀ.  For K = 2, a = p_{1−y}(e_{1−y} − e_y) always is, and the clipped loss is the
  convex reparametrisation of the binary case.  For K ≥ 3 it is not (e.g. p = (0.2, 0.3, 0.5),
  y = 0), so on an open set the clipped field is not the gradient of any function, convex or not:
  :attr:`MultinomialLogisticLoss.clipping_keeps_convexity` is False and the hidden-state bounds
  refuse the clipped run.  Composition (what ``method="auto"`` certifies by) only needs the
  clipped norm bound, so ``auto`` clips there anyway, as DP-SGD clips non-convex models: measured
  on scikit-learn's digits (10 classes) at ε = 1, 3 × 5 folds, 60.7 ± 1.3 % unclipped against
  72.6 ± 1.4 % clipped at C (71.6 at X, 67.8 at X/2); on wine (3 classes) 55.8 ± 3.5 against
  63.7 ± 3.9 %.

Derivation note (one-vs-rest, ℓ(W; x, y) = Σ_k φ(s_k·w_kᵀx), s_k = +1 if y = k else −1)
---------------------------------------------------------------------------------------
φ is a binary margin loss with |φ'| ≤ 1 and φ'' ≤ c (:class:`~dpconvex.objectives.losses.HuberizedHingeLoss`,
:class:`~dpconvex.objectives.losses.HingeLoss`, :class:`~dpconvex.objectives.losses.LogisticLoss`); ‖x‖ ≤ X.

* **Gradient bound, L = √K·X.**  ∇ℓ = x ⊗ g with g_k = φ'(s_k w_kᵀx)·s_k, so ‖∇ℓ‖ = ‖x‖·‖g‖ ≤ X√K.
  Attained at W = 0 for the huberised hinge (φ'(0) = −1).
* **Gradient sensitivity, S_g = 2L = 2√K·X** (replace-one); attained at W = 0 with x' = −x,
  y' = y: the difference is 2x ⊗ g.
* **One joint run, certified directly.**  The mechanisms train the K problems as one, on the d·K
  parameter with sensitivity 2√K·X, and its accountant certifies that joint run.  Without
  subsampling (full batches, fixed or shuffled partitions under GDP) this is exactly the GDP
  composition of K separate runs at sensitivity 2X each, √(Σ μ_k²) = √K·μ (Dong, Roth, Su 2019,
  arXiv:1905.02383, Cor. 3.3).  With Poisson subsampling (``method="auto"``) the K problems share
  one sample per step; the joint run's PLD is computed as it is, and it can be *larger* than the
  composition of K runs with independent samples (e.g. q = 0.03, T = 300, noise multiplier 1.5
  per class, K = 10: ε = 35.1 against 14.3 at δ = 1e-8; at the defaults' scale the gap is about
  0.2–0.5 % of ε).  The certificate is valid either way; it is not a split by composition.
* **Smoothness, β_ℓ = c·X².**  ∇²ℓ is block diagonal with blocks φ''(·)·x xᵀ, of norm ≤ c·X².
* **Strong convexity, μ = λ** (each block is as convex as the binary loss, which has none of its own).
* **Clipping.**  :meth:`OneVsRestLoss.gradient_sum` clips each block x·g_k to norm C/√K, so the
  joint gradient has norm ≤ C; each clipped block is the binary loss's clipped gradient, the
  gradient of a convex loss with the same smoothness (:class:`~dpconvex.objectives.losses.Loss`, margin
  losses), and so is their sum.  :meth:`OneVsRestLoss.gradient_norm_at_zero` is √K·|φ'(0)|·X.
"""

from __future__ import annotations

import math
import numbers
from abc import abstractmethod

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_softmax, softmax

from dpconvex.objectives.constraints import Constraint
from dpconvex.objectives.losses import Loss, LossConstants, _MarginLoss, _regularized_lipschitz, _row_norms, clip_scale

__all__ = ["MultinomialLogisticLoss", "OneVsRestLoss"]


class _ClassMatrixLoss(Loss):
    """A loss on a flat w = vec(W), W of shape (d, K) row-major, with labels the class indices 0..K−1."""

    classification = False  # labels are class indices, not ±1 (check_labels says which)
    n_classes: int

    def __init__(self, n_classes: int) -> None:
        if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral) or n_classes < 2:
            raise ValueError(f"n_classes must be an integer >= 2; got {n_classes!r}.")
        self.n_classes = int(n_classes)

    def parameter_dimension(self, n_features: int) -> int:
        """d·K: the flat parameter holds one column of W per class."""
        return int(n_features) * self.n_classes

    def check_labels(self, y: NDArray) -> None:
        """Raise ``ValueError`` unless ``y`` holds class indices 0..K−1."""
        self.class_indices(y)

    def weight_matrix(self, w: NDArray, n_features: int) -> NDArray[np.float64]:
        """W = ``w.reshape(n_features, n_classes)`` (row-major), after checking the size of ``w``."""
        w = np.asarray(w, dtype=float)
        if w.ndim != 1 or w.size != n_features * self.n_classes:
            raise ValueError(f"w must be a flat vector of size n_features * n_classes = "
                             f"{n_features} * {self.n_classes}; got shape {w.shape}.")
        return w.reshape(n_features, self.n_classes)

    def class_indices(self, y: NDArray) -> NDArray[np.intp]:
        """``y`` as integer class indices, refusing any label outside 0..K−1 or not an integer."""
        y = np.asarray(y, dtype=float)
        valid = (y >= 0) & (y < self.n_classes) & (y == np.floor(y))  # an integer in 0..K−1 (NaN fails all three)
        if y.ndim != 1 or not np.all(valid):
            got = np.unique(y[~valid])[:5] if y.ndim == 1 else f"shape {y.shape}"
            raise ValueError(f"y must be a 1-d array of class indices in 0..{self.n_classes - 1} "
                             f"(n_classes={self.n_classes}); got {got}.")
        return y.astype(np.intp)

    def _logits(self, w: NDArray, X: NDArray) -> NDArray[np.float64]:
        """S = X W, shape (n, K)."""
        return X @ self.weight_matrix(w, X.shape[1])

    def gradient_weights(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Not defined: the gradient xᵢ ⊗ gᵢ is not a scalar multiple of xᵢ."""
        raise NotImplementedError(f"{type(self).__name__} gradients are xᵢ ⊗ gᵢ (gᵢ ∈ R^K), not gᵢ·xᵢ; "
                                  "use per_example_gradients, mean_gradient or gradient_sum.")

    @abstractmethod
    def _class_weights(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """G with row i = gᵢ, ∇ℓ(w; xᵢ, yᵢ) = xᵢ ⊗ gᵢ; shape (n, K)."""

    def per_example_gradients(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Rows vec(xᵢ gᵢᵀ), shape (n, d·K), in the flat layout of ``w``."""
        weights = self._class_weights(w, X, y)
        return (X[:, :, None] * weights[:, None, :]).reshape(X.shape[0], -1)

    def mean_gradient(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """vec(XᵀG)/n, shape (d·K,), without forming per-example gradients."""
        return (X.T @ self._class_weights(w, X, y)).ravel() / X.shape[0]


class MultinomialLogisticLoss(_ClassMatrixLoss):
    """Softmax cross-entropy ℓ(W; x, y) = logsumexp(Wᵀx) − (Wᵀx)_y on a flat w = vec(W) ∈ R^{d·K}.

    See the module docstring for the parameter layout (row-major d×K), the label convention
    (class indices 0..K−1) and the derivation of the constants L = √2·X, S_g = 2√2·X,
    β = X²/2 + λ and μ = λ.

    Parameters
    ----------
    n_classes : int
        Number of classes K ≥ 2.

    Raises
    ------
    ValueError
        If ``n_classes`` is not an integer ≥ 2.
    """

    name = "multinomial"

    @property
    def clipping_keeps_convexity(self) -> bool:  # type: ignore[override]
        """True for K = 2 only (module docstring: for K ≥ 3 the clipped field is not a gradient)."""
        return self.n_classes == 2

    def _class_weights(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """R = P − Y, row i = softmax(Wᵀxᵢ) − e_{yᵢ}, shape (n, K)."""
        labels = self.class_indices(y)
        residuals = softmax(self._logits(w, X), axis=1)
        residuals[np.arange(labels.size), labels] -= 1.0
        return residuals

    def values(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Per-example −log softmax(Wᵀxᵢ)_{yᵢ}, shape (n,), stable for large logits."""
        labels = self.class_indices(y)
        return -log_softmax(self._logits(w, X), axis=1)[np.arange(labels.size), labels]

    def gradient_sum(self, w: NDArray, X: NDArray, y: NDArray, clip_norm: float | None = None,
                     row_norms: NDArray | None = None) -> NDArray[np.float64]:
        """Σᵢ clip(∇ℓ(w; xᵢ, yᵢ)), each gradient scaled to Frobenius norm ≤ ``clip_norm``.

        ‖xᵢ ⊗ rᵢ‖ = ‖xᵢ‖·‖rᵢ‖, so clipping scales the rows of R = P − Y and the sum is vec(XᵀR):
        one matrix product, no (n, d·K) matrix.  ``row_norms`` (‖xᵢ‖, shape (n,)) may be passed
        to avoid recomputing them at every step; ``None`` for ``clip_norm`` means no clipping.
        """
        residuals = self._class_weights(w, X, y)
        if clip_norm is not None:
            norms = np.linalg.norm(residuals, axis=1) * (_row_norms(X) if row_norms is None else row_norms)
            residuals *= clip_scale(norms, clip_norm)[:, None]
        return (X.T @ residuals).ravel()

    def loss_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """ℓ(0; x, y) = log K for every record (p = 1/K)."""
        return float(np.log(self.n_classes))

    def gradient_norm_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """X·√((K − 1)/K), every per-example gradient's norm at W = 0 for ‖x‖ = X (X/√2 for K = 2).

        For K ≥ 3 clipping at it leaves no convex loss (module docstring;
        :attr:`clipping_keeps_convexity` is False): only composition certifies such a run.
        """
        return data_norm * math.sqrt((self.n_classes - 1) / self.n_classes)

    def constants(self, data_norm: float, l2_regularization: float, constraint: Constraint,
                  label_bound: float | None = None) -> LossConstants:
        """L = √2·X, S_g = 2L, β = X²/2 + λ, μ = λ, L_reg = L + λ·radius (derived in the module docstring)."""
        lipschitz = math.sqrt(2.0) * data_norm
        return LossConstants(
            lipschitz=lipschitz,
            gradient_sensitivity=2.0 * lipschitz,
            smoothness=0.5 * data_norm**2 + l2_regularization,
            strong_convexity=l2_regularization,
            lipschitz_regularized=_regularized_lipschitz(lipschitz, l2_regularization, constraint),
        )


class OneVsRestLoss(_ClassMatrixLoss):
    """ℓ(W; x, y) = Σ_k φ(s_k·w_kᵀx), s_k = +1 if y = k else −1: K one-vs-rest margin losses at once.

    Column k of W = ``w.reshape(d, K)`` is the binary model of class k against the rest.  Constants
    (module docstring): L = √K·L_φ, S_g = 2L, β = β_φ + λ, μ = λ; one run certifies the K models
    under one certificate of the joint run (module docstring: exactly the GDP composition of K runs
    without subsampling).

    Parameters
    ----------
    binary : Loss
        The binary margin loss φ (e.g. :class:`~dpconvex.objectives.losses.HuberizedHingeLoss`), labels ±1.
    n_classes : int
        Number of classes K ≥ 2.

    Raises
    ------
    ValueError
        If ``binary`` is not a margin loss φ(y·wᵀx) or ``n_classes`` is not an integer ≥ 2.
    """

    clipping_keeps_convexity = True

    def __init__(self, binary: Loss, n_classes: int) -> None:
        if not isinstance(binary, _MarginLoss):
            raise ValueError(f"binary must be a margin loss phi(y w.x) (logistic, huber, hinge); got {binary!r}.")
        super().__init__(n_classes)
        self.binary = binary
        self.name = f"one-vs-rest {binary.name}"
        self.smooth = binary.smooth

    def _margins(self, w: NDArray, X: NDArray, y: NDArray) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(M, S): S[i, k] = s_k(yᵢ) ∈ {−1, +1} and M = S ∘ (X W), both (n, K)."""
        labels = self.class_indices(y)
        signs = np.full((labels.size, self.n_classes), -1.0)
        signs[np.arange(labels.size), labels] = 1.0
        return signs * self._logits(w, X), signs

    def values(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """Per-example Σ_k φ(s_k w_kᵀxᵢ), shape (n,)."""
        margins, _ = self._margins(w, X, y)
        return self.binary.phi(margins).sum(axis=1)

    def _class_weights(self, w: NDArray, X: NDArray, y: NDArray) -> NDArray[np.float64]:
        """G[i, k] = φ'(s_k w_kᵀxᵢ)·s_k."""
        margins, signs = self._margins(w, X, y)
        return self.binary.dphi(margins) * signs

    def gradient_sum(self, w: NDArray, X: NDArray, y: NDArray, clip_norm: float | None = None,
                     row_norms: NDArray | None = None) -> NDArray[np.float64]:
        """Σᵢ clip(∇ℓ(w; xᵢ, yᵢ)) with each block xᵢ·G[i, k] clipped to norm C/√K (joint norm ≤ C).

        Block-wise clipping keeps every block the gradient of the binary loss clipped as in
        :meth:`~dpconvex.objectives.losses.Loss.gradient_norm_at_zero` (module docstring); ``row_norms``
        (‖xᵢ‖) may be passed to avoid recomputing them; ``None`` for ``clip_norm``: no clipping.
        """
        weights = self._class_weights(w, X, y)
        if clip_norm is not None:
            norms = np.abs(weights) * (_row_norms(X) if row_norms is None else row_norms)[:, None]
            weights *= clip_scale(norms, clip_norm / math.sqrt(self.n_classes))
        return (X.T @ weights).ravel()

    def loss_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """ℓ(0; x, y) = K·φ(0)."""
        return self.n_classes * self.binary.loss_at_zero(data_norm)

    def gradient_norm_at_zero(self, data_norm: float, label_bound: float | None = None) -> float:
        """√K·|φ'(0)|·X: clipping at it (block-wise, C/√K each) changes no gradient at W = 0."""
        return math.sqrt(self.n_classes) * self.binary.gradient_norm_at_zero(data_norm)

    def constants(self, data_norm: float, l2_regularization: float, constraint: Constraint,
                  label_bound: float | None = None) -> LossConstants:
        """L = √K·L_φ, S_g = 2L, β = β_φ + λ, μ = λ (module docstring)."""
        binary = self.binary.constants(data_norm, l2_regularization, constraint)
        lipschitz = math.sqrt(self.n_classes) * binary.lipschitz
        return LossConstants(
            lipschitz=lipschitz,
            gradient_sensitivity=2.0 * lipschitz,
            smoothness=binary.smoothness,
            strong_convexity=binary.strong_convexity,
            lipschitz_regularized=_regularized_lipschitz(lipschitz, l2_regularization, constraint),
        )
