"""``method="auto"``: train with the mechanism whose certificate leaves the least noise in the release.

Every candidate is planned with its own theory-based defaults and its σ calibrated to the
requested (ε, δ) (no data is touched).  Their noise is compared on one scale: the variance, per
coordinate, that the privacy noise leaves in the *released* parameters on the model problem
f(θ) = (λ/2)‖θ‖² — the flattest curvature the certificates assume
(:func:`released_noise_variance`).  Each update is then the linear recursion
θ_{k+1} = (1 − ηλ)θ_k + s·ξ_k with per-step noise s = √(2η)·σ (noisy GD) or η·σ/b (noisy SGD,
σ on the gradient sum), released as θ_T or as the mean of θ_1..θ_T, so the variance is exact.
This is a stated rule, not a test-set choice; it ignores optimisation error and data curvature.
Candidates: noisy GD, and noisy SGD with Poisson and with shuffled batches (cyclic batches have
the shuffled certificates and no advantage).  The output-perturbation and one-pass methods add
their noise differently and are not candidates.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ..constraints import Constraint, Unconstrained
from ..losses import Loss
from .._validation import prepare_training_inputs
from ._geometry import require_euclidean_projection
from .noisy_gd import TrainingResult, noisy_gd, plan_noisy_gd
from .noisy_sgd import noisy_sgd, plan_noisy_sgd

__all__ = ["auto", "select_method", "released_noise_variance", "CANDIDATES"]


def released_noise_variance(step_noise: float, step_size: float, curvature: float, steps: int, average: bool) -> float:
    """Variance of the noise in θ_T (or the mean of θ_1..θ_T) for θ_{k+1} = (1 − ηh)θ_k + s·ξ_k, θ₀ = 0.

    With a = 1 − ηh, θ_T = s·Σ_j a^{T−1−j}ξ_j, so Var = s²·Σ_{m<T} a^{2m}; the mean is
    (s/T)·Σ_j ξ_j·(1 + a + … + a^{T−1−j}), so Var = (s²/T²)·Σ_{m=1}^{T} (Σ_{i<m} a^i)².
    """
    a = 1.0 - step_size * curvature
    powers = a ** np.arange(steps)
    if not average:
        return float(step_noise**2 * np.sum(powers**2))
    partial = np.cumsum(powers)  # Σ_{i<m} a^i for m = 1..T
    return float(step_noise**2 * np.sum(partial**2) / steps**2)


def _plan_gd(n: int, dimension: int, common: dict) -> tuple[float, Callable, dict]:
    constraint = common["constraint"] if common["constraint"] != "auto" else Unconstrained()
    event = plan_noisy_gd(n, dimension, **{**common, "constraint": constraint})
    step_noise = np.sqrt(2.0 * event.step_size) * event.sigma
    variance = released_noise_variance(step_noise, event.step_size, common["l2_regularization"], event.iterations, False)
    return variance, noisy_gd, dict(step_size=event.step_size, iterations=event.iterations,
                                          constraint=constraint, sigma=event.sigma)


def _plan_sgd(batching: str):
    def plan(n: int, dimension: int, common: dict) -> tuple[float, Callable, dict]:
        p = plan_noisy_sgd(n, dimension, batching=batching, **common)
        e = p.event
        variance = released_noise_variance(e.step_size * e.sigma / e.batch_size, e.step_size,
                                           common["l2_regularization"], e.steps, p.output == "average")
        return variance, noisy_sgd, dict(batching=batching, batch_size=e.batch_size, epochs=e.epochs,
                                              step_size=e.step_size, constraint=p.constraint, output=p.output,
                                              sigma=e.sigma)

    return plan


#: Candidate label -> planner returning (released noise variance, trainer, its resolved options incl. σ).
CANDIDATES: dict[str, Callable[[int, int, dict], tuple[float, Callable, dict]]] = {
    "noisy_gd": _plan_gd,
    "noisy_sgd (poisson batches)": _plan_sgd("poisson"),
    "noisy_sgd (shuffled batches)": _plan_sgd("shuffled"),
}


def select_method(n: int, dimension: int, *, loss: Loss, l2_regularization: float, epsilon: float, delta: float,
                  data_norm: float = 1.0, label_bound: float | None = None,
                  constraint: Constraint | str = "auto") -> tuple[str, Callable, dict, str]:
    """The candidate with the least released noise: (label, trainer, its options incl. σ, the reason).

    Candidates whose planning fails (a condition of the loss or data bounds) are skipped and named
    in the reason; if every candidate fails, ``ValueError`` lists why.  A constraint whose projection
    is not Euclidean fits no candidate and is refused up front
    (:func:`._geometry.require_euclidean_projection`).
    """
    if constraint != "auto":
        require_euclidean_projection(constraint, "auto")
    common = dict(loss=loss, l2_regularization=l2_regularization, epsilon=epsilon, delta=delta, data_norm=data_norm,
                  label_bound=label_bound, constraint=constraint)
    planned, skipped = {}, {}
    for label, plan in CANDIDATES.items():
        try:
            planned[label] = plan(n, dimension, common)
        except ValueError as error:
            skipped[label] = str(error)
    if not planned:
        raise ValueError("method='auto' found no applicable mechanism: "
                         + "; ".join(f"{label}: {why}" for label, why in skipped.items()))
    label = min(planned, key=lambda name: planned[name][0])
    variances = ", ".join(f"{name} {planned[name][0]:.3g}" for name in planned)
    reason = (f"method='auto' chose {label}: the least privacy-noise variance per coordinate in the released "
              f"parameters on the model problem (l2/2)|theta|^2, with each candidate calibrated to "
              f"epsilon={epsilon:g}, delta={delta:g}: {variances}")
    reason += "".join(f"; {name} not applicable: {why}" for name, why in skipped.items())
    _, trainer, options = planned[label]
    return label, trainer, options, reason


def auto(
    X: NDArray,
    y: NDArray,
    *,
    loss: Loss,
    l2_regularization: float,
    delta: float,
    epsilon: float | None = None,
    sigma: float | None = None,
    data_norm: float = 1.0,
    label_bound: float | None = None,
    constraint: Constraint | str = "auto",
    strict: bool = False,
    random_state: None | int | np.random.Generator = None,
) -> TrainingResult:
    """Train with :func:`select_method`'s choice; the certificate's notes say what was chosen and why.

    Parameters are those of :func:`~dpconvex.mechanisms.noisy_gd.noisy_gd`; ``epsilon`` is
    required (a noise level σ means different things to different mechanisms).
    """
    if epsilon is None:
        raise ValueError("method='auto' needs a target epsilon (sigma is not comparable across mechanisms).")
    X, y = prepare_training_inputs(X, y, loss=loss, l2_regularization=l2_regularization, epsilon=epsilon,
                                   sigma=None, delta=delta, data_norm=data_norm, label_bound=label_bound,
                                   strict=strict)
    n, dimension = X.shape
    _, trainer, options, reason = select_method(n, dimension, loss=loss, l2_regularization=l2_regularization,
                                                epsilon=epsilon, delta=delta, data_norm=data_norm,
                                                label_bound=label_bound, constraint=constraint)
    result = trainer(X, y, loss=loss, l2_regularization=l2_regularization, delta=delta, data_norm=data_norm,
                     label_bound=label_bound, strict=strict, random_state=random_state, **options)
    return TrainingResult(coef=result.coef, certificate=result.certificate.with_notes(reason))
