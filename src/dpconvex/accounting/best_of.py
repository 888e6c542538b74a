"""The accounting core shared by every multi-bound accountant: bound records, best-of, the account.

A mechanism's accountant describes one run by a frozen *event* record (e.g.
:class:`.noisy_gd.NoisyGDEvent`, :class:`.noisy_sgd.NoisySGDEvent`) and knows a registry of
*bounds*, each a :class:`Bound`: the theorem it comes from, the assumptions it certifies under and
``unmet(event)``, the conditions of the theorem that the run does not satisfy.  A
:class:`BoundRegistry` answers, for one event, which bounds apply, refuses a named bound that does
not (or that is listed as not implemented) with the reason, and takes the best-of: the smallest ε
over the applicable bounds, with every inapplicable bound and its unmet conditions (``skipped``).
The :class:`PrivacyAccount` carries the winner, every candidate's ε and the skipped bounds, so
:func:`bound_notes` can say why each other bound lost or did not apply.  (The split follows
dp-accounting's ``DpEvent`` / ``PrivacyAccountant``: the event says what ran, the accountant what
it can prove.)  Each accountant keeps its own evaluators (RDP curve, μ-GDP map, (ε, δ) curve) in a
subclass of :class:`Bound`; this module never evaluates a privacy formula.

Sources and soundness.  The event/accountant split: Google's dp-accounting library
(github.com/google/differential-privacy, ``python/dp_accounting``: ``dp_event.py``,
``privacy_accountant.py``).  The best-of is sound without a theorem of its own: every applicable
bound is an upper bound on the ε at δ of the same run (each cites its theorem, e.g. Chourasia, Ye,
Shokri 2021, arXiv:2102.05855; Bok, Su, Altschuler 2024, arXiv:2403.00278), so their minimum is
one too — provided a bound is counted only when ``unmet(event)`` is empty, which :meth:`BoundRegistry.best_of`
enforces; a bound whose conditions fail is skipped with them, never evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .rounding import round_up

__all__ = ["Bound", "BoundRegistry", "PrivacyAccount", "bound_notes"]

E = TypeVar("E")
B = TypeVar("B", bound="Bound")


@dataclass(frozen=True)
class Bound(Generic[E]):
    """A privacy bound: its name, source, the assumptions it certifies under and its unmet conditions.

    Parameters
    ----------
    name : str
        Registry key, as requested by ``bound=...``.
    theorem : str
        Source of the bound (paper, theorem number).
    assumptions : tuple of str
        What the certificate assumes (reported with it).
    unmet : callable
        ``unmet(event)``: the conditions of the bound that ``event`` does not satisfy (empty: it applies).
    """

    name: str
    theorem: str
    assumptions: tuple[str, ...]
    unmet: Callable[[E], list[str]]


@dataclass(frozen=True)
class PrivacyAccount:
    """An (ε, δ) statement with its provenance.

    ``epsilon`` and ``candidates`` are certified numbers: the computed ε rounded up by
    :data:`.rounding.ROUNDING_MARGIN`.

    ``order`` is the RDP order that gave ε (``None`` when no RDP conversion was used, e.g. the exact
    GDP conversion won); ``candidates`` maps every evaluated bound to the ε it gives at this δ;
    ``skipped`` maps every bound of the accountant that does not apply to the run to its unmet
    conditions (empty for single-bound accountants).

    Attributes
    ----------
    epsilon : float
        Certified ε of the winning bound (rounded up).
    delta : float
        The δ the account is for.
    bound : str
        Name of the winning bound.
    theorem : str
        Its source (paper, arXiv id, result number).
    assumptions : tuple of str
        The conditions under which the bound holds (neighbouring relation, release, …).
    order : float or None
        RDP order that gave ε, or ``None``.
    conversion : str
        How ε was obtained (an RDP conversion's name, or e.g. ``"exact-gdp"``).
    candidates : dict of str to float
        Certified ε of every evaluated bound, keyed by name.
    skipped : dict of str to tuple of str
        Unmet conditions of every bound that does not apply, keyed by name.
    """

    epsilon: float
    delta: float
    bound: str
    theorem: str
    assumptions: tuple[str, ...]
    order: float | None
    conversion: str
    candidates: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, tuple[str, ...]] = field(default_factory=dict)


#: Result of :meth:`BoundRegistry.best_of`: winner, ``{name: (ε, RDP order or None)}``, skipped bounds.
BestOf = tuple[str, dict[str, tuple[float, float | None]], dict[str, tuple[str, ...]]]


@dataclass(frozen=True)
class BoundRegistry(Generic[B]):
    """The bounds an accountant knows (``bounds``) and those it refuses with a reason (``excluded``).

    Parameters
    ----------
    bounds : mapping of str to Bound
        Implemented bounds keyed by name; their order is the order of every listing.
    excluded : mapping of str to str
        Bounds that are named (e.g. in the literature) but not implemented, with the reason.
    """

    bounds: Mapping[str, B]
    excluded: Mapping[str, str] = field(default_factory=dict)

    def unmet_conditions(self, event: Any, bound: str) -> list[str]:
        """Conditions of ``bound`` that ``event`` does not satisfy (empty if it applies).

        Raises
        ------
        ValueError
            If ``bound`` is excluded (with the reason) or unknown (naming the valid ones).
        """
        if bound in self.excluded:
            raise ValueError(f"bound {bound!r} is not implemented: {self.excluded[bound]}")
        if bound not in self.bounds:
            raise ValueError(f"bound must be one of {sorted(self.bounds)} or 'best'; got {bound!r}.")
        return self.bounds[bound].unmet(event)

    def skipped(self, event: Any) -> dict[str, tuple[str, ...]]:
        """Every bound that does not apply to ``event``, with its unmet conditions."""
        return {name: tuple(unmet) for name, b in self.bounds.items() if (unmet := b.unmet(event))}

    def applicable(self, event: Any) -> list[str]:
        """Names of the bounds whose conditions ``event`` satisfies."""
        return [name for name, b in self.bounds.items() if not b.unmet(event)]

    def require(self, event: Any, bound: str) -> B:
        """The bound named ``bound``, or ``ValueError`` naming its unmet conditions (or why it is refused)."""
        unmet = self.unmet_conditions(event, bound)
        if unmet:
            raise ValueError(f"bound {bound!r} does not apply to this run; it needs: " + "; ".join(unmet) + ".")
        return self.bounds[bound]

    def candidates(self, event: Any, bound: str = "best") -> list[str]:
        """The bounds to evaluate: every applicable one for ``"best"``, else ``[bound]`` if it applies.

        Raises
        ------
        ValueError
            If ``bound`` is refused (:meth:`require`), or with ``"best"`` if no bound applies (naming
            each bound's unmet conditions).
        """
        if bound != "best":
            return [self.require(event, bound).name]
        names = self.applicable(event)
        if not names:
            raise ValueError("no bound applies to this run: " + "; ".join(
                f"{name} needs {', '.join(unmet)}" for name, unmet in self.skipped(event).items()))
        return names

    def best_of(self, event: Any, epsilon_of: Callable[[str], tuple[float, float | None]], *,
                bound: str = "best") -> BestOf:
        """Evaluate the candidates (:meth:`candidates`) and keep the smallest ε.

        Parameters
        ----------
        event : event record
            The run.
        epsilon_of : callable
            ``epsilon_of(name) -> (ε, order)``: the bound's ε at the caller's δ and the RDP order that
            gave it (``None`` if no RDP conversion).
        bound : str
            ``"best"`` or one bound's name.

        Returns
        -------
        winner : str
            The bound with the smallest ε (the first in registry order on ties).
        results : dict
            ``{name: (ε, order)}`` for every evaluated bound.
        skipped : dict
            ``{name: unmet conditions}`` for every bound of the registry that does not apply.
        """
        results = {name: epsilon_of(name) for name in self.candidates(event, bound)}
        winner = min(results, key=lambda name: results[name][0])
        return winner, results, self.skipped(event)

    def account(self, delta: float, best: BestOf, conversion: str, extra_assumptions: tuple[str, ...] = ()
                ) -> PrivacyAccount:
        """The :class:`PrivacyAccount` of a :meth:`best_of` result at ``delta``.

        Every ε it states (the winner's and each candidate's) is the computed one rounded up by
        :data:`.rounding.ROUNDING_MARGIN` (:func:`.rounding.round_up`): these are the certified numbers.
        ``conversion`` names how the winner's ε was obtained; ``extra_assumptions`` are appended to the
        winner's assumptions (run-specific ones, e.g. how a shuffled partition was drawn).
        """
        winner, results, skipped = best
        b = self.bounds[winner]
        epsilon, order = results[winner]
        return PrivacyAccount(epsilon=round_up(epsilon), delta=delta, bound=winner, theorem=b.theorem,
                              assumptions=b.assumptions + extra_assumptions, order=order, conversion=conversion,
                              candidates={name: round_up(r[0]) for name, r in results.items()}, skipped=skipped)


def bound_notes(account: PrivacyAccount, omit: Collection[str] = ()) -> list[str]:
    """Why every bound but the winner lost (its ε against the winner's) or did not apply (``account.skipped``).

    Bounds named in ``omit`` get no note (e.g. one whose condition the caller can never assert).
    Shared by the trainers and command lines whose certificates carry these notes.

    Parameters
    ----------
    account : PrivacyAccount
        A best-of account.
    omit : collection of str, optional
        Bound names to leave out.

    Returns
    -------
    list of str
        One note per losing or inapplicable bound: losers first, in ``candidates`` order.
    """
    notes = []
    for name, eps in account.candidates.items():
        if name != account.bound and name not in omit:
            verdict = "ties with" if eps == account.epsilon else "lost to"
            notes.append(f"{name} {verdict} {account.bound}: epsilon {eps:.6g} against {account.epsilon:.6g}")
    notes += [f"{name} not applicable: needs " + "; ".join(reasons)
              for name, reasons in account.skipped.items() if name not in omit]
    return notes
