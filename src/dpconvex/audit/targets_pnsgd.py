"""Audit targets for projected noisy SGD (Asoodeh, Diaz, Calmon 2020): fixed and random stopping.

Same small problem as the other targets (:data:`.targets.NOISY_GD_SETTING`: d = 2, ε = 3, δ = 1e-3)
on ½‖θ − x‖² (S_g = 2, β = λ = 1), step 1 (so ρ = 0), ball of radius 20.  The canary sits where the
certificate is worst: the last of n = 10 rows for fixed stopping (its bound is a single Gaussian
mechanism, so the audit can approach it), the first row for random stopping (Thm 5).

Random stopping uses n = 2.  With ρ = 0 the release is x_T = d_T − Z_T, so the canary shows only when
T = 1: the law is (1/n)·N(±e₁, σ²I) + (1 − 1/n)·N(0, σ²I), and Thm 5 certifies δ(ε) = δ_G(ε; 2/σ)/n.
Both have the same total-variation distance TV(N(e₁, σ²), N(−e₁, σ²))/n (the common part cancels),
so the certificate is tight on the line FPR + FNR ≥ 1 − δ(0), and halving σ moves the mixture's
distance far above it.  The larger the weight 1/n, the fewer runs show that: at n = 10 the
halved-noise excess is 5 times smaller than at n = 2 and needs ~25 times the runs.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.audit.targets import NOISY_GD_SETTING, _calibrated, _canary_pair, _last_batch_canary_pair
from dpconvex.mechanisms import pnsgd
from dpconvex.objectives.constraints import L2Ball
from dpconvex.objectives.losses import QuadraticDistanceLoss

__all__: list[str] = []

STEP_SIZE = 1.0  # x_k = Π(d_k − Z_k): the released iterate is exactly a Gaussian mechanism on d_n
RADIUS = 20.0  # > 12 noise standard deviations: the projection is (almost) never active


RANDOM_STOP_N = 2  # the canary (row 1) is released with probability 1/n


def _kwargs(random_stop: bool) -> dict:
    return dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, step_size=STEP_SIZE, constraint=L2Ball(RADIUS),
                random_stop=random_stop)


def _pair(random_stop: bool) -> NeighbourPair:
    if random_stop:
        return _canary_pair(0.0, RANDOM_STOP_N)
    return _last_batch_canary_pair(0.0)  # the canary becomes the last row, processed last


@cache
def _sigma(random_stop: bool) -> float:
    pair = _pair(random_stop)
    return _calibrated(pnsgd, pair, **_kwargs(random_stop)).sigma


def _fixed_stop_law(target: AuditTarget) -> tuple[float, float]:
    """x_n = (1 − η)x_{n−1} + η d_n − η Z_n with the projection inactive, x_0 = 0.

    x_{n−1} has the same law under both data sets, so the gap along e₁ is η(d_n' − d_n) = −2η, and
    the variance is η²σ² Σ_{i<n} (1 − η)^{2i} (= σ² at η = 1).  The projection ignored here is
    active only if ‖Z‖ > 19 ≈ 13σ, probability below 1e-30 per run.
    """
    n = NOISY_GD_SETTING["n"]
    variance = STEP_SIZE**2 * target.sigma() ** 2 * np.sum((1.0 - STEP_SIZE) ** (2 * np.arange(n)))
    return -2.0 * STEP_SIZE, float(variance)


register(
    AuditTarget(
        name="pnsgd",
        mechanism="pnsgd",
        description="projected noisy SGD on ½‖θ − x‖² (Thm 4; canary x vs −x in the last row)",
        make_pair=lambda: _pair(False),
        sigma=lambda: _sigma(False),
        run=lambda X, y, seed, sigma, delta: pnsgd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                   **_kwargs(False)),
        delta=NOISY_GD_SETTING["delta"],
        exact_law=_fixed_stop_law,
    )
)

register(
    AuditTarget(
        name="pnsgd-random-stop",
        mechanism="pnsgd",
        description="projected noisy SGD, secret random stop, n = 2 (Thm 5; canary x vs −x in the first row)",
        make_pair=lambda: _pair(True),
        sigma=lambda: _sigma(True),
        run=lambda X, y, seed, sigma, delta: pnsgd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                   **_kwargs(True)),
        delta=NOISY_GD_SETTING["delta"],
    )
)
