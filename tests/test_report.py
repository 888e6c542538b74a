"""The privacy report page (dpconvex.privacy.report, ``certificate.to_html()``, ``dpconvex report``).

Curves are checked against independent computations: the GDP trade-off G_μ against the envelope of
the (ε(δ), δ) trade-offs of its own ε(δ) curve (Dong, Roth, Su 2019, arXiv:1905.02383, Prop. 2.12
and Cor. 2.13: G_μ is that envelope, so the envelope on a finite δ grid lies below G_μ and close to
it), a Poisson certificate's drawn ε at its own δ against the certificate, and a pair's trade-off
against its closed form.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy.stats import norm

from dpconvex.cli.main import main
from dpconvex.mechanisms import auto, noisy_gd, pnsgd
from dpconvex.objectives.losses import LogisticLoss
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve
from dpconvex.privacy.ledger import PrivacyLedger
from dpconvex.privacy.report import certificate_page, epsilon_curve, ledger_page, tradeoff_curve


@pytest.fixture(scope="module")
def certificates() -> dict[str, PrivacyCertificate]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    common = {"loss": LogisticLoss(), "epsilon": 1.0, "delta": 1e-6, "random_state": 0}
    return {"gdp": noisy_gd(X, y, l2_regularization=0.01, **common).certificate,
            "poisson": auto(X, y, **common).certificate,
            "pair": pnsgd(X, y, l2_regularization=0.01, **common).certificate}


def test_each_certificate_has_the_curve_kind_the_report_draws(certificates):
    assert {name: certificate_curve(c).kind for name, c in certificates.items()} == {
        "gdp": "gdp", "poisson": "poisson", "pair": "pair"}


def test_the_gdp_tradeoff_is_the_envelope_of_its_epsilon_delta_curve():
    """Generic envelope on 400 δ values ≤ G_μ (valid) and within 0.01 of it (the grid is fine enough)."""
    mu = 0.8
    alphas = np.linspace(0.0, 1.0, 201)
    exact = tradeoff_curve(PrivacyCurve.gdp(mu), alphas)
    assert exact == pytest.approx(norm.cdf(norm.ppf(1 - alphas) - mu))
    deltas = np.logspace(-12, math.log10(0.5), 400)
    envelope = np.zeros_like(alphas)
    for delta, eps in zip(deltas, epsilon_curve(PrivacyCurve.gdp(mu), deltas)):
        envelope = np.maximum(envelope, np.maximum.reduce([np.zeros_like(alphas), 1 - delta - math.exp(eps) * alphas,
                                                           math.exp(-eps) * (1 - delta - alphas)]))
    assert np.all(envelope <= exact + 1e-9)
    assert np.max(exact - envelope) < 0.01


def test_a_pair_draws_its_closed_form():
    """(ε, δ): ε(δ') = ε for δ' ≥ δ and nothing below; β(α) = max(0, 1 − δ − e^ε α, e^(−ε)(1 − δ − α))."""
    curve = PrivacyCurve.pair(1.0, 1e-6)
    assert list(epsilon_curve(curve, [1e-7, 1e-6, 1e-3])) == [math.inf, 1.0, 1.0]
    alphas = np.linspace(0, 1, 11)
    closed = np.maximum.reduce([np.zeros(11), 1 - 1e-6 - math.e * alphas, (1 - 1e-6 - alphas) / math.e])
    assert tradeoff_curve(curve, alphas) == pytest.approx(closed)


def test_the_drawn_poisson_curve_meets_the_certificate_at_its_delta(certificates):
    """The drawing's PLD (interval 1e-3) is pessimistic and coarser than the certificate's: at the certified δ
    it is at least ε minus the certificate's rounding margin and within 2 % above it."""
    certificate = certificates["poisson"]
    drawn = epsilon_curve(certificate_curve(certificate), [certificate.delta])[0]
    assert certificate.epsilon * (1 - 1e-4) <= drawn <= certificate.epsilon * 1.02


def test_the_page_states_the_guarantee_theorem_conditions_and_draws_two_figures(certificates):
    for certificate in certificates.values():
        page = certificate.to_html()
        assert page == certificate_page(certificate)
        assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
        assert len(re.findall(r'<polyline class="curve"', page)) >= 2
        assert certificate.theorem.split("(")[0].strip()[:20].replace("&", "&amp;") in page
        assert "replace-one neighbours" in page
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
        assert "<script" not in page


def test_the_gdp_page_gives_the_composition_baseline(certificates):
    certificate = certificates["gdp"]
    assert certificate.composition_epsilon > certificate.epsilon
    assert f"ε = {certificate.composition_epsilon:.4g}" in certificate.to_html()


def test_a_void_certificate_says_why(certificates):
    void = certificates["gdp"].without_guarantee("the label set was read from the data")
    page = void.to_html()
    assert "no differential-privacy guarantee" in page and "<svg" not in page


def test_the_ledger_page_gives_the_total_and_every_release(certificates):
    ledger = PrivacyLedger(budget=(5.0, 1e-5))
    for name, certificate in certificates.items():
        ledger.record(certificate, name)
    page = ledger_page(ledger)
    assert ledger.to_html() == page
    total = ledger.total(1e-5)
    assert f"({total.epsilon:.4g}, {total.delta:.3g})" in page and total.method in page
    assert page.count("<h2>Release ") == 3 and page.count("<svg") == 6


def test_the_command_writes_a_page_for_a_certificate_a_ledger_and_refuses_other_json(certificates, tmp_path, capsys):
    cert_file = tmp_path / "certificate.json"
    cert_file.write_text(certificates["gdp"].to_json())
    assert main(["report", str(cert_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["page"] == str(tmp_path / "certificate.html") and (tmp_path / "certificate.html").exists()
    ledger = PrivacyLedger()
    ledger.record(certificates["gdp"], "first")
    ledger.to_json(tmp_path / "ledger.json")
    assert main(["report", str(tmp_path / "ledger.json"), "--out", str(tmp_path / "l.html")]) == 0
    assert "Privacy ledger" in (tmp_path / "l.html").read_text()
    (tmp_path / "other.json").write_text("[1, 2]")
    assert main(["report", str(tmp_path / "other.json")]) == 2
    assert "FILE must hold" in capsys.readouterr().err
