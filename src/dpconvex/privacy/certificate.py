"""The privacy certificate every mechanism returns with its parameters."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from dpconvex.privacy.certificate_text import NO_GUARANTEE, as_html, as_markdown, as_text
from dpconvex.privacy.report import certificate_page

__all__ = ["NO_GUARANTEE", "PrivacyCertificate"]


@dataclass(frozen=True, repr=False)
class PrivacyCertificate:
    """What was released, how private it is, and why.

    ``str(certificate)`` leads with the guarantee in one line, then one condition, fact or note a line
    (:meth:`describe`; ``describe(verbose=True)`` adds the candidate bounds and the run's numbers);
    notebooks show it as HTML or Markdown; :meth:`to_dict` / :meth:`from_dict` convert it to and from
    a JSON-ready record.

    Attributes
    ----------
    mechanism : str
        The trainer that produced the parameters (e.g. ``"noisy_gd"``).
    epsilon, delta : float
        The (ε, δ)-DP guarantee for replace-one neighbours (ε = ``inf`` means no guarantee).  ε is the
        computed bound rounded up by a relative 10⁻⁵ (:data:`dpconvex.accounting.rounding.ROUNDING_MARGIN`,
        ``docs/ACCOUNTANTS.md``), so that it does not rest on one platform's rounding.
    bound : str
        The bound that gave ε (the smallest among those whose conditions the run met).
    theorem : str
        Its source (paper, arXiv id, result number).
    conditions : tuple of str
        The conditions of that theorem, each enforced by the mechanism.
    assumptions : dict
        The numbers the theorem used (n, data_norm, sensitivity, λ, β, step size, …).
    order : float or None
        RDP order of the conversion (``None`` when an exact conversion was used).
    conversion : str
        How ε was obtained from the bound (``"improved"`` RDP conversion, ``"exact-gdp"``, …).
    sigma : float
        The noise parameter, in the mechanism's own convention (stated in ``assumptions``).
    iterations : int
        Number of updates run.
    candidates : dict
        ε of every applicable bound at this δ (the best-of race).
    composition_epsilon : float
        ε of the composition baseline (every iterate published), for comparison.
    notes : tuple of str
        Anything the user must know: clipped rows, conditions such as a label set read from the
        data, and, when ε = ``inf``, why (:meth:`without_guarantee`).
    record_profile : tuple of float
        Per-record guarantees where they differ by record (``pnsgd``): entry t − 1 is δ_t at the
        certified ε for the record in row t; ``delta`` is their maximum.  Empty when every record
        gets the same guarantee.
    details : dict
        Machine detail behind a choice, shown by the verbose view and kept in :meth:`to_dict` (e.g.
        ``"auto_scores"``: every configuration ``method="auto"`` weighed and its score).  Empty by default.
    """

    mechanism: str
    epsilon: float
    delta: float
    bound: str
    theorem: str
    conditions: tuple[str, ...]
    assumptions: dict[str, Any]
    order: float | None
    conversion: str
    sigma: float
    iterations: int
    candidates: dict[str, float] = field(default_factory=dict)
    composition_epsilon: float = math.inf
    notes: tuple[str, ...] = ()
    record_profile: tuple[float, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def with_notes(self, *notes: str) -> PrivacyCertificate:
        """A copy with extra notes; ε is unchanged (only :meth:`without_guarantee` changes it)."""
        return self._copy(notes=(*self.notes, *notes))

    def with_details(self, **details: Any) -> PrivacyCertificate:
        """A copy with extra ``details`` (JSON-ready values); ε is unchanged."""
        return self._copy(details={**self.details, **details})

    def without_guarantee(self, reason: str) -> PrivacyCertificate:
        """A copy that certifies nothing: ε = ``inf``, with the note ``"no differential-privacy guarantee: <reason>"``.

        The one way to void a certificate, used wherever a bound, scale, category set or label set
        was read from the private data (the theorem assumed it public).  Every ε the certificate
        states (``epsilon``, ``composition_epsilon``, ``candidates``) becomes ``inf``; the rest is
        kept to show what the run would have certified with that constant declared in advance.
        ε only ever grows: a void certificate stays void; voiding it again for a reason it already
        states changes nothing (no duplicate note).

        Parameters
        ----------
        reason : str
            What was read from the data, and how to declare it instead.

        Returns
        -------
        PrivacyCertificate
        """
        note = f"{NO_GUARANTEE}: {reason}"
        return self._copy(
            epsilon=math.inf,
            composition_epsilon=math.inf,
            candidates={name: math.inf for name in self.candidates},
            notes=self.notes if note in self.notes else (*self.notes, note),
        )

    def _copy(self, **changes: Any) -> PrivacyCertificate:
        """A deep copy (nothing shared with ``self``) with ``changes`` applied."""
        return PrivacyCertificate(**{**asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (infinities become the string ``"inf"``)."""

        def clean(value: Any) -> Any:
            if isinstance(value, float) and math.isinf(value):
                return "inf" if value > 0 else "-inf"
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [clean(v) for v in value]
            return value

        return clean(asdict(self))

    def to_json(self, **kwargs: Any) -> str:
        """Serialise :meth:`to_dict` to a JSON string."""
        return json.dumps(self.to_dict(), **kwargs)

    def to_html(self) -> str:
        """A self-contained HTML page a person reads (:func:`dpconvex.privacy.report.certificate_page`).

        The guarantee in one sentence, the ε(δ) and trade-off curves drawn, the theorem and its
        conditions, and what the composition baseline would have given.  ``dpconvex report FILE``
        writes the same page from a saved certificate or model file.
        """
        return certificate_page(self)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> PrivacyCertificate:
        """The certificate :meth:`to_dict` wrote: ``PrivacyCertificate.from_dict(c.to_dict()) == c``.

        Also reads the record back from JSON (``json.loads(c.to_json())``).  The strings ``"inf"`` and
        ``"-inf"`` become floats again (in ``assumptions`` too: an assumption that was the string
        ``"inf"`` comes back as a float), and lists become tuples where the field is a tuple; lists
        within ``assumptions`` stay lists.  A field with a default (``candidates``, ``notes``, …) may be
        missing.

        Parameters
        ----------
        record : mapping
            A dictionary of :meth:`to_dict`.

        Returns
        -------
        PrivacyCertificate
            Sharing nothing mutable with ``record``.

        Raises
        ------
        ValueError
            Naming the fields that are unknown, or required and missing.
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(record) - names)
        missing = sorted(f.name for f in fields(cls)
                         if f.name not in record and f.default is MISSING and f.default_factory is MISSING)
        if unknown or missing:
            raise ValueError(f"not a PrivacyCertificate record: unknown fields {unknown}, missing fields {missing}.")
        value = {name: _restored(item) for name, item in record.items()}
        for name in ("conditions", "notes", "record_profile"):
            if name in value:
                value[name] = tuple(value[name])
        return cls(**value)

    def describe(self, verbose: bool = False) -> str:
        """The certificate as text (``str(certificate)`` is ``describe()``).

        Parameters
        ----------
        verbose : bool, default=False
            ``False``: the guarantee in one line (ε, δ, the mechanism, the bound and its theorem; for
            ε = ``inf``, that there is no guarantee), then one line per condition, the composition
            baseline when it differs from ε as printed, the per-record δ, and one line per note (a note
            over 400 characters, a table of scores, shortened to its lead).  ``True`` adds the
            candidate bounds (every bound's ε, the certified one marked ``*``), σ, iterations, the
            conversion and its order, the assumptions, every row's δ and every note in full.

        Returns
        -------
        str
        """
        return as_text(self, verbose)

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(epsilon={self.epsilon!r}, delta={self.delta!r}, mechanism={self.mechanism!r}, "
                f"bound={self.bound!r})")

    def _repr_html_(self) -> str:
        """The notebook's rich view: an HTML fragment (:func:`~dpconvex.privacy.certificate_text.as_html`)."""
        return as_html(self)

    def _repr_markdown_(self) -> str:
        """The notebook's Markdown view (:func:`~dpconvex.privacy.certificate_text.as_markdown`)."""
        return as_markdown(self)


def _restored(value: Any) -> Any:
    """A value of :meth:`PrivacyCertificate.to_dict` as it was: ``"inf"``/``"-inf"`` as floats, containers copied."""
    if isinstance(value, str) and value in ("inf", "-inf"):
        return float(value)
    if isinstance(value, Mapping):
        return {key: _restored(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_restored(item) for item in value]
    return value
