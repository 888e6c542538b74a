"""PrivacyLedger: golden compositions, properties, the budget filter and the JSON round trip.

Golden values come from closed forms: √(0.3² + 0.4²) = 0.5 (Dong, Roth, Su 2019, Cor. 3.3) read by
the exact GDP δ(ε) (their Cor. 2.13, ``gdp.gdp_epsilon``), sums of pairs (Dwork & Roth 2014, Thm 3.16)
and the Dwork–Rothblum–Vadhan formula (Dwork & Roth 2014, Thm 3.20).  Every total is rounded up by
ROUNDING_MARGIN, as every certified ε.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpconvex.accounting import gdp
from dpconvex.accounting.composition import advanced_composition, gdp_compose, zcdp_rho
from dpconvex.accounting.rdp import epsilon_from_rdp
from dpconvex.accounting.rounding import round_up
from dpconvex.exceptions import BudgetExceededError
from dpconvex.mechanisms import noisy_gd, noisy_sgd
from dpconvex.objectives.losses import LogisticLoss
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve
from dpconvex.privacy.ledger import PrivacyLedger, compose

DELTA = 1e-6


def _certificate(epsilon, delta, conversion="exact-gdp", mechanism="test"):
    """A certificate of the given pair: ``"exact-gdp"`` makes it a GDP curve, any other conversion a bare pair."""
    return PrivacyCertificate(mechanism=mechanism, epsilon=epsilon, delta=delta, bound="b", theorem="t", conditions=(),
                              assumptions={}, order=None, conversion=conversion, sigma=1.0, iterations=1)


@pytest.fixture(scope="module")
def fits():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    common = dict(loss=LogisticLoss(), delta=DELTA, random_state=0)
    return {
        "gdp": noisy_gd(X, y, l2_regularization=0.05, epsilon=0.7, **common).certificate,
        "shuffled": noisy_sgd(X, y, l2_regularization=0.05, epsilon=1.0, batching="shuffled", **common).certificate,
        "poisson": noisy_sgd(X, y, l2_regularization=0.05, epsilon=1.0, batching="poisson", output="last",
                             **common).certificate,
        "zcdp": noisy_gd(X, y, l2_regularization=0.0, sigma=2.0, iterations=20, step_size=1.0, bound="composition",
                         **common).certificate,
    }


# ----------------------------------------------------------------------------- golden values
def test_gdp_golden_sqrt_sum_of_squares():
    total = compose([PrivacyCurve.gdp(0.3), PrivacyCurve.gdp(0.4)], DELTA)
    assert gdp_compose([0.3, 0.4]) == 0.5
    assert total.method == "gdp" and total.epsilon == round_up(gdp.gdp_epsilon(DELTA, 0.5))


def test_basic_golden_sum_of_pairs():
    """Basic composition is a candidate; the pairs' PLD (their optimal composition) may only be smaller."""
    total = compose([PrivacyCurve.pair(0.25, 1e-7), PrivacyCurve.pair(0.5, 2e-7)], DELTA)
    assert total.candidates["basic"] == round_up(0.75)
    assert total.epsilon == min(total.candidates.values()) and total.candidates["pld"] <= round_up(0.75)


def test_advanced_golden_dwork_rothblum_vadhan():
    total = compose([PrivacyCurve.pair(0.01, 0.0)] * 400, DELTA)
    closed = math.sqrt(2 * 400 * math.log(1 / DELTA)) * 0.01 + 400 * 0.01 * math.expm1(0.01)
    assert advanced_composition(0.01, 0.0, 400, DELTA) == (closed, DELTA)
    assert {k: v for k, v in total.candidates.items() if k != "pld"} == {"basic": round_up(4.0),
                                                                         "advanced": round_up(closed)}
    assert total.method == "pld" and total.epsilon < round_up(closed)


def test_the_pld_of_pure_pairs_meets_the_randomized_response_closed_form():
    """k pure ε-DP releases are dominated by k randomized responses: the privacy loss is ε(2B − k), B ~
    Binomial(k, e^ε/(1 + e^ε)), and δ(ε') = E[(1 − e^(ε' − L))₊] (Kairouz, Oh, Viswanath 2015, Thm 3.3 in PLD
    form).  At the ledger's pld ε that δ is at most the target (pessimistic discretisation) and not far below."""
    from scipy.stats import binom

    k, eps = 400, 0.01
    total = compose([PrivacyCurve.pair(eps, 0.0)] * k, DELTA)
    losses = eps * (2 * np.arange(k + 1) - k)
    weights = binom.pmf(np.arange(k + 1), k, math.exp(eps) / (1 + math.exp(eps)))
    delta_at = float(np.sum(weights * np.clip(1 - np.exp(total.candidates["pld"] - losses), 0, None)))
    assert DELTA * 0.5 <= delta_at <= DELTA


def test_gdp_plus_pair_reads_the_curve_at_the_remaining_delta():
    total = compose([PrivacyCurve.gdp(0.5), PrivacyCurve.pair(0.1, 4e-7)], DELTA)
    assert total.candidates["gdp + basic"] == round_up(gdp.gdp_epsilon(DELTA - 4e-7, 0.5) + 0.1)
    assert total.epsilon == min(total.candidates.values())


def test_real_gdp_certificates_compose_exactly(fits):
    ledger = PrivacyLedger()
    ledger.record(fits["gdp"], "noisy GD")
    ledger.record(fits["shuffled"], "noisy SGD")
    mus = [gdp.gdp_mu(c.epsilon, c.delta) for c in (fits["gdp"], fits["shuffled"])]
    total = ledger.total(DELTA)
    assert total.method == "gdp" and total.epsilon == round_up(gdp.gdp_epsilon(DELTA, math.hypot(*mus)))
    assert total.epsilon < fits["gdp"].epsilon + fits["shuffled"].epsilon  # tighter than basic composition


def test_mixed_real_certificates_never_exceed_basic_composition(fits):
    ledger = PrivacyLedger()
    for name in ("gdp", "poisson", "zcdp"):
        ledger.record(fits[name], name)
    total = ledger.total(3 * DELTA)
    assert total.epsilon <= round_up(math.fsum(fits[n].epsilon for n in ("gdp", "poisson", "zcdp")))
    assert set(total.candidates) == {"rdp", "basic"}


def test_delta_below_the_pairs_is_refused():
    with pytest.raises(ValueError, match="not above"):
        compose([PrivacyCurve.gdp(0.5), PrivacyCurve.pair(0.1, 2e-6)], DELTA)


# ----------------------------------------------------------------------------- properties
_releases = st.lists(st.tuples(st.floats(0.01, 2.0), st.sampled_from([1e-8, 1e-7]), st.booleans(),
                               st.sampled_from([None, "a", "b"])), min_size=1, max_size=5)


def _ledger(items):
    ledger = PrivacyLedger()
    for i, (eps, delta, is_gdp, partition) in enumerate(items):
        ledger.record(_certificate(eps, delta, "exact-gdp" if is_gdp else "pair"), f"r{i}", partition)
    return ledger


@settings(max_examples=40, deadline=None)
@given(_releases, st.tuples(st.floats(0.01, 2.0), st.booleans()))
def test_total_is_monotone_in_adding_releases(items, extra):
    before = _ledger(items).total(DELTA).epsilon
    after = _ledger([*items, (extra[0], 1e-8, extra[1], None)]).total(DELTA).epsilon
    assert after >= before


@settings(max_examples=40, deadline=None)
@given(_releases)
def test_total_never_exceeds_basic_composition_of_the_pairs(items):
    sequential = [(eps, delta, is_gdp, None) for eps, delta, is_gdp, _ in items]
    assert _ledger(sequential).total(DELTA).epsilon <= round_up(math.fsum(eps for eps, *_ in items))


@settings(max_examples=40, deadline=None)
@given(_releases)
def test_parallel_partitions_never_exceed_sequential(items):
    sequential = [(eps, delta, is_gdp, None) for eps, delta, is_gdp, _ in items]
    assert _ledger(items).total(DELTA).epsilon <= _ledger(sequential).total(DELTA).epsilon


def test_partitions_compose_as_a_maximum():
    ledger = _ledger([(0.5, 1e-8, False, "a"), (0.7, 1e-8, False, "b"), (0.2, 1e-8, False, None)])
    total = ledger.total(DELTA)
    assert total.candidates["basic"] == round_up(0.7 + 0.2) and total.epsilon <= round_up(0.7 + 0.2)
    assert total.method.startswith("parallel[b]")


# ----------------------------------------------------------------------------- the filter
BUDGET = (1.0, 1e-6)


def test_gdp_filter_accepts_up_to_the_budget_and_refuses_beyond():
    mu_b = gdp.gdp_mu(*BUDGET)
    ledger = PrivacyLedger(budget=BUDGET)
    for _ in range(4):  # 4·(μ_B/2)² = μ_B² exactly (powers of two)
        ledger.check(PrivacyCurve.gdp(mu_b / 2))
    ledger.check(PrivacyCurve.gdp(mu_b))
    assert ledger.filter == "gdp"
    with pytest.raises(BudgetExceededError):
        ledger.check(PrivacyCurve.gdp(mu_b * (1 + 2**-40)))


def test_gdp_filter_counts_recorded_releases_and_refuses_before_the_release():
    mu_b = gdp.gdp_mu(*BUDGET)
    ledger = PrivacyLedger(budget=BUDGET)
    spent = _certificate(0.5, 1e-6)
    ledger.check(spent)
    ledger.record(spent, "first")
    mu_spent = gdp.gdp_mu(0.5, 1e-6)
    left = math.sqrt(mu_b**2 - mu_spent**2)
    ledger.check(PrivacyCurve.gdp(left * (1 - 1e-9)))
    with pytest.raises(BudgetExceededError):
        ledger.check(PrivacyCurve.gdp(left * (1 + 1e-9)))
    assert len(ledger.releases) == 1  # nothing recorded by a refusal


def test_renyi_filter_at_the_budget_order():
    rho_b, order = zcdp_rho(*BUDGET)
    ledger = PrivacyLedger(budget=BUDGET, filter="renyi")
    ledger.check(PrivacyCurve.zcdp(rho_b))
    assert ledger.filter_order == order
    assert epsilon_from_rdp([order], [order * rho_b], BUDGET[1])[0] <= BUDGET[0]
    with pytest.raises(BudgetExceededError):
        ledger.check(PrivacyCurve.zcdp(rho_b * 1.001))
    # a GDP curve is charged its RDP α μ²/2 at the same order: μ² = 2ρ_B is exactly the same spend
    ledger.check(PrivacyCurve.gdp(math.sqrt(2 * rho_b) * (1 - 1e-9)))


def test_basic_filter_sums_pairs():
    ledger = PrivacyLedger(budget=BUDGET)
    for i in range(4):
        quarter = _certificate(0.25, 0.25e-6, "pair")
        ledger.check(quarter)
        ledger.record(quarter, f"q{i}")
    assert ledger.filter == "basic"
    with pytest.raises(BudgetExceededError):
        ledger.check(PrivacyCurve.pair(2.0**-40, 0.0))
    with pytest.raises(BudgetExceededError):  # δ alone exhausts it too
        PrivacyLedger(budget=BUDGET).check(PrivacyCurve.pair(0.1, 2e-6))


def test_filter_per_partition():
    ledger = PrivacyLedger(budget=BUDGET)
    full = _certificate(1.0, 1e-6, "pair")
    ledger.record(full, "all of a", partition="a")
    ledger.check(full, partition="b")
    with pytest.raises(BudgetExceededError):
        ledger.check(full, partition="a")
    with pytest.raises(BudgetExceededError):  # an unpartitioned release touches a as well
        ledger.check(PrivacyCurve.pair(0.01, 0.0))


def test_auto_filter_is_fixed_by_the_first_release(fits):
    ledger = PrivacyLedger(budget=(5.0, 1e-5))
    ledger.check(fits["gdp"])
    with pytest.raises(ValueError, match="filter='renyi'"):
        ledger.check(fits["poisson"])
    mixed = PrivacyLedger(budget=(5.0, 1e-5), filter="renyi")
    for name in ("gdp", "poisson", "zcdp"):
        mixed.check(fits[name])
        mixed.record(fits[name], name)


# ----------------------------------------------------------------------------- persistence
def test_json_round_trip_is_exact(fits, tmp_path):
    ledger = PrivacyLedger(budget=(5.0, 1e-5), filter="renyi")
    ledger.record(fits["gdp"], "noisy GD", partition="a")
    ledger.record(fits["poisson"], "noisy SGD")
    ledger.record(fits["zcdp"].without_guarantee("test"), "void", partition="b")
    ledger.check(PrivacyCurve.gdp(0.1), partition="a")  # fixes filter_order
    path = tmp_path / "ledger.json"
    ledger.to_json(path)
    loaded = PrivacyLedger.from_json(path)
    assert loaded == ledger
    assert (loaded.budget, loaded.filter, loaded.filter_order) == (ledger.budget, ledger.filter, ledger.filter_order)
    for mine, theirs in zip(ledger.releases, loaded.releases):
        assert mine == theirs and mine.certificate == theirs.certificate
    assert loaded.total(1e-4) == ledger.total(1e-4)
