"""Formulas behind the noisy mini-batch SGD accountant (:mod:`dpconvex.accounting.noisy_sgd`).

Pure functions of hyperparameters, in the convention of :class:`~.noisy_sgd.NoisySGDEvent`:
step k uses batch B_k and

    θ_{k+1} = Π_C(θ_k − η·[(1/b)(Σ_{i∈B_k} ∇ℓ(θ_k; z_i) + σ·ξ_k) + ∇r(θ_k)]),   ξ_k ~ N(0, I),

so a step that touches the differing record shifts the update by at most η·S_g/b and adds noise of
standard deviation η·σ/b: every per-step signal-to-noise ratio is ``S_g/σ`` (σ/(S_g/2) is the usual
DP-SGD noise multiplier).  ``c = max{|1 − ηm|, |1 − ηM|}`` is the Lipschitz constant of the gradient
step on an m-strongly convex, M-smooth objective (Bok, Su, Altschuler 2024, arXiv:2403.00278, §4).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from . import gdp
from .poisson_pld import bounded_discretization
from .poisson_pld import poisson_pld as _poisson_pld

__all__ = [
    "contraction",
    "composition_mu",
    "bok_cgd_factor",
    "bok_cgd_mu",
    "exact_quadratic_cyclic_factor",
    "exact_quadratic_cyclic_mu",
    "poisson_pld_epsilon",
    "poisson_pld_delta",
    "poisson_route",
    "PLD_ROUTE",
    "FULL_BATCH_ROUTE",
    "PLD_DISCRETIZATION",
    "PLD_RELATIVE_DISCRETIZATION",
    "poisson_clt_epsilon",
    "poisson_clt_slope",
    "poisson_clt_noise_multiplier",
    "EXCLUDED",
]

#: Coarsest discretisation of dp-accounting's privacy-loss distribution (used when the estimate of
#: ε below is large or unknown).  Its estimates are pessimistic (upper bounds on δ(ε)) at any
#: interval; the interval only trades tightness for time, never validity.
PLD_DISCRETIZATION = 1e-2
#: The interval as a fraction of the central-limit estimate of ε: slack about 0.1 % of ε at small ε.
PLD_RELATIVE_DISCRETIZATION = 1e-3
#: Interval of δ(ε) evaluations (no ε-relative choice: they are asked at any ε, e.g. on a whole curve).
PLD_DELTA_DISCRETIZATION = 1e-4
#: Finest interval ever used (ε below ~1e-3 would otherwise cost seconds per evaluation).
PLD_FINEST_DISCRETIZATION = 1e-6


def contraction(step_size: float, strong_convexity: float, smoothness: float) -> float:
    """``c = max{|1 − ηm|, |1 − ηM|}`` (Bok et al. 2024, arXiv:2403.00278, §4; Asoodeh et al. Lemma 4).

    Parameters
    ----------
    step_size, strong_convexity, smoothness : float

    Returns
    -------
    float
    """
    return max(abs(1.0 - step_size * strong_convexity), abs(1.0 - step_size * smoothness))


def composition_mu(sensitivity: float, sigma, epochs: int):
    """μ-GDP of E adaptively composed Gaussian steps, each of signal-to-noise ratio S_g/σ.

    With disjoint batches (cyclic or shuffled) each record enters exactly one step per epoch; given
    the released past, every other step has the same law under both neighbours.  Composition of
    E Gaussian mechanisms is exactly √E·(S_g/σ)-GDP (Dong, Roth, Su 2019, arXiv:1905.02383,
    Cor. 3.3).  Valid for any loss, any projection, any batch order, public or secret: it pays as
    if every iterate were published.  Vectorised over ``sigma``.

    Parameters
    ----------
    sensitivity : float
    sigma : array_like
        Noise sd of every step.
    epochs : int

    Returns
    -------
    ndarray
    """
    return math.sqrt(int(epochs)) * sensitivity / np.asarray(sigma, dtype=float)


def bok_cgd_factor(c: float, batches: int, epochs: int) -> float:
    """The factor of Bok, Su, Altschuler 2024 (arXiv:2403.00278) Thm 4.5 (NoisyCGD, strongly convex).

    ``sqrt(1 + c^{2l−2}(1 − c²)/(1 − c^l)² · (1 − c^{l(E−1)})/(1 + c^{l(E−1)}))`` with l batches
    cycled in a fixed order for E epochs; μ = (per-step shift/noise sd)·factor.  Transcribed from
    the authors' code (github.com/jinhobok/shifted_interpolation_dp, ``plot_table_ncgd_fdp.py`` and
    ``table_privacy_lr.py``, commit 31fb075), which Romijnders & Koskela (arXiv:2407.04884, their
    ``dp_accounting/plot_epsilons.py``) also use as "Theorem 4.5 of Bok et al." under replace-one
    neighbours with gradient sensitivity 2L.  Needs 0 ≤ c < 1.
    """
    if not 0.0 <= c < 1.0:
        raise ValueError(f"the NoisyCGD bound needs a contraction c < 1; got c = {c!r}.")
    l, e = int(batches), int(epochs)
    x = c**l  # contraction over one epoch
    if x == 0.0:  # c = 0: every step forgets the past; only the last use counts
        return 1.0
    tail = x ** (e - 1)
    return math.sqrt(1.0 + c ** (2 * l - 2) * (1.0 - c * c) / (1.0 - x) ** 2 * (1.0 - tail) / (1.0 + tail))


def bok_cgd_mu(sensitivity: float, sigma, c: float, batches: int, epochs: int):
    """μ-GDP of NoisyCGD: ``(S_g/σ)·bok_cgd_factor(c, l, E)`` (Bok et al. 2024, Thm 4.5). Vectorised over σ.

    Parameters
    ----------
    sensitivity : float
    sigma : array_like
    c : float
    batches, epochs : int

    Returns
    -------
    ndarray
    """
    return sensitivity / np.asarray(sigma, dtype=float) * bok_cgd_factor(c, batches, epochs)


def _geometric(ratio: float, terms: int) -> float:
    """Σ_{k<terms} ratio^k, exact also at ratio = ±1 and ratio = 0."""
    if ratio == 1.0:
        return float(terms)
    return (1.0 - ratio**terms) / (1.0 - ratio)


def exact_quadratic_cyclic_factor(contraction_signed: float, batches: int, epochs: int) -> float:
    """Exact worst-position ratio for the loss ½‖θ − x‖² (plus a ridge term) with cyclic batches.

    Derivation: with equal batches of size b, F_B(θ) = (1/b)Σ_{i∈B} ½‖θ − x_i‖² + (λ/2)‖θ‖² has
    curvature m = M = 1 + λ, and the update is linear, θ_{k+1} = a θ_k + (η/b)Σ_{B_k} x_i + noise,
    with a = 1 − ηm (signed).
    Both neighbours' outputs are Gaussian with covariance (ησ/b)² Σ_{i<T} a^{2i} I (T = lE) and
    means differing by (η/b)(x_z − x'_z)·Σ_{k<E} a^{(l−j)+lk} for the record in batch j; the worst
    batch is j = l when |a| ≤ 1 (required: c < 1).  Hence μ = (S_g/σ)·|Σ_{k<E} a^{lk}| /
    sqrt(Σ_{i<T} a^{2i}) exactly (the Gaussian-shift computation of Chourasia et al. 2021,
    arXiv:2102.05855, Thm 3 proof, per batch).  The worst pair x_z − x'_z of norm S_g attains it.

    Parameters
    ----------
    contraction_signed : float
    batches, epochs : int

    Returns
    -------
    float
    """
    a, l, e = float(contraction_signed), int(batches), int(epochs)
    num = abs(_geometric(a**l, e))
    den = math.sqrt(_geometric(a * a, l * e))
    return num / den


def exact_quadratic_cyclic_mu(sensitivity: float, sigma, contraction_signed: float, batches: int, epochs: int):
    """μ of the exact quadratic-loss law (see :func:`exact_quadratic_cyclic_factor`). Vectorised over σ."""
    return sensitivity / np.asarray(sigma, dtype=float) * exact_quadratic_cyclic_factor(
        contraction_signed, batches, epochs)


#: Tail mass dp-accounting's self-composition may truncate (pessimistically, into the mass at
#: infinity), its default; a δ(ε) query at δ ≲ 1e3 × this would read ε = ∞, so an ε query at δ uses
#: min(this, δ/1000) instead (:func:`_tail_truncation`).
PLD_TAIL_TRUNCATION = 1e-15


def _tail_truncation(delta: float | None) -> float:
    return PLD_TAIL_TRUNCATION if delta is None else min(PLD_TAIL_TRUNCATION, 1e-3 * delta)


def _discretization_for(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """Interval for one PLD evaluation: :data:`PLD_RELATIVE_DISCRETIZATION` × the central-limit ε.

    The estimate is ε(δ) of μ = q√(T(e^{4/z²} − 1)) (Bu et al. 2020, Thm 5, shift 2; the inverse of
    :func:`poisson_clt_noise_multiplier`), clipped to [:data:`PLD_FINEST_DISCRETIZATION`,
    :data:`PLD_DISCRETIZATION`].  A deterministic function of the event, so a calibration and the
    certificate of its result evaluate the same discretised PLD; one evaluation instead of a coarse
    pass followed by a refined one.  Where the central limit overstates ε (large ε, small q) the
    interval is the coarse one: slack ≲ 2 % of ε there.
    """
    estimate = poisson_clt_epsilon(rate, noise_multiplier, steps, delta)
    if not (math.isfinite(estimate) and estimate > 0):
        return PLD_DISCRETIZATION
    return float(np.clip(estimate * PLD_RELATIVE_DISCRETIZATION, PLD_FINEST_DISCRETIZATION, PLD_DISCRETIZATION))


def poisson_pld_epsilon(rate: float, noise_multiplier: float, steps: int, delta: float,
                        discretization: float | None = None) -> float:
    """ε(δ) of ``steps`` Poisson-subsampled Gaussian steps, replace-one, from dp-accounting's PLD.

    ``noise_multiplier`` is σ/(S_g/2): noise sd over the per-record contribution bound.  The PLD
    accountant models a replace-one step as the pair (1 − q)N(0, z²) + qN(∓1, z²) (the record's
    contribution replaced by its opposite), composes with pessimistic discretisation and tail
    truncation (truncated mass counts as infinite loss: at most min(1e-15, δ/1000) of the δ), and
    returns an upper bound on ε at every discretisation interval: ``discretization`` as given, else
    ``_discretization_for`` the event.  See the derivation note in
    :mod:`dpconvex.accounting.noisy_sgd`.

    The result is the smaller of that and the full-batch GDP bound ε(δ; 2√T/z) (``_full_batch_mu``),
    also valid at q < 1: subsampling never weakens a step.  Derivation: the step's pair is
    P = (1 − q)N(0, z²) + qN(−1, z²) against Q = (1 − q)N(0, z²) + qN(1, z²), and every hockey-stick
    divergence H_α (α > 0) is jointly convex, so H_α(P‖Q) ≤ (1 − q)H_α(N(0, z²)‖N(0, z²)) +
    qH_α(N(−1, z²)‖N(1, z²)) ≤ H_α(N(−1, z²)‖N(1, z²)) (Balle, Barthe, Gaboardi 2018, arXiv:1807.01647,
    §3); as these divergences at every α fix the trade-off function, each step is (2/z)-GDP and T
    adaptive steps are (2√T/z)-GDP (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 3.3).  The GDP bound
    takes over at huge ε (σ so small that the PLD's grid is beyond its caps: ε = ∞ from the PLD),
    so every ε has a finite certificate reached in bounded time.
    """
    args = (float(rate), float(noise_multiplier), int(steps))
    full_batch = gdp.gdp_epsilon(float(delta), _full_batch_mu(*args))
    if args[0] >= 1.0:
        return full_batch
    interval = _discretization_for(*args, float(delta)) if discretization is None else float(discretization)
    return min(_pld_epsilon(*args, interval, float(delta)), full_batch)


def _full_batch_mu(rate: float, noise_multiplier: float, steps: int) -> float:
    """μ of T full-batch steps, each the Gaussian pair N(∓1, z²): exactly (2√T/z)-GDP (Dong, Roth, Su 2019,
    arXiv:1905.02383, Cor. 3.3), the composition itself at q = 1 and an upper bound at q < 1."""
    return 2.0 * math.sqrt(steps) / noise_multiplier


#: How :func:`poisson_pld_epsilon` obtained its ε (:func:`poisson_route`), for the certificate's ``conversion``.
PLD_ROUTE = "dp-accounting PLD (pessimistic)"
FULL_BATCH_ROUTE = "exact-gdp of the full-batch steps"


def poisson_route(rate: float, noise_multiplier: float, steps: int, delta: float) -> str:
    """Which of the two bounds of :func:`poisson_pld_epsilon` gave its value: ``PLD_ROUTE`` or
    ``FULL_BATCH_ROUTE`` (q = 1, or a PLD beyond its caps or above the GDP bound).

    Parameters
    ----------
    rate : float
    noise_multiplier : float
    steps : int
    delta : float

    Returns
    -------
    str
    """
    args = (float(rate), float(noise_multiplier), int(steps))
    if args[0] >= 1.0:
        return FULL_BATCH_ROUTE
    full_batch = gdp.gdp_epsilon(float(delta), _full_batch_mu(*args))
    pld = _pld_epsilon(*args, _discretization_for(*args, float(delta)), float(delta))
    return PLD_ROUTE if pld < full_batch else FULL_BATCH_ROUTE


@lru_cache(maxsize=256)
def _pld_epsilon(rate: float, noise_multiplier: float, steps: int, discretization: float, delta: float) -> float:
    """Cached ε(δ): a trainer's certificate and its composition baseline ask for the same value.

    ∞ (certifies nothing: more noise is needed) where the PLD cannot be built within its size caps
    (:func:`.poisson_pld.bounded_discretization`), so planning takes bounded time and memory at any σ.
    """
    truncation = _tail_truncation(delta)
    interval = bounded_discretization(rate, noise_multiplier, steps, discretization, truncation)
    if math.isinf(interval):
        return math.inf
    return float(_poisson_pld(rate, noise_multiplier, steps, interval, truncation).get_epsilon_for_delta(delta))


def poisson_pld_delta(rate: float, noise_multiplier: float, steps: int, epsilon: float) -> float:
    """δ(ε) of the same composition (pessimistic, i.e. an upper bound), discretisation ``PLD_DELTA_DISCRETIZATION``;
    the smaller of that and the full-batch GDP δ(ε; 2√T/z), as in :func:`poisson_pld_epsilon`.

    Parameters
    ----------
    rate : float
    noise_multiplier : float
    steps : int
    epsilon : float

    Returns
    -------
    float
    """
    args = (float(rate), float(noise_multiplier), int(steps))
    full_batch = float(gdp.gdp_delta(float(epsilon), _full_batch_mu(*args)))
    if args[0] >= 1.0:
        return full_batch
    truncation = _tail_truncation(None)
    interval = bounded_discretization(*args, PLD_DELTA_DISCRETIZATION, truncation)
    if math.isinf(interval):
        return full_batch
    return min(float(_poisson_pld(*args, interval, truncation).get_delta_for_epsilon(float(epsilon))), full_batch)


def poisson_clt_epsilon(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """ε(δ) of μ = q√(T(e^{4/z²} − 1)), the inverse of :func:`poisson_clt_noise_multiplier`.

    An approximation (Bu et al. 2020, Thm 5, shift 2), not a bound: ``inf`` where e^{4/z²}
    overflows, 0 at z = ∞.

    Parameters
    ----------
    rate : float
    noise_multiplier : float
    steps : int
    delta : float

    Returns
    -------
    float
    """
    exponent = 4.0 / (noise_multiplier * noise_multiplier)
    if exponent > 700.0:
        return math.inf
    mu = rate * math.sqrt(steps * math.expm1(exponent))
    return float(gdp.gdp_epsilon(delta, mu)) if mu > 0 else 0.0


def poisson_clt_slope(rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """d log ε / d log z of :func:`poisson_clt_epsilon` at z (one-sided difference, step 10⁻³); nan if undefined."""
    here = poisson_clt_epsilon(rate, noise_multiplier, steps, delta)
    there = poisson_clt_epsilon(rate, noise_multiplier * 1.001, steps, delta)
    if not (0 < there <= here < math.inf):
        return math.nan
    return math.log(there / here) / math.log(1.001)


def poisson_clt_noise_multiplier(rate: float, steps: int, mu: float) -> float:
    """Noise multiplier z = σ/(S_g/2) at which T Poisson steps are μ-GDP in the central-limit regime.

    Bu, Dong, Long, Su 2020 (arXiv:1911.11607), Thm 5: T steps of rate q with a Gaussian of
    sensitivity 1 and noise z tend to μ-GDP with μ = q√(T(e^{1/z²} − 1)).  Replace-one moves the
    differing record's contribution from g to −g (shift 2, not 1: the derivation note of
    :mod:`dpconvex.accounting.noisy_sgd`), so the shift-2 version is used:
    z = 2/√log(1 + μ²/(q²T)).  An approximation, not a bound: it starts the exact calibration and
    ranks ``method="auto"``'s candidates; no certificate uses it.

    Parameters
    ----------
    rate : float
    steps : int
    mu : float

    Returns
    -------
    float
    """
    return float(2.0 / math.sqrt(math.log1p(mu * mu / (rate * rate * steps))))


#: Bounds named in the issue that are NOT implemented, and why (requesting one raises ValueError).
EXCLUDED: dict[str, str] = {
    "bok-sgd": (
        "Bok, Su, Altschuler 2024 (arXiv:2403.00278) NoisySGD (stochastic batches): the theorem is a "
        "composition of subsampling operators C_{b/n}(G(·)) whose exact statement we could not read "
        "(only the abstract and the authors' code, which evaluates it through a central-limit "
        "approximation, not a bound); with Poisson batches the step's contraction also depends on the "
        "random batch size."
    ),
    "bok-constrained": (
        "Bok et al. 2024 closed forms for convex losses on a domain of diameter D, as a bound of their "
        "own: not a separate certificate here; 'shifted-interpolation' evaluates the lemma they come "
        "from (windows starting at distance D) for cyclic and shuffled batches and full-batch GD, and "
        "uses the NoisyCGD closed form only as an upper bound checked against that optimum."
    ),
    "ye-shokri": (
        "Ye & Shokri 2022 (arXiv:2203.05363), shuffle-and-partition on strongly convex smooth losses, is "
        "not a certificate here: its earlier-epochs term (the per-position bound at the mid-epoch position, "
        "summed over epochs) is not a worst case over positions and could not be justified, and it needs a "
        "fresh secret permutation every epoch (our shuffled runs keep one partition, and no certificate "
        "relies on secrecy).  It is available as a comparison number only: accounting.ye_shokri (the "
        "authors' code, dp_dynamics dp_utils.py at 84a5cf9), reported by 'dpconvex account noisy-sgd' "
        "for shuffled runs."
    ),
    "altschuler-talwar": (
        "Altschuler & Talwar 2022 (arXiv:2205.13710), convex losses on a bounded domain: the main "
        "theorem is stated up to unspecified constants (≲); the explicit constants of its proof could "
        "not be checked against the paper text."
    ),
}
