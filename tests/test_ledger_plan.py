"""The ledger's filter runs before the fit touches the data, on the curve the plan will certify.

* For every method of the registry, :func:`planned_curve` of the plan's event equals the curve of the
  certificate ``train`` returns (the filter checks exactly what is recorded).
* A refused fit never calls the trainer (nor the private mean, nor a CV's candidates), leaves no fitted
  attribute and the ledger's releases as they were.
* A void fit (a bound read from the data) is refused whatever the filter; the private-mean intercept is
  checked at its target ε, which covers its certificate.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from dpconvex.estimators import PrivateLADRegressor, PrivateLogisticRegression, PrivateRidge
from dpconvex.estimators import base as estimator_base
from dpconvex.estimators.model_selection import PrivateLogisticRegressionCV, PrivateRidgeCV
from dpconvex.estimators.selection_runs import CandidateRuns
from dpconvex.exceptions import BudgetExceededError, PrivacyLeakWarning
from dpconvex.mechanisms import REGISTRY
from dpconvex.mechanisms.auto import AutoPlan
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Unconstrained
from dpconvex.objectives.losses import LogisticLoss
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve
from dpconvex.privacy.ledger import PrivacyLedger, covers, planned_curve


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(X[:, 0] + 0.3 * rng.normal(size=120) > 0, 1.0, -1.0)


@pytest.mark.parametrize("method", list(REGISTRY))
def test_the_planned_curve_is_the_trained_certificates_curve(method, data):
    X, y = data
    spec = REGISTRY[method]
    problem = Problem.from_arrays(X, y, loss=LogisticLoss(), l2_regularization=0.01, epsilon=0.8, delta=1e-6,
                                  constraint="auto" if spec.bounded_domain else Unconstrained(),
                                  require_smooth=spec.requires_smooth)
    plan = spec.plan(problem)
    inner = plan.plan if isinstance(plan, AutoPlan) else plan
    planned = planned_curve(inner.event, 1e-6, bound=getattr(inner, "bound", None), target_epsilon=0.8)
    certificate = spec.train(problem, plan, 0).certificate
    assert planned == certificate_curve(certificate)
    assert covers(planned, certificate)


@pytest.mark.parametrize("kind, options", [("noisy_sgd batching", {"batching": "shuffled"}),
                                           ("noisy_gd bound", {"bound": "composition", "iterations": 30})])
def test_the_planned_curve_follows_the_options(kind, options, data):
    """A shuffled run (GDP) and noisy GD by composition (zCDP) read their curve from the same account."""
    X, y = data
    spec = REGISTRY[kind.split()[0]]
    constraint = "auto" if spec.bounded_domain else Unconstrained()
    problem = Problem.from_arrays(X, y, loss=LogisticLoss(), l2_regularization=0.01, epsilon=0.8, delta=1e-6,
                                  constraint=constraint)
    plan = spec.plan(problem, **options)
    planned = planned_curve(plan.event, 1e-6, bound=plan.bound)
    assert planned == certificate_curve(spec.train(problem, plan, 0).certificate)
    assert planned.kind in ("gdp", "zcdp")


def test_the_private_mean_is_checked_at_its_target_which_covers_the_certificate(data):
    X, y = data
    ledger = PrivacyLedger(budget=(10.0, 1e-4))
    for method in ("noisy_gd", "noisy_sgd", "auto"):
        model = PrivateRidge(epsilon=0.5, delta=1e-6, method=method, ledger=ledger, random_state=0).fit(X, X[:, 0])
        assert covers(PrivacyCurve.pair(0.5, 1e-6), model.privacy_report_)
    assert len(ledger.releases) == 3


def _boom(*args, **kwargs):
    raise AssertionError("the refused fit reached the data")


def _spent(method, ledger, data, **extra):
    return PrivateLogisticRegression(epsilon=0.6, delta=1e-6, classes=[-1, 1], method=method, l2_regularization=0.01,
                                     ledger=ledger, random_state=0, **extra).fit(*data)


@pytest.mark.parametrize("method", ["noisy_gd", "noisy_sgd", "auto", "outpert_gd"])
def test_a_refused_fit_never_calls_the_trainer(method, data, monkeypatch):
    ledger = PrivacyLedger(budget=(0.7, 1e-5))
    _spent(method, ledger, data)
    before = ledger.to_dict()
    monkeypatch.setitem(REGISTRY, method, dataclasses.replace(REGISTRY[method], train=_boom))
    refused = PrivateLogisticRegression(epsilon=0.6, delta=1e-6, classes=[-1, 1], method=method,
                                        l2_regularization=0.01, ledger=ledger, random_state=1)
    with pytest.raises(BudgetExceededError):
        refused.fit(*data)
    with pytest.raises(NotFittedError):
        check_is_fitted(refused)
    assert not [name for name in vars(refused) if name.endswith("_")]
    assert ledger.to_dict() == before


def test_a_refused_refit_forgets_the_previous_fit(data):
    ledger = PrivacyLedger(budget=(0.7, 1e-5))
    model = _spent("noisy_gd", ledger, data)
    with pytest.raises(BudgetExceededError):
        model.fit(*data)
    assert not hasattr(model, "coef_") and not hasattr(model, "classes_") and len(ledger.releases) == 1


def test_a_refused_private_mean_fit_never_computes_the_mean(data, monkeypatch):
    ledger = PrivacyLedger(budget=(1.0, 1e-5))
    model = PrivateRidge(epsilon=0.6, delta=1e-6, ledger=ledger, random_state=0).fit(data[0], data[0][:, 0])
    monkeypatch.setattr(estimator_base, "private_mean", _boom)
    with pytest.raises(BudgetExceededError):
        PrivateRidge(epsilon=0.6, delta=1e-6, ledger=ledger, random_state=0).fit(data[0], data[0][:, 0])
    assert len(ledger.releases) == 1
    with pytest.raises(BudgetExceededError):  # the refused refit forgets every fitted attribute, private ones too
        model.fit(data[0], data[0][:, 0])
    assert not [name for name in vars(model) if name.endswith("_")]
    with pytest.raises(NotFittedError):
        model.predict(data[0])


@pytest.mark.parametrize("filter_", ["auto", "gdp", "renyi", "basic"])
def test_a_void_fit_is_refused_whatever_the_filter(filter_, data, monkeypatch):
    ledger = PrivacyLedger(budget=(100.0, 1e-3), filter=filter_)
    monkeypatch.setitem(REGISTRY, "noisy_gd", dataclasses.replace(REGISTRY["noisy_gd"], train=_boom))
    for void in ({"classes": None}, {"data_norm": "from_data"}):
        params = {"epsilon": 0.5, "delta": 1e-6, "classes": [-1, 1], "method": "noisy_gd", "l2_regularization": 0.01,
                  "ledger": ledger, **void}
        with pytest.raises(BudgetExceededError, match="no differential-privacy guarantee"):
            PrivateLogisticRegression(**params).fit(*data)
    assert ledger.releases == () and ledger.filter == filter_  # the filter is not fixed by a refused void fit
    without_budget = PrivacyLedger()
    monkeypatch.undo()
    with pytest.warns(PrivacyLeakWarning):  # no budget: the void release is made, and recorded
        PrivateLogisticRegression(epsilon=0.5, delta=1e-6, method="noisy_gd", l2_regularization=0.01,
                                  ledger=without_budget).fit(*data)
    assert math.isinf(without_budget.releases[0].certificate.epsilon)


def test_a_nonsmooth_fit_is_checked_before_it_runs(data, monkeypatch):
    X, y = data
    ledger = PrivacyLedger(budget=(1.0, 1e-5))
    PrivateLADRegressor(epsilon=0.6, delta=1e-6, ledger=ledger, random_state=0).fit(X, X[:, 0])
    monkeypatch.setitem(REGISTRY, "auto", dataclasses.replace(REGISTRY["auto"], train=_boom))
    with pytest.raises(BudgetExceededError):
        PrivateLADRegressor(epsilon=0.6, delta=1e-6, ledger=ledger).fit(X, X[:, 0])


# ----------------------------------------------------------------------------- the CV estimators
def _cv(ledger, **extra):
    return PrivateLogisticRegressionCV(epsilon=0.5, delta=1e-6, classes=[-1, 1], expected_runs=2.0,
                                       runs_distribution="geometric", iterations=5, ledger=ledger, random_state=0,
                                       **extra)


def test_a_cv_fit_records_its_selection_once_and_its_planned_curve(data):
    ledger = PrivacyLedger(budget=(2.0, 1e-5))
    model = _cv(ledger).fit(*data)
    assert [r.label for r in ledger.releases] == ["PrivateLogisticRegressionCV fit 1"]
    assert ledger.releases[0].certificate == model.privacy_report_
    assert certificate_curve(model.privacy_report_).kind == "pair"
    assert model.get_params()["ledger"] is ledger  # fit changes no hyperparameter


def test_a_refused_cv_fit_trains_no_candidate(data, monkeypatch):
    ledger = PrivacyLedger(budget=(0.8, 1e-5))
    _cv(ledger).fit(*data)
    monkeypatch.setattr(CandidateRuns, "fit", _boom)
    refused = _cv(ledger)
    with pytest.raises(BudgetExceededError):
        refused.fit(*data)
    assert not [name for name in vars(refused) if name.endswith("_")] and len(ledger.releases) == 1


def test_cv_partitions_and_a_ridge_cv(data):
    X, _ = data
    ledger = PrivacyLedger(budget=(0.6, 1e-5))
    for part in ("a", "b"):
        PrivateRidgeCV(epsilon=0.5, delta=1e-6, expected_runs=2.0, runs_distribution="geometric", iterations=5,
                       ledger=ledger, ledger_partition=part, random_state=0).fit(X, X[:, 0])
    assert [r.partition for r in ledger.releases] == ["a", "b"]
    assert ledger.total(1e-5).method.startswith("parallel[")


def test_ledger_partition_needs_a_ledger(data):
    with pytest.raises(ValueError, match="ledger_partition"):
        PrivateLogisticRegression(classes=[-1, 1], ledger_partition="a").fit(*data)
    with pytest.raises(ValueError, match="ledger_partition"):
        PrivateLogisticRegression(classes=[-1, 1], ledger=PrivacyLedger(), ledger_partition=3).fit(*data)
