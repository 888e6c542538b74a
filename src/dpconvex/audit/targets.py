"""The registered audit targets: every mechanism of dpconvex, on its worst-case neighbours.

Each target calibrates its noise once (for speed) and then runs the real trainer with that σ; the
certificate each run returns is the one the audit checks.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..losses import LogisticLoss, QuadraticDistanceLoss
from ..mechanisms import noisy_gd
from .harness import AuditTarget, NeighbourPair, register

__all__ = ["NOISY_GD_SETTING"]

#: Small full-batch problem: the canary is one of ten records; ε = 3 at δ = 1e-3 (large enough that a few thousand runs can measure it).
NOISY_GD_SETTING = {"n": 10, "dimension": 2, "epsilon": 3.0, "delta": 1e-3, "iterations": 20}


def _canary_pair(labels: float) -> NeighbourPair:
    """Nine records at the origin plus a canary at the norm bound, replaced by its opposite."""
    n, d = NOISY_GD_SETTING["n"], NOISY_GD_SETTING["dimension"]
    X = np.zeros((n, d))
    X[0, 0] = 1.0
    X_prime = X.copy()
    X_prime[0, 0] = -1.0
    y = np.full(n, labels)
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.eye(d)[0])


def _quadratic_kwargs() -> dict:
    # ½‖θ − x‖² on R^d, fixed start, η < 1: the exact-quadratic and GDP bounds apply and are tight,
    # so the audit can come close to the certificate.
    return dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, step_size=0.5,
                iterations=NOISY_GD_SETTING["iterations"], delta=NOISY_GD_SETTING["delta"])


def _logistic_kwargs() -> dict:
    return dict(loss=LogisticLoss(), l2_regularization=0.1, step_size="auto",
                iterations=NOISY_GD_SETTING["iterations"], delta=NOISY_GD_SETTING["delta"])


@lru_cache(maxsize=None)
def _calibrated_sigma(kind: str) -> float:
    kwargs = _quadratic_kwargs() if kind == "quadratic" else _logistic_kwargs()
    pair = _canary_pair(0.0 if kind == "quadratic" else 1.0)
    result = noisy_gd(pair.X, pair.y, epsilon=NOISY_GD_SETTING["epsilon"], random_state=0, **kwargs)
    return result.certificate.sigma


def _quadratic_law() -> tuple[float, float]:
    """Chourasia et al. Thm 3 proof: from θ₀ = 0, θ_K ~ N(η Σ_{i<K}(1−η)^i · x̄, 2ησ² Σ_{i<K}(1−η)^{2i} I).

    The canary moves x̄ by 2/n along the direction (x = e₁ vs −e₁), hence the gap.
    """
    kwargs = _quadratic_kwargs()
    eta, k, n = kwargs["step_size"], kwargs["iterations"], NOISY_GD_SETTING["n"]
    powers = (1.0 - eta) ** np.arange(k)
    gap = -eta * np.sum(powers) * 2.0 / n
    variance = 2.0 * eta * _calibrated_sigma("quadratic") ** 2 * np.sum(powers**2)
    return float(gap), float(variance)


register(
    AuditTarget(
        name="noisy-gd",
        mechanism="noisy_gd",
        description="noisy GD on ½‖θ − x‖² (exact bound; canary at the norm bound vs its opposite)",
        make_pair=lambda: _canary_pair(0.0),
        train=lambda X, y, seed: noisy_gd(X, y, sigma=_calibrated_sigma("quadratic"), random_state=seed,
                                          **_quadratic_kwargs()),
        exact_law=_quadratic_law,
    )
)

register(
    AuditTarget(
        name="noisy-gd-logistic",
        mechanism="noisy_gd",
        description="noisy GD on L2-regularised logistic loss (GDP bound; canary x vs −x)",
        make_pair=lambda: _canary_pair(1.0),
        train=lambda X, y, seed: noisy_gd(X, y, sigma=_calibrated_sigma("logistic"), random_state=seed,
                                          **_logistic_kwargs()),
    )
)
