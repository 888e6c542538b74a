"""``dpconvex train --csv FILE --target COL`` without a schema: discovered privately, one finite certificate.

The certificate's composition is checked independently in tests/test_private_release.py; here the
command's wiring: the defaults, the options, the saved schema and the ledger.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpconvex.accounting.gdp import gdp_delta, gdp_mu
from dpconvex.cli.main import main
from dpconvex.datasets.private_release import DEFAULT_DISCOVERY_SHARE, DISCOVERY_CONDITION, split_release_budget
from dpconvex.datasets.schema import TabularSchema
from dpconvex.privacy.certificate import NO_GUARANTEE
from dpconvex.privacy.ledger import PrivacyLedger

ROWS = 5000


def _write_table(path, task: str = "binary", seed: int = 0):
    """A CSV file as users have them: numbers, a text category, a few ``NA`` cells, a label column."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, ROWS)
    hours = rng.uniform(1, 80, ROWS).round(1)
    colour = rng.choice(["red", "green", "blue"], ROWS, p=[0.5, 0.3, 0.2])
    score = (age - 50) / 20 + (colour == "red") - 0.5 + rng.normal(0, 0.5, ROWS)
    if task == "binary":
        label = np.where(score > 0, "yes", "no")
    elif task == "multiclass":
        label = np.select([score < -0.5, score < 0.7], ["low", "mid"], "high")
    else:
        label = (10 * score + 40).round(2)
    frame = pd.DataFrame({"age": age, "hours": np.where(rng.random(ROWS) < 0.03, "NA", hours.astype(str)),
                          "colour": colour, "label": label})
    frame.to_csv(path, index=False)
    return path


def _run(capsys, argv) -> dict:
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def _error(capsys, argv) -> str:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.startswith("dpconvex: error: ")
    return err


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return _write_table(tmp_path_factory.mktemp("bare") / "table.csv")


def test_a_bare_csv_gets_a_finite_certificate_within_the_budget(table, capsys):
    payload = _run(capsys, ["train", "--csv", str(table), "--target", "label", "--seed", "0"])
    certificate = payload["certificate"]
    assert math.isfinite(payload["epsilon"]) and payload["epsilon"] <= 1.0 and payload["delta"] == 1e-8
    assert DISCOVERY_CONDITION in certificate["conditions"]
    assert not any(note.startswith(NO_GUARANTEE) for note in certificate["notes"])
    assert "discovery_mu" in certificate["assumptions"] and "training_certificate" in certificate["details"]
    majority = max(np.mean(pd.read_csv(table)["label"] == "yes"), np.mean(pd.read_csv(table)["label"] == "no"))
    assert payload["test_accuracy"] > majority + 0.05  # the label is ~85 % predictable from age and colour


@pytest.mark.parametrize("share", ["0.1", "0.5"])
def test_the_share_is_an_option_and_the_budget_holds(table, capsys, share):
    payload = _run(capsys, ["train", "--csv", str(table), "--target", "label", "--discovery-share", share,
                            "--epsilon", "0.5", "--seed", "1"])
    assert payload["epsilon"] <= 0.5
    training = payload["certificate"]["details"]["training_certificate"]
    assert training["epsilon"] < payload["epsilon"]  # the training ran at its share only
    # the discovery's μ² is the share of the whole budget's (ε, δ − share·δ) GDP μ² (independent recomputation)
    mu_whole = gdp_mu(0.5, 1e-8 * (1 - float(share)))
    assert payload["certificate"]["assumptions"]["discovery_mu"] ** 2 == pytest.approx(float(share) * mu_whole**2)


def test_a_saved_schema_is_declared_in_a_later_run(table, tmp_path, capsys):
    saved = tmp_path / "schema.json"
    _run(capsys, ["train", "--csv", str(table), "--target", "label", "--seed", "0", "--save-schema", str(saved)])
    schema = TabularSchema.from_json(saved)
    assert schema.provenance.startswith("discovered privately") and not schema.data_dependent
    assert set(schema.numerical) == {"age", "hours"} and schema.categorical["colour"] == ("blue", "green", "red")
    again = _run(capsys, ["train", "--csv", str(table), "--schema", str(saved), "--seed", "0"])
    assert again["epsilon"] <= 1.0 and DISCOVERY_CONDITION not in again["certificate"]["conditions"]
    assert f"the schema was {schema.provenance}" in again["certificate"]["notes"]


def test_schema_from_data_keeps_the_old_void_path(table, capsys):
    with pytest.warns(Warning):
        payload = _run(capsys, ["train", "--csv", str(table), "--target", "label", "--schema-from-data"])
    assert payload["epsilon"] == "inf"


@pytest.mark.parametrize("extra, message", [
    (["--schema-from-data", "--schema", "s.json"], "give one of them"),
    (["--schema", "s.json", "--discovery-share", "0.2"], "--discovery-share applies"),
    (["--schema-from-data", "--discovery-share", "0.2"], "--discovery-share applies"),
    (["--schema", "s.json", "--save-schema", "out.json"], "--save-schema"),
], ids=["from-data-and-schema", "share-with-schema", "share-with-from-data", "save-with-schema"])
def test_options_that_do_not_combine_are_refused(table, capsys, extra, message):
    assert message in _error(capsys, ["train", "--csv", str(table), "--target", "label", *extra])


@pytest.mark.parametrize("share", ["0", "1", "1.5", "nan"])
def test_a_share_outside_the_open_unit_interval_is_refused_with_its_range(table, capsys, share):
    with pytest.raises(SystemExit) as stop:
        main(["train", "--csv", str(table), "--target", "label", "--discovery-share", share])
    assert stop.value.code == 2 and "--discovery-share: must be a number in (0, 1)" in capsys.readouterr().err


def test_discovery_needs_a_target_and_a_writable_schema_path(table, tmp_path, capsys):
    assert "--target" in _error(capsys, ["train", "--csv", str(table)])
    err = _error(capsys, ["train", "--csv", str(table), "--target", "label", "--save-schema", str(table)])
    assert "--save-schema" in err and "--csv file" in err
    missing = tmp_path / "nowhere" / "schema.json"
    assert "does not exist" in _error(capsys, ["train", "--csv", str(table), "--target", "label",
                                               "--save-schema", str(missing)])


def test_the_ledger_records_the_composed_release_once_and_refuses_before_reading(table, tmp_path, capsys):
    ledger_file = tmp_path / "ledger.json"
    argv = ["train", "--csv", str(table), "--target", "label", "--epsilon", "0.6", "--seed", "0",
            "--ledger", str(ledger_file), "--budget", "1.0", "1e-6"]
    payload = _run(capsys, argv)
    ledger = PrivacyLedger.from_json(ledger_file)
    assert len(ledger.releases) == 1 and ledger.releases[0].certificate.epsilon == payload["epsilon"]
    assert "schema discovered" in ledger.releases[0].label
    # a second ε = 0.6 release would pass the budget: refused before the (missing) file is read
    err = _error(capsys, ["train", "--csv", str(tmp_path / "missing.csv"), "--target", "label", "--epsilon", "0.6",
                          "--ledger", str(ledger_file)])
    assert "budget" in err and "missing.csv" not in err
    assert len(PrivacyLedger.from_json(ledger_file).releases) == 1


def test_a_bare_multi_class_csv(tmp_path, capsys):
    data = _write_table(tmp_path / "three.csv", task="multiclass", seed=2)
    payload = _run(capsys, ["train", "--csv", str(data), "--target", "label", "--seed", "0"])
    assert payload["epsilon"] <= 1.0 and DISCOVERY_CONDITION in payload["certificate"]["conditions"]
    counts = pd.read_csv(data)["label"].value_counts(normalize=True)
    assert payload["test_accuracy"] > counts.max()


def test_a_bare_regression_csv(tmp_path, capsys):
    data = _write_table(tmp_path / "numbers.csv", task="regression", seed=3)
    payload = _run(capsys, ["train", "--csv", str(data), "--target", "label", "--model", "ridge", "--seed", "0",
                            "--epsilon", "2"])
    assert payload["epsilon"] <= 2.0 and DISCOVERY_CONDITION in payload["certificate"]["conditions"]
    assert payload["test_r2"] > 0.0  # better than the mean: the target is linear in age and colour


def test_a_model_trained_on_a_discovered_schema_predicts_on_the_raw_file(table, tmp_path, capsys):
    model = tmp_path / "model.json"
    _run(capsys, ["train", "--csv", str(table), "--target", "label", "--seed", "0", "--out", str(model)])
    predictions = _run(capsys, ["predict", "--model", str(model), "--csv", str(table)])  # "NA" cells read as missing
    assert len(predictions) == ROWS and set(predictions) == {-1, 1}  # binary: -1 / +1 (the positive label)


def test_a_withheld_label_or_target_value_is_trained_record_by_record_and_never_named(tmp_path, capsys):
    """A label too rare to be released (three records) and a non-numeric regression target: refusing them or
    naming them would reveal what the discovery withheld; each record is changed on its own, counted only."""
    frame = pd.read_csv(_write_table(tmp_path / "three.csv", task="multiclass", seed=4))
    frame.loc[:2, "label"] = "SECRET_alice"
    frame.to_csv(tmp_path / "rare.csv", index=False)
    with pytest.warns(Warning) as caught:
        payload = _run(capsys, ["train", "--csv", str(tmp_path / "rare.csv"), "--target", "label", "--seed", "0"])
    assert payload["epsilon"] <= 1.0
    numbers = pd.read_csv(_write_table(tmp_path / "numbers.csv", task="regression", seed=5))
    numbers["label"] = numbers["label"].astype(str)
    numbers.loc[0, "label"] = "bob_salary_secret"
    numbers.to_csv(tmp_path / "text_target.csv", index=False)
    with pytest.warns(Warning) as more:
        payload = _run(capsys, ["train", "--csv", str(tmp_path / "text_target.csv"), "--target", "label",
                                "--model", "ridge", "--seed", "0", "--epsilon", "2"])
    assert payload["epsilon"] <= 2.0
    printed = capsys.readouterr().err + " ".join(str(w.message) for w in [*caught, *more])
    assert "SECRET" not in printed and "bob_salary" not in printed


def test_a_release_stopped_after_the_discovery_records_what_it_spent(tmp_path, capsys):
    """200 rows at ε = 0.1: the label selection finds fewer than two labels, an error after the discovery
    read the records; the ledger records the discovery's pair (μ_d-GDP plus δ_sel read at δ), and a missing
    file (nothing read) records nothing."""
    small = pd.read_csv(_write_table(tmp_path / "all.csv")).head(200)
    small.to_csv(tmp_path / "small.csv", index=False)
    ledger_file = tmp_path / "ledger.json"
    argv = ["train", "--target", "label", "--epsilon", "0.1", "--ledger", str(ledger_file)]
    assert "label" in _error(capsys, [*argv, "--csv", str(tmp_path / "small.csv")])
    releases = PrivacyLedger.from_json(ledger_file).releases
    budget = split_release_budget(0.1, 1e-8, DEFAULT_DISCOVERY_SHARE)
    spent = releases[0].certificate
    assert len(releases) == 1 and spent.delta == 1e-8 and spent.epsilon < 0.1
    assert float(gdp_delta(spent.epsilon, budget.discovery_mu)) + budget.discovery_delta <= 1e-8 * (1 + 1e-6)
    _error(capsys, [*argv, "--csv", str(tmp_path / "missing.csv")])
    assert len(PrivacyLedger.from_json(ledger_file).releases) == 1


def test_a_release_stopped_after_its_intercept_records_the_intercept_too(tmp_path, capsys, monkeypatch):
    """PNSGD's first fit always needs a second (its pair uses all of δ); with one fit allowed the release stops
    after the private-mean intercept was drawn, and the ledger records ε₁ beside the discovery."""
    from dpconvex.estimators import discovered_fit
    from dpconvex.privacy.dp_events import certificate_parts

    monkeypatch.setattr(discovered_fit, "MAX_FITS", 1)
    data, ledger_file = _write_table(tmp_path / "numbers.csv", task="regression", seed=3), tmp_path / "ledger.json"
    status = main(["train", "--csv", str(data), "--target", "label", "--model", "ridge", "--method", "pnsgd",
                   "--epsilon", "2", "--delta", "1e-6", "--seed", "0", "--ledger", str(ledger_file)])
    err = capsys.readouterr().err  # after pnsgd's note
    assert status == 2 and "dpconvex: error: 1 fits composed" in err
    assert "private-mean intercept drawn spent epsilon" in err
    (record,) = PrivacyLedger.from_json(ledger_file).releases
    assert "training stopped" in record.label and record.certificate.bound.startswith("private mean + ")
    intercept, discovery = certificate_parts(record.certificate)
    assert intercept.epsilon > 0 and intercept.delta == 0.0 and discovery.delta == pytest.approx(1e-6)
