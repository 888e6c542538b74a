"""The one auto-ball rule (``dpconvex.mechanisms.base.resolve_constraint``) and each caller's answer at λ = 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpconvex.mechanisms.base import auto_ball_radius, resolve_constraint
from dpconvex.mechanisms.noisy_sgd import plan_noisy_sgd
from dpconvex.mechanisms.problem import DataShape, PrivacyTarget, Problem
from dpconvex.objectives.constraints import L2Ball, LpBall, Unconstrained
from dpconvex.objectives.losses import LogisticLoss


def _problem(l2, constraint="auto"):
    return Problem(DataShape(100, 3), LogisticLoss(), l2, constraint, 1.0, None, PrivacyTarget(1e-6, 1.0))


def test_the_auto_ball_holds_the_regularised_minimiser():
    radius = math.sqrt(2.0 * math.log(2.0) / 0.1)
    assert auto_ball_radius(math.log(2.0), 0.1) == pytest.approx(radius)
    assert resolve_constraint(_problem(0.1)) == L2Ball(auto_ball_radius(math.log(2.0), 0.1))
    assert resolve_constraint(_problem(0.1), ball=lambda r: LpBall(r, 1.5)) == LpBall(radius, 1.5)
    assert resolve_constraint(_problem("auto"), l2=0.1) == L2Ball(radius)  # the λ auto probes with


def test_a_given_constraint_is_returned_as_it_is():
    assert resolve_constraint(_problem(0.0, L2Ball(2.0))) == L2Ball(2.0)
    assert resolve_constraint(_problem(0.0, Unconstrained()), unregularised="refuse") == Unconstrained()


def test_at_lambda_zero_the_answer_is_a_value_error_unless_the_caller_trains_on_all_of_rd():
    with pytest.raises(ValueError, match="constraint='auto' needs l2_regularization > 0"):
        resolve_constraint(_problem(0.0))
    assert resolve_constraint(_problem(0.0), unregularised="unconstrained") == Unconstrained()
    with pytest.raises(ValueError, match="unregularised must be one of"):
        resolve_constraint(_problem(0.0), unregularised="ball")


def test_each_callers_answer_at_lambda_zero():
    # noisy_sgd (and auto, through it): unconstrained; pnsgd and sco_noisy_sgd: refused (tests of their own).
    planned = plan_noisy_sgd(100, 3, loss=LogisticLoss(), l2_regularization=0.0, delta=1e-6, sigma=1.0, epochs=1)
    assert planned.constraint == Unconstrained()
    planned = plan_noisy_sgd(100, 3, loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, sigma=1.0, epochs=1)
    assert planned.constraint == L2Ball(auto_ball_radius(math.log(2.0), 0.1))
    assert np.isfinite(planned.constraint.radius)
