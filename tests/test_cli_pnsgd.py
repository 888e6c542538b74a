"""``dpconvex account pnsgd`` and ``dpconvex reproduce contraction``, run in-process through ``main``.

Oracle: for n = 1 the released iterate is one projected Gaussian step, so record 1's bound is the
hockey-stick divergence of N(0, (ησ)²) and N(2ηL, (ησ)²) (Asoodeh et al., arXiv:2001.06546,
Thm 4 with no contraction factor), integrated here by quadrature of (p − e^ε q)_+.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpconvex.accounting import hockey_stick
from dpconvex.cli.main import main

LOSS = dict(lipschitz=1.0, smoothness=1.0, strong_convexity=0.1, step_size=0.1, diameter=0.5)
N, SIGMA, SCALE = 20, 2.0, 0.8


def _argv(n: int = N, noise: str = "gaussian", level: float | None = None, **extra: object) -> list[str]:
    loss = {**LOSS, **{k: v for k, v in extra.items() if k in LOSS}}
    argv = ["account", "pnsgd", "--n", str(n), "--noise", noise]
    for name, value in loss.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    argv += ["--sigma" if noise == "gaussian" else "--scale", str(level or (SIGMA if noise == "gaussian" else SCALE))]
    for name, value in extra.items():
        if name not in LOSS:
            argv += [f"--{name.replace('_', '-')}"] + ([] if value is True else [str(value)])
    return argv


def _run_json(capsys, argv: list[str]) -> dict:
    status = main(argv + ["--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


@pytest.mark.parametrize("record", [1, 7, N])
@pytest.mark.parametrize("epsilon", [0.3, 1.0])
def test_gaussian_delta_and_baseline_equal_the_accounting_functions(capsys, record, epsilon):
    payload = _run_json(capsys, _argv(record=record, epsilon=epsilon))
    assert {"delta", "delta_rdp_baseline", "record", "theorem", "epsilon", "noise", "rho"} <= set(payload)
    kw = dict(n=N, record=record, sigma=SIGMA, **LOSS)
    assert payload["delta"] == float(hockey_stick.pnsgd_gaussian_delta(epsilon, **kw))
    kw.pop("diameter")
    assert payload["delta_rdp_baseline"] == float(hockey_stick.rdp_baseline_delta(epsilon, **kw))
    assert payload["record"] == record and payload["epsilon"] == epsilon and payload["noise"] == "gaussian"
    assert payload["theorem"].endswith("Thm 4")
    assert payload["rho"] == hockey_stick.gradient_step_lipschitz(0.1, 1.0, 0.1) == pytest.approx(0.99)


def test_default_record_is_the_worst_and_laplace_has_no_baseline(capsys):
    gaussian = _run_json(capsys, _argv(epsilon=0.5))
    assert gaussian["record"] == N
    laplace = _run_json(capsys, _argv(noise="laplace", epsilon=0.5))
    assert laplace["record"] == N and laplace["theorem"].endswith("Thm 3")
    assert laplace["delta"] == float(hockey_stick.pnsgd_laplace_delta(0.5, n=N, record=N, scale=SCALE, **LOSS))
    assert laplace["delta_rdp_baseline"] is None and "Gaussian noise only" in laplace["note"]


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_random_stop_reports_theorem5_at_record_one(capsys, noise):
    payload = _run_json(capsys, _argv(noise=noise, epsilon=0.5, random_stop=True))
    key, level = ("sigma", SIGMA) if noise == "gaussian" else ("scale", SCALE)
    assert payload["record"] == 1 and "Thm 5" in payload["theorem"]
    assert payload["delta"] == float(hockey_stick.pnsgd_random_stop_delta(0.5, n=N, **{key: level}, **LOSS))
    assert payload["delta_rdp_baseline"] is None and "note" in payload


@pytest.mark.parametrize("epsilon", [0.0, 0.4, 2.0])
def test_single_step_equals_gaussian_hockey_stick_by_quadrature(capsys, epsilon):
    eta, sigma, lip = 0.3, 1.5, 0.7
    payload = _run_json(capsys, ["account", "pnsgd", "--n", "1", "--record", "1", "--lipschitz", str(lip),
                                 "--smoothness", "2", "--step-size", str(eta), "--sigma", str(sigma),
                                 "--diameter", "3", "--noise", "gaussian", "--epsilon", str(epsilon)])
    s, shift, gamma = eta * sigma, 2.0 * eta * lip, math.exp(epsilon)
    p, q = stats.norm(0.0, s).pdf, stats.norm(shift, s).pdf
    crossing = (shift**2 - 2.0 * s**2 * epsilon) / (2.0 * shift)  # p = γq here; (p − γq)_+ = 0 beyond
    integrand = lambda x: max(p(x) - gamma * q(x), 0.0)
    oracle = sum(integrate.quad(integrand, a, b, epsabs=1e-14, epsrel=1e-12)[0]
                 for a, b in ((-np.inf, crossing), (crossing, np.inf)))
    assert payload["delta"] == pytest.approx(oracle, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("random_stop", [False, True])
def test_delta_mode_prints_epsilon_of_account_pnsgd(capsys, random_stop):
    extra = {"random_stop": True} if random_stop else {"record": 5}
    payload = _run_json(capsys, _argv(delta=1e-6, **extra))
    expected = hockey_stick.account_pnsgd(hockey_stick.PNSGDEvent(
        n=N, sigma=SIGMA, record=None if random_stop else 5, random_stop=random_stop, **LOSS), 1e-6)
    assert payload["epsilon"] == expected.epsilon and payload["delta"] == 1e-6
    assert payload["theorem"] == expected.theorem
    if not random_stop:
        kw = dict(n=N, record=5, sigma=SIGMA, **{k: v for k, v in LOSS.items() if k != "diameter"})
        rdp_eps = payload["epsilon_rdp_baseline"]
        assert float(hockey_stick.rdp_baseline_delta(rdp_eps, **kw)) <= 1e-6
        assert float(hockey_stick.rdp_baseline_delta(rdp_eps * (1 - 1e-6), **kw)) > 1e-6


@pytest.mark.parametrize(
    ("extra", "name"),
    [
        ({"diameter": 0.0, "epsilon": 1.0}, "diameter"),
        ({"diameter": -1.0, "epsilon": 1.0}, "diameter"),
        ({"record": 0, "epsilon": 1.0}, "record"),
        ({"record": N + 1, "epsilon": 1.0}, "record"),
        ({"noise": "laplace", "dimension": 2, "epsilon": 1.0}, "dimension"),
        ({"noise": "laplace", "dimension": 2, "random_stop": True, "epsilon": 1.0}, "dimension"),
        ({"random_stop": True, "record": 3, "epsilon": 1.0}, "record"),
        ({"epsilon": -0.5}, "epsilon"),
        ({"epsilon": "inf"}, "epsilon"),
        ({"delta": 1.5}, "delta"),
        ({"step_size": 0.0, "epsilon": 1.0}, "step_size"),
        ({"strong_convexity": 2.0, "epsilon": 1.0}, "smoothness"),
    ],
)
def test_bad_input_exits_2_naming_the_parameter(capsys, extra, name):
    noise = extra.pop("noise", "gaussian")
    status = main(_argv(noise=noise, **extra))
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith("dpconvex: error: ") and name in err


def test_noise_level_must_match_the_noise_family(capsys):
    argv = _argv(epsilon=1.0)
    argv[argv.index("--sigma")] = "--scale"
    assert main(argv) == 2
    assert "--sigma" in capsys.readouterr().err


def test_reproduce_contraction_via_cli(capsys, tmp_path):
    assert main(["reproduce", "contraction", "--out", str(tmp_path), "--n", "6"]) == 0  # JSON by default
    payload = json.loads(capsys.readouterr().out)
    assert {"figure2_png", "figure2_csv", "figure3_png", "figure3_csv", "finding"} <= set(payload)
    assert "t=3" in payload["finding"] and "t=5" in payload["finding"]
    assert main(["reproduce", "contraction", "--out", str(tmp_path), "--n", "2"]) == 2
    assert "n must be an integer >= 3" in capsys.readouterr().err
    assert main(["reproduce", "langevin", "--out", str(tmp_path), "--n", "6"]) == 2
    assert "--n applies to the contraction figures only" in capsys.readouterr().err
