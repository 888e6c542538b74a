"""Estimators and ``dpconvex train`` against a privacy ledger: record every accepted fit, refuse before release.

The GDP filter's count is a closed form: releases of μ each fit while k·μ² ≤ μ_B² (Smith and Thakurta
2022, arXiv:2210.17520), μ_B = gdp_mu(ε_B, δ_B) and μ the releases' own GDP μ.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpconvex.accounting import gdp
from dpconvex.cli.main import main
from dpconvex.estimators import PrivateLogisticRegression
from dpconvex.exceptions import BudgetExceededError
from dpconvex.privacy.dp_events import certificate_curve
from dpconvex.privacy.ledger import PrivacyLedger


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(X[:, 0] + 0.2 * rng.normal(size=400) > 0, 1, -1)


def _fit(ledger, data, seed):
    return PrivateLogisticRegression(epsilon=0.5, delta=1e-6, classes=[-1, 1], method="noisy_gd",
                                     l2_regularization=0.01, ledger=ledger, random_state=seed).fit(*data)


def test_the_gdp_filter_accepts_exactly_the_closed_form_count_then_refuses_before_release(data):
    ledger = PrivacyLedger(budget=(1.5, 1e-5))
    first = _fit(ledger, data, 0)
    mu = certificate_curve(first.privacy_report_).mu
    allowed = math.floor((gdp.gdp_mu(1.5, 1e-5) / mu) ** 2)
    assert allowed >= 2
    for seed in range(1, allowed):
        _fit(ledger, data, seed)
    assert len(ledger.releases) == allowed
    refused = PrivateLogisticRegression(epsilon=0.5, delta=1e-6, classes=[-1, 1], method="noisy_gd",
                                        l2_regularization=0.01, ledger=ledger, random_state=99)
    with pytest.raises(BudgetExceededError):
        refused.fit(*data)
    assert not hasattr(refused, "coef_") and not hasattr(refused, "privacy_report_")
    assert len(ledger.releases) == allowed
    assert [r.label for r in ledger.releases][:2] == ["PrivateLogisticRegression fit 1",
                                                      "PrivateLogisticRegression fit 2"]


def test_a_ledger_changes_nothing_in_the_release(data):
    """The same seed with and without a ledger: the same coefficients and certificate."""
    with_ledger, without = _fit(PrivacyLedger(), data, 7), _fit(None, data, 7)
    assert np.array_equal(with_ledger.coef_, without.coef_)
    assert with_ledger.privacy_report_ == without.privacy_report_


def test_a_ledger_must_be_a_privacy_ledger(data):
    with pytest.raises(ValueError, match="ledger"):
        PrivateLogisticRegression(classes=[-1, 1], ledger={"budget": 1}).fit(*data)


def test_the_command_records_in_a_ledger_file_and_refuses_past_its_budget(tmp_path, capsys):
    ledger = tmp_path / "ledger.json"
    common = ["train", "--epsilon", "1", "--seed", "0", "--ledger", str(ledger), "--json"]
    assert main([*common, "--budget", "1.5", "1e-5"]) == 0
    assert json.loads(capsys.readouterr().out)["ledger_releases"] == 1
    assert len(PrivacyLedger.from_json(ledger).releases) == 1
    assert main(common) == 2  # a second release at epsilon 1 exceeds 1.5 (basic filter: Poisson runs)
    assert "budget" in capsys.readouterr().err.lower()
    assert len(PrivacyLedger.from_json(ledger).releases) == 1
    assert main([*common, "--budget", "2", "1e-5"]) == 2  # the budget of an existing ledger is fixed
