"""The ``dpconvex`` command, run in-process through ``dpconvex.cli.main.main`` (one test runs the script)."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpconvex.accounting import noisy_gd as accountant
from dpconvex.cli.choices import DEFAULT_EPSILON
from dpconvex.cli.main import main
from dpconvex.datasets.holdout import HELD_OUT_NOTE
from dpconvex.exceptions import DataDependentPreprocessingWarning
from dpconvex.privacy.certificate import NO_GUARANTEE

# Chourasia et al. 2021, Figure 1 caption: n, S_g, λ, β, η, σ, K.
N, SENSITIVITY, LAMBDA, BETA, ETA, SIGMA, K = 5000, 4.0, 1.0, 4.0, 0.02, 0.02, 300


def _langevin(step_size: str = "0.02", sigma: str | None = "0.02") -> list[str]:
    argv = ["account", "langevin", "--n", str(N), "--sensitivity", "4", "--strong-convexity", "1",
            "--smoothness", "4", "--step-size", step_size, "--iterations", "300"]
    return argv + (["--sigma", sigma] if sigma is not None else [])


RUN = _langevin()
# The CLI's default --initialization is "stationary" (the start Corollary 1 needs).
EVENT = accountant.NoisyGDEvent(
    n=N, sensitivity=SENSITIVITY, step_size=ETA, sigma=SIGMA, iterations=K,
    strong_convexity=LAMBDA, smoothness=BETA, initialization="stationary",
)


def _run_json(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def _run_error(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.startswith("dpconvex: error: ")
    return err


# ----------------------------------------------------------------------------- account langevin
def test_account_order_prints_the_best_rdp(capsys):
    payload = _run_json(capsys, RUN + ["--order", "10", "--json"])
    assert {"rdp", "bound"} <= set(payload)
    rdp, winner = accountant.best_rdp(EVENT, [10.0])
    assert payload["rdp"] == pytest.approx(float(rdp[0]), rel=1e-12)
    assert payload["bound"] == str(winner[0])
    assert payload["order"] == 10.0


def test_account_corollary1_matches_the_figure1_closed_form(capsys):
    payload = _run_json(capsys, RUN + ["--order", "10", "--bound", "corollary1", "--json"])
    assert payload["bound"] == "corollary1"
    alpha = 10.0
    closed_form = alpha * SENSITIVITY**2 / (LAMBDA * SIGMA**2 * N**2) * (1.0 - math.exp(-LAMBDA * ETA * K / 2.0))
    assert payload["rdp"] == pytest.approx(closed_form, rel=1e-10)
    # and the best-of value is never above a single applicable bound
    best = _run_json(capsys, RUN + ["--order", "10", "--json"])
    assert best["rdp"] <= payload["rdp"]


def test_account_delta_prints_epsilon_delta_and_bound(capsys):
    best = _run_json(capsys, RUN + ["--delta", "1e-5", "--json"])
    assert {"epsilon", "delta", "bound"} <= set(best)
    assert best["delta"] == 1e-5
    assert 0 < best["epsilon"] < math.inf
    assert best["bound"] in best["candidates"]
    assert best["epsilon"] == pytest.approx(min(best["candidates"].values()), rel=1e-12)
    assert best["epsilon"] == pytest.approx(accountant.account(EVENT, 1e-5).epsilon, rel=1e-12)

    composition = _run_json(capsys, RUN + ["--delta", "1e-5", "--bound", "composition", "--json"])
    assert composition["bound"] == "composition"
    assert composition["epsilon"] >= best["epsilon"]


def test_account_target_epsilon_calibrates_sigma(capsys):
    payload = _run_json(capsys, _langevin(sigma=None) + ["--delta", "1e-6", "--target-epsilon", "1", "--json"])
    sigma = payload["sigma"]
    assert sigma > 0
    assert payload["epsilon"] <= 1.0
    assert payload["delta"] == 1e-6
    # independently re-accounted: meets the target, and a slightly smaller sigma does not (tight)
    assert accountant.account(dataclasses.replace(EVENT, sigma=sigma), 1e-6).epsilon <= 1.0
    assert accountant.account(dataclasses.replace(EVENT, sigma=sigma / 1.001), 1e-6).epsilon > 1.0


@pytest.mark.parametrize(
    "argv, needles",
    [
        pytest.param(
            _langevin(step_size="0.3") + ["--bound", "corollary1", "--order", "10"],
            ["corollary1", "step_size < 1/smoothness (= 0.25)"], id="corollary1-conditions-fail",
        ),
        pytest.param(
            _langevin(step_size="0.3") + ["--bound", "corollary1", "--delta", "1e-5"],
            ["corollary1", "step_size < 1/smoothness (= 0.25)"], id="corollary1-conditions-fail-delta",
        ),
        pytest.param(RUN + ["--order", "1"], ["--order must be > 1"], id="order-1"),
        pytest.param(_langevin(sigma=None) + ["--order", "10"], ["--sigma"], id="missing-sigma"),
        pytest.param(
            _langevin(sigma=None) + ["--order", "10", "--target-epsilon", "1"],
            ["--target-epsilon needs --delta"], id="target-epsilon-without-delta",
        ),
    ],
)
def test_account_errors_exit_2_with_a_message(capsys, argv, needles):
    err = _run_error(capsys, argv)
    for needle in needles:
        assert needle in err


def test_account_argument_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(_langevin(sigma="-1") + ["--order", "10"])
    assert info.value.code == 2
    assert "must be a finite number > 0" in capsys.readouterr().err


def _console_script() -> str | None:
    beside_python = Path(sys.executable).parent / ("dpconvex.exe" if os.name == "nt" else "dpconvex")
    return str(beside_python) if beside_python.exists() else shutil.which("dpconvex")


def test_console_script_account_langevin(capsys):
    script = _console_script()
    if script is None:
        pytest.skip("the dpconvex console script is not installed")
    done = subprocess.run([script, *RUN, "--order", "10", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == _run_json(capsys, RUN + ["--order", "10", "--json"])
    # the script passes main()'s exit status through
    failed = subprocess.run([script, *RUN, "--order", "1"], capture_output=True, text=True, timeout=120)
    assert failed.returncode == 2
    assert "--order must be > 1" in failed.stderr


# ----------------------------------------------------------------------------- train
ROWS = 300


def _write_csv(path: Path) -> Path:
    rng = np.random.default_rng(0)
    colours = rng.choice(["red", "green", "blue"], ROWS)
    age = rng.integers(18, 80, ROWS)
    income = rng.uniform(0.0, 100.0, ROWS)
    score = (age - 50) / 30 + (income - 50) / 50 + 0.8 * (colours == "red") - 0.3 + rng.normal(0, 0.3, ROWS)
    labels = np.where(score > 0, "yes", "no")
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["colour", "age", "income", "label"])
        writer.writerows(zip(colours, age, np.round(income, 3), labels))
    return path


def _write_schema(path: Path) -> Path:
    schema = {
        "target": "label",
        "positive_label": "yes",
        "categorical": {"colour": ["blue", "green", "red"]},
        "numerical": {"age": [0, 100], "income": [0, 100]},
    }
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def _voided(notes) -> bool:
    return any(note.startswith(NO_GUARANTEE) for note in notes)


def _check_train_payload(payload, epsilon_bound=DEFAULT_EPSILON):  # the default --epsilon
    assert {"test_accuracy", "certificate"} <= set(payload)
    assert 0.0 <= payload["test_accuracy"] <= 1.0
    assert payload["n_train"] + payload["n_test"] == ROWS
    assert payload["n_test"] == pytest.approx(0.2 * ROWS, abs=1)
    certificate = payload["certificate"]
    assert certificate["epsilon"] == payload["epsilon"]
    assert certificate["delta"] == payload["delta"] == 1e-8
    assert certificate["theorem"]
    assert HELD_OUT_NOTE.format(score="test_accuracy") in certificate["notes"]
    if epsilon_bound is not None:
        assert payload["epsilon"] <= epsilon_bound
    return certificate


def test_train_csv_without_schema_reports_no_guarantee(tmp_path, capsys):
    """Bounds and categories read from the file: epsilon = inf ("inf" in JSON), with the reason."""
    data = _write_csv(tmp_path / "data.csv")
    with pytest.warns(DataDependentPreprocessingWarning):
        payload = _run_json(capsys, ["train", "--csv", str(data), "--target", "label", "--schema-from-data", "--json",
                                             "--seed", "0"])
    certificate = _check_train_payload(payload, epsilon_bound=None)
    assert payload["epsilon"] == certificate["epsilon"] == certificate["composition_epsilon"] == "inf"
    assert set(certificate["candidates"].values()) == {"inf"}
    assert _voided(certificate["notes"])
    assert any("positive label" in note for note in certificate["notes"])  # --positive was not given
    assert payload["dataset"] == str(data)


@pytest.mark.filterwarnings("error::dpconvex.exceptions.DataDependentPreprocessingWarning")
@pytest.mark.parametrize("with_target", [False, True], ids=["schema-only", "schema-and-target"])
def test_train_csv_with_schema_keeps_the_guarantee(tmp_path, capsys, with_target):
    data = _write_csv(tmp_path / "data.csv")
    schema = _write_schema(tmp_path / "schema.json")
    argv = ["train", "--csv", str(data), "--schema", str(schema), "--json", "--seed", "0"]
    payload = _run_json(capsys, argv + (["--target", "label"] if with_target else []))
    certificate = _check_train_payload(payload)
    assert not _voided(certificate["notes"])
    assert not any("label set" in note for note in certificate["notes"])  # train declares classes=[-1, 1]


def test_train_csv_errors_exit_2(tmp_path, capsys):
    data = _write_csv(tmp_path / "data.csv")
    assert "target" in _run_error(capsys, ["train", "--csv", str(data), "--json"])
    schema = _write_schema(tmp_path / "schema.json")
    err = _run_error(capsys, ["train", "--csv", str(data), "--schema", str(schema), "--target", "colour"])
    assert "target" in err


def test_train_adult_default(capsys):
    payload = _run_json(capsys, ["train", "--json", "--seed", "0"])
    majority_rate = 0.7638  # of adult.test
    assert payload["test_accuracy"] > 0.77 > majority_rate
    assert payload["epsilon"] <= DEFAULT_EPSILON == 1.0  # the estimators' default
    assert payload["delta"] == 1e-8
    assert payload["theorem"].strip()
    assert payload["certificate"]["epsilon"] == payload["epsilon"]
    assert not _voided(payload["certificate"]["notes"])


# ----------------------------------------------------------------------------- reproduce
def test_reproduce_langevin_writes_figures(tmp_path, capsys):
    out = tmp_path / "figures"
    payload = _run_json(capsys, ["reproduce", "langevin", "--out", str(out)])
    for name in ("figure1", "figure2"):
        png, table = out / f"{name}.png", out / f"{name}.csv"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        with open(table, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert len(rows) > 1 and all(len(row) == len(rows[0]) for row in rows)
        assert {str(png), str(table)} <= {str(Path(p)) for p in payload.values()}


@pytest.mark.slow
def test_audit_prints_json_with_lower_bound_certificate_and_law_check(capsys):
    assert main(["audit", "noisy-gd", "--runs", "200", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)
    assert result["mechanism"] == "noisy-gd" and result["runs"] == 200
    assert result["passed"] and result["audit_epsilon_lower"] <= result["certified_epsilon"]
    assert result["law_check"]["passed"]


@pytest.mark.slow
def test_audit_table_lists_every_registered_mechanism(capsys):
    from dpconvex.audit import AUDITS

    assert main(["audit", "all", "--runs", "40"]) == 0
    out = capsys.readouterr().out
    assert "audit_eps_lower" in out and "certified_eps" in out
    assert all(name in out for name in AUDITS)


def test_soundness_command_prints_the_per_mechanism_table(capsys):
    # A tiny budget: the command's plumbing, not the search (tests/test_soundness.py checks that).
    assert main(["soundness", "--methods", "noisy_gd", "outpert_gd", "--samples", "2", "--polish", "2",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result["summary"]) == {"noisy_gd", "outpert_gd"} and result["offenders"] == []
    assert all(row["largest_ratio"] <= 1.0 + 1e-9 for row in result["summary"].values())
