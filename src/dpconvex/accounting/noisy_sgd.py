"""Accountant for projected noisy mini-batch SGD (Poisson, shuffled and cyclic batches).

Convention (DP-SGD: noisy *sum* of per-example gradients).  Step k uses batch B_k and

    θ_{k+1} = Π_C(θ_k − η·[(1/b)(Σ_{i∈B_k} ∇ℓ(θ_k; z_i) + σ·ξ_k) + ∇r(θ_k)]),   ξ_k ~ N(0, I_d),

with b the nominal batch size (Poisson: the expected batch size, q = b/n), r a data-independent
regulariser (e.g. (λ/2)‖θ‖²), C = R^d or an L2 ball of diameter D, and θ₀ data-independent; θ_T is
released (or, certified by composition only, the mean of θ_1..θ_T).  σ is the standard deviation of
the noise added to the gradient *sum*; ``sensitivity`` S_g = sup ‖∇ℓ(θ; z) − ∇ℓ(θ; z')‖ ≤ 2L under
replace-one neighbours, and σ/(S_g/2) is the usual noise multiplier.  A step that uses the differing
record moves the update by at most ηS_g/b against noise of sd ησ/b.  ``strong_convexity`` m and
``smoothness`` M must hold for every step objective F_B = (1/b)Σ_{i∈B} ℓ(·; z_i) + r (with batches
of size ≤ b and r = (λ/2)‖θ‖²: m = λ, M = λ + β_ℓ always work).  Batches: ``"poisson"`` (each record
independently with probability q at every step), ``"shuffled"`` (one uniformly random partition into
l = ⌈n/b⌉ disjoint batches, drawn once and cycled in the same order every epoch), ``"cyclic"`` (a
fixed, public partition and order).  Steps: T = E·l in every mode.


Derivation note (Poisson, replace-one).  dp-accounting's RDP accountant takes PoissonSampledDpEvent
only under ADD_OR_REMOVE_ONE / REPLACE_SPECIAL; its PLD accountant also takes REPLACE_ONE, modelling
one step as the pair (1 − q)N(0, z²) + qN(∓1, z²) (z = σ/(S_g/2): the differing record's
contribution g, ‖g‖ ≤ S_g/2, replaced by −g).  We use that.  It needs every per-example gradient
bounded by S_g/2 (clipping): with only ‖g − g'‖ ≤ S_g a pair g = G ± h with ‖G‖ → ∞ gives
q·E_γ(N(h)‖N(−h)), more than the modelled pair, so the loss ½‖θ − x‖² on R^d is refused.  That
the antipodal pair dominates every other pair of contributions in the ball is the library's model;
the tests check it by 2-D quadrature on a grid.  Composition of the T steps is adaptive (given the
released past each step is such a pair), so the bound holds with every iterate released.

Derivation note (shuffled ⊂ cyclic).  Conditionally on the partition, a shuffled run is a cyclic
run; the partition is drawn independently of the data, so the output laws are mixtures with the same
weights under both neighbours, and joint convexity of E_γ (equivalently of trade-off functions)
makes any bound valid for every fixed order valid for the mixture.  So composition, bok-cgd and
shifted-interpolation hold for shuffled runs whether or not the permutation stays secret; no
implemented bound uses secrecy.  For shifted-interpolation in particular: given the partition, the
differing record sits in one batch j of a cyclic run, and the bound takes the worst j (the last batch
of the cycle, :mod:`.shifted_interpolation` note 5, whatever the batch sizes since the shift is
ηS_g/b for the nominal b); that value bounds every (partition, position) pair, hence the mixture.

The bound table (sources, conditions, the notes on the shifted-interpolation conditions and on
projection, and the bounds left out, :data:`~.noisy_sgd_table.EXCLUDED`) is in :mod:`.noisy_sgd_table`,
re-exported here with every other name so that each keeps its path.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

from . import best_of, calibration, gdp, poisson_pld
from . import noisy_sgd_bounds as nb
from . import noisy_sgd_table as _table
from ._checks import check_delta, check_epsilon, check_open_unit
from .noisy_sgd_event import BATCHINGS, NoisySGDEvent
from .noisy_sgd_event import CLIPPINGS as CLIPPINGS
from .noisy_sgd_table import SGDBound, _composition_mu, _poisson_args, hidden_state_conditions
from .rounding import round_up

__all__ = [
    "BATCHINGS", "NoisySGDEvent", "SGDBound", "BOUNDS", "EXCLUDED", "unmet_conditions",
    "applicable_bounds", "candidate_bounds", "epsilon_of", "delta_of", "account", "composition_epsilon",
    "calibrate_sigma", "hidden_state_conditions", "bound_mu",
]


#: Registry of the bounds the accountant knows, keyed by the name a certificate reports (the table of
#: :mod:`.noisy_sgd_table`).
#:
#: :meta hide-value:
BOUNDS: dict[str, SGDBound] = _table.BOUNDS
#: Bounds named in the literature that are NOT implemented, and why (requesting one raises ValueError).
EXCLUDED: dict[str, str] = _table.EXCLUDED

_REGISTRY = best_of.BoundRegistry(BOUNDS, EXCLUDED)


def unmet_conditions(event: NoisySGDEvent, bound: str) -> list[str]:
    """Conditions of ``bound`` that ``event`` does not satisfy (empty if it applies; excluded: refused).

    Parameters
    ----------
    event : NoisySGDEvent
        The run.
    bound : str
        A name of :data:`~.noisy_sgd_table.BOUNDS` (an excluded or unknown name raises ``ValueError``).

    Returns
    -------
    list of str
        The unmet conditions, in words.
    """
    return _REGISTRY.unmet_conditions(event, bound)


def applicable_bounds(event: NoisySGDEvent) -> list[str]:
    """Names of the bounds whose conditions ``event`` satisfies.

    Parameters
    ----------
    event : NoisySGDEvent
        The run.

    Returns
    -------
    list of str
        Names of :data:`~.noisy_sgd_table.BOUNDS`, in its order.
    """
    return _REGISTRY.applicable(event)


def candidate_bounds(event: NoisySGDEvent, bound: str = "best") -> list[str]:
    """The bounds :func:`account` evaluates for ``bound`` ("best": every applicable one).

    ``ValueError`` with the reason if ``bound`` is unknown, excluded or inapplicable, or if none applies.

    Parameters
    ----------
    event : NoisySGDEvent
        The run.
    bound : str, default="best"
        ``"best"`` or one name of :data:`~.noisy_sgd_table.BOUNDS`.

    Returns
    -------
    list of str
        The names to evaluate.
    """
    return _REGISTRY.candidates(event, bound)


def bound_mu(event: NoisySGDEvent, bound: str) -> float:
    """μ of the μ-GDP guarantee one named bound gives the run (``composition`` for disjoint batches,
    ``bok-cgd``, ``exact-quadratic``, ``shifted-interpolation``); ``ValueError`` for a bound that does not
    apply or is not a GDP bound here (Poisson ``composition``).  Not :func:`.gdp.gdp_mu`, the μ of a target
    (ε, δ).

    Parameters
    ----------
    event : NoisySGDEvent
        The run (σ on the gradient sum, S_g the replace-one sensitivity of one record's gradient).
    bound : str
        A name of :data:`~.noisy_sgd_table.BOUNDS`.

    Returns
    -------
    float
        μ, proportional to S_g/σ.
    """
    b = _REGISTRY.require(event, bound)
    if b.mu is not None:
        return b.mu(event)
    if bound == "composition" and event.batching != "poisson":
        return _composition_mu(event)
    raise ValueError(f"bound {bound!r} is not a GDP bound for batching={event.batching!r}.")


#: The former name of :func:`bound_mu`, kept for callers outside the accounting package.
gdp_mu = bound_mu


def epsilon_of(event: NoisySGDEvent, bound: str, delta: float) -> float:
    """ε at ``delta`` of one named bound (exact δ(ε) of GDP, Dong, Roth, Su 2019, Cor. 2.13).

    Parameters
    ----------
    event : NoisySGDEvent
        The run.
    bound : str
        A name of :data:`~.noisy_sgd_table.BOUNDS` that applies (``ValueError`` otherwise).
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε as computed (not rounded up: :func:`account` rounds the certified value).
    """
    b = _REGISTRY.require(event, bound)
    delta = check_delta(delta)
    # an SGDBound has mu, or epsilon and delta (mypy cannot see that invariant)
    return gdp.gdp_epsilon(delta, b.mu(event)) if b.mu is not None else b.epsilon(event, delta)  # type: ignore[misc]


def delta_of(event: NoisySGDEvent, bound: str, epsilon: float) -> float:
    """δ at ``epsilon`` of one named bound (an upper bound on the hockey-stick divergence).

    Parameters
    ----------
    event : NoisySGDEvent
        The run.
    bound : str
        A name of :data:`~.noisy_sgd_table.BOUNDS` that applies (``ValueError`` otherwise).
    epsilon : float
        ε ≥ 0.

    Returns
    -------
    float
        δ(ε).
    """
    b = _REGISTRY.require(event, bound)
    # an SGDBound has mu, or epsilon and delta (mypy cannot see that invariant)
    return float(gdp.gdp_delta(epsilon, b.mu(event))) if b.mu is not None else b.delta(event, epsilon)  # type: ignore[misc]


def account(event: NoisySGDEvent, delta: float, *, bound: str = "best") -> best_of.PrivacyAccount:
    """(ε, δ)-DP of a noisy SGD run: one named bound, or the smallest ε over every applicable bound.

    Parameters
    ----------
    event : NoisySGDEvent
        The run (module conventions: σ is the standard deviation of the noise on the gradient sum,
        S_g the replace-one sensitivity of one record's gradient).
    delta : float
        δ in (0, 1).
    bound : str, default="best"
        ``"best"`` or one name of :data:`~.noisy_sgd_table.BOUNDS`.

    Returns
    -------
    PrivacyAccount
        The certified ε (rounded up), the winning bound, its theorem and assumptions, the conversion
        (``"exact-gdp"`` or the Poisson route of :func:`.noisy_sgd_bounds.poisson_route`) and every
        candidate's ε.
    """
    delta = check_delta(delta)
    best = _REGISTRY.best_of(event, lambda name: (epsilon_of(event, name, delta), None), bound=bound)
    poisson = BOUNDS[best[0]].mu is None and event.batching == "poisson"
    shuffled = ("shuffled partition drawn once, independently of the data; the certificate holds even if it "
                "is exposed",) if event.batching == "shuffled" else ()
    conversion = nb.poisson_route(*_poisson_args(event), delta) if poisson else "exact-gdp"
    return _REGISTRY.account(delta, best, conversion, shuffled)


def composition_epsilon(event: NoisySGDEvent, delta: float) -> float:
    """ε of the composition baseline (every iterate released) at ``delta``, rounded up as a certified ε.

    Parameters
    ----------
    event : NoisySGDEvent
        The run.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        ε of the ``composition`` bound, rounded up by :data:`.rounding.ROUNDING_MARGIN`.
    """
    return round_up(epsilon_of(event, "composition", delta))


def _calibrate_one(event: NoisySGDEvent, bound: str, epsilon: float, delta: float, rtol: float) -> float:
    """Smallest σ meeting (ε, δ) with ``bound`` alone: :func:`.calibration.smallest_noise` on its ε.

    GDP bounds (and composition with disjoint batches): μ ∝ 1/σ and δ(ε; μ) increases in μ, so
    σ* = μ(σ = 1)/μ(ε, δ) (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13); from there the search
    brackets it to a factor 1 + :data:`.gdp.RTOL` (``tolerance="noise"``), absorbing the rounding.
    Poisson PLD: ε within ``rtol`` (the value window).  Start: the central-limit noise
    (:func:`.noisy_sgd_bounds.poisson_clt_noise_multiplier`, within a few per cent of the answer at
    ε ≲ 0.5, up to 40 % above it at ε ≳ 1, where few steps hold the record and the composition is
    far from Gaussian).  First-step slope of log ε in log σ: the central-limit model's, moved
    halfway to −1 and capped at −3 (the PLD's own slope measured on runs of Adult's size is −1 at
    ε ≲ 0.5 and −2 … −3 at ε ≥ 2, shallower than the model's).  Only the number of accountant calls
    depends on these choices, never the certificate.
    """
    def epsilon_at(sigma: float) -> float:  # the certified ε, as the account states it
        return round_up(epsilon_of(dataclasses.replace(event, sigma=sigma), bound, delta))

    mu = gdp.gdp_mu(epsilon, delta)
    if BOUNDS[bound].mu is not None or event.batching != "poisson":
        start = bound_mu(dataclasses.replace(event, sigma=1.0), bound) / mu
        return calibration.smallest_noise(epsilon_at, epsilon, start, rtol=gdp.RTOL, tolerance="noise")
    rate, _, steps = _poisson_args(event)
    floor = poisson_pld.roundoff_allowance(steps, 2)  # the smallest allowance of any FFT length (module poisson_pld)
    if rate < 1.0 and delta <= floor:
        raise ValueError(f"delta must exceed the Poisson PLD's round-off allowance 4*T*log2(N)*u, at least "
                         f"{floor:.3g} for T = {steps} steps (docs/ACCOUNTANTS.md, 'Rounding margin'); got {delta!r}. "
                         "Use a larger delta, fewer steps, or shuffled or cyclic batches.")
    scale = event.sensitivity / 2.0
    # the full-batch noise meets the target (poisson_pld_epsilon's GDP bound): the answer lies below it
    start = scale * min(nb.poisson_clt_noise_multiplier(rate, steps, mu), 2.0 * math.sqrt(steps) / mu)
    model = nb.poisson_clt_slope(rate, start / scale, steps, delta)
    slope = -min(3.0, 1.0 + 0.5 * (abs(model) - 1.0)) if math.isfinite(model) and model < 0 else -1.0
    return calibration.smallest_noise(epsilon_at, epsilon, start, rtol=rtol, slope=slope)


@lru_cache(maxsize=256)  # pure; repeated runs of one configuration (folds, audits) calibrate once
def calibrate_sigma(event: NoisySGDEvent, epsilon: float, delta: float, *, bound: str = "best",
                    rtol: float = 1e-3) -> float:
    """Smallest σ (GDP bounds: to a factor 1 + :data:`.gdp.RTOL`; PLD: ε within ``rtol``) meeting (ε, δ).

    Every bound's ε is non-increasing in σ, so the best-of certificate meets the target from the
    smallest of the per-bound σ's on (each an evaluated point of :func:`.calibration.smallest_noise`
    on that bound's ε).  Never overshoots: ``account(replace(event, sigma=σ), δ,
    bound=bound).epsilon <= epsilon`` is re-checked.  ``event.sigma`` is ignored.

    Parameters
    ----------
    event : NoisySGDEvent
        The run (its ``sigma`` ignored).
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    bound : str, default="best"
        ``"best"`` or one name of :data:`~.noisy_sgd_table.BOUNDS`.
    rtol : float, default=1e-3
        Relative tolerance in ε of the Poisson PLD search, in (0, 1).

    Returns
    -------
    float
        σ, the standard deviation of the noise added to the gradient sum (noise multiplier σ/(S_g/2)).
    """
    epsilon, delta, rtol = check_epsilon(epsilon), check_delta(delta), check_open_unit(rtol, "rtol")
    names = candidate_bounds(event, bound)
    sigma = min(_calibrate_one(event, name, epsilon, delta, rtol) for name in names)
    assert account(dataclasses.replace(event, sigma=sigma), delta, bound=bound).epsilon <= epsilon
    return sigma
