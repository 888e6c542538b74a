"""``dpconvex account sco`` and ``reproduce sco``: thin CLI over accounting.private_sco and dpconvex_lab.sco_risk."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from certified import assert_certified
from dpconvex.accounting import private_sco
from dpconvex.accounting.rounding import round_up
from dpconvex.cli.main import main
from dpconvex_lab.sco_risk import population_excess_risk, reproduce_sco, theorem6_risk_bound


def run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr()


def test_account_sco_prints_both_certificates(capsys):
    code, out = run(capsys, "account", "sco", "--n", "2000", "--lipschitz", "0.5", "--sigma", "3",
                    "--delta", "1e-6", "--json")
    assert code == 0
    payload = json.loads(out.out)
    event = private_sco.SCOEvent(2000, 1.0, 3.0, 4000)
    assert payload["epsilon_paper"] == pytest.approx(private_sco.paper_epsilon(event, 1e-6))
    assert payload["epsilon_dp_accounting"] == pytest.approx(private_sco.dp_accounting_epsilon(event, 1e-6))
    # the certificate: the single-use bound, rounded up by the margin
    assert payload["epsilon"] == round_up(private_sco.single_use_epsilon(event, 1e-6))
    assert_certified(payload["epsilon"], private_sco.single_use_epsilon(event, 1e-6), rel=1e-12)  # round_up's last ulp
    assert payload["bound"] == "single-use" and "reported only" in payload["note"]
    assert payload["steps"] == 4000 and payload["sensitivity"] == 1.0


@pytest.mark.parametrize("argv, name", [
    (["--n", "1", "--lipschitz", "1", "--sigma", "1", "--delta", "1e-6"], "n must be an integer >= 2"),
    (["--n", "100", "--lipschitz", "1", "--sigma", "1", "--delta", "2"], "delta"),
    (["--n", "100", "--lipschitz", "-1", "--sigma", "1", "--delta", "1e-6"], "--lipschitz"),
])
def test_account_sco_bad_input_exits_2_naming_the_parameter(capsys, argv, name):
    try:
        code = main(["account", "sco", *argv])
    except SystemExit as stop:  # argparse's own type checks
        code = stop.code
    assert code == 2 and name in capsys.readouterr().err


def test_reproduce_sco_writes_png_and_csv_with_exact_risks(tmp_path):
    paths, finding = reproduce_sco(tmp_path, sizes=(200, 3200), repeats=2, dimension=3)
    assert paths["png"].stat().st_size > 1000
    rows = list(csv.DictReader(paths["csv"].open()))
    assert {r["n"] for r in rows} == {"200", "3200"} and len(rows) == 4
    for r in rows:
        assert float(r["epsilon"]) <= 1.0 + 1e-9 and float(r["excess_risk"]) >= -1e-12
        assert float(r["theorem6_bound"]) == pytest.approx(float(theorem6_risk_bound(int(r["n"]), 1.0, 1e-6, 3)),
                                                           rel=1e-5)
    small = np.mean([float(r["excess_risk"]) for r in rows if r["n"] == "200"])
    large = np.mean([float(r["excess_risk"]) for r in rows if r["n"] == "3200"])
    assert large < small and "falls from" in finding


def test_population_risk_is_exact_at_known_points():
    """F(w*) − F* = 0 at w* = e₁; at w = 0, F = 1 so the excess is a = 0.5 (hinge of margin 0)."""
    assert population_excess_risk(np.array([1.0, 0.0, 0.0]), dimension=3) == pytest.approx(0.0, abs=1e-15)
    assert population_excess_risk(np.zeros(3), dimension=3) == pytest.approx(0.5)
    # w = (0, 1, 0): margin ±b/√2 with equal odds: mean of max(0, 1 ∓ b/√2) = 1 (both terms positive)
    assert population_excess_risk(np.array([0.0, 1.0, 0.0]), dimension=3) == pytest.approx(0.5)
    assert math.isfinite(float(theorem6_risk_bound(100, 1.0, 1e-6, 3)))
