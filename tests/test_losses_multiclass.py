"""K-class losses: values and gradients against direct formulas and finite differences, and the
declared constants checked as upper bounds on random and adversarial search — and as attained or
approached, so none of them is loose.

* Multinomial logistic: L = √2X, S_g = 2√2X, β = X²/2 + λ, μ = λ.
* One-vs-rest over a binary margin loss φ: L = √K·X, S_g = 2√K·X, β = β_φ + λ, μ = λ; block-wise
  clipping; K = 2 against the binary loss; every mechanism trains it (and the multinomial one) on a
  flat d·K parameter."""

from __future__ import annotations

import numpy as np
import pytest

from dpconvex.mechanisms import METHODS
from dpconvex.objectives.constraints import L2Ball, Unconstrained
from dpconvex.objectives.losses import (
    AbsoluteErrorLoss,
    HingeLoss,
    HuberizedHingeLoss,
    LogisticLoss,
    QuadraticDistanceLoss,
    SquaredLoss,
)
from dpconvex.objectives.multiclass import MultinomialLogisticLoss, OneVsRestLoss
from test_losses import _fd_gradient as _fd
from test_losses import _reference_gradients, _unit

DATA_NORM = 2.5  # X
REL = 1.0 + 1e-12  # slack for "declared constant is an upper bound"
CLASS_COUNTS = (2, 3, 5)


def _flat(W):
    return np.asarray(W, dtype=float).ravel()  # row-major: w[i*K + k] = W[i, k]


def _direct_values(W, X, y):
    """−log(e^{s_y} / Σ e^{s_k}) written out, for moderate logits only."""
    S = X @ W
    return -np.log(np.exp(S[np.arange(len(y)), y]) / np.exp(S).sum(axis=1))


def _direct_gradient(W, x, y):
    """x (p − e_y)ᵀ, flattened, from the textbook formula."""
    s = W.T @ x
    p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    return np.outer(x, p - np.eye(W.shape[1])[y]).ravel()


def _grad(loss, w, x, y):
    return loss.per_example_gradients(w, x[None, :], np.array([y]))[0]


# ------------------------------------------------------------------- values and gradients


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_values_match_direct_formula_and_are_stable(K: int) -> None:
    rng = np.random.default_rng(1)
    loss = MultinomialLogisticLoss(K)
    d, n = 4, 30
    W = rng.normal(size=(d, K))
    X, y = rng.normal(size=(n, d)), rng.integers(0, K, size=n)
    np.testing.assert_allclose(loss.values(_flat(W), X, y), _direct_values(W, X, y), rtol=1e-12)
    np.testing.assert_allclose(loss.values(_flat(W), X, y.astype(float)), _direct_values(W, X, y), rtol=1e-12)
    # huge logits: −log p_y = s_max − s_y (+ a vanishing log term), never inf or nan
    x = np.array([[1.0, 0.0]])
    W = np.zeros((2, K))
    W[0, K - 1] = 1e4
    assert loss.values(_flat(W), x, np.array([0]))[0] == pytest.approx(1e4, rel=1e-12)
    assert loss.values(_flat(W), x, np.array([K - 1]))[0] == pytest.approx(0.0, abs=1e-300)


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_gradients_match_formula_and_finite_differences(K: int) -> None:
    rng = np.random.default_rng(2)
    loss = MultinomialLogisticLoss(K)
    d, n, lam = 3, 20, 0.37
    for _ in range(4):
        W = rng.normal(size=(d, K))
        w = _flat(W)
        X, y = rng.normal(size=(n, d)), rng.integers(0, K, size=n)
        G = loss.per_example_gradients(w, X, y)
        assert G.shape == (n, d * K)
        np.testing.assert_allclose(G, [_direct_gradient(W, x, c) for x, c in zip(X, y)], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(G, _fd(lambda v: loss.values(v, X, y), w).reshape(n, -1), atol=1e-8)
        np.testing.assert_allclose(loss.mean_gradient(w, X, y), G.mean(axis=0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(loss.gradient_sum(w, X, y), G.sum(axis=0), rtol=1e-12, atol=1e-14)
        fd_objective = _fd(lambda v: loss.objective(v, X, y, lam), w)
        np.testing.assert_allclose(loss.mean_gradient(w, X, y) + lam * w, fd_objective, atol=1e-8)


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_common_column_shift_changes_nothing_and_gradients_have_zero_row_sums(K: int) -> None:
    rng = np.random.default_rng(3)
    loss = MultinomialLogisticLoss(K)
    d, n = 4, 15
    W, c = rng.normal(size=(d, K)), rng.normal(size=d)
    X, y = rng.normal(size=(n, d)), rng.integers(0, K, size=n)
    shifted = _flat(W + c[:, None])  # c added to every column: logits shift by cᵀx·1
    np.testing.assert_allclose(loss.values(shifted, X, y), loss.values(_flat(W), X, y), rtol=1e-12)
    G = loss.per_example_gradients(shifted, X, y)
    np.testing.assert_allclose(G, loss.per_example_gradients(_flat(W), X, y), atol=1e-14)
    np.testing.assert_allclose(G.reshape(n, d, K).sum(axis=2), 0.0, atol=1e-14)


def test_two_classes_reduce_to_binary_logistic() -> None:
    rng = np.random.default_rng(4)
    multi, binary = MultinomialLogisticLoss(2), LogisticLoss()
    d, n = 5, 40
    w = rng.normal(size=d) * 3
    X = rng.normal(size=(n, d))
    y_pm = rng.choice([-1.0, 1.0], size=n)
    classes = np.where(y_pm > 0, 0, 1)  # class 0 ↔ y = +1
    W = np.column_stack([w / 2, -w / 2])
    np.testing.assert_allclose(multi.values(_flat(W), X, classes), binary.values(w, X, y_pm), rtol=1e-12)
    # chain rule through w ↦ [w/2, −w/2]: ∇_w = (∇_{W[:,0]} − ∇_{W[:,1]})/2
    G = multi.per_example_gradients(_flat(W), X, classes).reshape(n, d, 2)
    np.testing.assert_allclose((G[:, :, 0] - G[:, :, 1]) / 2, binary.per_example_gradients(w, X, y_pm), atol=1e-14)
    mc, bc = multi.constants(DATA_NORM, 0.0, Unconstrained()), binary.constants(DATA_NORM, 0.0, Unconstrained())
    assert mc.lipschitz / np.sqrt(2) == pytest.approx(bc.lipschitz)  # ‖map‖ = 1/√2
    assert mc.smoothness / 2 == pytest.approx(bc.smoothness)


@pytest.mark.parametrize("K", CLASS_COUNTS)
@pytest.mark.parametrize("clip_norm", [0.05, 0.7, 100.0])
def test_gradient_sum_is_the_sum_of_the_clipped_per_example_gradients(K: int, clip_norm: float) -> None:
    rng = np.random.default_rng(5)
    loss = MultinomialLogisticLoss(K)
    d, n = 4, 33
    w, X, y = rng.normal(size=d * K) * 2, rng.normal(size=(n, d)), rng.integers(0, K, size=n)
    G = loss.per_example_gradients(w, X, y)
    norms = np.linalg.norm(G, axis=1)
    expected = (G * np.minimum(1.0, clip_norm / norms)[:, None]).sum(axis=0)
    np.testing.assert_allclose(loss.gradient_sum(w, X, y, clip_norm), expected, rtol=1e-12, atol=1e-14)
    row_norms = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(loss.gradient_sum(w, X, y, clip_norm, row_norms), expected, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------- constants


def _search_weights(rng, d, K, count):
    """Random W over many scales, plus W = 0."""
    scales = 10.0 ** rng.uniform(-2, 3, size=count)
    Ws = rng.normal(size=(count, d, K)) * scales[:, None, None]
    Ws[0] = 0.0
    return Ws


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_lipschitz_bounds_gradients_and_is_approached(K: int) -> None:
    rng = np.random.default_rng(6)
    loss = MultinomialLogisticLoss(K)
    L = loss.constants(DATA_NORM, 0.0, Unconstrained()).lipschitz
    assert L == pytest.approx(np.sqrt(2) * DATA_NORM)
    d, worst = 3, 0.0
    for W in _search_weights(rng, d, K, 200):
        X = _unit(rng, 20, d) * DATA_NORM * rng.uniform(0.5, 1.0, size=(20, 1)) ** 0.1
        norms = np.linalg.norm(loss.per_example_gradients(_flat(W), X, rng.integers(0, K, size=20)), axis=1)
        assert norms.max() <= L * REL
        worst = max(worst, norms.max())
    # adversarial: all mass on a wrong class j ≠ y
    x = DATA_NORM * _unit(rng, 1, d)[0]
    for scale in (1.0, 10.0, 1e3):
        W = np.zeros((d, K))
        W[:, K - 1] = scale * x
        norm = np.linalg.norm(_grad(loss, _flat(W), x, 0))
        assert norm <= L * REL
        worst = max(worst, norm)
    assert worst >= 0.99 * L


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_gradient_sensitivity_bounds_pairs_and_is_approached(K: int) -> None:
    rng = np.random.default_rng(7)
    loss = MultinomialLogisticLoss(K)
    S = loss.constants(DATA_NORM, 0.0, Unconstrained()).gradient_sensitivity
    assert S == pytest.approx(2 * np.sqrt(2) * DATA_NORM)
    d, m = 3, 30
    for W in _search_weights(rng, d, K, 100):
        X = _unit(rng, m, d) * DATA_NORM
        G = loss.per_example_gradients(_flat(W), X, rng.integers(0, K, size=m))
        diffs = np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2)
        assert diffs.max() <= S * REL
    # x' = −x rotated by a small angle, column j = M(x + x'): p, p' → e_j with y = y' ≠ j
    x, tilt = DATA_NORM * np.eye(d)[0], 1e-2
    x2 = DATA_NORM * (-np.cos(tilt) * np.eye(d)[0] + np.sin(tilt) * np.eye(d)[1])
    W = np.zeros((d, K))
    W[:, K - 1] = 1e6 * (x + x2)
    diff = np.linalg.norm(_grad(loss, _flat(W), x, 0) - _grad(loss, _flat(W), x2, 0))
    assert 0.99 * S <= diff <= S * REL
    # with the same x the difference is x ⊗ (e_y' − e_y) at most: √2·X < S
    same = np.linalg.norm(_grad(loss, _flat(W), x, 0) - _grad(loss, _flat(W), x, 1))
    assert same <= np.sqrt(2) * DATA_NORM * REL


def _fd_hvp(loss, w, x, y, v, step=1e-5):
    return (_grad(loss, w + step * v, x, y) - _grad(loss, w - step * v, x, y)) / (2 * step)


@pytest.mark.parametrize("K", CLASS_COUNTS)
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_smoothness_bounds_hessian_vector_products(K: int, lam: float) -> None:
    rng = np.random.default_rng(8)
    loss = MultinomialLogisticLoss(K)
    constants = loss.constants(DATA_NORM, lam, L2Ball(3.0))
    beta_loss = constants.smoothness - lam
    assert beta_loss == pytest.approx(DATA_NORM**2 / 2)
    assert constants.strong_convexity == lam
    d = 3
    for W in _search_weights(rng, d, K, 60):
        w = _flat(W) / max(1.0, np.abs(W).max() / 20)  # FD stays accurate for logits up to ~10²
        x, y = DATA_NORM * _unit(rng, 1, d)[0], int(rng.integers(K))
        H = np.stack([_fd_hvp(loss, w, x, y, e) for e in np.eye(d * K)], axis=1)
        eigs = np.linalg.eigvalsh(0.5 * (H + H.T)) + lam
        assert eigs.max() <= constants.smoothness * (1 + 1e-6)
        assert eigs.min() >= constants.strong_convexity - 1e-6  # convex loss, μ = λ
        for v in _unit(rng, 5, d * K):
            assert np.linalg.norm(_fd_hvp(loss, w, x, y, v)) <= beta_loss * (1 + 1e-6)


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_smoothness_approached_at_half_half_and_flat_along_column_shifts(K: int) -> None:
    loss = MultinomialLogisticLoss(K)
    beta = loss.constants(DATA_NORM, 0.0, Unconstrained()).smoothness
    d = 3
    x = DATA_NORM * np.eye(d)[0]
    W = np.zeros((d, K))
    W[0, :2] = 5.0  # logits (12.5, 12.5, 0, …): p ≈ (½, ½, 6e-6, …); exactly (½, ½) at W = 0 for K = 2
    v = np.kron(np.eye(d)[0], np.eye(K)[0] - np.eye(K)[1]) / np.sqrt(2)
    hv = np.linalg.norm(_fd_hvp(loss, _flat(W), x, 0, v))
    assert 0.9999 * beta <= hv <= beta * (1 + 1e-6)
    # the directions c ⊗ 1 (common column shift) have zero curvature: μ comes from λ only
    shift = np.kron(np.array([0.3, -1.0, 0.5]), np.ones(K))
    assert np.linalg.norm(_fd_hvp(loss, _flat(W), x, 0, shift)) <= 1e-7


@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_values_and_gradient_norm_at_zero(K: int) -> None:
    rng = np.random.default_rng(9)
    loss = MultinomialLogisticLoss(K)
    d = 4
    X, y = _unit(rng, 10, d) * DATA_NORM, rng.integers(0, K, size=10)
    zero = np.zeros(d * K)
    np.testing.assert_allclose(loss.values(zero, X, y), loss.loss_at_zero(DATA_NORM), rtol=1e-14)
    norms = np.linalg.norm(loss.per_example_gradients(zero, X, y), axis=1)
    np.testing.assert_allclose(norms, DATA_NORM * np.sqrt((K - 1) / K), rtol=1e-12)
    assert loss.gradient_norm_at_zero(DATA_NORM) == pytest.approx(DATA_NORM * np.sqrt((K - 1) / K), rel=1e-14)
    assert loss.clipping_keeps_convexity == (K == 2)


@pytest.mark.parametrize(("K", "symmetric"), [(2, True), (3, False)])
def test_clipped_field_is_a_gradient_only_for_two_classes(K: int, symmetric: bool) -> None:
    """Why clipping_keeps_convexity is False for K ≥ 3: the clipped per-example field x ⊗ clip(p − e_y)
    has an asymmetric Jacobian where clipping is active, so it is the gradient of no function."""
    loss = MultinomialLogisticLoss(K)
    x, d = np.array([1.0]), 1
    clip = loss.gradient_norm_at_zero(1.0)
    w = np.log([0.2, 0.3, 0.5][:K] if K == 3 else [0.1, 0.9])  # W = log p, so softmax(Wᵀx) = p
    field = lambda v: loss.gradient_sum(v, x[None, :], np.array([0]), clip)  # noqa: E731
    assert np.linalg.norm(_grad(loss, w, x, 0)) > clip  # clipping is active here
    J = _fd(field, w.reshape(d * K))
    assert np.allclose(J, J.T, atol=1e-8) == symmetric


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("n_classes", [1, 0, -3, 2.0, True, "3", None])
def test_rejects_invalid_n_classes(n_classes) -> None:
    with pytest.raises(ValueError, match=r"n_classes must be an integer >= 2"):
        MultinomialLogisticLoss(n_classes)


@pytest.mark.parametrize("bad", [[0, 3], [-1, 0], [0, 1.5], [0, np.nan]])
def test_rejects_labels_outside_the_class_range(bad) -> None:
    loss = MultinomialLogisticLoss(3)
    X, w = np.ones((2, 2)), np.zeros(6)
    for method in (loss.values, loss.per_example_gradients, loss.mean_gradient, loss.gradient_sum):
        with pytest.raises(ValueError, match=r"y must be a 1-d array of class indices in 0\.\.2 \(n_classes=3\)"):
            method(w, X, np.array(bad))


def test_rejects_wrong_parameter_size_and_scalar_gradient_weights() -> None:
    loss = MultinomialLogisticLoss(3)
    X, y = np.ones((2, 2)), np.array([0, 2])
    with pytest.raises(ValueError, match=r"w must be a flat vector of size n_features \* n_classes = 2 \* 3"):
        loss.values(np.zeros(4), X, y)
    with pytest.raises(NotImplementedError, match="not gᵢ·xᵢ"):
        loss.gradient_weights(np.zeros(6), X, y)


# ============================================================================== one-vs-rest
# ℓ(W; x, y) = Σ_k φ(s_k·w_kᵀx), s_k = +1 if y = k else −1.  References below are written per column
# from the binary loss's textbook formula (test_losses._reference_gradients), not from OneVsRestLoss.

HUBER_H = 0.5
SMOOTH_BINARIES = [pytest.param(LogisticLoss(), id="logistic"), pytest.param(HuberizedHingeLoss(HUBER_H), id="huber")]


def _signs(y, K):
    """S[i, k] = s_k(yᵢ) ∈ {−1, +1}: the binary label of record i in column k."""
    return np.where(np.arange(K)[None, :] == np.asarray(y, dtype=int)[:, None], 1.0, -1.0)


def _phi(binary, z):
    """φ(z) written out (logistic, huberised hinge, hinge), for moderate z."""
    if isinstance(binary, LogisticLoss):
        return np.log1p(np.exp(-z))
    if isinstance(binary, HingeLoss):
        return np.maximum(0.0, 1.0 - z)
    h = binary.h
    return np.select([z > 1 + h, z < 1 - h], [0.0, 1.0 - z], default=(1 + h - z) ** 2 / (4 * h))


def _ovr_reference_gradients(binary, W, X, y):
    """Row i = vec(∇ℓ), column k the binary gradient of w_k on (X, s_k): shape (n, d·K)."""
    S = _signs(y, W.shape[1])
    blocks = [_reference_gradients(binary, W[:, k], X, S[:, k]) for k in range(W.shape[1])]
    return np.stack(blocks, axis=2).reshape(X.shape[0], -1)  # (n, d, K) row-major = the flat layout


@pytest.mark.parametrize("binary", SMOOTH_BINARIES)
@pytest.mark.parametrize("K", CLASS_COUNTS)
def test_ovr_values_and_gradients_match_the_columnwise_formula_and_finite_differences(binary, K: int) -> None:
    rng = np.random.default_rng(10)
    loss = OneVsRestLoss(binary, K)
    d, n, lam = 3, 20, 0.37
    for scale in (0.3, 1.0, 3.0):  # margins in every regime of the huberised hinge
        W = rng.normal(size=(d, K)) * scale
        w = _flat(W)
        X, y = rng.normal(size=(n, d)), rng.integers(0, K, size=n)
        expected_values = _phi(binary, _signs(y, K) * (X @ W)).sum(axis=1)
        np.testing.assert_allclose(loss.values(w, X, y), expected_values, rtol=1e-12, atol=1e-14)
        G = loss.per_example_gradients(w, X, y)
        assert G.shape == (n, d * K)
        np.testing.assert_allclose(G, _ovr_reference_gradients(binary, W, X, y), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(G, _fd(lambda v: loss.values(v, X, y), w).reshape(n, -1), atol=1e-7)
        np.testing.assert_allclose(loss.mean_gradient(w, X, y), G.mean(axis=0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(loss.gradient_sum(w, X, y), G.sum(axis=0), rtol=1e-12, atol=1e-14)
        fd_objective = _fd(lambda v: loss.objective(v, X, y, lam), w)
        np.testing.assert_allclose(loss.mean_gradient(w, X, y) + lam * w, fd_objective, atol=1e-7)


def test_ovr_hinge_subgradients_are_the_columnwise_ones_and_sum_like_them() -> None:
    rng = np.random.default_rng(11)
    K, d, n = 4, 3, 25
    loss = OneVsRestLoss(HingeLoss(), K)
    W, X, y = rng.normal(size=(d, K)), rng.normal(size=(n, d)), rng.integers(0, K, size=n)
    S = _signs(y, K)
    # φ'(z) = −1 for z < 1, 0 otherwise (the library's subgradient at the kink), times s_k·x
    weights = np.where(S * (X @ W) < 1.0, -S, 0.0)
    expected = (X[:, :, None] * weights[:, None, :]).reshape(n, -1)
    G = loss.per_example_gradients(_flat(W), X, y)
    np.testing.assert_allclose(G, expected, rtol=1e-12)
    np.testing.assert_allclose(loss.gradient_sum(_flat(W), X, y), G.sum(axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(loss.values(_flat(W), X, y), _phi(HingeLoss(), S * (X @ W)).sum(axis=1), rtol=1e-12)
    assert not loss.smooth and loss.name == "one-vs-rest hinge" and not loss.classification


OVR_CASES = [pytest.param(binary, K, id=f"{binary.name}-K{K}")
             for binary in (LogisticLoss(), HuberizedHingeLoss(HUBER_H)) for K in CLASS_COUNTS]


@pytest.mark.parametrize(("binary", "K"), OVR_CASES)
def test_ovr_lipschitz_bounds_gradients_attained_at_zero_for_huber(binary, K: int) -> None:
    rng = np.random.default_rng(12)
    loss = OneVsRestLoss(binary, K)
    L = loss.constants(DATA_NORM, 0.0, Unconstrained()).lipschitz
    assert L == pytest.approx(np.sqrt(K) * DATA_NORM)
    d = 3
    for W in _search_weights(rng, d, K, 200):
        X = _unit(rng, 20, d) * DATA_NORM * rng.uniform(0.5, 1.0, size=(20, 1)) ** 0.1
        norms = np.linalg.norm(loss.per_example_gradients(_flat(W), X, rng.integers(0, K, size=20)), axis=1)
        assert norms.max() <= L * REL
    x, y = DATA_NORM * _unit(rng, 1, d)[0], 1
    at_zero = np.linalg.norm(_grad(loss, np.zeros(d * K), x, y))
    if isinstance(binary, HuberizedHingeLoss):  # φ'(0) = −1: every column at full slope
        assert at_zero == pytest.approx(L, rel=1e-12)
    else:  # logistic: |φ'| → 1 only as every margin → −∞ (w_k = −M·s_k·x)
        assert at_zero == pytest.approx(L / 2, rel=1e-12)
        W = -1e3 * np.outer(x, _signs([y], K)[0])
        assert 0.999 * L <= np.linalg.norm(_grad(loss, _flat(W), x, y)) <= L * REL


@pytest.mark.parametrize(("binary", "K"), OVR_CASES)
def test_ovr_gradient_sensitivity_bounds_pairs_attained_with_opposite_records(binary, K: int) -> None:
    rng = np.random.default_rng(13)
    loss = OneVsRestLoss(binary, K)
    S = loss.constants(DATA_NORM, 0.0, Unconstrained()).gradient_sensitivity
    assert S == pytest.approx(2 * np.sqrt(K) * DATA_NORM)
    d, m = 3, 30
    for W in _search_weights(rng, d, K, 100):
        X = _unit(rng, m, d) * DATA_NORM
        X = np.vstack([X, -X])  # x' = −x for every x
        G = loss.per_example_gradients(_flat(W), X, rng.integers(0, K, size=2 * m))
        diffs = np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2)
        assert diffs.max() <= S * REL
    x = DATA_NORM * np.eye(d)[0]
    if isinstance(binary, HuberizedHingeLoss):  # at W = 0 the difference is 2x ⊗ g, ‖g‖ = √K: attained
        diff = np.linalg.norm(_grad(loss, np.zeros(d * K), x, 0) - _grad(loss, np.zeros(d * K), -x, 0))
        assert diff == pytest.approx(S, rel=1e-12)
        return
    # logistic: x' = −x rotated by a small angle and w_k = −M·s_k·(x + x'), so both records' margins
    # → −∞, every |φ'| → 1 and the difference → (x − x') ⊗ (−s), of norm 2X·√K·cos(tilt/2)
    tilt = 1e-2
    x2 = DATA_NORM * (-np.cos(tilt) * np.eye(d)[0] + np.sin(tilt) * np.eye(d)[1])
    W = -1e6 * np.outer(x + x2, _signs([0], K)[0])
    diff = np.linalg.norm(_grad(loss, _flat(W), x, 0) - _grad(loss, _flat(W), x2, 0))
    assert 0.999 * S <= diff <= S * REL


@pytest.mark.parametrize(("binary", "K"), OVR_CASES)
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_ovr_smoothness_bounds_the_hessian_and_is_attained(binary, K: int, lam: float) -> None:
    rng = np.random.default_rng(14)
    loss = OneVsRestLoss(binary, K)
    constants = loss.constants(DATA_NORM, lam, L2Ball(3.0))
    beta_loss = constants.smoothness - lam
    assert beta_loss == pytest.approx(binary.curvature * DATA_NORM**2)  # c·X², c = 1/4 or 1/(2h)
    assert constants.strong_convexity == lam
    d = 3
    for W in _search_weights(rng, d, K, 40):
        w = _flat(W) / max(1.0, np.abs(W).max() / 20)
        x, y = DATA_NORM * _unit(rng, 1, d)[0], int(rng.integers(K))
        H = np.stack([_fd_hvp(loss, w, x, y, e) for e in np.eye(d * K)], axis=1)
        eigs = np.linalg.eigvalsh(0.5 * (H + H.T)) + lam
        assert eigs.max() <= constants.smoothness * (1 + 1e-6)
        assert eigs.min() >= constants.strong_convexity - 1e-6
        for v in _unit(rng, 5, d * K):  # a difference quotient of a β-Lipschitz gradient, kinks included
            assert np.linalg.norm(_fd_hvp(loss, w, x, y, v)) <= beta_loss * (1 + 1e-6)
    # attained: every margin where φ'' = c (huber: z = 1, inside the quadratic piece; logistic: z = 0)
    x = DATA_NORM * _unit(rng, 1, d)[0]
    margin = 1.0 if isinstance(binary, HuberizedHingeLoss) else 0.0
    W = np.outer(x / DATA_NORM**2, _signs([0], K)[0]) * margin  # s_k·w_kᵀx = margin for every k
    H = np.stack([_fd_hvp(loss, _flat(W), x, 0, e) for e in np.eye(d * K)], axis=1).reshape(d, K, d, K)
    assert np.linalg.eigvalsh(H.reshape(d * K, d * K)).max() == pytest.approx(beta_loss, rel=1e-6)
    off_diagonal = H * (1 - np.eye(K))[None, :, None, :]  # block diagonal: classes do not interact
    assert np.abs(off_diagonal).max() <= 1e-8


@pytest.mark.parametrize(("binary", "K"), OVR_CASES)
def test_ovr_values_and_gradient_norm_at_zero(binary, K: int) -> None:
    rng = np.random.default_rng(15)
    loss = OneVsRestLoss(binary, K)
    d = 4
    X, y = _unit(rng, 10, d) * DATA_NORM, rng.integers(0, K, size=10)
    zero = np.zeros(d * K)
    phi_zero = float(_phi(binary, np.array(0.0)))  # log 2 or 1
    assert loss.loss_at_zero(DATA_NORM) == pytest.approx(K * phi_zero)
    np.testing.assert_allclose(loss.values(zero, X, y), K * phi_zero, rtol=1e-14)
    norms = np.linalg.norm(loss.per_example_gradients(zero, X, y), axis=1)
    slope = 1.0 if isinstance(binary, HuberizedHingeLoss) else 0.5  # |φ'(0)|
    np.testing.assert_allclose(norms, np.sqrt(K) * slope * DATA_NORM, rtol=1e-12)
    assert loss.gradient_norm_at_zero(DATA_NORM) == pytest.approx(np.sqrt(K) * slope * DATA_NORM)
    assert loss.clipping_keeps_convexity


def _clip_rows(G, C):
    """Rows of G scaled to norm ≤ C (numpy, independent of the library's clip_scale)."""
    norms = np.linalg.norm(G, axis=-1, keepdims=True)
    return G * np.minimum(1.0, C / np.where(norms > 0, norms, 1.0))


@pytest.mark.parametrize(("binary", "K"), OVR_CASES)
@pytest.mark.parametrize("clip_norm", [0.05, 0.7, 100.0])
def test_ovr_clips_each_block_to_c_over_sqrt_k(binary, K: int, clip_norm: float) -> None:
    rng = np.random.default_rng(16)
    loss = OneVsRestLoss(binary, K)
    d, n = 4, 33
    W, X, y = rng.normal(size=(d, K)) * 2, rng.normal(size=(n, d)), rng.integers(0, K, size=n)
    w, block_clip = _flat(W), clip_norm / np.sqrt(K)
    raw = loss.per_example_gradients(w, X, y).reshape(n, d, K)
    clipped = np.stack([loss.gradient_sum(w, X[i:i + 1], y[i:i + 1], clip_norm) for i in range(n)]).reshape(n, d, K)
    block_norms, raw_norms = np.linalg.norm(clipped, axis=1), np.linalg.norm(raw, axis=1)  # (n, K)
    assert block_norms.max() <= block_clip * REL
    assert np.linalg.norm(clipped.reshape(n, -1), axis=1).max() <= clip_norm * REL
    inside = raw_norms <= block_clip
    np.testing.assert_allclose(clipped.transpose(0, 2, 1)[inside], raw.transpose(0, 2, 1)[inside], rtol=1e-12, atol=0)
    np.testing.assert_allclose(block_norms[~inside], block_clip, rtol=1e-12)
    # the same blocks, clipped one by one with numpy and summed: one binary problem per column
    expected = _clip_rows(raw.transpose(0, 2, 1), block_clip).sum(axis=0).T
    total = loss.gradient_sum(w, X, y, clip_norm).reshape(d, K)
    np.testing.assert_allclose(total, expected, rtol=1e-12, atol=1e-14)
    S = _signs(y, K)
    for k in range(K):  # = the binary loss's own clipped gradient sum of column k (labels s_k)
        np.testing.assert_allclose(total[:, k], binary.gradient_sum(W[:, k], X, S[:, k], block_clip),
                                   rtol=1e-12, atol=1e-14)
    row_norms = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(loss.gradient_sum(w, X, y, clip_norm, row_norms), total.ravel(), rtol=1e-12, atol=1e-14)
    # clipping at the gradient norm at zero changes no gradient at W = 0 (records inside the norm bound)
    Xb = _unit(rng, n, d) * DATA_NORM * rng.uniform(size=(n, 1))
    zero = np.zeros(d * K)
    np.testing.assert_allclose(loss.gradient_sum(zero, Xb, y, loss.gradient_norm_at_zero(DATA_NORM)),
                               loss.gradient_sum(zero, Xb, y), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("binary", [*SMOOTH_BINARIES, pytest.param(HingeLoss(), id="hinge")])
def test_ovr_with_two_classes_is_the_binary_loss_twice_with_opposite_labels(binary) -> None:
    """OvR(φ, 2) on W = [w₀, w₁] and class y is ℓ_φ(w₀; x, t) + ℓ_φ(w₁; x, −t), t = +1 iff y = 0: two
    binary problems on the same records with opposite labels.  So L and S_g are √2 times the binary
    ones (two full-slope columns), β is the binary β (block-diagonal Hessian), and on W = [w, −w] the
    two terms coincide: ℓ = 2ℓ_φ(w; x, t)."""
    rng = np.random.default_rng(17)
    loss = OneVsRestLoss(binary, 2)
    d, n = 4, 30
    W, X, y = rng.normal(size=(d, 2)), rng.normal(size=(n, d)), rng.integers(0, 2, size=n)
    t = np.where(y == 0, 1.0, -1.0)
    np.testing.assert_allclose(loss.values(_flat(W), X, y),
                               binary.values(W[:, 0], X, t) + binary.values(W[:, 1], X, -t), rtol=1e-12)
    G = loss.per_example_gradients(_flat(W), X, y).reshape(n, d, 2)
    np.testing.assert_allclose(G[:, :, 0], binary.per_example_gradients(W[:, 0], X, t), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(G[:, :, 1], binary.per_example_gradients(W[:, 1], X, -t), rtol=1e-12, atol=1e-15)
    clipped = loss.gradient_sum(_flat(W), X, y, 0.3).reshape(d, 2)
    np.testing.assert_allclose(clipped[:, 0], binary.gradient_sum(W[:, 0], X, t, 0.3 / np.sqrt(2)), rtol=1e-12)
    np.testing.assert_allclose(clipped[:, 1], binary.gradient_sum(W[:, 1], X, -t, 0.3 / np.sqrt(2)), rtol=1e-12)
    w = W[:, 0]
    np.testing.assert_allclose(loss.values(_flat(np.column_stack([w, -w])), X, y), 2 * binary.values(w, X, t),
                               rtol=1e-12)
    ovr, bin_ = loss.constants(DATA_NORM, 0.1, L2Ball(3.0)), binary.constants(DATA_NORM, 0.1, L2Ball(3.0))
    assert ovr.lipschitz == pytest.approx(np.sqrt(2) * bin_.lipschitz)
    assert ovr.gradient_sensitivity == pytest.approx(np.sqrt(2) * bin_.gradient_sensitivity)
    assert (ovr.smoothness, ovr.strong_convexity) == (bin_.smoothness, bin_.strong_convexity)


@pytest.mark.parametrize("bad", [[0, 3], [-1, 1], [0, 1.5], [0, np.nan], [[0, 1]]])
def test_ovr_refuses_labels_that_are_not_class_indices(bad) -> None:
    loss = OneVsRestLoss(HuberizedHingeLoss(), 3)
    X, w = np.ones((2, 2)), np.zeros(6)
    message = r"y must be a 1-d array of class indices in 0\.\.2 \(n_classes=3\)"
    with pytest.raises(ValueError, match=message):
        loss.check_labels(np.array(bad))
    for method in (loss.values, loss.per_example_gradients, loss.mean_gradient, loss.gradient_sum):
        with pytest.raises(ValueError, match=message):
            method(w, X, np.array(bad))
    loss.check_labels(np.array([0.0, 2.0, 1.0]))  # integer-valued floats are class indices


@pytest.mark.parametrize("binary", [SquaredLoss(), QuadraticDistanceLoss(), AbsoluteErrorLoss(),
                                    MultinomialLogisticLoss(2), OneVsRestLoss(LogisticLoss(), 2), LogisticLoss],
                         ids=["squared", "quadratic", "absolute", "multinomial", "one-vs-rest", "class-not-instance"])
def test_ovr_refuses_a_binary_loss_that_is_not_a_margin_loss(binary) -> None:
    with pytest.raises(ValueError, match=r"binary must be a margin loss phi\(y w\.x\)"):
        OneVsRestLoss(binary, 3)


@pytest.mark.parametrize("n_classes", [1, 0, 2.0, True, "3", None])
def test_ovr_rejects_invalid_n_classes(n_classes) -> None:
    with pytest.raises(ValueError, match=r"n_classes must be an integer >= 2"):
        OneVsRestLoss(LogisticLoss(), n_classes)


# ------------------------------------------------------------------- every mechanism trains them

#: The methods that train a non-smooth loss (sco_noisy_sgd, and auto, which delegates to it); the
#: others refuse it with the "not smooth" message.
NON_SMOOTH_METHODS = ("sco_noisy_sgd", "auto")
K_CLASS_LOSSES = [pytest.param(MultinomialLogisticLoss(3), id="multinomial"),
                  pytest.param(OneVsRestLoss(HuberizedHingeLoss(HUBER_H), 3), id="ovr-huber"),
                  pytest.param(OneVsRestLoss(HingeLoss(), 3), id="ovr-hinge")]


@pytest.mark.parametrize("loss", K_CLASS_LOSSES)
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_method_trains_a_k_class_loss_on_a_flat_d_times_k_parameter(name: str, loss) -> None:
    rng = np.random.default_rng(18)
    n, d, K = 40, 3, loss.n_classes
    X = _unit(rng, n, d) * rng.uniform(0.2, 1.0, size=(n, 1))
    y = np.argmax(X @ rng.normal(size=(d, K)), axis=1).astype(float)
    kwargs = dict(loss=loss, l2_regularization=0.1, epsilon=50.0, delta=1e-5, random_state=0)
    if not loss.smooth and name not in NON_SMOOTH_METHODS:
        with pytest.raises(ValueError, match="is not smooth"):
            METHODS[name](X, y, **kwargs)
        return
    result = METHODS[name](X, y, **kwargs)
    assert result.coef.shape == (d * K,) and np.all(np.isfinite(result.coef))
    assert result.certificate.assumptions["dimension"] == d * K  # the noise is drawn in R^{d·K}
    assert result.certificate.epsilon <= 50.0 * (1 + 1e-9)
    assert np.array_equal(METHODS[name](X, y, **kwargs).coef, result.coef)  # seeded
