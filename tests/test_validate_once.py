"""An estimator validates X once: the pass that computes the row norms also checks finiteness.

scikit-learn's ``validate_data`` checks everything but X's finiteness (``ensure_all_finite=False``);
``dpconvex.data.checks.check_rows`` computes the row norms and refuses a NaN or ±inf with scikit-learn's
own message, and ``Problem.from_arrays`` takes the resulting ``ValidatedRows`` without reading X again.
The references: scikit-learn's own messages (``validate_data`` with its defaults) and the array path of
``Problem.from_arrays`` (bit for bit).  A direct trainer call still validates its arrays itself.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn.utils.validation as sklearn_validation
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

import dpconvex.data.checks as checks
from dpconvex import PrivateLogisticRegression, PrivateRidge
from dpconvex.data.checks import ValidatedRows, check_rows, check_training_rows
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.mechanisms import noisy_sgd
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.losses import LogisticLoss, row_norms

COMMON = dict(l2_regularization=1e-3, delta=1e-8, epsilon=1.0)


def _data(n: int = 200, d: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= 1.5 * np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(X[:, 0] > 0, 1, -1)


def _sklearn_message(estimator: BaseEstimator, X, y) -> str:
    """The error scikit-learn's full validation (finiteness included) raises for X, y."""
    with pytest.raises(ValueError) as caught:
        validate_data(estimator, X, y, ensure_min_samples=2)
    return str(caught.value)


def test_a_fit_reads_x_once_for_validation(monkeypatch):
    X, y = _data(n=500, d=20)
    full = []

    def counted(name, function):
        def wrapper(A, *args, **kwargs):
            if getattr(A, "size", 0) >= X.size:
                full.append(name)
            return function(A, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(sklearn_validation, "_assert_all_finite",
                        counted("finiteness", sklearn_validation._assert_all_finite))
    monkeypatch.setattr(checks, "row_norms", counted("norms", checks.row_norms))
    PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    assert full == ["norms"]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_non_finite_x_gets_scikit_learns_message(bad, dtype):
    X, y = _data()
    X = X.astype(dtype)
    X[17, 3] = bad
    model = PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1])
    expected = _sklearn_message(model, X, y)
    with pytest.raises(ValueError) as caught:
        model.fit(X, y)
    assert str(caught.value) == expected
    assert expected.startswith("Input X contains " + ("NaN" if np.isnan(bad) else "infinity"))


def test_a_non_finite_x_is_named_before_a_fault_of_y_as_before():
    X, y = _data()
    X[3, 0] = np.nan
    model = PrivateRidge(epsilon=1.0)
    for labels in (y[:-1], np.where(np.arange(y.size) == 5, np.nan, y)):  # a wrong length, a NaN target
        expected = _sklearn_message(model, X, labels)
        assert expected.startswith("Input X contains NaN.")
        with pytest.raises(ValueError) as caught:
            model.fit(X, labels)
        assert str(caught.value) == expected


def test_finite_entries_whose_squares_overflow_pass_as_before():
    X, y = _data()
    X[4] = 1e300
    with np.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        model = PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.coef_))


def test_validated_rows_build_the_same_problem_without_changing_the_record():
    X, y = _data()
    X[::7] *= 3.0  # rows above data_norm: clipped where they are read
    rows = check_rows(X)
    assert isinstance(rows, ValidatedRows) and rows.X is X and np.array_equal(rows.norms, row_norms(X))
    norms = rows.norms.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        problems = [Problem.from_arrays(Z, y.astype(float), loss=LogisticLoss(), **COMMON) for Z in (rows, X)]
    assert np.array_equal(rows.norms, norms)  # the problem copies before it updates the clipped rows' norms
    first, second = (problem.data for problem in problems)
    assert first.features is second.features is X
    assert np.array_equal(first.scale, second.scale) and np.array_equal(first.y, second.y)
    assert np.array_equal(first.row_norms, second.row_norms)


def test_validated_rows_still_check_the_targets():
    X, y = _data()
    rows = check_rows(X)
    with pytest.raises(ValueError, match=r"y must be 1-D with X.shape\[0\] = 200 entries"):
        Problem.from_arrays(rows, y[:-1].astype(float), loss=LogisticLoss(), **COMMON)
    with pytest.raises(ValueError, match="y must contain only finite values"):
        Problem.from_arrays(rows, np.full(200, np.nan), loss=LogisticLoss(), **COMMON)


def test_check_rows_has_the_messages_of_the_training_checks():
    X, y = _data()
    for bad in (X[0], np.empty((0, 3)), np.where(np.arange(X.size).reshape(X.shape) == 9, np.inf, X)):
        with pytest.raises(ValueError) as expected:
            check_training_rows(bad, np.ones(bad.shape[0] if bad.ndim else 1))
        with pytest.raises(ValueError) as caught:
            check_rows(bad)
        assert str(caught.value) == str(expected.value)


def test_a_direct_trainer_call_validates_its_arrays():
    X, y = _data()
    X[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"X must contain only finite values \(no NaN or inf\)"):
        noisy_sgd(X, y.astype(float), loss=LogisticLoss(), **COMMON)
