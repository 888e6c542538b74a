"""Audit targets for ``method="auto"`` on the K-class losses: the configurations it picks, run by its own code path.

For a K-class loss ``auto`` trains what it trains for a binary smooth loss (:mod:`.targets_auto`):
:func:`~dpconvex.mechanisms.noisy_sgd` with Poisson batches and ``output="tail_average"``,
certified by composition (PLD, replace-one), at the batch size, step, passes, clip norm and λ that
:func:`~dpconvex.mechanisms.auto.select_configuration` picks, now for the flat parameter of
dimension d·K (:meth:`~dpconvex.objectives.losses.Loss.parameter_dimension`) and the K-class constants.  Each
target asks ``select_configuration`` for that choice on its problem (d = 2, ε = 3, δ = 1e-3 as in
:data:`.targets.NOISY_GD_SETTING`; K = :data:`N_CLASSES` = 3) and trains exactly ``auto``'s call of
noisy_sgd with σ as a parameter (the halved-noise mutant scales it) and σ itself the one ``auto``
calibrates; ``tests/test_audit_multiclass.py`` checks that every release is bit-for-bit ``auto``'s
at the same seed, and the gradient gaps derived below.  W = ``w.reshape(d, K)``; a direction
e ⊗ c is ``np.kron(e, c)`` in the flat layout; e₁, e₂ are the feature axes, classes are 0, 1, 2.

``auto-one-vs-rest``: ``OneVsRestLoss(HuberizedHingeLoss(h), 3)``, h = :data:`~.targets_auto.HUBER_H`
(0.03, as the binary ``auto`` target), n = 10.  ``auto`` picks b = 1, T = 30 (E = 3, q = 0.1),
η = 1.95/M ≈ 0.116, λ ≈ 0.16 and no clipping (the gradient norm at 0 is L = √K·X): the binary
target's configuration, since L = √K and ℓ(0) = K scale the rule's terms alike.  Canary: nine
records at the origin (zero gradient) and e₁ of class 0, replaced by −e₁.  The gradient is x ⊗ g,
g_k = φ'(m_k)·s_k with s = (+1, −1, −1) (class 0 against the rest) and margins m_k = s_k·W[0, k]·x₁.
While every margin stays below 1 − h, φ' = −1: the canaries' gradients are ∓e₁ ⊗ s, which differ
by 2e₁ ⊗ s, of norm 2√K = S_g, the sensitivity the composition bound assumes.  The statistic is the
release along e₁ ⊗ s/√K: each canary draw moves it by ±η√K/b and the noise adds N(0, (ησ/b)²) per
step — the binary ``auto`` statistic at sensitivity 2√K with the σ calibrated to it, i.e. the sum
of the K binary runs' statistics at sensitivity 2 each.  So the audit tests the one-vs-rest
certificate (the joint run's, sensitivity 2√K·L) where it is tight;
the margins stay in the linear region as for the binary target.  The profile stops at δ = 0.3,
as for ``auto`` (PLD at T = 30 takes minutes near ε = 0).  Measured (100 audits resampled from
8,000 real runs per neighbour): honest profile margin −0.45 ± 0.05 at 2,000 runs; halved noise
+0.60 ± 0.12 at 2,000 runs, +0.37 ± 0.14 at 1,000.

``auto-multinomial``: ``MultinomialLogisticLoss(3)``, n = 50 (:data:`MULTINOMIAL_SETTING`).
``auto`` picks b = 7, T = 24 (E = 3, q = 0.14), η ≈ 3.90, λ ≈ 3.8e-4, the clip norm
C = X·√((K − 1)/K) ≈ 0.816 (the softmax gradient's norm at W = 0; sensitivity 2C) and calibrates
σ ≈ 1.16.  (The numbers below were measured before ``auto`` clipped the softmax gradient, at
b = 9, T = 18, σ ≈ 2.23 and S_g = 2√2·X; with the clip both canaries' gradients are clipped to C
along x ⊗ (e_2 − e_1)/√2 once they are predicted as class 2, so their difference tends to
C·‖x − x'‖ = √3·C, the same 0.87·S_g, and the honest and halved-noise tests still pass and fail
as required: ``tests/test_audit_multiclass.py``.)

*Why not the one-vs-rest canary.*  For ±x of the same class y the gradients x ⊗ (p − e_y) differ
by x ⊗ (p + p' − 2e_y), of norm 2√((K − 1)/K)·X = 0.577·S_g at W = 0 (S_g = 2√2·X), and at most
√6·X = 0.866·S_g anywhere (p → e_j, p' → e_k, j ≠ k ≠ y).  On the shared n = 10 problem the
calibrated noise (ησ/b ≈ 2 per coordinate and step) keeps the predictions near uniform and the
signal at ≈ 0.58·S_g: the halved-noise mutant then exceeded the certificate by only +0.08 ± 0.03
at 12,000 runs (8 seeded audits; false passes ≈ 0.1 %).  S_g itself is approached only when both
canaries are predicted confidently as the same wrong class while x − x' is long
(:mod:`dpconvex.objectives.multiclass`), which needs other records to drive W against the noise.

*Canary.*  49 records e₁ of class 2 and x = (cos a, sin a) of class 1 in row 0, replaced by
x' = (cos a, −sin a), a = 60°.  The records (about b per batch) drive column 2 along e₁: as they
are fitted, W[0, 2] − W[0, k] grows, and both canaries, which share the component cos a along e₁,
are predicted as class 2.  Then p, p' → e₂ (class 2) and the gradient difference
x ⊗ (p − e₁) − x' ⊗ (p' − e₁) → (x − x') ⊗ (e₂ − e₁) = 2 sin a·e₂ ⊗ (e₂ − e₁), of norm
sin a·S_g = 0.87·S_g.  The records have no e₂ component, so row e₂ of W moves only by the canary's
draws and the noise; the statistic is the release along e₂ ⊗ (e₂ − e₁)/√2.  The angle trades the
gap (sin a) against the canaries' margin (cos a times the records'): a ∈ [50°, 75°] and
n ∈ [30, 1000] gave halved-noise statistics whose total-variation distance exceeded the
certificate's by +0.06 to +0.11 (6,000–10,000 runs per neighbour, sampling error ≈ 0.01),
against +0.053 for the n = 10 pair; (a, n) = (60°, 50) is in the best group and cheap to run.

*What stays loose.*  Early steps, before the records have driven W, and the noise keep the
predictions from being confident: the statistic's gap/sd is 0.56 honest and 1.19 with half the
noise, where a constant full gap S_g would give ≈ 0.88 and 1.63 under the same steps, batches and
tail weights.  The power against the mutant is on the total-variation line (certified
δ_TV = 0.362 against a Kolmogorov–Smirnov distance of 0.46 for the halved-noise statistic), so the
profile runs over the whole δ grid (PLD at T = 18: about 2 s).  Measured (100 audits resampled
from 24,000 real runs per neighbour): honest profile margin −0.39 ± 0.02 at 8,000 runs; halved
noise +0.21 ± 0.04 at 8,000 runs (6 seeded real audits: +0.18 ± 0.04, all failed), +0.14 ± 0.05
at 4,000 (1 % passed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache, partial

import numpy as np

from dpconvex.audit.harness import PROFILE_DELTAS, AuditTarget, NeighbourPair, register
from dpconvex.audit.targets import NOISY_GD_SETTING, _calibrated, _canary_pair
from dpconvex.audit.targets_auto import HUBER_H
from dpconvex.audit.targets_noisy_sgd import _POISSON_PROFILE
from dpconvex.mechanisms import TrainingResult, auto, noisy_sgd
from dpconvex.mechanisms.auto import AutoChoice, select_configuration
from dpconvex.objectives.losses import HuberizedHingeLoss, Loss
from dpconvex.objectives.multiclass import MultinomialLogisticLoss, OneVsRestLoss

__all__ = ["N_CLASSES", "MULTINOMIAL_SETTING", "MulticlassTarget", "MULTICLASS_TARGETS", "multiclass_loss",
           "multiclass_pair", "multiclass_choice", "run_multiclass_configuration"]

#: Number of classes K of the audited losses.
N_CLASSES = 3
#: The multinomial target's pair: n records, canary at this angle from the records' direction e₁.
MULTINOMIAL_SETTING = {"n": 50, "angle_degrees": 60.0}


def _one_vs_rest_pair() -> NeighbourPair:
    """Records at the origin and the canary e₁ of class 0, replaced by −e₁; direction e₁ ⊗ s/√K."""
    pair = _canary_pair(0.0)
    labels = np.where(np.arange(N_CLASSES) == 0, 1.0, -1.0)  # s: class 0 against the rest
    return dataclasses.replace(pair, direction=np.kron(pair.direction, labels / np.sqrt(N_CLASSES)))


def _multinomial_pair() -> NeighbourPair:
    """n − 1 records e₁ of class 2 and a canary (cos a, sin a) of class 1, replaced by (cos a, −sin a).

    Direction e₂ ⊗ (e_2 − e_1)/√2: the row of W the records never move, along the limit of the
    two canaries' gradient difference (module docstring).
    """
    n, angle = MULTINOMIAL_SETTING["n"], np.deg2rad(MULTINOMIAL_SETTING["angle_degrees"])
    X = np.tile([1.0, 0.0], (n, 1))
    y = np.full(n, 2.0)
    X[0], y[0] = (np.cos(angle), np.sin(angle)), 1.0
    X_prime = X.copy()
    X_prime[0, 1] = -np.sin(angle)
    classes = np.eye(N_CLASSES)
    direction = np.kron(np.eye(2)[1], (classes[2] - classes[1]) / np.sqrt(2.0))
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=direction)


@dataclasses.dataclass(frozen=True)
class MulticlassTarget:
    """What a K-class ``auto`` target audits: the loss, the neighbours, the δ grid of the profile test.

    Attributes
    ----------
    loss : callable
        ``loss()``: the K-class loss.
    pair : callable
        ``pair()``: the neighbouring data sets and the audit direction.
    profile_deltas : tuple of float
        The δ grid of the profile test.
    description : str
        What the target audits, in a sentence.
    """

    loss: Callable[[], Loss]
    pair: Callable[[], NeighbourPair]
    profile_deltas: tuple[float, ...]
    description: str


#: Target name → its loss (a factory: a fresh loss per call), pair and profile grid (module docstring).
MULTICLASS_TARGETS: dict[str, MulticlassTarget] = {
    "auto-multinomial": MulticlassTarget(
        loss=lambda: MultinomialLogisticLoss(N_CLASSES), pair=_multinomial_pair, profile_deltas=PROFILE_DELTAS,
        description=f"n = {MULTINOMIAL_SETTING['n']}, d = 2, eps = 3; records e1 of class 2, canary (cos a, +-sin a) "
                    f"of class 1, a = {MULTINOMIAL_SETTING['angle_degrees']:g} deg"),
    "auto-one-vs-rest": MulticlassTarget(
        loss=lambda: OneVsRestLoss(HuberizedHingeLoss(HUBER_H), N_CLASSES), pair=_one_vs_rest_pair,
        profile_deltas=_POISSON_PROFILE,
        description=f"h = {HUBER_H:g}, n = 10, d = 2, eps = 3; canary e1 vs -e1 of class 0 among records at 0"),
}


def multiclass_loss(name: str) -> Loss:
    """The loss of target ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`MULTICLASS_TARGETS`.

    Returns
    -------
    Loss
    """
    return MULTICLASS_TARGETS[name].loss()


def multiclass_pair(name: str) -> NeighbourPair:
    """The neighbouring data sets and audit direction of target ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`MULTICLASS_TARGETS`.

    Returns
    -------
    NeighbourPair
    """
    return MULTICLASS_TARGETS[name].pair()


@cache
def multiclass_choice(name: str) -> AutoChoice:
    """What ``auto`` picks for this target's n, d, ε, δ and loss (public quantities only: the data never enter).

    Parameters
    ----------
    name : str
        A key of :data:`MULTICLASS_TARGETS`.

    Returns
    -------
    AutoChoice
    """
    loss, (n, d) = multiclass_loss(name), multiclass_pair(name).X.shape
    return select_configuration(n, loss.parameter_dimension(d), loss=loss, l2_regularization="auto",
                                epsilon=NOISY_GD_SETTING["epsilon"], delta=NOISY_GD_SETTING["delta"])


def run_multiclass_configuration(name: str, X, y, seed: int, sigma: float, delta: float) -> TrainingResult:
    """:func:`~dpconvex.mechanisms.auto.auto`'s call of noisy_sgd for :func:`multiclass_choice`, at noise ``sigma``.

    Parameters
    ----------
    name : str
        A key of :data:`MULTICLASS_TARGETS`.
    X, y : ndarray
        One of the neighbouring data sets.
    seed : int
        Seeds the run.
    sigma : float
        noisy_sgd's σ.
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
    """
    choice = multiclass_choice(name)
    return noisy_sgd(X, y, loss=multiclass_loss(name), l2_regularization=choice.l2_regularization, sigma=sigma,
                     delta=delta, data_norm=1.0, label_bound=None, constraint="auto", strict=False, random_state=seed,
                     **choice.noisy_sgd_options())


@cache
def _sigma(name: str) -> float:
    """σ as ``auto`` calibrates it for this target (public: it depends on n, d, ε, δ and the loss only)."""
    pair = multiclass_pair(name)
    return _calibrated(auto, pair, loss=multiclass_loss(name)).sigma


for _name, _target in MULTICLASS_TARGETS.items():
    register(
        AuditTarget(
            name=_name,
            mechanism="noisy_sgd",
            description=f"method='auto' on the {multiclass_loss(_name).name} loss, K = {N_CLASSES} (Poisson, tail "
                        f"average, composition), {_target.description}",
            make_pair=partial(multiclass_pair, _name),
            sigma=partial(_sigma, _name),
            run=partial(run_multiclass_configuration, _name),
            delta=NOISY_GD_SETTING["delta"],
            profile_deltas=_target.profile_deltas,
        )
    )
