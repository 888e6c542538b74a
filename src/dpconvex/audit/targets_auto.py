"""Audit targets for ``method="auto"`` (the default): the configurations it picks, run by its own code path.

``auto`` trains one of two things: noisy SGD (smooth losses; target ``auto``) or Arora et al.'s
sco_noisy_sgd (non-smooth losses; target ``auto-hinge``).  Each target trains exactly the call
:func:`~dpconvex.mechanisms.auto.auto` makes, with σ as a parameter (the audit needs it: the
halved-noise mutant scales it) and σ itself the one ``auto`` calibrates;
``tests/test_audit_auto.py`` checks that every release is bit-for-bit ``auto``'s at the same seed.

Smooth losses (``auto``).
For a smooth loss ``auto`` trains :func:`~dpconvex.mechanisms.noisy_sgd` with Poisson batches and
``output="tail_average"`` (the mean of the last ⌈T/2⌉ iterates), certified by composition (PLD,
replace-one), at the batch size, step η, passes E, clip norm and λ that
:func:`~dpconvex.mechanisms.auto.select_configuration` picks from (n, d, ε, δ) and the loss.  The
target asks ``select_configuration`` for that choice on the shared small problem
(:data:`.targets.NOISY_GD_SETTING`: n = 10, d = 2, ε = 3, δ = 1e-3) and trains it.  The test also
checks that the chosen batches are subsampled (q = b/n < 1, the amplified branch of the accountant).

Canary.  Nine records at the origin (zero gradient) and x = e₁ with label +1 in row 0, replaced by
−e₁.  The loss is the huberised hinge with h = :data:`HUBER_H`: its gradient is exactly −y·x while
the margin y·θᵀx stays below 1 − h, so the two versions' gradients are −e₁ and +e₁ — they differ by
S_g = 2L, the sensitivity the composition bound assumes (the logistic loss would only give
s(z) + s(−z) = 1, half of it).  For the huberised hinge |φ'(0)| = L, so ``auto`` does not clip
(its clipped runs, logistic ones, are Poisson noisy SGD with ``clip_norm`` certified by the same
composition bound: the ``noisy-sgd-poisson`` target's trainer and certificate).  Here the rule's
step is its cap 1.95/M ≈ 3.9h (since the step rule of 2026-11-24; the simulated fractions and
margins below were measured at η = 1/M ≈ 2h, before it; the quick honest audit and the
halved-noise mutation still pass and fail as required: tests/test_audit.py,
tests/test_audit_mutations.py).  A small h makes the step small, so the canary's margin
stays in that linear region: at the current choice (b = 1, T = 30: E = 3 passes, q = 0.1) it leaves
it in under 0.1 % of the honest runs and in none of the mutant's (10⁵ simulated runs).  The release
along e₁ is then a fixed linear combination of the steps' ±[canary drawn] + σξ_k (λθ only
contracts), a binomial mixture of Gaussians, and the audit statistic is that released scalar.  The
choice of h trades two losses: λ = 2ℓ(0)/(ηTL)² contracts the early steps away (ηλT ≈ 1/(hT)) when
h is small, and the canary leaves the linear region when h is large.  h = 0.03 is within 5 % of the
best halved-noise margin over h ∈ {0.02, 0.03, 0.05, 0.1}, both at E = 3 and at E = 10 passes
(simulated; h = 0.1 loses 45 % at E = 10), so the target does not hinge on ``auto``'s work budget.

What stays loose.  The composition bound charges all T steps in full; the tail average weighs the
steps before the tail equally (shrunk by the λ contraction) and the tail steps less and less, and a
sum is not the bound's worst-case test, which sees every step separately (q = 0.1 and about three
canary draws: far from the Gaussian regime).  So the honest audit stays well inside the certificate
(profile margin −0.59 ± 0.06 at 600 runs, −0.39 ± 0.06 at 2000), and halving σ moves it clearly past
it (+0.66 ± 0.11 at 2000 runs; ``tests/test_audit_mutations.py``).  The profile stops at δ = 0.3,
as for ``noisy-sgd-poisson``: the full grid (to δ = 0.9, where ε(δ) reaches 0) costs each audit
about 7 s more of dp-accounting's PLD and gains nothing against the mutant (+0.662 ± 0.103 against
+0.660 ± 0.107 at 2000 runs; resampled from 8000 real runs per neighbour, 100 audits).

Non-smooth losses (``auto-hinge``).  ``auto`` calls sco_noisy_sgd with its defaults: λ = 0, the
caller's constraint (``"auto"`` needs λ > 0, so a bounded one must be given), the Euclidean
potential and Arora et al.'s Thm 6 step D/(√n(L + σ√d)).  The ``sco-noisy-sgd`` target
(:mod:`.targets_sco`) has the same trainer, pair (hinge loss on the unit ball, n = 4) and certificate
(the single-use bound does not depend on the step: same σ, same ε) but a fixed step 0.05 that keeps
the release linear in the noise; ``auto-hinge`` runs ``auto``'s step instead (0.28 here, at the
honest σ; the mutant keeps it, so only its noise changes).  The ball then clips some runs, and the
audit loses little: only the first fresh step's gradient reaches the release, and it is taken at
w₀ = 0, where the two canaries' subgradients differ by 2 = 2L whatever the step.
"""

from __future__ import annotations

from functools import cache

from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.audit.targets import NOISY_GD_SETTING, _calibrated, _canary_pair
from dpconvex.audit.targets_noisy_sgd import _POISSON_PROFILE
from dpconvex.audit.targets_sco import _pair as _hinge_pair
from dpconvex.mechanisms import auto, noisy_sgd, sco_noisy_sgd
from dpconvex.mechanisms.auto import AutoChoice, select_configuration
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import HingeLoss, HuberizedHingeLoss

__all__ = ["HUBER_H", "HINGE_CONSTRAINT", "auto_choice", "auto_pair", "auto_loss", "auto_hinge_step",
           "run_auto_configuration", "run_auto_hinge"]

#: Huberised-hinge parameter h of the audited loss (module docstring).
HUBER_H = 0.03
#: The bounded constraint given to ``auto`` for the hinge loss (that of ``sco-noisy-sgd``).
HINGE_CONSTRAINT = L2Ball(1.0)


def auto_loss() -> HuberizedHingeLoss:
    """The smooth target's loss: the huberised hinge with h = :data:`HUBER_H`.

    Returns
    -------
    HuberizedHingeLoss
    """
    return HuberizedHingeLoss(HUBER_H)


def auto_pair() -> NeighbourPair:
    """Records at the origin and the canary e₁ (label +1) in row 0, replaced by −e₁.

    Returns
    -------
    NeighbourPair
    """
    return _canary_pair(1.0)


@cache
def auto_choice() -> AutoChoice:
    """What ``auto`` picks for the shared setting (public quantities only: the data never enter).

    Returns
    -------
    AutoChoice
    """
    setting = NOISY_GD_SETTING
    return select_configuration(setting["n"], setting["dimension"], loss=auto_loss(), l2_regularization="auto",
                                epsilon=setting["epsilon"], delta=setting["delta"])


def run_auto_configuration(X, y, seed: int, sigma: float, delta: float):
    """:func:`~dpconvex.mechanisms.auto.auto`'s call of noisy_sgd for :func:`auto_choice`, at noise ``sigma``.

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets.
    seed : int
        Seeds the run.
    sigma : float
        The noise parameter (noisy_sgd's σ).
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
    """
    choice = auto_choice()
    return noisy_sgd(X, y, loss=auto_loss(), l2_regularization=choice.l2_regularization, sigma=sigma, delta=delta,
                     data_norm=1.0, label_bound=None, constraint="auto", strict=False, random_state=seed,
                     **choice.noisy_sgd_options())


@cache
def _sigma() -> float:
    pair = auto_pair()
    return _calibrated(auto, pair, loss=auto_loss()).sigma


register(
    AuditTarget(
        name="auto",
        mechanism="noisy_sgd",
        description="method='auto' as chosen for n = 10, d = 2, eps = 3 (Poisson, tail average, composition), "
                    f"huberised hinge h = {HUBER_H:g}; canary e1 vs -e1 among records at 0",
        make_pair=auto_pair,
        sigma=_sigma,
        run=run_auto_configuration,
        delta=NOISY_GD_SETTING["delta"],
        profile_deltas=_POISSON_PROFILE,
    )
)


# ----------------------------------------------------------------------------- non-smooth: sco_noisy_sgd
@cache
def _hinge_calibration() -> tuple[float, float]:
    """σ and step of ``auto``'s own run on the hinge pair (both public: they depend on n, d, ε, δ only)."""
    pair = _hinge_pair()
    certificate = _calibrated(auto, pair, loss=HingeLoss(), constraint=HINGE_CONSTRAINT)
    return certificate.sigma, certificate.assumptions["step_size"]


def auto_hinge_step() -> float:
    """The Thm 6 step ``auto`` uses at its calibrated σ (module docstring).

    Returns
    -------
    float
    """
    return _hinge_calibration()[1]


def run_auto_hinge(X, y, seed: int, sigma: float, delta: float):
    """:func:`~dpconvex.mechanisms.auto.auto`'s call of sco_noisy_sgd for the hinge loss, at noise ``sigma``.

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets.
    seed : int
        Seeds the run.
    sigma : float
        The noise parameter (sco_noisy_sgd's σ).
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
    """
    return sco_noisy_sgd(X, y, loss=HingeLoss(), l2_regularization=0.0, sigma=sigma, delta=delta, data_norm=1.0,
                         label_bound=None, step_size=auto_hinge_step(), constraint=HINGE_CONSTRAINT, strict=False,
                         random_state=seed)


register(
    AuditTarget(
        name="auto-hinge",
        mechanism="sco_noisy_sgd",
        description="method='auto' on the hinge loss (sco_noisy_sgd with its defaults: Thm 6 step), n = 4; "
                    "canary e1 vs -e1 among copies, as sco-noisy-sgd",
        make_pair=_hinge_pair,
        sigma=lambda: _hinge_calibration()[0],
        run=run_auto_hinge,
        delta=NOISY_GD_SETTING["delta"],
    )
)
