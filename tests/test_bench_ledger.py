"""The ledger scenario's accountants (dpconvex_lab.bench_ledger): diffprivlib's formulas and the PLD totals.

The scenario itself (twenty fits on Adult, about 90 s) runs in ``dpconvex bench ledger``; here its
pieces are checked against closed forms and against each other on small fits.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpconvex.accounting import gdp
from dpconvex.mechanisms import noisy_gd
from dpconvex.objectives.losses import LogisticLoss
from dpconvex.privacy.dp_events import certificate_curve
from dpconvex.privacy.ledger import PrivacyLedger
from dpconvex_lab.bench_ledger import _pld_epsilon, diffprivlib_total, ledger_section


def test_diffprivlib_basic_composition_sums_epsilon_and_multiplies_the_complements_of_delta():
    total = diffprivlib_total([(0.1, 1e-8)] * 10, 0.0)
    assert total[0] == pytest.approx(1.0) and total[1] == pytest.approx(1 - (1 - 1e-8) ** 10, rel=1e-12)


def test_diffprivlib_advanced_composition_is_the_least_of_its_three_bounds():
    """ε = 0.1 a hundred times, slack 1e-5: DRV = 100 (1 − e^(−0.1)) 0.1/(1 + e^(−0.1)) + √(2·1·ln 1e5), KOV
    with ln(e + √1/1e-5); the naive 10 is larger than both."""
    eps, k, slack = 0.1, 100, 1e-5
    exp_sum = k * (1 - math.exp(-eps)) * eps / (1 + math.exp(-eps))
    drv = exp_sum + math.sqrt(2 * k * eps**2 * math.log(1 / slack))
    kov = exp_sum + math.sqrt(2 * k * eps**2 * math.log(math.e + math.sqrt(k * eps**2) / slack))
    total = diffprivlib_total([(eps, 0.0)] * k, slack)
    assert total[0] == pytest.approx(min(10.0, drv, kov)) and total[0] < 10.0
    assert total[1] == pytest.approx(slack)


@pytest.fixture(scope="module")
def gdp_certificates():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    return [noisy_gd(X, y, loss=LogisticLoss(), epsilon=0.5, delta=1e-6, l2_regularization=0.01,
                     random_state=seed).certificate for seed in range(3)]


def test_dp_accounting_on_the_exported_gdp_events_meets_the_exact_gdp_total(gdp_certificates):
    """Three μ-GDP releases compose to √3 μ (Dong, Roth, Su Cor. 3.3); dp-accounting's PLD of the exported events
    is pessimistic by at most its discretisation (1e-4 per release) and never below the exact value's rounding."""
    mu = certificate_curve(gdp_certificates[0]).mu
    exact = gdp.gdp_epsilon(1e-5, math.sqrt(3) * mu)
    pld = _pld_epsilon(gdp_certificates, 1e-5, events=True)
    assert exact * (1 - 1e-5) <= pld <= exact + 3e-3
    ledger = PrivacyLedger()
    for index, certificate in enumerate(gdp_certificates):
        ledger.record(certificate, str(index))
    assert ledger.total(1e-5).epsilon == pytest.approx(exact, rel=1e-4)


def test_composing_the_pairs_is_never_tighter_than_composing_the_curves(gdp_certificates):
    assert _pld_epsilon(gdp_certificates, 1e-5, events=False) >= _pld_epsilon(gdp_certificates, 1e-5, events=True)


def test_the_section_has_a_row_per_accountant():
    frame = pd.DataFrame([{"scenario": "s", "curve": "gdp", "accountant": name, "total_epsilon": 0.5, "note": "n",
                           "run_date": "2026-11-28"} for name in ("ledger", "diffprivlib basic")])
    lines = ledger_section(frame)
    assert lines[0].startswith("## Ten releases") and sum(line.startswith("| s |") for line in lines) == 2
