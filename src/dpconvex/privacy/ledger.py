"""A privacy ledger: the releases made from one dataset, their composed guarantee and a budget filter.

:class:`PrivacyLedger` records releases (each a certificate, a label and an optional partition),
states their composition (:meth:`PrivacyLedger.total`) and refuses a planned release *before* it
runs when it would exceed a budget (:meth:`PrivacyLedger.check`).  Each release's curve is
read by :func:`dpconvex.privacy.dp_events.certificate_curve` (GDP μ, a Poisson-subsampled Gaussian run,
ρ-zCDP, or only an (ε, δ) pair); the composition rules are those of
:mod:`dpconvex.accounting.composition`.

Total (fixed sequences)
-----------------------
``total(delta)`` is the smallest ε among the valid candidates (each a composition theorem for the
releases as they were made, adaptively chosen mechanisms with their parameters as recorded), rounded
up by :data:`dpconvex.accounting.rounding.ROUNDING_MARGIN` like every certified ε:

``"gdp"``
    Every curve is GDP: √Σμ² (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 3.3), exact δ(ε) (their Cor. 2.13).
``"rdp"``
    Every curve as an RDP curve (GDP: α μ²/2 exactly; zCDP: α ρ; Poisson: the bound of
    :func:`~dpconvex.accounting.composition.poisson_replace_one_rdp`), summed on
    :data:`~dpconvex.accounting.rdp.DEFAULT_ORDERS` (Mironov 2017, arXiv:1702.07476, Prop. 1) and
    converted by the improved conversion.
``"pld"``
    Every curve's privacy-loss distribution (GDP, Poisson runs, pairs; not zCDP), convolved by
    dp-accounting (:func:`~dpconvex.privacy.dp_events.pld_epsilon`): the tightest for Poisson runs,
    whose RDP bound is loose (ten default fits on UCI Adult at ε = 0.1: 0.291 against 0.314 by RDP,
    ``docs/BENCHMARKS.md``).
``" + basic"``
    Releases with only a pair (δ_p = Σδ_i of them, ε_p = Σε_i) are added by basic composition
    (Dwork & Roth 2014, Thm 3.16): the curves are read at δ − δ_p and ε_p is added (needs δ > δ_p).
``"basic"``
    Every release's certified pair, summed (needs Σδ_i ≤ δ): never worse than the certificates.
``"advanced"``
    Pairs only, all equal, k ≥ 2: Dwork–Rothblum–Vadhan (Dwork & Roth 2014, Thm 3.20) at δ' = δ − kδ_i.

Partitions (parallel composition).  A release may name a partition: a set of records fixed in
advance, independently of the data (e.g. row ranges or ids), the partitions disjoint.  A
replace-one neighbour changes one record, hence one partition: releases of other partitions have
the same law under both datasets given the past, so the total is the maximum over partitions of
(the releases without a partition + that partition's), and this holds adaptively too.  Partitions
defined by a record's *values* are not covered (replacing the record may move it between two).

The filter (adaptively chosen releases)
---------------------------------------
The total above assumes the releases' parameters were fixed in advance.  When the next release and
its parameters are chosen after seeing earlier outputs, only a *filter* bounds the result: refuse
any release that would take the running sum past the budget.  ``check`` enforces one of:

``"gdp"``
    Smith & Thakurta 2022 (arXiv:2210.17520): with μ_i chosen adaptively, halting before
    Σμ_i² > μ_B² gives μ_B-GDP, μ_B the largest μ whose exact δ(ε_B) ≤ δ_B
    (:func:`~dpconvex.accounting.gdp.gdp_mu`).  Needs every release to be GDP.
``"renyi"``
    Feldman & Zrnic 2021 (arXiv:2008.11193), Rényi filter at *one* order α_B fixed before the first
    release: halting before Σ r_i(α_B) exceeds the value that converts (improved conversion at
    α_B alone) to ε_B at δ_B.  α_B defaults to the order at which the largest ρ-zCDP curve within
    the budget binds (:func:`~dpconvex.accounting.composition.zcdp_rho`), the right order for the
    Gaussian-like curves the library certifies; ``filter_order`` overrides it.  A filter at one
    order per budget: the order can't be chosen after the releases (that would be a union over
    orders, not a filter).  Takes GDP, zCDP and Poisson curves, not bare pairs.
``"basic"``
    Rogers, Roth, Ullman, Vadhan 2016 (arXiv:1605.08294), basic-composition filter: halting
    before Σε_i > ε_B or Σδ_i > δ_B.  Takes any release that carries a pair (its certified one).
``"auto"`` (default)
    The first of these that fits the first release (GDP → ``"gdp"``, zCDP → ``"renyi"``, a Poisson
    run or a pair → ``"basic"``), fixed from then on.  A Poisson run goes to ``"basic"`` because its
    replace-one Rényi bound is far above its privacy-loss distribution at the filter's one order
    (the default on UCI Adult at ε = 1: a Rényi divergence of about 1,900 at α_B for a budget of
    ε_B = 1.5), so the Rényi filter would refuse its first release; the basic filter charges the
    certified ε.  The first release is chosen before any output, so the rule is data-independent.  A
    later release the rule can't take raises ``ValueError`` (``filter="renyi"`` or ``"basic"`` mix kinds).

What the filter enforces is never tighter than ``total``: a Poisson run's RDP bound is well above
its privacy-loss distribution, a PLD or GDP composition is exact only for fixed sequences, and the
Rényi filter reads one order.  So ``total`` may report less than the budget while ``check``
refuses; ``total`` is the guarantee of the releases as made, the filter the guarantee against an
adaptive analyst.  The guarantee of the filter holds when every release was ``check``-ed before it
ran and ``record``-ed after (``record`` itself refuses nothing: a release that happened is recorded).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from os import PathLike
from typing import Any

from dpconvex.accounting import gdp
from dpconvex.accounting._checks import check_delta, check_epsilon, check_orders
from dpconvex.accounting.composition import basic_composition, gdp_compose, zcdp_rho
from dpconvex.accounting.rdp import epsilon_from_rdp
from dpconvex.exceptions import BudgetExceededError
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_curve, to_dp_event
from dpconvex.privacy.ledger_compose import LedgerTotal, compose
from dpconvex.privacy.ledger_plan import covers, planned_curve
from dpconvex.privacy.report import ledger_page

__all__ = ["FILTERS", "LedgerTotal", "PrivacyLedger", "Release", "compose", "covers", "planned_curve"]

#: The filters :class:`PrivacyLedger` knows (module docstring).
FILTERS = ("auto", "gdp", "renyi", "basic")
_FILTER_OF_KIND = {"gdp": "gdp", "zcdp": "renyi", "poisson": "basic", "pair": "basic"}
_FORMAT = "dpconvex-privacy-ledger"


@dataclass(frozen=True)
class Release:
    """One recorded release: its certificate, a label, and the partition of records it used (``None``: all).

    Attributes
    ----------
    label : str
    certificate : PrivacyCertificate
    partition : str or None
    """

    label: str
    certificate: PrivacyCertificate
    partition: str | None = None


class PrivacyLedger:
    """The releases made from one dataset: their total (ε, δ) and a budget filter (module docstring).

    Parameters
    ----------
    budget : (float, float), optional
        (ε_B, δ_B) the filter of :meth:`check` enforces; ``None``: no filter.
    filter : {"auto", "gdp", "renyi", "basic"}
        The filter rule (module docstring).
    filter_order : float, optional
        α_B of the Rényi filter (default: where the largest ρ-zCDP curve within the budget binds).
    """

    def __init__(self, budget: tuple[float, float] | None = None, *, filter: str = "auto",
                 filter_order: float | None = None) -> None:
        if budget is not None:
            epsilon, delta = budget
            budget = (check_epsilon(epsilon, "budget epsilon"), check_delta(delta, "budget delta"))
        if filter not in FILTERS:
            raise ValueError(f"filter must be one of {FILTERS}; got {filter!r}.")
        if filter_order is not None:
            check_orders(filter_order, "filter_order")
        self.budget = budget
        self.filter = filter
        self.filter_order = None if filter_order is None else float(filter_order)
        self._releases: list[Release] = []
        self._curves: list[PrivacyCurve] = []

    @property
    def releases(self) -> tuple[Release, ...]:
        """The recorded releases, in order."""
        return tuple(self._releases)

    def record(self, certificate: PrivacyCertificate, label: str, partition: str | None = None) -> Release:
        """Record a release that was made (refuses nothing; :meth:`check` it before it runs).

        Parameters
        ----------
        certificate : PrivacyCertificate
            The release's certificate.
        label : str
            What was released.
        partition : str, optional
            The partition of records it used (module docstring); ``None``: every record.

        Returns
        -------
        Release
        """
        if not isinstance(certificate, PrivacyCertificate):
            raise TypeError(f"certificate must be a PrivacyCertificate; got {type(certificate).__name__}.")
        curve = certificate_curve(certificate)
        self._resolve_filter(curve)
        release = Release(str(label), certificate, None if partition is None else str(partition))
        self._releases.append(release)
        self._curves.append(curve)
        return release

    def total(self, delta: float) -> LedgerTotal:
        """The composed (ε, δ) of the recorded releases at ``delta`` (module docstring: candidates, partitions).

        Parameters
        ----------
        delta : float
            δ in (0, 1).

        Returns
        -------
        LedgerTotal
            ε the smallest valid candidate, rounded up; ``method`` names it (``"parallel[<partition>]: …"``
            when the worst partition decides).
        """
        delta = check_delta(delta)
        groups = self._groups()
        totals = {name: compose(curves, delta) for name, curves in groups.items()}
        worst = max(totals, key=lambda name: totals[name].epsilon)
        result = totals[worst]
        if worst is None:
            return result
        return LedgerTotal(result.epsilon, delta, f"parallel[{worst}]: {result.method}", result.candidates)

    def check(self, planned: PrivacyCertificate | PrivacyCurve, partition: str | None = None) -> None:
        """Refuse a planned release that would take the ledger past its budget, before it runs.

        Parameters
        ----------
        planned : PrivacyCertificate or PrivacyCurve
            The release's certificate (e.g. from a plan) or its planned curve.
        partition : str, optional
            The partition it will use (``None``: every record, so every partition is checked).

        Raises
        ------
        BudgetExceededError
            If the filter (module docstring) refuses it; always for a release without a guarantee
            (ε = ``inf``, e.g. a bound read from the data), whatever the filter.
        ValueError
            Without a budget, or for a release the ledger's filter rule can't take.
        """
        if self.budget is None:
            raise ValueError("this ledger has no budget: create it with PrivacyLedger(budget=(epsilon, delta)).")
        curve = certificate_curve(planned) if isinstance(planned, PrivacyCertificate) else planned
        if curve.has_pair and not math.isfinite(curve.epsilon):
            raise BudgetExceededError(f"the release has no differential-privacy guarantee (epsilon = inf), which "
                                      f"exceeds every budget, {self.budget!r} included.")
        self._resolve_filter(curve)
        rule = self.filter
        groups = self._groups(partition)
        for name, curves in groups.items():
            spent, limit = self._spend(rule, [*curves, curve])
            if spent > limit:
                where = "" if name is None else f" in partition {name!r}"
                raise BudgetExceededError(f"the release would exceed the budget {self.budget!r}{where} under the "
                                          f"{rule!r} filter: {spent!r} > {limit!r}.")

    def _spend(self, rule: str, curves: list[PrivacyCurve]) -> tuple[float, float]:
        """(what the sequence spends, the limit) under ``rule``: Σμ² / Σ r(α_B) as ε / Σε (and Σδ)."""
        epsilon_b, delta_b = self.budget
        kinds = {"gdp": ("gdp",), "renyi": ("gdp", "zcdp", "poisson")}.get(rule)
        wrong = [c.kind for c in curves
                 if (kinds is not None and c.kind not in kinds) or (kinds is None and not c.has_pair)]
        if wrong:
            fix = "filter='basic' (anything with a pair)" + ("" if rule == "renyi" else " or filter='renyi' "
                                                              "(GDP, zCDP, Poisson)")
            raise ValueError(f"the ledger's filter is {rule!r}, which can't take a {wrong[0]!r} release"
                             f"{' without an (epsilon, delta) pair' if kinds is None else ''}; create the ledger "
                             f"with {fix}.")
        if rule == "gdp":
            return gdp_compose(c.mu for c in curves), gdp.gdp_mu(epsilon_b, delta_b)
        if rule == "renyi":
            order = self._filter_order()
            total = math.fsum(float(c.rdp([order])[0]) for c in curves)
            return epsilon_from_rdp([order], [total], delta_b)[0], epsilon_b
        eps, delta = basic_composition((c.epsilon, c.delta) for c in curves)
        return (eps, epsilon_b) if delta <= delta_b else (math.inf, epsilon_b)

    def _filter_order(self) -> float:
        if self.filter_order is None:
            self.filter_order = float(zcdp_rho(*self.budget)[1])
        return self.filter_order

    def _resolve_filter(self, curve: PrivacyCurve) -> None:
        if self.filter == "auto" and self.budget is not None:
            self.filter = _FILTER_OF_KIND[curve.kind]

    def _groups(self, partition: str | None = None) -> dict[str | None, list[PrivacyCurve]]:
        """Curves per partition: the unpartitioned releases plus each partition's (only ``partition``'s if given);
        without any partition, one group (``None``) of every release."""
        shared = [c for r, c in zip(self._releases, self._curves) if r.partition is None]
        names = ([partition] if partition is not None
                 else sorted({r.partition for r in self._releases if r.partition is not None}))
        if not names:
            return {None: shared}
        return {name: shared + [c for r, c in zip(self._releases, self._curves) if r.partition == name]
                for name in names}

    def to_dp_event(self, neighboring_relation: Any = None, *, partition: str | None = None) -> Any:
        """Every release as one dp-accounting ``ComposedDpEvent``, in the order recorded (for other accountants).

        Each release's event is :func:`~dpconvex.privacy.dp_events.to_dp_event` of its certificate
        (see there what each curve gives under which relation, and which accountant takes it).
        Partitions compose as a maximum (module docstring), which no single ``DpEvent`` states: a
        ledger with partitions exports one partition's history at a time, the releases of every
        record (no partition) and those of ``partition``; their composition is that partition's
        total, and the ledger's is the largest of them.

        Parameters
        ----------
        neighboring_relation : dp_accounting.NeighboringRelation, optional
            ``REPLACE_ONE`` (default) or ``ADD_OR_REMOVE_ONE``, as in
            :func:`~dpconvex.privacy.dp_events.to_dp_event`.
        partition : str, optional
            The partition whose history to export; required when a release names a partition.

        Returns
        -------
        dp_accounting.ComposedDpEvent

        Raises
        ------
        ValueError
            For a release certified by an (ε, δ) pair only (dp-accounting has no event for it: compose
            it with :meth:`total`), naming its label; for a ledger with partitions and no ``partition``.
        """
        import dp_accounting as dpa

        names = sorted({r.partition for r in self._releases if r.partition is not None})
        if names and partition is None:
            raise ValueError(f"the releases name the partitions {names}, which compose as a maximum and no single "
                             "DpEvent states that: export one partition's history with to_dp_event(partition=...).")
        events = []
        for release, curve in zip(self._releases, self._curves):
            if release.partition is not None and release.partition != partition:
                continue
            try:
                events.append(to_dp_event(curve, neighboring_relation))
            except ValueError as error:
                raise ValueError(f"release {release.label!r}: {error}") from error
        return dpa.ComposedDpEvent(events)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (certificates by :meth:`~dpconvex.privacy.certificate.PrivacyCertificate.to_dict`)."""
        return {"format": _FORMAT, "version": 1, "budget": None if self.budget is None else list(self.budget),
                "filter": self.filter, "filter_order": self.filter_order,
                "releases": [{"label": r.label, "partition": r.partition, "certificate": r.certificate.to_dict()}
                             for r in self._releases]}

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> PrivacyLedger:
        """The ledger :meth:`to_dict` wrote."""
        if record.get("format") != _FORMAT or record.get("version") != 1:
            raise ValueError(f"not a {_FORMAT} record (version 1).")
        ledger = cls(None if record["budget"] is None else tuple(record["budget"]), filter=record["filter"],
                     filter_order=record["filter_order"])
        for item in record["releases"]:
            certificate = PrivacyCertificate.from_dict(item["certificate"])
            ledger._releases.append(Release(item["label"], certificate, item["partition"]))
            ledger._curves.append(certificate_curve(certificate))
        return ledger

    def to_html(self, delta: float | None = None) -> str:
        """A self-contained HTML page of the ledger (:func:`dpconvex.privacy.report.ledger_page`).

        The total and how it was composed, the budget, a table of the releases and each release's
        own report; ``delta`` as in :func:`~dpconvex.privacy.report.ledger_page`.
        """
        return ledger_page(self, delta)

    def to_json(self, path: str | PathLike) -> None:
        """Write :meth:`to_dict` to ``path`` as JSON (reloaded exactly by :meth:`from_json`)."""
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.to_dict(), handle, indent=1, allow_nan=False)

    @classmethod
    def from_json(cls, path: str | PathLike) -> PrivacyLedger:
        """The ledger :meth:`to_json` wrote to ``path``."""
        with open(path, encoding="utf-8") as handle:
            return cls.from_dict(json.load(handle))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrivacyLedger):
            return NotImplemented
        return (self.budget, self.filter, self.filter_order, self._releases) == (
            other.budget, other.filter, other.filter_order, other._releases)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"PrivacyLedger(budget={self.budget!r}, filter={self.filter!r}, releases={len(self._releases)})"
