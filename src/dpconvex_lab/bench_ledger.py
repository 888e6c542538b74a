"""The ledger scenario: ten releases from one dataset, their total by each accountant (``dpconvex bench ledger``).

Two scenarios on UCI Adult (``load_adult("all")``, δ = 1e-8 per release, ten fits with fresh seeds):
ten fits of the default ``PrivateLogisticRegression`` at ε = 0.1 (Poisson noisy SGD certified by
the PLD) and ten of ``method="noisy_gd"`` at ε = 0.1 (μ-GDP certificates).  Every total is read at
the same δ, that of diffprivlib's advanced composition with slack 1e-7: 1 − (1 − 1e-7)(1 − 1e-8)¹⁰.

Totals compared:

* ``ledger``: :meth:`dpconvex.privacy.ledger.PrivacyLedger.total` (its method named);
* ``diffprivlib basic`` / ``diffprivlib advanced``: the formulas of diffprivlib's
  ``BudgetAccountant.total`` (version 0.6.6, transcribed: the package does not import with
  scikit-learn 1.9): Σε with slack 0; with slack s the least of Σε, Dwork–Rothblum–Vadhan and
  Kairouz–Oh–Viswanath Thm 3.5, Σ(1 − e^(−ε))ε/(1 + e^(−ε)) + √(2 Σε² log(1/s)) and
  … + √(2 Σε² log(e + √(Σε²)/s)), δ = 1 − (1 − s) Π(1 − δᵢ);
* ``dp-accounting pairs``: dp-accounting's PLD of the ten (ε, δ) pairs
  (``from_privacy_parameters``, self-composed);
* ``dp-accounting events``: dp-accounting's PLD of the ten exported events
  (:func:`dpconvex.privacy.dp_events.to_dp_event`, replace-one): the tightest number for this fixed
  sequence, not a filter.
"""

from __future__ import annotations

import datetime
import math
import pathlib
import warnings
from typing import Any

import numpy as np
import pandas as pd

from dpconvex.datasets.adult import load_adult
from dpconvex.estimators.linear_model import PrivateLogisticRegression
from dpconvex.privacy.dp_events import to_dp_event
from dpconvex.privacy.ledger import PrivacyLedger
from dpconvex_lab.bench_markdown import replace_section, with_csv_section

__all__ = ["CSV", "RELEASES", "SLACK", "TITLE", "diffprivlib_total", "ledger_section", "run_ledger",
           "with_ledger_section"]

CSV = "bench_ledger.csv"
TITLE = "Ten releases from one dataset: the ledger against other accountants"
RELEASES, EPSILON, DELTA, SLACK = 10, 0.1, 1e-8, 1e-7
_PLD_INTERVAL = 1e-4


def diffprivlib_total(pairs: list[tuple[float, float]], slack: float) -> tuple[float, float]:
    """diffprivlib 0.6.6's ``BudgetAccountant.total(spent_budget=pairs, slack=slack)`` (module docstring).

    Parameters
    ----------
    pairs : list of (float, float)
        The releases' (ε, δ).
    slack : float
        The δ slack of advanced composition (0: basic composition).

    Returns
    -------
    (float, float)
        The total (ε, δ).
    """
    epsilons = np.array([eps for eps, _ in pairs])
    product = 1.0
    for _, delta in sorted([*pairs, (0.0, slack)], key=lambda pair: pair[1]):
        product *= 1.0 - delta
    total_delta = 1.0 - product
    naive = float(epsilons.sum())
    if slack == 0:
        return naive, total_delta
    exp_sum = float(np.sum((1 - np.exp(-epsilons)) * epsilons / (1 + np.exp(-epsilons))))
    squares = float(np.sum(epsilons**2))
    drv = exp_sum + math.sqrt(2 * squares * math.log(1 / slack))
    kov = exp_sum + math.sqrt(2 * squares * math.log(math.e + math.sqrt(squares) / slack))
    return min(naive, drv, kov), total_delta


def _pld_epsilon(certificates: list, delta: float, *, events: bool) -> float:
    """dp-accounting's PLD ε at ``delta`` of the releases' events (``events``) or of their (ε, δ) pairs."""
    import dp_accounting as dpa
    from dp_accounting.pld import common, privacy_loss_distribution

    if events:
        accountant = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                           value_discretization_interval=_PLD_INTERVAL)
        for certificate in certificates:
            accountant.compose(to_dp_event(certificate))
        return float(accountant.get_epsilon(delta))
    composed = None
    for certificate in certificates:
        pld = privacy_loss_distribution.from_privacy_parameters(
            common.DifferentialPrivacyParameters(certificate.epsilon, certificate.delta),
            value_discretization_interval=_PLD_INTERVAL)
        composed = pld if composed is None else composed.compose(pld)
    return float(composed.get_epsilon_for_delta(delta))


def _scenario(name: str, method: str, X: np.ndarray, y: np.ndarray, seed: int) -> list[dict[str, Any]]:
    ledger, certificates = PrivacyLedger(), []
    for index in range(RELEASES):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = PrivateLogisticRegression(epsilon=EPSILON, delta=DELTA, classes=[-1, 1], method=method,
                                              random_state=seed + index).fit(X, y)
        certificates.append(model.privacy_report_)
        ledger.record(model.privacy_report_, f"{name} {index + 1}")
    pairs = [(c.epsilon, c.delta) for c in certificates]
    advanced = diffprivlib_total(pairs, SLACK)
    delta = advanced[1]
    total = ledger.total(delta)
    rows = [("ledger", total.epsilon, f"{total.method} (candidates: "
             + ", ".join(f"{k} {v:.4g}" for k, v in total.candidates.items()) + ")"),
            ("diffprivlib basic", diffprivlib_total(pairs, 0.0)[0], f"at delta {diffprivlib_total(pairs, 0.0)[1]:.3g}"),
            ("diffprivlib advanced", advanced[0], f"slack {SLACK:g}"),
            ("dp-accounting pairs", _pld_epsilon(certificates, delta, events=False), "PLD of the (eps, delta) pairs"),
            ("dp-accounting events", _pld_epsilon(certificates, delta, events=True),
             "PLD of the exported events (fixed sequence)")]
    return [{"scenario": name, "method": method, "releases": RELEASES, "epsilon_each": certificates[0].epsilon,
             "delta_each": DELTA, "curve": ledger_kind, "accountant": accountant, "delta": delta,
             "total_epsilon": value, "note": note}
            for ledger_kind in [_kind(certificates[0])] for accountant, value, note in rows]


def _kind(certificate) -> str:
    from dpconvex.privacy.dp_events import certificate_curve

    return certificate_curve(certificate).kind


def ledger_section(frame: pd.DataFrame) -> list[str]:
    """Markdown lines of the scenario's section of ``BENCHMARKS.md``."""
    lines = [f"## {TITLE}", "",
             f"Regenerate with `dpconvex bench ledger` (module `dpconvex_lab.bench_ledger`; run "
             f"{', '.join(sorted(frame['run_date'].astype(str).unique()))}). Ten fits on all of UCI Adult, ε = "
             f"{EPSILON:g} and δ = {DELTA:g} each, fresh seeds; every total at the same δ (diffprivlib's advanced "
             f"composition with slack {SLACK:g}). diffprivlib's numbers are its `BudgetAccountant.total` formulas "
             "(0.6.6, transcribed: it does not import with scikit-learn 1.9). The ledger's total is valid for "
             "releases whose parameters were fixed in advance; its budget filter (`check`) enforces an adaptive "
             "bound.", "", "| scenario | curve | accountant | total ε | how |", "|---|---|---|---|---|"]
    for row in frame.itertuples():
        lines.append(f"| {row.scenario} | {row.curve} | {row.accountant} | {row.total_epsilon:.4g} | {row.note} |")
    return lines


def run_ledger(out: str | pathlib.Path = "docs", *, seed: int = 0) -> dict[str, Any]:
    """Run both scenarios; write ``bench_ledger.csv`` and the section of ``BENCHMARKS.md`` in ``out``."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    X, y = load_adult("all")
    rows = _scenario("default (Poisson noisy SGD)", "auto", X, y, seed)
    rows += _scenario("noisy GD (GDP)", "noisy_gd", X, y, seed + 100)
    frame = pd.DataFrame(rows)
    frame["run_date"] = datetime.date.today().isoformat()
    frame.to_csv(out / CSV, index=False)
    markdown = replace_section(out / "BENCHMARKS.md", ledger_section(frame))
    return {"csv": str(out / CSV), "markdown": str(markdown)}


def with_ledger_section(text: str, out: str | pathlib.Path) -> str:
    """``text`` (the rest of ``BENCHMARKS.md``) with the scenario's section appended when ``out`` holds :data:`CSV`."""
    return with_csv_section(text, pathlib.Path(out) / CSV, ledger_section)
