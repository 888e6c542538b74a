"""The noisy SGD configurations ``method="auto"`` weighs, each scored by the utility bound of :mod:`.auto`.

A candidate is a number of batches per epoch l from :data:`BATCH_COUNTS` (batch size b = ⌈n/l⌉, T = ⌈n/b⌉·
:data:`MAX_PASSES` steps), with the bound's minimising step η kept in [1/M, :data:`MAX_STEP_FACTOR`/M] and its score

    score = B²/(2ηT) + η·(1 − q)·G²/b + η·d·σ²/b² + λB²/2,

B = :data:`REFERENCE_NORM`, q = b/n, σ = G·z from the central-limit noise multiplier z (the derivation note of
:mod:`dpconvex.mechanisms.auto`).  Only public quantities enter.
"""

from __future__ import annotations

import dataclasses
import math

from dpconvex.accounting.noisy_sgd_bounds import poisson_clt_noise_multiplier

__all__ = ["AutoCandidate", "BATCH_COUNTS", "MAX_PASSES", "MAX_STEP_FACTOR", "REFERENCE_NORM", "score_candidates",
           "signal_to_noise"]

#: Candidate numbers of batches per epoch (l = 1: full batches, every record in every step), in
#: steps of about √2 so that the number of steps T = l·E can land near the bound's optimum.
BATCH_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
#: Largest step, as a multiple of 1/M (the gradient step is non-expansive for η ≤ 2/M).
MAX_STEP_FACTOR = 1.95
#: Work budget: passes over the data (the speed target: no more than a non-private L-BFGS fit).  At
#: a given T, 3 passes reached the accuracy of 10 on UCI Adult for ε ≤ 0.5 (docs/BENCHMARKS.md).
MAX_PASSES = 3
#: Norm B of the comparator in the bound (a public prior on the size of a good model for rows of norm ≤ 1: margins of
#: a few units need ‖w‖ of a few tens; the non-private λ = 1e-4 solution on UCI Adult has ‖w‖ ≈ 17).
REFERENCE_NORM = 20.0


@dataclasses.dataclass(frozen=True)
class AutoCandidate:
    """One configuration and the terms of its score (module docstring); ``score`` is their sum.

    Attributes
    ----------
    batch_size : int
        b, the nominal batch size (Poisson rate q = b/n).
    steps : int
        T, the number of steps.
    step_size : float
        η, the bound's minimiser kept in [1/M, :data:`~dpconvex.mechanisms.auto_candidates.MAX_STEP_FACTOR`/M].
    optimisation, sampling, privacy_noise, regularisation : float
        The score's terms B²/(2ηT), η·(1 − q)·G²/b, η·d·σ²/b² and λB²/2.
    """

    batch_size: int
    steps: int
    step_size: float
    optimisation: float
    sampling: float
    privacy_noise: float
    regularisation: float

    @property
    def score(self) -> float:
        """The utility bound: optimisation + sampling + privacy noise + regularisation."""
        return self.optimisation + self.sampling + self.privacy_noise + self.regularisation

    def describe(self) -> str:
        """The configuration and its score term by term, on one line (for the certificate's details)."""
        return (f"b={self.batch_size}, T={self.steps}, eta={self.step_size:.3g}: {self.score:.4g} = "
                f"{self.optimisation:.3g} + {self.sampling:.3g} + {self.privacy_noise:.3g} + {self.regularisation:.3g}")


def score_candidates(n: int, dimension: int, mu: float, smoothness: float, gradient_bound: float,
                     l2: float) -> list[AutoCandidate]:
    """Every distinct batch size of :data:`BATCH_COUNTS` for n records, scored by the utility bound.

    Parameters
    ----------
    n, dimension : int
        The number of records and the parameter vector's length d.
    mu : float
        The GDP parameter of the target (ε, δ) (:func:`dpconvex.accounting.gdp.gdp_mu`); each candidate's σ is the
        central-limit estimate of the noise meeting it (an approximation that only ranks the candidates).
    smoothness : float
        M, the declared smoothness of the regularised per-example loss (bounds the step).
    gradient_bound : float
        G, the per-example gradient bound (the Lipschitz constant L, or the clip norm C): the sensitivity of the
        gradient sum is 2G and σ = G·z the noise on it.
    l2 : float
        λ, for the bias term λB²/2.

    Returns
    -------
    list of AutoCandidate
        One per distinct batch size, in the order of :data:`BATCH_COUNTS`.
    """
    seen, out = set(), []
    for count in BATCH_COUNTS:
        batch = math.ceil(n / min(count, n))
        if batch in seen:
            continue
        seen.add(batch)
        steps = math.ceil(n / batch) * MAX_PASSES
        rate = batch / n
        sigma = gradient_bound * poisson_clt_noise_multiplier(rate, steps, mu)  # σ = z·S_g/2, S_g = 2G
        sampling, noise = (1.0 - rate) * gradient_bound**2 / batch, dimension * (sigma / batch) ** 2
        best = REFERENCE_NORM / math.sqrt(2.0 * steps * (sampling + noise))
        step = min(max(best, 1.0 / smoothness), MAX_STEP_FACTOR / smoothness)  # best = inf (no variance): the cap
        out.append(AutoCandidate(
            batch_size=batch, steps=steps, step_size=step,
            optimisation=REFERENCE_NORM**2 / (2.0 * step * steps),
            sampling=step * sampling,
            privacy_noise=step * noise,
            regularisation=0.5 * l2 * REFERENCE_NORM**2,
        ))
    return out


def signal_to_noise(candidate: AutoCandidate, gradient_bound: float) -> float:
    """T·G²·b²/(d·σ²) of a candidate: the do-no-harm ratio (:mod:`dpconvex.mechanisms.do_no_harm`).

    Parameters
    ----------
    candidate : AutoCandidate
        A scored configuration (its privacy-noise term is η·d·σ²/b²).
    gradient_bound : float
        G, as in :func:`score_candidates`.

    Returns
    -------
    float
        The ratio; ``inf`` when the candidate has no privacy noise.
    """
    if candidate.privacy_noise == 0.0:
        return math.inf
    return candidate.steps * gradient_bound**2 * candidate.step_size / candidate.privacy_noise
