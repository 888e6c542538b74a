"""The audit harness: its statistics against scipy, every registered mechanism passes, and a
mechanism that adds less noise than its certificate assumes fails.

Audits are seeded; a correct mechanism fails an audit with probability ≤ alpha = 1e-3 over seeds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from dpconvex.audit import AUDITS, AuditTarget, clopper_pearson_upper, epsilon_lower_bound, run_audit
from dpconvex.audit import targets
from dpconvex.mechanisms import TrainingResult, noisy_gd

QUICK_RUNS = 600


@pytest.mark.parametrize("errors, trials", [(0, 50), (3, 100), (40, 80), (99, 100)])
def test_clopper_pearson_matches_scipy_exact_interval(errors, trials):
    # A one-sided (1 − α) limit is the upper end of the two-sided (1 − 2α) exact interval.
    alpha = 0.01
    expected = stats.binomtest(errors, trials).proportion_ci(confidence_level=1 - 2 * alpha, method="exact").high
    assert clopper_pearson_upper(errors, trials, alpha) == pytest.approx(expected, rel=1e-9)


def test_epsilon_lower_bound_is_the_hypothesis_testing_inequality():
    # With huge samples the limits equal the rates: ε = log((1 − δ − FNR)/FPR).
    value = epsilon_lower_bound(10_000, 1_000_000, 500_000, 1_000_000, 1e-6, 1e-3)
    assert value == pytest.approx(np.log((1 - 1e-6 - 0.5) / 0.01), abs=0.05)
    assert value < np.log((1 - 1e-6 - 0.5) / 0.01)  # confidence limits only ever lower it
    assert epsilon_lower_bound(50, 100, 50, 100, 1e-5, 1e-3) == 0.0


@pytest.mark.parametrize("name", sorted(AUDITS))
def test_every_registered_mechanism_passes_its_quick_audit(name):
    result = run_audit(name, runs=QUICK_RUNS, seed=0)
    assert result.passed, result
    assert result.audit_epsilon_lower <= result.certified_epsilon
    assert result.runs == QUICK_RUNS and result.confidence == pytest.approx(0.999)


def test_the_exact_mechanism_audit_has_power():
    # On the tight (Gaussian) target a quick audit already finds a clearly positive lower bound.
    assert run_audit("noisy-gd", runs=QUICK_RUNS, seed=1).audit_epsilon_lower > 0.3


def test_a_trainer_adding_less_noise_than_its_certificate_fails_the_audit():
    honest = AUDITS["noisy-gd"]
    sigma = targets._calibrated_sigma("quadratic")

    def leaky(X, y, seed):
        kwargs = targets._quadratic_kwargs()
        released = noisy_gd(X, y, sigma=sigma / 4, random_state=seed, **kwargs).coef
        claimed = noisy_gd(X, y, sigma=sigma, random_state=seed, **kwargs).certificate
        return TrainingResult(coef=released, certificate=claimed)

    result = run_audit(dataclasses.replace(honest, name="leaky", train=leaky), runs=QUICK_RUNS, seed=0)
    assert not result.passed
    assert result.audit_epsilon_lower > result.certified_epsilon


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(target="nope"), "mechanism must be one of"), (dict(runs=5), "runs"), (dict(alpha=0.0), "alpha")],
)
def test_bad_audit_arguments(kwargs, message):
    call = {"target": "noisy-gd", **kwargs}
    with pytest.raises(ValueError, match=message):
        run_audit(call.pop("target"), **call)


def test_register_refuses_duplicates():
    from dpconvex.audit import register

    with pytest.raises(ValueError, match="already registered"):
        register(AUDITS["noisy-gd"])


def test_every_mechanism_is_registered():
    # Contributor rule: each mechanism in the registry has at least one audit target.
    from dpconvex.mechanisms import MECHANISMS

    assert set(MECHANISMS) <= {target.mechanism for target in AUDITS.values()}


def test_law_check_of_the_exact_target_passes():
    from dpconvex.audit import run_law_check

    result = run_law_check("noisy-gd", runs=QUICK_RUNS, seed=0)
    assert result.passed, result
    # The gap is the closed form's: the canary moves the data mean by 2/n.
    assert result.expected_gap == pytest.approx(-0.5 * sum(0.5**i for i in range(20)) * 2 / 10)


def test_law_check_fails_for_a_trainer_with_less_noise_than_certified():
    from dpconvex.audit import run_law_check

    honest = AUDITS["noisy-gd"]
    sigma = targets._calibrated_sigma("quadratic")
    quieter = lambda X, y, seed: noisy_gd(X, y, sigma=0.8 * sigma, random_state=seed, **targets._quadratic_kwargs())
    result = run_law_check(dataclasses.replace(honest, train=quieter), runs=QUICK_RUNS, seed=0)
    assert not result.passed
    assert max(result.variance_ratios) < result.variance_interval[0]


def test_law_check_needs_a_known_law():
    from dpconvex.audit import run_law_check

    with pytest.raises(ValueError, match="not known in closed form"):
        run_law_check("noisy-gd-logistic", runs=QUICK_RUNS)
