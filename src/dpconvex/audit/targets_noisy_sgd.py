"""Audit targets for mini-batch noisy SGD (:func:`dpconvex.mechanisms.noisy_sgd`).

Same small problem as the other targets (:data:`.targets.NOISY_GD_SETTING`: n = 10, d = 2, ε = 3,
δ = 1e-3), loss ½‖θ − x‖², canary x = e₁ replaced by −e₁.

* ``noisy-sgd``: cyclic batches of two, canary in the last batch (the least contracted one),
  θ₀ = 0, unconstrained: the exact-quadratic bound applies and the output law is Gaussian and known
  (``_cyclic_law``), so the audit also checks the trainer's law.
* ``noisy-sgd-poisson``: Poisson batches (q = 0.2, ten steps) with per-example clipping to norm 1,
  certified by composition with amplification by subsampling.  The step is tiny (η = 0.01), so
  nothing contracts: the last iterate is, up to O(η) terms, −(η/b)·(the sum of the ten noisy
  clipped gradient sums), whose projection on e₁ is N_c·(±1) + noise with N_c ~ Bin(10, q) the
  canary's participations.  That sum is what a threshold test needs: on its exact law (a binomial
  mixture of Gaussians) the best threshold test comes within 0.004 in ε of the composition bound
  near δ = 0.3, ε ≈ 0.15.  With η = 0.5 the last iterate forgot the early steps, and even the
  trainer adding half the noise passed the audit (profile margin −0.50 at 600 runs).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from dpconvex.audit.harness import PROFILE_DELTAS, AuditTarget, register
from dpconvex.audit.targets import NOISY_GD_SETTING, _calibrated, _canary_pair, _last_batch_canary_pair
from dpconvex.mechanisms import noisy_sgd
from dpconvex.objectives.constraints import Unconstrained
from dpconvex.objectives.losses import QuadraticDistanceLoss

__all__: list[str] = []

_BATCH, _EPOCHS, _STEP = 2, 2, 0.5
_POISSON_STEP = 0.01

#: dp-accounting's PLD needs minutes for ε(δ) near 0 (its discretisation shrinks with ε); the
#: composition bound's ε(0.3) ≈ 0.17 here, so the profile stops there.
_POISSON_PROFILE = tuple(d for d in PROFILE_DELTAS if d <= 0.3)


def _kwargs(batching: str) -> dict:
    options = dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, batching=batching, batch_size=_BATCH,
                   epochs=_EPOCHS, step_size=_STEP, constraint=Unconstrained(), output="last")
    if batching == "poisson":
        options.update(clip_norm=1.0, step_size=_POISSON_STEP)
    return options


def _pair(batching: str):
    return _last_batch_canary_pair() if batching == "cyclic" else _canary_pair(0.0)


@cache
def _sigma(batching: str) -> float:
    pair = _pair(batching)
    return _calibrated(noisy_sgd, pair, **_kwargs(batching)).sigma


def _cyclic_law(target: AuditTarget) -> tuple[float, float]:
    """θ_{k+1} = (1 − η)θ_k + (η/b)Σ_{B_k} x_i − (ησ/b)ξ_k from θ₀ = 0 (a linear Gaussian recursion).

    The canary (last batch, used at steps k = l − 1, 2l − 1, …) moves the mean by −(η/b)·2·(1 − η)^{T−1−k}
    along e₁ when x = e₁ becomes −e₁; the noise variance is (ησ/b)²·Σ_{j<T}(1 − η)^{2j}.
    """
    n = NOISY_GD_SETTING["n"]
    batches = n // _BATCH
    steps = _EPOCHS * batches
    uses = np.arange(batches - 1, steps, batches)
    contraction = 1.0 - _STEP
    gap = -(_STEP / _BATCH) * 2.0 * np.sum(contraction ** (steps - 1 - uses))
    variance = (_STEP * target.sigma() / _BATCH) ** 2 * np.sum(contraction ** (2 * np.arange(steps)))
    return float(gap), float(variance)


register(
    AuditTarget(
        name="noisy-sgd",
        mechanism="noisy_sgd",
        description="noisy SGD, cyclic batches, ½‖θ − x‖² (exact-quadratic bound; canary in the last batch)",
        make_pair=lambda: _pair("cyclic"),
        sigma=lambda: _sigma("cyclic"),
        run=lambda X, y, seed, sigma, delta: noisy_sgd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                       **_kwargs("cyclic")),
        delta=NOISY_GD_SETTING["delta"],
        exact_law=_cyclic_law,
    )
)

register(
    AuditTarget(
        name="noisy-sgd-poisson",
        mechanism="noisy_sgd",
        description="noisy SGD, Poisson batches (q = 0.2), clipped ½‖θ − x‖², η = 0.01 (composition, amplified)",
        make_pair=lambda: _pair("poisson"),
        sigma=lambda: _sigma("poisson"),
        run=lambda X, y, seed, sigma, delta: noisy_sgd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                       **_kwargs("poisson")),
        delta=NOISY_GD_SETTING["delta"],
        profile_deltas=_POISSON_PROFILE,
    )
)
