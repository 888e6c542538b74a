"""The validated data keep the caller's array: rows above ``data_norm`` are clipped where they are read.

``Problem.from_arrays`` used to copy X whenever one row exceeded the bound, if only by rounding
(unit-normalised rows routinely have norms of 1 + 2e-16).  Now the data hold the caller's rows and
a per-row factor (``InMemoryData.scale``), and every read applies it.  The reference of every test
is the clipped copy the old code made (``enforce_norm_bound``, unchanged), so "the same" means bit
for bit: the same gradients, the same row norms, the same coefficients and the same certificate.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from dpconvex import PrivateLogisticRegression
from dpconvex.data.checks import check_training_data, check_training_rows, enforce_norm_bound, norm_bound_scale
from dpconvex.data.in_memory import InMemoryData
from dpconvex.estimators.model_selection import PrivateLogisticRegressionCV
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.losses import LogisticLoss, QuadraticDistanceLoss, row_norms
from dpconvex.objectives.multiclass import MultinomialLogisticLoss

COMMON = dict(l2_regularization=1e-3, delta=1e-8, epsilon=1.0)


def _unit_rows(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian rows divided by their norms (many end at 1 + 2e-16), labels of a hyperplane."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(X @ rng.standard_normal(d) > 0, 1.0, -1.0)


def _cases(d: int) -> dict[str, np.ndarray]:
    """Rows within the bound, above it by rounding only, and some far above it (a warning)."""
    X, _ = _unit_rows(600, d, seed=d)
    far = X.copy()
    far[::5] *= 3.0
    return {"within": 0.5 * X, "rounding": X, "far": far}


def _problem(X, y, loss=None, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return Problem.from_arrays(X, y, loss=loss or LogisticLoss(), **{**COMMON, **kwargs})


def test_unit_normalised_rows_exceed_the_bound_by_rounding():
    """The premise: dividing rows by their norms leaves some just above 1, and nothing warns about them."""
    X, y = _unit_rows(2000, 30)
    assert (row_norms(X) > 1.0).any() and (row_norms(X) <= 1.0 + 1e-15).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        problem = Problem.from_arrays(X, y, loss=LogisticLoss(), **COMMON)
    assert problem.data.scale is not None


@pytest.mark.parametrize("case", ["within", "rounding", "far"])
@pytest.mark.parametrize("d", [5, 40])  # per-row values gathered one by one (d < 32) or from one table
def test_the_data_hold_the_callers_array_and_read_the_clipped_rows(case, d):
    X = _cases(d)[case]
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    original = X.copy()
    data = _problem(X, y).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        clipped, _ = enforce_norm_bound(original, 1.0)
    assert data.features is X  # float64 input: neither copied nor modified
    assert np.array_equal(X, original)
    assert (data.scale is None) == (case == "within")
    assert np.array_equal(data.X, clipped)  # the clipped copy, made only when read whole
    assert (data.X is X) == (case == "within")
    assert np.array_equal(data.row_norms, row_norms(clipped))
    loss, w = LogisticLoss(), np.random.default_rng(1).normal(size=d)
    reference = InMemoryData(clipped.copy(), y)
    rows = np.sort(np.random.default_rng(2).choice(600, 150, replace=False))
    for selection in (rows, slice(100, 400), None):
        for clip_norm in (None, 0.3):
            assert np.array_equal(data.gradient_sum(loss, w, clip_norm, selection),
                                  reference.gradient_sum(loss, w, clip_norm, selection))
    assert np.array_equal(data.mean_gradient(loss, w), reference.mean_gradient(loss, w))
    order = np.random.default_rng(3).permutation(600)
    permuted = data.permuted(order)
    assert permuted.scale is None and np.array_equal(permuted.X, clipped[order])
    assert np.array_equal(permuted.row_norms, row_norms(clipped[order]))


@pytest.mark.parametrize("loss, labels", [(QuadraticDistanceLoss(), "binary"), (MultinomialLogisticLoss(3), "classes")])
def test_other_losses_read_the_clipped_rows_too(loss, labels):
    X = _cases(40)["far"]
    y = np.where(X[:, 0] > 0, 1.0, -1.0) if labels == "binary" else (np.arange(600) % 3).astype(float)
    data = _problem(X, y, loss=loss).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        reference = InMemoryData(enforce_norm_bound(X, 1.0)[0], y)
    w = np.random.default_rng(4).normal(size=loss.parameter_dimension(40))
    rows = np.sort(np.random.default_rng(5).choice(600, 100, replace=False))
    for selection in (rows, slice(7, 300), None):
        assert np.array_equal(data.gradient_sum(loss, w, 0.4, selection),
                              reference.gradient_sum(loss, w, 0.4, selection))


def test_the_clip_factors_are_those_of_the_copy_and_warn_as_it_did():
    X = _cases(8)["far"]
    norms = row_norms(X)
    with pytest.warns(PrivacyLeakWarning, match="120 of 600 rows have L2 norm above data_norm=1"):
        scale, count = norm_bound_scale(norms, 1.0)
    with pytest.warns(PrivacyLeakWarning, match="120 of 600 rows"):
        clipped, copied_count = enforce_norm_bound(X, 1.0)
    assert count == copied_count == 120
    assert np.array_equal(X * scale[:, None], clipped)  # a product by 1.0 is exact
    with pytest.raises(ValueError, match="with strict=True"):
        norm_bound_scale(norms, 1.0, strict=True)
    rounding = row_norms(_cases(8)["rounding"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert norm_bound_scale(rounding, 1.0, strict=True)[0] is not None  # rounding: clipped, not refused
        assert norm_bound_scale(0.5 * rounding, 1.0) == (None, 0)


def test_one_pass_checks_finiteness_through_the_row_norms():
    X, y = _unit_rows(50, 4)
    checked, labels, norms = check_training_rows(X, y)
    assert checked is X and labels is y and np.array_equal(norms, row_norms(X))
    for bad in (np.nan, np.inf, -np.inf):
        broken = X.copy()
        broken[7, 2] = bad
        for check in (check_training_rows, check_training_data):
            with pytest.raises(ValueError, match="X must contain only finite values"):
                check(broken, np.full(50, np.nan))  # X is named first, as before
    huge = X.copy()
    huge[3] = 1e300  # finite entries whose squares overflow: accepted by both checks (norm inf, clipped to 0)
    with np.errstate(over="ignore"):
        assert np.isinf(check_training_rows(huge, y)[2][3])
    check_training_data(huge, y)
    with pytest.raises(ValueError, match="y must contain only finite values"):
        check_training_rows(X, np.where(np.arange(50) == 4, np.inf, 1.0))


@pytest.mark.parametrize("case", ["rounding", "far"])
def test_a_default_fit_equals_the_fit_on_the_clipped_copy(case):
    """Coefficients and certificate, bit for bit: clipping where the rows are read is clipping a copy."""
    X = _cases(40)[case]
    y = np.where(X @ np.linspace(-1, 1, 40) > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        clipped, _ = enforce_norm_bound(X, 1.0)
        assert (row_norms(clipped) <= 1.0).all()  # nothing left to clip in the copy
        for method in ("auto", "noisy_gd"):
            models = [PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], method=method, random_state=0).fit(Z, y)
                      for Z in (X, clipped)]
            assert np.array_equal(models[0].coef_, models[1].coef_)
            assert models[0].privacy_report_.to_dict() == models[1].privacy_report_.to_dict()
        selections = [PrivateLogisticRegressionCV(epsilon=1.0, classes=[-1, 1], expected_runs=2.0, iterations=20,
                                                  random_state=0).fit(Z, y) for Z in (X, clipped)]
    assert np.array_equal(selections[0].coef_, selections[1].coef_)
    assert selections[0].privacy_report_.to_dict() == selections[1].privacy_report_.to_dict()


def test_a_default_fit_allocates_a_small_fraction_of_the_data():
    """tracemalloc's peak during the fit stays below 0.2 × the data (it was above 1× when a row exceeded
    data_norm by rounding: the clipped copy).  What remains is per row — the norms, the clip factors, the
    labels and the table of per-row values gathered by each step: about 80 bytes against 8·d = 800 — plus
    a few MB of the noise calibration (this n is new to the process) and one batch of √n rows: 0.13× here."""
    X, y = _unit_rows(100_000, 100)
    PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X[:500], y[:500])  # imports, caches
    tracemalloc.start()
    try:
        PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.2 * X.nbytes, f"peak {peak / X.nbytes:.3f} x the data"
