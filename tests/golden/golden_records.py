"""JSON-ready golden records of releases and certificates, the environment they were made in, and their comparison.

Every float is stored as ``float.hex()`` (exact, and readable back bit for bit); strings, integers,
booleans and ``None`` are kept as they are.  A record is compared exactly when it was made with the
same numpy, scipy and scikit-learn versions on the same machine type as the running ones; otherwise
floats are compared to a relative tolerance of :data:`RELATIVE_TOLERANCE` and strings exactly.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import platform
import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy
import sklearn

from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = [
    "GOLDEN_FILE",
    "REGENERATE_COMMAND",
    "RELATIVE_TOLERANCE",
    "Difference",
    "GoldenConfiguration",
    "environment",
    "failure_message",
    "golden_record",
    "json_ready",
    "record_differences",
    "same_environment",
]

#: The file of recorded releases, next to this module.
GOLDEN_FILE = Path(__file__).with_name("releases.json")
#: How to rewrite :data:`GOLDEN_FILE` (from the repository's root).
REGENERATE_COMMAND = "python tests/golden/generate_golden.py"
#: Relative tolerance on floats when the recorded environment differs from the running one.
RELATIVE_TOLERANCE = 1e-9

#: What ``float.hex()`` writes for a finite float (``inf`` and ``nan`` are written as such and compared exactly).
_HEX_FLOAT = re.compile(r"-?0x[01]\.[0-9a-f]+p[+-]\d+")


@dataclasses.dataclass(frozen=True)
class GoldenConfiguration:
    """One golden configuration.

    Attributes
    ----------
    id : str
        Stable id, ``family/name/variant`` (the pytest id and the key of the golden file).
    run : callable
        ``run()`` → a mapping of field name to the released values (arrays, floats) and certificates
        (or accounts) of one seeded run; :func:`golden_record` makes it JSON-ready.
    """

    id: str
    run: Callable[[], Mapping[str, Any]]


def golden_record(configuration: GoldenConfiguration) -> dict[str, Any]:
    """Run ``configuration`` and return its JSON-ready record (:func:`json_ready`: floats as ``float.hex()``).

    The privacy-leak warnings some configurations raise on purpose (clipped rows, a label set read
    from the data) are silenced: their effect on the certificate is recorded.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return json_ready(dict(configuration.run()))


def environment() -> dict[str, str]:
    """The library versions and machine type a record's exactness depends on.

    Returns
    -------
    dict of str to str
        ``numpy``, ``scipy`` and ``sklearn`` versions and ``platform.machine()``.
    """
    return {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__,
            "machine": platform.machine()}


def same_environment(recorded: Mapping[str, str]) -> bool:
    """Whether ``recorded`` (an :func:`environment` read from the golden file) is the running environment."""
    return dict(recorded) == environment()


def json_ready(value: Any) -> Any:
    """``value`` as a JSON-ready structure whose floats are ``float.hex()`` strings.

    Parameters
    ----------
    value : Any
        A float, integer, boolean, string or ``None``; an ndarray, list or tuple (a list); a mapping
        (its keys as strings); a :class:`~dpconvex.privacy.certificate.PrivacyCertificate` (its ``to_dict()``)
        or another dataclass instance (its fields).

    Returns
    -------
    Any
        The same structure with every float written by ``float.hex()`` and every string kept.

    Raises
    ------
    TypeError
        For a value of any other type (it would not round-trip through JSON exactly).
    """
    if value is None or isinstance(value, (bool, np.bool_, str)):
        return value.item() if isinstance(value, np.bool_) else value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float.hex(float(value))
    if isinstance(value, PrivacyCertificate):
        return json_ready(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_ready({field.name: getattr(value, field.name) for field in dataclasses.fields(value)})
    if isinstance(value, Mapping):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(item) for item in (value.tolist() if isinstance(value, np.ndarray) else value)]
    raise TypeError(f"no golden encoding for a value of type {type(value).__name__}: {value!r}")


@dataclasses.dataclass(frozen=True)
class Difference:
    """One field of a configuration whose recorded (``old``) and re-computed (``new``) values differ."""

    field: str
    old: Any
    new: Any


def _floats_close(old: str, new: str) -> bool:
    """Whether two strings are ``float.hex()`` of floats equal to :data:`RELATIVE_TOLERANCE` (else: exactly equal)."""
    if _HEX_FLOAT.fullmatch(old) and _HEX_FLOAT.fullmatch(new):
        return math.isclose(float.fromhex(old), float.fromhex(new), rel_tol=RELATIVE_TOLERANCE, abs_tol=0.0)
    return old == new


def record_differences(old: Any, new: Any, *, exact: bool, field: str = "") -> list[Difference]:
    """Every field where a recorded record and a re-computed one differ.

    Parameters
    ----------
    old, new : Any
        JSON-ready records (:func:`json_ready`).
    exact : bool
        Compare every value exactly (hex strings equal); otherwise hex floats to a relative
        :data:`RELATIVE_TOLERANCE` and every other string exactly.
    field : str
        The path of ``old`` within its record (dot-separated keys, ``[i]`` for list items).

    Returns
    -------
    list of Difference
        Empty when the records agree; a missing or extra key, or lists of different lengths, is one
        difference at that path.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        if old.keys() != new.keys():
            return [Difference(f"{field} (keys)", sorted(old), sorted(new))]
        return [difference for key in old
                for difference in record_differences(old[key], new[key], exact=exact,
                                                     field=f"{field}.{key}" if field else key)]
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [Difference(f"{field} (length)", len(old), len(new))]
        return [difference for index, (first, second) in enumerate(zip(old, new))
                for difference in record_differences(first, second, exact=exact, field=f"{field}[{index}]")]
    if type(old) is not type(new):
        return [Difference(field, old, new)]
    if isinstance(old, str) and not exact:
        return [] if _floats_close(old, new) else [Difference(field, old, new)]
    return [] if old == new else [Difference(field, old, new)]


def _shown(value: Any) -> str:
    """``value`` for a failure message: a hex float also in decimal, anything long shortened."""
    if isinstance(value, str) and _HEX_FLOAT.fullmatch(value):
        return f"{value} (= {float.fromhex(value)!r})"
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"


def failure_message(configuration_id: str, differences: list[Difference], *, exact: bool,
                    recorded_environment: Mapping[str, str], limit: int = 10) -> str:
    """The assertion message for a configuration whose release or certificate changed.

    Parameters
    ----------
    configuration_id : str
        The configuration's id.
    differences : list of Difference
        What :func:`record_differences` found (non-empty).
    exact : bool
        Whether the comparison was exact (same environment) or to a relative tolerance.
    recorded_environment : mapping
        The environment the golden file was written in.
    limit : int
        How many differences to list in full.

    Returns
    -------
    str
        Names the configuration, each field with its old and new values, the comparison mode, and how
        and when to regenerate the golden file.
    """
    mode = ("exact (same numpy, scipy, scikit-learn and machine as recorded)" if exact else
            f"floats to a relative tolerance of {RELATIVE_TOLERANCE:g}, strings exactly, because the recorded "
            f"environment {dict(recorded_environment)} differs from the running one {environment()}")
    lines = [(f"golden release changed: configuration {configuration_id!r}, {len(differences)} field(s) differ; "
              f"comparison: {mode}.")]
    for difference in differences[:limit]:
        lines.append(f"  field {difference.field}: old {_shown(difference.old)}, new {_shown(difference.new)}")
    if len(differences) > limit:
        lines.append(f"  … and {len(differences) - limit} more field(s)")
    lines.append(f"If, and only if, this change is meant to change releases or certificates (a new default, a "
                 f"fixed bug, a tighter bound), regenerate the golden file with `{REGENERATE_COMMAND}` and say why "
                 "in the change; a refactor or any change meant to keep behaviour must not regenerate it.")
    return "\n".join(lines)
