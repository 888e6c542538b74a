"""Figures 2 and 3 of Asoodeh, Diaz, Calmon 2020: δ_t(ε) of Thm 4 against the Prop. 1 RDP curve.

Asoodeh, Diaz, Calmon, *Privacy Amplification of Iterative Algorithms via Contraction
Coefficients*, ISIT 2020, arXiv:2001.06546, §IV-D.  Both figures plot, on a log δ axis, the
per-record bound δ_t(ε) of projected noisy SGD with Gaussian noise (Thm 4,
:func:`~dpconvex.accounting.hockey_stick.pnsgd_gaussian_delta`) and the RDP comparison curve of
Prop. 1 (Feldman et al. 2018 Thm 23 for λ = 0, the shifted-Rényi form for λ > 0, converted by
Mironov's Prop. 3; :func:`~dpconvex.accounting.hockey_stick.rdp_baseline_delta`) for the first,
middle and second-to-last record, t ∈ {1, ⌊n/2⌋, n − 1}.  Figure 2 is the merely convex case
(λ = 0), Figure 3 the strongly convex one (λ > 0).  The paper's Figure 3 shows three records
"of the second half of the dataset" whose positions the stored text lost; we plot the same
records as in Figure 2, so that the two figures differ only in λ.

Setting (our choice).  The stored paper text lost every number of the figure captions (n, σ, L,
η, D and λ are blank in ``/work/shared/papers/asoodeh-diaz-calmon-2020-contraction-coefficients.txt``),
so :data:`FIGURE2_PARAMETERS` and :data:`FIGURE3_PARAMETERS` are chosen, not recovered: n = 100
records, L = 1, σ = 2 (first-step distance 2L/σ = 1), η = 0.1, β = 1, D = 0.5 (contraction
argument ρD/(ησ) = 2.5), and λ = 0 (ρ = 1) for Figure 2, λ = 0.1 (ρ = 0.99) for Figure 3.
There the two bounds differ by orders of magnitude and cross inside ε ∈ [0, 3]: Thm 4 is far
below the RDP curve at small ε for every record, the RDP curve wins for early records at larger
ε.  The ε grid is 0, 0.01, …, 3; the δ axis is clipped at 10⁻⁴⁰ (the CSV holds every
value, including exact zeros of the RDP curve).
"""

from __future__ import annotations

import csv
import os
import pathlib
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray

from dpconvex.accounting.hockey_stick import pnsgd_gaussian_delta, rdp_baseline_delta

__all__ = ["FIGURE2_PARAMETERS", "FIGURE3_PARAMETERS", "CSV_HEADER", "figure_records", "reproduce_contraction"]

_PAPER = "Asoodeh, Diaz, Calmon 2020 (arXiv:2001.06546)"
CSV_HEADER = ("figure", "record", "epsilon", "delta_contraction", "delta_rdp_baseline")
_EPSILONS = np.arange(301) / 100.0  # 0, 0.01, ..., 3: each the double nearest its decimal
_Y_FLOOR = 1e-40

#: Figure 2: merely convex loss (λ = 0, ρ = 1).  Values chosen, see the module docstring.
FIGURE2_PARAMETERS: dict[str, Any] = {
    "source": f"{_PAPER}, Figure 2 (λ = 0); numbers chosen, the stored text lost them",
    "lipschitz": 1.0,
    "sigma": 2.0,
    "step_size": 0.1,
    "smoothness": 1.0,
    "strong_convexity": 0.0,
    "diameter": 0.5,
}

#: Figure 3: strongly convex loss (λ = 0.1, ρ = 0.99), otherwise as Figure 2.
FIGURE3_PARAMETERS: dict[str, Any] = {
    **FIGURE2_PARAMETERS,
    "source": f"{_PAPER}, Figure 3 (λ > 0); numbers chosen, the stored text lost them",
    "strong_convexity": 0.1,
}


def figure_records(n: int) -> tuple[int, int, int]:
    """The plotted records t = 1, ⌊n/2⌋, n − 1 (first, middle, second to last; §IV-D).

    Parameters
    ----------
    n : int
        Dataset size, at least 3 so that the three records are distinct.

    Returns
    -------
    tuple of int
        ``(1, n // 2, n - 1)``.
    """
    if not (isinstance(n, (int, np.integer)) and n >= 3):
        raise ValueError(f"n must be an integer >= 3 (three distinct records 1, n/2, n-1); got {n!r}.")
    return 1, int(n) // 2, int(n) - 1


def _curves(params: dict[str, Any], n: int) -> dict[int, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """record t → (Thm 4 δ_t(ε), Prop. 1 δ_t(ε)) on the ε grid."""
    kw = {k: params[k] for k in ("lipschitz", "sigma", "step_size", "smoothness", "strong_convexity")}
    return {
        t: (pnsgd_gaussian_delta(_EPSILONS, n=n, record=t, diameter=params["diameter"], **kw),
            rdp_baseline_delta(_EPSILONS, n=n, record=t, **kw))
        for t in figure_records(n)
    }


def _write_csv(path: pathlib.Path, figure: str, curves: dict) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_HEADER)
        for t, (contraction, baseline) in curves.items():
            for e, dc, db in zip(_EPSILONS, contraction, baseline):
                writer.writerow((figure, t, repr(float(e)), repr(float(dc)), repr(float(db))))


def _plot(path: pathlib.Path, curves: dict, params: dict[str, Any], n: int, title: str) -> None:
    fig = Figure(figsize=(9.5, 5.0), dpi=120)
    ax = fig.add_subplot()
    for colour, (t, (contraction, baseline)) in zip(("C0", "C1", "C2"), curves.items()):
        ax.plot(_EPSILONS, np.maximum(contraction, _Y_FLOOR), color=colour, ls="-", lw=1.6,
                label=f"Thm 4 (contraction), t = {t}")
        ax.plot(_EPSILONS, np.maximum(baseline, _Y_FLOOR), color=colour, ls="--", lw=1.6,
                label=f"Prop. 1 (RDP), t = {t}")
    ax.set_yscale("log")
    ax.set_ylim(_Y_FLOOR, 2.0)
    ax.set_xlim(float(_EPSILONS[0]), float(_EPSILONS[-1]))
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"$\delta_t(\varepsilon)$")
    ax.set_title(f"{title}\nn = {n}, L = {params['lipschitz']:g}, σ = {params['sigma']:g}, "
                 f"η = {params['step_size']:g}, β = {params['smoothness']:g}, "
                 f"λ = {params['strong_convexity']:g}, D = {params['diameter']:g}", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, format="png")


def _crossover(contraction: NDArray[np.float64], baseline: NDArray[np.float64]) -> str:
    """Where on the grid Thm 4 is strictly below Prop. 1, in words."""
    better = contraction < baseline
    if better.all():
        return "below the RDP curve on all of [0, 3]"
    if not better.any():
        return "never below the RDP curve on [0, 3]"
    first_worse = float(_EPSILONS[np.argmin(better)])
    if better[0]:
        return f"below the RDP curve up to eps = {first_worse:g}"
    return f"first below at eps = {float(_EPSILONS[np.argmax(better)]):g}"


def reproduce_contraction(out_dir: str | os.PathLike, n: int = 100) -> tuple[dict[str, pathlib.Path], str]:
    """Write Figures 2 and 3 of Asoodeh et al. 2020 (PNG) and their data (CSV) to ``out_dir``.

    Parameters
    ----------
    out_dir : str or os.PathLike
        Output directory, created if missing.
    n : int, default 100
        Dataset size (= number of PNSGD steps); records 1, ⌊n/2⌋ and n − 1 are plotted.

    Returns
    -------
    paths : dict of str to pathlib.Path
        Keys ``figure2_png``, ``figure2_csv``, ``figure3_png``, ``figure3_csv``.  Each CSV has the
        header ``figure,record,epsilon,delta_contraction,delta_rdp_baseline``.
    finding : str
        One line per figure and record: δ of both bounds at ε = 1 and where Thm 4 is the smaller.
    """
    records = figure_records(n)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {f"figure{i}_{ext}": out / f"figure{i}.{ext}" for i in (2, 3) for ext in ("png", "csv")}
    at_one = int(np.argmin(np.abs(_EPSILONS - 1.0)))
    lines = []
    for number, params, case in ((2, FIGURE2_PARAMETERS, "λ = 0"), (3, FIGURE3_PARAMETERS, "λ > 0")):
        curves = _curves(params, n)
        _write_csv(paths[f"figure{number}_csv"], f"figure{number}", curves)
        _plot(paths[f"figure{number}_png"], curves, params, n,
              f"{_PAPER}, Figure {number} ({case}): Thm 4 vs Prop. 1")
        for t in records:
            contraction, baseline = curves[t]
            lines.append(f"figure{number} t={t}: at eps=1 delta {contraction[at_one]:.3g} (Thm 4) vs "
                         f"{baseline[at_one]:.3g} (Prop. 1); Thm 4 {_crossover(contraction, baseline)}")
    return paths, "\n".join(lines)
