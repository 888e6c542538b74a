"""The audit harness: its statistics against scipy and closed forms, the privacy profile it reads off
the certificates, and every registered mechanism passing its quick audit.

Audits are seeded; a correct mechanism fails an audit with probability ≤ alpha = 1e-3 over seeds, and
a law check with probability < 1e-5.  The halved-noise mutants are in ``test_audit_mutations.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from dpconvex.accounting import gdp
from dpconvex.audit import (
    AUDITS,
    clopper_pearson_upper,
    epsilon_lower_bound,
    noise_mutant,
    privacy_profile,
    profile_margins,
    run_audit,
    run_law_check,
)
from dpconvex.mechanisms import TrainingResult

QUICK_RUNS = 600


@pytest.mark.parametrize("errors, trials", [(0, 50), (3, 100), (40, 80), (99, 100), (100, 100)])
def test_clopper_pearson_matches_scipy_exact_interval(errors, trials):
    # A one-sided (1 − α) limit is the upper end of the two-sided (1 − 2α) exact interval.
    alpha = 0.01
    expected = stats.binomtest(errors, trials).proportion_ci(confidence_level=1 - 2 * alpha, method="exact").high
    assert clopper_pearson_upper(errors, trials, alpha) == pytest.approx(expected, rel=1e-9)
    assert clopper_pearson_upper(np.array([errors, errors]), trials, alpha) == pytest.approx([expected] * 2, rel=1e-9)


def test_epsilon_lower_bound_is_the_hypothesis_testing_inequality():
    # With huge samples the limits equal the rates: ε = log((1 − δ − FNR)/FPR).
    value = epsilon_lower_bound(10_000, 1_000_000, 500_000, 1_000_000, 1e-6, 1e-3)
    assert value == pytest.approx(np.log((1 - 1e-6 - 0.5) / 0.01), abs=0.05)
    assert value < np.log((1 - 1e-6 - 0.5) / 0.01)  # confidence limits only ever lower it
    assert epsilon_lower_bound(50, 100, 50, 100, 1e-5, 1e-3) == 0.0


def test_profile_margin_separates_a_gaussian_curve_from_a_wider_one():
    # Profile of μ-GDP; rates of the best threshold test of μ' (FNR = Φ(Φ⁻¹(1 − FPR) − μ')) measured
    # on 10⁶ runs: inside the curve for μ' = μ (margin < 0), outside for μ' = 1.3μ (margin > 0).
    mu, runs = 1.0, 1_000_000
    deltas = np.array([1e-4, 1e-2, 0.1, 0.2, 0.3])
    epsilons = np.array([gdp.gdp_epsilon(d, mu) for d in deltas])
    fpr = 0.3
    margins = []
    for shift in (mu, 1.3 * mu):
        fnr = stats.norm.cdf(stats.norm.ppf(1 - fpr) - shift)
        margin, where = profile_margins(int(fpr * runs), runs, int(fnr * runs), runs, deltas, epsilons, 1e-3)
        margins.append(margin[0])
    assert -0.05 < margins[0] < 0.0 < margins[1]
    # One inequality per δ: the margin is the largest excess of the smallest ε the rates allow.
    fnr = stats.norm.cdf(stats.norm.ppf(1 - fpr) - 1.3 * mu)
    lower = epsilon_lower_bound(int(fpr * runs), runs, int(fnr * runs), runs, deltas, 1e-3)
    assert margins[1] == pytest.approx(np.max(lower - epsilons))


def test_privacy_profile_finds_the_total_variation_bound_of_an_exact_gaussian():
    # pnsgd (fixed stop, η = 1) releases d_n − Z: a Gaussian mechanism with shift 2 and sd σ, whose
    # exact curve has ε = 0 from δ = TV = 2Φ(1/σ) − 1 on.
    target = AUDITS["pnsgd"]
    deltas, epsilons, bound = privacy_profile(target)
    total_variation = 2 * stats.norm.cdf(1 / target.sigma()) - 1
    first_zero = deltas[np.argmax(epsilons == 0)]
    assert first_zero == pytest.approx(total_variation, rel=2e-3)
    assert np.all(np.diff(epsilons[np.isfinite(epsilons)]) <= 0)  # ε(δ) is non-increasing
    assert epsilons[deltas == target.delta][0] == pytest.approx(3.0, abs=1e-3) and bound == "hockey-stick"


def test_privacy_profile_refuses_a_release_that_depends_on_delta():
    honest = AUDITS["nsgd"]

    def run(X, y, seed, sigma, delta):
        result = honest.run(X, y, seed, sigma, delta)
        return TrainingResult(coef=result.coef + delta, certificate=result.certificate)

    with pytest.raises(ValueError, match="depends on delta"):
        privacy_profile(dataclasses.replace(honest, run=run))


#: Targets whose honest audit runs in their own test file at least at QUICK_RUNS (the audit that catches their
#: mutants): tests/test_audit_multiclass.py, tests/test_audit_selection.py, tests/test_audit_discovery.py.
AUDITED_ELSEWHERE = {"auto-one-vs-rest", "auto-multinomial", "selection-geometric", "discovery-selection",
                     "discovery-bounds", "discovery-type"}


def test_the_targets_audited_elsewhere_are_audited_there_at_least_as_long():
    from test_audit_discovery import MUTATIONS as DISCOVERY
    from test_audit_multiclass import MUTATIONS as MULTICLASS
    from test_audit_selection import MUTATIONS as SELECTION

    runs = {**{name: runs for name, (runs, _) in MULTICLASS.items()},
            "selection-geometric": SELECTION["selection-geometric"]["score noise x0.5"][0],
            **{name: max(runs for runs, _ in mutants.values()) for name, mutants in DISCOVERY.items()}}
    assert AUDITED_ELSEWHERE <= set(AUDITS) and AUDITED_ELSEWHERE <= set(runs)
    assert all(runs[name] >= QUICK_RUNS for name in AUDITED_ELSEWHERE), runs


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(AUDITS) - AUDITED_ELSEWHERE))
def test_every_registered_mechanism_passes_its_quick_audit(name):
    result = run_audit(name, runs=QUICK_RUNS, seed=0)
    assert result.passed, result
    assert result.audit_epsilon_lower <= result.certified_epsilon and result.profile_margin <= 0
    assert result.runs == QUICK_RUNS and result.confidence == pytest.approx(0.999)


@pytest.mark.slow
def test_the_exact_mechanism_audit_has_power():
    # On the tight (Gaussian) target a quick audit already finds a clearly positive lower bound.
    assert run_audit("noisy-gd", runs=QUICK_RUNS, seed=1).audit_epsilon_lower > 0.3


def test_noise_mutant_scales_the_release_noise_but_not_the_certificate():
    # OutPert-GD releases w_T + σ·ξ: with a shared seed, 2·(σ/2 release) − (σ release) = w_T.
    honest = AUDITS["outpert-gd"]
    mutant = noise_mutant(honest)
    pair = honest.make_pair()
    noiseless = [2 * mutant.release(pair.X, pair.y, s) - honest.release(pair.X, pair.y, s) for s in (0, 1)]
    assert np.allclose(noiseless[0], noiseless[1])
    assert not np.allclose(honest.release(pair.X, pair.y, 0), honest.release(pair.X, pair.y, 1))
    assert all(np.array_equal(a, b) for a, b in zip(privacy_profile(mutant)[:2], privacy_profile(honest)[:2]))
    assert mutant.name == "outpert-gd[noise x0.5]"
    with pytest.raises(ValueError, match="factor"):
        noise_mutant(honest, 1.0)


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


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(name for name, target in AUDITS.items() if target.exact_law))
def test_law_check_of_every_exact_target_passes(name):
    result = run_law_check(name, runs=QUICK_RUNS, seed=0)
    assert result.passed, result


def test_law_check_gap_is_the_closed_form():
    # The canary moves the data mean by 2/n; noisy GD from 0 with η = 0.5 for 20 steps.
    result = run_law_check("noisy-gd", runs=200, seed=0)
    assert result.expected_gap == pytest.approx(-0.5 * sum(0.5**i for i in range(20)) * 2 / 10)


@pytest.mark.slow
def test_law_check_fails_for_a_trainer_with_less_noise_than_certified():
    result = run_law_check(noise_mutant(AUDITS["noisy-gd"], 0.8), runs=QUICK_RUNS, seed=0)
    assert not result.passed
    assert max(result.variance_ratios) < result.variance_interval[0]


def test_law_check_needs_a_known_law():
    with pytest.raises(ValueError, match="not known in closed form"):
        run_law_check("noisy-gd-logistic", runs=QUICK_RUNS)
