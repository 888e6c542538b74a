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

Bounds (replace-one neighbours).  Each states its release condition: composition holds with every
iterate published (so the mean of the iterates is covered); the hidden-state bounds only with
θ_1..θ_{T−1} hidden (``dpconvex.accounting.noisy_gd.HIDDEN_STATE``,
``dpconvex.accounting.noisy_gd.EVERY_ITERATE``).

=================  ===============================================  =====================================
name               source                                           conditions
=================  ===============================================  =====================================
composition        dp-accounting PLD of PoissonSampledDpEvent        poisson: per-example ‖∇ℓ‖ ≤ S_g/2
                   (REPLACE_ONE), or its full-batch √T-fold GDP      shuffled/cyclic: none
                   bound where smaller; shuffled/cyclic: √E-fold
                   GDP composition (Dong, Roth, Su 2019, Cor. 3.3)
bok-cgd            Bok, Su, Altschuler 2024 (arXiv:2403.00278),      shuffled or cyclic, m > 0, η < 2/M
                   Thm 4.5 (NoisyCGD, strongly convex): μ-GDP
exact-quadratic    exact law for ½‖θ − x‖² (+ ridge), per batch      shuffled or cyclic, loss ½‖θ − x‖²,
                   (Chourasia et al. 2021, arXiv:2102.05855,         b divides n, C = R^d, η < 2/M
                   Thm 3 proof, applied to the cyclic schedule)
shifted-           core lemma of Bok et al. 2024 (Lemma C.3),        shuffled or cyclic, η ≤ 2/M (c ≤ 1,
interpolation      optimised over windows and weights, worst         m = 0 allowed), C = R^d or a ball
                   position (:mod:`.shifted_interpolation`), min     of diameter D, clipping only for
                   with Thm 4.5 (the exact τ = 0 window)             GLM / margin losses
=================  ===============================================  =====================================

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

Derivation note (shifted-interpolation, conditions).  The core lemma needs every step map
θ ↦ Π_C(θ − η∇F_{B_k}(θ)) c-Lipschitz with c ≤ 1: η ≤ 2/M suffices for convex M-smooth F_B (m = 0
gives c = 1); only θ_T released; θ₀ data-independent; Π_C non-expansive (Euclidean projection on a
convex set; a ball of diameter D also bounds ‖θ_τ − θ'_τ‖ ≤ D, the windows of note 3).  Per-example
clipping keeps F_B convex and M-smooth for GLM / margin losses ℓ = φ(θᵀx; y) (clipping replaces φ'
by a clipped, still non-decreasing φ'; hidden-state-bounds notes §1.8), not in general, so the
event says whether clipping is active and on which kind of loss (``clipping``).  Poisson batches are
not a deterministic schedule: the lemma's shifts are random there (Bok et al.'s NoisySGD bound is
not implemented, ``EXCLUDED['bok-sgd']``).

Derivation note (projection, batch sizes).  As in :mod:`dpconvex.accounting.noisy_gd`: with Y_{k+1} = φ_k(Π_C(Y_k)) +
noise, φ_k the gradient step on F_{B_k}, the maps φ_k∘Π_C are c-Lipschitz and differ between
neighbours by at most ηS_g/b at the steps using the differing record; θ_T = Π_C(Y_T) is
post-processing.  A shorter last batch changes neither the shift bound ηS_g/b nor the noise ησ/b
(we normalise by the nominal b), and m, M must hold for every batch — the trainer declares the m of
the shortest batch (λ + m_ℓ·|B_min|/b; ``dpconvex.mechanisms.noisy_sgd._every_batch_strong_convexity``)
— so Thm 4.5 applies with l = ⌈n/b⌉.  The exact-quadratic law needs equal batches (b | n).

Bounds left out (requesting one raises ``ValueError`` with the reason; :data:`EXCLUDED` has the
full text).  Only statements checked against the paper text or the authors' code are implemented:

* ``bok-sgd`` — Bok et al. NoisySGD (stochastic batches): the statement composes subsampling
  operators C_{b/n}(G(·)); we could read neither it nor its conditions (the authors' code only
  evaluates a central-limit approximation, which is not a bound).
* ``bok-constrained`` — the authors' closed forms for a domain of diameter D are not certificates
  on their own; ``shifted-interpolation`` evaluates the lemma they come from (and uses the
  NoisyCGD closed form only as an upper bound checked against it).
* ``ye-shokri`` — Ye & Shokri 2022 (arXiv:2203.05363), shuffled batches with a secret permutation:
  a comparison number only (:mod:`.ye_shokri`, from the authors' code): its earlier-epochs term could
  not be justified and it needs a fresh secret permutation per epoch; no certificate relies on secrecy.
* ``altschuler-talwar`` — Altschuler & Talwar 2022 (arXiv:2205.13710): the main theorem is stated
  up to unspecified constants (≲); the explicit constants could not be checked.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from . import best_of, calibration, gdp, poisson_pld
from . import noisy_sgd_bounds as nb
from . import shifted_interpolation as si
from ._checks import check_delta, check_epsilon, check_open_unit
from .noisy_gd import EVERY_ITERATE, HIDDEN_STATE
from .noisy_sgd_event import BATCHINGS, NoisySGDEvent
from .noisy_sgd_event import CLIPPINGS as CLIPPINGS
from .rounding import round_up

__all__ = [
    "BATCHINGS", "NoisySGDEvent", "SGDBound", "BOUNDS", "EXCLUDED", "unmet_conditions",
    "applicable_bounds", "candidate_bounds", "epsilon_of", "delta_of", "account", "composition_epsilon",
    "calibrate_sigma", "hidden_state_conditions", "bound_mu",
]


@dataclass(frozen=True)
class SGDBound(best_of.Bound[NoisySGDEvent]):
    """A bound (:class:`.best_of.Bound`) with either a μ-GDP map or an (ε, δ) curve."""

    mu: Callable[[NoisySGDEvent], float] | None = None
    epsilon: Callable[[NoisySGDEvent, float], float] | None = None
    delta: Callable[[NoisySGDEvent, float], float] | None = None


_BASE = ("replace-one neighbours", "data-independent start θ₀")
_HIDDEN = _BASE + (HIDDEN_STATE,)


def _needs_disjoint(e: NoisySGDEvent) -> list[str]:
    return [] if e.batching in ("shuffled", "cyclic") else ["batching in {'shuffled', 'cyclic'}"]


def hidden_state_conditions(e: NoisySGDEvent) -> list[str]:
    """Unmet conditions every hidden-state bound shares (release, clipping; module derivation notes)."""
    unmet = [] if e.last_iterate_only else ["only the last iterate θ_T released (a mean of iterates needs composition)"]
    if e.clipping == "other":
        unmet.append("per-example clipping only on a GLM / margin loss φ(θᵀx; y): clipping other losses may "
                     "break the step's contraction (hidden-state-bounds notes §1.8)")
    return unmet


def _unmet_composition(e: NoisySGDEvent) -> list[str]:
    if e.batching == "poisson" and e.quadratic_loss:
        return ["per-example gradients bounded by sensitivity/2 (clipping); "
                "the loss ½‖θ − x‖² on R^d has unbounded gradients"]
    return []


def _unmet_bok(e: NoisySGDEvent) -> list[str]:
    unmet = _needs_disjoint(e) + hidden_state_conditions(e)
    if e.strong_convexity <= 0:
        unmet.append("strong_convexity > 0")
    if not e.step_size * e.smoothness < 2.0:
        unmet.append(f"step_size < 2/smoothness (= {2.0 / e.smoothness if e.smoothness else math.inf:.6g})")
    elif e.strong_convexity > 0 and not e.contraction < 1.0:
        unmet.append("contraction max(|1 − ηm|, |1 − ηM|) < 1 in floating point (η·m is too small)")
    return unmet


def _unmet_quadratic(e: NoisySGDEvent) -> list[str]:
    unmet = _unmet_bok(e)
    if not e.quadratic_loss:
        unmet.append("the loss ½‖θ − x‖² (quadratic_loss)")
    if e.n % e.batch_size:
        unmet.append("batch_size divides n (equal batches)")
    if e.diameter is not None:
        unmet.append("an unconstrained domain (diameter None)")
    return unmet


def _unmet_shifted(e: NoisySGDEvent) -> list[str]:
    unmet = [] if e.batching in ("shuffled", "cyclic") else [
        "batching in {'shuffled', 'cyclic'} (Poisson batches are not covered: the core lemma needs a "
        "deterministic schedule, and Bok et al.'s NoisySGD bound is not implemented)"]
    unmet += hidden_state_conditions(e)
    if not (e.step_size * e.smoothness <= 2.0 and e.contraction <= 1.0):
        unmet.append(f"step_size <= 2/smoothness (= {2.0 / e.smoothness if e.smoothness else math.inf:.6g}), "
                     "i.e. contraction c = max(|1 − ηm|, |1 − ηM|) <= 1")
    return unmet


def _shifted_mu(e: NoisySGDEvent) -> float:
    """Core-lemma μ, worst batch of the cycle (shuffled: see the derivation note), min with Thm 4.5.

    Both are valid bounds: the generic optimum over windows and weights
    (:func:`.shifted_interpolation.worst_case_mu`, exact up to an upward truncation at c < 1) and, at
    c < 1, Bok et al.'s NoisyCGD Thm 4.5 (the exact τ = 0 window), so the bound is ≤ bok-cgd wherever
    both apply.  Bok et al.'s constrained closed form is not taken (below).  μ ∝ 1/σ exactly.
    """
    c = e.contraction
    generic = si.worst_case_mu(si.batch_partition(e.n, e.batch_size), e.epochs, e.step_size, e.sensitivity,
                               e.sigma, c, e.diameter, batch_size=e.batch_size)
    # Thm 4.5 in bok-cgd's own rounding (S_g/σ rather than s/ν), so that the min is ≤ bok-cgd exactly.  The
    # constrained closed form is not taken: it is only checked (not proved) to lie above the optimum.
    thm = float(nb.bok_cgd_mu(e.sensitivity, e.sigma, c, e.batches, e.epochs)) if c < 1.0 else math.inf
    return float(min(generic, thm))


def _composition_mu(e: NoisySGDEvent) -> float:
    return float(nb.composition_mu(e.sensitivity, e.sigma, e.epochs))


def _poisson_args(e: NoisySGDEvent) -> tuple[float, float, int]:
    return e.sampling_rate, e.noise_multiplier, e.steps


def _composition_epsilon(e: NoisySGDEvent, delta: float) -> float:
    if e.batching == "poisson":
        return nb.poisson_pld_epsilon(*_poisson_args(e), delta)
    return gdp.gdp_epsilon(delta, _composition_mu(e))


def _composition_delta(e: NoisySGDEvent, epsilon: float) -> float:
    if e.batching == "poisson":
        return nb.poisson_pld_delta(*_poisson_args(e), epsilon)
    return float(gdp.gdp_delta(epsilon, _composition_mu(e)))


#: Registry of the bounds the accountant knows, keyed by the name a certificate reports.
#:
#: :meta hide-value:
BOUNDS: dict[str, SGDBound] = {
    b.name: b
    for b in [
        SGDBound(
            "composition",
            "composition over all T steps: dp-accounting PLD of PoissonSampledDpEvent (REPLACE_ONE) for "
            "Poisson, or where smaller (huge epsilon) the sqrt(T)-fold Gaussian composition of its full-batch "
            "steps; sqrt(E)-fold Gaussian composition (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 3.3) "
            "for disjoint batches",
            _BASE + (EVERY_ITERATE, "Poisson: per-example gradients clipped to sensitivity/2"),
            _unmet_composition,
            epsilon=_composition_epsilon,
            delta=_composition_delta,
        ),
        SGDBound(
            "bok-cgd",
            "Bok, Su, Altschuler 2024 (arXiv:2403.00278), Thm 4.5: NoisyCGD on strongly convex losses is μ-GDP",
            _HIDDEN + ("m-strongly convex, M-smooth step objectives, 0 < η < 2/M",
                     "disjoint batches cycled in one order (a shuffled partition need not stay secret)"),
            _unmet_bok,
            mu=lambda e: float(nb.bok_cgd_mu(e.sensitivity, e.sigma, e.contraction, e.batches, e.epochs)),
        ),
        SGDBound(
            "exact-quadratic",
            "exact Gaussian law of the loss ½‖θ − x‖² under cyclic batches (worst batch; Chourasia et al. "
            "2021, arXiv:2102.05855, Thm 3 proof)",
            _HIDDEN + ("loss ½‖θ − x‖² plus a ridge term on R^d", "equal batches", "0 < η < 2/M"),
            _unmet_quadratic,
            mu=lambda e: float(nb.exact_quadratic_cyclic_mu(
                e.sensitivity, e.sigma, 1.0 - e.step_size * e.smoothness, e.batches, e.epochs)),
        ),
        SGDBound(
            "shifted-interpolation",
            "Bok, Su, Altschuler 2024 (arXiv:2403.00278), Lemma C.3 (shifted interpolation): the core lemma "
            "optimised over the window start and interpolation weights, worst batch position; μ-GDP",
            _HIDDEN + ("convex M-smooth step objectives (m ≥ 0), 0 < η ≤ 2/M, so every step is c-Lipschitz, c ≤ 1",
                       "disjoint batches cycled in one order (a shuffled partition need not stay secret)",
                       "Euclidean projection onto a convex set; a finite diameter D is used when declared",
                       "per-example clipping, if any, on a GLM / margin loss"),
            _unmet_shifted,
            mu=_shifted_mu,
        ),
    ]
}

#: Bounds named in the issue that are NOT implemented, and why (requesting one raises ValueError).
EXCLUDED = nb.EXCLUDED


_REGISTRY = best_of.BoundRegistry(BOUNDS, EXCLUDED)


def unmet_conditions(event: NoisySGDEvent, bound: str) -> list[str]:
    """Conditions of ``bound`` that ``event`` does not satisfy (empty if it applies; excluded: refused)."""
    return _REGISTRY.unmet_conditions(event, bound)


def applicable_bounds(event: NoisySGDEvent) -> list[str]:
    """Names of the bounds whose conditions ``event`` satisfies."""
    return _REGISTRY.applicable(event)


def candidate_bounds(event: NoisySGDEvent, bound: str = "best") -> list[str]:
    """The bounds :func:`account` evaluates for ``bound`` ("best": every applicable one).

    ``ValueError`` with the reason if ``bound`` is unknown, excluded or inapplicable, or if none applies.
    """
    return _REGISTRY.candidates(event, bound)


def bound_mu(event: NoisySGDEvent, bound: str) -> float:
    """μ of the μ-GDP guarantee one named bound gives the run (``composition`` for disjoint batches,
    ``bok-cgd``, ``exact-quadratic``, ``shifted-interpolation``); ``ValueError`` for a bound that does not
    apply or is not a GDP bound here (Poisson ``composition``).  Not :func:`.gdp.gdp_mu`, the μ of a target
    (ε, δ)."""
    b = _REGISTRY.require(event, bound)
    if b.mu is not None:
        return b.mu(event)
    if bound == "composition" and event.batching != "poisson":
        return _composition_mu(event)
    raise ValueError(f"bound {bound!r} is not a GDP bound for batching={event.batching!r}.")


#: The former name of :func:`bound_mu`, kept for callers outside the accounting package.
gdp_mu = bound_mu


def epsilon_of(event: NoisySGDEvent, bound: str, delta: float) -> float:
    """ε at ``delta`` of one named bound (exact δ(ε) of GDP, Dong, Roth, Su 2019, Cor. 2.13)."""
    b = _REGISTRY.require(event, bound)
    delta = check_delta(delta)
    # an SGDBound has mu, or epsilon and delta (mypy cannot see that invariant)
    return gdp.gdp_epsilon(delta, b.mu(event)) if b.mu is not None else b.epsilon(event, delta)  # type: ignore[misc]


def delta_of(event: NoisySGDEvent, bound: str, epsilon: float) -> float:
    """δ at ``epsilon`` of one named bound (an upper bound on the hockey-stick divergence)."""
    b = _REGISTRY.require(event, bound)
    # an SGDBound has mu, or epsilon and delta (mypy cannot see that invariant)
    return float(gdp.gdp_delta(epsilon, b.mu(event))) if b.mu is not None else b.delta(event, epsilon)  # type: ignore[misc]


def account(event: NoisySGDEvent, delta: float, *, bound: str = "best") -> best_of.PrivacyAccount:
    """(ε, δ)-DP of a noisy SGD run: one named bound, or the smallest ε over every applicable bound."""
    delta = check_delta(delta)
    best = _REGISTRY.best_of(event, lambda name: (epsilon_of(event, name, delta), None), bound=bound)
    poisson = BOUNDS[best[0]].mu is None and event.batching == "poisson"
    shuffled = ("shuffled partition drawn once, independently of the data; the certificate holds even if it "
                "is exposed",) if event.batching == "shuffled" else ()
    conversion = nb.poisson_route(*_poisson_args(event), delta) if poisson else "exact-gdp"
    return _REGISTRY.account(delta, best, conversion, shuffled)


def composition_epsilon(event: NoisySGDEvent, delta: float) -> float:
    """ε of the composition baseline (every iterate released) at ``delta``, rounded up as a certified ε."""
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
    """
    epsilon, delta, rtol = check_epsilon(epsilon), check_delta(delta), check_open_unit(rtol, "rtol")
    names = candidate_bounds(event, bound)
    sigma = min(_calibrate_one(event, name, epsilon, delta, rtol) for name in names)
    assert account(dataclasses.replace(event, sigma=sigma), delta, bound=bound).epsilon <= epsilon
    return sigma
