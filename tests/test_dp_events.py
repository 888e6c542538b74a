"""dp_events: the curve each certificate really certifies, and the dp-accounting event that reproduces it.

Tolerances (every certified ε is the computed one rounded up by ROUNDING_MARGIN = 1e-5, relative):

* GDP: μ = gdp_mu(ε_cert, δ) is exact to 1e-12, and dp-accounting's PLD is a pessimistic
  discretisation of the same Gaussian pair, so its ε lies in [ε_cert·(1 − 1e-9), ε_cert + Δ] with Δ
  its discretisation interval (connect-the-dots moves ε by at most one interval for one Gaussian).
* Poisson: both ε are pessimistic PLDs of the same replace-one pair, ours on the certificate's grid
  Δ_cert (and with the round-off allowance), dp-accounting's on Δ = 1e-4; either may overstate the
  true ε by about one interval, so dp-accounting's ε ≥ ε_cert − (ROUNDING_MARGIN·ε_cert + Δ_cert + Δ)
  and ≤ ε_cert + Δ.
* zCDP: on our order grid the RDP accountant converts α·ρ exactly as the certificate did, and ρ is
  the largest ρ converting to ≤ ε_cert: its ε lies in [ε_cert/(1 + ROUNDING_MARGIN), ε_cert].
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import numpy as np
import pytest

from dpconvex.accounting import gdp, langevin
from dpconvex.accounting import noisy_sgd_bounds as nb
from dpconvex.accounting.rdp import DEFAULT_ORDERS
from dpconvex.accounting.rounding import ROUNDING_MARGIN
from dpconvex.mechanisms import noisy_gd, noisy_sgd
from dpconvex.objectives.losses import LogisticLoss
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve, to_dp_event

REPLACE, ADD_REMOVE = dpa.NeighboringRelation.REPLACE_ONE, dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
PLD_INTERVAL = 1e-4
DELTA = 1e-6


def _data(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, np.where(rng.random(n) < 0.5, -1.0, 1.0)


@pytest.fixture(scope="module")
def certificates():
    X, y = _data()
    common = dict(loss=LogisticLoss(), delta=DELTA, random_state=0)
    return {
        "gdp": noisy_gd(X, y, l2_regularization=0.05, epsilon=0.7, **common).certificate,
        "zcdp": noisy_gd(X, y, l2_regularization=0.0, sigma=2.0, iterations=20, step_size=1.0, bound="composition",
                         **common).certificate,
        "poisson": noisy_sgd(X, y, l2_regularization=0.05, epsilon=1.0, batching="poisson", output="last",
                             **common).certificate,
        "shuffled": noisy_sgd(X, y, l2_regularization=0.05, epsilon=1.0, batching="shuffled", **common).certificate,
    }


def _pld_epsilon(event, relation=REPLACE):
    accountant = dpa.pld.PLDAccountant(relation, value_discretization_interval=PLD_INTERVAL)
    accountant.compose(event)
    return accountant.get_epsilon(DELTA)


def test_gdp_certificates_give_the_mu_that_reproduces_them(certificates):
    for name in ("gdp", "shuffled"):
        cert = certificates[name]
        curve = certificate_curve(cert)
        assert curve.kind == "gdp" and cert.conversion == "exact-gdp"
        # the exact δ(ε) at μ reproduces the certified pair (Cor. 2.13)
        assert gdp.gdp_delta(cert.epsilon, curve.mu) <= DELTA
        # and its ε search (to a factor 1 + gdp.RTOL) lands on the certified ε, less at most the rounding margin
        eps = gdp.gdp_epsilon(DELTA, curve.mu)
        assert cert.epsilon / (1 + 2 * ROUNDING_MARGIN) <= eps <= cert.epsilon * (1 + gdp.RTOL)


def test_zcdp_certificate_rho_is_at_least_the_closed_form(certificates):
    cert = certificates["zcdp"]
    a = cert.assumptions
    # Chourasia et al. App. E: ε(α) = α S_g² η K / (4 n² σ²), evaluated at α = 1
    closed = float(langevin.composition_rdp([2.0], a["n"], a["gradient_sensitivity"], cert.sigma, a["step_size"],
                                            cert.iterations)[0]) / 2.0
    rho = certificate_curve(cert).rho
    assert closed <= rho <= closed * (1 + 1e-4)


def test_poisson_certificate_records_every_quantity_of_its_event(certificates):
    cert = certificates["poisson"]
    a = cert.assumptions
    curve = certificate_curve(cert)
    assert curve.kind == "poisson" and cert.conversion == nb.PLD_ROUTE
    assert curve.rate == a["batch_size"] / a["n"]
    assert curve.noise_multiplier == cert.sigma / (a["gradient_sensitivity"] / 2)
    assert curve.steps == a["epochs"] * math.ceil(a["n"] / a["batch_size"]) == cert.iterations


def test_gdp_event_under_either_relation_reproduces_the_certificate(certificates):
    cert = certificates["gdp"]
    assert to_dp_event(cert) == dpa.GaussianDpEvent(2.0 / certificate_curve(cert).mu)
    for relation in (REPLACE, ADD_REMOVE):
        eps = _pld_epsilon(to_dp_event(cert, relation), relation)
        assert cert.epsilon * (1 - 1e-9) <= eps <= cert.epsilon + PLD_INTERVAL
    rdp = dpa.rdp.RdpAccountant(DEFAULT_ORDERS.tolist(), ADD_REMOVE)
    rdp.compose(to_dp_event(cert, ADD_REMOVE))
    assert rdp.get_epsilon(DELTA) >= cert.epsilon * (1 - 1e-9)  # an RDP conversion is never below the exact GDP ε


def test_poisson_event_matches_the_certificate_within_the_discretisations(certificates):
    cert = certificates["poisson"]
    curve = certificate_curve(cert)
    eps = _pld_epsilon(to_dp_event(cert))
    interval = nb._discretization_for(curve.rate, curve.noise_multiplier, curve.steps, DELTA)
    assert eps >= cert.epsilon - (ROUNDING_MARGIN * cert.epsilon + interval + PLD_INTERVAL)
    assert eps <= cert.epsilon + PLD_INTERVAL
    with pytest.raises(ValueError, match="REPLACE_ONE"):
        to_dp_event(cert, ADD_REMOVE)


def test_zcdp_event_in_the_rdp_accountant(certificates):
    cert = certificates["zcdp"]
    event = to_dp_event(cert)
    assert isinstance(event, dpa.ZCDpEvent)
    rdp = dpa.rdp.RdpAccountant(DEFAULT_ORDERS.tolist(), REPLACE)
    rdp.compose(event)
    assert cert.epsilon / (1 + ROUNDING_MARGIN) * (1 - 1e-12) <= rdp.get_epsilon(DELTA) <= cert.epsilon


def test_composed_events_never_claim_more_than_the_certificates_allow(certificates):
    """GDP + Poisson composed by dp-accounting's PLD is at least the larger certificate (composition adds loss)."""
    gdp_cert, poisson_cert = certificates["gdp"], certificates["poisson"]
    eps = _pld_epsilon(dpa.ComposedDpEvent([to_dp_event(gdp_cert), to_dp_event(poisson_cert)]))
    assert eps >= max(gdp_cert.epsilon, poisson_cert.epsilon) * (1 - ROUNDING_MARGIN) - 2 * PLD_INTERVAL


def test_pair_only_certificates_have_no_event():
    cert = PrivacyCertificate(mechanism="pnsgd", epsilon=1.0, delta=1e-6, bound="hockey-stick", theorem="t",
                              conditions=(), assumptions={}, order=None, conversion="exact E_γ (Thm 1)", sigma=1.0,
                              iterations=1)
    assert certificate_curve(cert) == PrivacyCurve.pair(1.0, 1e-6)
    with pytest.raises(ValueError, match="pair only"):
        to_dp_event(cert)


def test_void_and_combined_certificates_are_pairs(certificates):
    void = certificates["gdp"].without_guarantee("test")
    assert certificate_curve(void).kind == "pair" and math.isinf(certificate_curve(void).epsilon)
    combined = PrivacyCertificate.from_dict({**certificates["gdp"].to_dict(),
                                             "assumptions": {"intercept_epsilon": 0.1}})
    assert certificate_curve(combined).kind == "pair"


def test_poisson_certificate_missing_an_assumption_names_it(certificates):
    record = certificates["poisson"].to_dict()
    del record["assumptions"]["batch_size"]
    with pytest.raises(ValueError, match="batch_size"):
        certificate_curve(PrivacyCertificate.from_dict(record))
