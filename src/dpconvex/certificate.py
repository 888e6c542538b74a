"""The privacy certificate every mechanism returns with its parameters."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["PrivacyCertificate"]


@dataclass(frozen=True)
class PrivacyCertificate:
    """What was released, how private it is, and why.

    Attributes
    ----------
    mechanism : str
        The trainer that produced the parameters (e.g. ``"noisy_gd"``).
    epsilon, delta : float
        The (ε, δ)-DP guarantee for replace-one neighbours (ε = ``inf`` means no guarantee).
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
        Anything the user must know: clipped rows, data-dependent preprocessing, …
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

    def with_notes(self, *notes: str, epsilon: float | None = None) -> "PrivacyCertificate":
        """A copy with extra notes (and, if given, a replaced ε — only ever larger)."""
        values = asdict(self)
        values["notes"] = tuple(self.notes) + tuple(notes)
        if epsilon is not None:
            values["epsilon"] = max(epsilon, self.epsilon)
        return PrivacyCertificate(**values)

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
        lines = [
            f"({self.epsilon:.6g}, {self.delta:.3g})-DP by {self.mechanism}",
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
