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
from dpconvex.estimators import PrivateLogisticRegression, PrivateRidge
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


# ----------------------------------------------------------------------------- partitions and the whole history
def test_two_partitions_through_the_estimators(data):
    """Two disjoint row ranges, declared to the ledger: each has its own budget, the total is their maximum."""
    X, y = data
    parts = {"first half": slice(0, 200), "second half": slice(200, 400)}
    ledger = PrivacyLedger(budget=(0.8, 1e-5))
    for name, rows in parts.items():
        PrivateLogisticRegression(epsilon=0.5, delta=1e-6, classes=[-1, 1], method="noisy_gd", l2_regularization=0.01,
                                  ledger=ledger, ledger_partition=name, random_state=0).fit(X[rows], y[rows])
    assert [r.partition for r in ledger.releases] == list(parts)
    total, one = ledger.total(1e-5), PrivacyLedger()
    one.record(ledger.releases[0].certificate, "alone")
    assert total.method.startswith("parallel[") and total.epsilon == one.total(1e-5).epsilon
    refused = PrivateLogisticRegression(epsilon=0.8, delta=1e-6, classes=[-1, 1], method="noisy_gd",
                                        l2_regularization=0.01, ledger=ledger, ledger_partition="first half")
    with pytest.raises(BudgetExceededError, match="first half"):
        refused.fit(X[:200], y[:200])
    PrivateLogisticRegression(epsilon=0.5, delta=1e-6, classes=[-1, 1], method="noisy_gd", l2_regularization=0.01,
                              ledger=ledger, ledger_partition="third", random_state=0).fit(X[:10], y[:10])
    assert len(ledger.releases) == 3
    with pytest.raises(ValueError, match="partition"):  # a maximum over partitions is no single DpEvent
        ledger.to_dp_event()
    assert len(ledger.to_dp_event(partition="first half").events) == 1


def test_a_saved_model_forgets_its_ledger_and_partition(data, tmp_path):
    from dpconvex.estimators.model_file import load_model, save_model

    model = PrivateLogisticRegression(epsilon=0.5, delta=1e-6, classes=[-1, 1], method="noisy_gd",
                                      l2_regularization=0.01, ledger=PrivacyLedger(), ledger_partition="a").fit(*data)
    saved = save_model(tmp_path / "model.json", model)
    assert saved.params["ledger"] is None and saved.params["ledger_partition"] is None
    assert load_model(tmp_path / "model.json").params == saved.params


#: dp-accounting's PLD accountant at its own value discretisation (the interval of our ``pld`` candidate too).
PLD_INTERVAL = 1e-4


@pytest.mark.parametrize("methods", [("noisy_gd",) * 3, ("noisy_sgd",) * 3, ("noisy_gd", "noisy_sgd", "auto")])
def test_the_whole_history_in_dp_accounting(methods, data):
    """The exported events, composed by dp-accounting's PLD accountant under REPLACE_ONE, give the ledger's total.

    Both are pessimistic PLD compositions of the same curves (GDP: the Gaussian pair of μ; Poisson: the
    subsampled Gaussian the certificate's PLD was built from), each discretised at 1e-4: they can differ by
    at most one interval per release (the convolutions run in different orders).  The ledger's total is its
    smallest candidate rounded up by ROUNDING_MARGIN (relative), and its exact GDP candidate is never above
    the PLD.  So ε_dpa ∈ [ε/(1 + ROUNDING_MARGIN) − kΔ, ε + kΔ]; measured: ε_dpa = ε/(1 + ROUNDING_MARGIN)
    to a relative 1e-7 (the same PLDs, rounded the same way).
    """
    import dp_accounting as dpa

    from dpconvex.accounting.rounding import ROUNDING_MARGIN

    ledger = PrivacyLedger()
    for seed, method in enumerate(methods):
        PrivateLogisticRegression(epsilon=0.5, delta=1e-7, classes=[-1, 1], method=method, l2_regularization=0.01,
                                  ledger=ledger, random_state=seed).fit(*data)
    event = ledger.to_dp_event()
    assert isinstance(event, dpa.ComposedDpEvent) and len(event.events) == len(methods)
    accountant = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                       value_discretization_interval=PLD_INTERVAL)
    accountant.compose(event)
    ours, theirs, slack = ledger.total(1e-5).epsilon, accountant.get_epsilon(1e-5), len(methods) * PLD_INTERVAL
    assert ours / (1 + ROUNDING_MARGIN) - slack <= theirs <= ours + slack
    assert theirs == pytest.approx(ours / (1 + ROUNDING_MARGIN), rel=1e-7)


def test_a_pair_release_has_no_event_and_is_named(data):
    X, _ = data
    ledger = PrivacyLedger()
    PrivateRidge(epsilon=0.5, delta=1e-6, ledger=ledger, random_state=0).fit(X, X[:, 0])  # private mean: a pair
    with pytest.raises(ValueError, match="PrivateRidge fit 1.*pair only"):
        ledger.to_dp_event()
