"""The problem record: validated once at the boundary, its data read through one gradient-sum method.

Expected values are recomputed independently: clipped rows by rescaling each row by hand, gradient
sums from the per-example gradients with each row clipped by its own norm (``np.linalg.norm``), the
declared constants from the loss itself.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import dpconvex.mechanisms.problem as problem_module
from dpconvex.data.in_memory import InMemoryData
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms.problem import PROBLEM_KEYWORDS, DataShape, PrivacyTarget, Problem
from dpconvex.objectives.constraints import L2Ball, Unconstrained
from dpconvex.objectives.losses import HingeLoss, LogisticLoss, QuadraticDistanceLoss, SquaredLoss
from dpconvex.objectives.multiclass import MultinomialLogisticLoss

COMMON = dict(loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0)
pytestmark = pytest.mark.filterwarnings("error::dpconvex.exceptions.PrivacyLeakWarning")


def _data(n=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 0.4
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]  # rows inside data_norm = 1
    return X, np.where(X[:, 0] > 0, 1.0, -1.0)


def _clipped_sum(loss, w, X, y, clip_norm):
    """Σ clip(∇ℓ) from the (n, d) per-example gradients, each row scaled by hand to norm ≤ C."""
    gradients = loss.per_example_gradients(w, X, y)
    if clip_norm is None:
        return gradients.sum(axis=0)
    norms = np.linalg.norm(gradients, axis=1)
    return sum(g * min(1.0, clip_norm / norm) if norm > 0 else g for g, norm in zip(gradients, norms))


# ----------------------------------------------------------------------------- privacy target
@pytest.mark.parametrize("kwargs, message", [
    (dict(delta=1e-6), "exactly one of epsilon"),
    (dict(delta=1e-6, epsilon=1.0, sigma=1.0), "exactly one of epsilon"),
    (dict(delta=1e-6, epsilon=-1.0), "epsilon must be finite and > 0"),
    (dict(delta=1.5, epsilon=1.0), "delta must lie in the open interval"),
    (dict(delta=1e-6, sigma=0.0), "sigma must be finite and > 0"),
    (dict(delta=1e-6, sigma="1"), "sigma must be finite and > 0"),
])
def test_privacy_target_refuses_what_no_certificate_can_mean(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PrivacyTarget(**kwargs)


def test_privacy_target_keeps_what_it_was_given():
    assert PrivacyTarget(1e-6, epsilon=2.0) == PrivacyTarget(delta=1e-6, epsilon=2.0, sigma=None)
    assert PrivacyTarget(1e-6, sigma=0.5).epsilon is None


# ----------------------------------------------------------------------------- from_arrays
def test_from_arrays_clips_rows_and_targets_once_with_a_warning():
    X, _ = _data()
    y = np.linspace(-3.0, 3.0, X.shape[0])
    norms = np.linalg.norm(X, axis=1)
    with pytest.warns(PrivacyLeakWarning) as caught:
        problem = Problem.from_arrays(X, y, loss=SquaredLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0,
                                      data_norm=0.5, label_bound=2.0, constraint=L2Ball(1.0))
    over, above = int(np.sum(norms > 0.5)), int(np.sum(np.abs(y) > 2.0))
    assert over > 0 and above > 0
    assert [str(w.message).split(" of ")[0] for w in caught] == [str(over), str(above)]
    expected = X * np.minimum(1.0, 0.5 / norms)[:, None]
    np.testing.assert_allclose(problem.data.X, expected, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(problem.data.y, np.clip(y, -2.0, 2.0))
    assert isinstance(problem.data, InMemoryData) and problem.data.X.dtype == np.float64
    assert (problem.n, problem.n_features, problem.dimension) == (30, 3, 3)


def test_from_arrays_with_strict_refuses_instead_of_clipping():
    X, y = _data()
    with pytest.raises(ValueError, match="strict=True"):
        Problem.from_arrays(X, y, data_norm=0.1, strict=True, **COMMON)


@pytest.mark.parametrize("change, message", [
    (dict(X=np.zeros(3)), "X must be a 2-D array"),
    (dict(X=np.full((4, 2), np.nan), y=np.ones(4)), "X must contain only finite values"),
    (dict(y=np.zeros(30)), r"labels in \{-1, \+1\}"),
    (dict(l2_regularization=-1.0), "l2_regularization must be finite and >= 0"),
    (dict(l2_regularization="0.1"), "l2_regularization must be finite and >= 0"),
    (dict(sigma=1.0), "exactly one of epsilon"),
    (dict(data_norm=0.0), "data_norm must be finite and > 0"),
    (dict(loss=HingeLoss()), "is not smooth"),
])
def test_from_arrays_names_the_bad_input(change, message):
    X, y = _data()
    arguments = {"X": X, "y": y, **COMMON, **change}
    with pytest.raises(ValueError, match=message):
        Problem.from_arrays(arguments.pop("X"), arguments.pop("y"), **arguments)


def test_a_non_smooth_loss_is_accepted_when_the_mechanism_allows_it():
    X, y = _data()
    problem = Problem.from_arrays(X, y, **{**COMMON, "loss": HingeLoss()}, require_smooth=False)
    assert problem.loss.name == "hinge"


class _SaysDask(np.ndarray):
    """An in-memory array whose class happens to carry ``backend = "dask"`` (as DaskData's does)."""

    backend = "dask"


def test_only_a_daskdata_skips_validation_not_whatever_says_dask():
    """from_arrays trusts the validation of a DaskData instance only, not of anything with a ``backend`` attribute."""
    X, y = _data()
    X[0] *= 10.0  # above data_norm = 1: clipping is the sign that the rows were validated here
    with pytest.warns(PrivacyLeakWarning, match="1 of 30 rows"):
        problem = Problem.from_arrays(X.view(_SaysDask), y, **COMMON)
    assert isinstance(problem.data, InMemoryData)
    assert np.linalg.norm(problem.data.X[0]) == pytest.approx(1.0)


def test_the_data_are_validated_once(monkeypatch):
    calls = []
    original = problem_module.check_training_data
    monkeypatch.setattr(problem_module, "check_training_data", lambda X, y: calls.append(1) or original(X, y))
    X, y = _data()
    Problem.from_arrays(X, y, **COMMON)
    assert calls == [1]


def test_a_k_class_problem_has_one_parameter_block_per_class():
    X, _ = _data()
    y = np.arange(30) % 3
    problem = Problem.from_arrays(X, y.astype(float), loss=MultinomialLogisticLoss(3), l2_regularization=0.1,
                                  delta=1e-6, epsilon=1.0)
    assert (problem.n_features, problem.dimension) == (3, 9)


# ----------------------------------------------------------------------------- derived values
def test_constants_are_the_losses_and_computed_once(monkeypatch):
    problem = Problem(DataShape(100, 4), LogisticLoss(), 0.1, Unconstrained(), 2.0, None, PrivacyTarget(1e-6, 1.0))
    ball = L2Ball(3.0)
    expected = LogisticLoss().constants(2.0, 0.1, ball, None)
    calls = []
    original = problem.loss.constants
    monkeypatch.setattr(problem.loss, "constants", lambda *a: calls.append(a) or original(*a))
    first = problem.constants(ball)
    assert first == expected and problem.constants(L2Ball(3.0)) is first and len(calls) == 1
    assert problem.constants(ball, l2=0.0) == LogisticLoss().constants(2.0, 0.0, ball, None) and len(calls) == 2


def test_auto_regularisation_is_a_number_only_for_method_auto():
    problem = Problem(DataShape(10, 2), LogisticLoss(), "auto", "auto", 1.0, None, PrivacyTarget(1e-6, 1.0))
    with pytest.raises(ValueError, match="l2_regularization='auto' is chosen by method='auto' only"):
        problem.constants(Unconstrained())


def test_declared_assumptions_open_every_certificate():
    problem = Problem(DataShape(10, 2), QuadraticDistanceLoss(), 0.5, Unconstrained(), 3.0, None,
                      PrivacyTarget(1e-6, sigma=1.0))
    assert problem.declared_assumptions() == {"n": 10, "dimension": 2, "loss": "quadratic", "data_norm": 3.0,
                                              "label_bound": None, "l2_regularization": 0.5}
    assert problem.loss_at_zero() == pytest.approx(0.5 * 3.0**2)


def test_problem_keywords_are_from_arrays_keywords():
    parameters = inspect.signature(Problem.from_arrays).parameters
    assert set(PROBLEM_KEYWORDS) == {"loss", "l2_regularization", "delta", "epsilon", "sigma", "data_norm",
                                     "label_bound", "constraint", "strict"}
    assert all(parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in PROBLEM_KEYWORDS)


# ----------------------------------------------------------------------------- data access
@pytest.mark.parametrize("loss, labels", [(LogisticLoss(), "binary"), (QuadraticDistanceLoss(), "binary"),
                                          (MultinomialLogisticLoss(3), "classes")])
@pytest.mark.parametrize("clip_norm", [None, 0.05])
def test_gradient_sum_over_all_rows_a_slice_and_an_index_array(loss, labels, clip_norm):
    X, y = _data(n=40, d=3, seed=3)
    if labels == "classes":
        y = (np.arange(40) % 3).astype(float)
    data = InMemoryData(X, y)
    w = np.random.default_rng(4).normal(size=loss.parameter_dimension(3))
    rows = np.array([0, 3, 4, 17, 39])
    cases = [(None, slice(None)), (slice(5, 21), slice(5, 21)), (rows, rows)]
    for selection, reference in cases:
        expected = _clipped_sum(loss, w, X[reference], y[reference], clip_norm)
        np.testing.assert_allclose(data.gradient_sum(loss, w, clip_norm, selection), expected, rtol=1e-12,
                                   atol=1e-14)


def test_permuted_data_hold_the_rows_in_the_given_order():
    X, y = _data(n=6)
    order = np.array([5, 0, 3, 1, 2, 4])
    permuted = InMemoryData(X, y).permuted(order)
    np.testing.assert_array_equal(permuted.X, X[order])
    np.testing.assert_array_equal(permuted.y, y[order])
    np.testing.assert_allclose(permuted.row_norms, np.linalg.norm(X[order], axis=1), rtol=1e-15)


def test_the_record_is_frozen():
    X, y = _data()
    problem = Problem.from_arrays(X, y, **COMMON)
    with pytest.raises(AttributeError):
        problem.loss = QuadraticDistanceLoss()


@pytest.mark.parametrize("scale, data_norm", [(1.0, 1.0), (3.0, 1.0), (3.0, 2.5), (1.0 + 1e-15, 1.0)])
def test_the_validated_data_hold_the_norms_of_their_rows(scale, data_norm):
    """from_arrays hands the row norms its check computed to the data (updated for the rows it rescaled):
    bit for bit row_norms of the clipped rows, as the per-example clipping reads them."""
    from dpconvex.objectives.losses import LogisticLoss, row_norms

    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 9))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X[::4] *= scale  # a quarter of the rows at norm `scale`: clipped when above data_norm (a warning)
    y = np.where(rng.random(2000) < 0.5, -1.0, 1.0)
    original = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        problem = Problem.from_arrays(X, y, loss=LogisticLoss(), l2_regularization=1e-3, delta=1e-8, epsilon=1.0,
                                      data_norm=data_norm)
    assert np.array_equal(problem.data.row_norms, row_norms(problem.data.X))
    assert problem.data.row_norms.max() <= data_norm * (1 + 1e-12)
    assert np.array_equal(X, original)  # the caller's array is never modified
