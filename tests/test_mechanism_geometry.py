"""Mechanisms refuse constraint sets whose projection is not the Euclidean one.

The contraction and sensitivity certificates use a non-expansive projection (or an ℓ2 diameter);
the ℓ_p ball's rescaling is not non-expansive in ℓ2 (``tests/test_constraints.py`` measures it).
Every registered method is enumerated, so a new one is covered: it must either refuse an ℓ_p ball
with the shared message or be listed in ``BREGMAN_PROJECTION_MECHANISMS`` and run with it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpconvex.mechanisms import METHODS, outpert_gd
from dpconvex.mechanisms._geometry import BREGMAN_PROJECTION_MECHANISMS, require_euclidean_projection
from dpconvex.mechanisms.auto import select_configuration
from dpconvex.mechanisms.noisy_gd import plan_noisy_gd
from dpconvex.mechanisms.noisy_sgd import plan_noisy_sgd
from dpconvex.objectives.constraints import L2Ball, LpBall, Unconstrained
from dpconvex.objectives.losses import LogisticLoss, QuadraticDistanceLoss
from dpconvex.objectives.mirror_maps import PNormPotential

BALL = LpBall(1.0, p=1.1)
COMMON = dict(loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0, random_state=0)


def _data(n: int = 40, d: int = 3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


def _refusal(constraint, mechanism: str) -> str:
    """The parts every refusal must contain: the constraint, the reason, the mechanisms that accept it."""
    return re.escape(f"{mechanism} does not accept constraint={constraint.describe()}") + ".*non-expansive.*" + \
        ".*".join(map(re.escape, BREGMAN_PROJECTION_MECHANISMS))


def test_the_accepting_mechanisms_are_registered():
    assert BREGMAN_PROJECTION_MECHANISMS and set(BREGMAN_PROJECTION_MECHANISMS) <= set(METHODS)


@pytest.mark.parametrize("name", sorted(set(METHODS) - set(BREGMAN_PROJECTION_MECHANISMS)))
def test_every_other_method_refuses_an_lp_ball(name):
    X, y = _data()
    with pytest.raises(ValueError, match=_refusal(BALL, name)):
        METHODS[name](X, y, constraint=BALL, **COMMON)
    METHODS[name](X, y, constraint=L2Ball(1.0), **COMMON)  # the same call on the L2 ball is accepted


@pytest.mark.parametrize("name", BREGMAN_PROJECTION_MECHANISMS)
def test_the_accepting_mechanisms_train_on_an_lp_ball(name):
    X, y = _data()
    result = METHODS[name](X, y, constraint=BALL, potential=PNormPotential(BALL.p), **COMMON)
    assert result.certificate.assumptions["constraint"] == BALL.describe()
    assert np.linalg.norm(result.coef, ord=BALL.p) <= BALL.radius * (1 + 1e-12)  # a mean of points of the ball


def test_the_planners_used_by_auto_refuse_it_too():
    common = dict(loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0, constraint=BALL)
    for planner, name in ((plan_noisy_gd, "noisy_gd"), (plan_noisy_sgd, "noisy_sgd")):
        with pytest.raises(ValueError, match=_refusal(BALL, name)):
            planner(40, 3, **common)
    with pytest.raises(ValueError, match=_refusal(BALL, "auto")):
        select_configuration(40, 3, **common)


def test_the_issue_reproduction_raises():
    """The ℓ_p-ball defect: noiseless ‖w_T − w'_T‖ = 0.02387 on this data set and its neighbour (first row
    negated) against a certified sensitivity of 0.02000 — now refused; the L2 ball still trains."""
    X = np.tile([-0.048525828186841105, -0.9988219280726576], (100, 1))
    X[0] = [0.9982766030804388, -0.05868410127266345]
    options = dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, epochs=3, sigma=1.0, delta=1e-6)
    ball = LpBall(1.0143673153817627, p=1.1)
    with pytest.raises(ValueError, match=_refusal(ball, "outpert_gd")):
        outpert_gd(X, np.zeros(100), constraint=ball, **options)
    cert = outpert_gd(X, np.zeros(100), constraint=L2Ball(ball.radius), random_state=0, **options).certificate
    assert np.isfinite(cert.epsilon)


@pytest.mark.parametrize("constraint", [Unconstrained(), L2Ball(2.0), LpBall(2.0, 2.0)], ids=repr)
def test_euclidean_sets_pass(constraint):
    assert require_euclidean_projection(constraint, "noisy_gd") is None


@pytest.mark.parametrize("junk", ["auto", None, 3.0])
def test_an_object_without_declared_geometry_is_refused_naming_the_parameter(junk):
    with pytest.raises(ValueError, match="constraint must be a constraint set of dpconvex.objectives.constraints"):
        require_euclidean_projection(junk, "noisy_gd")
