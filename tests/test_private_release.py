"""A release whose schema is discovered privately: the budget split, the composed certificate, the fit within it.

Expected numbers are independent computations: the GDP curve δ_μ(ε) of Dong, Roth, Su 2019
(arXiv:1905.02383, Cor. 2.13, :func:`dpconvex.accounting.gdp.gdp_delta`, itself checked against
quadrature in tests/test_gdp.py) and its composition √(μ₁² + μ₂²) (Cor. 3.3), recomputed here from the
certificates' numbers rather than read from the function under test.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from dpconvex import PrivateLinearSVC, PrivateLogisticRegression, PrivateRidge
from dpconvex.accounting.gdp import gdp_delta, gdp_mu
from dpconvex.accounting.rounding import ROUNDING_MARGIN
from dpconvex.cli.choices import DEFAULT_DISCOVERY_SHARE as CLI_SHARE
from dpconvex.datasets.private_release import (
    DEFAULT_DISCOVERY_SHARE,
    DISCOVERY_CONDITION,
    compose_discovery,
    discover_for_release,
    discovery_spent_certificate,
    split_release_budget,
)
from dpconvex.datasets.private_schema import DiscoveryRecord
from dpconvex.datasets.schema import TabularSchema
from dpconvex.estimators import base, discovered_fit
from dpconvex.estimators.discovered_fit import fit_with_discovery
from dpconvex.estimators.preprocessing import PublicSchemaTransformer
from dpconvex.exceptions import CalibrationError
from dpconvex.mechanisms.private_mean import MAX_MEAN_SHARE, mean_epsilon
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_parts
from dpconvex.privacy.ledger import PrivacyLedger

EPSILON, DELTA = 2.0, 1e-6


def bare_table(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """A table of text cells as a CSV file gives them: two numerical columns (one with a few ``NA``), a
    categorical one with three common values, a binary label that depends on them."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    hours = rng.uniform(1, 80, n).round(1)
    colour = rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2])
    score = (age - 50) / 20 + (colour == "red") - 0.5 + rng.normal(0, 0.5, n)
    hours_text = np.where(rng.random(n) < 0.03, "NA", hours.astype(str))
    return pd.DataFrame({"age": age.astype(str), "hours": hours_text, "colour": colour,
                         "label": np.where(score > 0, "yes", "no")})


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 5.0), st.floats(1e-10, 1e-3), st.floats(0.01, 0.99))
def test_the_split_composes_to_the_budget(epsilon, delta, share):
    budget = split_release_budget(epsilon, delta, share)
    mu = gdp_mu(epsilon, delta - share * delta)
    assert budget.discovery_delta + budget.training_delta == pytest.approx(delta, rel=1e-12)
    assert budget.discovery_mu ** 2 == pytest.approx(share * mu**2, rel=1e-9)
    # the training's (ε_t, δ') read back as GDP, composed with μ_d, meets (ε, δ) (Cor. 3.3 and 2.13)
    mu_training = gdp_mu(budget.training_epsilon, budget.training_delta)
    total = math.hypot(budget.discovery_mu, mu_training)
    assert float(gdp_delta(epsilon, total)) + budget.discovery_delta <= delta * (1 + 1e-6)


@pytest.mark.parametrize("name, value", [("epsilon", 0.0), ("epsilon", math.inf), ("delta", 0.0), ("delta", 1.0),
                                         ("share", 0.0), ("share", 1.0)])
def test_the_split_refuses_bad_budgets(name, value):
    arguments = {"epsilon": 1.0, "delta": 1e-6, "share": 0.3, name: value}
    with pytest.raises(ValueError, match=name):
        split_release_budget(**arguments)


def test_the_cli_default_share_is_the_library_default():
    assert CLI_SHARE == DEFAULT_DISCOVERY_SHARE


@pytest.fixture(scope="module")
def discovered():
    frame = bare_table()
    transformer = PublicSchemaTransformer.discover(frame, "label", epsilon=EPSILON, delta=DELTA, random_state=0)
    y = np.where(frame["label"] == transformer.schema.positive_label, 1, -1)
    return frame, transformer.fit(frame), y


def test_discovery_finds_the_table(discovered):
    frame, transformer, _ = discovered
    schema = transformer.schema
    assert set(schema.numerical) == {"age", "hours"} and schema.categorical == {"colour": ("blue", "green", "red")}
    assert schema.positive_label == "yes" and not schema.data_dependent
    assert schema.provenance.startswith("discovered privately")
    assert transformer.discovery.release.epsilon == EPSILON
    # the NA cells of a numerical column are read as missing: they set its indicator, nothing is refused
    encoded = transformer.transform(frame)
    indicator = list(transformer.get_feature_names_out()).index("hours=<missing>")
    assert np.array_equal(encoded[:, indicator] > 0, (frame["hours"] == "NA").to_numpy())


def test_a_gdp_training_run_composes_to_exactly_the_budget(discovered):
    frame, transformer, y = discovered
    estimator = PrivateLogisticRegression(method="noisy_gd", classes=[-1, 1], random_state=0)
    model, certificate = fit_with_discovery(estimator, transformer.transform(frame), y, transformer.discovery)
    training = model.privacy_report_
    assert certificate.delta == pytest.approx(DELTA, rel=1e-12)
    assert DISCOVERY_CONDITION in certificate.conditions
    assert certificate.details["training_certificate"] == training.to_dict()
    # independent: μ of the training's certified (ε, δ), composed with the discovery's μ
    total = math.hypot(transformer.discovery.mu, gdp_mu(training.epsilon, training.delta))
    assert float(gdp_delta(certificate.epsilon, total)) + transformer.discovery.delta <= DELTA * (1 + 1e-6)
    assert EPSILON * (1 - 1e-3) <= certificate.epsilon <= EPSILON  # tight: the rounding margins only


@pytest.mark.parametrize("estimator", [PrivateLogisticRegression(classes=[-1, 1], random_state=0),
                                       PrivateLogisticRegression(method="outpert_gd", classes=[-1, 1], random_state=0),
                                       PrivateLinearSVC(classes=[-1, 1], random_state=0)],
                         ids=["default-poisson", "pair-curve", "sco-pair"])
def test_any_training_run_stays_within_the_budget(discovered, estimator):
    frame, transformer, y = discovered
    model, certificate = fit_with_discovery(estimator, transformer.transform(frame), y, transformer.discovery)
    assert certificate.epsilon <= EPSILON and certificate.delta == pytest.approx(DELTA, rel=1e-12)
    assert model.privacy_report_.epsilon <= transformer.discovery.release.training_epsilon * (1 + ROUNDING_MARGIN)
    assert estimator.get_params() == clone(estimator).get_params()  # the estimator itself is untouched


def test_transformer_certify_composes_and_void_stays_void(discovered):
    frame, transformer, y = discovered
    release = transformer.discovery.release
    model = PrivateLogisticRegression(method="noisy_gd", classes=[-1, 1], epsilon=release.training_epsilon,
                                      delta=release.training_delta, random_state=0)
    model.fit(transformer.transform(frame), y)
    assert transformer.certify(model.privacy_report_).epsilon <= EPSILON
    void = model.privacy_report_.without_guarantee("a bound read from the data")
    assert math.isinf(compose_discovery(void, transformer.discovery).epsilon)
    assert "discovery" in transformer.get_params() and clone(transformer).discovery == transformer.discovery


def test_fit_with_discovery_refuses_what_it_cannot_certify(discovered):
    frame, transformer, y = discovered
    standalone = DiscoveryRecord(mu=0.1, delta=1e-9)
    with pytest.raises(ValueError, match="no budget split"):
        fit_with_discovery(PrivateLogisticRegression(), transformer.transform(frame), y, standalone)
    with pytest.raises(ValueError, match="ledger"):
        fit_with_discovery(PrivateLogisticRegression(ledger=PrivacyLedger()), transformer.transform(frame), y,
                           transformer.discovery)


def regression_release(n: int = 3000):
    """A bare regression table, its privately discovered schema and record, its encoded features and the
    target mapped onto [-1, 1] by the discovered bounds (as ``dpconvex train`` maps it)."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 10, n)
    frame = pd.DataFrame({"x": x.round(2).astype(str), "y": (3 * x + rng.normal(0, 1, n)).round(2).astype(str)})
    schema, record = discover_for_release(frame, "y", epsilon=EPSILON, delta=DELTA, task="regression",
                                          random_state=0)
    lower, upper = schema.target_bounds
    transformer = PublicSchemaTransformer(schema, discovery=record).fit(frame)
    target = np.clip(frame["y"].astype(float), lower, upper)
    return schema, record, transformer.transform(frame), (target - (upper + lower) / 2) / ((upper - lower) / 2)


def test_a_regression_target_gets_private_bounds():
    schema, record, X, scaled = regression_release()
    lower, upper = schema.target_bounds
    assert lower <= 1.0 and upper >= 28.0  # grid edges rounded outward around the 1 % and 99 % quantiles
    _, certificate = fit_with_discovery(PrivateRidge(random_state=0), X, scaled, record)
    assert certificate.epsilon <= EPSILON


def _refuse(*args, **kwargs):
    raise RuntimeError("the training refused")


@pytest.fixture
def counted_fits(monkeypatch):
    """Every private-mean draw and every fit of the linear models, recorded as they happen."""
    draws, fits = [], []
    draw, fit = base.private_mean, base.PrivateLinearModel._fit_private

    def counted_draw(*args, **kwargs):
        draws.append(draw(*args, **kwargs))
        return draws[-1]

    def counted_fit(self, *args, **kwargs):
        fits.append((self.epsilon, self.delta))
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(base, "private_mean", counted_draw)
    monkeypatch.setattr(base.PrivateLinearModel, "_fit_private", counted_fit)
    return draws, fits


def test_a_refit_keeps_the_released_intercept_and_counts_it_once(counted_fits):
    """PNSGD's bare (ε, δ) pair uses all of the training's δ, so fit_with_discovery fits again.  The decision
    read the first fit's noisy mean (through its plan); the later fits keep that mean (no new draw), the
    released model carries it and the composed certificate counts its ε₁ once."""
    draws, fits = counted_fits
    _, record, X, scaled = regression_release()
    model, certificate = fit_with_discovery(PrivateRidge(method="pnsgd", random_state=0), X, scaled, record)
    assert len(fits) >= 2 and len(draws) == 1
    first = draws[0]
    assert first.epsilon == mean_epsilon(X.shape[0], record.release.training_epsilon)  # the first fit's share
    assert model.intercept_ == first.value and not hasattr(model, "_kept_intercept")  # a later fit draws anew
    assert model.privacy_report_.assumptions["intercept_epsilon"] == first.epsilon
    # the model's own part: the last fit's ε less the kept ε₁ (not less a new share of the smaller ε)
    intercept, model_part = certificate_parts(model.privacy_report_)
    assert intercept.epsilon == first.epsilon
    assert model_part.epsilon <= (fits[-1][0] - first.epsilon) * (1 + ROUNDING_MARGIN) ** 2
    assert certificate.epsilon <= EPSILON


def test_a_release_whose_epsilon_would_not_cover_the_kept_intercept_stops(counted_fits, monkeypatch):
    """A refit with less ε than the kept intercept spent leaves the model nothing: the release stops, and the
    error says what the intercept spent."""
    draws, fits = counted_fits
    _, record, X, scaled = regression_release()
    monkeypatch.setattr(discovered_fit, "_SHRINK", 0.01)  # the third fit would get 1 % of the second's ε
    with pytest.raises(CalibrationError, match="private-mean intercept drawn spent epsilon") as raised:
        fit_with_discovery(PrivateRidge(method="pnsgd", random_state=0), X, scaled, record)
    assert len(fits) == 2 and len(draws) == 1 and raised.value.intercept_epsilon == draws[0].epsilon


def test_a_release_that_gives_up_says_what_its_intercept_spent(counted_fits, monkeypatch):
    draws, _ = counted_fits
    _, record, X, scaled = regression_release()
    monkeypatch.setattr(discovered_fit, "MAX_FITS", 1)  # PNSGD's first fit always needs a second
    with pytest.raises(CalibrationError) as raised:
        fit_with_discovery(PrivateRidge(method="pnsgd", random_state=0), X, scaled, record)
    assert raised.value.intercept_epsilon == draws[0].epsilon > 0
    with pytest.raises(CalibrationError) as raised:
        fit_with_discovery(PrivateRidge(method="pnsgd", fit_intercept=False, random_state=0), X, scaled, record)
    assert raised.value.intercept_epsilon == 0.0 and len(draws) == 1
    # an error inside the first fit (here: the training refuses) counts the largest share the mean may have had
    monkeypatch.setattr(base.PrivateLinearModel, "_fit_private", _refuse)
    with pytest.raises(RuntimeError, match="refused") as raised:
        fit_with_discovery(PrivateRidge(random_state=0), X, scaled, record)
    assert raised.value.intercept_epsilon == MAX_MEAN_SHARE * record.release.training_epsilon
    # the stopped release's record: the discovery's pair plus ε₁ by basic composition
    exact = record.epsilon(DELTA) + draws[0].epsilon  # μ_d-GDP plus δ_sel read at δ, then ε₁ added
    spent = discovery_spent_certificate(record.release, draws[0].epsilon)
    assert exact <= spent.epsilon <= exact * (1 + ROUNDING_MARGIN) * (1 + 1e-12)  # round_up: one margin
    assert spent.delta == DELTA and spent.bound.startswith("private mean + ")
    assert certificate_parts(spent)[0] == PrivacyCurve.pair(draws[0].epsilon, 0.0)  # the ledger sees both parts
    assert "intercept_epsilon" not in discovery_spent_certificate(record.release).assumptions
    with pytest.raises(ValueError, match="intercept_epsilon"):
        discovery_spent_certificate(record.release, -0.1)


def test_provenance_round_trips_and_is_absent_by_default(tmp_path):
    plain = TabularSchema("label", "yes", numerical={"age": (0.0, 100.0)})
    assert "provenance" not in plain.to_dict()
    marked = TabularSchema("label", "yes", numerical={"age": (0.0, 100.0)}, provenance="discovered privately")
    marked.to_json(tmp_path / "schema.json")
    assert TabularSchema.from_json(tmp_path / "schema.json") == marked
    with pytest.raises(ValueError, match="provenance"):
        TabularSchema.from_dict({"target": "label", "positive_label": "yes", "provenance": 3})


def test_discovered_encoding_names_no_withheld_value():
    frame = bare_table()
    frame.loc[0, "colour"] = "ultraviolet"  # one record: never released, never printed
    transformer = PublicSchemaTransformer.discover(frame, "label", epsilon=EPSILON, delta=DELTA,
                                                   random_state=0).fit(frame)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        transformer.transform(frame)
    assert not any("ultraviolet" in str(w.message) for w in caught)
