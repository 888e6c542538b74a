"""The JSON shape of a :class:`~dpconvex.datasets.tabular.TabularSchema` file: which keys, of which JSON types.

:meth:`~dpconvex.datasets.tabular.TabularSchema.from_dict` checks a parsed file here before building the
schema, so a value of the wrong JSON type is a ``ValueError`` naming the key and its shape, never a
``TypeError`` from deep inside the constructor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["check_json_shapes"]


def _number(value: object) -> bool:
    """A JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _texts(value: object) -> bool:
    """A JSON list of strings or numbers (numbers are read as their text)."""
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) or _number(v) for v in value)


def _pair(value: object) -> bool:
    """A JSON list ``[lower, upper]`` of two numbers."""
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(map(_number, value))


#: Schema key -> (its shape, for the message; whether a JSON value has it).
_JSON_SHAPES: dict[str, tuple[str, Any]] = {
    "target": ("a string (null: features only)", lambda v: v is None or isinstance(v, str)),
    "positive_label": ("a string or null", lambda v: v is None or isinstance(v, str) or _number(v)),
    "classes": ("a list of strings or null", lambda v: v is None or _texts(v)),
    "target_bounds": ("[lower, upper] or null", lambda v: v is None or _pair(v)),
    "categorical": ('an object {"column": ["category", ...]}',
                    lambda v: isinstance(v, dict) and all(_texts(cats) for cats in v.values())),
    "numerical": ('an object {"column": [lower, upper]}',
                  lambda v: isinstance(v, dict) and all(map(_pair, v.values()))),
    "missing_values": ("a list of strings", _texts),
    "other_slot": ("true or false", lambda v: isinstance(v, bool)),
    "numeric_fill": ('an object {"column": number}', lambda v: isinstance(v, dict) and all(map(_number, v.values()))),
    "data_dependent": ("true or false", lambda v: isinstance(v, bool)),
    "provenance": ("a string or null", lambda v: v is None or isinstance(v, str)),
}

def check_json_shapes(spec: object) -> None:
    """Refuse a parsed schema file that is not an object of the known keys with values of their JSON types.

    Parameters
    ----------
    spec : object
        The parsed JSON.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        If ``spec`` is not an object, lacks ``"target"``, has an unknown key (all keys are listed), or
        a value of the wrong JSON type (naming the key and its shape, e.g. ``"numerical": {"age": 5}``).
    """
    if not isinstance(spec, Mapping):
        raise ValueError(f"a schema is a JSON object {{\"target\": ...}}; got {type(spec).__name__} {spec!r}")
    if not {"target"} <= set(spec) <= set(_JSON_SHAPES):
        raise ValueError(
            "schema needs the key target (with positive_label for a binary schema, classes for a multi-class "
            f"one or target_bounds for regression), and only keys among {sorted(_JSON_SHAPES)}; got {sorted(spec)}"
        )
    for key, value in spec.items():
        shape, fits = _JSON_SHAPES[key]
        if not fits(value):
            raise ValueError(f"schema key {key!r} must be {shape}; got {value!r}")
