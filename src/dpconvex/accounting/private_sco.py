"""Accounting of noisy SGD with the fresh-sample rule (Arora, Marinov, Ullah, Algorithm 1).

References of the private SCO accountant
----------------------------------------
* Arora, Marinov, Ullah 2020, *Differentially private algorithms for stochastic convex
  optimisation with non-smooth losses* (``/work/shared/papers/arora-marinov-ullah-2020-private-sco-nonsmooth.txt``):
  Lemma 2, Theorem 2 (τ ≤ 2n w.p. 1 − 2e^{−n/16}), Theorem 5 (advanced composition), Theorem 6.
* Wang, Balle, Kasiviswanathan 2019, arXiv:1808.00087, Thm 27 — RDP of a Gaussian mechanism on a
  subsample drawn without replacement, replace-one neighbours (dp-accounting's
  ``SampledWithoutReplacementDpEvent`` with ``NeighboringRelation.REPLACE_ONE``).

Conventions of the private SCO accountant
-----------------------------------------
Step t samples an index uniformly from [n]; a fresh record gives w ← Π(w − η(∇f(w; z) + ξ)), a
seen one w ← Π(w − ηξ), with ξ ~ N(0, σ²I) (σ is a standard deviation).  f is L-Lipschitz, so
under replace-one neighbours the gradient of the differing record moves by at most S = 2L (the
``sensitivity`` below; the paper's Lemma 2 calibrates for L — we calibrate for 2L, see the papers
README).  The certificate is for the released output only, the average of the fresh-step iterates
(the trajectory stays hidden); the whole trajectory w_1..w_τ is covered by a weaker bound.  The run is
truncated at τ_max = 2n steps, so every guarantee below is for τ = τ_max.

Derivation note (Lemma 2 constant).  Lemma 2 states that the Gaussian step with
σ = S√(3 log(1/δ))/ε̃ is (ε̃, δ)-DP for ε̃ ≤ 1.256.  We use it in the inverted form
ε̃ = S√(3 log(1/δ_step))/σ, and the tests check it against the exact Gaussian δ(ε) (it holds with
room: the exact δ is at most 0.11·δ on ε̃ ∈ (0, 1.256]).  Sampling one of n records gives per step
(ε₀, δ₀) = ((e^ε̃ − 1)/n, δ_step/n); Theorem 5's advanced composition over τ steps gives
(2ε̃√(2τ log(1/δ'))/n + 4τε̃²/n², τδ_step/n + δ').  Given a total δ we split it between τδ_step/n
and δ' by a grid search (every split is valid; we report the best).

Derivation note (single use — the certified bound).  Fix the whole index sequence I = (y_1, y_2, …):
it is drawn independently of the data, and τ, the fresh/seen status of every step and the fresh
steps t_1 < … < t_F (F = ⌈n/2⌉, or fewer if τ_max is reached first) are functions of I.  The output
is (w_{t_1} + … + w_{t_F})/F, each iterate taken *before* its step's update, and the run stops right
after step t_F; so the gradient of the record fresh at t_k enters the output iff k < F (the last
fresh record's gradient moves only w_{t_F + 1}, which is never averaged).  Let D, D' differ in
record j.  Given I, the two runs use the same kernels at every step except the single step t_k at
which j is sampled fresh (if any): there, given the past, the noisy (sub)gradient has means at most
‖∇f(w; z_j) − ∇f(w; z'_j)‖ ≤ S = 2L apart (λw cancels) and covariance σ²I; the past has the same law
under D and D', and everything after the noisy gradient (∇Φ*, the projection, later steps,
averaging) is post-processing.  So E_γ(P_I‖Q_I) ≤ δ_G(ε; S/σ) if j is fresh at t_k with k < F, and
the output laws are equal otherwise.  E_γ is jointly convex, so over the data-independent mixture
on I

    δ(ε) ≤ P(j among the first F − 1 fresh records)·δ_G(ε; S/σ) ≤ ((⌈n/2⌉ − 1)/n)·δ_G(ε; S/σ),

since by exchangeability of the labels that probability is E[F − 1]/n ≤ (⌈n/2⌉ − 1)/n.  δ_G is the
exact Gaussian curve (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13).  This holds for any step
size, potential or λ.  For n = 2 (F = 1) the output is w_0 = 0 whatever the data: δ = 0 at every ε.

The same argument for the whole trajectory w_1..w_τ (released = "trajectory") must count the last
fresh record too: δ(ε) ≤ (⌈n/2⌉/n)·δ_G(ε; S/σ).  It is the baseline the trainer reports for
publishing every iterate, not the certificate.

Why the composition candidates are reported, not certified.  Lemma 2 + Thm 5 (and the tighter
dp-accounting composition of per-step subsampled Gaussians) treat each step as a subsampled
Gaussian given the released past.  But the set of seen records is hidden state: given the past
outputs its posterior differs between D and D', and the paper's proof of Thm 5 conditions on the
past indices while using the amplification from them.  Mechanisms that use each record once at a
hidden random time are known to be able to leak more than per-step Poisson-style accounting says
(Chua et al. 2024, arXiv:2403.17673, for shuffled batches).  Moreover with λ > 0 the base
mechanism's replace-one sensitivity (a fresh step vs a noise-only step) is L + λR, not 2L.  Until
a proof covers this mechanism, those numbers are reported for comparison only.

Derivation note (truncation).  τ depends only on the sampled indices, never on the data.
Stopping at τ_max = 2n therefore costs no privacy, and Theorem 6's extra 2e^{−n/16} (the
probability that τ > 2n) is not needed for the truncated algorithm.  :func:`theorem6_guarantee`
keeps the paper's statement, with that term, for comparison.

The composition numbers (Lemma 2, Theorems 5 and 6, dp-accounting) are in :mod:`.sco_composition`,
re-exported here so that every name keeps its path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ._checks import check_delta, check_epsilon
from .best_of import PrivacyAccount
from .calibration import smallest_noise
from .gdp import gdp_delta, gdp_epsilon, gdp_mu
from .rounding import round_up
from .sco_composition import (
    LEMMA2_MAX_STEP_EPSILON,
    SCO_HIGH_ORDERS,
    SCO_ORDERS,
    dp_accounting_epsilon,
    lemma2_step_epsilon,
    paper_epsilon,
    theorem5_epsilon,
    theorem6_guarantee,
    theorem6_sigma,
)

__all__ = [
    "SCOEvent",
    "LEMMA2_MAX_STEP_EPSILON",
    "SCO_ORDERS",
    "SCO_HIGH_ORDERS",
    "lemma2_step_epsilon",
    "theorem5_epsilon",
    "theorem6_sigma",
    "theorem6_guarantee",
    "paper_epsilon",
    "dp_accounting_epsilon",
    "RELEASES",
    "exposure_probability",
    "single_use_delta",
    "single_use_epsilon",
    "uncertified_epsilons",
    "account_sco",
    "calibrate_sco_sigma",
]

ASSUMPTIONS = (
    "replace-one neighbours",
    "f(·; z) convex and L-Lipschitz on W (two records' subgradients differ by at most 2L)",
    "indices sampled uniformly and independently of the data; a record's gradient is used only at its first draw",
    "stop right after the ceil(n/2)-th distinct record (or at tau_max = 2n steps)",
    "only the average of the fresh-step iterates (each taken before its step's update) is released; "
    "the trajectory stays hidden",
)

#: What a single-use bound covers (module note): the released average, or every iterate.
RELEASES = ("output", "trajectory")


@dataclass(frozen=True)
class SCOEvent:
    """One run of Algorithm 1 of Arora, Marinov, Ullah 2020 (arXiv:2002.09609): noisy SGD, fresh-sample rule.

    Conventions (module docstring).  Step t draws an index uniformly from the n records; a record
    drawn for the first time gives w ← Π(w − η(∇f(w; z) + ξ)), a record seen before w ← Π(w − ηξ),
    with ξ ~ N(0, σ² I): σ is the standard deviation of the noise added to one record's own
    (sub)gradient (a sum of one term, not a mean).  Neighbouring relation: replace-one (n fixed);
    ``sensitivity`` S = 2L bounds the change of that gradient when the record is replaced.  The run
    stops right after the ⌈n/2⌉-th distinct record, or at ``steps``; only the average of the
    fresh-step iterates is released.

    Theorem.  The certified bound is the single-use bound derived in the module note (not a paper
    theorem): δ(ε) ≤ ((⌈n/2⌉ − 1)/n)·δ_G(ε; S/σ), with δ_G the exact Gaussian curve (Dong, Roth, Su
    2019, arXiv:1905.02383, Cor. 2.13) and joint convexity of E_γ.  It uses n, S and σ; ``steps``
    (τ_max, 2n in the trainer) enters only the uncertified composition numbers (Arora et al. Lemma 2
    and Thm 5; Wang, Balle, Kasiviswanathan 2019, arXiv:1808.00087, Thm 27).

    Parameters
    ----------
    n : int
        Number of records, ≥ 2.
    sensitivity : float
        S = 2L > 0, finite: the replace-one sensitivity of one record's gradient.
    sigma : float
        σ > 0, finite: the standard deviation of the noise added at every step.
    steps : int
        τ_max ≥ 1, the most steps the run takes.
    """

    n: int
    sensitivity: float
    sigma: float
    steps: int

    def __post_init__(self) -> None:
        if not (float(self.n).is_integer() and self.n >= 2):
            raise ValueError(f"n must be an integer >= 2; got {self.n!r}.")
        if not (math.isfinite(self.sensitivity) and self.sensitivity > 0):
            raise ValueError(f"sensitivity must be finite and > 0; got {self.sensitivity!r}.")
        if not (math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"sigma must be finite and > 0; got {self.sigma!r}.")
        if not (float(self.steps).is_integer() and self.steps >= 1):
            raise ValueError(f"steps must be an integer >= 1; got {self.steps!r}.")



def exposure_probability(n: int, released: str = "output") -> float:
    """Bound on the probability that a given record's gradient reaches the release (module note).

    Parameters
    ----------
    n : int
        Number of records, ≥ 2.
    released : {"output", "trajectory"}
        ``"output"``: (⌈n/2⌉ − 1)/n, the record is among the first F − 1 fresh ones (the last fresh
        record's gradient never reaches the average; 0 for n = 2).  ``"trajectory"``: ⌈n/2⌉/n, the
        record is used at all.

    Returns
    -------
    float
    """
    if not (float(n).is_integer() and n >= 2):
        raise ValueError(f"n must be an integer >= 2; got {n!r}.")
    if released not in RELEASES:
        raise ValueError(f"released must be one of {RELEASES}; got {released!r}.")
    used = math.ceil(n / 2) if released == "trajectory" else math.ceil(n / 2) - 1
    return used / n


def single_use_delta(event: SCOEvent, epsilon: float, released: str = "output") -> float:
    """δ(ε) ≤ p·δ_G(ε; S/σ), p = :func:`exposure_probability` ((⌈n/2⌉ − 1)/n for the output; module note).

    Parameters
    ----------
    event : SCOEvent
    epsilon : float
    released : {"output", "trajectory"}, optional

    Returns
    -------
    float
    """
    epsilon = check_epsilon(epsilon, zero=True)
    return exposure_probability(event.n, released) * float(gdp_delta(epsilon, event.sensitivity / event.sigma))


def single_use_epsilon(event: SCOEvent, delta: float, released: str = "output") -> float:
    """Smallest ε with :func:`single_use_delta` ≤ ``delta`` (0 when δ ≥ the exposure probability p:
    the record's absence from the release alone suffices; always 0 for the output at n = 2).

    Parameters
    ----------
    event : SCOEvent
    delta : float
    released : {"output", "trajectory"}, optional

    Returns
    -------
    float
    """
    check_delta(delta)
    exposure = exposure_probability(event.n, released)
    if delta >= exposure:
        return 0.0
    return float(gdp_epsilon(delta / exposure, event.sensitivity / event.sigma))


def uncertified_epsilons(event: SCOEvent, delta: float) -> dict[str, float]:
    """The composition numbers of the paper (Lemma 2 + Thm 5) and of dp-accounting, for comparison only.

    Not certificates: see the module note ("Why the composition candidates are reported, not
    certified").

    Parameters
    ----------
    event : SCOEvent
    delta : float

    Returns
    -------
    dict of str to float
        ``{"paper": ε, "dp-accounting": ε}``.
    """
    return {"paper": paper_epsilon(event, delta), "dp-accounting": dp_accounting_epsilon(event, delta)}


SINGLE_USE_THEOREM = ("single use: each record enters at most one Gaussian step of Arora, Marinov, Ullah Alg. 1 "
                      "(lines 4-9), and reaches the released average of the fresh-step iterates only if it is among "
                      "the first ceil(n/2) - 1 fresh records (probability <= (ceil(n/2) - 1)/n); exact Gaussian delta "
                      "(Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 2.13) and joint convexity of E_gamma")


def account_sco(event: SCOEvent, delta: float) -> PrivacyAccount:
    """The certified (ε, δ) of a run: the single-use bound (module note), rounded up by
    :data:`.rounding.ROUNDING_MARGIN`; composition numbers are not used.

    Parameters
    ----------
    event : SCOEvent
    delta : float

    Returns
    -------
    PrivacyAccount
    """
    epsilon = round_up(single_use_epsilon(event, delta))
    return PrivacyAccount(
        epsilon=epsilon, delta=float(delta), bound="single-use", theorem=SINGLE_USE_THEOREM,
        assumptions=ASSUMPTIONS, order=None, conversion="exact Gaussian (GDP) curve",
        candidates={"single-use": epsilon},
    )


def calibrate_sco_sigma(n: int, sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ (within a factor 1 + 10⁻¹²) whose single-use certificate meets (ε, δ).

    The certificate is μ-GDP-type with μ = S/σ (module note), so the answer is σ = S/μ with μ the
    largest GDP parameter meeting (ε, δ·n/(⌈n/2⌉ − 1)) (Dong, Roth, Su 2019, Cor. 2.13).  That
    closed form starts :func:`.calibration.smallest_noise` (the library's one calibration,
    ``tolerance="noise"``), which absorbs the rounding in δ·n/(⌈n/2⌉ − 1) and S/σ: the returned σ is
    an evaluated point at which :func:`account_sco` states at most ε (never overshoots), and an
    evaluated σ' ≥ σ/(1 + 10⁻¹²) states more.  (The computed ε is itself a search to about 10⁻¹²,
    non-increasing in σ only up to that rounding, so "σ/(1 + 10⁻¹²) states more" holds only to it.)
    Usually 2 to 6 accountant calls.

    Parameters
    ----------
    n : int
    sensitivity : float
        S = 2L > 0.
    epsilon, delta : float

    Returns
    -------
    float
        σ.

    Raises
    ------
    ValueError
        For n = 2 (the output is w_0 = 0 whatever the data, so every σ gives (0, 0): pass σ), and
        for δ ≥ (⌈n/2⌉ − 1)/n (every σ meets it).
    """
    return _calibrate(SCOEvent(n, sensitivity, 1.0, 2 * n), epsilon, delta)


def _calibrate(event: SCOEvent, epsilon: float, delta: float) -> float:
    """The σ of :func:`calibrate_sco_sigma` for the run ``event`` describes (its σ ignored)."""
    delta, epsilon = check_delta(delta), check_epsilon(epsilon)
    exposure = exposure_probability(event.n)
    if exposure == 0.0:
        raise ValueError("with n = 2 records the released output is w_0 = 0 whatever the data (the only gradient "
                         "taken is the last fresh record's), so every sigma gives epsilon = delta = 0 and there is "
                         "nothing to calibrate: pass sigma instead of epsilon.")
    if delta >= exposure:
        raise ValueError(f"delta must be below (ceil(n/2) - 1)/n = {exposure:.4g} for a meaningful calibration; "
                         f"got {delta!r}.")
    start = float(event.sensitivity / gdp_mu(epsilon, delta / exposure))
    return smallest_noise(lambda sigma: account_sco(replace(event, sigma=sigma), delta).epsilon, epsilon, start,
                          rtol=1e-12, tolerance="noise")
