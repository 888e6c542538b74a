"""The bounds of the full-batch noisy GD accountant (Chourasia et al. Alg. 1): the event record and the table.

A run is described by a frozen :class:`NoisyGDEvent` (hyperparameters and the assumptions the
run satisfies).  Each bound in :data:`BOUNDS` states its theorem, its conditions and its RDP curve
(and, for a GDP bound, its μ); the accountant (:mod:`dpconvex.accounting.noisy_gd`, which re-exports every name here)
evaluates every bound whose conditions hold and keeps the smallest.

Convention: replace-one neighbours (n fixed); ``sensitivity`` S_g is the L2 sensitivity of the *sum* of
the per-example gradients (≤ 2L for L-Lipschitz losses); the update is θ_k = Π_C(θ_{k−1} − η∇L_D(θ_{k−1})
+ √(2η)σ·ξ_k), ξ_k ~ N(0, I), with L_D the *mean* loss, so one record shifts a step by at most ηS_g/n
against iterate noise of standard deviation √(2η)σ.

Bounds (all for replace-one neighbours; the mechanism releases θ_K only).  Each bound states its own
release condition: the hidden-state bounds need θ_1..θ_{K−1} hidden, while composition holds even
if every iterate is published (``HIDDEN_STATE``, ``EVERY_ITERATE``):

=================  =======================================================  ================================
name               source                                                   conditions
=================  =======================================================  ================================
composition        Chourasia et al. 2021 (arXiv:2102.05855) App. E           none beyond finite S_g
theorem2           Chourasia et al. Thm 2                                    user-asserted c-LSI (``lsi_constant``)
corollary1         Chourasia et al. Cor. 1                                   λ > 0, η < 1/β, θ₀ ~ Π_C(N(0, 2σ²/λ I))
corollary2         Chourasia et al. Cor. 2                                   loss ½‖θ−x‖², C = R^d, 0 < η < 1
exact-quadratic    Chourasia et al. Thm 3 (proof)                            loss ½‖θ−x‖², C = R^d, 0 < η < 1
gdp                Bok, Su, Altschuler 2024 (arXiv:2403.00278), §4           λ > 0, 0 < η < 2/β
shifted-           Bok et al. 2024, core lemma (Lemma C.3), exact NoisyGD    0 < η ≤ 2/β (λ = 0 allowed); a
interpolation      optimum over windows (closed form in the note below),    ball of diameter D is used when
                   with or without a diameter D                             declared (``diameter``)
=================  =======================================================  ================================

Derivation note (shifted-interpolation).  Every step holds the differing record: shift s = ηS_g/n
(mean gradient), iterate noise sd ν = √(2η)σ, c = max{|1 − ηλ|, |1 − ηβ|} ≤ 1 for η ≤ 2/β (convex
β-smooth steps, λ = 0 allowed).  The core lemma's optimum over window starts τ (b_τ = D, the
diameter of C, for τ ≥ 1) and weights has the closed form :func:`.shifted_interpolation.gd_closed_form_mu`
(exact, checked against the generic optimum in the step-1 tests); without D it equals the ``gdp``
bound (which it then ties) and at c = 1 it is √K·s/ν, the GDP composition of K steps.

Derivation note (projection, for the GDP bound).  Bok et al. state their analysis covers
constrained and unconstrained problems; in our convention the reduction is: with
``Y_k = θ_{k-1} − η∇L_D(θ_{k-1}) + noise`` and ``θ_k = Π_C(Y_k)``, the sequence Y follows
``Y_{k+1} = φ_D(Π_C(Y_k)) + noise``, a contractive noisy iteration whose maps φ_D∘Π_C are
c-Lipschitz (Π_C is 1-Lipschitz) and differ between neighbours by at most ``η S_g/n``; θ_K = Π_C(Y_K)
is post-processing.  So the projected run has the unconstrained run's μ.

Derivation note (start distribution).  Every bound except Corollary 1 is proved for a fixed,
data-independent start θ₀.  For a random start drawn independently of the data, release
``(θ₀, θ_K)``: conditionally on θ₀ the bound holds, and Rényi divergence (resp. the GDP trade-off
function) of the pair is at most the supremum (resp. at least the infimum) over θ₀ of the
conditional ones; dropping θ₀ is post-processing.  So those bounds hold for the stationary start
too, and Corollary 1 additionally requires it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import best_of, gdp, langevin
from . import shifted_interpolation as si

__all__ = ["NoisyGDEvent", "INITIALIZATIONS", "Bound", "BOUNDS", "HIDDEN_STATE", "EVERY_ITERATE"]

INITIALIZATIONS = ("fixed", "stationary")


@dataclass(frozen=True)
class NoisyGDEvent:
    """One run of noisy GD, in the convention of Chourasia et al. Alg. 1.

    Parameters
    ----------
    n : int
        Number of records (replace-one neighbours keep n fixed).
    sensitivity : float
        ``S_g``: L2 sensitivity of the *sum* of per-example gradients (≤ 2L).
    step_size : float
        η > 0.
    sigma : float
        σ > 0; the per-step noise is √(2η)·N(0, σ² I).
    iterations : int
        K ≥ 1.
    strong_convexity : float
        λ ≥ 0 of every per-example (regularised) loss; 0 means merely convex.
    smoothness : float
        β of every per-example loss (``inf`` if unknown).
    initialization : {"fixed", "stationary"}
        ``"fixed"``: any data-independent start; ``"stationary"``: θ₀ ~ Π_C(N(0, 2σ²/λ I)).
    constrained : bool
        Whether iterates are projected onto a set C ≠ R^d.
    quadratic_loss : bool
        The per-example loss is exactly ½‖θ − x‖² (then λ = β = 1).
    lsi_constant : float or None
        A c-LSI constant the caller asserts for Thm 2 (never inferred).
    diameter : float or None
        Diameter D of the (convex) set C, when finite (needs ``constrained=True``); None: not used.
    last_iterate_only : bool
        Only θ_K is released (every hidden-state bound needs it; composition does not).
    """

    n: int
    sensitivity: float
    step_size: float
    sigma: float
    iterations: int
    strong_convexity: float = 0.0
    smoothness: float = float("inf")
    initialization: str = "fixed"
    constrained: bool = False
    quadratic_loss: bool = False
    lsi_constant: float | None = None
    diameter: float | None = None
    last_iterate_only: bool = True

    def __post_init__(self) -> None:
        checks = [
            ("n", self.n >= 1 and float(self.n).is_integer(), "an integer >= 1"),
            ("sensitivity", np.isfinite(self.sensitivity) and self.sensitivity >= 0, "finite and >= 0"),
            ("step_size", np.isfinite(self.step_size) and self.step_size > 0, "finite and > 0"),
            ("sigma", np.isfinite(self.sigma) and self.sigma > 0, "finite and > 0"),
            ("iterations", self.iterations >= 1 and float(self.iterations).is_integer(), "an integer >= 1"),
            ("strong_convexity", np.isfinite(self.strong_convexity) and self.strong_convexity >= 0, "finite and >= 0"),
            ("smoothness", self.smoothness >= self.strong_convexity, ">= strong_convexity"),
            ("initialization", self.initialization in INITIALIZATIONS, f"one of {INITIALIZATIONS}"),
            ("lsi_constant", self.lsi_constant is None or self.lsi_constant > 0, "None or > 0"),
            ("diameter", self.diameter is None or (np.isfinite(self.diameter) and self.diameter > 0),
             "None or finite and > 0"),
            ("last_iterate_only", isinstance(self.last_iterate_only, bool), "a bool"),
        ]
        for name, ok, valid in checks:
            if not ok:
                raise ValueError(f"{name} must be {valid}; got {getattr(self, name)!r}.")
        if self.quadratic_loss and not (self.strong_convexity == 1.0 and self.smoothness == 1.0):
            raise ValueError(
                "quadratic_loss=True means the loss ½‖θ − x‖², whose strong_convexity and "
                "smoothness are both 1; got "
                f"strong_convexity={self.strong_convexity!r}, smoothness={self.smoothness!r}."
            )
        if self.diameter is not None and not self.constrained:
            raise ValueError(f"diameter={self.diameter!r} describes the set C of the projection: "
                             "it needs constrained=True.")


def _unmet_corollary1(e: NoisyGDEvent) -> list[str]:
    unmet = []
    if e.strong_convexity <= 0:
        unmet.append("strong_convexity > 0")
    if not e.step_size < 1.0 / e.smoothness:
        unmet.append(f"step_size < 1/smoothness (= {1.0 / e.smoothness:.6g})")
    if e.initialization != "stationary":
        unmet.append("initialization = 'stationary' (θ₀ ~ Π_C(N(0, 2σ²/λ I)))")
    return unmet


def _unmet_quadratic(e: NoisyGDEvent) -> list[str]:
    unmet = []
    if not e.quadratic_loss:
        unmet.append("the loss ½‖θ − x‖² (quadratic_loss)")
    if e.constrained:
        unmet.append("an unconstrained domain")
    if not 0.0 < e.step_size < 1.0:
        unmet.append("0 < step_size < 1")
    return unmet


def _unmet_gdp(e: NoisyGDEvent) -> list[str]:
    unmet = []
    if e.strong_convexity <= 0:
        unmet.append("strong_convexity > 0")
    if not e.step_size < 2.0 / e.smoothness:
        unmet.append(f"step_size < 2/smoothness (= {2.0 / e.smoothness:.6g})")
    return unmet


def _unmet_shifted(e: NoisyGDEvent) -> list[str]:
    unmet = [] if e.last_iterate_only else ["only the last iterate θ_K released"]
    c = gdp.gd_contraction(e.step_size, e.strong_convexity, e.smoothness)
    if not (e.step_size * e.smoothness <= 2.0 and c <= 1.0):
        unmet.append(f"step_size <= 2/smoothness (= {2.0 / e.smoothness if e.smoothness else np.inf:.6g}), "
                     "i.e. contraction c = max(|1 − ηλ|, |1 − ηβ|) <= 1")
    return unmet


def _shifted_mu(e: NoisyGDEvent) -> float:
    c = gdp.gd_contraction(e.step_size, e.strong_convexity, e.smoothness)
    return float(si.gd_closed_form_mu(e.step_size * e.sensitivity / e.n, np.sqrt(2.0 * e.step_size) * e.sigma, c,
                                      e.iterations, e.diameter))


def _gdp_mu(e: NoisyGDEvent) -> float:
    return float(
        gdp.noisy_gd_mu(
            e.n, e.sensitivity, e.step_size, e.sigma, e.iterations, e.strong_convexity, e.smoothness
        )
    )


_COMMON = (e_args := ("n", "sensitivity", "sigma", "step_size", "iterations"))


def _args(e: NoisyGDEvent) -> tuple:
    return tuple(getattr(e, a) for a in e_args)


@dataclass(frozen=True)
class Bound(best_of.Bound[NoisyGDEvent]):
    """A privacy bound (:class:`.best_of.Bound`) with its RDP curve and, for a GDP bound, its μ.

    Parameters
    ----------
    name, theorem, assumptions, unmet
        As in :class:`.best_of.Bound`.
    rdp : callable
        ``rdp(orders, event)``: the bound's RDP curve ε(α) of the run at the orders α > 1 (array in,
        array out).
    gdp_mu : callable or None
        ``gdp_mu(event)``: μ of the bound's μ-GDP guarantee (then ε at δ is read off the exact GDP
        curve); None for a bound that is only an RDP curve.
    """

    rdp: Callable[[ArrayLike, NoisyGDEvent], NDArray[np.float64]]
    gdp_mu: Callable[[NoisyGDEvent], float] | None = None


#: Release condition of a hidden-state bound: it certifies the last iterate and nothing else.
HIDDEN_STATE = "only the last iterate released; the intermediate iterates stay hidden"
#: Release condition of a composition bound: it certifies the whole trajectory, hence any function of it.
EVERY_ITERATE = "every iterate may be released, so any function of them (e.g. their mean) is covered"

_BASE = ("replace-one neighbours", "sum-gradient sensitivity S_g")
_HIDDEN = _BASE + (HIDDEN_STATE,)

#: Registry of the bounds the accountant knows, keyed by name.
BOUNDS: dict[str, Bound] = {
    b.name: b
    for b in [
        Bound(
            "composition",
            "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855), App. E: RDP composition",
            _BASE + (EVERY_ITERATE,),
            lambda e: [],
            lambda o, e: langevin.composition_rdp(o, *_args(e)),
        ),
        Bound(
            "theorem2",
            "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855), Thm 2",
            _HIDDEN + ("tracing diffusions satisfy c-LSI (asserted by the caller)",),
            lambda e: [] if e.lsi_constant is not None else ["an asserted lsi_constant"],
            # mypy counts the untyped *_args(e) as filling every parameter (hence the ignores)
            lambda o, e: langevin.theorem2_rdp(o, *_args(e), e.lsi_constant),  # type: ignore[call-arg]
        ),
        Bound(
            "corollary1",
            "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855), Cor. 1",
            _HIDDEN + ("λ-strongly convex, β-smooth loss", "η < 1/β", "θ₀ ~ Π_C(N(0, 2σ²/λ I))"),
            _unmet_corollary1,
            lambda o, e: langevin.corollary1_rdp(o, *_args(e), e.strong_convexity),  # type: ignore[call-arg]
        ),
        Bound(
            "corollary2",
            "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855), Cor. 2",
            _HIDDEN + ("loss ½‖θ − x‖² on R^d", "0 < η < 1", "data-independent start"),
            _unmet_quadratic,
            lambda o, e: langevin.corollary2_rdp(o, *_args(e)),
        ),
        Bound(
            "exact-quadratic",
            "Chourasia, Ye, Shokri 2021 (arXiv:2102.05855), Thm 3 (proof): exact divergence",
            _HIDDEN + ("loss ½‖θ − x‖² on R^d", "0 < η < 1", "data-independent start"),
            _unmet_quadratic,
            lambda o, e: langevin.exact_quadratic_rdp(o, *_args(e)),
        ),
        Bound(
            "gdp",
            "Bok, Su, Altschuler 2024 (arXiv:2403.00278), strongly convex NoisyGD: μ-GDP",
            _HIDDEN + ("λ-strongly convex, β-smooth loss", "0 < η < 2/β", "data-independent start"),
            _unmet_gdp,
            lambda o, e: gdp.gdp_rdp(o, _gdp_mu(e)),
            _gdp_mu,
        ),
        Bound(
            "shifted-interpolation",
            "Bok, Su, Altschuler 2024 (arXiv:2403.00278), Lemma C.3 (shifted interpolation), exact NoisyGD "
            "optimum over windows, with the diameter of C when declared: μ-GDP",
            _HIDDEN + ("convex β-smooth loss (λ ≥ 0)", "0 < η ≤ 2/β", "data-independent start",
                       "Euclidean projection onto a convex set of diameter D (when D is declared)"),
            _unmet_shifted,
            lambda o, e: gdp.gdp_rdp(o, _shifted_mu(e)),
            _shifted_mu,
        ),
    ]
}
