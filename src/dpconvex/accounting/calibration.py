"""Calibration of a noise level to a target ε: the root of a decreasing ε(σ) with few evaluations.

Every accountant whose ε(σ) has no closed-form inverse (the PLD of Poisson-subsampled noisy SGD
today) calls :func:`smallest_noise`: an evaluation of ε can cost tens of milliseconds, so the
search is built to need one to three of them when the start is good and about five when it is
40 % off.  Pure: no state, no imports of the rest of the library.

Sources.  No privacy formula lives here: every ε comes from the caller's accountant, and the
answer is always a point that accountant evaluated, so the certificate never depends on this
search.  The search is Brent's safeguarded root finding (R. P. Brent, *Algorithms for
Minimization without Derivatives*, 1973, ch. 4: secant / inverse quadratic interpolation with
bisection when progress is slow), aimed inside the acceptance window instead of at the root, and
started at the central-limit calibration of Bu, Dong, Long, Su 2020 (arXiv:1911.11607, Thm 5)
where the caller has one.

Derivation note.  With x = log σ and f(x) = log(ε(σ)/ε_target), f is decreasing and nearly linear
(slope −1 where the run is close to Gaussian, −2 … −3 in the large-ε regime of subsampled
Gaussians).  The answer is the smallest σ with f ≤ 0 to within ``rtol``; returned is always an
evaluated point with f ≤ 0 ("never overshoots").  Each step aims at f = log(1 − rtol/2), the
middle of the acceptance window [log(1 − rtol), 0], instead of at the root: a step that lands
where it aimed stops the search.  Steps: from the start, along the caller's slope estimate; from
two points, the secant; from three, inverse quadratic interpolation through the three points nearest the root (ε(σ) is curved in log-log far
from the start).  Safeguards: before the root is bracketed a step is at most a factor 2, 4, 16, …
in σ; once bracketed a step stays inside the bracket, and bisects when the interpolant leaves it or
the bracket has not halved in two steps (so the search ends after O(log(1/rtol)) steps at worst).  ε = ∞ counts as too little noise, ε = 0 as enough.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["smallest_noise"]


def _interpolate(points: list[tuple[float, float]], aim: float, slope: float) -> float | None:
    """x where the interpolant through the (up to) three finite points nearest the root reaches ``aim``.

    ``points`` are in evaluation order; the last one is the current point.
    """
    if not points:
        return None
    nearest = sorted(points, key=lambda p: abs(p[1]))[:3]
    if len(nearest) == 3:
        (x0, f0), (x1, f1), (x2, f2) = nearest
        if f0 != f1 and f0 != f2 and f1 != f2:  # inverse quadratic interpolation, x as a function of f
            return (x0 * (aim - f1) * (aim - f2) / ((f0 - f1) * (f0 - f2))
                    + x1 * (aim - f0) * (aim - f2) / ((f1 - f0) * (f1 - f2))
                    + x2 * (aim - f0) * (aim - f1) / ((f2 - f0) * (f2 - f1)))
    if len(nearest) >= 2:
        (x0, f0), (x1, f1) = nearest[:2]
        if x1 != x0 and (f1 - f0) / (x1 - x0) < 0:
            slope = (f1 - f0) / (x1 - x0)
    x, f = nearest[0]
    return x + (aim - f) / slope


def smallest_noise(epsilon_of: Callable[[float], float], target: float, start: float, *,
                   rtol: float = 1e-3, slope: float = -1.0, floor: float | None = None,
                   ceiling: float = 1e12) -> float:
    """Smallest σ (within ``rtol``) with ``epsilon_of(σ) <= target``, for a non-increasing ε(σ).

    Parameters
    ----------
    epsilon_of : callable
        σ ↦ ε(σ), non-increasing; may return ``inf`` (too little noise) or 0.
    target : float
        The ε to meet, > 0.
    start : float
        First σ to evaluate (an approximation of the answer, e.g. a central-limit calibration).
    rtol : float, default 1e-3
        Stop at an evaluated σ with target·(1 − rtol) ≤ ε(σ) ≤ target, or when the bracket
        [σ_lo: ε > target, σ_hi: ε ≤ target] is narrower than a factor 1 + rtol.
    slope : float, default -1.0
        Estimate of d log ε / d log σ at ``start`` (negative), used for the first step only.
    floor, ceiling : float
        The search refuses (``ValueError``) below ``floor`` (default start/10⁶: ε = 0 at every σ,
        e.g. δ above the total-variation bound) or above ``ceiling``.

    Returns
    -------
    float
        σ_hi, an evaluated point with ``epsilon_of(σ_hi) <= target``.
    """
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"target must be finite and > 0; got {target!r}.")
    if not 0.0 < rtol < 1.0:
        raise ValueError(f"rtol must lie in the open interval (0, 1); got {rtol!r}.")
    if not (math.isfinite(start) and start > 0):
        raise ValueError(f"start must be finite and > 0; got {start!r}.")
    if not slope < 0:
        raise ValueError(f"slope must be < 0 (epsilon decreases in sigma); got {slope!r}.")
    accept, aim, width = math.log1p(-rtol), math.log1p(-rtol / 2.0), math.log1p(rtol)
    x_floor = math.log(start / 1e6 if floor is None else floor)
    x_ceiling = math.log(ceiling)

    def excess(x: float) -> float:
        value = epsilon_of(math.exp(x))
        if math.isnan(value):
            raise ValueError(f"epsilon_of returned nan at sigma={math.exp(x)!r}; it must be a number in [0, inf].")
        return math.log(value / target) if value > 0 else -math.inf

    x = math.log(start) + math.log1p(rtol / 2.0)  # the start's own error is often below rtol/2
    finite: list[tuple[float, float]] = []
    lo = hi = None
    cap = math.log(2.0)
    widths: list[float] = []  # bracket widths since the last bisection
    while True:
        if not x_floor <= x <= x_ceiling:
            raise ValueError(f"no noise level in [{math.exp(x_floor):.3g}, {math.exp(x_ceiling):.3g}] "
                             f"reaches the target epsilon={target!r}; check the run's parameters.")
        f = excess(x)
        if math.isfinite(f):
            finite.append((x, f))
        if f > 0:
            lo = x if lo is None else max(lo, x)
        else:
            hi = (x, f) if hi is None or x < hi[0] else hi
        if hi is not None and (hi[1] >= accept or (lo is not None and hi[0] - lo <= width)):
            return float(math.exp(hi[0]))
        target_x = _interpolate(finite, aim, slope)
        if lo is not None and hi is not None:  # bracketed: stay inside; bisect if slow
            a, b = lo, hi[0]
            widths.append(b - a)
            slow = len(widths) >= 3 and widths[-1] > 0.5 * widths[-3]
            if target_x is None or not a < target_x < b or slow:
                x = 0.5 * (a + b)
                widths.clear()
            else:
                x = min(max(target_x, a + 1e-3 * (b - a)), b - 1e-3 * (b - a))
        else:  # not bracketed: move towards the missing side, at most a factor 2, 4, 16, ...
            direction = 1.0 if lo is not None else -1.0  # more noise if ε is too large
            step = cap if target_x is None else abs(target_x - x)
            if target_x is not None and (target_x - x) * direction <= 0:
                step = math.log1p(rtol)  # the model points back: a small step the right way
            x += direction * min(max(step, math.log1p(rtol)), cap)
            cap *= 2.0
