"""Hockey-stick (E_γ) accounting of projected noisy SGD via contraction coefficients.

The accountant of :class:`.pnsgd_event.PNSGDEvent` (Asoodeh, Diaz, Calmon 2020, arXiv:2001.06546):
:func:`account_pnsgd` reads ε off the worst record's E_γ curve (Thm 1) and :func:`calibrate_pnsgd_noise`
finds the noise level meeting a target.  The pieces, re-exported here so that every name keeps its
path: the E_γ primitives (θ_γ, the Laplace E_γ, their δ(ε) curves, the ε-at-δ search; Lemmas 1, 2, 4)
in :mod:`.e_gamma`, and the per-record δ(ε) curves of PNSGD (Thm 3, 4, 5; the RDP comparison curve
of Prop. 1) with their conventions and derivation notes in :mod:`.pnsgd_bounds`.

Conventions of the hockey-stick accountant
------------------------------------------
Replace-one neighbours; γ = e^ε and a mechanism is (ε, δ)-DP iff E_{e^ε}(P_D‖P_D') ≤ δ (Thm 1).
PNSGD is eq. (12): ``x_k = Π_K(x_{k−1} − η(∇ℓ(x_{k−1}, d_k) + Z_k))``, record t of n used at step t
only, ℓ(·, d) L-Lipschitz (two records' gradients differ by at most 2L), β-smooth and λ-strongly
convex on K, Z_k ~ N(0, σ² I) or Lap(0, b) (d = 1), x_0 fixed, only x_n (or x_T, T ~ Unif{1..n})
released.  σ and b are the noise levels of Z_k; the noise actually added to the iterate is η Z_k.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from typing import Any

import numpy as np

from ._checks import check_delta, check_nonnegative
from .best_of import PrivacyAccount
from .calibration import smallest_noise
from .e_gamma import (
    epsilon_for_delta,
    gaussian_hockey_stick,
    gaussian_mechanism_delta,
    gradient_step_lipschitz,
    laplace_hockey_stick,
    laplace_mechanism_delta,
    log_gaussian_hockey_stick,
    log_laplace_hockey_stick,
    projected_gaussian_contraction,
)
from .gdp import gdp_mu
from .pnsgd_bounds import (
    pnsgd_gaussian_delta,
    pnsgd_laplace_delta,
    pnsgd_profile,
    pnsgd_random_stop_delta,
    rdp_baseline_delta,
)
from .pnsgd_event import NOISES, RANDOM_STOP_THEOREM, PNSGDEvent
from .rounding import largest_rounding_within, round_up

__all__ = [
    "gaussian_hockey_stick", "log_gaussian_hockey_stick", "laplace_hockey_stick", "log_laplace_hockey_stick",
    "gaussian_mechanism_delta", "laplace_mechanism_delta", "epsilon_for_delta", "projected_gaussian_contraction",
    "gradient_step_lipschitz", "pnsgd_gaussian_delta", "pnsgd_laplace_delta", "pnsgd_random_stop_delta",
    "pnsgd_profile", "calibrate_pnsgd_noise", "rdp_baseline_delta", "PNSGDEvent", "account_pnsgd", "NOISES",
    "RANDOM_STOP_THEOREM",
]


def calibrate_pnsgd_noise(
    epsilon: float, delta: float, *, n: int, lipschitz: float, smoothness: float, strong_convexity: float,
    step_size: float, diameter: float, noise: str = "gaussian", random_stop: bool = False, rtol: float = 1e-9,
) -> float:
    """Smallest noise level (σ for ``noise="gaussian"``, the Laplace scale b otherwise) meeting (ε, δ).

    The keywords describe a :class:`.pnsgd_event.PNSGDEvent` (its worst record), whose noise
    :func:`.interface.calibrate` sets by the same search.  The worst record's δ(ε) (Thm 4/3 at t = n,
    or Thm 5) decreases in the noise level (θ_γ and the Laplace E_γ increase in the distance, and both
    arguments scale as 1/noise), so
    :func:`.calibration.smallest_noise` (the library's one calibration) finds it to within a factor
    1 + ``rtol`` (``tolerance="noise"``): the returned level is an evaluated point whose δ is at most
    ``delta`` (calibration never overshoots), and the level divided by 1 + ``rtol`` exceeds ``delta``.
    δ is evaluated at ε' = :func:`.rounding.largest_rounding_within` (ε), the largest computed ε whose
    certified value (rounded up by :data:`.rounding.ROUNDING_MARGIN`) is at most ε: the margin sits
    inside the target.

    Start: the level at which the first-step factor alone meets δ, 2L/μ(ε, δ) for Gaussian noise
    (Lemma 2 and Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13: θ_{e^ε}(r) ≤ δ iff r ≤ μ(ε, δ);
    1 at ε = 0) and L/(ε/2 − log(1 − δ)) for Laplace noise (Lemma 1: 1 − √γ e^{−L/b} ≤ δ iff
    b ≥ L/(ε/2 − log(1 − δ))).  The contraction factors are at most 1 and Thm 5's average is at
    most θ₁, so the answer is at most the start; only the number of evaluations depends on it.

    Parameters
    ----------
    epsilon : float
        Target ε ≥ 0.
    delta : float
        Target δ in (0, 1).
    n : int
        Number of records (= steps), ≥ 1.
    lipschitz : float
        L > 0 (L = 0 needs no noise: ``ValueError``).
    smoothness, strong_convexity : float
        β ≥ λ and λ ≥ 0 of every ℓ(·, d) on K (β finite).
    step_size : float
        η > 0.
    diameter : float
        D = diam(K) > 0.
    noise : {"gaussian", "laplace"}, default="gaussian"
        The law of Z_k.
    random_stop : bool, default=False
        Calibrate for x_T, T ~ Unif{1..n} (Thm 5) instead of x_n.
    rtol : float, default=1e-9
        Relative resolution of the noise level.

    Returns
    -------
    float
        σ (the standard deviation of Z_k, not of ηZ_k) or the Laplace scale b.
    """
    check_delta(delta)
    if noise not in NOISES:
        raise ValueError(f"noise must be 'gaussian' or 'laplace'; got {noise!r}.")
    level: dict[str, Any] = {NOISES[noise][0]: 1.0}
    event = PNSGDEvent(n, lipschitz, smoothness, strong_convexity, step_size, diameter, random_stop=random_stop,
                       **level)
    return _calibrate(event, epsilon, delta, rtol)


def _calibrate(event: PNSGDEvent, epsilon: float, delta: float, rtol: float = 1e-9) -> float:
    """The noise level of :func:`calibrate_pnsgd_noise` for the record ``event`` certifies (its level ignored)."""
    check_delta(delta)
    check_nonnegative(epsilon, "epsilon")
    aim, key, lipschitz = largest_rounding_within(float(epsilon)), NOISES[event.noise][0], event.lipschitz
    if lipschitz == 0.0:
        raise ValueError("lipschitz must be > 0 to calibrate noise (L = 0 needs no noise).")
    if event.noise == "gaussian":
        start = 2.0 * lipschitz / gdp_mu(epsilon, delta) if epsilon > 0 else 1.0
    else:
        start = lipschitz / (0.5 * epsilon - np.log1p(-delta))

    def worst(level: float) -> float:
        noise_level: dict[str, Any] = {key: level}
        return _delta_curve(replace(event, **noise_level))[0](aim)

    return smallest_noise(worst, delta, float(start), rtol=rtol, tolerance="noise", floor=1e-300, ceiling=1e300)


def _delta_curve(e: PNSGDEvent) -> tuple[Callable[[float], float], str]:
    """ε ↦ δ(ε) of the record ``e`` certifies, and its theorem: Thm 5 with ``e.random_stop``, else Thm 4
    (``sigma``) or Thm 3 (``scale``) at ``e.record`` (None: the worst record, t = n)."""
    common: dict[str, Any] = dict(n=e.n, lipschitz=e.lipschitz, smoothness=e.smoothness,
                                  strong_convexity=e.strong_convexity, step_size=e.step_size, diameter=e.diameter)
    if e.random_stop:
        return lambda x: float(pnsgd_random_stop_delta(x, **common, sigma=e.sigma, scale=e.scale)), RANDOM_STOP_THEOREM
    fn = pnsgd_gaussian_delta if e.scale is None else pnsgd_laplace_delta
    level: dict[str, Any] = {NOISES[e.noise][0]: e.sigma if e.scale is None else e.scale}
    return lambda x: float(fn(x, **common, record=e.n if e.record is None else e.record, **level)), NOISES[e.noise][1]


@lru_cache(maxsize=1024)
def account_pnsgd(event: PNSGDEvent, delta: float) -> PrivacyAccount:
    """ε at ``delta`` for a PNSGD run via Thm 1, as a :class:`PrivacyAccount`.

    ε is read off the E_γ curve by :func:`epsilon_for_delta` (:func:`.calibration.smallest_epsilon`)
    and rounded up by :data:`.rounding.ROUNDING_MARGIN` (the certified ε).
    Thm 5 with ``event.random_stop``, else Thm 4 (``sigma``) or Thm 3 (``scale``) for ``event.record``
    (None: the worst record, t = n).  Cached (pure).

    Parameters
    ----------
    event : PNSGDEvent
        The run (its noise level, loss constants, record and stopping rule).
    delta : float
        δ in (0, 1).

    Returns
    -------
    PrivacyAccount
        The certified ε (bound ``"hockey-stick"``), its theorem and assumptions.
    """
    delta = check_delta(delta)
    fn, theorem = _delta_curve(event)
    eps = round_up(epsilon_for_delta(fn, delta))
    return PrivacyAccount(
        epsilon=eps, delta=delta, bound="hockey-stick", theorem=theorem,
        assumptions=("replace-one neighbours", "each record used once, in order", "only the output iterate released",
                     "L-Lipschitz, β-smooth, λ-strongly convex loss on K", "diam(K) = D", "data-independent x_0")
        + (("the stopping time T stays secret (never reported, and all n steps run)",) if event.random_stop else ()),
        order=None, conversion="exact E_γ (Thm 1)", candidates={"hockey-stick": eps},
    )
