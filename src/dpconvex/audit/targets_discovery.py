"""Audit targets of private schema discovery: partition selection, grid bounds and the type decision.

Each target runs one of the Gaussian count mechanisms that
:func:`~dpconvex.datasets.private_schema.discover_schema` composes, from the library's own code
(:func:`~dpconvex.datasets.private_counts.select_partitions`,
:func:`~dpconvex.datasets.private_counts.private_bounds`,
:func:`~dpconvex.datasets.private_schema.decide_numerical`), at μ = 1 (:data:`DISCOVERY_SETTING`) and
replace-one neighbours.  The harness's noise parameter σ is the counts' noise standard deviation,
σ = √2/μ (:func:`~dpconvex.datasets.private_counts.count_noise`): a run at σ calls the mechanism with
μ = √2/σ, so the halved-noise mutant (:func:`~dpconvex.audit.harness.noise_mutant`) is the library
called with 2μ under a certificate of μ.  The certificate is the library's own curve,
:meth:`~dpconvex.datasets.private_schema.DiscoveryRecord.epsilon`: ε(δ) the smallest ε with
δ_μ(ε) + δ_τ ≤ δ (δ_τ = 0 but for the selection; ε = inf for δ ≤ δ_τ).

Every release is a few bits (a set, grid edges, a decision), each a threshold on a Gaussian count, so
a pair is worst case where the differing record moves a count across that threshold.  A count
moved by one record shifts by 1/σ = μ/√2 noise standard deviations, half of the certificate's μ² (the
record also leaves another count, which the release does not show): the honest targets sit well
inside their certificates, and the halved-noise mutants shift by √2·μ.  Their counts are placed at the
mutant's threshold (between the two neighbours' counts), where the bit's error rates lie on the
trade-off curve of √2·μ-GDP, outside the certified μ-GDP one at moderate rates.

``discovery-selection``.  D: one record of the value ``rare`` and three of ``common``; D′: four of
``common``.  ``rare`` is fresh (count 1 in D, absent from D′): it is released with probability δ_τ on
D and never on D′, the additive δ_τ of the certificate (δ(ε) ≤ δ_μ(ε) + δ_τ, the derivation in
:mod:`dpconvex.datasets.private_counts`).  ``common`` (3 vs 4) straddles the mutant's threshold
τ = 1 + (σ/2)·Φ⁻¹(1 − δ_τ) = 3.63.  The release is (``rare`` released, ``common`` released); the
statistic ``common`` − 2·``rare`` orders the four outcomes by likelihood ratio.  Its second mutant,
:func:`threshold_mutant`, selects at τ/2 (the library called with the δ_τ that gives τ/2,
:func:`~dpconvex.datasets.private_counts.threshold_delta`) under the certificate of δ_τ: the fresh value
then passes with probability Φ̄((Φ⁻¹(1 − δ_τ) − 1/σ)/2) = 0.066 instead of δ_τ = 1e-4.

``discovery-bounds``.  Twenty records: seventeen at 0.5 and three at 1e15 (beyond the grid: its top
ray) in D, two in D′ (the third replaced by 0.5).  The top ray's count (3 vs 2) straddles the
mutant's empty-bin cut σ/2·Φ⁻¹(1 − 0.05/231) = 2.49; the statistic is the released upper bound (5·10^12
when the ray survives the cut, 0.5, a grid edge, otherwise).  A lone outlier (count 1 vs 0) is nearly never
revealed: count 1 survives the honest cut (4.98) with probability 0.0025 and the mutant's with 0.018.

``discovery-type``.  Twenty cells: four numbers and sixteen missing in D, three and seventeen in D′.
The decision releases None when the noisy present count n − (noisy missing count) is at most 5σ; the
present count (4 vs 3) straddles the mutant's floor 5σ/2 = 3.54, and the statistic is "None".  A
column whose numeric share sits at :data:`~dpconvex.datasets.private_schema.NUMERIC_SHARE` is the
weaker pair: the decision compares one projection of the counts, which moves by 1 against noise of
sd σ·√(1 + 0.9²), 0.53·μ (the mutant 1.05·μ, no farther from the certified μ than a few
hundredths in total variation).
"""

from __future__ import annotations

import dataclasses
import math
from functools import cache, partial

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.datasets.private_counts import (
    COUNT_SENSITIVITY,
    count_noise,
    private_bounds,
    select_partitions,
    selection_threshold,
    threshold_delta,
)
from dpconvex.datasets.private_schema import DISCOVERY_THEOREM, DiscoveryRecord, decide_numerical
from dpconvex.mechanisms import TrainingResult
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["CATEGORIES", "DISCOVERY_SETTING", "bounds_pair", "bounds_release", "discovery_certificate",
           "selection_pair", "selection_release", "threshold_mutant", "type_pair", "type_release"]

#: μ of each mechanism, δ_τ of the selection, δ of the audited certificate, and the pairs' counts and values.
DISCOVERY_SETTING = {"mu": 1.0, "selection_delta": 1e-4, "delta": 1e-3, "common_count": 3, "rows": 20,
                     "far_count": 3, "far_value": 1e15, "typical_value": 0.5, "present_count": 4,
                     "present_value": 1.0}
#: The selection's values: code 0 is the fresh value, code 1 the common one.
CATEGORIES = np.array(["rare", "common"], dtype=object)
_MU = DISCOVERY_SETTING["mu"]
_SELECTION_DELTA = DISCOVERY_SETTING["selection_delta"]


@cache
def discovery_certificate(mechanism: str, sigma: float, delta: float, selection_delta: float) -> PrivacyCertificate:
    """The certificate of a count mechanism at noise ``sigma``: μ = √2/σ-GDP plus ``selection_delta``, read at δ.

    Parameters
    ----------
    mechanism : str
        The library function audited.
    sigma : float
        The counts' noise standard deviation.
    delta : float
        δ of the certificate.
    selection_delta : float
        The additive δ_τ (0 without a partition selection).

    Returns
    -------
    PrivacyCertificate
        ε from :meth:`~dpconvex.datasets.private_schema.DiscoveryRecord.epsilon`; inf when δ ≤ δ_τ.
    """
    mu = COUNT_SENSITIVITY / sigma
    record = DiscoveryRecord(mu=mu, delta=selection_delta)
    epsilon = record.epsilon(delta) if delta > selection_delta else math.inf
    return PrivacyCertificate(
        mechanism=mechanism, epsilon=epsilon, delta=delta, bound="gdp", theorem=DISCOVERY_THEOREM,
        conditions=("replace-one neighbours", "n public"), assumptions={"mu": mu, "selection_delta": selection_delta},
        order=None, conversion="gdp", sigma=sigma, iterations=1)


def _sigma() -> float:
    """The counts' noise standard deviation at μ = :data:`DISCOVERY_SETTING` ``["mu"]``."""
    return count_noise(_MU)


# ----------------------------------------------------------------------------- partition selection
def selection_pair() -> NeighbourPair:
    """One ``rare`` record (row 0) and three ``common`` ones in D; row 0 ``common`` in D′ (values as codes).

    Returns
    -------
    NeighbourPair
        Direction (−2, 1) on the release (``rare`` released, ``common`` released).
    """
    X = np.ones((DISCOVERY_SETTING["common_count"] + 1, 1))
    X[0, 0] = 0.0
    X_prime = np.ones_like(X)
    y = np.zeros(X.shape[0])
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.array([-2.0, 1.0]))


def selection_release(X: NDArray, y: NDArray, seed: int, sigma: float, delta: float, *,
                      threshold_factor: float = 1.0) -> TrainingResult:
    """:func:`~dpconvex.datasets.private_counts.select_partitions` on the codes of ``X`` at μ = √2/``sigma``.

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets (codes into :data:`CATEGORIES` in ``X[:, 0]``; ``y`` unused).
    seed : int
        Seeds the noise.
    sigma : float
        The counts' noise standard deviation.
    delta : float
        δ of the certificate.
    threshold_factor : float, default=1.0
        Select at this multiple of the threshold τ of δ_τ (by calling the library with the δ that gives
        it); the certificate stays that of δ_τ.  1: honest.

    Returns
    -------
    TrainingResult
        (``rare`` released, ``common`` released) as ``coef``, and the certificate.
    """
    selection_delta = _SELECTION_DELTA
    if threshold_factor != 1.0:
        selection_delta = threshold_delta(sigma, threshold_factor * selection_threshold(sigma, _SELECTION_DELTA))
    cells = CATEGORIES[X[:, 0].astype(int)]
    released = select_partitions(cells, mu=COUNT_SENSITIVITY / sigma, delta=selection_delta, random_state=seed)
    coef = np.array([float(str(value) in released) for value in CATEGORIES])
    return TrainingResult(coef=coef, certificate=discovery_certificate("select_partitions", sigma, delta,
                                                                       _SELECTION_DELTA))


def threshold_mutant(target: AuditTarget, factor: float = 0.5) -> AuditTarget:
    """The partition-selection target selecting at ``factor``·τ under the certificate of δ_τ.

    Parameters
    ----------
    target : AuditTarget
        The ``select_partitions`` target (honest or a noise mutant).
    factor : float, default=0.5
        The threshold's scale, in (0, 1).

    Returns
    -------
    AuditTarget
        The mutant (its name suffixed ``[threshold x<factor>]``).
    """
    if target.mechanism != "select_partitions":
        raise ValueError(f"threshold_mutant needs the select_partitions target; got {target.name!r}.")
    if not 0.0 < factor < 1.0:
        raise ValueError(f"factor must lie in (0, 1); got {factor!r}.")
    return dataclasses.replace(target, name=f"{target.name}[threshold x{factor:g}]",
                               run=partial(selection_release, threshold_factor=factor))


# ----------------------------------------------------------------------------- bounds
def bounds_pair() -> NeighbourPair:
    """Seventeen values 0.5 and three 1e15 (rows 0–2) in D; row 0 is 0.5 in D′.

    Returns
    -------
    NeighbourPair
        Direction (0, 1): the upper bound.
    """
    setting = DISCOVERY_SETTING
    X = np.full((setting["rows"], 1), setting["typical_value"])
    X[:setting["far_count"], 0] = setting["far_value"]
    X_prime = X.copy()
    X_prime[0, 0] = setting["typical_value"]
    y = np.zeros(setting["rows"])
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.array([0.0, 1.0]))


def bounds_release(X: NDArray, y: NDArray, seed: int, sigma: float, delta: float) -> TrainingResult:
    """:func:`~dpconvex.datasets.private_counts.private_bounds` of ``X[:, 0]`` at μ = √2/``sigma`` (default grid).

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets (``y`` unused).
    seed : int
        Seeds the noise.
    sigma : float
        The counts' noise standard deviation.
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
        (lower, upper) as ``coef`` ((0, 0) when no bounds are found), and the certificate.
    """
    bounds = private_bounds(X[:, 0], mu=COUNT_SENSITIVITY / sigma, random_state=seed)
    coef = np.zeros(2) if bounds is None else np.array(bounds)
    return TrainingResult(coef=coef, certificate=discovery_certificate("private_bounds", sigma, delta, 0.0))


# ----------------------------------------------------------------------------- type decision
def type_pair() -> NeighbourPair:
    """Four numbers (rows 0–3) and sixteen missing cells (NaN) in D; row 0 missing in D′.

    Returns
    -------
    NeighbourPair
        Direction (1, 0): "None" (as good as empty).
    """
    setting = DISCOVERY_SETTING
    X = np.full((setting["rows"], 1), np.nan)
    X[:setting["present_count"], 0] = setting["present_value"]
    X_prime = X.copy()
    X_prime[0, 0] = np.nan
    y = np.zeros(setting["rows"])
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.array([1.0, 0.0]))


def type_release(X: NDArray, y: NDArray, seed: int, sigma: float, delta: float) -> TrainingResult:
    """:func:`~dpconvex.datasets.private_schema.decide_numerical` of the column ``X[:, 0]`` at μ = √2/``sigma``.

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets (NaN: a missing cell; ``y`` unused).
    seed : int
        Seeds the noise.
    sigma : float
        The counts' noise standard deviation.
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
        (decision is None, decision is True) as ``coef``, and the certificate.
    """
    decision = decide_numerical(pd.Series(X[:, 0]), mu=COUNT_SENSITIVITY / sigma, random_state=seed)
    coef = np.array([float(decision is None), float(decision is True)])
    return TrainingResult(coef=coef, certificate=discovery_certificate("decide_numerical", sigma, delta, 0.0))


register(
    AuditTarget(
        name="discovery-selection",
        mechanism="select_partitions",
        description="Gaussian partition selection, mu = 1, delta_tau = 1e-4: a value held by one record vs a common "
                    "value at the threshold; statistic: common released - 2 rare released",
        make_pair=selection_pair,
        sigma=_sigma,
        run=selection_release,
        delta=DISCOVERY_SETTING["delta"],
    )
)
register(
    AuditTarget(
        name="discovery-bounds",
        mechanism="private_bounds",
        description="grid-rounded private bounds, mu = 1: three records beyond the grid vs two, among values 0.5; "
                    "statistic: the upper bound",
        make_pair=bounds_pair,
        sigma=_sigma,
        run=bounds_release,
        delta=DISCOVERY_SETTING["delta"],
    )
)
register(
    AuditTarget(
        name="discovery-type",
        mechanism="decide_numerical",
        description="private type decision, mu = 1: four numbers vs three among missing cells, at the floor of "
                    "an empty column; statistic: the decision is None",
        make_pair=type_pair,
        sigma=_sigma,
        run=type_release,
        delta=DISCOVERY_SETTING["delta"],
    )
)
