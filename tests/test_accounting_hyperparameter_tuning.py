"""The tuning accountant (Papernot & Steinke 2022, arXiv:2110.03620): laws, bounds, account, calibration.

Independent references: the law of Def. 1 written out by hand (geometric and logarithmic closed
forms, the product formula of the pmf); Thm 2 for a μ-GDP base in closed form (λ̂* = √(2L)/μ, module
note 1), typed out here; Google's dp-accounting (``RdpAccountant`` with ``RepeatAndSelectDpEvent``,
its own implementation of Thms 2 and 6) for the ε at δ.

The paper's own results: its Corollary 3 (an ε-DP base tuned with K ~ D_{η,γ} is (2 + η)ε-DP) is
reproduced below in the pure-DP limit, at the cases dp-accounting's own test of it uses
(``rdp_privacy_accountant_test.test_repeat_select_pure_negative_binomial``: ε = 1, E[K] = 1000, or
100 for η = 2; the statement is quoted there, with the paper as its source).  The paper's worked
numbers (its figures for DP-SGD) are not reproduced: a search of public copies of the text
(arXiv 2110.03620, ar5iv, the ICLR 2022 proceedings text) gave only the abstract and introduction,
and no number is typed in here from memory.

Monte Carlo: each law's sampler is compared with its pmf by a χ² test (p-value > 1e-6: false-failure
rate 1e-6 per law) and with its mean (|sample mean − E[K]| < 5 standard errors, from the law's own
second moment: false-failure rate < 1e-6 per law, normal approximation at 40,000 draws).  Seeded, so
the outcome is fixed; the rates say how unlucky the seed would have to be.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpconvex.accounting import gdp
from dpconvex.accounting import hyperparameter_tuning as ht
from dpconvex.accounting.rdp import DEFAULT_ORDERS, epsilon_from_rdp
from dpconvex.accounting.rounding import ROUNDING_MARGIN

TNB = "truncated-negative-binomial"
SHAPES = (-0.5, 0.0, 0.5, 1.0, 3.0)


# ----------------------------------------------------------------------------- the laws (Def. 1)
def _support(law, top=200_000):
    k = np.arange(0 if isinstance(law, ht.PoissonRepetitions) else 1, top)
    return k, np.exp(law.log_pmf(k))


def test_geometric_and_logarithmic_laws_are_the_closed_forms():
    gamma = 0.13
    geometric, logarithmic = ht.TruncatedNegativeBinomial(1.0, gamma), ht.TruncatedNegativeBinomial(0.0, gamma)
    k = np.arange(1, 40)
    assert np.allclose(np.exp(geometric.log_pmf(k)), gamma * (1 - gamma) ** (k - 1), rtol=1e-12)
    assert geometric.mean == pytest.approx(1 / gamma, rel=1e-14)
    assert np.allclose(np.exp(logarithmic.log_pmf(k)), (1 - gamma) ** k / (k * math.log(1 / gamma)), rtol=1e-12)
    assert logarithmic.mean == pytest.approx((1 / gamma - 1) / math.log(1 / gamma), rel=1e-14)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_pmf_is_def_1s_product_formula_and_sums_to_one_with_the_stated_mean(shape):
    law = ht.TruncatedNegativeBinomial(shape, 0.07)
    k, pmf = _support(law)
    product = np.cumprod([(ell + shape) / (ell + 1) for ell in range(30)])
    if shape != 0.0:
        assert np.allclose(pmf[:30], (1 - 0.07) ** k[:30] / (0.07 ** -shape - 1) * product, rtol=1e-10)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.sum(k * pmf) == pytest.approx(law.mean, rel=1e-10)
    assert law.log_pmf(0) == -np.inf


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mean", [1.5, 10.0, 300.0])
def test_with_mean_solves_for_gamma(shape, mean):
    law = ht.TruncatedNegativeBinomial.with_mean(mean, shape)
    assert law.mean == pytest.approx(mean, rel=1e-10) and law.shape == shape
    if shape == 1.0:
        assert law.gamma == pytest.approx(1 / mean, rel=1e-12)


@pytest.mark.parametrize("law", [*(ht.TruncatedNegativeBinomial.with_mean(6.0, s) for s in SHAPES),
                                 ht.PoissonRepetitions(6.0)], ids=lambda law: law.describe())
def test_the_sampler_draws_the_law(law):
    draws = 40_000
    rng = np.random.default_rng(2024)
    sample = np.array([law.sample(rng) for _ in range(draws)])
    k, pmf = _support(law)
    variance = np.sum(k**2 * pmf) - law.mean**2
    assert abs(sample.mean() - law.mean) < 5 * math.sqrt(variance / draws)
    # χ² on the values with expected count >= 20, the rest pooled into one tail bin
    expected = draws * pmf
    keep = expected >= 20
    observed = np.array([np.count_nonzero(sample == value) for value in k[keep]]
                        + [np.count_nonzero(~np.isin(sample, k[keep]))])
    expected = np.append(expected[keep], draws - expected[keep].sum())
    assert stats.chisquare(observed, expected).pvalue > 1e-6
    assert sample.min() >= (0 if isinstance(law, ht.PoissonRepetitions) else 1)


# ----------------------------------------------------------------------------- Thm 2 and Thm 6
def _closed_form_thm2(orders, mu, shape, gamma):
    """Thm 2 for a μ-GDP base, λ̂ optimised over [1, ∞) by hand (note 1), before the envelope."""
    L = math.log(1 / gamma)
    hat = max(1.0, math.sqrt(2 * L) / mu)
    mean = ht.TruncatedNegativeBinomial(shape, gamma).mean
    return orders * mu**2 / 2 + (1 + shape) * ((hat - 1) * mu**2 / 2 + L / hat) + math.log(mean) / (orders - 1)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mu", [0.01, 0.3, 5.0])
def test_thm2_for_a_gdp_base_is_the_closed_form_above_its_minimising_order(shape, mu):
    law = ht.TruncatedNegativeBinomial.with_mean(8.0, shape)
    orders = np.asarray(DEFAULT_ORDERS)
    closed = _closed_form_thm2(orders, mu, shape, law.gamma)
    rdp = ht.tuning_rdp(ht.TuningEvent(law, base_mu=mu), TNB)
    lowest = int(np.argmin(closed))
    assert np.allclose(rdp[lowest:], closed[lowest:], rtol=1e-12)
    # below it the envelope (note 2) takes the least value of the orders above
    assert np.allclose(rdp[:lowest], closed[lowest], rtol=1e-12)


@pytest.mark.parametrize("shape, mean",
                         [(0.0, 10.0), (1.0, 10.0), (1.0, 3.0), (0.5, 20.0), (2.0, 6.0), (math.inf, 10.0)])
@pytest.mark.parametrize("mu", [0.02, 0.5, 2.0])
def test_epsilon_matches_dp_accountings_repeat_and_select(shape, mean, mu):
    """The same theorem on the same orders: dp-accounting's γ is solved to 1e-9 (ours to machine precision),
    and its Poisson branch skips the monotone envelope (ours can only be lower there)."""
    orders = np.asarray(DEFAULT_ORDERS)
    accountant = dp_rdp.RdpAccountant(list(orders), dp_rdp.NeighborRel.REPLACE_ONE)
    accountant.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1 / mu), mean, shape))
    law = ht.PoissonRepetitions(mean) if shape == math.inf else ht.TruncatedNegativeBinomial.with_mean(mean, shape)
    ours = ht.account(ht.TuningEvent.from_curve(law, orders, orders * mu**2 / 2), 1e-8).epsilon
    theirs = accountant.get_epsilon(1e-8)
    # ours is certified (rounded up by ROUNDING_MARGIN): never below theirs where the theorems coincide
    assert ours <= theirs * (1 + ROUNDING_MARGIN) * (1 + 1e-6)
    if shape == 1.0:
        assert ours >= theirs
    assert ours == pytest.approx(theirs, rel=1e-3)


@pytest.mark.parametrize("law", [ht.TruncatedNegativeBinomial.with_mean(10.0, 0.0), ht.PoissonRepetitions(10.0)],
                         ids=lambda law: law.describe())
def test_a_gdp_base_is_never_worse_than_its_own_rdp_curve(law):
    # GDP: λ̂ over [1, ∞) rather than the grid, and δ̂ exact rather than converted from the curve (for
    # Poisson at μ = 0.01 the exact δ̂ gives ε 0.071 against the curve's 0.089).
    orders = np.asarray(DEFAULT_ORDERS)
    for mu in (0.01, 0.2, 1.0):
        exact = ht.account(ht.TuningEvent(law, base_mu=mu), 1e-6).epsilon
        curve = ht.account(ht.TuningEvent.from_curve(law, orders, orders * mu**2 / 2), 1e-6).epsilon
        assert exact <= curve and exact == pytest.approx(curve, rel=0.25)


def test_thm6_uses_the_base_delta_at_the_largest_allowed_eps_hat():
    mu, mean = 0.4, 12.0
    orders = np.array([2.0, 5.0, 40.0])
    eps_hat = np.log1p(1 / (orders - 1))
    expected = orders * mu**2 / 2 + mean * gdp.gdp_delta(eps_hat, mu) + math.log(mean) / (orders - 1)
    rdp = ht.tuning_rdp(ht.TuningEvent(ht.PoissonRepetitions(mean), base_mu=mu), "poisson", orders)
    assert np.allclose(rdp, np.minimum.accumulate(expected[::-1])[::-1], rtol=1e-12)


@pytest.mark.parametrize("shape, mean", [(0.0, 1000.0), (1.0, 1000.0), (0.5, 1000.0), (2.0, 100.0), (5.0, 1000.0)])
def test_an_epsilon_dp_base_gives_corollary_3s_two_plus_eta_epsilon(shape, mean):
    """Papernot & Steinke 2022, Cor. 3: an ε-DP base ((α, ε)-RDP at every order; here one huge order, the pure-DP
    limit) tuned with K ~ D_{η,γ} is (2 + η)ε-DP: Thm 2 at λ = λ̂ → ∞ leaves ε + (1 + η)ε."""
    epsilon, order = 1.0, 1e10
    law = ht.TruncatedNegativeBinomial.with_mean(mean, shape)
    event = ht.TuningEvent.from_curve(law, [order], [epsilon])
    assert ht.tuning_rdp(event, TNB)[0] == pytest.approx((2 + shape) * epsilon, rel=1e-8)
    assert ht.account(event, 1e-10).epsilon == pytest.approx((2 + shape) * epsilon * (1 + ROUNDING_MARGIN), rel=1e-8)


def test_tuning_costs_more_than_one_run_and_less_than_the_base_times_the_mean():
    mu, delta = 0.05, 1e-8
    one_run = epsilon_from_rdp(DEFAULT_ORDERS, np.asarray(DEFAULT_ORDERS) * mu**2 / 2, delta)[0]
    for law in (ht.TruncatedNegativeBinomial.with_mean(10.0, 1.0), ht.PoissonRepetitions(10.0)):
        tuned = ht.account(ht.TuningEvent(law, base_mu=mu), delta).epsilon
        composed = epsilon_from_rdp(DEFAULT_ORDERS, 10 * np.asarray(DEFAULT_ORDERS) * mu**2 / 2, delta)[0]
        assert one_run < tuned < composed


# ----------------------------------------------------------------------------- properties
LAWS = st.one_of(
    st.builds(ht.TruncatedNegativeBinomial.with_mean, st.floats(1.5, 50.0), st.sampled_from(SHAPES)),
    st.builds(ht.PoissonRepetitions, st.floats(1.0, 50.0)),
)


@settings(max_examples=60, deadline=None)
@given(law=LAWS, mu=st.floats(1e-3, 3.0), factor=st.floats(1.01, 3.0), delta=st.sampled_from([1e-10, 1e-6, 1e-3]))
def test_epsilon_grows_with_the_base_budget(law, mu, factor, delta):
    low = ht.account(ht.TuningEvent(law, base_mu=mu), delta).epsilon
    high = ht.account(ht.TuningEvent(law, base_mu=mu * factor), delta).epsilon
    assert low < high or low == high == 0.0  # both 0 where δ exceeds what the bound charges


@settings(max_examples=40, deadline=None)
@given(law=LAWS, epsilon=st.floats(0.05, 5.0), delta=st.sampled_from([1e-10, 1e-8, 1e-5]))
def test_calibration_never_overshoots_and_is_the_largest_budget(law, epsilon, delta):
    rtol = 1e-4
    mu = ht.calibrate_base_mu(law, epsilon, delta, rtol=rtol)
    reached = ht.account(ht.TuningEvent(law, base_mu=mu), delta).epsilon
    assert reached <= epsilon
    # stopped in the window, or a budget larger by 1 + rtol already misses the target
    larger = ht.account(ht.TuningEvent(law, base_mu=mu * (1 + rtol)), delta).epsilon
    assert reached >= epsilon * (1 - rtol) or larger > epsilon


def test_calibration_follows_the_selection_it_is_given():
    # A base whose RDP curve is 1.5 times the μ-GDP curve needs μ smaller by √1.5 at the same target;
    # a base that is (1.5 μ)-GDP needs μ smaller by 1.5.
    law, orders = ht.PoissonRepetitions(10.0), np.asarray(DEFAULT_ORDERS)

    def curve(scale):
        return lambda m: ht.TuningEvent.from_curve(law, orders, scale * orders * m**2 / 2)

    mu = ht.calibrate_base_mu(law, 0.5, 1e-8, event_of=curve(1.5), rtol=1e-6)
    assert mu == pytest.approx(ht.calibrate_base_mu(law, 0.5, 1e-8, event_of=curve(1.0), rtol=1e-6) / math.sqrt(1.5),
                               rel=1e-4)
    wider = ht.calibrate_base_mu(law, 0.5, 1e-8, event_of=lambda m: ht.TuningEvent(law, base_mu=1.5 * m), rtol=1e-6)
    assert wider == pytest.approx(ht.calibrate_base_mu(law, 0.5, 1e-8, rtol=1e-6) / 1.5, rel=1e-4)


# ----------------------------------------------------------------------------- records and refusals
def test_the_account_names_the_theorem_and_skips_the_other_law():
    account = ht.account(ht.TuningEvent(ht.PoissonRepetitions(5.0), base_mu=0.1), 1e-6)
    assert account.bound == "poisson" and "Thm 6" in account.theorem and account.conversion == "improved"
    assert account.skipped == {TNB: ("K ~ truncated negative binomial",)}
    assert any("secret" in a for a in account.assumptions)
    with pytest.raises(ValueError, match="needs: K ~ Poisson"):
        ht.account(ht.TuningEvent(ht.TruncatedNegativeBinomial(1.0, 0.1), base_mu=0.1), 1e-6, bound="poisson")
    with pytest.raises(ValueError, match="not implemented: Liu & Talwar"):
        ht.account(ht.TuningEvent(ht.TruncatedNegativeBinomial(1.0, 0.1), base_mu=0.1), 1e-6, bound="liu-talwar")


@pytest.mark.parametrize("make, match", [
    (lambda: ht.TruncatedNegativeBinomial(-1.0, 0.5), "shape must be a finite number > -1"),
    (lambda: ht.TruncatedNegativeBinomial(1.0, 1.0), "gamma must lie in the open interval"),
    (lambda: ht.TruncatedNegativeBinomial.with_mean(1.0, 1.0), "mean must be a finite number > 1"),
    (lambda: ht.PoissonRepetitions(0.5), "mean must be a finite number >= 1"),
    (lambda: ht.TuningEvent(ht.PoissonRepetitions(2.0)), "exactly one description"),
    (lambda: ht.TuningEvent(ht.PoissonRepetitions(2.0), base_mu=0.1, base_orders=(2.0,), base_rdp=(0.1,)),
     "exactly one description"),
    (lambda: ht.TuningEvent(ht.PoissonRepetitions(2.0), base_mu=-1.0), "base_mu must be finite and > 0"),
    (lambda: ht.TuningEvent(ht.PoissonRepetitions(2.0), base_orders=(1.0,), base_rdp=(0.1,)), "base_orders must be"),
    (lambda: ht.TuningEvent(ht.PoissonRepetitions(2.0), base_orders=(2.0, 3.0), base_rdp=(0.1,)), "same length"),
    (lambda: ht.TuningEvent("poisson", base_mu=1.0), "law must be"),
    (lambda: ht.calibrate_base_mu(ht.PoissonRepetitions(2.0), 0.0, 1e-6), "epsilon must be finite and > 0"),
])
def test_bad_arguments_are_refused_naming_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_target_below_the_tuning_overhead_is_refused():
    # log E[K]/(α − 1) alone exceeds 1e-4 at every default order (α ≤ 1e4): no budget meets it.
    with pytest.raises(ValueError, match="no noise level"):
        ht.calibrate_base_mu(ht.TruncatedNegativeBinomial.with_mean(10.0, 1.0), 1e-4, 1e-8)


# ----------------------------------------------------------------------------- docs/model-selection.md's table
MODEL_SELECTION_PAGE = Path(__file__).resolve().parents[1] / "docs" / "model-selection.md"


def _truncated_negative_binomial_pmf(k: np.ndarray, shape: float, gamma: float) -> np.ndarray:
    """Def. 1 written out: (1 − γ)^k/(γ^{−η} − 1)·∏_{ℓ<k}(ℓ + η)/(ℓ + 1), k ≥ 1 (η ≠ 0)."""
    product = np.cumprod((k - 1 + shape) / k)
    return (1 - gamma) ** k / (gamma**-shape - 1) * product


#: The table's rows: label → (law, its pmf on k = 0, 1, … from scipy or Def. 1 written out).
LAW_ROWS = {
    "Poisson, E[K] = 10 (default)": (ht.PoissonRepetitions(10.0), lambda k, law: stats.poisson.pmf(k, 10.0)),
    "Poisson, E[K] = 5": (ht.PoissonRepetitions(5.0), lambda k, law: stats.poisson.pmf(k, 5.0)),
    "geometric, E[K] = 10": (ht.TruncatedNegativeBinomial.with_mean(10.0, 1.0),
                             lambda k, law: stats.geom.pmf(k, law.gamma)),
    "logarithmic, E[K] = 10": (ht.TruncatedNegativeBinomial.with_mean(10.0, 0.0),
                               lambda k, law: stats.logser.pmf(k, 1 - law.gamma)),
    "truncated negative binomial η = −0.5, E[K] = 10": (
        ht.TruncatedNegativeBinomial.with_mean(10.0, -0.5),
        lambda k, law: np.concatenate([[0.0], _truncated_negative_binomial_pmf(k[1:], -0.5, law.gamma)])),
}


@pytest.mark.skipif(not MODEL_SELECTION_PAGE.exists(), reason="docs/ not next to tests/ (installed package)")
def test_the_model_selection_page_table_of_the_laws_of_k_is_exact():
    """Each row: the per-run μ the calibration gives at ε = 0.1, δ = 1e-8 (what the page quotes), and P[K = 1],
    P[every λ of 3 tried] = Σ_k P[K = k]·(1 − 3(2/3)^k + 3(1/3)^k − 1{k = 0}) (inclusion–exclusion over the λ
    never drawn) and P[K > 30] from the pmf written out, to the digits printed."""
    table = re.findall(r"^\| (.+?) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|$",
                       MODEL_SELECTION_PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert [row[0] for row in table] == list(LAW_ROWS)
    k = np.arange(0, 20_000)
    for label, *printed in table:
        law, pmf = LAW_ROWS[label]
        p = pmf(k, law)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        all_tried = np.sum(p * (1 - 3 * (2 / 3) ** k + 3 * (1 / 3) ** k - (k == 0)))
        exact = (ht.calibrate_base_mu(law, 0.1, 1e-8), p[1], all_tried, p[31:].sum())
        for value, text in zip(exact, printed):
            assert abs(value - float(text)) <= 0.5 * 10.0 ** -len(text.split(".")[1]) + 1e-12, (label, text, value)
