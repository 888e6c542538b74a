"""The privacy certificate every mechanism returns with its parameters."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["NO_GUARANTEE", "PrivacyCertificate"]

#: Start of the note :meth:`PrivacyCertificate.without_guarantee` adds.
NO_GUARANTEE = "no differential-privacy guarantee"


@dataclass(frozen=True)
class PrivacyCertificate:
    """What was released, how private it is, and why.

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

    def with_notes(self, *notes: str) -> "PrivacyCertificate":
        """A copy with extra notes; ε is unchanged (only :meth:`without_guarantee` changes it)."""
        return self._copy(notes=(*self.notes, *notes))

    def without_guarantee(self, reason: str) -> "PrivacyCertificate":
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

    def _copy(self, **changes: Any) -> "PrivacyCertificate":
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

    def __str__(self) -> str:
        void = f": {NO_GUARANTEE} (see the notes)" if math.isinf(self.epsilon) else ""
        lines = [
            f"({self.epsilon:.6g}, {self.delta:.3g})-DP by {self.mechanism}{void}",
            f"  bound: {self.bound} — {self.theorem}",
            f"  sigma = {self.sigma:.6g}, iterations = {self.iterations}, conversion = {self.conversion}"
            + (f" (order {self.order:.4g})" if self.order is not None else ""),
            f"  composition baseline would give epsilon = {self.composition_epsilon:.6g}",
            "  conditions: " + "; ".join(self.conditions),
        ]
        if self.record_profile:
            profile = np.asarray(self.record_profile)
            if profile.max() == profile.min():
                lines.append(f"  per-record delta at this epsilon: {profile.max():.3g} for each of the {profile.size} rows")
            else:
                lines.append(f"  per-record delta at this epsilon: max {profile.max():.3g} (row {int(profile.argmax()) + 1}), "
                             f"min {profile.min():.3g} (row {int(profile.argmin()) + 1}) of {profile.size} rows")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)
