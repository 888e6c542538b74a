"""Do no harm: ``method="auto"`` warns when its own plan predicts no better than the trivial predictor.

The ratio's derivation (:mod:`dpconvex.mechanisms.do_no_harm`) is checked by Monte Carlo on the
noise alone; the warning by the plans of the panel's small tables (public quantities only, so the
data's values do not matter: zeros of the right shape).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpconvex.estimators.linear_model import PrivateLogisticRegression
from dpconvex.exceptions import LowUtilityWarning
from dpconvex.mechanisms import auto
from dpconvex.mechanisms.auto import select_configuration
from dpconvex.mechanisms.do_no_harm import SIGNAL_TO_NOISE_THRESHOLD, harm_warning, needed_epsilon, needed_records
from dpconvex.objectives.losses import LogisticLoss


def _closed_form_ratio(records: int, epsilon: float) -> float:
    """A ratio with the central-limit regime's shape, μ²n²/(4d) (σ/b ≈ 2G√T/(μn)), here μ = ε, d = 10."""
    return epsilon**2 * records**2 / 40.0


def test_the_tail_average_noise_has_the_length_the_derivation_states():
    """Monte Carlo: the mean of the last T/2 iterates of a noise-only walk θ_t = θ_{t−1} + η ξ_t, ξ ~ N(0, s² I_d),
    is η Σ_s c_s ξ_s with c_s = 1 for s ≤ T/2 and (T − s + 1)/(T/2) after, so E‖·‖² = η² s² d Σ c_s², whose
    large-T value is the note's 2T/3.  4,000 walks: the relative standard error of the mean of ‖·‖² is at most
    √(2/4000) ≈ 0.022, so a 12 % tolerance (5.3 s.e.) fails with probability < 1e-7."""
    rng = np.random.default_rng(20261128)
    steps, dimension, step_size, scale = 200, 5, 0.7, 1.3
    walks = np.cumsum(step_size * scale * rng.standard_normal((4000, steps, dimension)), axis=1)
    tail = walks[:, steps // 2:, :].mean(axis=1)
    measured = float(np.mean(np.sum(tail**2, axis=1)))
    half = steps // 2
    coefficients = np.concatenate([np.ones(half), (steps - np.arange(half + 1, steps + 1) + 1) / half])
    exact = step_size**2 * scale**2 * dimension * float(np.sum(coefficients**2))
    assert measured == pytest.approx(exact, rel=0.12)
    assert exact == pytest.approx(step_size**2 * scale**2 * dimension * 2.0 * steps / 3.0, rel=0.01)


def test_no_warning_at_or_above_the_threshold_and_a_warning_below_it():
    """The threshold is 1: the noise as long as the farthest the data can move the model (the module's note)."""
    assert SIGNAL_TO_NOISE_THRESHOLD == 1.0
    assert harm_warning(lambda n, eps: SIGNAL_TO_NOISE_THRESHOLD, 100, 1.0) is None
    message = harm_warning(_closed_form_ratio, 10, 0.1)  # ratio 0.1² · 10² / 40 = 0.025
    assert message is not None and "signal-to-noise 0.025" in message and "fitted anyway" in message


def test_the_suggested_epsilon_and_n_match_the_closed_form():
    """ratio = ε²n²/40 reaches 1 at ε = √40/n and at n = √40/ε."""
    assert needed_epsilon(_closed_form_ratio, 10, 0.1) == pytest.approx(math.sqrt(40.0) / 10, rel=2e-3)
    assert needed_records(_closed_form_ratio, 10, 0.1) == math.ceil(math.sqrt(40.0) / 0.1)


def test_nothing_is_suggested_beyond_the_search_range():
    assert needed_epsilon(lambda n, eps: 0.0, 10, 0.1) is None
    assert needed_records(lambda n, eps: 0.0, 10, 0.1) is None
    assert "much larger epsilon or n" in harm_warning(lambda n, eps: 0.0, 10, 0.1)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=20, max_value=3000), st.floats(min_value=0.02, max_value=5.0))
def test_the_suggested_epsilon_or_n_gives_a_plan_without_the_warning(n, epsilon):
    """What the message promises: at the ε it names (these n) or the n it names (this ε), no warning."""
    def harm(records: int, eps: float) -> str | None:
        return select_configuration(records, 20, loss=LogisticLoss(), epsilon=eps, delta=1e-6).harm

    message = harm(n, epsilon)
    if message is None:
        return
    suggested_epsilon = re.search(r"with epsilon >= ([0-9.e+-]+) on", message)
    suggested_records = re.search(r"with n >= ([0-9]+) records", message)
    assert suggested_epsilon or suggested_records
    if suggested_epsilon:
        assert harm(n, float(suggested_epsilon.group(1))) is None
    if suggested_records:
        assert harm(int(suggested_records.group(1)), epsilon) is None


@pytest.mark.parametrize(("n", "dimension", "epsilon", "warns"), [
    (455, 30, 0.1, True),  # breast cancer's training folds at epsilon 0.1 (ratio 0.82): 57.4 %, majority 62.7 %
    (455, 30, 0.5, False),   # ... at 0.5 (ratio 17.6): 75.4 %
    (39_073, 108, 0.1, False),  # Adult's training folds at epsilon 0.1: 82.2 %
])
def test_the_estimator_warns_where_the_panel_fell_below_the_trivial_predictor(n, dimension, epsilon, warns):
    X, y = np.zeros((n, dimension)), np.arange(n) % 2
    estimator = PrivateLogisticRegression(epsilon=epsilon, delta=1e-8, classes=[0, 1], random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    harms = [w for w in caught if "no better than the trivial predictor" in str(w.message)]
    assert bool(harms) is warns
    assert any("trivial predictor" in note for note in estimator.privacy_report_.notes) is warns
    if warns:
        assert harms[0].category is LowUtilityWarning and issubclass(LowUtilityWarning, UserWarning)


def test_the_trainer_says_it_too():
    X, y = np.zeros((40, 3)), np.where(np.arange(40) % 2, 1.0, -1.0)
    with pytest.warns(LowUtilityWarning, match="no better than the trivial predictor"):
        result = auto(X, y, loss=LogisticLoss(), epsilon=0.05, delta=1e-6, random_state=0)
    assert any("fitted anyway" in note for note in result.certificate.notes)
