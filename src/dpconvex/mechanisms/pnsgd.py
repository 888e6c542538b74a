"""Projected noisy SGD, one record per step (Asoodeh, Diaz, Calmon 2020, eq. 12), E_γ certificate.

Update (the convention of every number in the certificate)::

    x_k = Π_K(x_{k−1} − η (∇ℓ(x_{k−1}; d_k) + λ x_{k−1} + Z_k)),   k = 1..n,

record d_k = row k of ``X`` used at step k only (one pass, in the given order), x_0 = 0,
Z_k ~ N(0, σ² I) (``noise="gaussian"``) or Lap(0, b) (``noise="laplace"``, d = 1 only), so the noise
actually added to the parameters is η·Z_k.  Only x_n is released — or, with ``random_stop=True``,
x_T for a secret T ~ Unif{1..n} that is never reported.  The run always takes all n steps and, with
random stopping, keeps a copy of x_T (a masked copy at every step), so the work done — the number of
gradient evaluations and noise draws — does not reveal T.

Privacy (arXiv:2001.06546): record t gets δ_t(ε) = θ₁·θ_c^{n−t} (Thm 4 / Thm 3) or, with random
stopping, (θ₁/n)·Σ_{j=0}^{n−t} θ_c^j (Thm 5).  Translation to our losses: the paper's ℓ is our
ℓ + (λ/2)‖·‖²; the regulariser cancels in ∇ℓ(x; d) − ∇ℓ(x; d'), so the paper's 2L is our gradient
sensitivity S_g (= 2L for the declared L), and ρ uses the regularised smoothness β and strong
convexity λ.  The worst record without random stopping is t = n, whose bound is one Gaussian
(Laplace) mechanism: for it, hiding x_1..x_{n−1} gains nothing, so ``composition_epsilon`` (every
iterate published) equals ε.  Amplification by iteration protects the earlier records, and
random stopping protects all of them; the certificate's ``record_profile`` shows δ_t for each row.

When to use: this is a faithful reproduction of Asoodeh, Diaz, Calmon 2020's per-record E_γ
contraction certificate for one pass of projected noisy SGD — use it to study per-record privacy
profiles (how δ_t shrinks for earlier records, random stopping).  Do not use it for accuracy on
real tabular data: on UCI Adult (logistic, defaults, docs/BENCHMARKS.md) it scores 44.2–75.5 % at
ε = 0.01–1, at or below the majority class (76.07 %), where the default ``method="auto"`` reaches
80.8–82.8 % at ε = 0.1–1.  Use ``method="auto"`` for accuracy (``METHOD_ADVICE["pnsgd"]`` in
:mod:`dpconvex.mechanisms`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import hockey_stick as accountant
from dpconvex.accounting.hockey_stick import NOISES
from dpconvex.accounting.rounding import largest_rounding_within, round_up
from dpconvex.data.checks import make_rng
from dpconvex.exceptions import CalibrationError
from dpconvex.mechanisms._certify import certify
from dpconvex.mechanisms._geometry import require_euclidean_projection
from dpconvex.mechanisms._keywords import train_with_keywords
from dpconvex.mechanisms._step_size import require_step_size
from dpconvex.mechanisms.base import RandomState, TrainingResult, resolve_constraint
from dpconvex.mechanisms.problem import Problem
from dpconvex.objectives.constraints import Constraint, L2Ball
from dpconvex.objectives.losses import Loss

__all__ = ["PNSGDPlan", "pnsgd", "plan", "train", "default_step_size"]

UPDATE_RULE = "x <- Proj_K(x - step_size*(grad loss(x; record k) + l2*x + Z_k)), one record per step, x_0 = 0"


def default_step_size(
    n: int, smoothness: float, strong_convexity: float, radius: float, gradient_bound: float, noise_variance: float
) -> float:
    """η minimising a data-independent bound on E‖x_n − x*‖², capped at 1/β.

    Derivation note: for projected SGD with unbiased stochastic gradients g (E‖g‖² ≤ G²) on a
    λ-strongly convex objective, ‖x_{k+1} − x*‖² ≤ ‖x_k − η g − x*‖² and
    E⟨g, x_k − x*⟩ ≥ λ E‖x_k − x*‖² give E‖x_n − x*‖² ≤ (1 − 2ηλ)^n R² + ηG²/(2λ), R ≥ ‖x_0 − x*‖
    (the ball's radius, x_0 = 0).  For λ = 0 we use the convex rate R²/(2ηn) + ηG²/2 (Bubeck 2015,
    arXiv:1405.4980, Thm 6.1).  G² = (L + λR)² + E‖Z‖² is public (declared constants and the noise
    level), so the rule spends no privacy.  The bound is minimised over a log grid of η in
    [10⁻⁸/β, 1/β]; when noise dominates the minimiser is tiny and the output stays near x_0 — the
    honest answer of the bound at that (ε, n).

    Parameters
    ----------
    n : int
        The number of steps (one per record).
    smoothness, strong_convexity : float
        β and λ of the objective.
    radius : float
        R, the radius of the constraint ball.
    gradient_bound : float
        L + λR, the bound on the regularised gradient's norm.
    noise_variance : float
        E‖Z‖² of the noise added to each step.

    Returns
    -------
    float
        η.
    """
    etas = np.geomspace(1e-8, 1.0, 2001) / smoothness
    g2 = gradient_bound**2 + noise_variance
    if strong_convexity > 0:
        contraction = np.clip(1.0 - 2.0 * etas * strong_convexity, 0.0, None)
        risk = contraction**n * radius**2 + etas * g2 / (2.0 * strong_convexity)
    else:
        risk = radius**2 / (2.0 * etas * n) + etas * g2 / 2.0
    return float(etas[np.argmin(risk)])


@lru_cache(maxsize=256)
def _one_step_epsilon(noise: str, sensitivity: float, level: float, delta: float) -> float:
    """ε at δ of one Gaussian (Laplace) step: the composition baseline, where every iterate is published."""
    one_step = accountant.gaussian_mechanism_delta if noise == "gaussian" else accountant.laplace_mechanism_delta
    return accountant.epsilon_for_delta(lambda e: float(one_step(e, sensitivity, level)), delta)


def _check_options(noise: str, dimension: int, constraint: Constraint | str, random_stop: bool) -> None:
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {sorted(NOISES)}; got {noise!r}.")
    if noise == "laplace" and dimension != 1:
        raise ValueError(
            f"noise='laplace' needs one-dimensional parameters (Thm 3 covers an interval only); the design "
            f"has dimension {dimension} (with fit_intercept the constant feature counts). Use noise='gaussian'."
        )
    if not isinstance(random_stop, bool):
        raise ValueError(f"random_stop must be True or False; got {random_stop!r}.")
    if constraint == "auto":
        return
    require_euclidean_projection(constraint, "pnsgd")
    if not isinstance(constraint, L2Ball):
        raise ValueError(
            "constraint must be 'auto' or an L2Ball: PNSGD's contraction bound needs a bounded set K of finite "
            f"diameter (an interval when d = 1); got {constraint!r}."
        )


@dataclass(frozen=True)
class PNSGDPlan:
    """A resolved PNSGD run: the accounting event (noise level, step size, stopping rule), the noise family, K.

    Attributes
    ----------
    event : PNSGDEvent
        The accounting event.
    noise : str
        The noise family (a key of ``dpconvex.accounting.hockey_stick.NOISES``).
    constraint : L2Ball
        The ball K of the projection.
    """

    event: accountant.PNSGDEvent
    noise: str
    constraint: L2Ball


def plan(problem: Problem, *, noise: str = "gaussian", random_stop: bool = False,
         step_size: float | str = "auto") -> PNSGDPlan:
    """Resolve K and the step of :func:`pnsgd`, and calibrate the noise for the worst record, from public quantities.

    Parameters
    ----------
    problem : Problem
        The problem record (only its shape and declarations are read); its ``constraint`` may be
        ``"auto"`` (the ball of radius √(2ℓ(0)/λ)).
    noise, random_stop, step_size
        As in :func:`pnsgd`.

    Returns
    -------
    PNSGDPlan

    Raises
    ------
    ValueError
        Naming the option and its valid range, or for a set K that is not an L2 ball.
    """
    n, dimension, constraint = problem.n, problem.dimension, problem.constraint
    epsilon, delta = problem.target.epsilon, problem.target.delta
    _check_options(noise, dimension, constraint, random_stop)
    # "auto" at λ = 0 is refused (K must be bounded); an L2Ball by _check_options, or the "auto" ball (an L2Ball)
    constraint = cast(L2Ball, resolve_constraint(problem))
    constants = problem.constants(constraint)
    lipschitz = constants.gradient_sensitivity / 2.0  # the paper's 2L is our S_g (derivation in module doc)
    keyword = NOISES[noise][0]
    common: dict[str, Any] = dict(n=n, lipschitz=lipschitz, smoothness=constants.smoothness,
                                  strong_convexity=constants.strong_convexity, diameter=constraint.diameter)

    def noise_variance(level: float) -> float:  # E‖Z‖²: dσ² (Gaussian) or 2b² (Laplace, d = 1)
        return dimension * level**2 if noise == "gaussian" else 2.0 * level**2

    if epsilon is not None:
        # The fixed-stop worst record (t = n) does not depend on η, so calibrate it first.
        level = accountant.calibrate_pnsgd_noise(epsilon, delta, **common, step_size=1.0, noise=noise)
    else:
        level = float(cast(float, problem.target.sigma))  # no epsilon: a sigma (PrivacyTarget holds exactly one)
    if step_size == "auto":
        step_size = default_step_size(n, constants.smoothness, constants.strong_convexity, constraint.radius,
                                      constants.lipschitz_regularized, noise_variance(level))
    require_step_size(step_size)
    step_size = float(step_size)
    if epsilon is not None and random_stop:
        level = accountant.calibrate_pnsgd_noise(epsilon, delta, **common, step_size=step_size, noise=noise,
                                                 random_stop=True)
    noise_level: dict[str, Any] = {keyword: level}  # the event's field of this noise family's level
    event = accountant.PNSGDEvent(**common, step_size=step_size, random_stop=random_stop, **noise_level)
    return PNSGDPlan(event=event, noise=noise, constraint=constraint)


def train(problem: Problem, plan: PNSGDPlan, random_state: RandomState = None) -> TrainingResult:
    """Run the planned pass over the problem's rows in order and certify the released iterate per record.

    Parameters
    ----------
    problem : Problem
        The problem :func:`plan` resolved.
    plan : PNSGDPlan
        Its plan.
    random_state : None, int or Generator
        As in :func:`pnsgd`.

    Returns
    -------
    TrainingResult
        The released iterate and its certificate (its ``record_profile[t − 1]`` is δ_t at the
        certified ε).
    """
    event, noise, constraint = plan.event, plan.noise, plan.constraint
    n, dimension, l2, loss = problem.n, problem.dimension, problem.l2, problem.loss
    epsilon, delta = problem.target.epsilon, problem.target.delta
    keyword = NOISES[noise][0]
    level, step_size, random_stop = getattr(event, keyword), event.step_size, event.random_stop
    gradient_sensitivity = problem.constants(constraint).gradient_sensitivity
    curve = {name: value for name, value in dataclasses.asdict(event).items() if name != "record"}

    privacy = accountant.account_pnsgd(event, delta)
    if epsilon is not None and privacy.epsilon > epsilon:
        # ε is read off the δ(ε) curve to a relative 1e-10 and can land just above the target; the
        # calibration chose the noise so that every record's δ at the computed ε whose rounding up is
        # the target is ≤ δ (re-checked here), and δ(ε) decreases in ε, so the target is the certified ε.
        _, worst = accountant.pnsgd_profile(largest_rounding_within(float(epsilon)), **curve)
        if float(worst) > delta:
            raise CalibrationError(f"the planned noise gives delta = {float(worst):.6g} > {delta:g} at epsilon = "
                                   f"{epsilon:g} for some record; nothing was trained")
        privacy = dataclasses.replace(privacy, epsilon=float(epsilon),
                                      candidates={**privacy.candidates, privacy.bound: float(epsilon)})
    profile, _ = accountant.pnsgd_profile(privacy.epsilon, **curve)
    composition = round_up(_one_step_epsilon(noise, gradient_sensitivity, level, delta))

    rng = make_rng(random_state)
    stop = int(rng.integers(1, n + 1)) if random_stop else n
    draw = (lambda: rng.normal(0.0, level, dimension)) if noise == "gaussian" else (lambda: rng.laplace(0.0, level, 1))
    data = problem.in_memory()
    X, y = data.X, data.y
    theta = np.zeros(dimension)
    released = np.zeros(dimension)
    for k in range(1, n + 1):  # all n steps whatever T is: the work done must not reveal T
        gradient = loss.per_example_gradients(theta, X[k - 1:k], y[k - 1:k])[0] + l2 * theta
        theta = constraint.project(theta - step_size * (gradient + draw()))
        np.copyto(released, theta, where=k == stop)  # the same masked copy at every step

    notes = []
    rho = accountant.gradient_step_lipschitz(step_size, event.smoothness, event.strong_convexity)
    if rho >= 1.0:
        notes.append(f"rho = {rho:.4g} >= 1 (step_size above 2/(smoothness + strong_convexity) or l2 = 0): "
                     "amplification comes only from the diameter cap")
    if random_stop:
        notes.append("the output is x_T for a secret T ~ Unif{1..n}; T is not reported (revealing it voids Thm 5)")
    certificate = certify("pnsgd", privacy, problem, {
        "lipschitz": event.lipschitz,
        "gradient_sensitivity": gradient_sensitivity,
        "strong_convexity": event.strong_convexity,
        "smoothness": event.smoothness,
        "step_size": step_size,
        "rho": rho,
        "diameter": constraint.diameter,
        "constraint": constraint.describe(),
        "noise": noise,
        "noise_parameter": f"{keyword} of Z_k; the parameters move by step_size * Z_k",
        "random_stop": random_stop,
        "worst_record": 1 if random_stop else n,
        "update_rule": UPDATE_RULE,
        "neighbouring": "replace-one",
        "released": "x_T, T ~ Unif{1..n} secret" if random_stop else "last iterate only",
    }, sigma=level, iterations=n, composition_epsilon=composition, notes=tuple(notes),
        record_profile=tuple(float(v) for v in profile))
    return TrainingResult(coef=released, certificate=certificate)


def pnsgd(X: NDArray, y: NDArray, *, loss: Loss, l2_regularization: float | str, delta: float,
          epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
          label_bound: float | None = None, constraint: Constraint | str = "auto", strict: bool = False,
          noise: str = "gaussian", random_stop: bool = False, step_size: float | str = "auto",
          random_state: None | int | np.random.Generator = None) -> TrainingResult:
    """Train by one pass of projected noisy SGD and certify the released iterate per record.

    :func:`plan`, then :func:`train`, on the validated data.

    When to use: a faithful reproduction of Asoodeh, Diaz, Calmon 2020's per-record E_γ contraction
    certificate, for studying per-record privacy profiles (``record_profile``).  Not for accuracy on
    real tabular data: on UCI Adult (docs/BENCHMARKS.md) it scores 44.2–75.5 % at ε ≤ 1, at or below
    the majority class (76.07 %); use ``method="auto"`` (80.8–82.8 % at ε = 0.1–1) instead.

    Parameters
    ----------
    X, y : array_like
        Features (n, d) and targets (n,), processed in row order (row t is used at step t).  Rows
        above ``data_norm`` are clipped with a :class:`~dpconvex.exceptions.PrivacyLeakWarning`
        (``strict=True``: ``ValueError``); classification targets must be ±1.
    loss : Loss
        Per-example loss with declared constants (smooth: ρ needs β).
    l2_regularization : float
        λ ≥ 0 added to every per-record loss; λ > 0 makes ρ < 1 possible and is needed by
        ``constraint="auto"``.
    delta : float
        δ of the certificate, in (0, 1).
    epsilon, sigma : float, optional
        Give exactly one: a target ε (the noise level is calibrated for the worst record, never
        overshooting) or the noise level — σ of Z ~ N(0, σ²I), or for ``noise="laplace"`` the
        scale b of Z ~ Lap(0, b).  The parameters move by η·Z per step.
    noise : {"gaussian", "laplace"}
        Laplace noise needs d = 1 (Thm 3); anything else is refused.
    random_stop : bool
        Release x_T for a secret T ~ Unif{1..n} (Thm 5) instead of x_n.  All n steps are run
        either way and x_T is kept, so the running time does not depend on T (it would otherwise
        leak the stopping time that Thm 5 needs hidden).
    data_norm, label_bound : float
        Declared bounds on ‖x‖₂ and |y| (``label_bound`` only for regression losses).
    strict : bool
        Refuse rows (targets) beyond their bound with a ``ValueError`` instead of clipping them.
    step_size : float or "auto"
        η > 0; ``"auto"`` is :func:`default_step_size` (with ``epsilon``, evaluated at the noise
        level calibrated for fixed stopping; random stopping then recalibrates at that η).
    constraint : L2Ball or "auto"
        The set K (finite diameter required).  ``"auto"`` is the ball of radius √(2ℓ(0)/λ), which
        contains the minimiser of the regularised objective, so the projection costs no accuracy.
    random_state : None, int or Generator
        ``None`` (default) draws the noise (and T) from an OS-seeded generator — the only choice
        for a release.  A seed makes runs reproducible, for experiments and tests.

    Returns
    -------
    TrainingResult
        ``coef`` and a certificate whose ``record_profile[t − 1]`` is δ_t at the certified ε.
    """
    return train_with_keywords("pnsgd", plan, train, locals())
