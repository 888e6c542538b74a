"""``classes="private"``: a classifier's label set released by partition selection, composed with its fit.

Without a declared label set, ``classes=None`` reads the labels from the private ``y`` and voids the
certificate (one record can add a label).  ``classes="private"`` releases the set instead:

1. the fit's (ε, δ) is split by :func:`~dpconvex.datasets.private_release.split_release_budget` with
   :data:`LABEL_SHARE` (of μ² and of δ): the selection gets μ_d and δ_sel, the training (ε_t, δ');
2. the labels whose Gaussian-noised count exceeds the threshold are released
   (:func:`~dpconvex.datasets.private_counts.select_partitions`, Gaussian thresholding: Korolova et
   al. 2009, Gopi et al. 2020, Desfontaines et al. 2022; replace-one: a record that changes its
   label moves two counts by one each, sensitivity √2): μ_d-GDP plus δ_sel;
3. a clone with ``classes`` = the released labels trains at (ε_t, δ'), and the two are composed
   into one certificate (:func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`: ε ≤ the
   estimator's ε at its δ).

Why :data:`LABEL_SHARE` = 0.1.  One selection needs far less than a whole schema: at share 0.1 the
training keeps about 95 % of ε (ε_t = 0.946 at ε = 1, δ = 1e-8), and a label is released with
probability ≥ 0.99 once it has 192 records at ε = 1, δ = 1e-8 (1,719 at ε = 0.1; 120 and 984 at
δ = 1e-5) — threshold plus 2.326 noise standard deviations (tests/test_private_classes.py checks it
by Monte Carlo).

A rarer label is not released.  Its records are then trained as the first released label, record by
record: refusing them, or naming the label in a message, would reveal what the selection withheld
(the refusal itself is an output whose chance goes from 0 to about 1 when one record's label
changes), and dropping them would change n, which the replace-one certificate holds public.  A
:class:`~dpconvex.exceptions.PrivacyLeakWarning` counts them; declare ``classes`` for such data.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils import column_or_1d
from sklearn.utils.multiclass import check_classification_targets

from dpconvex.data.checks import is_dask_collection, make_rng
from dpconvex.datasets.private_counts import select_partitions
from dpconvex.datasets.private_release import split_release_budget
from dpconvex.datasets.private_schema import DiscoveryRecord
from dpconvex.estimators.discovered_fit import fit_with_discovery
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.privacy.dp_events import PrivacyCurve

__all__ = ["LABEL_SHARE", "PRIVATE_CLASSES", "fit_with_private_classes", "release_label_set"]

#: The value of ``classes`` that asks for the label set to be released privately.
PRIVATE_CLASSES = "private"

#: The label selection's share of a fit's μ² and δ (module docstring).
LABEL_SHARE = 0.1

#: The task name of the label selection in its :class:`~dpconvex.datasets.private_schema.DiscoveryRecord`.
_LABELS = "classes"


def release_label_set(y: Any, *, epsilon: float, delta: float, random_state: np.random.Generator |
                      np.random.RandomState) -> tuple[np.ndarray, np.ndarray, DiscoveryRecord]:
    """The labels of ``y`` released by partition selection with :data:`LABEL_SHARE` of (ε, δ), ``y`` within them.

    Parameters
    ----------
    y : array-like of shape (n,)
        The private labels (any sortable type); compared with the released set by their text.
    epsilon, delta : float
        The whole fit's budget.
    random_state : numpy.random.Generator or numpy.random.RandomState
        Source of the selection's noise.

    Returns
    -------
    classes : ndarray
        The released labels, sorted, in ``y``'s type.
    labels : ndarray
        ``y`` with each label the selection withheld replaced by ``classes[0]`` (module docstring;
        counted in a :class:`~dpconvex.exceptions.PrivacyLeakWarning`, never named).
    record : DiscoveryRecord
        μ_d, δ_sel and the split (``record.release``): the training's share.

    Raises
    ------
    ValueError
        If fewer than two labels are released (a function of the release alone).
    """
    budget = split_release_budget(epsilon, delta, LABEL_SHARE)
    labels = column_or_1d(y, warn=True)
    check_classification_targets(labels)
    released = set(select_partitions(labels.astype(str), mu=budget.discovery_mu, delta=budget.discovery_delta,
                                     random_state=random_state))
    values = np.unique(labels)
    text = values.astype(str)
    classes = values[np.isin(text, list(released))]
    if classes.size < 2:
        raise ValueError(f"classes='private' released {classes.size} label(s) {classes.tolist()!r}; a classifier needs "
                         "two or more: each label needs enough records to pass the selection's threshold (raise "
                         "epsilon or delta), or declare the label set with classes=[...].")
    withheld = ~np.isin(labels.astype(str), list(released))
    if withheld.any():
        warnings.warn(f"classes='private': {int(withheld.sum())} records carry a label the private selection did not "
                      f"release; each is trained as {classes[0]!r} (record by record: n and the guarantee "
                      "unchanged); declare classes=[...] to train them as labelled", PrivacyLeakWarning, stacklevel=4)
        labels = np.where(withheld, classes[0], labels)
    record = DiscoveryRecord(mu=budget.discovery_mu, delta=budget.discovery_delta,
                             budget={_LABELS: budget.discovery_mu}, selection_delta=budget.discovery_delta,
                             release=budget)
    return classes, labels, record


def fit_with_private_classes(estimator: Any, X: Any, y: Any) -> Any:
    """Fit ``estimator`` (``classes="private"``) on X, y: the label set released, then the model, one certificate.

    The fitted attributes come from a clone fitted with the released ``classes`` at the training's
    share (:func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`); ``privacy_report_`` is the
    composed certificate, which the estimator's ledger (if any) records.  With a budget filter the
    ledger is checked for the estimator's whole (ε, δ) before the labels are read.

    Parameters
    ----------
    estimator : PrivateClassifier
        Its ``classes`` is ``"private"``; its other parameters are not changed.
    X, y
        Training data, as ``fit`` takes them (in memory).

    Returns
    -------
    PrivateClassifier
        ``estimator``, fitted.
    """
    if is_dask_collection(X) or is_dask_collection(y):
        raise ValueError("classes='private' needs in-memory labels; declare classes=[...] to fit on Dask "
                         "collections.")
    if estimator._ledger_budget():
        estimator._check_ledger(PrivacyCurve.pair(estimator.epsilon, estimator.delta))
    rng = make_rng(estimator.random_state)  # one stream: the selection's noise, then the training's
    classes, labels, record = release_label_set(y, epsilon=estimator.epsilon, delta=estimator.delta,
                                                random_state=rng)
    inner = clone(estimator).set_params(classes=classes.tolist(), ledger=None, ledger_partition=None,
                                        random_state=rng)
    model, certificate = fit_with_discovery(inner, X, labels, record)
    estimator._forget_fit()
    for name, value in vars(model).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(estimator, name, value)
    estimator.privacy_report_ = certificate
    if estimator.ledger is not None:
        estimator.ledger.record(certificate, f"{type(estimator).__name__} fit {len(estimator.ledger.releases) + 1}",
                                estimator.ledger_partition)
    return estimator
