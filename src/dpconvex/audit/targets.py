"""The registered audit targets: every mechanism of dpconvex, on its worst-case neighbours.

Each target calibrates its noise once (for speed) and then runs the real trainer with that σ; the
certificate each run returns is the one the audit checks.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..losses import LogisticLoss, QuadraticDistanceLoss
from ..mechanisms import MECHANISMS, noisy_gd
from .harness import AUDITS, AuditTarget, NeighbourPair, register

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


# ----------------------------------------------------------------------------- output perturbation
def _output_kwargs(variant: str) -> dict:
    # ½‖θ − x‖² (Hessian I, gradient gap exactly 2X for x vs −x): Lemma 2 holds with equality, so
    # the certificate is tight and the audit can approach it.  Two batches of five records (one
    # for OutPert-GD), four epochs, η₀ = 0.5 (ρ = 0.5).
    options = dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, delta=NOISY_GD_SETTING["delta"],
                   epochs=4, step_size=0.5)
    if variant != "outpert_gd":
        options["batch_size"] = NOISY_GD_SETTING["n"] // 2
    return options


def _last_batch_canary_pair() -> NeighbourPair:
    """The canary in the last row: the last batch in the fixed order, where Δ[j] peaks (ρ < 1)."""
    pair = _canary_pair(1.0)
    flip = lambda A: A[::-1].copy()  # noqa: E731 - reorder rows so the canary is processed last
    return NeighbourPair(flip(pair.X), pair.y, flip(pair.X_prime), pair.y_prime, pair.direction)


@lru_cache(maxsize=None)
def _output_sigma(variant: str) -> float:
    pair = _last_batch_canary_pair()
    result = MECHANISMS[variant](pair.X, pair.y, epsilon=NOISY_GD_SETTING["epsilon"], random_state=0,
                                 **_output_kwargs(variant))
    return result.certificate.sigma


def _output_law(variant: str):
    """Deterministic w_T(D) plus N(0, σ² I): gap w_T(D') − w_T(D) along the canary, variance σ².

    The fixed-order variants draw nothing but the output noise, so two runs with the same seed
    share it and their difference is exactly the noiseless gap.
    """

    def law() -> tuple[float, float]:
        pair = _last_batch_canary_pair()
        train = AUDITS[variant.replace("_", "-")].train
        gap = (train(pair.X_prime, pair.y_prime, 0).coef - train(pair.X, pair.y, 0).coef) @ pair.direction
        return float(gap), _output_sigma(variant) ** 2

    return law


for _variant, _law in [("nsgd", True), ("rsgd_ar", False), ("outpert_gd", True)]:
    register(
        AuditTarget(
            name=_variant.replace("_", "-"),
            mechanism=_variant,
            description=f"{_variant} output perturbation on ½‖θ − x‖² (canary x vs −x in the last batch)",
            make_pair=_last_batch_canary_pair,
            train=(lambda v: lambda X, y, seed: MECHANISMS[v](X, y, sigma=_output_sigma(v), random_state=seed,
                                                              **_output_kwargs(v)))(_variant),
            exact_law=_output_law(_variant) if _law else None,
        )
    )
