"""Declarative hyperparameter validation (the ``_parameter_constraints`` idiom, our own code).

scikit-learn's validator lives in a private module; we keep a small public-API-only version:
each estimator declares ``_parameter_constraints = {name: [Rule, ...]}`` and calls
:func:`validate_params` at the start of ``fit``.  A value passes if any rule accepts it; otherwise
a ``ValueError`` names the parameter and every accepted form.  :data:`COMMON_CONSTRAINTS` are the rules of
the parameters the estimators share, :data:`CLASSES_RULES` those of the classifiers' ``classes``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpconvex.mechanisms import METHODS
from dpconvex.privacy.ledger import PrivacyLedger

__all__ = ["Interval", "Options", "Instance", "validate_params", "COMMON_CONSTRAINTS", "CLASSES_RULES",
           "PRIVATE_CLASSES_RULES"]


@dataclass(frozen=True)
class Interval:
    """A real (or integral) interval; ``closed`` is one of "both", "left", "right", "neither".

    Attributes
    ----------
    low, high : float
        The end points.
    closed : {"both", "left", "right", "neither"}
        Which end points belong to it.
    integral : bool
        Accept integers only.
    """

    low: float
    high: float
    closed: str = "both"
    integral: bool = False

    def accepts(self, value: Any) -> bool:
        kind = numbers.Integral if self.integral else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind) or np.isnan(value):
            return False
        low_ok = value >= self.low if self.closed in ("both", "left") else value > self.low
        high_ok = value <= self.high if self.closed in ("both", "right") else value < self.high
        return bool(low_ok and high_ok)

    def __str__(self) -> str:
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        kind = "an int" if self.integral else "a float"
        return f"{kind} in {left}{self.low:g}, {self.high:g}{right}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (strings, ``None``, booleans).

    Attributes
    ----------
    values : tuple
        The values accepted (compared by identity, or by type and equality).
    """

    values: tuple

    def accepts(self, value: Any) -> bool:
        return any(value is v or (type(value) is type(v) and value == v) for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class Instance:
    """An instance of the given type(s).

    Attributes
    ----------
    types : tuple of type
        The types accepted.
    """

    types: tuple

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def __str__(self) -> str:
        return "an instance of " + " or ".join(t.__name__ for t in self.types)


def validate_params(params: dict[str, Any], constraints: dict[str, list]) -> None:
    """Raise ``ValueError`` for the first parameter no rule accepts, naming its valid forms.

    Parameters
    ----------
    params : dict
        Parameter name → value (every name of ``constraints`` must be present).
    constraints : dict
        Parameter name → list of rules (:class:`Interval`, :class:`Options`, :class:`Instance`), one of which
        must accept the value.
    """
    for name, rules in constraints.items():
        value = params[name]
        if not any(rule.accepts(value) for rule in rules):
            valid = " or ".join(str(rule) for rule in rules)
            raise ValueError(f"The '{name}' parameter must be {valid}; got {value!r}.")


#: The rules of the parameters every estimator shares (those it has: a subclass picks or adds).
COMMON_CONSTRAINTS = {
    "epsilon": [Interval(0.0, np.inf, "neither")],
    "delta": [Interval(0.0, 1.0, "neither")],
    "data_norm": [Interval(0.0, np.inf, "neither"), Options(("from_data",))],
    "l2_regularization": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
    "method": [Options(tuple(METHODS))],
    "iterations": [Interval(1, np.inf, "left", integral=True), Options(("auto", "theorem4"))],
    "step_size": [Interval(0.0, np.inf, "neither"), Options(("auto",))],
    "batch_size": [Interval(1, np.inf, "left", integral=True), Options(("auto",))],
    "epochs": [Interval(1, np.inf, "left", integral=True), Options(("auto",))],
    "fit_intercept": [Options((True, False))],
    "strict": [Options((True, False))],
    "random_state": [Options((None,)), Interval(0, np.inf, "left", integral=True),
                     Instance((np.random.Generator, np.random.RandomState))],
    "ledger": [Options((None,)), Instance((PrivacyLedger,))],
    "ledger_partition": [Options((None,)), Instance((str,))],
}

#: The ``…CV`` classifiers' ``classes``: None (read from y) or a sequence of at least two distinct labels.
CLASSES_RULES = [Options((None,)), Instance((list, tuple, np.ndarray))]
#: The single-fit classifiers' ``classes``: also ``"private"`` (released privately:
#: :mod:`dpconvex.estimators.private_classes`).
PRIVATE_CLASSES_RULES = [Options((None, "private")), Instance((list, tuple, np.ndarray))]
