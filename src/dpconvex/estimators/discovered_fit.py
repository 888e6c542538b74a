"""Fit a model on data encoded with a privately discovered schema, within the release's (ε, δ).

:func:`~dpconvex.datasets.private_release.split_release_budget` asks the training for the ε that
composes with the discovery to exactly the release's ε when the training is certified by a GDP
bound.  Other certificates (the default's Poisson-subsampled run, RDP bounds, bare (ε, δ) pairs)
compose to a little less or more; :func:`fit_with_discovery` composes what the run certified and,
while that exceeds the release's ε, fits again with the excess taken off the training's ε (at least
0.5 % of it).  A training certified only by a bare (ε, δ) pair (the non-smooth SCO bound,
PNSGD) uses all of its δ, leaving none for the discovery's Gaussian part: it is fitted again at half
the training's δ, the other half going to the discovery.  Only the last fit
is released, and the decision to fit again reads certificates only, which depend on public
quantities (n, d, the declared bounds, ε, δ), never on the records: the discarded fits cost nothing.

With the private-mean intercept (``PrivateRidge``'s default) the model's plan, hence its
certificate's curve, also depends on the released noisy mean m̂ (the centred targets' bound is
Y + |m̂|), so the decision reads m̂.  Every later fit therefore keeps the first
fit's m̂ (no new draw) and trains the model on the rest of its ε: the decision is then a
post-processing of m̂, which the released model carries and whose ε₁ the composed certificate counts
once; a fresh draw per fit would leave each discarded m̂, read by the decision, uncounted.  When no
fit composes within the budget, the error's ``intercept_epsilon`` is that ε₁, spent with the
discovery (``dpconvex train --ledger`` records both).
"""

from __future__ import annotations

import math
from typing import Any

from sklearn.base import BaseEstimator, clone

from dpconvex.datasets.private_release import compose_discovery
from dpconvex.datasets.private_schema import DiscoveryRecord
from dpconvex.exceptions import CalibrationError
from dpconvex.mechanisms.private_mean import MAX_MEAN_SHARE, PRIVATE_MEAN
from dpconvex.privacy.certificate import PrivacyCertificate
from dpconvex.privacy.dp_events import certificate_parts

__all__ = ["MAX_FITS", "fit_with_discovery"]

#: How many fits :func:`fit_with_discovery` tries before it gives up.
MAX_FITS = 6

#: Each new fit asks for at most this fraction of the previous fit's ε (so that the loop ends).
_SHRINK = 0.995


def fit_with_discovery(estimator: BaseEstimator, X: Any, y: Any, discovery: DiscoveryRecord,
                       **fit_params: Any) -> tuple[BaseEstimator, PrivacyCertificate]:
    """A clone of ``estimator`` fitted with the training's share of the budget, and the release's certificate.

    Parameters
    ----------
    estimator : dpconvex estimator
        Unfitted; its ``epsilon`` and ``delta`` are replaced by the training's share (the clone's
        only changes); its ``ledger`` must be None (record the composed certificate instead).
    X, y
        The training records, encoded with the discovered schema, and their labels.
    discovery : DiscoveryRecord
        From :func:`~dpconvex.datasets.private_release.discover_for_release` (it carries the split).
    **fit_params
        Passed to ``fit``.

    Returns
    -------
    model : dpconvex estimator
        The fitted clone (its ``privacy_report_`` is the training's own certificate).
    certificate : PrivacyCertificate
        The discovery and the training composed (:func:`~dpconvex.datasets.private_release.compose_discovery`):
        ε ≤ ``discovery.release.epsilon`` at δ = ``discovery.release.delta``, or ε = ∞ when the
        training's certificate is void.

    Raises
    ------
    ValueError
        If ``discovery`` carries no split or ``estimator`` has a ledger.
    CalibrationError
        If :data:`MAX_FITS` fits do not bring the composition within the release's ε (the message
        states the ε₁ of a private-mean intercept drawn).

    Notes
    -----
    Every ``ValueError`` or ``RuntimeError`` raised after the discovery carries ``intercept_epsilon``:
    the ε₁ of the private-mean intercept drawn before the stop
    (:data:`~dpconvex.mechanisms.private_mean.MAX_MEAN_SHARE` of the training's ε when the first fit
    may have drawn one, 0.0 for an estimator without that intercept), spent beside the discovery;
    ``dpconvex train --ledger`` records both.
    """
    release = discovery.release
    if release is None:
        raise ValueError("discovery carries no budget split: discover the schema with discover_for_release or "
                         "PublicSchemaTransformer.discover(epsilon=..., delta=...)")
    if getattr(estimator, "ledger", None) is not None:
        raise ValueError("fit_with_discovery records nothing: set the estimator's ledger=None and record the "
                         "composed certificate it returns (PrivacyLedger.record)")
    drawn: list = []  # the private mean the first fit released, if any (module docstring)
    try:
        return _fit_within(estimator, X, y, discovery, drawn, fit_params)
    except (ValueError, RuntimeError) as error:
        # a stop after a private mean may have been drawn: its ε₁ was spent beside the discovery (at most
        # MAX_MEAN_SHARE of the training's ε when the first fit stopped before telling)
        uses_mean = getattr(estimator, "fit_intercept", None) == PRIVATE_MEAN
        error.intercept_epsilon = (drawn[0].epsilon if drawn else  # type: ignore[attr-defined]
                                   MAX_MEAN_SHARE * release.training_epsilon if uses_mean else 0.0)
        raise


def _fit_within(estimator: BaseEstimator, X: Any, y: Any, discovery: DiscoveryRecord, drawn: list,
                fit_params: dict) -> tuple[BaseEstimator, PrivacyCertificate]:
    """:func:`fit_with_discovery`'s fits; the private mean the first one draws is appended to ``drawn``."""
    release = discovery.release
    epsilon, delta = release.training_epsilon, release.training_delta
    certificate = None
    for _ in range(MAX_FITS):
        model = clone(estimator).set_params(epsilon=epsilon, delta=delta)
        if drawn:  # the intercept the first fit released (module docstring): no new draw
            model._kept_intercept = drawn[0]
        model.fit(X, y, **fit_params)
        if not drawn and getattr(model, "_released_intercept_", None) is not None:
            drawn.append(model._released_intercept_)
        training = model.privacy_report_
        if math.isfinite(training.epsilon) and _pairs_delta(training) >= release.training_delta:
            delta = release.training_delta / 2.0  # a bare (ε, δ) pair leaves the discovery no δ: half of it
            continue
        if training.delta > delta * (1.0 + 1e-12):
            raise ValueError(f"the training certified delta={training.delta!r}, more than the {delta!r} it was asked "
                             "for: its composition with the discovery would exceed the release's delta")
        certificate = compose_discovery(training, discovery)
        if not math.isfinite(certificate.epsilon) or certificate.epsilon <= release.epsilon:
            return model, certificate
        epsilon = min(epsilon * _SHRINK, epsilon - (certificate.epsilon - release.epsilon))
        if not epsilon > (drawn[0].epsilon if drawn else 0.0):  # the model needs some of ε beside the mean
            break
    last = "none composed" if certificate is None else f"the last: {certificate.epsilon!r}"
    spent = f"; the private-mean intercept drawn spent epsilon={drawn[0].epsilon:.6g}" if drawn else ""
    raise CalibrationError(f"{MAX_FITS} fits composed with the schema discovery all exceeded epsilon="
                           f"{release.epsilon!r} ({last}); raise the discovery's share or choose a method "
                           f"certified by a GDP bound (e.g. method='noisy_gd'){spent}")


def _pairs_delta(certificate: PrivacyCertificate) -> float:
    """The δ the certificate's bare (ε, δ) pairs use up (:func:`~dpconvex.privacy.dp_events.certificate_parts`)."""
    return math.fsum(part.delta for part in certificate_parts(certificate) if part.kind == "pair")
