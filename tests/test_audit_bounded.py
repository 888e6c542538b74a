"""The bounded-domain audit target ``noisy-sgd-bounded``: the audit harness has a bounded-domain
target whose certificate comes from the new bound, and it passes.

The target (:mod:`dpconvex.audit.targets_bounded`) runs the real noisy SGD trainer with cyclic batches,
λ = 0 and an L2 ball, where the certificate is ``shifted-interpolation`` and the ball's diameter lowers it.
Independent oracles here: the closed form of the lemma's winning window, μ² = (D² + s²)/ν², written out
by hand; the exact law of the release θ_T (a clipped Gaussian random walk on [−R, R]), computed by
integrating the transition kernel on a grid with the atoms at ±R.

Seeded statistical tests and their false-failure rates: the audit (alpha = 1e-3, so a correct
mechanism fails with probability ≤ 1e-3 over seeds; measured margin −0.50 ± 0.01 over 100 seeds at
600 runs, every one passing) and the atom frequencies of the real trainer against the exact law (four
|z| < 4.5 tests, false-failure rate < 3e-5).  The quick audit (600 runs) of ``test_audit.py`` and the
halved-noise mutation test of ``test_audit_mutations.py`` cover this target too.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.stats import norm

from certified import assert_certified
from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_sgd as acc
from dpconvex.audit import AUDITS, noise_mutant, run_audit
from dpconvex.audit.targets import NOISY_GD_SETTING
from dpconvex.audit.targets_bounded import BOUNDED_SETTING, RADIUS, bounded_kwargs
from dpconvex.mechanisms import MECHANISMS
from dpconvex.mechanisms.noisy_sgd import plan_noisy_sgd

NAME = "noisy-sgd-bounded"
SI = "shifted-interpolation"
TARGET = AUDITS[NAME]
DELTA = NOISY_GD_SETTING["delta"]


def _constants(sigma: float) -> tuple[float, float, float]:
    """(shift s = ηS_g/b, iterate noise sd ν = ησ/b, diameter D) of the target's run."""
    eta, b = BOUNDED_SETTING["step_size"], BOUNDED_SETTING["batch_size"]
    return eta * 2.0 / b, eta * sigma / b, 2.0 * RADIUS


def _event(sigma: float) -> acc.NoisySGDEvent:
    return plan_noisy_sgd(BOUNDED_SETTING["n"], 1, delta=DELTA, sigma=sigma, **bounded_kwargs()).event


def exact_release_law(noise_sd: float, sign: float, grid: int = 801) -> tuple[np.ndarray, np.ndarray]:
    """Grid and law of θ_T for the target's run: per epoch a noise-only step (rows 0–1, x = 0) and the
    canary's step (drift sign·η/b); θ_{k+1} = clip(θ_k + drift + ν Z, −R, R), θ₀ = 0.

    The end cells hold the atoms at ±R (the tails beyond the cell edges); the others the mass of
    each cell at its centre.  Independent of the library: scipy's normal cdf and a matrix product.
    """
    eta, b = BOUNDED_SETTING["step_size"], BOUNDED_SETTING["batch_size"]
    x = np.linspace(-RADIUS, RADIUS, grid)
    edges = np.concatenate(([-np.inf], (x[1:] + x[:-1]) / 2, [np.inf]))
    kernels = [np.diff(norm.cdf((edges[None, :] - x[:, None] - drift) / noise_sd), axis=1)
               for drift in (0.0, sign * eta / b)]
    law = np.zeros(grid)
    law[grid // 2] = 1.0
    for _ in range(BOUNDED_SETTING["epochs"]):
        law = law @ kernels[0] @ kernels[1]
    return x, law


def test_the_target_is_registered_for_the_noisy_sgd_trainer():
    assert NAME in AUDITS and TARGET.mechanism == "noisy_sgd" and TARGET.mechanism in MECHANISMS
    assert TARGET.delta == DELTA and TARGET.exact_law is None  # the release is not Gaussian (atoms at ±R)
    options = bounded_kwargs()
    assert options["batching"] == "cyclic" and options["l2_regularization"] == 0.0 and options["output"] == "last"
    assert options["constraint"].diameter == 2 * RADIUS


def test_the_canary_moves_the_update_by_the_full_sensitivity_everywhere_on_the_ball():
    # On the ball every margin y·θx lies in [−R, R], below 1 − h, where the huberised hinge is linear:
    # each version's gradient is −y·x exactly, so the two differ by S_g = 2L = 2 (the lemma's shift is
    # attained at every use) and the step map is a translation (c = 1 attained).
    loss, thetas = bounded_kwargs()["loss"], np.linspace(-RADIUS, RADIUS, 61)
    assert RADIUS < 1.0 - loss.h
    pair = TARGET.make_pair()
    assert np.count_nonzero(pair.X != pair.X_prime) == 1 and pair.X_prime[-1, 0] == -pair.X[-1, 0] == -1.0
    for theta in thetas:
        w = np.array([theta])
        grads = loss.per_example_gradients(w, pair.X, pair.y), loss.per_example_gradients(w, pair.X_prime, pair.y)
        np.testing.assert_array_equal(grads[0], -pair.y[:, None] * pair.X)
        assert abs(grads[0][-1, 0] - grads[1][-1, 0]) == 2.0


def test_the_certificate_comes_from_shifted_interpolation_and_the_diameter():
    pair, sigma = TARGET.make_pair(), TARGET.sigma()
    for X, y in ((pair.X, pair.y), (pair.X_prime, pair.y_prime)):
        cert = TARGET.run(X, y, 0, sigma, DELTA).certificate
        assert cert.mechanism == "noisy_sgd" and cert.bound == SI
        assert set(cert.candidates) == {"composition", SI}
        assert cert.epsilon <= NOISY_GD_SETTING["epsilon"] == pytest.approx(cert.epsilon, rel=1e-9)
        assert cert.composition_epsilon > 1.9 * cert.epsilon
        assert cert.assumptions["constraint"] == f"L2 ball of radius {RADIUS:g}"
        assert (cert.assumptions["batching"], cert.assumptions["l2_regularization"],
                cert.assumptions["strong_convexity"], cert.assumptions["released"]) == \
            ("cyclic", 0.0, 0.0, "last iterate only")
        assert "bok-cgd not applicable: needs strong_convexity > 0" in cert.notes
    # The winning window (τ = 6, b_τ = D, one noise-only step, then the last use; s(l − 1) > D):
    # μ² = (D² + s²)/ν², by hand.
    s, nu, diameter = _constants(sigma)
    assert s * (BOUNDED_SETTING["n"] // BOUNDED_SETTING["batch_size"] - 1) > diameter
    mu = math.sqrt(diameter**2 + s**2) / nu
    event = _event(sigma)
    assert event.diameter == diameter and event.contraction == 1.0
    assert acc.gdp_mu(event, SI) == pytest.approx(mu, rel=1e-12)
    assert_certified(cert.epsilon, gdp.gdp_epsilon(DELTA, mu), rel=1e-9)
    # Without the diameter the same lemma gives s·sqrt(1 + (E − 1)/l)/ν: the ball is what certifies ε = 3.
    unbounded = dataclasses.replace(event, diameter=None)
    l, epochs = event.batches, event.epochs
    assert acc.gdp_mu(unbounded, SI) == pytest.approx(s * math.sqrt(1 + (epochs - 1) / l) / nu, rel=1e-12)
    assert acc.account(unbounded, DELTA).epsilon > 1.4 * cert.epsilon


def test_the_exact_release_law_lies_inside_the_certificate_and_halved_noise_outside():
    """The exact law of θ_T (grid of 801 points; 1601 moves these numbers by < 1e-4): total variation
    0.324 against the certificate's 2Φ(μ/2) − 1 = 0.370, and every E_{e^ε} below the certified δ(ε);
    trained with half the noise, 0.610 (the mutant the audit must fail)."""
    sigma = TARGET.sigma()
    s, nu, diameter = _constants(sigma)
    mu = math.sqrt(diameter**2 + s**2) / nu

    def hockey_sticks(noise_sd):
        (_, p), (_, q) = exact_release_law(noise_sd, +1.0), exact_release_law(noise_sd, -1.0)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)
        return np.array([max(np.maximum(p - math.exp(e) * q, 0).sum(), np.maximum(q - math.exp(e) * p, 0).sum())
                         for e in (0.0, 0.25, 0.5, 1.0, 2.0, 3.0)])

    certified = gdp.gdp_delta(np.array([0.0, 0.25, 0.5, 1.0, 2.0, 3.0]), mu)
    honest, halved = hockey_sticks(nu), hockey_sticks(nu / 2)
    assert np.all(honest <= certified)
    assert honest[0] == pytest.approx(0.324, abs=1e-3) and certified[0] == pytest.approx(0.370, abs=1e-3)
    assert halved[0] == pytest.approx(0.610, abs=1e-3) and halved[0] > certified[0] + 0.2


@pytest.mark.slow
def test_the_trainer_releases_the_exact_law():
    """Atom frequencies P(θ_T = ±R) of 1,000 real trainings per neighbour against the exact law (0.570 and
    0.255 on D, mirrored on D'): |z| < 4.5 for each of the four (false-failure rate < 3e-5)."""
    pair, sigma, runs = TARGET.make_pair(), TARGET.sigma(), 1000
    _, nu, _ = _constants(sigma)
    seeds = np.random.SeedSequence(11).generate_state(2 * runs)
    for side, (X, y, sign) in enumerate(((pair.X, pair.y, 1.0), (pair.X_prime, pair.y_prime, -1.0))):
        _, law = exact_release_law(nu, sign)
        released = np.array([TARGET.release(X, y, int(seed))[0] for seed in seeds[side::2]])
        assert np.all(np.abs(released) <= RADIUS * (1 + 1e-12))  # the projection rescales: R up to rounding
        top, bottom = released >= RADIUS * (1 - 1e-12), released <= -RADIUS * (1 - 1e-12)
        for observed, expected in ((top, law[-1]), (bottom, law[0])):
            z = (observed.mean() - expected) / math.sqrt(expected * (1 - expected) / runs)
            assert abs(z) < 4.5, (side, observed.mean(), expected)


@pytest.mark.slow
def test_the_audit_passes_and_names_the_new_bound():
    """2,000 runs (the audit length of docs/audits.md); a correct mechanism fails with probability ≤ alpha = 1e-3."""
    result = run_audit(NAME, runs=2000, seed=0)
    assert result.passed, result
    assert result.bound == SI and result.certified_epsilon == pytest.approx(NOISY_GD_SETTING["epsilon"], rel=1e-9)
    assert result.audit_epsilon_lower <= result.certified_epsilon and result.profile_margin <= 0.0


def test_the_halved_noise_mutant_has_the_same_certificate():
    # The mutation test (test_audit_mutations.py) trains with σ/2 but must be judged against this certificate.
    mutant, pair = noise_mutant(TARGET), TARGET.make_pair()
    assert mutant.sigma() == TARGET.sigma() and mutant.noise_factor == 0.5
    assert TARGET.run(pair.X, pair.y, 0, TARGET.sigma(), DELTA).certificate.bound == SI
