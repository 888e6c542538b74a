"""Audit targets for projected noisy SGD (Asoodeh, Diaz, Calmon 2020): fixed and random stopping.

Same small problem as the other targets (:data:`.targets.NOISY_GD_SETTING`: n = 10, d = 2, ε = 3,
δ = 1e-3) on ½‖θ − x‖² (S_g = 2, β = λ = 1), step 1 (so ρ = 0), ball of radius 20.  The canary sits where
the certificate is worst: the last row for fixed stopping (its bound is a single Gaussian
mechanism, so the audit can approach it), the first row for random stopping (Thm 5).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..constraints import L2Ball
from ..losses import QuadraticDistanceLoss
from ..mechanisms import pnsgd
from .harness import AuditTarget, NeighbourPair, register
from .targets import NOISY_GD_SETTING, _canary_pair

__all__: list[str] = []

STEP_SIZE = 1.0  # x_k = Π(d_k − Z_k): the released iterate is exactly a Gaussian mechanism on d_n
RADIUS = 20.0  # > 12 noise standard deviations: the projection is (almost) never active


def _kwargs(random_stop: bool) -> dict:
    return dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, delta=NOISY_GD_SETTING["delta"],
                step_size=STEP_SIZE, constraint=L2Ball(RADIUS), random_stop=random_stop)


def _pair(random_stop: bool) -> NeighbourPair:
    pair = _canary_pair(0.0)
    if random_stop:
        return pair
    flip = lambda A: A[::-1].copy()  # noqa: E731 - the canary becomes the last row, processed last
    return NeighbourPair(flip(pair.X), pair.y, flip(pair.X_prime), pair.y_prime, pair.direction)


@lru_cache(maxsize=None)
def _sigma(random_stop: bool) -> float:
    pair = _pair(random_stop)
    result = pnsgd(pair.X, pair.y, epsilon=NOISY_GD_SETTING["epsilon"], random_state=0, **_kwargs(random_stop))
    return result.certificate.sigma


def _fixed_stop_law() -> tuple[float, float]:
    """x_n = (1 − η)x_{n−1} + η d_n − η Z_n with the projection inactive, x_0 = 0.

    x_{n−1} has the same law under both data sets, so the gap along e₁ is η(d_n' − d_n) = −2η, and
    the variance is η²σ² Σ_{i<n} (1 − η)^{2i} (= σ² at η = 1).  The projection ignored here is
    active only if ‖Z‖ > 19 ≈ 13σ, probability below 1e-30 per run.
    """
    n = NOISY_GD_SETTING["n"]
    variance = STEP_SIZE**2 * _sigma(False) ** 2 * np.sum((1.0 - STEP_SIZE) ** (2 * np.arange(n)))
    return -2.0 * STEP_SIZE, float(variance)


register(
    AuditTarget(
        name="pnsgd",
        mechanism="pnsgd",
        description="projected noisy SGD on ½‖θ − x‖² (Thm 4; canary x vs −x in the last row)",
        make_pair=lambda: _pair(False),
        train=lambda X, y, seed: pnsgd(X, y, sigma=_sigma(False), random_state=seed, **_kwargs(False)),
        exact_law=_fixed_stop_law,
    )
)

register(
    AuditTarget(
        name="pnsgd-random-stop",
        mechanism="pnsgd",
        description="projected noisy SGD, secret random stop (Thm 5; canary x vs −x in the first row)",
        make_pair=lambda: _pair(True),
        train=lambda X, y, seed: pnsgd(X, y, sigma=_sigma(True), random_state=seed, **_kwargs(True)),
    )
)
