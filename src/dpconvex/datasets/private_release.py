"""One certificate for a release whose schema was discovered privately: the budget split and the composition.

A bare table (no declared schema) is released in two steps: the schema is discovered under GDP
(:func:`~dpconvex.datasets.private_schema.discover_schema`: μ_d-GDP plus an additive δ_sel, the
selection's), then a model is trained on the table encoded with it (the feature map is record by
record once the schema is fixed).  The released schema is part of the output, so the certificate
of the release is the composition of the two.

The split (:func:`split_release_budget`).  For the user's (ε, δ) and a ``share`` s in (0, 1):

* δ_sel = s·δ is the discovery's additive δ (the partition selections'), and the Gaussian parts
  get δ' = δ − δ_sel;
* μ = :func:`~dpconvex.accounting.gdp.gdp_mu` (ε, δ') is the whole GDP budget at (ε, δ');
* the discovery gets μ_d = √s·μ and the training μ_t = √(1 − s)·μ, so μ_d² + μ_t² = μ²: the share
  is a share of μ², the quantity GDP composition adds (Dong, Roth, Su 2019, arXiv:1905.02383,
  Cor. 3.3);
* the training is asked for (ε_t, δ') with ε_t = :func:`~dpconvex.accounting.gdp.gdp_epsilon` (δ', μ_t).

A training run certified by a GDP bound then composes with the discovery to exactly (ε, δ): the
pair's tradeoff is at least G_μ ⊗ f_{0,δ_sel}, whose δ(ε) ≤ δ_μ(ε) + δ_sel = δ' + δ_sel (the
derivation note of :mod:`dpconvex.datasets.private_counts`).  Any other training curve (the default's
Poisson-subsampled run, an RDP bound, a bare (ε, δ) pair) is composed as what it is by
:func:`compose_discovery`, which reports what the composition gives; it may exceed ε, and then
the training must be rerun with less (:func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`
does that).  Why a share of μ² rather than of ε: 10 % of μ² costs the training only 1 − √0.9 ≈ 5 %
of its μ while giving the discovery √0.1 ≈ 32 % of it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pandas as pd

from dpconvex.accounting._checks import check_delta, check_epsilon, check_open_unit
from dpconvex.accounting.gdp import gdp_epsilon, gdp_mu
from dpconvex.accounting.rounding import round_up
from dpconvex.datasets.private_counts import RandomState
from dpconvex.datasets.private_schema import DISCOVERY_THEOREM, DiscoveryRecord, ReleaseBudget, discover_schema
from dpconvex.datasets.schema import TabularSchema
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import PrivacyCurve, certificate_parts, pld_epsilon
from dpconvex.privacy.ledger import compose

__all__ = ["DEFAULT_DISCOVERY_SHARE", "DISCOVERY_CONDITION", "ReleaseBudget", "compose_discovery",
           "discover_for_release", "discovery_spent_certificate", "split_release_budget"]

#: The default share of the budget spent on the discovery: of μ² (GDP) and of δ (module docstring).
DEFAULT_DISCOVERY_SHARE = 0.5

#: The condition a composed certificate adds to the training's.
DISCOVERY_CONDITION = (
    "the schema (columns' types, categories, bounds, label set) was discovered privately on the same records; "
    "it is part of the release and its cost is composed in"
)


def split_release_budget(epsilon: float, delta: float, share: float = DEFAULT_DISCOVERY_SHARE) -> ReleaseBudget:
    """Split (ε, δ) between a schema discovery and a training run (module docstring).

    Parameters
    ----------
    epsilon : float
        The release's ε, > 0 and finite.
    delta : float
        The release's δ, in (0, 1).
    share : float, default DEFAULT_DISCOVERY_SHARE
        The discovery's share of μ² and of δ, in (0, 1).

    Returns
    -------
    ReleaseBudget
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    share = check_open_unit(share, "share")
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite to split it between a schema discovery and a training run")
    selection_delta = share * delta
    rest = delta - selection_delta
    mu = gdp_mu(epsilon, rest)
    return ReleaseBudget(epsilon=epsilon, delta=delta, share=share, discovery_mu=math.sqrt(share) * mu,
                         discovery_delta=selection_delta,
                         training_epsilon=gdp_epsilon(rest, math.sqrt(1.0 - share) * mu), training_delta=rest)


def compose_discovery(training: PrivacyCertificate, record: DiscoveryRecord) -> PrivacyCertificate:
    """The certificate of a discovered schema and a model trained with it: the two composed.

    The discovery is the curve G_{μ_d} ⊗ f_{0,δ_sel} (``record.mu``, ``record.delta``), the training
    the curves its certificate certifies (:func:`~dpconvex.privacy.dp_events.certificate_parts`: a
    private-mean intercept and the model separately); the composition is the smallest of
    :func:`~dpconvex.privacy.ledger.compose`'s valid candidates (exact GDP, PLD convolution, RDP; the
    additive δ_sel enters as the pair (0, δ_sel)) at δ = ``training.delta`` + ``record.delta``, or at
    the release's δ (``record.release``) when larger.  The result is a pair-only certificate (its curve is not GDP):
    it lists both parts, each one's share, the columns the discovery dropped, and how it was composed;
    ``details["training_certificate"]`` keeps the training's own.  A void training certificate
    (ε = ∞) stays void.

    Parameters
    ----------
    training : PrivacyCertificate
        The model's certificate, trained on data encoded with the discovered schema.
    record : DiscoveryRecord
        What the discovery cost.

    Returns
    -------
    PrivacyCertificate
    """
    if not math.isfinite(training.epsilon):
        return training
    delta = training.delta + record.delta  # at least the release's δ, which may leave room for a pair-only training
    delta = delta if record.release is None else max(delta, record.release.delta)
    selection = [PrivacyCurve.pair(0.0, record.delta)] if record.delta > 0.0 else []
    total = compose([PrivacyCurve.gdp(record.mu), *certificate_parts(training), *selection], delta)
    # the baseline: every iterate published, composed with the discovery too (inf where no PLD represents it)
    published = [PrivacyCurve.gdp(record.mu), PrivacyCurve.pair(training.composition_epsilon, training.delta),
                 *selection]
    convolved = pld_epsilon(published, delta) if math.isfinite(training.composition_epsilon) else None
    baseline = math.inf if convolved is None else round_up(convolved)
    dropped = "; ".join(f"{column}: {why}" for column, why in record.dropped.items())
    parts = (f"schema discovery: {record.mu:.4g}-GDP plus delta {record.delta:.3g} ({len(record.budget)} tasks "
             f"sharing mu^2 by weight); training: epsilon {training.epsilon:.4g} at delta {training.delta:.3g} "
             f"({training.bound}); composed by {total.method}")
    notes = (*training.notes, parts, *([f"columns dropped by the discovery: {dropped}"] if dropped else []))
    return PrivacyCertificate(
        mechanism=training.mechanism, epsilon=total.epsilon, delta=delta,
        bound=f"schema discovery + {training.bound}", theorem=f"{DISCOVERY_THEOREM}; training: {training.theorem}",
        conditions=(*training.conditions, DISCOVERY_CONDITION),
        assumptions={**training.assumptions, "discovery_mu": record.mu, "discovery_delta": record.delta,
                     "training_epsilon": training.epsilon, "training_delta": training.delta},
        order=None, conversion=f"composed with schema discovery ({total.method})", sigma=training.sigma,
        iterations=training.iterations, candidates=dict(total.candidates), composition_epsilon=baseline, notes=notes,
        details={**training.details, "discovery_budget": dict(record.budget), "discovery_dropped": dict(record.dropped),
                 "training_certificate": training.to_dict()},
    )


def discover_for_release(frame: pd.DataFrame, target: str | None, *, epsilon: float, delta: float,
                         share: float = DEFAULT_DISCOVERY_SHARE, random_state: RandomState = None,
                         **options: Any) -> tuple[TabularSchema, DiscoveryRecord]:
    """Discover a schema with ``share`` of a release's (ε, δ), leaving the rest to the training (module docstring).

    Parameters
    ----------
    frame : pandas.DataFrame
        The private training records (their header and number are public).
    target : str or None
        The label column (None: a features-only schema).
    epsilon, delta : float
        The whole release's budget: ε > 0 finite, δ in (0, 1).
    share : float, default DEFAULT_DISCOVERY_SHARE
        The discovery's share of μ² and of δ, in (0, 1).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default None
        Source of the noise; None (for a release) draws from the operating system's entropy.
    **options
        ``categorical_columns``, ``numerical_columns``, ``task``, ``positive_label``, ``quantiles``
        of :func:`~dpconvex.datasets.private_schema.discover_schema`.

    Returns
    -------
    schema : TabularSchema
    record : DiscoveryRecord
        With ``release``, the split: ``record.release.training_epsilon`` and ``training_delta`` are
        what to ask of the training run, whose certificate :func:`compose_discovery` then composes
        with this record.

    Raises
    ------
    ValueError
        If the discovery keeps no feature column (a small table at a small budget), or as
        :func:`~dpconvex.datasets.private_schema.discover_schema` raises.
    """
    budget = split_release_budget(epsilon, delta, share)
    schema, record = discover_schema(frame, target, mu=budget.discovery_mu, delta=budget.discovery_delta,
                                     random_state=random_state, **options)
    if not schema.columns:
        raise ValueError(f"the private schema discovery kept no feature column of the {len(frame)} records (every "
                         f"column's counts were within noise: {'; '.join(sorted(record.dropped))}); raise epsilon, "
                         "delta or share, or declare the schema.")
    return schema, replace(record, release=budget)


def discovery_spent_certificate(budget: ReleaseBudget, intercept_epsilon: float = 0.0) -> PrivacyCertificate:
    """The discovery's part of a release that stopped before its training, as a pair at the release's δ.

    The discovery spends at most μ_d-GDP plus δ_sel (``budget.discovery_mu``, ``budget.discovery_delta``,
    whatever it found), so the pair (ε_d, δ) with ε_d = :meth:`DiscoveryRecord.epsilon
    <dpconvex.datasets.private_schema.DiscoveryRecord.epsilon>` (δ) rounded up is valid (a pair-only
    certificate: a ledger composes it as such).  A private-mean intercept drawn before the stop
    (ε₁-DP, pure) adds ε₁ (basic composition).

    Parameters
    ----------
    budget : ReleaseBudget
        The release's split (:func:`split_release_budget`).
    intercept_epsilon : float, default 0.0
        ε₁ of a private-mean intercept drawn before the stop (``CalibrationError.intercept_epsilon`` of
        :func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`), ≥ 0.

    Returns
    -------
    PrivacyCertificate
    """
    if not (math.isfinite(intercept_epsilon) and intercept_epsilon >= 0.0):
        raise ValueError(f"intercept_epsilon must be finite and >= 0; got {intercept_epsilon!r}.")
    discovery = DiscoveryRecord(mu=budget.discovery_mu, delta=budget.discovery_delta).epsilon(budget.delta)
    bound = "private mean + schema discovery (training stopped)" if intercept_epsilon else \
        "schema discovery (training not run)"
    return PrivacyCertificate(
        mechanism="schema_discovery", epsilon=round_up(discovery + intercept_epsilon), delta=budget.delta, bound=bound,
        theorem=DISCOVERY_THEOREM, conditions=("replace-one neighbours", "n and the header public"),
        assumptions={"discovery_mu": budget.discovery_mu, "discovery_delta": budget.discovery_delta,
                     **({"intercept_epsilon": intercept_epsilon} if intercept_epsilon else {})},
        order=None, conversion="pair: mu-GDP plus an additive delta, read at the release's delta", sigma=0.0,
        iterations=0,
    )
