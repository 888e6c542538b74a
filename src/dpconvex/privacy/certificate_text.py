"""How a :class:`~dpconvex.privacy.certificate.PrivacyCertificate` reads: plain text, Markdown and HTML.

One content rule, three formats.  :func:`certificate_view` decides what is shown: the one-line
guarantee (:func:`headline`), the conditions, the facts that qualify ε (the composition baseline
when it differs from ε as printed, the per-record δ), the notes — a note longer than
:data:`LONG_NOTE` characters is machine detail (a table of scores) and is shortened by
:func:`shorten` unless the view is verbose — and, for the verbose and notebook views, the
candidate bounds and the run's numbers.  :func:`as_text`, :func:`as_markdown` and :func:`as_html`
only lay that content out (the last two escape every text: a note may hold any characters).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # the certificate module imports this one
    from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["DETAILS", "LONG_NOTE", "NO_GUARANTEE", "PROFILE_ROWS", "SHORT_NOTE", "CertificateView", "as_html",
           "as_markdown", "as_text", "certificate_view", "headline", "shorten"]

#: Start of the note :meth:`~dpconvex.privacy.certificate.PrivacyCertificate.without_guarantee` adds, and of a
#: void certificate's first line.
NO_GUARANTEE = "no differential-privacy guarantee"
#: A note longer than this (in characters) is shortened in the default views.
LONG_NOTE = 400
#: The most a shortened note keeps before its ellipsis.
SHORT_NOTE = 160
#: Where the full text of a shortened note is.
DETAILS = "(details: certificate.describe(verbose=True) or to_dict())"
#: The most per-record δ values the verbose view lists one by one.
PROFILE_ROWS = 20

_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.\s+(?=[A-Z])")
_CLAUSE_END = re.compile(r"[,;:]\s")


@dataclass(frozen=True)
class CertificateView:
    """What a view of a certificate shows, before layout.

    Attributes
    ----------
    headline : str
        The one-line guarantee (:func:`headline`).
    theorem : str
        The source of the certified bound (paper, arXiv id, result number).
    conditions : tuple of str
        The theorem's conditions, in full.
    facts : tuple of str
        What qualifies ε: the composition baseline (when it differs from ε), the per-record δ.
    notes : tuple of (str, str)
        Each note as shown and in full (the same text unless it was shortened).
    candidates : tuple of (str, float, bool)
        Every candidate bound, its ε at the certificate's δ, and whether it is the certified one (none is
        when ε = ``inf``).
    run : tuple of str
        σ, iterations, the conversion and, one per line, the assumptions and the per-record δ.
    """

    headline: str
    theorem: str
    conditions: tuple[str, ...]
    facts: tuple[str, ...]
    notes: tuple[tuple[str, str], ...]
    candidates: tuple[tuple[str, float, bool], ...]
    run: tuple[str, ...]


def headline(certificate: PrivacyCertificate) -> str:
    """The guarantee in one line: ε, δ, the mechanism and the bound's name, or that there is none (the theorem
    behind the bound follows on its own line in every view).

    Parameters
    ----------
    certificate : PrivacyCertificate
        The certificate to show.

    Returns
    -------
    str
    """
    guarantee = f"({certificate.epsilon:.6g}, {certificate.delta:.3g})-DP — {certificate.mechanism}"
    if math.isinf(certificate.epsilon):
        return f"{guarantee}: {NO_GUARANTEE} (see the notes)"
    return f"{guarantee}, certified by the {certificate.bound} bound"


def shorten(note: str) -> str:
    """``note`` as the default views show it.

    Whole up to :data:`LONG_NOTE` characters; a longer note is machine detail: its first sentence if
    that ends within :data:`SHORT_NOTE` characters, else its leading clauses (cut at a comma, semicolon
    or colon outside parentheses) within :data:`SHORT_NOTE` characters and an ellipsis.

    Parameters
    ----------
    note : str
        A certificate note.

    Returns
    -------
    str
    """
    if len(note) <= LONG_NOTE:
        return note
    sentence = _SENTENCE_END.search(note)
    if sentence is not None and sentence.start() < SHORT_NOTE:
        return note[:sentence.start() + 1]
    ends = [match.start() for match in _CLAUSE_END.finditer(note, 0, SHORT_NOTE) if _depth(note, match.start()) == 0]
    cut = ends[-1] if ends else note.rfind(" ", 0, SHORT_NOTE)
    return note[:cut if cut > 0 else SHORT_NOTE] + " …"


def _depth(text: str, position: int) -> int:
    """How many parentheses or brackets are open at ``position``."""
    head = text[:position]
    return head.count("(") + head.count("[") - head.count(")") - head.count("]")


def _number(value: Any) -> str:
    """A float to 6 significant digits; anything else as ``str`` does."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _record_profile(profile: Sequence[float], verbose: bool) -> tuple[str, ...]:
    """The per-record δ: its range over the rows, and every row's value in the verbose view."""
    if not profile:
        return ()
    values = np.asarray(profile)
    if values.max() == values.min():
        lines = [f"per-record delta at this epsilon: {values.max():.3g} for each of the {values.size} rows"]
    else:
        lines = [f"per-record delta at this epsilon: max {values.max():.3g} (row {int(values.argmax()) + 1}), "
                 f"min {values.min():.3g} (row {int(values.argmin()) + 1}) of {values.size} rows"]
    if verbose and values.size <= PROFILE_ROWS:
        lines.append("per-record delta by row: " + ", ".join(f"{v:.3g}" for v in values))
    elif verbose:
        lines.append(f"per-record delta by row: the {values.size} values of certificate.record_profile")
    return tuple(lines)


def certificate_view(certificate: PrivacyCertificate, verbose: bool = False) -> CertificateView:
    """What the views show of ``certificate`` (the module docstring's rule); ``verbose`` keeps every note whole
    and adds every row's δ.

    Parameters
    ----------
    certificate : PrivacyCertificate
        The certificate to show.
    verbose : bool, optional
        Keep every note whole and add every row's δ.

    Returns
    -------
    CertificateView
    """
    epsilon, baseline = certificate.epsilon, certificate.composition_epsilon
    facts = ()
    if math.isfinite(baseline) and f"{baseline:.6g}" != f"{epsilon:.6g}":
        facts = (f"composition baseline would give epsilon = {baseline:.6g} (every iterate released)",)
    profile = _record_profile(certificate.record_profile, verbose)
    candidates = dict(certificate.candidates) or {certificate.bound: epsilon}
    order = "" if certificate.order is None else f" (order {certificate.order:.4g})"
    return CertificateView(
        headline=headline(certificate),
        theorem=certificate.theorem,
        conditions=tuple(certificate.conditions),
        facts=facts + profile[:1],
        notes=tuple((note if verbose else shorten(note), note) for note in certificate.notes),
        candidates=tuple((name, eps, name == certificate.bound and math.isfinite(epsilon))
                         for name, eps in candidates.items()),
        run=(f"sigma = {certificate.sigma:.6g}, iterations = {certificate.iterations}, "
             f"conversion = {certificate.conversion}{order}",
             *(f"{key} = {_number(value)}" for key, value in certificate.assumptions.items()), *profile[1:],
             *_details(certificate.details)),
    )


def _details(details: dict[str, Any]) -> tuple[str, ...]:
    """One line per detail; a list (e.g. a table of scores) one line per entry."""
    lines = []
    for key, value in details.items():
        if isinstance(value, (list, tuple)):
            lines += [f"{key}[{index}]: {_number(entry)}" for index, entry in enumerate(value)]
        else:
            lines.append(f"{key}: {_number(value)}")
    return tuple(lines)


def _candidate_title(delta: float) -> str:
    """The heading of the candidate bounds."""
    return f"candidate bounds (epsilon at delta = {delta:.3g})"


def _pointed(shown: str, note: str) -> str:
    """A note as a text view shows it: a shortened one followed by where its full text is."""
    return shown if shown == note else f"{shown} {DETAILS}"


def as_text(certificate: PrivacyCertificate, verbose: bool = False) -> str:
    """Plain text: the headline, then one condition, fact or note a line; ``verbose`` adds the candidate
    bounds (the certified one marked ``*``), the run's numbers and every note in full.

    Parameters
    ----------
    certificate : PrivacyCertificate
        The certificate to show.
    verbose : bool, optional
        Add the candidate bounds, the run's numbers and every note in full.

    Returns
    -------
    str
    """
    view = certificate_view(certificate, verbose)
    lines = [view.headline, f"  theorem: {view.theorem}", *(f"  condition: {c}" for c in view.conditions),
             *(f"  {fact}" for fact in view.facts)]
    lines += [f"  note: {_pointed(shown, note)}" for shown, note in view.notes]
    if verbose:
        lines.append(f"  {_candidate_title(certificate.delta)}:")
        lines += [f"    {'*' if won else ' '} {name}: {eps:.6g}" for name, eps, won in view.candidates]
        lines += [f"  {line}" for line in view.run]
    return "\n".join(lines)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def _markdown(text: str) -> str:
    """``text`` shown literally by Markdown: its Markdown punctuation backslash-escaped, ``&``, ``<``, ``>``
    as entities."""
    return html.escape(_MARKDOWN_SPECIAL.sub(r"\\\1", text), quote=False)


def as_markdown(certificate: PrivacyCertificate) -> str:
    """Markdown (a notebook's ``_repr_markdown_``): the headline in bold, lists of the conditions, facts and
    (shortened) notes, the candidate bounds as a table, then the run's numbers.

    Parameters
    ----------
    certificate : PrivacyCertificate
        The certificate to show.

    Returns
    -------
    str
    """
    view = certificate_view(certificate)
    parts = [f"**{_markdown(view.headline)}**", f"Theorem: {_markdown(view.theorem)}", "Conditions:",
             _markdown_list(view.conditions)]
    if view.facts:
        parts.append(_markdown_list(view.facts))
    if view.notes:
        parts += ["Notes:", _markdown_list(_pointed(shown, note) for shown, note in view.notes)]
    rows = [f"| **{_markdown(name)}** (certified) | {eps:.6g} |" if won else f"| {_markdown(name)} | {eps:.6g} |"
            for name, eps, won in view.candidates]
    parts += [f"{_markdown(_candidate_title(certificate.delta).capitalize())}:",
              "\n".join(["| bound | epsilon |", "|---|---|", *rows]), "Run:", _markdown_list(view.run)]
    return "\n\n".join(parts) + "\n"


def _markdown_list(items: Iterable[str]) -> str:
    """A Markdown bullet list of ``items``, each escaped."""
    return "\n".join(f"- {_markdown(item)}" for item in items)


def as_html(certificate: PrivacyCertificate) -> str:
    """A self-contained HTML fragment (a notebook's ``_repr_html_``): the headline in bold, lists of the
    conditions, facts and notes (a shortened note expands to its full text), and the candidate bounds and the
    run's numbers in ``<details>`` elements.

    Parameters
    ----------
    certificate : PrivacyCertificate
        The certificate to show.

    Returns
    -------
    str
    """
    view = certificate_view(certificate)
    notes = [html.escape(shown) if shown == note else
             f"<details><summary>{html.escape(shown)}</summary>{html.escape(note)}</details>"
             for shown, note in view.notes]
    rows = "".join(f"<tr><td><strong>{html.escape(name)}</strong> (certified)</td><td>{eps:.6g}</td></tr>"
                   if won else f"<tr><td>{html.escape(name)}</td><td>{eps:.6g}</td></tr>"
                   for name, eps, won in view.candidates)
    parts = [f"<p><strong>{html.escape(view.headline)}</strong></p>", f"<p>Theorem: {html.escape(view.theorem)}</p>",
             "<p>Conditions:</p>",
             _html_list(map(html.escape, view.conditions))]
    if view.facts:
        parts.append(_html_list(map(html.escape, view.facts)))
    if notes:
        parts += ["<p>Notes:</p>", _html_list(notes)]
    parts += [f"<details><summary>{html.escape(_candidate_title(certificate.delta))}</summary><table><thead><tr>"
              f"<th>bound</th><th>epsilon</th></tr></thead><tbody>{rows}</tbody></table></details>",
              f"<details><summary>the run</summary>{_html_list(map(html.escape, view.run))}</details>"]
    return '<div class="dpconvex-certificate">\n' + "\n".join(parts) + "\n</div>"


def _html_list(items: Iterable[str]) -> str:
    """An HTML bullet list of ``items`` (already escaped)."""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"
