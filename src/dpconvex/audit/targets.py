"""The registered audit targets: every mechanism of dpconvex, on its worst-case neighbours.

Each target calibrates its noise once (for speed) and then runs the real trainer with that σ; the
certificate each run returns is the one the audit checks.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.mechanisms import MECHANISMS, noisy_gd
from dpconvex.objectives.constraints import Unconstrained
from dpconvex.objectives.losses import LogisticLoss, QuadraticDistanceLoss
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["NOISY_GD_SETTING", "LOGISTIC_SETTING"]

#: Small full-batch problem: the canary is one of ten records; ε = 3 at δ = 1e-3 (large enough that a few
#: thousand runs can measure it).
NOISY_GD_SETTING = {"n": 10, "dimension": 2, "epsilon": 3.0, "delta": 1e-3, "iterations": 20}


def _canary_pair(labels: float, n: int = NOISY_GD_SETTING["n"]) -> NeighbourPair:
    """n − 1 records at the origin plus a canary e₁ at the norm bound (row 0), replaced by −e₁."""
    d = NOISY_GD_SETTING["dimension"]
    X = np.zeros((n, d))
    X[0, 0] = 1.0
    X_prime = X.copy()
    X_prime[0, 0] = -1.0
    y = np.full(n, labels)
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.eye(d)[0])


def _calibrated(train, pair: NeighbourPair, **options) -> PrivacyCertificate:
    """The certificate of ``train`` on ``pair`` at the setting's ε and δ (seed 0): the σ a target audits.

    σ depends on public quantities only (n, d, ε, δ and the options), so one run calibrates it for every audit run.
    """
    return train(pair.X, pair.y, epsilon=NOISY_GD_SETTING["epsilon"], delta=NOISY_GD_SETTING["delta"],
                 random_state=0, **options).certificate


def _quadratic_kwargs() -> dict:
    # ½‖θ − x‖² on R^d, fixed start, η < 1: the exact-quadratic and GDP bounds apply and are tight,
    # so the audit can come close to the certificate.
    return dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, step_size=0.5,
                iterations=NOISY_GD_SETTING["iterations"])


#: Logistic target: many records keep the iterate far along +e₁, where the canary's two versions
#: are both misclassified by a wide margin; a tiny λ and η = 1.9/β keep the GDP bound's contraction
#: (c ≈ 1) equal to the true one along e₂.
LOGISTIC_SETTING = {"n": 1000, "angle_degrees": 65.0, "l2_regularization": 1e-4, "step_over_smoothness": 1.9,
                    "iterations": 50}


def _logistic_pair() -> NeighbourPair:
    """999 records e₁ (label +1) and a canary x = (−cos a, sin a) (label +1), replaced by (−cos a, −sin a).

    The per-example gradient is −y·x·s(−y·wᵀx) (s the logistic sigmoid).  At w = (W, w₂) the two
    canaries' gradients differ by 2 sin a · s(W cos a ∓ w₂ sin a) along e₂, which tends to S_g = 2
    as W cos a grows: the other records drive W to ≈ 5 within a few steps, and n = 1000 makes the
    calibrated noise (∝ 1/n) small against W.  The audit projects on e₂, the gap direction.  The
    measured signal along e₂ is ≈ 0.8 of the GDP bound's μ (the canary of the opposite-sign pair
    e₁ vs −e₁ with the same label reaches exactly 1/2: its gradients differ by x·(s(z) + s(−z)) = x).
    """
    n, a = LOGISTIC_SETTING["n"], np.deg2rad(LOGISTIC_SETTING["angle_degrees"])
    X = np.tile([1.0, 0.0], (n, 1))
    X[0] = (-np.cos(a), np.sin(a))
    X_prime = X.copy()
    X_prime[0, 1] = -np.sin(a)
    y = np.ones(n)
    return NeighbourPair(X=X, y=y, X_prime=X_prime, y_prime=y.copy(), direction=np.eye(2)[1])


def _logistic_kwargs() -> dict:
    loss, l2 = LogisticLoss(), LOGISTIC_SETTING["l2_regularization"]
    smoothness = loss.constants(1.0, l2, Unconstrained()).smoothness
    return dict(loss=loss, l2_regularization=l2, step_size=LOGISTIC_SETTING["step_over_smoothness"] / smoothness,
                iterations=LOGISTIC_SETTING["iterations"])


@cache
def _calibrated_sigma(kind: str) -> float:
    kwargs = _quadratic_kwargs() if kind == "quadratic" else _logistic_kwargs()
    pair = _canary_pair(0.0) if kind == "quadratic" else _logistic_pair()
    return _calibrated(noisy_gd, pair, **kwargs).sigma


def _quadratic_law(target: AuditTarget) -> tuple[float, float]:
    """Chourasia et al. Thm 3 proof: from θ₀ = 0, θ_K ~ N(η Σ_{i<K}(1−η)^i · x̄, 2ησ² Σ_{i<K}(1−η)^{2i} I).

    The canary moves x̄ by 2/n along the direction (x = e₁ vs −e₁), hence the gap.
    """
    kwargs = _quadratic_kwargs()
    eta, k, n = kwargs["step_size"], kwargs["iterations"], NOISY_GD_SETTING["n"]
    powers = (1.0 - eta) ** np.arange(k)
    gap = -eta * np.sum(powers) * 2.0 / n
    variance = 2.0 * eta * target.sigma() ** 2 * np.sum(powers**2)
    return float(gap), float(variance)


register(
    AuditTarget(
        name="noisy-gd",
        mechanism="noisy_gd",
        description="noisy GD on ½‖θ − x‖² (exact bound; canary at the norm bound vs its opposite)",
        make_pair=lambda: _canary_pair(0.0),
        sigma=lambda: _calibrated_sigma("quadratic"),
        run=lambda X, y, seed, sigma, delta: noisy_gd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                      **_quadratic_kwargs()),
        delta=NOISY_GD_SETTING["delta"],
        exact_law=_quadratic_law,
    )
)

register(
    AuditTarget(
        name="noisy-gd-logistic",
        mechanism="noisy_gd",
        description="noisy GD on the logistic loss, n = 1000 (GDP bound; canary (−cos a, ±sin a), gap → 2L)",
        make_pair=_logistic_pair,
        sigma=lambda: _calibrated_sigma("logistic"),
        run=lambda X, y, seed, sigma, delta: noisy_gd(X, y, sigma=sigma, delta=delta, random_state=seed,
                                                      **_logistic_kwargs()),
        delta=NOISY_GD_SETTING["delta"],
    )
)


# ----------------------------------------------------------------------------- output perturbation
def _output_kwargs(variant: str) -> dict:
    # ½‖θ − x‖² (Hessian I, gradient gap exactly 2X for x vs −x): Lemma 2 holds with equality, so
    # the certificate is tight and the audit can approach it.  Two batches of five records (one
    # for OutPert-GD), four epochs, η₀ = 0.5 (ρ = 0.5).
    options = dict(loss=QuadraticDistanceLoss(), l2_regularization=0.0, epochs=4, step_size=0.5)
    if variant != "outpert_gd":
        options["batch_size"] = NOISY_GD_SETTING["n"] // 2
    return options


def _last_batch_canary_pair(labels: float = 1.0) -> NeighbourPair:
    """The canary in the last row: the last batch (or step) in the fixed order, where Δ[j] peaks (ρ < 1)."""
    pair = _canary_pair(labels)
    flip = lambda A: A[::-1].copy()  # noqa: E731 - reorder rows so the canary is processed last
    return NeighbourPair(flip(pair.X), pair.y, flip(pair.X_prime), pair.y_prime, pair.direction)


@cache
def _output_sigma(variant: str) -> float:
    pair = _last_batch_canary_pair()
    return _calibrated(MECHANISMS[variant], pair, **_output_kwargs(variant)).sigma


def _output_law(target: AuditTarget) -> tuple[float, float]:
    """Deterministic w_T(D) plus N(0, σ² I): gap w_T(D') − w_T(D) along the canary, variance σ².

    The fixed-order variants draw nothing but the output noise, so two runs with the same seed
    share it and their difference is exactly the noiseless gap.
    """
    pair = target.make_pair()
    gap = (target.release(pair.X_prime, pair.y_prime, 0) - target.release(pair.X, pair.y, 0)) @ pair.direction
    return float(gap), target.sigma() ** 2


for _variant, _law in [("nsgd", True), ("rsgd_ar", False), ("outpert_gd", True)]:
    register(
        AuditTarget(
            name=_variant.replace("_", "-"),
            mechanism=_variant,
            description=f"{_variant} output perturbation on ½‖θ − x‖² (canary x vs −x in the last batch)",
            make_pair=_last_batch_canary_pair,
            sigma=(lambda v: lambda: _output_sigma(v))(_variant),
            run=(lambda v: lambda X, y, seed, sigma, delta: MECHANISMS[v](
                X, y, sigma=sigma, delta=delta, random_state=seed, **_output_kwargs(v)))(_variant),
            delta=NOISY_GD_SETTING["delta"],
            exact_law=_output_law if _law else None,
        )
    )
