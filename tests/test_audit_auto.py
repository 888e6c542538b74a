"""The audit targets of ``method="auto"`` train exactly what ``auto`` trains: every
configuration ``auto`` can pick is registered in the audit harness and passes.

``auto`` refuses a given σ, so the targets replay its call of the trainer with σ as a parameter (the
halved-noise mutant needs it); these tests pin that replay to ``auto`` itself, bit for bit, at the
calibrated σ.  The quick audits and the mutation tests of both targets are in ``test_audit.py`` and
``test_audit_mutations.py`` with every other target.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpconvex.audit import AUDITS
from dpconvex.audit.targets import NOISY_GD_SETTING
from dpconvex.audit.targets_auto import HINGE_CONSTRAINT, auto_choice, auto_hinge_step, auto_loss
from dpconvex.mechanisms import auto
from dpconvex.mechanisms.noisy_sgd import RELEASED
from dpconvex.objectives.losses import HingeLoss

BUDGET = dict(epsilon=NOISY_GD_SETTING["epsilon"], delta=NOISY_GD_SETTING["delta"])


def _auto(name: str, X, y, seed: int):
    if name == "auto":
        return auto(X, y, loss=auto_loss(), random_state=seed, **BUDGET)
    return auto(X, y, loss=HingeLoss(), constraint=HINGE_CONSTRAINT, random_state=seed, **BUDGET)


def assert_target_releases_as(target, reference) -> None:
    """On both neighbours and seeds 0, 1, 7 the target's run and release are ``reference(X, y, seed)``'s.

    Bit for bit.
    """
    pair = target.make_pair()
    for X, y in ((pair.X, pair.y), (pair.X_prime, pair.y_prime)):
        for seed in (0, 1, 7):
            expected = reference(X, y, seed)
            released = target.run(X, y, seed, target.sigma(), target.delta)
            assert np.array_equal(released.coef, expected.coef)
            assert np.array_equal(target.release(X, y, seed), expected.coef)
            ours, theirs = released.certificate, expected.certificate
            assert (ours.mechanism, ours.bound, ours.sigma, ours.epsilon, ours.delta) == \
                (theirs.mechanism, theirs.bound, theirs.sigma, theirs.epsilon, theirs.delta)
            assert ours.mechanism == target.mechanism
            assert ours.assumptions == theirs.assumptions


@pytest.mark.parametrize("name", ["auto", "auto-hinge"])
def test_the_auto_targets_release_what_auto_releases(name):
    assert_target_releases_as(AUDITS[name], lambda X, y, seed: _auto(name, X, y, seed))


def test_the_smooth_auto_target_audits_subsampled_tail_averaging_by_composition():
    # What auto picks for the shared setting: Poisson batches with q = b/n < 1 (amplification by
    # subsampling is what the composition bound relies on), the tail average, the PLD bound.
    target = AUDITS["auto"]
    pair = target.make_pair()
    choice = auto_choice()
    certificate = target.run(pair.X, pair.y, 0, target.sigma(), target.delta).certificate
    assert choice.chosen.batch_size < NOISY_GD_SETTING["n"]
    assert certificate.bound == "composition" and certificate.conversion.startswith("dp-accounting PLD")
    assumptions = certificate.assumptions
    assert assumptions["batching"] == "poisson" and assumptions["released"] == RELEASED["tail_average"]
    assert (assumptions["batch_size"], assumptions["epochs"], assumptions["step_size"],
            assumptions["l2_regularization"]) == (choice.chosen.batch_size, choice.epochs, choice.step_size,
                                                  choice.l2_regularization)
    assert certificate.epsilon <= NOISY_GD_SETTING["epsilon"]


def test_sco_target_has_the_certificate_auto_gives_non_smooth_losses():
    # sco-noisy-sgd runs auto's trainer on the same pair with a fixed step; the single-use bound does
    # not depend on the step, so its certificate is auto's (auto-hinge audits auto's own step).
    sco, hinge = AUDITS["sco-noisy-sgd"], AUDITS["auto-hinge"]
    assert hinge.make_pair is sco.make_pair
    pair = sco.make_pair()
    assert sco.sigma() == hinge.sigma()
    ours = sco.run(pair.X, pair.y, 0, sco.sigma(), sco.delta).certificate
    theirs = _auto("auto-hinge", pair.X, pair.y, 0).certificate
    assert (ours.mechanism, ours.bound, ours.sigma, ours.epsilon) == (theirs.mechanism, theirs.bound, theirs.sigma,
                                                                      theirs.epsilon)
    differing = {key for key in ours.assumptions if ours.assumptions[key] != theirs.assumptions[key]}
    assert differing <= {"step_size", "steps_run", "fresh_steps"}
    assert theirs.assumptions["step_size"] == auto_hinge_step() != ours.assumptions["step_size"]
