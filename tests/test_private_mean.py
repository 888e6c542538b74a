"""The default regressor's private intercept: calibration, its privacy (closed form), the composed certificate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpconvex import PrivateRidge
from dpconvex.mechanisms.private_mean import MAX_MEAN_SHARE, MEAN_SHARE, compose_with_mean, mean_epsilon, private_mean


def test_the_noise_is_laplace_of_scale_two_y_over_n_epsilon():
    """Kolmogorov-Smirnov against Laplace(2Y/(n eps)) over 4000 seeded draws; a correct scale fails with
    probability 1e-3 (the test's level), a scale off by 50 % fails with overwhelming probability."""
    y = np.linspace(-0.5, 0.5, 50)
    draws = np.array([private_mean(y, 1.0, 2.0, seed).value for seed in range(4000)])
    scale = 2.0 * 1.0 / (50 * 2.0)
    assert stats.kstest(draws - y.mean(), stats.laplace(scale=scale).cdf).pvalue > 1e-3
    assert stats.kstest(draws - y.mean(), stats.laplace(scale=1.5 * scale).cdf).pvalue < 1e-6


@given(n=st.integers(1, 10_000), epsilon=st.floats(1e-3, 1e3), value=st.floats(-1, 1))
@settings(max_examples=60, deadline=None)
def test_the_worst_case_likelihood_ratio_is_e_to_the_epsilon(n, epsilon, value):
    """Closed form: replacing one target in [-1, 1] moves the mean by at most 2/n, and the Laplace densities at any
    output differ by exp(|shift|/scale) <= exp(eps), with equality at the extreme pair."""
    scale = private_mean(np.zeros(n), 1.0, epsilon, 0).scale
    shift = 2.0 / n
    log_ratio = (abs(value - shift) - abs(value)) / scale  # log of the Laplace densities' ratio at ``value``
    assert log_ratio <= epsilon + 1e-12 * (1 + abs(value) / scale)
    assert math.isclose(shift / scale, epsilon, rel_tol=1e-12)


@given(n=st.integers(2, 10**7), epsilon=st.floats(1e-3, 1e3))
@settings(max_examples=80, deadline=None)
def test_the_share_stays_in_its_range_and_shrinks_with_n(n, epsilon):
    share = mean_epsilon(n, epsilon) / epsilon
    assert MEAN_SHARE * (1 - 1e-12) <= share <= MAX_MEAN_SHARE * (1 + 1e-12)
    assert mean_epsilon(2 * n, epsilon) <= mean_epsilon(n, epsilon)


def test_targets_outside_the_bound_and_bad_epsilon_are_refused():
    with pytest.raises(ValueError, match="within"):
        private_mean(np.array([0.0, 1.5]), 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        private_mean(np.array([0.0]), 1.0, 0.0, 0)


def _regression(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(0.4 + X @ np.array([0.3, -0.2, 0.1, 0.0]) + 0.05 * rng.normal(size=n), -1, 1)
    return X, y


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_the_default_ridge_certificate_composes_both_parts_within_the_target(epsilon):
    X, y = _regression()
    model = PrivateRidge(epsilon=epsilon, random_state=0).fit(X, y)
    report = model.privacy_report_
    spent = report.assumptions["intercept_epsilon"]
    assert math.isclose(spent, mean_epsilon(X.shape[0], epsilon), rel_tol=1e-12)
    assert report.epsilon <= epsilon * (1 + 1e-12)
    assert report.epsilon > spent  # the model's part is there too
    assert report.bound.startswith("private mean + ")
    assert "Laplace" in report.conditions[0] and "Thm 3.16" in report.theorem


def test_the_intercept_is_the_released_mean():
    """Same seed: the estimator's intercept equals private_mean's draw from the first numbers of its stream."""
    X, y = _regression()
    model = PrivateRidge(epsilon=1.0, random_state=3).fit(X, y)
    expected = private_mean(y, 1.0, mean_epsilon(X.shape[0], 1.0), np.random.default_rng(3)).value
    assert model.intercept_ == expected


def test_compose_adds_epsilon_everywhere_and_voiding_still_wins():
    X, y = _regression()
    model = PrivateRidge(epsilon=1.0, fit_intercept=False, random_state=0).fit(X, y)
    mean = private_mean(y, 1.0, 0.2, 0)
    composed = compose_with_mean(model.privacy_report_, mean)
    assert composed.epsilon == 0.2 + model.privacy_report_.epsilon
    assert composed.composition_epsilon == 0.2 + model.privacy_report_.composition_epsilon
    assert composed.without_guarantee("read from data").epsilon == math.inf
