"""Tests of the benchmark's peer baselines (dpconvex_lab.baselines).

Oracles are independent of the code under test: hand-written gradients and SciPy for the
non-private optimum, the paper's formula evaluated by hand for objective perturbation plus a
Monte Carlo recovery of its noise vector, dp-accounting called directly for DP-SGD, and for the
K-class losses the softmax objective written out here against scikit-learn's multinomial fit and K
separate binary fits against the one-vs-rest one.
"""

from __future__ import annotations

import math
import sys
import types
import warnings

import dp_accounting
import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from dpconvex.objectives.losses import AbsoluteErrorLoss, HingeLoss, HuberizedHingeLoss, LogisticLoss
from dpconvex.objectives.multiclass import MultinomialLogisticLoss, OneVsRestLoss
from dpconvex_lab import baselines as B
from dpconvex_lab.baselines import BASELINES, BaselineUnavailable

PRIVATE = ["objpert", "sgd_ma", "sgd_ma_replace_one", "diffprivlib"]


def _data(n: int, d: int, seed: int, noise: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.normal(size=d) * 3
    y = np.where(X @ w + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


# hand-written objectives and gradients (not the library's)
def _logistic_fg(w, X, y, lam):
    z = y * (X @ w)
    value = np.mean(np.logaddexp(0.0, -z)) + 0.5 * lam * w @ w
    grad = X.T @ (-y / (1.0 + np.exp(z))) / len(y) + lam * w
    return value, grad


def _huber_fg(w, X, y, lam, h=0.5):
    z = y * (X @ w)
    phi = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))
    dphi = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -1.0, -(1 + h - z) / (2 * h)))
    return np.mean(phi) + 0.5 * lam * w @ w, X.T @ (dphi * y) / len(y) + lam * w


# ---------------------------------------------------------------------------------------------


def test_registry_names():
    assert set(BASELINES) == {"nonprivate", "majority", "objpert", "sgd_ma", "sgd_ma_replace_one", "diffprivlib"}


@pytest.mark.parametrize("loss, fg", [(LogisticLoss(), _logistic_fg), (HuberizedHingeLoss(0.5), _huber_fg)])
def test_nonprivate_matches_scipy_oracle(loss, fg):
    X, y = _data(600, 6, seed=1)
    lam = 1e-2
    fit = BASELINES["nonprivate"](X, y, loss=loss, epsilon=1.0, delta=1e-5, l2_regularization=lam)
    assert fit.bound.startswith("none") and fit.intercept == 0.0
    oracle = minimize(fg, np.zeros(6), args=(X, y, lam), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    ours = loss.objective(fit.coef, X, y, lam)
    assert ours == pytest.approx(oracle.fun, abs=1e-5)
    # first-order optimality with the hand-written gradient; λ-strong convexity then bounds the
    # suboptimality by ‖∇f‖²/(2λ) — catches a wrong C = 1/(nλ) mapping in the sklearn path.
    grad = fg(fit.coef, X, y, lam)[1]
    assert np.linalg.norm(grad) ** 2 / (2 * lam) < 1e-8
    np.testing.assert_allclose(fit.coef, oracle.x, atol=1e-3)


def test_nonprivate_logistic_uses_sklearn_and_same_objective():
    X, y = _data(400, 4, seed=2)
    fit = B.nonprivate(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3)
    assert "scikit-learn" in fit.note
    assert np.linalg.norm(_logistic_fg(fit.coef, X, y, 1e-3)[1]) < 1e-6


def test_majority_label():
    X = np.zeros((10, 3))
    y = np.array([-1.0] * 6 + [1.0] * 4)
    fit = B.majority(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3)
    assert fit.intercept == -1.0 and np.all(fit.coef == 0)
    assert np.all(fit.predict(np.ones((5, 3))) == -1.0)
    assert "not private" in fit.note
    fit = B.majority(X, -y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3)
    assert fit.intercept == 1.0
    tie = B.majority(X[:8], np.array([1.0, -1.0] * 4), loss=LogisticLoss(), epsilon=1.0, delta=1e-5,
                     l2_regularization=1e-3)
    assert tie.intercept == 1.0


def test_objpert_constants_match_paper_formula():
    # KST12 Alg. 1: σ² = ζ²(8 log(2/δ) + 4ε)/ε², Δ = 2λ_H/ε; numbers evaluated by hand:
    # ζ=1, ε=1, δ=1e-5: 8·ln(2e5) + 4 = 8·12.2060726 + 4 = 101.648581, σ = 10.0820921.
    assert B.objpert_noise_std(1.0, 1.0, 1e-5) == pytest.approx(10.0820921, rel=1e-7)
    # ζ=2, ε=0.5, δ=1e-8: 8·ln(2e8) + 2 = 8·19.1138279 + 2 = 154.910623, σ = 2·12.4463096/0.5.
    assert B.objpert_noise_std(2.0, 0.5, 1e-8) == pytest.approx(49.7852385, rel=1e-7)
    assert B.objpert_regularizer(0.25, 0.1) == pytest.approx(5.0)
    assert B.objpert_regularizer(1.0, 0.5) == pytest.approx(4.0)
    X, y = _data(50, 3, seed=0)
    fit = B.objpert(X, y, loss=HuberizedHingeLoss(0.25), epsilon=0.5, delta=1e-6, l2_regularization=1e-3,
                    random_state=0)
    assert fit.params["Delta"] == pytest.approx(2 * (1 / (2 * 0.25)) / 0.5)  # β = X²/(2h)
    assert fit.params["sigma"] == pytest.approx(math.sqrt(8 * math.log(2e6) + 2) / 0.5)
    assert fit.bound == "objective perturbation (KST12 Thm 2)"


def test_objpert_noise_variance_monte_carlo():
    """Recover b from the optimality condition of the perturbed objective and check its variance.

    At the exact minimiser of mean ℓ + (λ + Δ/n)/2·‖θ‖² + bᵀθ/n,
    b = −n(∇ mean ℓ(θ) + (λ + Δ/n)θ): a wrong σ, or b not divided by n, shows up in Var(b).
    """
    n, d, lam, eps, delta = 40, 3, 0.05, 1.0, 1e-3
    X, y = _data(n, d, seed=5)
    loss = LogisticLoss()
    sigma = math.sqrt(8 * math.log(2 / delta) + 4 * eps) / eps  # L = 1
    big_delta = 2 * 0.25 / eps
    draws = []
    for seed in range(300):
        fit = B.objpert(X, y, loss=loss, epsilon=eps, delta=delta, l2_regularization=lam, random_state=seed)
        grad = _logistic_fg(fit.coef, X, y, lam + big_delta / n)[1]
        draws.append(-n * grad)
    b = np.array(draws)
    assert np.abs(b.mean(axis=0)).max() < 4 * sigma / math.sqrt(len(b))
    # 900 draws of (b/σ)² ~ χ²₁: mean 1, sd √(2/900) ≈ 0.047; ±0.15 is > 3 sd.
    assert np.mean((b / sigma) ** 2) == pytest.approx(1.0, abs=0.15)


def test_objpert_rejects_unsuitable_losses():
    X, y = _data(30, 2, seed=0)
    for loss in (HingeLoss(), AbsoluteErrorLoss()):
        with pytest.raises(ValueError, match="smooth margin loss"):
            B.objpert(X, y, loss=loss, epsilon=1.0, delta=1e-5, l2_regularization=1e-3)


# ---------------------------------------------------------------------------------------------


def _dp_accounting_eps(z, q, steps, delta):
    acc = dp_accounting.rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)), steps))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("eps, delta, q, steps", [(1.0, 1e-5, 0.01, 500), (0.2, 1e-8, 256 / 40_000, 9375)])
def test_sgd_ma_calibration_is_tight_and_never_overshoots(eps, delta, q, steps):
    z = B.calibrate_sgd_ma_noise(eps, delta, q, steps)
    assert _dp_accounting_eps(z, q, steps, delta) <= eps
    assert _dp_accounting_eps(z * (1 - 1e-3), q, steps, delta) > eps


def test_sgd_ma_fit_uses_calibrated_noise():
    X, y = _data(1000, 4, seed=3)
    fit = B.sgd_ma(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3,
                   random_state=0, epochs=2)
    q, steps, z = fit.params["sampling_rate"], int(fit.params["steps"]), fit.params["noise_multiplier"]
    assert q == pytest.approx(256 / 1000) and steps == math.ceil(2 / q)
    assert _dp_accounting_eps(z, q, steps, 1e-5) <= 1.0
    assert _dp_accounting_eps(z * (1 - 1e-3), q, steps, 1e-5) > 1.0
    assert "add/remove" in fit.bound


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_sgd_ma_noise_scale_on_zero_gradients(neighbouring):
    """With x = 0 every gradient vanishes and λ = 0: w_T = −η Σ_t N(0, (zC)²I)/(qn)."""
    n, d, lr, clip = 1000, 400, 0.15, 2.0
    X, y = np.zeros((n, d)), np.ones(n)
    fit = B.sgd_ma(X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=0.0,
                   random_state=4, epochs=1, clip_norm=clip, learning_rate=lr, neighbouring=neighbouring)
    z, steps = fit.params["noise_multiplier"], fit.params["steps"]
    expected_var = steps * (lr * z * clip / 256) ** 2
    # 400 coordinates: mean of χ²₁ has sd √(2/400) ≈ 0.07; ±0.25 is > 3 sd.
    assert np.mean(fit.coef**2) / expected_var == pytest.approx(1.0, abs=0.25)


def test_sgd_ma_huge_epsilon_reaches_nonprivate_accuracy():
    X, y = _data(2000, 5, seed=3, noise=0.1)
    loss, lam = LogisticLoss(), 1e-3
    ref = BASELINES["nonprivate"](X, y, loss=loss, epsilon=1.0, delta=1e-5, l2_regularization=lam)
    fit = BASELINES["sgd_ma"](X, y, loss=loss, epsilon=1e3, delta=1e-5, l2_regularization=lam, random_state=0)
    acc_ref = np.mean(ref.predict(X) == y)
    acc = np.mean(fit.predict(X) == y)
    assert acc_ref > 0.9
    assert acc >= acc_ref - 0.02  # tolerance: 2 percentage points of training accuracy


# ---------------------------------------------------------------------------------------------


def _fake_diffprivlib(monkeypatch, fit_error: Exception | None = None) -> dict:
    seen: dict = {}

    class FakeLR:
        def __init__(self, epsilon=1.0, data_norm=None, C=1.0, fit_intercept=True, random_state=None):
            seen.update(epsilon=epsilon, data_norm=data_norm, C=C, fit_intercept=fit_intercept)

        def fit(self, X, y):
            if fit_error is not None:
                raise fit_error
            self.coef_ = np.arange(X.shape[1], dtype=float)[None, :]
            return self

    package, models = types.ModuleType("diffprivlib"), types.ModuleType("diffprivlib.models")
    models.LogisticRegression = FakeLR
    package.models = models
    monkeypatch.setitem(sys.modules, "diffprivlib", package)
    monkeypatch.setitem(sys.modules, "diffprivlib.models", models)
    return seen


def test_diffprivlib_import_failure_is_reported(monkeypatch):
    monkeypatch.setitem(sys.modules, "diffprivlib", None)
    X, y = _data(50, 3, seed=0)
    with pytest.raises(BaselineUnavailable, match="could not be imported"):
        BASELINES["diffprivlib"](X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3)


def test_diffprivlib_fit_failure_carries_original_message(monkeypatch):
    _fake_diffprivlib(monkeypatch, fit_error=TypeError("unexpected keyword 'multi_class'"))
    X, y = _data(50, 3, seed=0)
    with pytest.raises(BaselineUnavailable, match="multi_class"):
        BASELINES["diffprivlib"](X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3)


def test_diffprivlib_working_branch_passes_our_objective(monkeypatch):
    seen = _fake_diffprivlib(monkeypatch)
    X, y = _data(50, 3, seed=0)
    fit = BASELINES["diffprivlib"](X, y, loss=LogisticLoss(), epsilon=0.7, delta=1e-5,
                                   l2_regularization=1e-2, data_norm=2.0, random_state=1)
    assert seen == {"epsilon": 0.7, "data_norm": 2.0, "C": pytest.approx(1 / (50 * 1e-2)), "fit_intercept": False}
    np.testing.assert_array_equal(fit.coef, [0.0, 1.0, 2.0])
    with pytest.raises(BaselineUnavailable, match="logistic"):
        BASELINES["diffprivlib"](X, y, loss=HuberizedHingeLoss(), epsilon=0.7, delta=1e-5, l2_regularization=1e-2)


def test_diffprivlib_real_package_works_or_is_unavailable():
    X, y = _data(200, 3, seed=0)
    try:
        fit = BASELINES["diffprivlib"](X, y, loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-2,
                                       random_state=0)
    except BaselineUnavailable as exc:
        assert str(exc)
    else:
        assert fit.coef.shape == (3,) and np.all(np.isfinite(fit.coef))


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PRIVATE)
@pytest.mark.parametrize("epsilon", [0.0, -1.0, float("nan")])
def test_bad_epsilon_raises_value_error(name, epsilon, monkeypatch):
    monkeypatch.setitem(sys.modules, "diffprivlib", None)  # validation must come before the import
    X, y = _data(20, 2, seed=0)
    with pytest.raises(ValueError, match="epsilon"):
        BASELINES[name](X, y, loss=LogisticLoss(), epsilon=epsilon, delta=1e-5, l2_regularization=1e-3)


def test_bad_labels_raise():
    X, _ = _data(20, 2, seed=0)
    with pytest.raises(ValueError, match="labels"):
        B.objpert(X, np.arange(20.0), loss=LogisticLoss(), epsilon=1.0, delta=1e-5, l2_regularization=1e-3)
    with pytest.raises(ValueError, match=r"class indices in 0\.\.2"):  # ±1 labels for a 3-class loss
        B.nonprivate(X, np.where(np.arange(20) % 2, 1.0, -1.0), loss=MultinomialLogisticLoss(3), epsilon=1.0,
                     delta=1e-5, l2_regularization=1e-3)


# K-class losses (labels 0..K−1, coef = vec(W) of length d·K, W of shape (d, K) row-major)


def _classes(n: int, d: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit rows; labels the argmax of a random linear score plus noise, so no class is separable."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.argmax(X @ rng.normal(size=(d, k)) * 3 + rng.normal(size=(n, k)), axis=1).astype(float)
    return X, y


def _multinomial_objective(W: np.ndarray, X: np.ndarray, y: np.ndarray, lam: float) -> float:
    """Mean softmax cross-entropy + (λ/2)‖W‖²_F, written here from the definition (not the library's loss)."""
    scores = X @ W
    cross_entropy = logsumexp(scores, axis=1) - scores[np.arange(len(y)), y.astype(int)]
    return float(np.mean(cross_entropy) + 0.5 * lam * np.sum(W * W))


@pytest.mark.parametrize("lam", [1e-2, 1e-3])
def test_nonprivate_multinomial_matches_sklearn_objective(lam):
    """scikit-learn's multinomial LogisticRegression(C=1/(nλ), no intercept) minimises C·Σ CE + ½‖W‖²_F,
    i.e. n·C times our objective: both solvers must reach the same λ-strongly convex minimum."""
    n, d, k = 500, 6, 4
    X, y = _classes(n, d, k, seed=5)
    fit = B.nonprivate(X, y, loss=MultinomialLogisticLoss(k), epsilon=1.0, delta=1e-5, l2_regularization=lam)
    assert fit.coef.shape == (d * k,)
    model = LogisticRegression(C=1.0 / (n * lam), fit_intercept=False, tol=1e-12, max_iter=100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # float resolution stops it before tol 1e-12
        model.fit(X, y)
    sklearn_W = model.coef_.T  # coef_ is (K, d), one row per class in the order 0..K−1
    ours = _multinomial_objective(fit.coef.reshape(d, k), X, y, lam)
    reference = _multinomial_objective(sklearn_W, X, y, lam)
    # Both stop at gradient norms ~1e-8 or below: suboptimality ≤ ‖∇f‖²/(2λ) ≤ 1e-11 at λ = 1e-3.
    assert ours == pytest.approx(reference, abs=1e-9)
    # λ-strong convexity: ‖W − W*‖ ≤ ‖∇f(W)‖/λ for each, so the minimisers agree too.
    np.testing.assert_allclose(fit.coef.reshape(d, k), sklearn_W, atol=1e-5)
    np.testing.assert_array_equal(fit.predict(X), model.predict(X))


def test_nonprivate_one_vs_rest_is_k_binary_fits():
    """mean Σ_k φ(s_k w_kᵀx) + (λ/2)‖W‖² separates over the columns: column k is the binary fit of
    class k against the rest."""
    n, d, k, lam = 400, 5, 3, 1e-2
    X, y = _classes(n, d, k, seed=6)
    huber = HuberizedHingeLoss(0.5)
    fit = B.nonprivate(X, y, loss=OneVsRestLoss(huber, k), epsilon=1.0, delta=1e-5, l2_regularization=lam)
    assert fit.coef.shape == (d * k,)
    for label in range(k):
        binary = B.nonprivate(X, np.where(y == label, 1.0, -1.0), loss=huber, epsilon=1.0, delta=1e-5,
                              l2_regularization=lam)
        # both at gradient norm ≤ ~1e-10: ‖w − w*‖ ≤ ‖∇f‖/λ
        np.testing.assert_allclose(fit.coef.reshape(d, k)[:, label], binary.coef, atol=1e-6)


def test_predict_of_class_matrix_weights_is_the_argmax_column():
    # rows e_0, e_1, e_2 and W with W[j, perm[j]] = 1: row j scores highest in column perm[j]
    perm = np.array([2, 0, 1])
    W = np.zeros((3, 3))
    W[np.arange(3), perm] = 1.0
    fit = B.BaselineFit(coef=W.ravel(), bound="none", note="")  # row-major vec(W), the losses' layout
    np.testing.assert_array_equal(fit.predict(np.eye(3)), perm)
    with pytest.raises(ValueError, match="X has 4 features but coef has 9 entries"):
        fit.predict(np.eye(4))


@pytest.mark.parametrize("loss", [MultinomialLogisticLoss(3), OneVsRestLoss(HuberizedHingeLoss(0.5), 3)])
def test_binary_only_baselines_refuse_k_class_losses(loss, monkeypatch):
    monkeypatch.setitem(sys.modules, "diffprivlib", None)  # the refusal must not depend on the package
    X, y = _classes(30, 3, 3, seed=0)
    kwargs = {"loss": loss, "epsilon": 1.0, "delta": 1e-5, "l2_regularization": 1e-3}
    with pytest.raises(ValueError, match="smooth margin loss"):
        B.objpert(X, y, **kwargs)
    with pytest.raises(ValueError, match="binary classification loss"):
        B.majority(X, y, **kwargs)
    with pytest.raises(BaselineUnavailable, match="binary logistic regression"):
        B.diffprivlib_logistic(X, y, **kwargs)
