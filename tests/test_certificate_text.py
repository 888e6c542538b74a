"""No certificate states contradictory release conditions.

A hidden-state bound certifies the last iterate only; composition certifies every iterate and so any
function of them (their mean).  Each bound states its own release condition, and the mechanism's
``assumptions["released"]`` must agree with the winning bound's.  Every registered method is
trained on a tiny problem (and every output option of noisy SGD under each batching), so a new
method or bound is covered.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpconvex.accounting import noisy_gd as gd_accountant
from dpconvex.accounting import noisy_sgd as sgd_accountant
from dpconvex.mechanisms import METHODS
from dpconvex.mechanisms.noisy_sgd import OUTPUTS
from dpconvex.objectives.losses import LogisticLoss
from dpconvex.privacy.certificate import PrivacyCertificate

ONLY_RELEASED = re.compile(r"\bonly\b[^;]*\breleased\b", re.IGNORECASE)
LAST_ONLY = re.compile(r"\bonly (the )?(last|final|output) iterate\b|\bonly [θwx]_[TKn]\b", re.IGNORECASE)
EVERY_ITERATE = re.compile(r"\bevery iterate\b[^;]*\breleased\b", re.IGNORECASE)
MEAN_OF_ITERATES = re.compile(r"\b(mean|average)\b[^;]*\biterates\b", re.IGNORECASE)

#: Extra configurations per method beyond the defaults; a method not listed runs with its defaults.
VARIANTS: dict[str, list[dict]] = {
    "noisy_gd": [{}, {"l2_regularization": 0.0, "iterations": 20}, {"bound": "composition"}],
    "noisy_sgd": [{"batching": batching, "output": output, "sigma": 3.0, "epsilon": None, "epochs": 2}
                  for batching in sgd_accountant.BATCHINGS for output in OUTPUTS],
    "pnsgd": [{}, {"random_stop": True}],
}
CASES = [(name, options) for name in METHODS for options in VARIANTS.get(name, [{}])]


def release_contradictions(certificate: PrivacyCertificate) -> list[str]:
    """What is contradictory in the certificate's release statements (empty if nothing)."""
    conditions = certificate.conditions
    released = str(certificate.assumptions.get("released", ""))
    problems = []
    if any(map(ONLY_RELEASED.search, conditions)) and any(map(EVERY_ITERATE.search, conditions)):
        problems.append("one condition releases only one iterate, another every iterate")
    last_only = [c for c in conditions if LAST_ONLY.search(c)]
    if MEAN_OF_ITERATES.search(released) and last_only:
        problems.append(f"released {released!r} but the bound needs {last_only[0]!r}")
    if last_only and not re.search(r"\b(last|final)\b|\b[θwx]_[TKn]\b", released):
        problems.append(f"the bound needs {last_only[0]!r} but released is {released!r}")
    return problems


def _data(n: int = 40, d: int = 3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    return X, np.where(X @ [1.0, -0.5, 0.25] > 0, 1.0, -1.0)


@pytest.mark.parametrize("name, options", CASES, ids=[f"{n}-{i}" for n, o in CASES for i in [
    ",".join(f"{k}={v}" for k, v in o.items() if k not in ("sigma", "epsilon")) or "defaults"]])
def test_no_certificate_states_contradictory_release_conditions(name, options):
    X, y = _data()
    kwargs = {**dict(loss=LogisticLoss(), l2_regularization=0.1, delta=1e-6, epsilon=1.0, random_state=0), **options}
    certificate = METHODS[name](X, y, **kwargs).certificate
    assert certificate.conditions, "a certificate must state its conditions"
    assert release_contradictions(certificate) == []
    if options.get("output") == "average":  # only composition certifies the mean
        assert certificate.bound == "composition" and MEAN_OF_ITERATES.search(certificate.assumptions["released"])


@pytest.mark.parametrize("accountant", [gd_accountant, sgd_accountant], ids=["noisy_gd", "noisy_sgd"])
def test_each_bound_states_its_own_release_condition(accountant):
    for name, bound in accountant.BOUNDS.items():
        release = [c for c in bound.assumptions if "released" in c]
        assert len(release) == 1, (name, release)
        expected = gd_accountant.EVERY_ITERATE if name == "composition" else gd_accountant.HIDDEN_STATE
        assert release == [expected], name


def _certificate(conditions: tuple[str, ...], released: str) -> PrivacyCertificate:
    return PrivacyCertificate(mechanism="m", epsilon=1.0, delta=1e-6, bound="b", theorem="t", conditions=conditions,
                              assumptions={"released": released}, order=None, conversion="c", sigma=1.0,
                              iterations=1)


@pytest.mark.parametrize("conditions, released", [
    (("replace-one neighbours", "only θ_T released", "every iterate may be released"), "last iterate only"),
    (("only the last iterate released",), "mean of all iterates"),
    (("only the last iterate released; the intermediate iterates stay hidden",), "average of the iterates"),
])
def test_the_checker_flags_the_old_contradictions(conditions, released):
    """The pre-fix composition conditions of noisy SGD, and a mean released under a hidden-state bound."""
    assert release_contradictions(_certificate(conditions, released))
