"""The small seeded data sets the golden configurations train on (built once per process, read-only).

Rows are drawn so that most have ‖x‖₂ ≤ 1 and a few exceed it (the mechanisms clip those, which the
golden records then cover too); regression targets mostly lie in [−1, 1], a few beyond.  Every array
is read-only, so a configuration that wrote into its input would fail instead of changing the next
configuration's data.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numpy.typing import NDArray

__all__ = ["DELTA", "binary_data", "breast_cancer_data", "multiclass_data", "regression_data", "scalar_data",
           "zero_one_data"]

#: δ of every configuration that does not vary it: below 1/n² for every data set here.
DELTA = 1e-6

Dataset = tuple[NDArray[np.float64], NDArray]


def _read_only(*arrays: NDArray) -> Dataset:
    """The arrays, each marked read-only."""
    for array in arrays:
        array.flags.writeable = False
    return arrays


def _features(n: int, d: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``n`` rows of ``d`` Gaussian features scaled so that ‖x‖₂ is about 0.7 (a few rows above 1)."""
    return rng.normal(size=(n, d)) * (0.7 / np.sqrt(d))


@cache
def binary_data() -> Dataset:
    """240 records, 4 features, labels ±1 from a noisy linear rule (for the trainers)."""
    rng = np.random.default_rng(20240601)
    X = _features(240, 4, rng)
    margin = X @ np.array([2.0, -1.5, 1.0, 0.5]) + 0.3 * rng.normal(size=240)
    return _read_only(X, np.where(margin > 0, 1.0, -1.0))


@cache
def zero_one_data() -> Dataset:
    """:func:`binary_data` with labels 0 / 1 (for the classifiers, which take any two labels)."""
    X, y = binary_data()
    return _read_only(X.copy(), (y > 0).astype(int))


@cache
def multiclass_data() -> Dataset:
    """300 records, 4 features, labels 0, 1, 2 (the largest of three noisy linear scores)."""
    rng = np.random.default_rng(20240602)
    X = _features(300, 4, rng)
    weights = np.array([[2.0, -1.0, 0.0], [0.0, 1.5, -1.5], [-1.0, 0.5, 1.0], [0.5, 0.0, -0.5]])
    scores = X @ weights + 0.3 * rng.normal(size=(300, 3))
    return _read_only(X, scores.argmax(axis=1))


@cache
def regression_data() -> Dataset:
    """240 records, 5 features, real targets (a noisy linear function, a few beyond ±1)."""
    rng = np.random.default_rng(20240603)
    X = _features(240, 5, rng)
    y = X @ np.array([1.0, -0.8, 0.6, 0.0, 0.4]) + 0.2 + 0.25 * rng.normal(size=240)
    return _read_only(X, y)


@cache
def scalar_data() -> Dataset:
    """200 records of one feature with labels ±1 (Laplace-noise PNSGD needs d = 1)."""
    rng = np.random.default_rng(20240604)
    X = rng.uniform(-1.0, 1.0, size=(200, 1))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    return _read_only(X, y)


@cache
def breast_cancer_data() -> Dataset:
    """scikit-learn's bundled breast cancer data (569 × 30), each row scaled to unit norm, labels 0 / 1."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    return _read_only(np.ascontiguousarray(X), y)
