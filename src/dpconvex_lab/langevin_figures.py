"""Figures 1 and 2 of Chourasia, Ye, Shokri 2021, plus the exact GDP curves of Bok et al. 2024.

Chourasia, Ye, Shokri, *Differential Privacy Dynamics of Langevin Diffusion and Noisy Gradient
Descent*, NeurIPS 2021, arXiv:2102.05855 — Figure 1 (Corollary 1 vs. the App. E composition
baseline) and Figure 2 (Corollary 2 vs. the Theorem 3 lower bound and composition).  We add the
exact μ-GDP bound of Bok, Su, Altschuler 2024 (arXiv:2403.00278) to Figure 1 and the exact
divergence of the Theorem 3 proof to Figure 2.  Every curve comes from
:mod:`dpconvex.accounting`, except the plotted lower bound (:func:`theorem3_lower_bound_rdp`),
which appears only in the paper's Figure 2.
"""

from __future__ import annotations

import csv
import os
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from numpy.typing import ArrayLike, NDArray

from dpconvex.accounting._checks import check_orders
from dpconvex.accounting.gdp import gdp_rdp, noisy_gd_mu
from dpconvex.accounting.langevin import (
    composition_rdp,
    corollary1_rdp,
    corollary2_rdp,
    exact_quadratic_rdp,
)

__all__ = ["FIGURE1_PARAMETERS", "FIGURE2_PARAMETERS", "theorem3_lower_bound_rdp", "reproduce_langevin"]

_PAPER = "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855)"
CSV_HEADER = ("K", "curve", "alpha", "lambda", "rdp")

#: Figure 1 caption: λ-strongly convex, β-smooth loss; Cor. 1 for the (α, λ) pairs, composition for α.
FIGURE1_PARAMETERS: dict[str, Any] = {
    "source": f"{_PAPER}, Figure 1 caption",
    "n": 5000,
    "sensitivity": 4.0,
    "step_size": 0.02,
    "sigma": 0.02,
    "smoothness": 4.0,
    "iterations": (1, 300),
    "pairs": ((30, 1.0), (20, 1.0), (10, 1.0), (10, 2.0), (10, 4.0)),
    "composition_orders": (10, 20, 30),
}

#: Figure 2 caption: ½‖θ − x‖² on R^d (λ = β = 1), θ₀ = 0.
FIGURE2_PARAMETERS: dict[str, Any] = {
    "source": f"{_PAPER}, Figure 2 caption",
    "n": 5000,
    "sensitivity": 4.0,
    "step_size": 0.02,
    "sigma": 0.02,
    "strong_convexity": 1.0,
    "smoothness": 1.0,
    "iterations": (1, 300),
    "orders": (10, 20, 30),
}

#: One plotted curve: (CSV name, α, λ or None, ε at each K).
_Curve = tuple[str, float, "float | None", NDArray[np.float64]]


def theorem3_lower_bound_rdp(
    orders: ArrayLike, n: int, sensitivity: float, sigma: float, step_size: float, iterations: int
) -> NDArray[np.float64]:
    """Lower bound of Chourasia et al. Thm 3 as plotted in their Figure 2 (eq. (17)/(70)).

    ``ε(α) = α S_g² / (4 σ² n²) · (1 − exp(−η K))``: the last line of the Thm 3 proof (App. E),
    a lower bound on the exact divergence :func:`~dpconvex.accounting.langevin.exact_quadratic_rdp`
    of noisy GD on ½‖θ − x‖² with θ₀ = 0.  It is not a privacy guarantee.

    Parameters
    ----------
    orders : array_like
        Rényi orders α > 1.
    n, sensitivity, sigma, step_size, iterations
        Dataset size, S_g, σ, η and K in the convention of Chourasia et al. Alg. 1.

    Returns
    -------
    numpy.ndarray
        ε for each order.
    """
    return check_orders(orders) * sensitivity**2 / (4.0 * sigma**2 * n**2) * -np.expm1(-step_size * iterations)


def _series(fn: Callable[[int], ArrayLike], ks: NDArray[np.int64]) -> NDArray[np.float64]:
    """Evaluate a scalar-K accounting call (single order) at every K."""
    return np.array([float(np.asarray(fn(int(k))).reshape(-1)[0]) for k in ks])


def _ks(params: dict[str, Any]) -> NDArray[np.int64]:
    lo, hi = params["iterations"]
    return np.arange(lo, hi + 1)


def _figure1_curves(ks: NDArray[np.int64]) -> list[_Curve]:
    p = FIGURE1_PARAMETERS
    common = dict(n=p["n"], sensitivity=p["sensitivity"], sigma=p["sigma"], step_size=p["step_size"])

    def gdp(alpha: float, lam: float, k: int) -> NDArray[np.float64]:
        mu = noisy_gd_mu(p["n"], p["sensitivity"], p["step_size"], p["sigma"], k, lam, p["smoothness"])
        return gdp_rdp([alpha], float(mu))

    curves: list[_Curve] = []
    for alpha, lam in p["pairs"]:
        cor1 = _series(lambda k: corollary1_rdp([alpha], iterations=k, strong_convexity=lam, **common), ks)
        curves.append(("corollary1", alpha, lam, cor1))
    for alpha, lam in p["pairs"]:
        curves.append(("gdp_bok2024", alpha, lam, _series(lambda k: gdp(alpha, lam, k), ks)))
    for alpha in p["composition_orders"]:
        comp = _series(lambda k: composition_rdp([alpha], iterations=k, **common), ks)
        curves.append(("composition", alpha, None, comp))
    return curves


def _figure2_curves(ks: NDArray[np.int64]) -> list[_Curve]:
    p = FIGURE2_PARAMETERS
    common = dict(n=p["n"], sensitivity=p["sensitivity"], sigma=p["sigma"], step_size=p["step_size"])
    fns = {
        "corollary2": corollary2_rdp,
        "theorem3_lower_bound": theorem3_lower_bound_rdp,
        "composition": composition_rdp,
        "exact": exact_quadratic_rdp,
    }
    return [
        (name, alpha, p["strong_convexity"], _series(lambda k: fn([alpha], iterations=k, **common), ks))
        for name, fn in fns.items()
        for alpha in p["orders"]
    ]


def _write_csv(path: pathlib.Path, ks: NDArray[np.int64], curves: list[_Curve]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_HEADER)
        for name, alpha, lam, values in curves:
            lam_txt = "" if lam is None else f"{float(lam):g}"
            for k, v in zip(ks, values):
                writer.writerow((int(k), name, f"{float(alpha):g}", lam_txt, repr(float(v))))


def _plot(path: pathlib.Path, ks: NDArray[np.int64], curves: list[_Curve], key_of: Callable, labels: dict,
          styles: dict[str, tuple[str, dict]], title: str, ymax: float | None = None) -> None:
    """Draw one figure: colour encodes ``key_of(alpha, lambda)``, line style encodes the curve."""
    colours = dict(zip(labels, ["C0", "C1", "C2", "C3", "C4", "C5"]))
    fig = Figure(figsize=(7.5, 5.0), dpi=120)
    ax = fig.add_subplot()
    for name, alpha, lam, values in curves:
        ax.plot(ks, values, color=colours[key_of(alpha, lam)], **{"lw": 1.6, **styles[name][1]})
    ax.set_xlabel("K")
    ax.set_ylabel(r"$\varepsilon$ in $(\alpha, \varepsilon)$-Rényi Differential Privacy")
    ax.set_title(title, fontsize=10)
    ax.set_xlim(0, int(ks[-1]))
    ax.set_ylim(0.0, ymax)
    ax.grid(alpha=0.3)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, -2))
    ax.add_artist(ax.legend(handles=[Line2D([], [], color=colours[k], label=lbl) for k, lbl in labels.items()],
                            loc="upper left", fontsize=8))
    ax.legend(handles=[Line2D([], [], color="black", label=lbl, **kw) for lbl, kw in styles.values()],
              loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")


def reproduce_langevin(out_dir: str | os.PathLike) -> dict[str, pathlib.Path]:
    """Write Figures 1 and 2 of Chourasia et al. 2021 (PNG) and their data (CSV) to ``out_dir``.

    Figure 1 (:data:`FIGURE1_PARAMETERS`): Corollary 1 ("our bound") for each (α, λ), the App. E
    composition baseline for each α, and the exact μ-GDP bound of Bok et al. 2024 with m = λ,
    M = β = 4, as RDP α μ²/2.  Figure 2 (:data:`FIGURE2_PARAMETERS`): Corollary 2, the Theorem 3
    lower bound (:func:`theorem3_lower_bound_rdp`), composition and the exact divergence
    (Thm 3 proof, equal to Bok et al. with m = M = 1).  As in the paper, Figure 2's y-axis stops
    at 2.6·10⁻² and so clips the composition curves; the CSV holds every value.

    Parameters
    ----------
    out_dir : str or os.PathLike
        Output directory, created if missing.

    Returns
    -------
    dict of str to pathlib.Path
        Keys ``figure1_png``, ``figure1_csv``, ``figure2_png``, ``figure2_csv``.  Each CSV is long
        format with header ``K,curve,alpha,lambda,rdp`` (``lambda`` empty for composition in
        Figure 1); ``curve`` is one of ``corollary1``, ``gdp_bok2024``, ``composition``
        (Figure 1) or ``corollary2``, ``theorem3_lower_bound``, ``composition``, ``exact``.
    """
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {f"figure{i}_{ext}": out / f"figure{i}.{ext}" for i in (1, 2) for ext in ("png", "csv")}

    ks1 = _ks(FIGURE1_PARAMETERS)
    curves1 = _figure1_curves(ks1)
    _write_csv(paths["figure1_csv"], ks1, curves1)
    pairs = FIGURE1_PARAMETERS["pairs"]
    _plot(
        paths["figure1_png"], ks1, curves1,
        key_of=lambda a, lam: (a, 1.0 if lam is None else lam),
        labels={(a, lam): f"α = {a}, λ = {lam:g}" for a, lam in pairs},
        styles={
            "corollary1": ("Our bound (Cor. 1)", {"ls": "-"}),
            "composition": ("Composition (App. E)", {"ls": "--"}),
            "gdp_bok2024": ("exact GDP (Bok et al. 2024)", {"ls": ":"}),
        },
        title=f"{_PAPER}, Figure 1: noisy GD, λ-strongly convex, β = 4,\n"
        "n = 5000, $S_g$ = 4, η = σ = 0.02 (composition coloured by α, λ-free)",
    )

    ks2 = _ks(FIGURE2_PARAMETERS)
    curves2 = _figure2_curves(ks2)
    _write_csv(paths["figure2_csv"], ks2, curves2)
    _plot(
        paths["figure2_png"], ks2, curves2,
        key_of=lambda a, lam: a,
        labels={a: f"α = {a}" for a in FIGURE2_PARAMETERS["orders"]},
        styles={
            "corollary2": ("our bound (Cor. 2)", {"ls": "-"}),
            "theorem3_lower_bound": ("lower bound (Thm 3)", {"ls": "--"}),
            "composition": ("composition (App. E)", {"ls": "-."}),
            "exact": ("exact (Thm 3 proof / Bok et al.)", {"ls": ":", "lw": 2.2}),
        },
        title=f"{_PAPER}, Figure 2: noisy GD on ½‖θ − x‖²,\n"
        "n = 5000, $S_g$ = 4, η = σ = 0.02 (composition clipped as in the paper)",
        ymax=0.026,
    )
    return paths
