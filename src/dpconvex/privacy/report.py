"""A privacy report a person reads: one self-contained HTML page for a certificate or a ledger.

The page states the guarantee in one sentence, draws the release's ε(δ) curve and its trade-off
curve (type II error β against type I error α of the best test between neighbouring datasets),
names the theorem and its conditions, gives what the composition baseline (every iterate
published) would have certified, and, for a ledger, lists its releases and their total.  The
figures are inline SVG written here: no script, no stylesheet or font from elsewhere, so the file
opens offline and shows the same everywhere.

Curves.  A certificate's curve is :func:`~dpconvex.privacy.dp_events.certificate_curve`'s:

* ``"gdp"`` (μ-GDP): ε(δ) by Dong, Roth, Su 2019 (arXiv:1905.02383) Cor. 2.13
  (:func:`dpconvex.accounting.gdp.gdp_epsilon`), trade-off G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (their Def. 2.7);
* ``"poisson"``: ε(δ) from dp-accounting's privacy-loss distribution of the exported event under
  replace-one (the certificate's own accountant, :func:`~dpconvex.privacy.dp_events.to_dp_event`);
* ``"zcdp"``: ε(δ) from the RDP curve α·ρ (:func:`dpconvex.accounting.rdp.epsilon_from_rdp`);
* ``"pair"``: only (ε, δ): ε(δ') = ε for δ' ≥ δ, nothing certified below.

For every curve but GDP's the trade-off is the supremum over the drawn δ of the (ε(δ), δ)
trade-offs max(0, 1 − δ − e^ε α, e^(−ε)(1 − δ − α)) (Dong, Roth, Su Prop. 2.12 / Wasserman and
Zhou 2010): valid, and tight where the ε(δ) curve is.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr, ndtri

from dpconvex.accounting import gdp
from dpconvex.accounting.rdp import DEFAULT_ORDERS, epsilon_from_rdp
from dpconvex.privacy.certificate_text import certificate_view
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve, to_dp_event

if TYPE_CHECKING:  # the certificate module imports this one (for PrivacyCertificate.to_html)
    from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["DELTA_GRID_SIZE", "certificate_page", "epsilon_curve", "ledger_page", "tradeoff_curve"]

#: Number of δ values (log-spaced) at which ε(δ) is drawn.
DELTA_GRID_SIZE = 40
#: The PLD discretisation of a Poisson curve's drawing (its certificate used a finer one; a drawing needs no more).
_PLD_INTERVAL = 1e-3
_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:rgb(34,34,34)}"
          "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}.figures{display:flex;gap:2em;"
          "flex-wrap:wrap}.lead{font-size:1.1em;background:#f3f6fa;padding:.6em;border-left:4px solid #1f77b4}")


def _delta_grid(delta: float) -> np.ndarray:
    """Log-spaced δ from about δ/10⁴ to 0.5, the certified δ included."""
    low = max(min(delta, 1e-3) * 1e-4, 1e-300)
    return np.unique(np.concatenate([np.logspace(math.log10(low), math.log10(0.5), DELTA_GRID_SIZE), [delta]]))


def epsilon_curve(curve: PrivacyCurve, deltas: Sequence[float]) -> np.ndarray:
    """ε(δ) of ``curve`` at each of ``deltas`` (``inf`` where nothing is certified; module docstring).

    Parameters
    ----------
    curve : PrivacyCurve
        A certificate's curve (:func:`~dpconvex.privacy.dp_events.certificate_curve`).
    deltas : sequence of float
        Values in (0, 1).

    Returns
    -------
    ndarray
        ε at each δ, ≥ 0.
    """
    deltas = np.asarray(deltas, dtype=float)
    if curve.kind == "gdp":
        return np.array([0.0 if curve.mu == 0.0 else gdp.gdp_epsilon(d, curve.mu) for d in deltas])
    if curve.kind == "zcdp":
        rdp = DEFAULT_ORDERS * curve.rho
        return np.array([epsilon_from_rdp(DEFAULT_ORDERS, rdp, d)[0] for d in deltas])
    if curve.kind == "poisson":
        import dp_accounting as dpa  # the accountant of the certificate itself; heavy, so loaded on use

        accountant = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE,
                                           value_discretization_interval=_PLD_INTERVAL)
        accountant.compose(to_dp_event(curve))
        return np.array([max(0.0, accountant.get_epsilon(d)) for d in deltas])
    return np.where(deltas >= curve.delta, curve.epsilon, math.inf)


def tradeoff_curve(curve: PrivacyCurve, alphas: Sequence[float]) -> np.ndarray:
    """β(α), the smallest type II error of a level-α test between neighbours (module docstring).

    Parameters
    ----------
    curve : PrivacyCurve
    alphas : sequence of float
        Type I errors in [0, 1].

    Returns
    -------
    ndarray
        β at each α (1 − α is perfect privacy; 0 is none).
    """
    alphas = np.asarray(alphas, dtype=float)
    if curve.kind == "gdp":
        return ndtr(ndtri(1.0 - alphas) - curve.mu)
    deltas = _delta_grid(curve.delta if curve.delta is not None else 1e-6)
    best = np.zeros_like(alphas)
    for delta, epsilon in zip(deltas, epsilon_curve(curve, deltas)):
        if math.isfinite(epsilon):
            line = np.maximum.reduce([np.zeros_like(alphas), 1.0 - delta - math.exp(epsilon) * alphas,
                                      math.exp(-epsilon) * (1.0 - delta - alphas)])
            best = np.maximum(best, line)
    return best


def _svg(series: list[tuple[str, np.ndarray, np.ndarray, str]], *, x_label: str, y_label: str, title: str,
         log_x: bool = False, y_max: float | None = None) -> str:
    """One line chart as inline SVG: ``series`` of (name, x, y, colour); non-finite points are left out."""
    width, height, left, bottom, top, right = 420, 300, 55, 45, 30, 15
    points = [(x, y) for _, xs, ys, _ in series for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y)]
    fx = (lambda v: math.log10(v)) if log_x else (lambda v: v)
    xs_all = [fx(x) for x, _ in points if not log_x or x > 0]
    x0, x1 = (min(xs_all), max(xs_all)) if xs_all else (0.0, 1.0)
    y1 = y_max if y_max is not None else max([y for _, y in points] + [1e-12]) * 1.05
    x1 = x1 if x1 > x0 else x0 + 1.0

    def at(x: float, y: float) -> tuple[float, float]:
        return (left + (fx(x) - x0) / (x1 - x0) * (width - left - right),
                height - bottom - min(y, y1) / y1 * (height - bottom - top))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{html.escape(title)}">',
             f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{html.escape(title)}</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="dimgray"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="dimgray"/>']
    for k in range(5):
        xv, yv = x0 + (x1 - x0) * k / 4, y1 * k / 4
        x_text = f"1e{xv:.0f}" if log_x else f"{xv:.2g}"
        px, _ = at(10**xv if log_x else xv, 0.0)
        _, py = at(10**x0 if log_x else x0, yv)
        parts += [f'<text x="{px:.1f}" y="{height - bottom + 16}" text-anchor="middle" font-size="10">{x_text}</text>',
                  f'<text x="{left - 6}" y="{py + 3:.1f}" text-anchor="end" font-size="10">{yv:.3g}</text>']
    parts += [f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle" font-size="12">'
              f"{html.escape(x_label)}</text>",
              f'<text x="14" y="{height / 2}" text-anchor="middle" font-size="12" '
              f'transform="rotate(-90 14 {height / 2})">{html.escape(y_label)}</text>']
    for row, (name, xs, ys, colour) in enumerate(series):
        coords = [at(x, y) for x, y in zip(xs, ys) if math.isfinite(x) and math.isfinite(y) and (not log_x or x > 0)]
        if coords:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            parts.append(f'<polyline class="curve" fill="none" stroke="{colour}" stroke-width="2.5" points="{path}"/>')
        parts.append(f'<text x="{width - right - 4}" y="{top + 14 * (row + 1)}" text-anchor="end" font-size="11" '
                     f'fill="{colour}">{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _figures(curve: PrivacyCurve, certificate: PrivacyCertificate) -> str:
    deltas = _delta_grid(certificate.delta if certificate.delta > 0 else 1e-6)
    epsilons = epsilon_curve(curve, deltas)
    series = [("certified", deltas, epsilons, "#1f77b4")]
    if math.isfinite(certificate.composition_epsilon) and certificate.composition_epsilon != certificate.epsilon:
        series.append((f"composition at δ = {certificate.delta:g}", np.array([deltas[0], deltas[-1]]),
                       np.array([certificate.composition_epsilon] * 2), "#d62728"))
    finite = epsilons[np.isfinite(epsilons)]
    y_max = max([*finite, *(s[2][0] for s in series[1:]), 1e-3]) * 1.3  # room for the legend
    alphas = np.linspace(0.0, 1.0, 101)
    return ('<div class="figures">'
            + _svg(series, x_label="δ", y_label="ε", title="ε(δ): the guarantee at every δ", log_x=True, y_max=y_max)
            + _svg([("this release", alphas, tradeoff_curve(curve, alphas), "#1f77b4"),
                    ("perfect privacy", alphas, 1.0 - alphas, "darkgray")],
                   x_label="type I error α", y_label="type II error β", title="Trade-off: telling neighbours apart",
                   y_max=1.0)
            + "</div>")


def _list(items: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>" if items else "<p>none</p>"


def _certificate_body(certificate: PrivacyCertificate) -> str:
    view = certificate_view(certificate)
    if not math.isfinite(certificate.epsilon):
        return (f'<p class="lead">{html.escape(view.headline)}</p><h2>Why</h2>'
                + _list([shown for shown, _ in view.notes]))
    curve = certificate_curve(certificate)
    composition = certificate.composition_epsilon
    if not math.isfinite(composition):
        baseline = "No composition baseline applies to this release."
    elif certificate.bound == "composition" or composition <= certificate.epsilon:
        baseline = ("This guarantee is the composition bound itself: it would hold even if every iterate had been "
                    "published.")
    else:
        baseline = (f"Publishing every iterate (the composition baseline) would have certified ε = {composition:.4g} "
                    f"at the same δ; only the final model was released, and the hidden iterates give "
                    f"ε = {certificate.epsilon:.4g}.")
    return (f'<p class="lead">{html.escape(view.headline)}</p>'
            f"<p>The curve behind it: <b>{html.escape(curve.kind)}</b> "
            + (f"(μ = {curve.mu:.4g})" if curve.kind == "gdp" else "")
            + f". {html.escape(baseline)}</p>" + _figures(curve, certificate)
            + f"<h2>Theorem</h2><p>{html.escape(view.theorem)}</p>"
            + "<h2>Conditions (each enforced by the mechanism)</h2>" + _list(list(view.conditions))
            + "<h2>Notes</h2>" + _list([shown for shown, _ in view.notes]))


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>\n")


def certificate_page(certificate: PrivacyCertificate) -> str:
    """The report page of one certificate (module docstring), as one self-contained HTML document.

    Parameters
    ----------
    certificate : PrivacyCertificate

    Returns
    -------
    str
        The page: the guarantee, the ε(δ) and trade-off figures, the theorem, its conditions, the notes.
    """
    return _page(f"Privacy report: {certificate.mechanism}", _certificate_body(certificate))


def ledger_page(ledger, delta: float | None = None) -> str:
    """The report page of a :class:`~dpconvex.privacy.ledger.PrivacyLedger`: its total, then each release.

    Parameters
    ----------
    ledger : PrivacyLedger
    delta : float, optional
        The δ of the total (default: the budget's δ, else the sum of the releases' δ).

    Returns
    -------
    str
        The page: the total and how it was composed, the budget, a table of the releases, and each
        release's own report.
    """
    releases = ledger.releases
    if delta is None:
        delta = ledger.budget[1] if ledger.budget else min(0.5, sum(r.certificate.delta for r in releases) or 1e-6)
    rows = "".join(f"<tr><td>{html.escape(r.label)}</td><td>{html.escape(r.certificate.mechanism)}</td>"
                   f"<td>{r.certificate.epsilon:.4g}</td><td>{r.certificate.delta:.3g}</td>"
                   f"<td>{html.escape(certificate_curve(r.certificate).kind)}</td>"
                   f"<td>{html.escape(r.partition or 'all records')}</td></tr>" for r in releases)
    if releases:
        total = ledger.total(delta)
        lead = (f"The {len(releases)} releases together are ({total.epsilon:.4g}, {total.delta:.3g})-differentially "
                f"private for replace-one neighbours, composed by {total.method} (candidates: "
                + ", ".join(f"{name} {eps:.4g}" for name, eps in total.candidates.items()) + ").")
    else:
        lead = "No release recorded yet."
    budget = (f"<p>Budget: ε = {ledger.budget[0]:g}, δ = {ledger.budget[1]:g}, enforced before each fit by the "
              f"{html.escape(ledger.filter)} filter.</p>" if ledger.budget else "<p>No budget set.</p>")
    sections = "".join(f"<h2>Release {index + 1}: {html.escape(r.label)}</h2>" + _certificate_body(r.certificate)
                       for index, r in enumerate(releases))
    table = ("<table><tr><th>release</th><th>mechanism</th><th>ε</th><th>δ</th><th>curve</th><th>records</th></tr>"
             + rows + "</table>")
    return _page("Privacy ledger", f'<p class="lead">{html.escape(lead)}</p>{budget}{table}{sections}')
