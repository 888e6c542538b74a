"""Constraint sets: the L2-ball projection is the Euclidean projection (checked against scipy and
against its optimality conditions), idempotent and non-expansive; R^d is the identity; every set's
``euclidean_projection`` flag agrees with a search for pairs that its projection pushes apart."""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize

from dpconvex.objectives.constraints import Constraint, L2Ball, LpBall, Unconstrained

EPS = np.finfo(float).eps

radii = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
dims = st.integers(min_value=1, max_value=6)
coords = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def vectors(d: int):
    return hnp.arrays(np.float64, d, elements=coords)


# ‖w‖/R: exactly on the sphere, just inside/outside it, deep inside, far outside
norm_ratios = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0 - 1e-6, 1.0, 1.0 + 1e-6, 2.0]),
    st.floats(min_value=0.0, max_value=3.0),
)


@st.composite
def points(draw, d: int, radius: float):
    """Raw coordinates, or a random direction rescaled to a chosen multiple of the radius."""
    w = draw(vectors(d))
    if draw(st.booleans()) and np.linalg.norm(w) > 0:
        w = w / np.linalg.norm(w) * radius * draw(norm_ratios)
    return w


@st.composite
def ball_and_point(draw):
    d, R = draw(dims), draw(radii)
    return L2Ball(R), draw(points(d, R))


@st.composite
def ball_and_pair(draw):
    d, R = draw(dims), draw(radii)
    return L2Ball(R), draw(points(d, R)), draw(points(d, R))


# ------------------------------------------------------------------------------------ L2Ball


@pytest.mark.parametrize("d", [1, 2, 5])
def test_l2_projection_matches_numerical_minimisation(d: int) -> None:
    rng = np.random.default_rng(0)
    ball = L2Ball(1.7)
    for scale in (0.3, 1.0, 3.0, 20.0):
        w = scale * rng.normal(size=d)
        # argmin ‖u − w‖² subject to ‖u‖² ≤ R², solved by SLSQP from the origin (objective scaled
        # by 1/(1 + ‖w‖²) so the stopping rule is relative)
        k = 1.0 / (1.0 + w @ w)
        res = minimize(
            lambda u: k * np.sum((u - w) ** 2),
            np.zeros(d),
            jac=lambda u: 2 * k * (u - w),
            constraints=[{"type": "ineq", "fun": lambda u: ball.radius**2 - u @ u, "jac": lambda u: -2 * u}],
            method="SLSQP",
            options={"ftol": 1e-12, "maxiter": 500},
        )
        # (status 8 "positive directional derivative" only means no further progress at ~1e-12)
        assert res.status in (0, 8), res.message
        assert res.x @ res.x <= ball.radius**2 * (1 + 1e-7)
        np.testing.assert_allclose(ball.project(w), res.x, rtol=1e-6, atol=1e-7)


@settings(max_examples=200, deadline=None)
@given(ball_and_point())
def test_l2_projection_satisfies_optimality_conditions(case) -> None:
    ball, w = case
    R = ball.radius
    w_before = w.copy()
    p = ball.project(w)
    np.testing.assert_array_equal(w, w_before)  # input untouched
    assert p.shape == w.shape
    nw, np_ = np.linalg.norm(w), np.linalg.norm(p)
    assert np_ <= R * (1 + 4 * EPS)  # feasible
    if nw <= R:
        np.testing.assert_array_equal(p, w)  # points of the ball are fixed
    else:
        # KKT for min ‖u − w‖ over the ball: w − p = t·p with t ≥ 0 and ‖p‖ = R (active),
        # i.e. p = R·w/‖w‖ — written here coordinate-wise via the unit vector.
        assert np_ == pytest.approx(R, rel=1e-12)
        np.testing.assert_allclose(p, R * (w / nw), rtol=1e-12, atol=1e-12 * R)
        r = w - p
        assert r @ p >= 0
        assert np.linalg.norm(r) == pytest.approx(nw - R, rel=1e-9, abs=1e-9 * nw)


@settings(max_examples=200, deadline=None)
@given(ball_and_point(), st.integers(0, 2**32 - 1))
def test_l2_projection_is_closest_point_of_the_ball(case, seed: int) -> None:
    ball, w = case
    p = ball.project(w)
    rng = np.random.default_rng(seed)
    d = w.size
    u = rng.normal(size=(64, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    u *= ball.radius * rng.uniform(size=(64, 1)) ** (1.0 / d)
    u[0] = 0.0
    dist_p = np.linalg.norm(w - p)
    tol = 1e-9 * (np.linalg.norm(w) + ball.radius)
    assert np.all(np.linalg.norm(w - u, axis=1) >= dist_p - tol)
    # variational inequality ⟨w − Π(w), u − Π(w)⟩ ≤ 0 for every u in the ball
    assert np.all((u - p) @ (w - p) <= tol * (np.linalg.norm(w) + ball.radius))


@settings(max_examples=200, deadline=None)
@given(ball_and_point())
def test_l2_projection_is_idempotent(case) -> None:
    ball, w = case
    p = ball.project(w)
    np.testing.assert_allclose(ball.project(p), p, rtol=4 * EPS, atol=0)


@settings(max_examples=200, deadline=None)
@given(ball_and_pair())
def test_l2_projection_is_non_expansive(case) -> None:
    ball, a, b = case
    lhs = np.linalg.norm(ball.project(a) - ball.project(b))
    rhs = np.linalg.norm(a - b)
    assert lhs <= rhs * (1 + 1e-12) + 8 * EPS * ball.radius


def test_l2_projection_non_expansive_is_tight_inside_and_strict_outside() -> None:
    ball = L2Ball(1.0)
    a, b = np.array([0.2, 0.1]), np.array([-0.3, 0.4])
    assert np.linalg.norm(ball.project(a) - ball.project(b)) == pytest.approx(np.linalg.norm(a - b))
    a, b = np.array([2.0, 0.0]), np.array([5.0, 0.0])  # same ray: both map to (1, 0)
    np.testing.assert_allclose(ball.project(a), ball.project(b))
    np.testing.assert_allclose(ball.project(np.array([0.0, -4.0])), [0.0, -1.0])


@pytest.mark.parametrize("radius", [0.5, 1.0, 7.25])
def test_l2_ball_radius_and_diameter(radius: float) -> None:
    ball = L2Ball(radius)
    assert ball.radius == radius
    assert ball.diameter == 2 * radius
    assert ball.is_constrained
    assert f"{radius:g}" in ball.describe()
    with pytest.raises(dataclasses.FrozenInstanceError):
        ball.radius = 2.0  # type: ignore[misc]


@pytest.mark.parametrize("radius", [0.0, -1.0, -0.0, float("inf"), float("-inf"), float("nan")])
def test_l2_ball_rejects_invalid_radius(radius: float) -> None:
    with pytest.raises(ValueError, match="radius"):
        L2Ball(radius)


def test_l2_projection_of_origin_and_boundary() -> None:
    ball = L2Ball(2.0)
    np.testing.assert_array_equal(ball.project(np.zeros(3)), np.zeros(3))
    on = np.array([0.0, 2.0, 0.0])
    np.testing.assert_array_equal(ball.project(on), on)
    just_inside = np.array([0.0, 0.0, 2.0 * (1 - 1e-9)])
    np.testing.assert_array_equal(ball.project(just_inside), just_inside)
    np.testing.assert_allclose(ball.project(np.array([0.0, 0.0, 2.0 * (1 + 1e-9)])), [0.0, 0.0, 2.0], rtol=1e-15)


# ----------------------------------------------------------------------------- Unconstrained


@settings(max_examples=200, deadline=None)
@given(dims.flatmap(vectors))
def test_unconstrained_projection_is_identity(w) -> None:
    before = w.copy()
    np.testing.assert_array_equal(Unconstrained().project(w), before)


def test_unconstrained_radius_and_diameter_are_infinite() -> None:
    c = Unconstrained()
    assert c.radius == np.inf and c.diameter == np.inf
    assert not c.is_constrained
    big = np.array([1e300, -1e300])
    np.testing.assert_array_equal(c.project(big), big)


# ------------------------------------------------------------------------- declared geometry

#: One instance per constraint class (and several p for the ℓ_p ball, p = 2 being the L2 ball).
GEOMETRY_EXAMPLES = [Unconstrained(), L2Ball(1.3), LpBall(1.0, 1.1), LpBall(2.5, 1.5), LpBall(1.3, 2.0)]


def _largest_expansion(constraint, d: int, seed: int = 0, pairs: int = 3000) -> float:
    """max ‖Π(a) − Π(b)‖₂ / ‖a − b‖₂ over random pairs near the boundary, refined by Nelder–Mead.

    a has ℓ2 norm in [0.5, 1.5]·radius (1 for R^d) and b = a + h·v with h over four decades, so pairs
    straddle and hug the boundary where a non-Euclidean rescaling expands; the best pair is then
    optimised directly.
    """
    rng = np.random.default_rng(seed)
    scale = constraint.radius if np.isfinite(constraint.radius) else 1.0
    a = rng.normal(size=(pairs, d))
    a *= scale * rng.uniform(0.5, 1.5, size=(pairs, 1)) / np.linalg.norm(a, axis=1, keepdims=True)
    b = a + scale * 10.0 ** rng.uniform(-4, 0, size=(pairs, 1)) * rng.normal(size=(pairs, d))

    def ratio(u, v):
        gap = np.linalg.norm(u - v)
        return np.linalg.norm(constraint.project(u) - constraint.project(v)) / gap if gap > 0 else 0.0

    ratios = np.array([ratio(u, v) for u, v in zip(a, b)])
    best = int(np.argmax(ratios))
    refined = minimize(lambda z: -ratio(z[:d], z[d:]), np.concatenate([a[best], b[best]]), method="Nelder-Mead",
                       options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 4000})
    return float(max(ratios[best], -refined.fun))


def test_every_constraint_class_has_a_geometry_example():
    assert {type(c) for c in GEOMETRY_EXAMPLES} == set(typing.get_args(Constraint))


def test_declared_geometry():
    assert Unconstrained().euclidean_projection and L2Ball(2.0).euclidean_projection
    assert not LpBall(1.0, 1.1).euclidean_projection and not LpBall(1.0, 1.5).euclidean_projection
    assert LpBall(1.0, 2.0).euclidean_projection  # the ℓ2 rescaling is the Euclidean projection


@pytest.mark.parametrize("constraint", GEOMETRY_EXAMPLES, ids=repr)
@pytest.mark.parametrize("d", [2, 5])
def test_euclidean_projection_flag_matches_the_measured_lipschitz_constant(constraint, d):
    """A Euclidean projection onto a closed convex set is 1-Lipschitz in ℓ2, and a set that says so
    must never push a pair apart; the ℓ_p rescaling with p < 2 does (measured at p = 1.1: 1.20 for
    d = 2, 1.53 for d = 5)."""
    largest = _largest_expansion(constraint, d)
    if constraint.euclidean_projection:
        assert largest <= 1.0 + 1e-12
    else:
        assert largest > 1.0 + 1e-3
