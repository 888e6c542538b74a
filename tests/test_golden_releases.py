"""Golden releases: 100 seeded configurations release the recorded parameters and certificates, bit for bit.

The configurations (``tests/golden/golden_configurations.py``: every public trainer, estimator,
private selection estimator and accountant) are re-run with their fixed ``random_state`` and compared
with ``tests/golden/releases.json``: exactly (every ``float.hex()`` string equal) when the numpy,
scipy and scikit-learn versions and the machine type are those the file was written with, otherwise
floats to a relative 1e-9 and strings exactly.  A refactor must pass unchanged; regenerate the file
(``python tests/golden/generate_golden.py``) only for a change meant to change releases.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from golden.golden_configurations import (
    CONFIGURATION_COUNT,
    golden_configuration_ids,
    golden_configurations,
)
from golden.golden_records import (
    GOLDEN_FILE,
    REGENERATE_COMMAND,
    GoldenConfiguration,
    failure_message,
    golden_record,
    record_differences,
    same_environment,
)

CONFIGURATIONS = golden_configurations()


@pytest.fixture(scope="module")
def golden_file() -> dict[str, Any]:
    """The recorded golden file: its environment and every configuration's record."""
    if not GOLDEN_FILE.exists():
        pytest.fail(f"{GOLDEN_FILE} is missing; write it with `{REGENERATE_COMMAND}`.")
    return json.loads(GOLDEN_FILE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("configuration", CONFIGURATIONS, ids=[configuration.id for configuration in CONFIGURATIONS])
def test_release_and_certificate_match_golden_record(configuration: GoldenConfiguration,
                                                     golden_file: dict[str, Any]) -> None:
    recorded = golden_file["configurations"].get(configuration.id)
    assert recorded is not None, (f"configuration {configuration.id!r} has no golden record; if it was added on "
                                  f"purpose, regenerate the golden file with `{REGENERATE_COMMAND}`.")
    exact = same_environment(golden_file["environment"])
    differences = record_differences(recorded, golden_record(configuration), exact=exact)
    assert not differences, failure_message(configuration.id, differences, exact=exact,
                                            recorded_environment=golden_file["environment"])


def test_golden_file_holds_exactly_the_configurations(golden_file: dict[str, Any]) -> None:
    recorded = list(golden_file["configurations"])
    expected = golden_configuration_ids()
    assert len(recorded) == CONFIGURATION_COUNT == len(expected), (
        f"the golden file holds {len(recorded)} configurations and the builders {len(expected)}; both must hold "
        f"{CONFIGURATION_COUNT}.")
    assert recorded == expected, (
        f"the golden file's configuration ids differ from the builders' ids: only recorded "
        f"{sorted(set(recorded) - set(expected))}, only built {sorted(set(expected) - set(recorded))} (or the "
        f"order changed). A configuration must not silently disappear; regenerate with `{REGENERATE_COMMAND}` only "
        "when the change to the configurations is meant.")


def test_golden_file_records_its_environment(golden_file: dict[str, Any]) -> None:
    assert set(golden_file["environment"]) == {"numpy", "scipy", "sklearn", "machine"}
