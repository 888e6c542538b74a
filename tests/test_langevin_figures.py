"""Tests for the reproduction of Figures 1–2 of Chourasia, Ye, Shokri 2021 (arXiv:2102.05855).

Golden values are written out below from the closed forms printed in the paper's captions
(Figure 1 caption: Cor. 1 and the App. E composition bound; Figure 2 caption / App. E: Cor. 2
eq. (72), the Thm 3 proof's exact divergence and its lower bound), not from dpconvex.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict

import numpy as np
import pytest

from dpconvex.accounting.gdp import gdp_rdp, noisy_gd_mu
from dpconvex.accounting.langevin import exact_quadratic_rdp
from dpconvex_lab.langevin_figures import (
    FIGURE1_PARAMETERS,
    FIGURE2_PARAMETERS,
    reproduce_langevin,
    theorem3_lower_bound_rdp,
)

N, S_G, ETA, SIGMA = 5000, 4.0, 0.02, 0.02
KS = list(range(1, 301))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return reproduce_langevin(tmp_path_factory.mktemp("langevin") / "nested")


def _read(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def _curves(path):
    """{(curve, alpha, lambda): {K: rdp}} from a figure CSV."""
    out = defaultdict(dict)
    for k, name, alpha, lam, rdp in _read(path)[1]:
        out[(name, float(alpha), float(lam) if lam else None)][int(k)] = float(rdp)
    return out


@pytest.fixture(scope="module")
def fig1(outputs):
    return _curves(outputs["figure1_csv"])


@pytest.fixture(scope="module")
def fig2(outputs):
    return _curves(outputs["figure2_csv"])


def test_files_exist_and_pngs_valid(outputs):
    assert set(outputs) == {"figure1_png", "figure1_csv", "figure2_png", "figure2_csv"}
    for key, path in outputs.items():
        assert path.is_file() and path.name == key.replace("_", ".")
    for key in ("figure1_png", "figure2_png"):
        data = outputs[key].read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 10_000


def test_csv_header_and_row_counts(outputs, fig1, fig2):
    for key, n_curves in (("figure1_csv", 5 + 5 + 3), ("figure2_csv", 4 * 3)):
        header, rows = _read(outputs[key])
        assert header == ["K", "curve", "alpha", "lambda", "rdp"]
        assert len(rows) == n_curves * 300
    assert sorted({name for name, _, _ in fig1}) == ["composition", "corollary1", "gdp_bok2024"]
    assert {key for key in fig1 if key[0] == "composition"} == {("composition", a, None) for a in (10.0, 20.0, 30.0)}
    assert sorted({name for name, _, _ in fig2}) == ["composition", "corollary2", "exact", "theorem3_lower_bound"]
    assert {lam for _, _, lam in fig2} == {1.0}
    for curve in [*fig1.values(), *fig2.values()]:
        assert sorted(curve) == KS


def test_parameters_match_captions():
    for params in (FIGURE1_PARAMETERS, FIGURE2_PARAMETERS):
        assert (params["n"], params["sensitivity"], params["step_size"], params["sigma"]) == (N, S_G, ETA, SIGMA)
        assert params["iterations"] == (1, 300)
    assert FIGURE1_PARAMETERS["smoothness"] == 4.0
    assert [tuple(p) for p in FIGURE1_PARAMETERS["pairs"]] == [(30, 1), (20, 1), (10, 1), (10, 2), (10, 4)]
    assert FIGURE2_PARAMETERS["strong_convexity"] == FIGURE2_PARAMETERS["smoothness"] == 1.0


def _close(a, b):
    assert a == pytest.approx(b, rel=1e-12, abs=0.0)


def test_golden_values(fig1, fig2):
    # Figure 1 caption, "our analysis": α S_g²/(λ σ² n²)·(1 − e^{−ληK/2}); α=10, λ=1, K=300.
    _close(fig1[("corollary1", 10.0, 1.0)][300],
           10 * 16 / (1 * 0.02**2 * 5000**2) * (1 - math.exp(-1 * 0.02 * 300 / 2)))
    # Same, α=10, λ=4, K=25.
    _close(fig1[("corollary1", 10.0, 4.0)][25], 10 * 16 / (4 * 0.02**2 * 5000**2) * (1 - math.exp(-4 * 0.02 * 25 / 2)))
    # Figure 1/2 captions, composition (App. E): α S_g²/(4 n² σ²)·ηK; α=30, K=300 gives 0.072.
    _close(fig1[("composition", 30.0, None)][300], 30 * 16 / (4 * 5000**2 * 0.02**2) * 0.02 * 300)
    _close(fig1[("composition", 30.0, None)][300], 0.072)
    _close(fig2[("composition", 20.0, 1.0)][77], 20 * 16 / (4 * 5000**2 * 0.02**2) * 0.02 * 77)
    # Bok et al. 2024 strongly convex NoisyGD, m=λ=2, M=β=4: c = max(|1−ηm|, |1−ηM|) = 0.96,
    # μ² = (ηS_g/n)²/(2ησ²)·(1+c)/(1−c)·(1−c^K)/(1+c^K), RDP α μ²/2; α=10, K=300.
    c = 0.96
    mu2 = (0.02 * 4 / 5000) ** 2 / (2 * 0.02 * 0.02**2) * (1 + c) / (1 - c) * (1 - c**300) / (1 + c**300)
    _close(fig1[("gdp_bok2024", 10.0, 2.0)][300], 10 * mu2 / 2)
    # Cor. 2, eq. (72): α S_g²/((2−η) σ² n²)·(1 − e^{−(2−η)ηK/2}); α=20, K=150.
    _close(fig2[("corollary2", 20.0, 1.0)][150],
           20 * 16 / (1.98 * 0.02**2 * 5000**2) * (1 - math.exp(-1.98 * 0.02 * 150 / 2)))
    # Thm 3 lower bound (last line of its proof): α S_g²/(4σ²n²)·(1 − e^{−ηK}); α=10, K=100.
    _close(fig2[("theorem3_lower_bound", 10.0, 1.0)][100], 10 * 16 / (4 * 0.02**2 * 5000**2) * (1 - math.exp(-2.0)))
    # Thm 3 proof, first line, with explicit sums: α‖ηΔ Σ(1−η)^i‖²/(2·2ησ²n² Σ(1−η)^{2i}), ‖Δ‖=S_g.
    k = 50
    s1 = sum(0.98**i for i in range(k))
    s2 = sum(0.98 ** (2 * i) for i in range(k))
    assert fig2[("exact", 30.0, 1.0)][k] == pytest.approx(
        30 * (0.02 * 4 * s1) ** 2 / (4 * 0.02 * 0.02**2 * 5000**2 * s2), rel=1e-10)


def test_exact_curve_is_bok_gdp_with_unit_curvature(fig2):
    # The Figure 2 label claims exact == Bok et al. with m = M = 1.
    for k in (1, 7, 100, 300):
        mu = noisy_gd_mu(N, S_G, ETA, SIGMA, k, 1.0, 1.0)
        _close(fig2[("exact", 20.0, 1.0)][k], float(gdp_rdp([20.0], float(mu))[0]))


def test_figure1_composition_exceeds_corollary1_at_300(fig1):
    assert fig1[("composition", 30.0, None)][300] > fig1[("corollary1", 30.0, 1.0)][300]


def test_figure1_gdp_below_corollary1_everywhere(fig1):
    for alpha, lam in FIGURE1_PARAMETERS["pairs"]:
        gdp, cor1 = fig1[("gdp_bok2024", float(alpha), float(lam))], fig1[("corollary1", float(alpha), float(lam))]
        ratio = np.array([gdp[k] / cor1[k] for k in KS])
        # K=1: GDP = one Gaussian step = composition ≈ Cor. 1 / 2; K→∞: (2 − ηλ)/4 ≈ 1/2.
        assert np.all(ratio <= 1.0) and np.all(ratio < 0.65)


def test_figure2_exact_between_lower_bound_and_corollary2(fig2):
    for alpha in (10.0, 20.0, 30.0):
        lower, exact, cor2 = (fig2[(name, alpha, 1.0)] for name in ("theorem3_lower_bound", "exact", "corollary2"))
        assert all(lower[k] <= exact[k] <= cor2[k] for k in KS)
        ratio = np.array([cor2[k] / exact[k] for k in KS])
        assert np.all((ratio >= 1.0) & (ratio <= 2.05))
        # What the closed forms imply: ratio ≈ 2 at K=1 (exact = one composition step) and →
        # 4/(2−η)² ≈ 1.0203 as K→∞ (1.0224 at K=300); so "1.4–2×" only holds for K ≲ 50 (1.38 at K=50).
        assert ratio[0] > 1.95
        assert 4 / (2 - ETA) ** 2 < ratio[-1] < 1.03
        assert np.all(np.diff(ratio) < 0)
        # And the plotted lower bound, not Cor. 2, carries most of the paper's "factor two" gap at large K.
        assert exact[300] / lower[300] > 1.95


def test_figure2_composition_overtakes_corollary2(fig2):
    crossings = set()
    for alpha in (10.0, 20.0, 30.0):
        comp, cor2 = fig2[("composition", alpha, 1.0)], fig2[("corollary2", alpha, 1.0)]
        above = [k for k in KS if comp[k] > cor2[k]]
        first = above[0]
        assert 50 <= first <= 300
        assert above == list(range(first, 301))  # stays above once it crosses
        crossings.add(first)
    # Every curve is linear in α, so the crossing (K = 81 here) does not depend on α.
    assert crossings == {81}


def test_theorem3_lower_bound_function():
    orders = np.array([2.0, 10.0, 64.0])
    for k in (1, 30, 1000):
        lb = theorem3_lower_bound_rdp(orders, N, S_G, SIGMA, ETA, k)
        assert lb.shape == (3,)
        assert np.all(lb <= exact_quadratic_rdp(orders, N, S_G, SIGMA, ETA, k) * (1 + 1e-12))
    with pytest.raises(ValueError):
        theorem3_lower_bound_rdp([1.0], N, S_G, SIGMA, ETA, 10)
