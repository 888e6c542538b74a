"""Multinomial logistic loss: values and gradients against direct formulas and finite differences,
and the declared constants (L = √2X, S_g = 2√2X, β = X²/2 + λ, μ = λ) checked as upper bounds on
random and adversarial search — and as approached, so none of them is loose."""

from __future__ import annotations

import numpy as np
import pytest

from dpconvex.constraints import L2Ball, Unconstrained
from dpconvex.losses import LogisticLoss
from dpconvex.losses_multiclass import MultinomialLogisticLoss
from test_losses import _fd_gradient as _fd
from test_losses import _unit

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
