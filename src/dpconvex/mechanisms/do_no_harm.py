"""Do no harm: warn when ``method="auto"``'s own plan predicts no better than the trivial predictor.

The check reads the configuration ``auto`` chose (:mod:`dpconvex.mechanisms.auto`) and only public
quantities (n, d, ε, δ, the loss's declared constants), never the data.  When it fires, the model
is still fitted; a :class:`~dpconvex.exceptions.LowUtilityWarning` (a ``UserWarning``) says how
far the plan is from a useful model and which ε (at this n) or which n (at this ε) would reach the
threshold.

Derivation note.  From θ₀ = 0, T steps of size η whose mean gradients have norm at most G (the
per-example bound, or the clip norm) move the iterate by at most ηTG; the privacy noise, σ on the
gradient sum of a batch of b records, adds a random walk of norm ≈ η·√(T·d)·σ/b.  The released
mean of the last T/2 iterates keeps both in about the same ratio (signal ≈ ¾·ηTG, noise
≈ η√(2T·d/3)·σ/b: the factor (9/16)/(2/3) ≈ 0.84 is dropped).  Their squared ratio,

    signal-to-noise = T·G²·b² / (d·σ²) = T·G²·η / (privacy-noise term of the score),

compares the farthest the data can move the model with the length of the noise it carries.  When
the noise is the longer (ratio < :data:`SIGNAL_TO_NOISE_THRESHOLD` = 1), the released direction is
mostly noise: its predictions are close to a random linear rule, no better than the majority class.

Measured on the panel benchmark (``dpconvex bench panel``, ``docs/BENCHMARKS.md``, δ = 1e-8, the
plans of its training folds): every classification (table, ε) whose default fell more than two
standard errors below the majority class has a ratio below 1 (breast cancer 0.82, anes96 0.24,
wine 0.06, modechoice 0.05 at ε = 0.1), except ``fair`` at ε = 0.1 (ratio 102, 0.27 points below:
its features carry little signal, 4.8 points from majority to the non-private model, which no
public quantity shows); the warning also fires on iris (0.14) and digits (0.38) at ε = 0.1, 2.0
and 5.2 points above the majority class.  Regression is covered only in part: the ratio fires on
diabetes at ε = 0.1 (0.36, R² −0.22), but ``PrivateRidge``'s λ bounds the noise on a prediction by
0.3·Y (``dpconvex.mechanisms.auto.PREDICTION_NOISE``) whatever the ratio, and its remaining
harm comes from targets whose spread is far below the declared bound Y, which only the data show
(diabetes at ε = 0.5 and 1: ratios 14 and 71, R² −0.05; randhie at ε = 0.1: 1,928, R² −0.41).
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["SIGNAL_TO_NOISE_THRESHOLD", "harm_warning", "needed_epsilon", "needed_records"]

#: The ratio below which the plan predicts no better than the trivial predictor (module docstring).
SIGNAL_TO_NOISE_THRESHOLD = 1.0
#: Search range of the suggested ε and n, as a multiple of the given ones (beyond it none is suggested).
_SEARCH_FACTOR = 1e6


def _least_passing(ratio_at: Callable[[float], float], start: float, *, integer: bool) -> float | None:
    """The smallest value ≥ ``start`` where ``ratio_at`` reaches the threshold (doubling, then bisection).

    ``ratio_at`` is increasing (more ε or more records never add noise).  ``None`` when even
    ``start`` × :data:`_SEARCH_FACTOR` does not reach it.
    """
    low, high = start, 2.0 * start
    while ratio_at(high) < SIGNAL_TO_NOISE_THRESHOLD:
        low, high = high, 2.0 * high
        if high > _SEARCH_FACTOR * start:
            return None
    for _ in range(60):
        if (high - low <= 1.0) if integer else (high - low <= 1e-3 * high):
            break
        middle = math.floor((low + high) / 2.0) if integer else 0.5 * (low + high)
        if ratio_at(middle) >= SIGNAL_TO_NOISE_THRESHOLD:
            high = middle
        else:
            low = middle
    return math.ceil(high) if integer else high


def needed_epsilon(ratio_at: Callable[[int, float], float], n: int, epsilon: float) -> float | None:
    """The least ε (at these ``n`` records) whose plan reaches :data:`SIGNAL_TO_NOISE_THRESHOLD`.

    Parameters
    ----------
    ratio_at : callable
        ``ratio_at(n, epsilon)``: the signal-to-noise ratio of ``auto``'s plan for n records at ε.
    n : int
        The number of records.
    epsilon : float
        The ε the plan was made for (the search starts there).

    Returns
    -------
    float or None
        ``None`` when no ε up to 10⁶ times the given one reaches the threshold.
    """
    return _least_passing(lambda value: ratio_at(n, value), epsilon, integer=False)


def needed_records(ratio_at: Callable[[int, float], float], n: int, epsilon: float) -> int | None:
    """The least number of records (at this ε) whose plan reaches :data:`SIGNAL_TO_NOISE_THRESHOLD`.

    Parameters
    ----------
    ratio_at : callable
        ``ratio_at(n, epsilon)``: the signal-to-noise ratio (module docstring) of ``auto``'s plan.
    n : int
        The number of records.
    epsilon : float
        The target ε.

    Returns
    -------
    int or None
        The least such n, or ``None`` when no n up to 10⁶ times the given one reaches it.
    """
    found = _least_passing(lambda value: ratio_at(int(value), epsilon), float(n), integer=True)
    return None if found is None else int(found)


def harm_warning(ratio_at: Callable[[int, float], float], n: int, epsilon: float) -> str | None:
    """The warning ``auto`` gives when its plan predicts no better than the trivial predictor, else ``None``.

    Parameters
    ----------
    ratio_at : callable
        ``ratio_at(n, epsilon)``: the signal-to-noise ratio (module docstring) of ``auto``'s plan.
    n : int
        The number of records.
    epsilon : float
        The target ε.

    Returns
    -------
    str or None
        The message, naming the ratio, the threshold and the ε or n that would reach it.
    """
    ratio = ratio_at(n, epsilon)
    if ratio >= SIGNAL_TO_NOISE_THRESHOLD:
        return None
    epsilon_needed, records_needed = needed_epsilon(ratio_at, n, epsilon), needed_records(ratio_at, n, epsilon)
    remedies = []
    if epsilon_needed is not None:
        remedies.append(f"with epsilon >= {_round_up(epsilon_needed):g} on these {n} records")
    if records_needed is not None:
        remedies.append(f"with n >= {int(_round_up(records_needed)):d} records at epsilon={epsilon:g}")
    remedy = " or ".join(remedies) if remedies else "only with a much larger epsilon or n"
    return (f"method='auto' predicts a model no better than the trivial predictor (majority class or mean): at "
            f"epsilon={epsilon:g} on n={n} records the privacy noise on the model is longer than the farthest "
            f"the data can move it (signal-to-noise {ratio:.3g} < {SIGNAL_TO_NOISE_THRESHOLD:g}; "
            f"dpconvex.mechanisms.do_no_harm); the plan would reach it {remedy}. "
            "The model is fitted anyway.")


def _round_up(value: float) -> float:
    """``value`` rounded up to two significant digits (a suggestion, not a bound)."""
    scale = 10.0 ** (math.floor(math.log10(value)) - 1)
    return math.ceil(value / scale) * scale
