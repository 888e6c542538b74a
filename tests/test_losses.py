"""Losses: gradients against finite differences, the Huber closed form, and the declared constants
(L, S_g, β, μ, L_reg) checked empirically as upper bounds — and, where they are tight, as attained."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpconvex.objectives.constraints import L2Ball, Unconstrained
from dpconvex.objectives.losses import (
    LOSSES,
    HuberizedHingeLoss,
    LogisticLoss,
    QuadraticDistanceLoss,
    SquaredLoss,
    clip_scale,
)

HUBER_HS = (0.1, 0.5, 1.0)
LOSS_CASES = [
    pytest.param(LogisticLoss(), id="logistic"),
    *[pytest.param(HuberizedHingeLoss(h), id=f"huber-h{h}") for h in HUBER_HS],
    pytest.param(SquaredLoss(), id="squared"),
    pytest.param(QuadraticDistanceLoss(), id="quadratic"),
]
MARGIN_CASES = LOSS_CASES[:4]

DATA_NORM = 2.5  # X
LABEL_BOUND = 1.5  # Y (squared loss)
RADIUS = 3.0  # R (squared / quadratic losses, and L_reg of the margin losses)
REL = 1.0 + 1e-12  # slack for "declared constant is an upper bound"


# ------------------------------------------------------------------------------------- helpers


def _sigmoid(t):
    # Independent of scipy's expit: σ(t) = (1 + tanh(t/2)) / 2.
    return 0.5 * (1.0 + np.tanh(0.5 * t))


def _reference_gradients(loss, w, X, y):
    """Per-example gradients written out from each loss's textbook formula (not the library's)."""
    if isinstance(loss, QuadraticDistanceLoss):
        return w[None, :] - X
    if isinstance(loss, SquaredLoss):
        return (X @ w - y)[:, None] * X
    z = y * (X @ w)
    if isinstance(loss, LogisticLoss):
        dphi = -_sigmoid(-z)  # d/dz log(1 + e^{−z}) = −e^{−z}/(1 + e^{−z}) = −σ(−z)
    else:
        h = loss.h
        dphi = np.select([z > 1 + h, z < 1 - h], [0.0, -1.0], default=(z - 1 - h) / (2 * h))
    return (dphi * y)[:, None] * X


def _fd_gradient(f, w, step=1e-5):
    """Central differences of f (scalar- or vector-valued) along each coordinate of w."""
    cols = []
    for j in range(w.size):
        e = np.zeros_like(w)
        e[j] = step
        cols.append((np.asarray(f(w + e)) - np.asarray(f(w - e))) / (2 * step))
    return np.stack(cols, axis=-1)


def _random_data(loss, rng, n, d):
    X = rng.normal(size=(n, d))
    if isinstance(loss, SquaredLoss):
        y = rng.uniform(-2.0, 2.0, size=n)
    else:
        y = rng.choice([-1.0, 1.0], size=n)
    return X, y


def _unit(rng, m, d):
    u = rng.normal(size=(m, d))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


def _constants(loss, lam, constraint=None):
    if constraint is None:
        constraint = L2Ball(RADIUS)
    label_bound = LABEL_BOUND if isinstance(loss, SquaredLoss) else None
    return loss.constants(DATA_NORM, lam, constraint, label_bound=label_bound)


def _thetas(loss, rng, d, count):
    """Parameters to test at: inside (and on) the ball for the bounded losses, anywhere otherwise."""
    dirs = _unit(rng, count, d)
    if isinstance(loss, (SquaredLoss, QuadraticDistanceLoss)):
        norms = RADIUS * rng.uniform(size=count) ** (1.0 / d)
        norms[: count // 4] = RADIUS  # on the sphere, where the gradient bounds are tightest
        thetas = dirs * norms[:, None]
    else:
        norms = 10.0 ** rng.uniform(-2, 3, size=count)
        thetas = dirs * norms[:, None]
    thetas[0] = 0.0
    return thetas


def _records(loss, rng, theta, m):
    """Records with ‖x‖ ≤ X (half exactly on the sphere) plus adversarial ones, labels valid."""
    d = theta.size
    xs = _unit(rng, m, d) * DATA_NORM
    xs[m // 2 :] *= rng.uniform(size=(m - m // 2, 1)) ** (1.0 / d)
    nrm = np.linalg.norm(theta)
    if nrm > 0:
        t = theta / nrm
        # aligned / anti-aligned with θ, and nearly orthogonal to θ on either side (the records
        # that push the margin losses' gradient difference towards 2X)
        perp = _unit(rng, 4, d)
        perp -= (perp @ t)[:, None] * t
        perp /= np.linalg.norm(perp, axis=1, keepdims=True)
        eps = np.array([1e-3, -1e-3, 3e-2, -3e-2])[:, None]
        near = (np.sqrt(1 - eps**2) * perp + eps * t) * DATA_NORM
        xs = np.vstack([xs, DATA_NORM * t, -DATA_NORM * t, near, -near])
    xs = np.vstack([xs, -xs])  # x' = −x for every x
    if isinstance(loss, SquaredLoss):
        # each x with a random |y| ≤ Y, with y = +Y and with y' = −Y
        k = len(xs)
        ys = np.concatenate([rng.uniform(-LABEL_BOUND, LABEL_BOUND, size=k), np.full(k, LABEL_BOUND),
                             np.full(k, -LABEL_BOUND)])
        xs = np.vstack([xs, xs, xs])
    else:
        ys = np.concatenate([np.ones(len(xs)), -np.ones(len(xs))])  # each x with y and y' = −y
        xs = np.vstack([xs, xs])
    return xs, ys


# ------------------------------------------------------------------------- 1. gradients vs FD


@pytest.mark.parametrize("loss", LOSS_CASES)
def test_per_example_and_mean_gradients_match_finite_differences(loss) -> None:
    rng = np.random.default_rng(0)
    d, n, lam = 4, 25, 0.37
    for _ in range(5):
        w = rng.normal(size=d)
        X, y = _random_data(loss, rng, n, d)
        G = loss.per_example_gradients(w, X, y)
        assert G.shape == (n, d)
        fd = _fd_gradient(lambda v: loss.values(v, X, y), w)  # (n, d): ∂ℓᵢ/∂w_j
        np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-8)
        g = loss.mean_gradient(w, X, y)
        np.testing.assert_allclose(g, G.mean(axis=0), rtol=1e-12, atol=1e-14)
        fd_obj = _fd_gradient(lambda v: loss.objective(v, X, y, lam), w)
        np.testing.assert_allclose(g + lam * w, fd_obj, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("h", HUBER_HS)
def test_huber_gradients_in_all_three_regimes(h: float) -> None:
    loss = HuberizedHingeLoss(h)
    rng = np.random.default_rng(1)
    d, per, lam = 4, 12, 0.2
    w = rng.normal(size=d)
    # Target margins z, kept ≥ 0.1h away from the kinks 1 ± h so the FD stencil stays in one piece.
    z = np.concatenate(
        [
            1 + h + rng.uniform(0.1 * h, 2.0, size=per),  # flat part, φ' = 0
            1 + h * rng.uniform(-0.9, 0.9, size=per),  # quadratic part
            1 - h - rng.uniform(0.1 * h, 2.0, size=per),  # linear part, φ' = −1
        ]
    )
    y = rng.choice([-1.0, 1.0], size=z.size)
    # x = y·z·w/‖w‖² + (component ⟂ w), so that y·wᵀx = z exactly.
    r = rng.normal(size=(z.size, d))
    r -= np.outer(r @ w, w) / (w @ w)
    X = (y * z)[:, None] * w[None, :] / (w @ w) + r
    zz = y * (X @ w)
    np.testing.assert_allclose(zz, z, rtol=1e-12, atol=1e-12)
    G = loss.per_example_gradients(w, X, y)
    np.testing.assert_allclose(G, _fd_gradient(lambda v: loss.values(v, X, y), w), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(G, _reference_gradients(loss, w, X, y), rtol=1e-12, atol=1e-14)
    # regime signatures: zero gradient, then −y·x exactly
    assert np.all(G[:per] == 0.0)
    np.testing.assert_allclose(G[2 * per :], -(y[2 * per :, None] * X[2 * per :]), rtol=1e-15)
    fd_obj = _fd_gradient(lambda v: loss.objective(v, X, y, lam), w)
    np.testing.assert_allclose(loss.mean_gradient(w, X, y) + lam * w, fd_obj, rtol=1e-6, atol=1e-9)


def test_quadratic_loss_ignores_labels_and_matches_definition() -> None:
    loss = QuadraticDistanceLoss()
    rng = np.random.default_rng(2)
    w, X = rng.normal(size=3), rng.normal(size=(6, 3))
    v1 = loss.values(w, X, rng.normal(size=6))
    v2 = loss.values(w, X, np.zeros(6))
    np.testing.assert_array_equal(v1, v2)
    np.testing.assert_allclose(v1, [0.5 * np.sum((w - x) ** 2) for x in X], rtol=1e-14)


def test_logistic_values_are_stable_and_exact() -> None:
    loss = LogisticLoss()
    z = np.array([-800.0, -1.0, 0.0, 1.0, 800.0])
    phi = loss.phi(z)
    assert np.all(np.isfinite(phi))
    np.testing.assert_allclose(phi, [800.0, np.log1p(np.e), np.log(2.0), np.log1p(np.exp(-1.0)), 0.0],
                               rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(loss.dphi(z), [-1.0, -_sigmoid(1.0), -0.5, -_sigmoid(-1.0), 0.0],
                               rtol=1e-14, atol=1e-300)


def test_loss_registry() -> None:
    assert set(LOSSES) == {"logistic", "huber", "squared", "quadratic", "hinge", "absolute"}
    for name, factory in LOSSES.items():
        assert factory().name == name
    assert LogisticLoss.classification and HuberizedHingeLoss.classification
    assert not SquaredLoss.classification and not QuadraticDistanceLoss.classification


# ------------------------------------------------------------------- 2. Huber closed form


@pytest.mark.parametrize(
    ("h", "z", "phi", "dphi"),
    [
        # h = 0.5: flat for z > 1.5, (1.5 − z)²/2 on [0.5, 1.5], 1 − z below 0.5.
        (0.5, 2.0, 0.0, 0.0),
        (0.5, 1.5, 0.0, 0.0),  # (1.5 − 1.5)²/2 = 0
        (0.5, 1.2, 0.045, -0.3),  # 0.3²/2 = 0.09/2 = 0.045; φ' = −0.3/1 = −0.3
        (0.5, 1.0, 0.125, -0.5),  # 0.5²/2 = 0.25/2 = 0.125; φ' = −0.5/1
        (0.5, 0.5, 0.5, -1.0),  # 1²/2 = 0.5 = 1 − 0.5
        (0.5, 0.0, 1.0, -1.0),  # 1 − 0
        (0.5, -1.0, 2.0, -1.0),  # 1 − (−1)
        # h = 0.1: (1.1 − z)²/0.4 on [0.9, 1.1]
        (0.1, 1.0, 0.025, -0.5),  # 0.1²/0.4 = 0.01/0.4 = 0.025; φ' = −0.1/0.2
        (0.1, 0.95, 0.05625, -0.75),  # 0.15²/0.4 = 0.0225/0.4 = 0.05625; φ' = −0.15/0.2
        (0.1, 1.2, 0.0, 0.0),
        (0.1, 0.5, 0.5, -1.0),
        # h = 1: (2 − z)²/4 on [0, 2]
        (1.0, 1.0, 0.25, -0.5),  # 1/4; φ' = −1/2
        (1.0, 1.5, 0.0625, -0.25),  # 0.25/4 = 0.0625; φ' = −0.5/2
        (1.0, 0.0, 1.0, -1.0),  # 4/4 = 1 = 1 − 0
        (1.0, -0.5, 1.5, -1.0),
        (1.0, 3.0, 0.0, 0.0),
    ],
)
def test_huber_phi_hand_computed(h: float, z: float, phi: float, dphi: float) -> None:
    loss = HuberizedHingeLoss(h)
    assert float(loss.phi(np.array(z))) == pytest.approx(phi, rel=1e-12, abs=1e-15)
    assert float(loss.dphi(np.array(z))) == pytest.approx(dphi, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("h", HUBER_HS)
def test_huber_continuous_convex_with_bounded_derivatives(h: float) -> None:
    loss = HuberizedHingeLoss(h)
    for knot in (1 - h, 1 + h):
        t = 1e-9
        left, right = np.array(knot - t), np.array(knot + t)
        assert abs(float(loss.phi(left) - loss.phi(right))) < 1e-8
        assert abs(float(loss.dphi(left) - loss.dphi(right))) < 1e-7
    # the pieces meet at the knots: φ(1 − h) = 1 − (1 − h) = h = (2h)²/(4h), φ(1 + h) = 0
    assert float(loss.phi(np.array(1 - h))) == pytest.approx(h, rel=1e-12)
    assert float(loss.phi(np.array(1 + h))) == 0.0
    z = np.linspace(-3, 4, 7001)
    dphi = loss.dphi(z)
    assert np.all((dphi >= -1.0) & (dphi <= 0.0))
    assert np.all(np.diff(dphi) >= 0)  # convex
    # φ'' ≤ 1/(2h) = curvature: slope of φ' between grid points
    assert np.max(np.diff(dphi) / np.diff(z)) <= loss.curvature * (1 + 1e-9)
    assert loss.curvature == pytest.approx(1 / (2 * h))
    # φ is the integral of φ' (trapezoid on a piecewise-linear φ' is exact up to the kinks)
    integral = np.concatenate([[0.0], np.cumsum(0.5 * (dphi[1:] + dphi[:-1]) * np.diff(z))])
    np.testing.assert_allclose(loss.phi(z) - loss.phi(z[0]), integral, atol=1e-6)


# --------------------------------------------------------------- 3. constants are upper bounds


@pytest.mark.parametrize("loss", LOSS_CASES)
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_declared_lipschitz_and_sensitivity_bound_the_gradients(loss, lam: float) -> None:
    rng = np.random.default_rng(3)
    d = 3
    c = _constants(loss, lam)
    assert c.gradient_sensitivity <= 2 * c.lipschitz * REL
    worst_norm = worst_diff = worst_reg = 0.0
    for theta in _thetas(loss, rng, d, 40):
        xs, ys = _records(loss, rng, theta, 60)
        assert np.all(np.linalg.norm(xs, axis=1) <= DATA_NORM * REL)
        G = loss.per_example_gradients(theta, xs, ys)
        np.testing.assert_allclose(G, _reference_gradients(loss, theta, xs, ys), rtol=1e-9, atol=1e-12)
        worst_norm = max(worst_norm, np.linalg.norm(G, axis=1).max())
        diffs = np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2)  # all replace-one pairs
        worst_diff = max(worst_diff, diffs.max())
        if np.linalg.norm(theta) <= RADIUS * REL:
            worst_reg = max(worst_reg, np.linalg.norm(G + lam * theta, axis=1).max())
    assert worst_norm <= c.lipschitz * REL
    assert worst_diff <= c.gradient_sensitivity * REL
    assert worst_reg <= c.lipschitz_regularized * REL
    # the sampling is not vacuous: it reaches a sizeable fraction of each declared bound
    assert worst_norm >= 0.5 * c.lipschitz
    assert worst_diff >= 0.5 * c.gradient_sensitivity


def _fd_hessian(loss, theta, x, y, lam, step=1e-5):
    def grad(v):
        return loss.per_example_gradients(v, x[None, :], np.array([y]))[0] + lam * v

    H = _fd_gradient(grad, theta, step)
    return 0.5 * (H + H.T)


@pytest.mark.parametrize("loss", LOSS_CASES)
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_declared_smoothness_and_strong_convexity_bound_the_hessian(loss, lam: float) -> None:
    rng = np.random.default_rng(4)
    d = 3
    c = _constants(loss, lam)
    tol = 1e-6 * max(1.0, c.smoothness)
    top = 0.0
    thetas = _thetas(loss, rng, d, 30)
    if isinstance(loss, (LogisticLoss, HuberizedHingeLoss)):
        thetas = thetas[np.linalg.norm(thetas, axis=1) < 20]  # keep |z| moderate: curvature lives there
    for theta in thetas:
        xs, ys = _records(loss, rng, theta, 6)
        for x, y in zip(xs[::3], ys[::3]):
            ev = np.linalg.eigvalsh(_fd_hessian(loss, theta, x, y, lam))
            assert ev[-1] <= c.smoothness + tol
            assert ev[0] >= c.strong_convexity - tol
            top = max(top, ev[-1])
    assert top >= lam  # sanity: the regulariser is seen

    # FD-free check of the same constants: for F = ℓ(·; d) + (λ/2)‖·‖² and any a, b,
    # μ‖a − b‖² ≤ ⟨∇F(a) − ∇F(b), a − b⟩ and ‖∇F(a) − ∇F(b)‖ ≤ β‖a − b‖.
    A, B = _thetas(loss, rng, d, 200), _thetas(loss, rng, d, 200)
    xs, ys = _records(loss, rng, A[1], 200)
    idx = rng.integers(0, len(xs), size=200)
    for a, b, i in zip(A, B, idx):
        ga = loss.per_example_gradients(a, xs[i : i + 1], ys[i : i + 1])[0] + lam * a
        gb = loss.per_example_gradients(b, xs[i : i + 1], ys[i : i + 1])[0] + lam * b
        delta = a - b
        sq = delta @ delta
        assert np.linalg.norm(ga - gb) <= c.smoothness * np.sqrt(sq) * REL + 1e-12
        assert (ga - gb) @ delta >= c.strong_convexity * sq * (1 - 1e-12) - 1e-12


# ----------------------------------------------------------------------- tightness of constants


def test_logistic_gradient_sensitivity_approaches_2X_for_large_theta() -> None:
    loss = LogisticLoss()
    c = loss.constants(DATA_NORM, 0.0, Unconstrained())
    angles = np.linspace(0.0, 2 * np.pi, 720, endpoint=False)
    circle = DATA_NORM * np.column_stack([np.cos(angles), np.sin(angles)])
    ones = np.ones(len(circle))  # y = −1 is the same as x → −x, already on the circle

    def sup_diff(theta):
        G = loss.per_example_gradients(theta, circle, ones)
        return np.linalg.norm(G[:, None, :] - G[None, :, :], axis=2).max()

    sups = [sup_diff(np.array([t, 0.0])) for t in (0.0, 1.0, 10.0, 1000.0)]
    # at θ = 0 every gradient is −x/2: the supremum is exactly X = S_g/2
    assert sups[0] == pytest.approx(DATA_NORM, rel=1e-12)
    assert all(s <= c.gradient_sensitivity * REL for s in sups)
    assert sups == sorted(sups)
    assert sups[-1] >= 0.99 * c.gradient_sensitivity
    # and ‖∇ℓ‖ → X = L when y·θᵀx → −∞
    g = loss.per_example_gradients(np.array([1000.0, 0.0]), np.array([[-DATA_NORM, 0.0]]), np.ones(1))
    assert np.linalg.norm(g) == pytest.approx(c.lipschitz, rel=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_logistic_curvature_quarter_X2_attained_at_zero(lam: float) -> None:
    loss = LogisticLoss()
    c = loss.constants(DATA_NORM, lam, Unconstrained())
    assert c.smoothness == pytest.approx(0.25 * DATA_NORM**2 + lam, rel=1e-15)
    x = DATA_NORM * _unit(np.random.default_rng(5), 1, 3)[0]
    ev = np.linalg.eigvalsh(_fd_hessian(loss, np.zeros(3), x, 1.0, lam))
    assert ev[-1] == pytest.approx(c.smoothness, rel=1e-6)
    assert ev[0] == pytest.approx(c.strong_convexity, abs=1e-6)


@pytest.mark.parametrize("h", HUBER_HS)
def test_huber_constants_are_attained(h: float) -> None:
    loss = HuberizedHingeLoss(h)
    lam = 0.3
    c = loss.constants(DATA_NORM, lam, Unconstrained())
    assert c.smoothness == pytest.approx(DATA_NORM**2 / (2 * h) + lam, rel=1e-15)
    x = DATA_NORM * _unit(np.random.default_rng(6), 1, 3)[0]
    # S_g = 2X at θ = 0: z = 0 ≤ 1 − h... or in the quadratic piece when h = 1; φ'(0) = −1 either way
    G = loss.per_example_gradients(np.zeros(3), np.vstack([x, -x]), np.ones(2))
    assert np.linalg.norm(G[0]) == pytest.approx(c.lipschitz, rel=1e-12)
    assert np.linalg.norm(G[0] - G[1]) == pytest.approx(c.gradient_sensitivity, rel=1e-12)
    # β = X²/(2h) + λ at the centre of the quadratic piece: θ = x/‖x‖², y = 1 ⇒ z = 1
    ev = np.linalg.eigvalsh(_fd_hessian(loss, x / (x @ x), x, 1.0, lam))
    assert ev[-1] == pytest.approx(c.smoothness, rel=1e-6)


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_squared_constants_formula_and_attained(lam: float) -> None:
    loss = SquaredLoss()
    c = loss.constants(DATA_NORM, lam, L2Ball(RADIUS), label_bound=LABEL_BOUND)
    L = (RADIUS * DATA_NORM + LABEL_BOUND) * DATA_NORM
    assert c.lipschitz == pytest.approx(L, rel=1e-15)
    assert c.gradient_sensitivity == pytest.approx(2 * L, rel=1e-15)
    assert c.smoothness == pytest.approx(DATA_NORM**2 + lam, rel=1e-15)
    assert c.strong_convexity == lam
    assert c.lipschitz_regularized == pytest.approx(L + lam * RADIUS, rel=1e-15)
    u = _unit(np.random.default_rng(7), 1, 3)[0]
    theta, x = RADIUS * u, DATA_NORM * u
    g = loss.per_example_gradients(theta, x[None, :], np.array([-LABEL_BOUND]))[0]
    assert np.linalg.norm(g) == pytest.approx(L, rel=1e-12)  # (R·X + Y)·X attained
    assert np.linalg.norm(g + lam * theta) == pytest.approx(c.lipschitz_regularized, rel=1e-12)
    ev = np.linalg.eigvalsh(_fd_hessian(loss, theta, x, -LABEL_BOUND, lam))
    assert ev[-1] == pytest.approx(c.smoothness, rel=1e-6)
    assert ev[0] == pytest.approx(lam, abs=1e-6)


@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_quadratic_constants_formula_and_attained(lam: float) -> None:
    loss = QuadraticDistanceLoss()
    c = loss.constants(DATA_NORM, lam, L2Ball(RADIUS))
    assert c.lipschitz == pytest.approx(RADIUS + DATA_NORM, rel=1e-15)
    assert c.gradient_sensitivity == pytest.approx(2 * DATA_NORM, rel=1e-15)
    assert c.smoothness == pytest.approx(1 + lam) and c.strong_convexity == pytest.approx(1 + lam)
    u = _unit(np.random.default_rng(8), 1, 3)[0]
    theta = RADIUS * u
    G = loss.per_example_gradients(theta, np.vstack([-DATA_NORM * u, DATA_NORM * u]), np.zeros(2))
    assert np.linalg.norm(G[0]) == pytest.approx(c.lipschitz, rel=1e-12)
    assert np.linalg.norm(G[0] - G[1]) == pytest.approx(c.gradient_sensitivity, rel=1e-12)
    ev = np.linalg.eigvalsh(_fd_hessian(loss, theta, DATA_NORM * u, 0.0, lam))
    np.testing.assert_allclose(ev, 1 + lam, rtol=1e-6)


@pytest.mark.parametrize("loss", MARGIN_CASES)
def test_margin_constants_formula(loss) -> None:
    lam = 0.3
    c = loss.constants(DATA_NORM, lam, L2Ball(RADIUS))
    assert c.lipschitz == DATA_NORM and c.gradient_sensitivity == 2 * DATA_NORM
    assert c.strong_convexity == lam
    assert c.lipschitz_regularized == pytest.approx(DATA_NORM + lam * RADIUS, rel=1e-15)
    assert loss.constants(DATA_NORM, lam, Unconstrained()).lipschitz_regularized == np.inf


@pytest.mark.parametrize("loss", [*MARGIN_CASES, pytest.param(QuadraticDistanceLoss(), id="quadratic")])
def test_unregularised_unconstrained_lipschitz_regularized_is_not_nan(loss) -> None:
    c = loss.constants(DATA_NORM, 0.0, Unconstrained())
    assert c.lipschitz_regularized == c.lipschitz  # λ = 0: the regulariser adds nothing


# ------------------------------------------------------------------------- 4. invalid inputs


def test_squared_constants_need_bounded_set_and_label_bound() -> None:
    loss = SquaredLoss()
    with pytest.raises(ValueError, match="radius"):
        loss.constants(1.0, 0.1, Unconstrained(), label_bound=1.0)
    with pytest.raises(ValueError, match="label_bound"):
        loss.constants(1.0, 0.1, L2Ball(1.0), label_bound=None)
    with pytest.raises(ValueError):
        loss.constants(1.0, 0.1, L2Ball(1.0))  # label_bound defaults to None


@pytest.mark.parametrize("label_bound", [float("nan"), float("inf"), -1.0])
def test_squared_constants_reject_invalid_label_bound(label_bound: float) -> None:
    with pytest.raises(ValueError, match="label_bound"):
        SquaredLoss().constants(1.0, 0.1, L2Ball(1.0), label_bound=label_bound)


@pytest.mark.parametrize("h", [0.0, -0.5, -np.inf, np.inf, np.nan])
def test_huber_rejects_invalid_h(h: float) -> None:
    with pytest.raises(ValueError, match=r"\bh\b"):
        HuberizedHingeLoss(h)


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("clip_norm", [None, 0.3])
def test_gradient_sum_is_the_sum_of_the_clipped_per_example_gradients(name, clip_norm):
    # Independent oracle: form every per-example gradient, clip each one to norm C, add them up.
    rng = np.random.default_rng(7)
    loss = LOSSES[name]()
    X = rng.normal(size=(40, 5)) / 2.0
    y = np.sign(rng.normal(size=40)) if loss.classification else rng.normal(size=40)
    w = rng.normal(size=5)
    gradients = loss.per_example_gradients(w, X, y)
    if clip_norm is not None:
        norms = np.linalg.norm(gradients, axis=1)
        gradients = np.array([g * min(1.0, clip_norm / n) if n > 0 else g for g, n in zip(gradients, norms)])
        assert np.any(norms > clip_norm)  # the clipping is active in this example
    expected = gradients.sum(axis=0)
    np.testing.assert_allclose(loss.gradient_sum(w, X, y, clip_norm), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(loss.gradient_sum(w, X, y, clip_norm, np.linalg.norm(X, axis=1)), expected,
                               rtol=1e-12, atol=1e-12)


def test_row_norms_equal_numpys_bit_for_bit_across_blocks():
    """The blocked row norms are np.linalg.norm(X, axis=1) exactly (the same per-row sum), also where
    the rows span several blocks and for an empty matrix."""
    from dpconvex.objectives.losses import row_norms

    X = np.random.default_rng(5).normal(size=(10_001, 37))
    assert np.array_equal(row_norms(X), np.linalg.norm(X, axis=1))
    assert np.array_equal(row_norms(X, rows_per_block=7), np.linalg.norm(X, axis=1))
    assert row_norms(np.zeros((0, 3))).shape == (0,)


@pytest.mark.parametrize("clip_norm", [1e-310, 1e-12, 0.5, 7.0, 1e300])
def test_clip_scale_is_min_one_c_over_norm_and_one_for_zero_norms(clip_norm):
    """Independent: C/‖g‖ where that is below 1, else 1 (including ‖g‖ = 0 and subnormal norms), no warning."""
    norms = np.array([0.0, 5e-324, 1e-310, 1e-300, 1e-12, 0.3, 0.5, 1.0, 7.0, 1e10, 1e300, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scale = clip_scale(norms, clip_norm)
    expected = [1.0 if g == 0 or clip_norm / g >= 1 else clip_norm / g for g in norms.tolist()]
    assert scale.tolist() == expected
