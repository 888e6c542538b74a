"""Closed forms of the shifted-interpolation core lemma for NoisyGD and NoisyCGD (Bok, Su, Altschuler 2024).

The generic optimum is :mod:`.shifted_interpolation` (which re-exports every name here); these closed
forms give it (or an upper bound on it) for the schedules where the record sits in every step
(NoisyGD) or in one of l batches cycled E times (NoisyCGD), in its conventions: ``shift`` s = η·S_g/b
(S_g the replace-one sensitivity of one record's gradient, b the nominal batch size, b = n for
NoisyGD's mean gradient), ``noise_sd`` ν the standard deviation of the Gaussian noise on the iterate
(ησ/b for noise σ on the gradient sum), c ∈ [0, 1] the Lipschitz constant of every gradient step and D
the diameter of the constraint set (None: unconstrained).  Every μ is of μ-GDP for the last iterate.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .noisy_sgd_bounds import bok_cgd_mu

__all__ = ["gd_factor", "gd_closed_form_mu", "cgd_closed_form_mu", "bok_constrained_gd_mu", "bok_constrained_cgd_mu"]


def _check(contraction: float, diameter: float | None) -> tuple[float, float | None]:
    c = float(contraction)
    if not 0.0 <= c <= 1.0:
        raise ValueError(f"contraction must lie in [0, 1]; got {contraction!r}.")
    if diameter is not None:
        diameter = float(diameter)
        if not (diameter >= 0.0 and math.isfinite(diameter)):
            raise ValueError(f"diameter must be finite and >= 0; got {diameter!r}.")
    return c, diameter


def _noise(noise_sd: ArrayLike) -> NDArray[np.float64]:
    nu = np.asarray(noise_sd, dtype=float)
    if np.any(~(nu > 0)):
        raise ValueError("noise sd must be > 0.")
    return nu


def _energy_mu(energy: float, noise_sd: ArrayLike) -> float | NDArray[np.float64]:
    """μ = √energy/ν of a shifted-interpolation energy at noise sd ν (a float for a scalar ν)."""
    mu = math.sqrt(energy) / _noise(noise_sd)
    return float(mu) if mu.ndim == 0 else mu


def _geometric(ratio: float, terms: int) -> float:
    """Σ_{i<terms} ratio^i, accurate for ratio near 1 (and exact at 0 and 1)."""
    if ratio == 1.0:
        return float(terms)
    if ratio == 0.0:
        return 1.0 if terms > 0 else 0.0
    return math.expm1(terms * math.log(ratio)) / math.expm1(math.log(ratio))


def gd_factor(contraction: float, steps: int) -> float:
    """``sqrt((1 + c)/(1 − c) · (1 − c^t)/(1 + c^t))``: Bok et al. 2024 (arXiv:2403.00278), NoisyGD,
    strongly convex (notes §1.3, authors' code ``plot_table_ngd_fdp.py``); √t at c = 1 (composition).

    Derivation: every step shifts by s, τ = 0; the barrier S is concave in X, so the taut string is
    the straight line and Σa² = (s Σ_{i<t} c^i)² / Σ_{i<t} c^{2i} = s²·factor².

    Parameters
    ----------
    contraction : float
        c ∈ [0, 1].
    steps : int
        t ≥ 0, the number of steps (each holding the record).

    Returns
    -------
    float
        The factor (μ = factor·s/ν); 0 for t = 0.
    """
    c, t = float(contraction), int(steps)
    return _geometric(c, t) / math.sqrt(_geometric(c * c, t)) if t > 0 else 0.0


def gd_closed_form_mu(shift: float, noise_sd: ArrayLike, contraction: float, steps: int,
                      diameter: float | None = None):
    """Exact core-lemma μ of NoisyGD (the record in every step), any c ∈ (0, 1], with or without D.

    τ = 0 gives :func:`gd_factor` (notes §1.3).  A window of w steps with b = D costs
    W(w) = (c^w D + s Σ_{i<w} c^i)² / Σ_{i<w} c^{2i} (straight string, as for τ = 0).  With
    y = c^w, W ∝ (A + (D − A)y)²/(1 − y²), A = s/(1 − c), whose derivative has the sign of
    (D − A) + A·y: W is unimodal in w with the continuous minimiser y* = 1 − D(1 − c)/s (w* = D/s
    at c = 1), where W = (1 + c)·D·(2s − (1 − c)D) (4Ds at c = 1).  So the integer optimum is at
    ⌊w*⌋ or ⌈w*⌉ clipped to [1, t]; if y* ≤ 0 no window beats τ = 0.  (Derived here, checked in the
    tests against the generic optimum; it is exact, the notes' §1.6 form is an upper bound.)

    Parameters
    ----------
    shift : float
        s = η·S_g/n ≥ 0, the shift of every step (S_g the sensitivity of the gradient sum).
    noise_sd : array_like
        ν > 0, the standard deviation of the noise on the iterate (√(2η)σ for
        :mod:`dpconvex.accounting.noisy_gd`'s noise).  Vectorised.
    contraction : float
        c ∈ [0, 1].
    steps : int
        t, the number of steps.
    diameter : float or None
        D ≥ 0 of the constraint set; None: unconstrained.

    Returns
    -------
    float or ndarray
        μ, shaped as ``noise_sd``.
    """
    c, diameter = _check(contraction, diameter)
    s, t = float(shift), int(steps)
    value = (s * gd_factor(c, t)) ** 2
    if diameter == 0.0:
        value = 0.0
    elif diameter is not None and t >= 1 and c > 0.0:
        y_star = 1.0 - diameter * (1.0 - c) / s if s > 0 else -1.0
        if y_star > 0.0:
            w_star = diameter / s if c == 1.0 else math.log(y_star) / math.log(c)
            for w in {min(max(math.floor(w_star), 1), t), min(max(math.ceil(w_star), 1), t)}:
                value = min(value, (c**w * diameter + s * _geometric(c, w)) ** 2 / _geometric(c * c, w))
    return _energy_mu(value, noise_sd)


def bok_constrained_gd_mu(shift: float, noise_sd: ArrayLike, steps: int, diameter: float):
    """Bok et al. constrained NoisyGD (notes §1.6, code ``plot_table_ngd_fdp.py`` l.177, D re-inserted).

    ``μ* = sqrt(3Ds + s²⌈D/s⌉)/ν``; in Bok's notation s = ηL/n, ν = ησ.  From the window
    w = ⌈D/s⌉ (straight string at c = 1): (D + ws)²/w = D²/w + 2Ds + ws² with D²/w ≤ Ds; exact when
    D/s is an integer.  The notes' condition t ≥ ⌈D/s⌉ is not needed for validity: below it μ*
    exceeds composition √t·s/ν.  Any c ≤ 1 (the optimum is non-decreasing in c).  Returns
    min(μ*, √t·s/ν), as the authors' code does.

    Parameters
    ----------
    shift : float
        s ≥ 0, the shift of every step.
    noise_sd : array_like
        ν > 0, the standard deviation of the noise on the iterate.  Vectorised.
    steps : int
        t, the number of steps.
    diameter : float
        D ≥ 0 of the constraint set.

    Returns
    -------
    float or ndarray
        μ, shaped as ``noise_sd``.
    """
    s, t, d = float(shift), int(steps), float(diameter)
    value = 3.0 * d * s + s * s * math.ceil(d / s) if s > 0 else 0.0
    return _energy_mu(min(value, t * s * s), noise_sd)


def bok_constrained_cgd_mu(shift: float, noise_sd: ArrayLike, batches: int, diameter: float):
    """Bok et al. constrained NoisyCGD (notes §1.6, code ``plot_table_ncgd_fdp.py`` l.186, D re-inserted).

    ``μ* = sqrt(3Ds/l + s² + s²⌈D/s⌉/l)/ν`` with s = ηS_g/b per use and l batches (Bok's L/b is
    our S_g/b: the ratio s/ν is the same).  Checked ≥ the generic optimum in the tests (not proved
    here).  The notes' condition E ≥ ⌈D/s⌉ is not needed for validity: for E < ⌈D/s⌉,
    s²(E − 1)/l < Ds/l, so μ* exceeds the c = 1 value sqrt(1 + (E − 1)/l)·s/ν, itself a bound for
    every c ≤ 1.  No min with that value here: :func:`cgd_closed_form_mu` takes it.

    Parameters
    ----------
    shift : float
        s = ηS_g/b ≥ 0, the shift of a step that uses the record's batch.
    noise_sd : array_like
        ν > 0, the standard deviation of the noise on the iterate (ησ/b).  Vectorised.
    batches : int
        l ≥ 1, the number of batches per epoch.
    diameter : float
        D ≥ 0 of the constraint set.

    Returns
    -------
    float or ndarray
        μ, shaped as ``noise_sd``.
    """
    s, l, d = float(shift), int(batches), float(diameter)
    value = 3.0 * d * s / l + s * s + s * s * math.ceil(d / s) / l if s > 0 else 0.0
    return _energy_mu(value, noise_sd)


def cgd_closed_form_mu(shift: float, noise_sd: ArrayLike, contraction: float, batches: int, epochs: int,
                       diameter: float | None = None):
    """Closed-form μ of NoisyCGD (l batches cycled E times), worst position; an upper bound on
    :func:`.shifted_interpolation.worst_case_mu`, equal to it without D.

    c < 1, l ≥ 2: :func:`~.noisy_sgd_bounds.bok_cgd_mu` (Bok et al. Thm 4.5, notes §1.4), which is
    the lemma's exact τ = 0 optimum (checked in the tests); c = 1: its limit sqrt(1 + (E − 1)/l)
    (notes §1.4; the taut string has slope s/l through the cycles and pays the last use alone).
    l = 1 is NoisyGD with t = E: :func:`gd_factor`, because Thm 4.5's form is not exact there (at
    E = 2 it gives √2 against (1 + c)/sqrt(1 + c²); still an upper bound).  With D: the min with
    :func:`bok_constrained_cgd_mu`, valid at any c ≤ 1 by monotonicity in c.

    Parameters
    ----------
    shift : float
        s = ηS_g/b ≥ 0, the shift of a step that uses the record's batch.
    noise_sd : array_like
        ν > 0, the standard deviation of the noise on the iterate (ησ/b).  Vectorised.
    contraction : float
        c ∈ [0, 1].
    batches : int
        l ≥ 1, the number of batches cycled.
    epochs : int
        E ≥ 0.
    diameter : float or None
        D ≥ 0 of the constraint set; None: unconstrained.

    Returns
    -------
    float or ndarray
        μ, shaped as ``noise_sd``.
    """
    c, diameter = _check(contraction, diameter)
    l, e = int(batches), int(epochs)
    if e == 0 or shift == 0 or diameter == 0.0:
        mu = 0.0 * _noise(noise_sd)
    elif l == 1:
        mu = shift * gd_factor(c, e) / _noise(noise_sd)
    elif c < 1.0:
        mu = np.asarray(bok_cgd_mu(shift, _noise(noise_sd), c, l, e), dtype=float)
    else:
        mu = shift * math.sqrt(1.0 + (e - 1) / l) / _noise(noise_sd)
    if diameter is not None and diameter > 0 and shift > 0:
        mu = np.minimum(mu, bok_constrained_cgd_mu(shift, noise_sd, l, diameter))
    return float(mu) if np.ndim(mu) == 0 else mu
