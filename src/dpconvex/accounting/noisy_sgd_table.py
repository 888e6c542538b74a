"""The bounds of the noisy mini-batch SGD accountant: the bound record, the table and the bounds left out.

The accountant (:mod:`dpconvex.accounting.noisy_sgd`, which re-exports every name here) evaluates every bound of
:data:`BOUNDS` whose conditions hold for a :class:`~.noisy_sgd_event.NoisySGDEvent` and keeps the
smallest; its conventions (noise σ on the gradient *sum*, sensitivity S_g of one record's gradient
under replace-one neighbours, nominal batch size b) and the derivation notes on Poisson and shuffled
batches are in :mod:`dpconvex.accounting.noisy_sgd`'s docstring; the formulas are in :mod:`.noisy_sgd_bounds`.

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

import math
from collections.abc import Callable
from dataclasses import dataclass

from . import best_of, gdp
from . import noisy_sgd_bounds as nb
from . import shifted_interpolation as si
from .noisy_gd_bounds import EVERY_ITERATE, HIDDEN_STATE
from .noisy_sgd_event import NoisySGDEvent

__all__ = ["SGDBound", "BOUNDS", "EXCLUDED", "hidden_state_conditions"]


@dataclass(frozen=True)
class SGDBound(best_of.Bound[NoisySGDEvent]):
    """A bound (:class:`.best_of.Bound`) with either a μ-GDP map or an (ε, δ) curve.

    Parameters
    ----------
    name, theorem, assumptions, unmet
        As in :class:`.best_of.Bound`.
    mu : callable or None
        ``mu(event)``: μ of the bound's μ-GDP guarantee for the run (μ ∝ 1/σ); None for a curve bound.
    epsilon : callable or None
        ``epsilon(event, delta)``: ε at δ (a bound without ``mu``: Poisson composition).
    delta : callable or None
        ``delta(event, epsilon)``: δ at ε, an upper bound on the hockey-stick divergence.
    """

    mu: Callable[[NoisySGDEvent], float] | None = None
    epsilon: Callable[[NoisySGDEvent, float], float] | None = None
    delta: Callable[[NoisySGDEvent, float], float] | None = None


_BASE = ("replace-one neighbours", "data-independent start θ₀")
_HIDDEN = _BASE + (HIDDEN_STATE,)


def _needs_disjoint(e: NoisySGDEvent) -> list[str]:
    return [] if e.batching in ("shuffled", "cyclic") else ["batching in {'shuffled', 'cyclic'}"]


def hidden_state_conditions(e: NoisySGDEvent) -> list[str]:
    """Unmet conditions every hidden-state bound shares (release, clipping; module derivation notes).

    Parameters
    ----------
    e : NoisySGDEvent
        The run.

    Returns
    -------
    list of str
        Empty when only θ_T is released and any per-example clipping is on a GLM / margin loss.
    """
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

