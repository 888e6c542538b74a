"""The ``shifted-interpolation`` bound in the noisy SGD / noisy GD best-of.

Independent oracles: the exact Gaussian law of ½‖θ − x‖² (linear steps, unconstrained), and, on a
bounded domain, the law of the last iterate of a 1-D projected run computed by numerical
integration of its transition kernel (discretised on a grid, with the atoms at the interval ends).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from certified import assert_certified
from dpconvex.accounting import gdp
from dpconvex.accounting import noisy_gd as gd_acc
from dpconvex.accounting import noisy_sgd as acc
from dpconvex.cli.main import main
from dpconvex.objectives.multiclass import MultinomialLogisticLoss

SI = "shifted-interpolation"
ISSUE = ["account", "noisy-sgd", "--n", "40000", "--batch-size", "400", "--epochs", "100", "--batching", "cyclic",
         "--step-size", "1", "--sigma", "4", "--lipschitz", "1", "--smoothness", "0.26", "--strong-convexity", "0",
         "--diameter", "2", "--delta", "1e-8", "--json"]


def sgd_event(**kw):
    base = dict(n=40000, batch_size=400, batching="cyclic", epochs=100, step_size=1.0, sigma=4.0, sensitivity=2.0,
                strong_convexity=0.0, smoothness=0.26, diameter=2.0)
    return acc.NoisySGDEvent(**{**base, **kw})


# ----------------------------------------------------------------------------- the issue's example
def test_issue_example_on_the_command_line(capsys):
    assert main(ISSUE) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["bound"] == SI
    assert payload["mu"] == pytest.approx(0.7053, abs=5e-5)
    assert payload["epsilon"] == pytest.approx(3.93, abs=5e-3)
    assert payload["composition_epsilon"] == pytest.approx(39.9, abs=0.05)
    # Done-when of the issue: no larger than Bok et al.'s constrained NoisyCGD closed form (13.2).
    assert payload["epsilon"] <= 13.2 and payload["candidates"]["composition"] > 10 * payload["epsilon"]
    assert any(note.startswith("composition lost to shifted-interpolation") for note in payload["notes"])
    assert "bok-cgd not applicable: needs strong_convexity > 0" in payload["notes"]


def test_issue_example_in_text_output_names_the_bound(capsys):
    assert main(ISSUE[:-1]) == 0
    assert "bound: shifted-interpolation" in capsys.readouterr().out


@pytest.mark.parametrize("family, extra", [
    ("noisy-sgd", ["--n", "100", "--batch-size", "10", "--epochs", "2", "--batching", "cyclic", "--step-size", "1",
                   "--sigma", "1", "--lipschitz", "1", "--delta", "1e-6"]),
    ("langevin", ["--n", "100", "--sensitivity", "2", "--step-size", "1", "--sigma", "1", "--iterations", "5",
                  "--delta", "1e-6"]),
])
@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan"])
def test_diameter_must_be_finite_and_positive(capsys, family, extra, value):
    with pytest.raises(SystemExit) as exit_info:
        main(["account", family, *extra, "--diameter", value])
    assert exit_info.value.code == 2 and "--diameter" in capsys.readouterr().err


def test_langevin_diameter_reaches_the_bound(capsys):
    # Full-batch, convex (c = 1): s = ηS_g/n = 0.002, ν = √(2η)σ; K = 20000 > 4D/s, so the window wins.
    argv = ["account", "langevin", "--n", "1000", "--sensitivity", "2", "--step-size", "1", "--smoothness", "0.5",
            "--sigma", "0.05", "--iterations", "20000", "--initialization", "fixed", "--delta", "1e-6", "--json"]
    assert main([*argv, "--diameter", "2"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["bound"] == SI
    mu = math.sqrt(4 * 2 * 0.002) / (math.sqrt(2) * 0.05)  # 4Ds at w* = D/s (an integer here): exact
    assert_certified(payload["epsilon"], gdp.gdp_epsilon(1e-6, mu), rel=1e-9)
    assert main(argv) == 0
    unconstrained = json.loads(capsys.readouterr().out)
    assert unconstrained["epsilon"] > 2 * payload["epsilon"]


# ----------------------------------------------------------------------------- applicability and notes
@pytest.mark.parametrize("change, reason", [
    (dict(batching="poisson"), "Poisson batches are not covered"),
    (dict(step_size=8.0), "step_size <= 2/smoothness"),
    (dict(last_iterate_only=False), "only the last iterate"),
    (dict(clipping="other"), "GLM / margin loss"),
])
def test_each_unmet_condition_gives_its_reason(change, reason):
    event = sgd_event(**change)
    assert SI not in acc.applicable_bounds(event)
    assert reason in " ".join(acc.unmet_conditions(event, SI))


def test_clipping_a_glm_loss_and_the_edge_step_are_allowed():
    assert SI in acc.applicable_bounds(sgd_event(clipping="glm"))
    assert SI in acc.applicable_bounds(sgd_event(step_size=2.0 / 0.26))  # η = 2/M exactly: c = 1


def test_shuffled_equals_cyclic():
    assert acc.gdp_mu(sgd_event(batching="shuffled"), SI) == acc.gdp_mu(sgd_event(), SI)


@pytest.mark.parametrize("lam", [1e-4, 1e-2, 0.2])
@pytest.mark.parametrize("n, b, epochs", [(40, 10, 1), (40, 10, 7), (45, 10, 5), (12, 12, 30), (600, 7, 3)])
@pytest.mark.parametrize("diameter", [None, 0.5, 5.0])
@pytest.mark.parametrize("eta", [0.3, 1.9])
def test_not_above_bok_cgd_wherever_both_apply(lam, n, b, epochs, diameter, eta):
    event = acc.NoisySGDEvent(n=n, batch_size=b, batching="cyclic", epochs=epochs, step_size=eta, sigma=3.0,
                              sensitivity=2.0, strong_convexity=lam, smoothness=1.0 + lam, diameter=diameter)
    both = {"bok-cgd", SI} <= set(acc.applicable_bounds(event))
    assert both == (eta * (1.0 + lam) < 2.0)
    if both:
        assert acc.gdp_mu(event, SI) <= acc.gdp_mu(event, "bok-cgd")


@pytest.mark.parametrize("eta", [0.1, 0.5, 0.9, 1.3, 1.9])
@pytest.mark.parametrize("batches, epochs", [(1, 1), (1, 7), (2, 3), (4, 10), (7, 25)])
@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_at_least_the_exact_quadratic_law(eta, batches, epochs, lam):
    """½‖θ − x‖² + ridge, equal batches, C = R^d: the exact law's μ (closed form) never exceeds the bound;
    equal for full-batch GD (one batch, all steps linear)."""
    event = acc.NoisySGDEvent(n=3 * batches, batch_size=3, batching="cyclic", epochs=epochs, step_size=eta,
                              sigma=3.0, sensitivity=2.0, strong_convexity=1.0 + lam, smoothness=1.0 + lam,
                              quadratic_loss=True)
    if eta * (1.0 + lam) > 2.0:
        return
    exact = acc.gdp_mu(event, "exact-quadratic")
    bound = acc.gdp_mu(event, SI)
    assert bound >= exact * (1 - 1e-12)
    if batches == 1 and eta * (1.0 + lam) <= 1.0:  # a = 1 − ηm ≥ 0: the τ = 0 string is the exact shift
        assert bound == pytest.approx(exact, rel=1e-12)


def test_noisy_gd_bound_is_the_exact_quadratic_law_and_gdp_without_diameter():
    event = gd_acc.NoisyGDEvent(n=50, sensitivity=2.0, step_size=0.3, sigma=0.5, iterations=40, strong_convexity=1.0,
                                smoothness=1.0, quadratic_loss=True)
    mu = gd_acc.BOUNDS[SI].gdp_mu(event)
    assert mu == pytest.approx(gd_acc.BOUNDS["gdp"].gdp_mu(event), rel=1e-12)
    exact_rdp = gd_acc.rdp_curve(event, "exact-quadratic", [2.0])[0]  # α μ²/2 at α = 2
    assert mu**2 == pytest.approx(exact_rdp, rel=1e-9)


# ----------------------------------------------------------------------------- bounded domain, numerically
def projected_law(drifts, noise_sd, radius, grid=801):
    """Law of θ_T for θ_{k+1} = Π_{[−R, R]}(f_k(θ_k) + ν Z), θ₀ = 0, on a grid whose end cells are the atoms at ±R.

    ``drifts`` is a list of maps f_k (vectorised; equal maps share one kernel).  Transition by
    integrating the Gaussian kernel over each cell (cell edges at the midpoints between grid points;
    the end cells take the tails).
    """
    x = np.linspace(-radius, radius, grid)
    edges = np.concatenate(([-np.inf], (x[1:] + x[:-1]) / 2, [np.inf]))
    kernels = {}
    law = np.zeros(grid)
    law[grid // 2] = 1.0
    for f in drifts:
        if id(f) not in kernels:
            kernels[id(f)] = np.diff(norm.cdf((edges[None, :] - f(x)[:, None]) / noise_sd), axis=1)
        law = law @ kernels[id(f)]
    return law


def hockey_stick(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


@pytest.mark.parametrize("kind", ["linear", "quadratic"])
def test_bounded_domain_certificate_dominates_the_numerical_law(kind):
    """1-D cyclic projected noisy SGD on [−R, R], two batches of one record, the record in the last batch
    (the worst position); neighbours x = ±a.  linear: ℓ = −xθ (c = 1); quadratic: ½(θ − x)² (c = 1 − η)."""
    radius, eta, epochs, nu = 0.5, 1.0, 40, 0.3
    if kind == "linear":
        a, m, big_m = 0.1, 0.0, 0.0

        def step(x):
            return lambda theta: theta + eta * x
    else:
        eta, a, m, big_m = 0.2, 0.5, 1.0, 1.0

        def step(x):
            return lambda theta: theta - eta * (theta - x)
    other = step(0.0)
    laws = []
    for x in (a, -a):
        mine = step(x)
        laws.append(projected_law([other, mine] * epochs, nu, radius))
    event = acc.NoisySGDEvent(n=2, batch_size=1, batching="cyclic", epochs=epochs, step_size=eta, sigma=nu / eta,
                              sensitivity=2 * a, strong_convexity=m, smoothness=big_m, diameter=2 * radius)
    account = acc.account(event, 1e-6)
    assert account.bound == SI
    mu = acc.gdp_mu(event, SI)
    composition = acc.gdp_mu(event, "composition")
    assert mu < composition  # the diameter (linear) / contraction (quadratic) matters here
    for eps in (0.0, 0.25, 0.5, 1.0, 2.0):
        numerical = max(hockey_stick(laws[0], laws[1], eps), hockey_stick(laws[1], laws[0], eps))
        assert float(gdp.gdp_delta(eps, mu)) >= numerical - 1e-6


# ----------------------------------------------------------------------------- calibration
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_calibration_meets_the_target_with_the_closed_form_sigma(epsilon):
    event = sgd_event()
    sigma = acc.calibrate_sigma(event, epsilon, 1e-8)
    achieved = acc.account(dataclasses.replace(event, sigma=sigma), 1e-8)
    assert achieved.bound == SI and achieved.epsilon <= epsilon
    expected = acc.gdp_mu(dataclasses.replace(event, sigma=1.0), SI) / gdp.gdp_mu(epsilon, 1e-8)
    assert_certified(sigma, expected, rel=1e-9)  # the margin inside the target asks for at most 1 + margin more noise
    assert acc.account(dataclasses.replace(event, sigma=sigma * (1 - 1e-6)), 1e-8).epsilon > epsilon


def test_noisy_gd_calibration_meets_the_target():
    event = gd_acc.NoisyGDEvent(n=1000, sensitivity=2.0, step_size=1.0, sigma=1.0, iterations=20000, smoothness=0.5,
                                constrained=True, diameter=2.0)
    sigma = gd_acc.calibrate_sigma(event, 1.0, 1e-6)
    achieved = gd_acc.account(dataclasses.replace(event, sigma=sigma), 1e-6)
    assert achieved.bound == SI and achieved.epsilon <= 1.0
    assert gd_acc.account(dataclasses.replace(event, sigma=sigma * (1 - 1e-3)), 1e-6).epsilon > 1.0


def test_noisy_gd_diameter_needs_a_constraint():
    with pytest.raises(ValueError, match="constrained=True"):
        gd_acc.NoisyGDEvent(n=10, sensitivity=2.0, step_size=1.0, sigma=1.0, iterations=5, diameter=1.0)


# ----------------------------------------------------------------------------- trainers
def _data(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.where(X @ np.ones(d) > 0, 1.0, -1.0)


def test_noisy_sgd_certificate_names_the_winner_and_why_the_others_lost():
    from dpconvex.mechanisms.noisy_sgd import noisy_sgd
    from dpconvex.objectives.constraints import L2Ball
    from dpconvex.objectives.losses import LogisticLoss

    X, y = _data()
    cert = noisy_sgd(X, y, loss=LogisticLoss(), l2_regularization=0.0, delta=1e-6, sigma=1.0, batching="cyclic",
                     batch_size=20, epochs=200, step_size=4.0, constraint=L2Ball(0.5), output="last",
                     random_state=0).certificate
    assert cert.bound == SI and cert.epsilon < cert.composition_epsilon
    assert any(note.startswith("composition lost to shifted-interpolation") for note in cert.notes)
    assert "bok-cgd not applicable: needs strong_convexity > 0" in cert.notes
    assert any(note.startswith("exact-quadratic not applicable") for note in cert.notes)
    event = acc.NoisySGDEvent(n=200, batch_size=20, batching="cyclic", epochs=200, step_size=4.0, sigma=1.0,
                              sensitivity=2.0, strong_convexity=0.0, smoothness=0.25, diameter=1.0)
    assert cert.epsilon == pytest.approx(acc.account(event, 1e-6).epsilon, rel=1e-12)


def test_noisy_sgd_clipping_keeps_the_bound_for_the_librarys_losses_and_refuses_others():
    """Clipped ½‖θ − x‖² is the Huber function of ‖θ − x‖ (convex, 1-smooth): still covered; a loss
    outside the GLM / margin / quadratic family is refused with the reason."""
    import dataclasses

    from dpconvex.accounting import noisy_sgd as accountant
    from dpconvex.mechanisms.noisy_sgd import _clipping, noisy_sgd
    from dpconvex.objectives.constraints import L2Ball
    from dpconvex.objectives.losses import QuadraticDistanceLoss

    X, _ = _data()
    result = noisy_sgd(X, np.zeros(200), loss=QuadraticDistanceLoss(), l2_regularization=0.0, delta=1e-6, sigma=1.0,
                       batching="cyclic", batch_size=20, epochs=3, step_size=0.5, constraint=L2Ball(1.0),
                       clip_norm=0.5, output="last", random_state=0)
    assert SI in result.certificate.candidates
    assert _clipping(QuadraticDistanceLoss(), 0.5) == "glm"
    assert _clipping(MultinomialLogisticLoss(3), 0.5) == "other"  # K >= 3: the clipped field is no gradient
    assert _clipping(MultinomialLogisticLoss(2), 0.5) == "glm"
    other = dataclasses.replace(_event_of(), clipping="other")
    assert any("GLM / margin" in reason for reason in accountant.unmet_conditions(other, SI))


def _event_of():
    """The accountant event of the run above, from its plan (same arguments)."""
    from dpconvex.mechanisms.noisy_sgd import plan_noisy_sgd
    from dpconvex.objectives.constraints import L2Ball
    from dpconvex.objectives.losses import QuadraticDistanceLoss

    return plan_noisy_sgd(200, 3, loss=QuadraticDistanceLoss(), l2_regularization=0.0, delta=1e-6, sigma=1.0,
                          batching="cyclic", batch_size=20, epochs=3, step_size=0.5, constraint=L2Ball(1.0),
                          clip_norm=0.5, output="last").event


def test_noisy_gd_trainer_fills_the_diameter_and_certifies_with_the_new_bound():
    from dpconvex.mechanisms.noisy_gd import noisy_gd, plan_noisy_gd
    from dpconvex.objectives.constraints import L2Ball
    from dpconvex.objectives.losses import LogisticLoss

    X, y = _data()
    common = dict(loss=LogisticLoss(), l2_regularization=0.0, delta=1e-6, sigma=0.02, step_size=4.0,
                  iterations=3000, constraint=L2Ball(0.5))
    assert plan_noisy_gd(200, 3, **common).diameter == 1.0
    cert = noisy_gd(X, y, random_state=0, **common).certificate
    assert cert.bound == SI and cert.epsilon < cert.composition_epsilon
    assert any(note.startswith("composition lost to shifted-interpolation") for note in cert.notes)
