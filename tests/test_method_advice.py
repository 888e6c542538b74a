"""``METHOD_ADVICE``: the one-line advice ``dpconvex train --method M`` prints on stderr for the methods
that are faithful reproductions rather than accurate trainers.

Runs in-process through ``main`` on a small CSV with a schema (300 rows, a few columns), so it is
fast and does not need the Adult files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from dpconvex import mechanisms
from dpconvex.cli.main import main
from dpconvex.mechanisms import METHOD_ADVICE, METHODS

ROWS = 300
ADVISED = ["pnsgd", "sco_noisy_sgd"]


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory) -> list[str]:
    """``train`` options that read a small CSV with a public schema (the guarantee is kept)."""
    folder = tmp_path_factory.mktemp("advice")
    rng = np.random.default_rng(0)
    age = rng.integers(18, 80, ROWS)
    income = rng.uniform(0.0, 100.0, ROWS)
    labels = np.where((age - 50) / 30 + (income - 50) / 50 + rng.normal(0, 0.3, ROWS) > 0, "yes", "no")
    data = folder / "data.csv"
    with open(data, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["age", "income", "label"])
        writer.writerows(zip(age, np.round(income, 3), labels))
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"target": "label", "positive_label": "yes", "categorical": {},
                                  "numerical": {"age": [0, 100], "income": [0, 100]}}), encoding="utf-8")
    return ["--csv", str(data), "--schema", str(schema)]


def _train(capsys, method: str, data: list[str], *extra: str):
    status = main(["train", "--method", method, *data, "--epsilon", "1", "--seed", "0", *extra])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, err


@pytest.mark.parametrize("method", ADVISED)
def test_train_prints_the_advice_on_stderr_and_keeps_json_stdout(capsys, small_csv, method):
    out, err = _train(capsys, method, small_csv, "--json")
    assert METHOD_ADVICE[method] in err
    assert err.count(METHOD_ADVICE[method]) == 1
    assert METHOD_ADVICE[method] not in out
    payload = json.loads(out)  # stdout is still exactly one JSON document
    assert 0.0 <= payload["test_accuracy"] <= 1.0 and payload["certificate"]["epsilon"] <= 1.0


def test_advice_also_printed_without_json(capsys, small_csv):
    out, err = _train(capsys, "pnsgd", small_csv)
    assert METHOD_ADVICE["pnsgd"] in err and "test accuracy" in out and METHOD_ADVICE["pnsgd"] not in out


@pytest.mark.parametrize("method", ["noisy_sgd", None], ids=["noisy_sgd", "default"])
def test_no_advice_for_other_methods(capsys, small_csv, method):
    status = main(["train", *([] if method is None else ["--method", method]), *small_csv,
                   "--epsilon", "1", "--seed", "0", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    json.loads(out)
    assert not any(advice in err for advice in METHOD_ADVICE.values())


def test_advice_table_shape():
    assert set(ADVISED) <= set(METHOD_ADVICE)
    assert set(METHOD_ADVICE) <= set(METHODS)
    assert "METHOD_ADVICE" in mechanisms.__all__
    for method, advice in METHOD_ADVICE.items():
        assert isinstance(advice, str) and "\n" not in advice and advice.startswith(method)
        assert "method='auto'" in advice and "BENCHMARKS" in advice


@pytest.mark.parametrize("method", ADVISED)
def test_docstrings_say_when_to_use(method):
    function = METHODS[method]
    module = __import__(function.__module__, fromlist=["_"])
    assert "When to use" in function.__doc__
    assert "When to use" in module.__doc__
    for doc in (function.__doc__, module.__doc__):
        assert 'method="auto"' in doc and "76.07" in doc


def test_train_help_mentions_the_advice(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "advice on stderr" in help_text and "pnsgd and sco_noisy_sgd" in help_text


def test_mechanisms_page_repeats_the_advice_verbatim():
    page = Path(__file__).parents[1] / "docs" / "mechanisms.md"
    if not page.exists():
        pytest.skip("docs/mechanisms.md not next to tests/")
    text = page.read_text(encoding="utf-8")
    for advice in METHOD_ADVICE.values():
        assert advice in text
