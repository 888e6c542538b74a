"""Adversarial soundness: no neighbouring pair the public API accepts moves the noiseless release further
than its certificate assumes (:mod:`dpconvex.audit.soundness`).

The sweep enumerates the registries (``METHODS``, ``LOSSES``, the ``Constraint`` union), so a new
mechanism, loss or constraint is searched without editing this file; a mechanism without an oracle
fails.  The search is deterministic (seeded); the power tests below show it finds the defects it is
meant to find (a non-Euclidean projection posing as Euclidean, an understated sensitivity).
"""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

from certified import assert_certified
from dpconvex.audit import soundness
from dpconvex.audit.soundness import ORACLES, NoiselessGenerator, Scenario, search, sweep
from dpconvex.mechanisms import MECHANISMS, METHODS
from dpconvex.objectives import constraints
from dpconvex.objectives.losses import LOSSES, HuberizedHingeLoss

#: Floating-point slack: the search reaches the oracles' bounds exactly (ratios 1 ± 1e-14 observed).
TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class RadialBallPosingAsEuclidean(constraints.LpBall):
    """The ℓ_p ball's radial rescaling, wrongly declared Euclidean: the ℓ_p-ball defect found in review."""

    @property
    def euclidean_projection(self) -> bool:
        return True


class UnderstatedHuberLoss(HuberizedHingeLoss):
    """Huberised hinge declaring 70 % of its sum-gradient sensitivity (attained near w = 0: a record and its
    opposite, both with margin below 1 − h, have gradients −y·x and +y·x)."""

    def constants(self, data_norm, l2_regularization, constraint, label_bound=None):
        true = super().constants(data_norm, l2_regularization, constraint, label_bound)
        return dataclasses.replace(true, gradient_sensitivity=0.7 * true.gradient_sensitivity)


@pytest.fixture(scope="module")
def results():
    # Half of dpconvex soundness's default search (16 starts, 80 polishing steps) in this one process (pytest-xdist
    # already runs a test file per core): ~105 s instead of ~215 s serial.  Every mechanism's largest ratio
    # still reaches 1.0 (sco_noisy_sgd 0.95, exempt below), as at the default (measured 2026-11-28).
    return sweep("each", samples=8, polish=40, workers=1)


@pytest.mark.slow
def test_no_accepted_configuration_certifies_less_than_the_noiseless_truth(results):
    offenders = [(r.scenario, r.ratio) for r in results if r.ratio is not None and r.ratio > 1.0 + TOLERANCE]
    assert not offenders, offenders


@pytest.mark.slow
def test_the_sweep_covers_every_method_and_every_constraint(results):
    accepted = [r for r in results if r.ratio is not None]
    assert {r.scenario.split(" | ")[0] for r in accepted} == set(METHODS)
    descriptions = " ".join(r.scenario for r in accepted)
    for example in soundness.example_constraints():
        assert example.describe() in descriptions, example
    # Refusals are ValueErrors with a message (the trainer's own), never silent.
    assert all(r.refusal for r in results if r.ratio is None)
    # The oracles are tight: the search reaches them, so a looser oracle would show up here.
    summary = soundness.summary(results)
    assert all(row["largest_ratio"] > 0.99 for name, row in summary.items() if name != "sco_noisy_sgd")


def test_every_mechanism_has_a_soundness_oracle():
    assert set(MECHANISMS) <= set(ORACLES)


def test_example_constraints_cover_the_constraint_union():
    assert {type(c) for c in soundness.example_constraints()} == set(typing.get_args(constraints.Constraint))


def test_the_oracle_flags_the_lp_ball_defect_reproduction():
    # outpert_gd on ½‖θ − x‖², λ = 0, n = 100, 3 epochs, the ℓ_1.1 ball's radial rescaling: the noiseless
    # gap is 0.02387 while the certificate assumes sensitivity_max = 0.02 (the ℓ_p-ball defect).
    scenario = Scenario("outpert_gd", "quadratic", RadialBallPosingAsEuclidean(1.0143673153817627, 1.1), 0.0,
                        {"epochs": 3})
    u = np.array([0.9982766030804388, -0.05868410127266345])
    X = np.tile([-0.048525828186841105, -0.9988219280726576], (100, 1))
    X[0] = u
    X_prime = X.copy()
    X_prime[0] = -u
    first, log = scenario.train(X, np.zeros(100), 0)
    second, _ = scenario.train(X_prime, np.zeros(100), 0)
    gap = np.linalg.norm(first.coef - second.coef)
    assumed = ORACLES["outpert_gd"](first.certificate, 0, log)
    assert assumed == pytest.approx(0.02)
    assert_certified(first.certificate.assumptions["sensitivity_max"], 0.02, rel=1e-9)  # rounded up by the margin
    assert gap == pytest.approx(0.02387, abs=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("method, options", [("outpert_gd", {"epochs": 4}), ("noisy_gd", {"iterations": 8})])
def test_the_search_finds_a_non_euclidean_projection_posing_as_euclidean(method, options):
    # Local Euclidean Lipschitz constant of the rescaling ≈ 1.2 (tests/test_constraints.py).  The
    # violation region (iterate just outside the ball, at the right angle) is small and bordered by a
    # plateau at ratio 1 (projection inactive), so one seeded search finds it with probability ≈ 0.6
    # (measured over seeds 0–9: 6/10, ratios 1.02–1.14); four seeds miss it all with probability ≈ 3 %,
    # and the seeds are fixed, so the test is deterministic.
    scenario = Scenario(method, "quadratic", RadialBallPosingAsEuclidean(0.4, 1.1), 0.0, options)
    assert max(search(scenario, seed=seed).ratio for seed in range(4)) > 1.02


@pytest.mark.slow
@pytest.mark.parametrize("method, options", [("noisy_gd", {"iterations": 8}), ("pnsgd", {"random_stop": False}),
                                             ("noisy_sgd", {"batching": "cyclic", "batch_size": 2, "epochs": 2,
                                                            "output": "last"})])
def test_the_search_finds_an_understated_sensitivity(monkeypatch, method, options):
    monkeypatch.setitem(LOSSES, "understated", UnderstatedHuberLoss)
    scenario = Scenario(method, "understated", constraints.L2Ball(0.4) if method == "pnsgd" else
                        constraints.Unconstrained(), 0.1, options)
    assert search(scenario, seed=0).ratio > 1.0 + 0.1


def test_the_noiseless_generator_zeroes_noise_and_logs_the_schedule():
    rng = NoiselessGenerator(3)
    assert np.all(rng.standard_normal(4) == 0) and rng.normal(0.0, 2.0, 3).tolist() == [0.0, 0.0, 0.0]
    assert rng.laplace(0.0, 1.0, 1).tolist() == [0.0]
    order = rng.permutation(6)
    assert sorted(order.tolist()) == list(range(6))
    reference = np.random.Generator(np.random.PCG64(3)).permutation(6)  # the same stream as a plain PCG64
    assert order.tolist() == reference.tolist()
    assert [name for name, _ in rng.log] == ["permutation"]


def test_unknown_constraint_fields_are_an_error(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Box:
        half_width: float

    monkeypatch.setattr(constraints, "Constraint", constraints.Constraint | Box)
    with pytest.raises(ValueError, match="half_width"):
        soundness.example_constraints()


@pytest.mark.slow
def test_the_search_finds_an_overstated_strong_convexity(monkeypatch):
    # Soundness review: with b ∤ n the short last batch of ½‖θ − x‖² is only |B|/b strongly convex.
    # Declaring the full-batch m (the defect, re-created here) lets bok-cgd assume a contraction the run
    # does not have; the search must see it, and must see nothing once the trainer declares the truth.
    import importlib

    noisy_sgd_module = importlib.import_module("dpconvex.mechanisms.noisy_sgd")  # the package exports the function

    scenario = Scenario("noisy_sgd", "quadratic", constraints.Unconstrained(), 0.0,
                        {"batching": "cyclic", "batch_size": 4, "epochs": 5, "step_size": 0.1, "output": "last"})
    assert search(scenario, sizes=(5,), seed=0).ratio <= 1.0 + TOLERANCE
    monkeypatch.setattr(noisy_sgd_module, "_every_batch_strong_convexity", lambda m, *args: m)
    assert search(scenario, sizes=(5,), seed=0).ratio > 1.1
