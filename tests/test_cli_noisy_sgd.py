"""``dpconvex account noisy-sgd`` and ``train --method noisy_sgd|auto``: thin CLI over accounting.noisy_sgd."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from certified import assert_certified
from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_sgd as acc
from dpconvex.accounting import ye_shokri as ys
from dpconvex.cli.main import main

REFERENCE = ["--n", "48842", "--batch-size", "256", "--epochs", "5", "--step-size", "0.5", "--lipschitz", "1",
             "--smoothness", "0.251", "--strong-convexity", "0.001"]


def run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr()


def _event(batching, sigma):
    return acc.NoisySGDEvent(n=48842, batch_size=256, batching=batching, epochs=5, step_size=0.5, sigma=sigma,
                             sensitivity=2.0, strong_convexity=1e-3, smoothness=0.251)


@pytest.mark.parametrize("batching", acc.BATCHINGS)
def test_account_prints_epsilon_bound_and_composition(capsys, batching):
    code, out = run(capsys, "account", "noisy-sgd", *REFERENCE, "--batching", batching, "--sigma", "10.3",
                    "--delta", "1e-8", "--json")
    assert code == 0
    payload = json.loads(out.out)
    event = _event(batching, 10.3)
    assert payload["epsilon"] == pytest.approx(acc.account(event, 1e-8).epsilon)
    assert payload["bound"] == acc.account(event, 1e-8).bound
    assert payload["composition_epsilon"] == pytest.approx(acc.composition_epsilon(event, 1e-8))
    assert payload["steps"] == 5 * 191 and payload["noise_multiplier"] == 10.3
    if batching != "poisson":
        assert payload["bound"] == "bok-cgd" and payload["composition_epsilon"] > payload["epsilon"]


def test_account_order_prints_the_rdp_of_the_gdp_bound(capsys):
    code, out = run(capsys, "account", "noisy-sgd", *REFERENCE, "--batching", "shuffled", "--sigma", "10.3",
                    "--order", "8", "--json")
    payload = json.loads(out.out)
    mu = acc.gdp_mu(_event("shuffled", 10.3), "bok-cgd")
    assert payload["rdp"] == pytest.approx(8 * mu**2 / 2) and payload["bound"] == "bok-cgd"
    assert payload["composition_rdp"] == pytest.approx(8 * (5**0.5 * 2 / 10.3) ** 2 / 2)


def test_account_calibrates_sigma_without_overshooting(capsys):
    code, out = run(capsys, "account", "noisy-sgd", *REFERENCE, "--batching", "cyclic", "--target-epsilon", "1",
                    "--delta", "1e-8", "--json")
    payload = json.loads(out.out)
    assert payload["epsilon"] <= 1.0
    # bok-cgd is GDP: σ* = μ(σ = 1)/μ(ε, δ) in closed form.
    expected = acc.gdp_mu(_event("cyclic", 1.0), "bok-cgd") / gdp.gdp_mu(1.0, 1e-8)
    assert_certified(payload["sigma"], expected, rel=1e-9)  # the margin inside the target: at most 1 + 1e-5 more


@pytest.mark.parametrize("batching", acc.BATCHINGS)
def test_shuffled_runs_report_ye_shokri_beside_the_certificate_never_in_it(capsys, batching):
    code, out = run(capsys, "account", "noisy-sgd", *REFERENCE, "--batching", batching, "--sigma", "10.3",
                    "--delta", "1e-8", "--json")
    payload, event = json.loads(out.out), _event(batching, 10.3)
    assert code == 0 and "ye-shokri" not in payload["candidates"]
    assert payload["epsilon"] == acc.account(event, 1e-8).epsilon
    if batching != "shuffled":
        assert "comparison" not in payload
        return
    comparison = payload["comparison"]
    assert comparison["ye_shokri_epsilon"] == ys.ye_shokri_epsilon(event, 1e-8).epsilon
    assert comparison["ye_shokri_epsilon_improved_conversion"] < comparison["ye_shokri_epsilon"]
    assert comparison["note"].startswith("not a certificate")


def test_ye_shokri_comparison_at_an_order_and_when_its_conditions_fail(capsys):
    code, out = run(capsys, "account", "noisy-sgd", *REFERENCE, "--batching", "shuffled", "--sigma", "10.3",
                    "--order", "8", "--json")
    assert json.loads(out.out)["comparison"]["ye_shokri_rdp"] == ys.event_rdp(_event("shuffled", 10.3), [8.0])[0]
    merely_convex = [arg if arg != "0.001" else "0" for arg in REFERENCE]
    code, out = run(capsys, "account", "noisy-sgd", *merely_convex, "--batching", "shuffled", "--sigma", "10.3",
                    "--delta", "1e-8", "--json")
    comparison = json.loads(out.out)["comparison"]
    assert code == 0 and comparison["ye_shokri_epsilon"] is None
    assert comparison["not_applicable"] == [ys.unmet_conditions(dataclasses.replace(
        _event("shuffled", 10.3), strong_convexity=0.0))[0]]


@pytest.mark.parametrize("extra, message", [
    (["--batching", "shuffled", "--bound", "ye-shokri", "--delta", "1e-8"], "not implemented: Ye & Shokri"),
    (["--batching", "poisson", "--order", "8"], "--order needs a GDP bound"),
    (["--batching", "poisson", "--bound", "bok-cgd", "--delta", "1e-8"], "does not apply"),
    (["--batching", "cyclic", "--order", "1", "--bound", "bok-cgd"], "--order must be > 1"),
])
def test_account_refuses_with_the_reason(capsys, extra, message):
    code, out = run(capsys, "account", "noisy-sgd", *REFERENCE, "--sigma", "10.3", *extra)
    assert code == 2 and message in out.err


@pytest.mark.skipif(not Path(__file__).parents[2].joinpath("shared/data/adult").exists(),
                    reason="needs ../shared/data/adult")
@pytest.mark.parametrize("method", ["noisy_sgd", "auto"])
def test_train_with_the_new_methods(capsys, method):
    code, out = run(capsys, "train", "--method", method, "--epsilon", "0.5", "--seed", "0", "--json")
    payload = json.loads(out.out)
    assert code == 0 and payload["certificate"]["epsilon"] <= 0.5
    if method == "auto":
        assert any("method='auto' (epsilon=0.5, delta=1e-08) chose noisy_sgd" in note
                   for note in payload["certificate"]["notes"])


@pytest.mark.skipif(not Path(__file__).parents[2].joinpath("shared/data/adult").exists(),
                    reason="needs ../shared/data/adult")
def test_train_epochs_reach_the_trainer_and_a_mismatch_is_refused(capsys):
    """--epochs sets noisy_sgd's passes (its certificate counts epochs · n / batch steps); on a method that does
    not read it, the estimator's own error names the methods that do."""
    code, out = run(capsys, "train", "--method", "noisy_sgd", "--epochs", "2", "--epsilon", "0.5", "--seed", "0",
                    "--json")
    one = json.loads(out.out)["certificate"]
    code_one, out = run(capsys, "train", "--method", "noisy_sgd", "--epochs", "1", "--epsilon", "0.5", "--seed", "0",
                        "--json")
    assert code == code_one == 0
    assert one["iterations"] == 2 * json.loads(out.out)["certificate"]["iterations"]
    code, out = run(capsys, "train", "--method", "noisy_gd", "--epochs", "2")
    assert code == 2 and "'epochs' parameter applies to method in" in out.err and "not 'noisy_gd'" in out.err
