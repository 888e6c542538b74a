"""``dpconvex account output-perturbation`` and ``dpconvex train --method`` (Chen, Lee, Kifer 2019).

Run in-process through ``dpconvex.cli.main.main``.  Expected numbers are recomputed here from the
paper's formulas (Alg. 2 replayed update by update, Prop. 2's closed form, Prop. 3's mixture,
the exact Gaussian-mechanism δ(ε)), not read from the library.  The printed sensitivities are the
replay's Δ rounded up by the rounding margin (``tests/certified.py``), and every RDP and ε is computed
from them; the printed ε are rounded up once more.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import logsumexp
from scipy.stats import norm

from certified import assert_certified
from dpconvex.accounting.rounding import round_up, round_up_array
from dpconvex.cli.main import main

# A run in the paper's notation: L smoothness, μ strong convexity, R gradient bound (difference 2R).
L, MU, R = 0.251, 0.001, 1.0


def _base(n=100, batch_size=10, epochs=3, step_size=4.0, extra=()):
    return ["account", "output-perturbation", "--n", str(n), "--batch-size", str(batch_size),
            "--epochs", str(epochs), "--step-size", str(step_size), "--smoothness", str(L),
            "--strong-convexity", str(MU), "--gradient-bound", str(R), *extra]


def _run_json(capsys, argv):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def _run_error(capsys, argv, match):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    assert out == ""
    assert err.startswith("dpconvex: error: ")
    assert match in err, err
    return err


def _batch_sizes(n, batch_size):
    m = math.ceil(n / batch_size)
    return [n // m + (1 if j < n % m else 0) for j in range(m)]


def _alg2(n, batch_size, epochs, eta0, rule, tau=None):
    """Chen et al. Alg. 2 replayed update by update: Δ[:] ← ρΔ, Δ[j] += 2ηR/|B_j|, eq. (5) averaging."""
    sizes = _batch_sizes(n, batch_size)
    m = len(sizes)
    delta, history, h = np.zeros(m), [], 0
    for s in range(1, epochs + 1):
        h += 1
        eta = {"constant": eta0, "inverse-epoch": eta0 / s, "restart": eta0 / h}[rule]
        rho = max(abs(1 - eta * MU), abs(1 - eta * L))
        for j in range(m):
            delta = rho * delta
            delta[j] += 2 * eta * R / sizes[j]
            history.append(delta.copy())
        if tau is not None and s % tau == 0:
            delta, h = np.mean(history[-m * tau:], axis=0), 0
    return delta, np.asarray(sizes) / n


def _gaussian_delta(epsilon, mu):
    """Exact δ(ε) of the Gaussian mechanism with Δ/σ = mu (Balle & Wang 2018, Thm 8)."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


def _gaussian_epsilon(delta, mu):
    """The ε with exact δ(ε) = delta (δ(ε) decreases in ε), to full precision."""
    return brentq(lambda eps: _gaussian_delta(eps, mu) - delta, 0.0, mu * mu / 2 + 40 * mu, xtol=1e-15, rtol=1e-15)


# ----------------------------------------------------------------------------- --order
@pytest.mark.parametrize("averaging", [None, 3], ids=["inverse-epoch", "restart-tau3"])
def test_order_prints_mixture_and_worst_case_rdp(capsys, averaging):
    sigma, alpha = 0.05, 8.0
    extra = ["--sigma", str(sigma), "--order", str(alpha), "--json"]
    if averaging:
        extra += ["--averaging-interval", str(averaging)]
    payload = _run_json(capsys, _base(epochs=4, extra=extra))
    assert {"rdp", "worst_case_rdp", "order", "sigma", "sensitivity_max"} <= set(payload)
    assert payload["order"] == alpha and payload["sigma"] == sigma

    delta, q = _alg2(100, 10, 4, 4.0, "restart" if averaging else "inverse-epoch", averaging)
    assert_certified(payload["sensitivity_max"], delta.max(), rel=1e-10)
    delta = round_up_array(delta)  # the RDP is computed from the certified sensitivities
    worst = alpha * delta.max() ** 2 / (2 * sigma**2)  # Lemma 1, worst batch
    mixture = logsumexp(alpha * (alpha - 1) * delta**2 / (2 * sigma**2), b=q) / (alpha - 1)  # Prop. 3
    assert payload["worst_case_rdp"] == pytest.approx(worst, rel=1e-10)
    assert payload["rdp"] == pytest.approx(min(worst, mixture), rel=1e-10)
    assert payload["rdp"] <= payload["worst_case_rdp"]


def test_order_with_unequal_batches_uses_the_batch_weights(capsys):
    # n = 23, b = 10: batches 8, 8, 7 (q = |B_j|/n, expansion 2ηR/|B_j|)
    sigma, alpha = 0.3, 4.0
    payload = _run_json(capsys, _base(n=23, batch_size=10, epochs=2, step_size=2.0,
                                      extra=["--sigma", str(sigma), "--order", str(alpha), "--json"]))
    delta, q = _alg2(23, 10, 2, 2.0, "inverse-epoch")
    assert_certified(payload["sensitivity_max"], delta.max(), rel=1e-10)
    delta = round_up_array(delta)  # the RDP is computed from the certified sensitivities
    mixture = logsumexp(alpha * (alpha - 1) * delta**2 / (2 * sigma**2), b=q) / (alpha - 1)
    assert payload["rdp"] == pytest.approx(min(mixture, alpha * delta.max() ** 2 / (2 * sigma**2)), rel=1e-10)
    assert payload["rdp"] <= payload["worst_case_rdp"]


@pytest.mark.parametrize("eta_factor", [1.0, 0.5, 1.8])
def test_constant_full_batch_worst_case_is_proposition2(capsys, eta_factor):
    """--schedule constant, one batch of n, many epochs: Δ → 2ηR/(n(1 − ρ)) (Prop. 2 with m = 1)."""
    n, sigma, alpha = 500, 0.2, 5.0
    eta = eta_factor * 2.0 / (L + MU) if eta_factor <= 1.0 else eta_factor / L  # 1.8/L < 2/L
    rho = max(abs(1 - eta * MU), abs(1 - eta * L))
    epochs = int(np.ceil(40 / -np.log(rho)))  # ρ^T < e^-40: the finite sum equals the limit
    payload = _run_json(capsys, _base(n=n, batch_size=n, epochs=epochs, step_size=eta,
                                      extra=["--schedule", "constant", "--sigma", str(sigma),
                                             "--order", str(alpha), "--json"]))
    delta = 2 * eta * R / (n * (1 - rho))
    if eta_factor == 1.0:
        assert delta == pytest.approx(2 * R / (n * MU), rel=1e-12)  # Prop. 2: η = 2/(L + μ)
    assert_certified(payload["sensitivity_max"], delta, rel=1e-9)
    certified = round_up(delta)  # the RDP is computed from the certified sensitivity
    assert payload["worst_case_rdp"] == pytest.approx(alpha * certified**2 / (2 * sigma**2), rel=1e-9)
    assert payload["rdp"] == pytest.approx(payload["worst_case_rdp"], rel=1e-12)  # m = 1: no mixture gain


# ----------------------------------------------------------------------------- --delta
@pytest.mark.parametrize("averaging", [None, 2], ids=["inverse-epoch", "restart-tau2"])
def test_delta_prints_epsilon_and_exact_worst_case_epsilon(capsys, averaging):
    sigma, delta = 0.08, 1e-6
    extra = ["--sigma", str(sigma), "--delta", str(delta), "--json"]
    if averaging:
        extra += ["--averaging-interval", str(averaging)]
    payload = _run_json(capsys, _base(n=400, batch_size=10, epochs=2, extra=extra))
    assert {"epsilon", "worst_case_epsilon", "delta", "bound", "candidates"} <= set(payload)
    assert payload["delta"] == delta
    assert 0 < payload["epsilon"] <= payload["worst_case_epsilon"]
    assert payload["epsilon"] == min(payload["candidates"].values())
    assert set(payload["candidates"]) == {"worst-case", "mixture"}
    # worst case = the Gaussian mechanism with the certified sensitivity max Δ (the replay's, rounded up):
    # its exact ε at the target δ, rounded up
    sens, _ = _alg2(400, 10, 2, 4.0, "restart" if averaging else "inverse-epoch", averaging)
    assert_certified(payload["sensitivity_max"], sens.max(), rel=1e-10)
    mu = payload["sensitivity_max"] / sigma
    assert_certified(payload["worst_case_epsilon"], _gaussian_epsilon(delta, mu), rel=1e-9)
    assert payload["candidates"]["worst-case"] == pytest.approx(payload["worst_case_epsilon"], rel=1e-12)


def test_mixture_beats_worst_case_with_many_batches(capsys):
    payload = _run_json(capsys, _base(n=400, batch_size=10, epochs=2,
                                      extra=["--sigma", "0.1", "--delta", "1e-5", "--json"]))
    assert payload["bound"] == "mixture"
    assert payload["epsilon"] < payload["worst_case_epsilon"]


def test_target_epsilon_calibrates_sigma_without_overshooting(capsys):
    target, delta = 0.5, 1e-6
    argv = _base(n=400, batch_size=10, epochs=3, extra=["--averaging-interval", "3"])
    payload = _run_json(capsys, argv + ["--target-epsilon", str(target), "--delta", str(delta), "--json"])
    sigma = payload["sigma"]
    assert sigma > 0 and payload["epsilon"] <= target
    assert payload["epsilon"] == pytest.approx(target, rel=1e-3)
    again = _run_json(capsys, argv + ["--sigma", repr(sigma), "--delta", str(delta), "--json"])
    assert again["epsilon"] == pytest.approx(payload["epsilon"], rel=1e-12)
    less_noise = _run_json(capsys, argv + ["--sigma", repr(0.99 * sigma), "--delta", str(delta), "--json"])
    assert less_noise["epsilon"] > target


def test_human_readable_output(capsys):
    assert main(_base(extra=["--sigma", "0.1", "--delta", "1e-5"])) == 0
    out = capsys.readouterr().out
    assert "epsilon: " in out and "worst_case_epsilon: " in out


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("extra, match", [
    (["--delta", "1e-5"], "--sigma"),  # neither sigma nor target
    (["--sigma", "1", "--target-epsilon", "1", "--delta", "1e-5"], "--sigma"),  # both
    (["--schedule", "constant", "--averaging-interval", "2", "--sigma", "1", "--delta", "1e-5"],
     "--averaging-interval"),
    (["--target-epsilon", "1", "--order", "4"], "--delta"),
    (["--sigma", "1", "--order", "1"], "--order"),
    (["--sigma", "1", "--delta", "1.5"], "delta"),
    (["--sigma", "1", "--delta", "1e-5", "--gradient-bound", "-1"], "gradient_difference"),
], ids=["missing-sigma", "sigma-and-target", "averaging-with-constant", "target-without-delta", "order-1",
        "delta>1", "negative-gradient-bound"])
def test_invalid_input_exits_2(capsys, extra, match):
    _run_error(capsys, _base() + extra, match)


def test_batch_size_above_n_exits_2(capsys):
    _run_error(capsys, _base(n=50, batch_size=51, extra=["--sigma", "1", "--delta", "1e-5"]), "batch_size")


def test_missing_required_option_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["account", "output-perturbation", "--n", "10", "--sigma", "1", "--delta", "1e-5"])
    assert info.value.code == 2


# ----------------------------------------------------------------------------- train --method
def test_train_rsgd_ar_on_adult(capsys):
    payload = _run_json(capsys, ["train", "--method", "rsgd_ar", "--epsilon", "0.1", "--json", "--seed", "0"])
    assert payload["dataset"] == "adult"
    assert payload["test_accuracy"] > 0.77
    assert payload["epsilon"] <= 0.1
    certificate = payload["certificate"]
    assert certificate["mechanism"] == "rsgd_ar"
    assert set(certificate["candidates"]) == {"worst-case", "mixture"}
    assert certificate["epsilon"] == payload["epsilon"]
    assert certificate["assumptions"]["permuted"] is True
    assert max(certificate["assumptions"]["batch_sizes"]) <= 4000  # Chen et al. §5 batch size


def test_train_nsgd_huber_on_adult(capsys):
    # (OutPert-GD is not run on Adult here: its "auto" T = ⌈log n / −log ρ⌉ is 1305 full-gradient
    # epochs for the logistic loss (24 s) and 5200 for the huber loss (75 s) at λ = 1e-3.)
    payload = _run_json(capsys, ["train", "--method", "nsgd", "--model", "huber", "--epsilon", "1",
                                 "--json", "--seed", "0"])
    assert payload["certificate"]["mechanism"] == "nsgd"
    assert payload["certificate"]["assumptions"]["permuted"] is False
    assert payload["epsilon"] <= 1.0
    assert set(payload["certificate"]["candidates"]) == {"worst-case"}


def test_train_rejects_unknown_method(capsys):
    with pytest.raises(SystemExit) as info:
        main(["train", "--method", "sgd"])
    assert info.value.code == 2
