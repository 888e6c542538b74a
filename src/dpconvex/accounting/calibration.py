"""Calibration searches: the smallest noise σ with ε(σ) ≤ target, and the smallest ε with δ(ε) ≤ target.

Every noise calibration of the library calls :func:`smallest_noise` (``noisy_gd``, ``noisy_sgd``,
``sensitivity``, ``private_sco``, ``hockey_stick`` (PNSGD), ``gdp.gdp_mu`` as the noise 1/μ of a
sensitivity-1 Gaussian, and the DP-SGD baselines of ``experiments.dpsgd``), and every ε read off a
decreasing δ(ε) curve calls :func:`smallest_epsilon` (``gdp.gdp_epsilon``,
``hockey_stick.epsilon_for_delta``); both run one search (``_search``) for the smallest positive x
at which a non-increasing function meets a target.  An evaluation can cost tens of milliseconds
(the PLD of Poisson-subsampled noisy SGD), so the search is built to need one to three of them
when the start is good and about five when it is 40 % off.  Pure: no state, and no imports of the
rest of the library but its argument checks (:mod:`._checks`).

Sources.  No privacy formula lives here: every ε (δ) comes from the caller's accountant, and the
answer is always a point that accountant evaluated, so the certificate never depends on this
search.  The search is Brent's safeguarded root finding (R. P. Brent, *Algorithms for
Minimization without Derivatives*, 1973, ch. 4: secant / inverse quadratic interpolation, false
position or bisection when that fails or is slow, and a step of the tolerance itself once the
root estimate is closer than that), aimed inside the acceptance window instead of at the root
where the tolerance is on the function's value, and started at the central-limit calibration of
Bu, Dong, Long, Su 2020 (arXiv:1911.11607, Thm 5) where the caller has one.

Derivation note.  With x = log σ and f(x) = log(ε(σ)/ε_target), f is decreasing and nearly linear
(slope −1 where the run is close to Gaussian, −2 … −3 in the large-ε regime of subsampled
Gaussians).  The answer is the smallest σ with f ≤ 0; returned is always an evaluated point with
f ≤ 0 ("never overshoots").  f = +∞ (ε = ∞) counts as too little noise, f = −∞ (ε = 0) as
enough; a nan is an error.  Two tolerances:

* on the value (``tolerance="epsilon"``): stop at a point with f ∈ [log(1 − rtol), 0], or at a
  bracket [σ_lo: f > 0, σ_hi: f ≤ 0] narrower than a factor 1 + rtol.  Each step aims at
  f = log(1 − rtol/2), the middle of the window, so a step that lands where it aimed stops;
* on the noise (``tolerance="noise"``, and :func:`smallest_epsilon`): stop only at such a bracket
  (or one narrower than ``atol`` in σ), which certifies that σ_hi/(1 + rtol) misses the target.
  Steps aim at the root; once the estimate lies within 0.6 of the allowed bracket width of an end,
  the next point is 0.9 of that width inside that end (Brent's tolerance step), so an accurate
  estimate closes the bracket in one evaluation.

Before the root is bracketed: the first step follows the caller's slope estimate, later ones the
secant or the inverse quadratic interpolant (IQI) through the three points nearest the root; an
interpolant pointing back (impossible for a decreasing f: it is extrapolating badly) gives way to
the secant, then to the caller's slope from the current point.  A step is at most a factor 2, 4,
16, … in σ, at least doubles once the model has not converged in two steps (a flat stretch), and
stops at ``floor`` / ``ceiling``, which are evaluated before the search gives up.  Once bracketed:
the IQI if it lands inside the bracket, else false position between the bracket's ends.  When the
upper end has ε = 0 (no log; e.g. Laplace-type δ(ε) curves vanish beyond a point, and the root
sits just below it) the values themselves are interpolated instead (IQI / secant through the
points below the root, else false position against that end), since near such a point δ is close
to linear in ε while log δ is not.  Safeguards: every point stays 10⁻³ of the bracket inside it;
the search bisects after a clamped step, a closing step that stayed on its end's side, a value
model that landed twice at ε = 0, or when the bracket has not halved in two steps (so it ends after
O(log(1/rtol)) steps at worst).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ._checks import check_open_unit, check_positive

__all__ = ["smallest_epsilon", "smallest_noise"]

#: Values of ``smallest_noise(tolerance=...)``.
TOLERANCES = ("epsilon", "noise")


def _interpolate(points: list[tuple[float, float]], aim: float, slope: float, *,
                 quadratic: bool = True) -> float | None:
    """x where the interpolant through the (up to) three finite points nearest the root reaches ``aim``.

    ``points`` are in evaluation order; the last one is the current point.  ``quadratic=False``:
    through the two nearest only (a secant, or the line of slope ``slope`` through one point).
    """
    if not points:
        return None
    nearest = sorted(points, key=lambda p: abs(p[1]))[:3]
    if len(nearest) == 3 and quadratic:
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


def _check(target: float, rtol: float, start: float, slope: float) -> None:
    """Refuse (``ValueError``, naming the parameter) arguments the search cannot use."""
    check_positive(target, "target")
    check_open_unit(rtol, "rtol")
    check_positive(start, "start")
    if not slope < 0:
        raise ValueError(f"slope must be < 0 (the function decreases); got slope={slope!r}.")


def _value(fn: Callable[[float], float], x: float) -> float:
    """``fn(x)`` as a float; a nan is an error (it is neither too much nor enough)."""
    value = float(fn(x))
    if math.isnan(value):
        raise ValueError(f"the function returned nan at {x!r}; it must be a number in [0, inf].")
    return value


def _search(fn: Callable[[float], float], target: float, start: float, *, rtol: float, atol: float,
            window: bool, slope: float, floor: float, ceiling: float) -> tuple[float, str]:
    """The smallest x in [floor, ceiling] with ``fn(x) <= target`` for a non-increasing ``fn`` (module note).

    Returns ``(x, status)``: status ``"found"`` with x an evaluated point meeting the target and
    the stopping rule of the module note (``window``: the value tolerance too; ``atol``: a bracket
    narrower than ``atol`` in x also stops); ``"floor"`` with x = ``floor`` when fn(floor) already
    meets the target; ``"ceiling"`` with x = inf when fn(ceiling) does not.
    """
    width = math.log1p(rtol)
    accept, aim = (math.log1p(-rtol), math.log1p(-rtol / 2.0)) if window else (math.inf, 0.0)
    x_floor, x_ceiling = math.log(floor), math.log(ceiling)

    def point(x: float) -> float:  # the bounds exactly, not exp(log(bound))
        return floor if x == x_floor else ceiling if x == x_ceiling else math.exp(x)

    def excess(x: float) -> float:
        value = _value(fn, point(x))
        return math.log(value / target) if value > 0 else -math.inf

    def allowed(b: float) -> float:  # the widest bracket [a, b] in log x that meets the tolerance
        if atol > 0.0:
            room = math.exp(b) - atol
            return math.inf if room <= 0.0 else max(width, b - math.log(room))
        return width

    x = math.log(start) + math.log1p(rtol / 2.0)  # the start's own error is often below rtol/2
    x = min(max(x, x_floor), x_ceiling)
    finite: list[tuple[float, float]] = []
    lo = hi = None
    cap, last_step, last_model, stall, back = math.log(2.0), 0.0, math.inf, 0, 0  # pre-bracket steps (module note)
    widths: list[float] = []  # bracket widths since the last bisection
    kind: str | None
    last: str | None
    kind, clamped = None, False  # the last bracketed step's kind, and whether it was clamped
    while True:
        f = excess(x)
        if math.isfinite(f):
            finite.append((x, f))
        if f > 0:
            lo = (x, f) if lo is None or x > lo[0] else lo
        else:
            hi = (x, f) if hi is None or x < hi[0] else hi
        if hi is not None and (hi[1] >= accept or (lo is not None and hi[0] - lo[0] <= allowed(hi[0]))):
            return point(hi[0]), "found"
        if f <= 0 and x <= x_floor:
            return point(x), "floor"
        if f > 0 and x >= x_ceiling:
            return math.inf, "ceiling"
        target_x = _interpolate(finite, aim, slope)
        if lo is not None and hi is not None:  # bracketed: stay inside; bisect if slow
            (a, f_a), (b, f_b) = lo, hi
            widths.append(b - a)
            slow = len(widths) >= 3 and widths[-1] > 0.5 * widths[-3]
            failed = slow or clamped or kind == "closing"  # a closing step that closed would have stopped
            last, kind = kind, "model"
            zero = f == -math.inf and last in ("values", "chord")  # a model of the values landed at value 0
            if f_b == -math.inf and math.isfinite(f_a):  # value 0 at b has no log: model the values
                kind, target_x = "values", None
                below = [(px, math.exp(min(pf, 700.0))) for px, pf in finite if pf > 0]  # values / target
                if len(below) >= 2 and not zero:
                    target_x = _interpolate(below, math.exp(aim), slope)
                if target_x is None or not a < target_x < b:  # false position against b
                    kind, target_x = "chord", a - math.expm1(aim - f_a) * (b - a)
                    failed = failed or (zero and last == "chord")
            elif target_x is None or not a < target_x < b:  # the interpolant left the bracket: false position
                target_x = a + (b - a) * (f_a - aim) / (f_a - f_b) if math.isfinite(f_a - f_b) else None
            near_b, near_a = allowed(b), allowed(min(a + allowed(a), b))
            clamped = False
            if target_x is None or failed:
                x, kind = 0.5 * (a + b), "bisect"
                widths.clear()
            elif not window and kind != "chord" and b - target_x < 0.6 * near_b:
                x, kind = b - 0.9 * near_b, "closing"  # Brent's tolerance step: close the bracket from above
            elif not window and target_x - a < 0.6 * near_a:
                x, kind = a + 0.9 * near_a, "closing"  # ... or from below
            else:
                x = min(max(target_x, a + 1e-3 * (b - a)), b - 1e-3 * (b - a))
                clamped = x != target_x
        else:  # not bracketed: move towards the missing side, at most a factor 2, 4, 16, ...
            direction = 1.0 if lo is not None else -1.0  # more noise if ε is too large
            least = width if window else 0.9 * width  # below the bracket width: one such step can close it
            if target_x is not None and (target_x - x) * direction <= 0:  # far from the points, IQI can point back:
                target_x = _interpolate(finite, aim, slope, quadratic=False)  # then the secant, then the
            if target_x is not None and (target_x - x) * direction <= 0:  # caller's slope from here, which
                target_x = x + (aim - f) / slope if math.isfinite(f) else None  # cannot (f is on one side)
            step = cap if target_x is None else abs(target_x - x)
            if target_x is not None and (target_x - x) * direction <= 0:  # only if f = aim exactly: a small
                step, back = least * 8.0**back, back + 1  # step the right way, growing on a plateau at the aim
            else:  # a model that has not converged in two steps (e.g. on a flat stretch): at least double
                stall, last_model = (stall + 1 if 0.8 * last_model <= step < cap else 0), step
                step = max(step, 2.0 * last_step) if stall >= 2 else step
            last_step = min(max(step, least), cap)
            x = min(max(x + direction * last_step, x_floor), x_ceiling)
            cap *= 2.0


def smallest_noise(epsilon_of: Callable[[float], float], target: float, start: float, *,
                   rtol: float = 1e-3, slope: float = -1.0, floor: float | None = None,
                   ceiling: float = 1e12, tolerance: str = "epsilon") -> float:
    """Smallest σ (within ``rtol``) with ``epsilon_of(σ) <= target``, for a non-increasing ε(σ).

    Parameters
    ----------
    epsilon_of : callable
        σ ↦ ε(σ), non-increasing; may return ``inf`` (too little noise) or 0.  Any other
        non-increasing quantity works as well (e.g. δ at a fixed ε).
    target : float
        The ε to meet, > 0.
    start : float
        First σ to evaluate (an approximation of the answer, e.g. a central-limit calibration).
    rtol : float, default 1e-3
        With ``tolerance="epsilon"``: stop at an evaluated σ with target·(1 − rtol) ≤ ε(σ) ≤ target,
        or when the bracket [σ_lo: ε > target, σ_hi: ε ≤ target] is narrower than a factor 1 + rtol.
        With ``tolerance="noise"``: stop only at such a bracket, so σ_hi/(1 + rtol) is certified to
        miss the target.
    slope : float, default -1.0
        Estimate of d log ε / d log σ at ``start`` (negative), used for the first step only.
    floor, ceiling : float
        The search evaluates no σ below ``floor`` (default start/10⁶) or above ``ceiling`` and refuses
        (``ValueError``) if ε(floor) ≤ target (e.g. ε = 0 at every σ: δ above the total-variation
        bound) or ε(ceiling) > target.
    tolerance : {"epsilon", "noise"}, default "epsilon"
        What ``rtol`` bounds: ε at the answer (relative to the target), or the answer itself
        (relative to the smallest σ that meets the target).

    Returns
    -------
    float
        σ_hi, an evaluated point with ``epsilon_of(σ_hi) <= target``.

    Raises
    ------
    ValueError
        For an argument outside its range (named in the message), a nan from ``epsilon_of``, or no
        answer in [``floor``, ``ceiling``] (the two cases above).
    """
    _check(target, rtol, start, slope)
    if tolerance not in TOLERANCES:
        raise ValueError(f"tolerance must be one of {TOLERANCES}; got {tolerance!r}.")
    floor = start / 1e6 if floor is None else floor
    if not (0.0 < floor < ceiling < math.inf):
        raise ValueError(f"floor and ceiling must satisfy 0 < floor < ceiling < inf; got {floor!r}, {ceiling!r}.")
    sigma, status = _search(epsilon_of, target, start, rtol=rtol, atol=0.0, window=tolerance == "epsilon",
                            slope=slope, floor=floor, ceiling=ceiling)
    if status != "found":
        reason = ("epsilon_of already meets it at the floor" if status == "floor"
                  else "epsilon_of still exceeds it at the ceiling")
        raise ValueError(f"no noise level in [{floor:.3g}, {ceiling:.3g}] is the smallest to reach the target "
                         f"epsilon={target!r} ({reason}); check the run's parameters.")
    return sigma


def smallest_epsilon(delta_of: Callable[[float], float], target: float, *, rtol: float = 1e-10,
                     epsilon_max: float = 1.0e4, start: float = 1.0, slope: float = -1.0) -> float:
    """Smallest ε ≥ 0 (within ``rtol``·max(1, ε)) with ``delta_of(ε) <= target``, for a non-increasing δ(ε).

    The ε of an (ε, δ) guarantee read off a privacy profile δ(ε) (e.g. a hockey-stick divergence,
    Asoodeh, Diaz, Calmon 2020, arXiv:2001.06546, Thm 1): the same search as :func:`smallest_noise`
    with ε in the place of σ and a tolerance on ε, never understating ε.

    Parameters
    ----------
    delta_of : callable
        ε ↦ δ(ε) for ε ≥ 0, non-increasing; may return 0.  A nan is an error.
    target : float
        The δ to meet, > 0.
    rtol : float, default 1e-10
        The returned ε_hi and an evaluated ε_lo with ``delta_of(ε_lo) > target`` (ε_lo = 0 if need
        be) satisfy ε_hi − ε_lo ≤ rtol·max(1, ε_hi).
    epsilon_max : float, default 1e4
        Largest ε evaluated; ``inf`` is returned if ``delta_of(epsilon_max) > target``.
    start : float, default 1.0
        First ε > 0 to evaluate.
    slope : float, default -1.0
        Estimate of d log δ / d log ε at ``start`` (negative), used for the first step only.

    Returns
    -------
    float
        0.0 if ``delta_of(0) <= target``, ``inf`` if ``delta_of(epsilon_max) > target``, else an
        evaluated ε_hi with ``delta_of(ε_hi) <= target``.

    Raises
    ------
    ValueError
        For an argument outside its range (named in the message) or a nan from ``delta_of``.
    """
    _check(target, rtol, start, slope)
    if not (math.isfinite(epsilon_max) and epsilon_max > rtol):
        raise ValueError(f"epsilon_max must be finite and > rtol; got {epsilon_max!r}.")
    if _value(delta_of, 0.0) <= target:
        return 0.0
    # floor = rtol: if δ(rtol) ≤ target, ε* ∈ (0, rtol] and rtol is within the absolute tolerance.
    epsilon, _ = _search(delta_of, target, start, rtol=rtol, atol=rtol, window=False, slope=slope,
                         floor=rtol, ceiling=epsilon_max)
    return float(epsilon)
