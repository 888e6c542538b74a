"""``method="auto"`` (the default): configure noisy SGD by a stated utility bound, from public quantities only.

What runs.  Smooth losses: :func:`~dpconvex.mechanisms.noisy_sgd.noisy_sgd` with Poisson batches,
:data:`~dpconvex.mechanisms.auto_candidates.MAX_PASSES` passes over the data, the mean of the last half of the iterates
released (``output="tail_average"``), certified by composition over every step with dp-accounting's PLD accountant
(replace-one).  The rule picks the number of batches per epoch l (batch size b = ⌈n/l⌉, T = l·E steps), the step η and,
when the estimator leaves it to us, λ.  Margin losses are clipped at their gradient bound at θ₀ = 0 (below).
Non-smooth losses (hinge, absolute error): :func:`~dpconvex.mechanisms.sco_noisy_sgd`, the only trainer that applies.

The rule (derivation note).  For SGD on an M-smooth convex objective with step η, T steps from θ₀ = 0 and stochastic
gradients of variance s², the averaged iterate has excess risk of the form B²/(2ηT) + η·s² (e.g. Lan 2012, Math.
Program. 133, Cor. 1; constants differ between statements, and the rule only ranks candidates).  Here s² = sampling +
privacy noise: a Poisson batch of rate q = b/n, normalised by b, has variance ≤ (1 − q)L²/b, and the noise σ on the
gradient sum adds d·σ²/b².  σ comes from the central-limit calibration of Bu, Dong, Long, Su 2020 (arXiv:1911.11607, Thm
5; :func:`dpconvex.accounting.noisy_sgd_bounds.poisson_clt_noise_multiplier`): in that regime σ/b ≈ 2L√T/(μn) whatever
b, so at fixed T a larger batch only lowers the sampling term; every candidate therefore spends the whole work budget (E
= :data:`~dpconvex.mechanisms.auto_candidates.MAX_PASSES`).  The comparator's norm is B =
:data:`~dpconvex.mechanisms.auto_candidates.REFERENCE_NORM`, a public prior (rows of norm ≤ 1 and margins of a few
units), and a regulariser λ adds its bias λB²/2.  The score (:mod:`dpconvex.mechanisms.auto_candidates`) is

    score(l) = B²/(2ηT) + η·(1 − q)·G²/b + η·d·σ²/b² + λB²/2,

with G the per-example gradient bound (L, or the clip norm C below) and σ = G·z.  For each l the step is the bound's
minimiser η* = B/√(2T·s²), s² = (1 − q)G²/b + dσ²/b², kept in
[1/M, :data:`~dpconvex.mechanisms.auto_candidates.MAX_STEP_FACTOR`/M]: never below the classical 1/M, never where the
gradient step stops being non-expansive (2/M); the bound is written for η ≤ 1/M and only ranks candidates above it.  The
l of least score is trained.  A run too short to converge keeps a large B²/(2ηT); one too long pays σ ∝ √T: neither is
picked.  Only n, d, (ε, δ), the loss's declared constants and the data bounds enter; the data never do.  The chosen σ
is then calibrated exactly (PLD), so the approximation only affects the choice, never the certificate.

Clipping (margin losses ℓ = φ(y·θᵀx)).  Every per-example gradient is clipped at C = |φ'(0)|·X
(:meth:`~dpconvex.objectives.losses.Loss.gradient_norm_at_zero`, X = ``data_norm``) when that is below L: the
sensitivity becomes 2C (noisy_sgd's ``clip_norm``), no gradient changes at θ₀ = 0, and the run descends the convex loss
with φ' capped at −C/‖x‖ — the logistic loss wherever the model classifies the example with margin ≥ 0 (C = X/2, half
the noise), linear beyond.  For the huberised hinge |φ'(0)| = 1: C = L, nothing changes.  Measured on UCI Adult (5 folds
× 2 seeds, δ = 1e-8, logistic, ε = 0.05): 79.4 % at C = L, η = 1/M; 80.7 % with C = X/2 and η ≈ 2/M at the same batches;
halving the noise alone did not help at η = 1/M (the run was step-limited). K-class losses
(:mod:`dpconvex.objectives.multiclass`): one-vs-rest clips each class's block at
|φ'(0)|·X (a convex loss again); softmax cross-entropy is clipped at its gradient norm at W = 0,
X·√((K − 1)/K) < L = √2·X, where for K ≥ 3 the clipped field is no convex loss's gradient — the composition certificate
does not need one (its derivation note has the measurements).

λ ("auto").  Under composition the noise does not depend on λ, so the bound's only λ-term is the bias λB²/2: the rule
takes the weakest regulariser whose ball of radius √(2ℓ(0)/λ) (which holds the regularised minimiser) is no smaller than
the distance the run can travel from θ₀ = 0, ηTG: λ = 2ℓ(0)/(ηTG)².  The certificate records the value used.

Do no harm.  When the chosen plan's noise is longer than the farthest the data can move the model
(:mod:`dpconvex.mechanisms.do_no_harm`), the fit goes ahead with a :class:`~dpconvex.exceptions.LowUtilityWarning` (a
``UserWarning``; also a note of the certificate) naming the ε or n that would reach a useful model.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting import gdp
from dpconvex.exceptions import LowUtilityWarning
from dpconvex.mechanisms._geometry import require_euclidean_projection
from dpconvex.mechanisms._keywords import plan_for_shape, train_with_keywords
from dpconvex.mechanisms.auto_candidates import (
    BATCH_COUNTS,
    MAX_PASSES,
    MAX_STEP_FACTOR,
    REFERENCE_NORM,
    AutoCandidate,
    score_candidates,
    signal_to_noise,
)
from dpconvex.mechanisms.backends import require_backend, trained_method
from dpconvex.mechanisms.base import RandomState, Train, TrainingResult, resolve_constraint
from dpconvex.mechanisms.do_no_harm import harm_warning
from dpconvex.mechanisms.noisy_sgd import NoisySGDPlan
from dpconvex.mechanisms.noisy_sgd import plan as noisy_sgd_plan
from dpconvex.mechanisms.noisy_sgd import train as noisy_sgd_train
from dpconvex.mechanisms.problem import Problem
from dpconvex.mechanisms.sco_sgd import SCOPlan
from dpconvex.mechanisms.sco_sgd import plan as sco_plan
from dpconvex.mechanisms.sco_sgd import train as sco_train
from dpconvex.objectives.constraints import Constraint, L2Ball
from dpconvex.objectives.losses import Loss

__all__ = ["auto", "plan", "train", "select_configuration", "AutoCandidate", "AutoChoice", "AutoPlan", "BATCH_COUNTS",
           "MAX_PASSES", "MAX_STEP_FACTOR", "REFERENCE_NORM", "RULE_DETAIL", "SCORES_DETAIL"]

#: Keys of the certificate's details that state ``auto``'s rule and list every configuration it weighed
#: with its score (optimisation + sampling + privacy noise + regularisation).
RULE_DETAIL = "auto_rule"
SCORES_DETAIL = "auto_scores"


@dataclasses.dataclass(frozen=True)
class AutoChoice:
    """The configuration ``auto`` trains, with every candidate's score (for the certificate's notes).

    Attributes
    ----------
    l2_regularization, l2_rule, step_size, epochs, clip_norm, chosen, candidates, harm
        λ and how it was set, η, E and C (None: no clipping), the chosen and every weighed :class:`AutoCandidate`,
        and the do-no-harm warning (or None).
    """

    l2_regularization: float
    l2_rule: str
    step_size: float
    epochs: int
    clip_norm: float | None
    chosen: AutoCandidate
    candidates: tuple[AutoCandidate, ...]
    harm: str | None = None

    def reason(self, epsilon: float, delta: float) -> str:
        clip = "no clipping" if self.clip_norm is None else f"clip_norm={self.clip_norm:.4g}"
        return (f"method='auto' (epsilon={epsilon:g}, delta={delta:g}) chose noisy_sgd with Poisson batches, "
                f"batch_size={self.chosen.batch_size}, epochs={self.epochs} (T={self.chosen.steps} steps), "
                f"step_size={self.step_size:.4g}, {clip}, output='tail_average', l2_regularization="
                f"{self.l2_regularization:.3g} ({self.l2_rule}), by the least utility bound (rule and scores: the "
                f"certificate's details)")

    def noisy_sgd_options(self) -> dict[str, Any]:
        """noisy_sgd's keywords for this configuration (Poisson batches, tail average), λ aside."""
        return dict(batching="poisson", batch_size=self.chosen.batch_size, epochs=self.epochs,
                    step_size=self.step_size, clip_norm=self.clip_norm, output="tail_average")

    def rule(self) -> str:
        """How the configuration was chosen, for the certificate's details."""
        clip = ("no clipping (G = L)" if self.clip_norm is None else
                f"clip_norm={self.clip_norm:.4g} = the loss's per-example gradient bound at theta=0 "
                "(Loss.gradient_norm_at_zero; G = C: sensitivity 2C, no gradient changed at theta=0)")
        return (f"the least utility bound B^2/(2 eta T) + eta (1-q) G^2/b + eta d sigma^2/b^2 + l2 B^2/2 "
                f"(B={REFERENCE_NORM:g}, sigma from the central-limit calibration, eta the bound's minimiser within "
                f"[1/M, {MAX_STEP_FACTOR:g}/M]; dpconvex.mechanisms.auto); {clip}")

    def scores(self) -> list[str]:
        """Every candidate's score (optimisation + sampling + privacy noise + regularisation), for the details."""
        return [c.describe() for c in self.candidates]


#: Largest standard deviation of the released model's noise on a prediction, as a share of the
#: target bound Y (regression: a prediction's error counts, not only its sign).
#: 0.3 on scikit-learn's diabetes data: R² 0.01 / 0.21 at ε = 1 / 2 (0.1: −0.29 / 0.09; 1: 0.01 / 0.13).
PREDICTION_NOISE = 0.3
PREDICTION_NOISE_RULE = ("the weakest l2 at which the released mean of iterates moves a prediction by at most "
                         f"{PREDICTION_NOISE:g} Y (sd X (sigma/b) / (l2 sqrt(T/2)))")


def _prediction_noise_l2(chosen: AutoCandidate, dimension: int, data_norm: float, label_bound: float) -> float:
    """λ at which the tail average's noise moves a prediction by :data:`PREDICTION_NOISE`·Y (one sd).

    Derivation note.  With λ-contraction over many steps (ηλT ≫ 1) the mean of the last T/2 iterates carries noise ≈
    (1/λ)·(mean of T/2 noise draws of sd σ/b per coordinate): sd (σ/b)/(λ√(T/2)) per coordinate, so X·(σ/b)/(λ√(T/2)) on
    a prediction wᵀx, ‖x‖ ≤ X.  σ/b is the chosen candidate's (its privacy-noise term is η·d·σ²/b²).
    """
    noise = math.sqrt(chosen.privacy_noise / (chosen.step_size * dimension))
    return data_norm * noise / (PREDICTION_NOISE * label_bound * math.sqrt(chosen.steps / 2.0))


def _smoothness_and_lipschitz(problem: Problem, domain, l2: float) -> tuple[float, float]:
    """The loss's declared smoothness M and Lipschitz constant L on ``domain`` at λ = ``l2``.

    The squared loss declares constants on a ball only (its gradient grows with ‖w‖): on an unbounded domain L = ∞, and
    M = X² + λ, which does not depend on the radius, is read on the unit ball.  Clipping at the gradient bound at θ = 0
    (Y·X) then gives the run a finite sensitivity 2C.
    """
    if domain.is_constrained or problem.loss.classification:
        constants = problem.constants(domain, l2)
        return constants.smoothness, constants.lipschitz
    try:
        constants = problem.constants(domain, l2)
    except ValueError:  # a loss whose constants need a bounded domain (the squared loss)
        return problem.constants(L2Ball(1.0), l2).smoothness, math.inf
    return constants.smoothness, constants.lipschitz


def _choose(problem: Problem) -> AutoChoice:
    """The configuration of least utility bound for ``problem`` (only its shape and declarations are read)."""
    constraint, loss = problem.constraint, problem.loss
    if constraint != "auto":
        require_euclidean_projection(constraint, "auto")
    if not loss.smooth:
        raise ValueError(f"the {loss.name} loss is not smooth: method='auto' trains it with sco_noisy_sgd, "
                         "which select_configuration does not configure.")
    mu = gdp.gdp_mu(problem.target.epsilon, problem.target.delta)
    fixed = problem.l2_regularization != "auto"
    probe = float(problem.l2_regularization) if fixed else 0.0
    loss_at_zero = problem.loss_at_zero()
    # noisy_sgd's own ball at the probe λ; while λ is "auto" (probe 0), R^d as noisy_sgd's at λ = 0 (documented)
    domain = resolve_constraint(problem, l2=probe, unregularised="unconstrained")
    smoothness, lipschitz = _smoothness_and_lipschitz(problem, domain, probe)
    at_zero = loss.gradient_norm_at_zero(problem.data_norm, problem.label_bound)
    clip = at_zero if at_zero is not None and 0.0 < at_zero < lipschitz else None
    if not math.isfinite(lipschitz) and clip is None:
        raise ValueError(f"method='auto' needs a finite Lipschitz constant: the {loss.name} loss has one only on a "
                         "bounded domain, so give l2_regularization > 0 or a bounded constraint.")
    gradient_bound = lipschitz if clip is None else clip
    candidates = score_candidates(problem.n, problem.dimension, mu, smoothness, gradient_bound, probe)
    chosen = min(candidates, key=lambda c: c.score)

    def ratio_at(records: int, epsilon: float) -> float:
        found = score_candidates(records, problem.dimension, gdp.gdp_mu(epsilon, problem.target.delta), smoothness,
                                 gradient_bound, probe)
        return signal_to_noise(min(found, key=lambda c: c.score), gradient_bound)

    harm = harm_warning(ratio_at, problem.n, cast(float, problem.target.epsilon))  # not None: gdp_mu refused None above
    step = chosen.step_size
    if fixed:
        l2, rule = probe, "given"
    else:
        l2 = 2.0 * loss_at_zero / (step * chosen.steps * gradient_bound) ** 2
        rule = "2 loss(0)/(eta T G)^2: the ball sqrt(2 loss(0)/l2) reaches as far as the run can move"
        if problem.label_bound is not None and not loss.classification:
            shrunk = _prediction_noise_l2(chosen, problem.dimension, problem.data_norm, problem.label_bound)
            if shrunk > l2:
                l2, rule = shrunk, PREDICTION_NOISE_RULE
        # the same multiple of 1/M at the final λ (M grows by λ)
        step *= smoothness / _smoothness_and_lipschitz(problem, domain, l2)[0]
    return AutoChoice(l2_regularization=float(l2), l2_rule=rule, step_size=float(step), epochs=MAX_PASSES,
                      clip_norm=None if clip is None else float(clip), chosen=chosen, candidates=tuple(candidates),
                      harm=harm)


def select_configuration(n: int, dimension: int, **keywords) -> AutoChoice:
    """The configuration of least utility bound (module docstring) for n records and a ``dimension``-vector parameter.

    Only public quantities are read; no data are needed.

    Parameters
    ----------
    n : int
        The number of records.
    dimension : int
        The length of the parameter vector (d·K for a K-class loss).
    **keywords
        Those of :func:`auto` but the data and the seed (``loss``, ``epsilon``, ``delta``, ``l2_regularization``,
        ``data_norm``, ``label_bound``, ``constraint``; its defaults apply): ``l2_regularization="auto"`` applies the
        module's λ rule, a number fixes λ.

    Returns
    -------
    AutoChoice
        The chosen configuration (λ, η, E, the clip norm), every weighed :class:`AutoCandidate` with its score, and the
        do-no-harm warning, if any.

    Raises
    ------
    ValueError
        For a non-smooth loss or a constraint whose projection is not Euclidean.
    """
    return plan_for_shape(auto, _choose, n, dimension, keywords)


def _require_epsilon(epsilon: float | None, sigma: float | None) -> float:
    """ε; ``ValueError`` unless a target ε is given and no σ: the choice depends on ε; auto calibrates its own noise."""
    if epsilon is None:
        raise ValueError("method='auto' needs a target epsilon (its choice depends on it; sigma is not enough).")
    if sigma is not None:
        raise ValueError("method='auto' calibrates its own noise: give epsilon, not sigma.")
    return epsilon


@dataclasses.dataclass(frozen=True)
class AutoPlan:
    """What ``auto`` trains: the chosen mechanism's ``train`` and plan, the λ it trains with, and why (a note).

    Attributes
    ----------
    train : Train
        The chosen mechanism's ``train``: noisy SGD's for a smooth loss, sco_noisy_sgd's for a non-smooth one.
    plan : NoisySGDPlan or SCOPlan
        That mechanism's plan.
    l2_regularization : float
        λ, the value the run trains with (the certificate's ``assumptions["l2_regularization"]``).
    note : str
        The certificate's note saying which mechanism and configuration were chosen, and why.
    details : tuple of (str, object) pairs
        Entries added to the certificate's details: the rule and every candidate's score (keys ``RULE_DETAIL`` and
        ``SCORES_DETAIL``; empty for a non-smooth loss).
    harm : str or None
        The do-no-harm warning (:mod:`dpconvex.mechanisms.do_no_harm`), also a note of the certificate, or None.
    """

    train: Train
    plan: NoisySGDPlan | SCOPlan
    l2_regularization: float
    note: str
    details: tuple[tuple[str, Any], ...] = ()
    harm: str | None = None


def plan(problem: Problem) -> AutoPlan:
    """Choose and plan the run from public quantities only: noisy SGD by the utility bound, or sco_noisy_sgd.

    Parameters
    ----------
    problem : Problem
        The problem record; its ``l2_regularization`` may be ``"auto"`` (the module's λ rule, or λ = 0 for a non-smooth
        loss) and its target must be an ε.

    Returns
    -------
    AutoPlan
    """
    target = problem.target
    epsilon = _require_epsilon(target.epsilon, target.sigma)
    require_backend("auto", problem.data, problem.loss)  # for a problem built elsewhere than auto()
    if trained_method(problem.loss) == "sco_noisy_sgd":
        l2 = 0.0 if problem.l2_regularization == "auto" else problem.l2
        note = (f"method='auto' trained sco_noisy_sgd: the {problem.loss.name} loss is not smooth and sco_noisy_sgd is "
                "the only mechanism for non-smooth losses")
        return AutoPlan(sco_train, sco_plan(dataclasses.replace(problem, l2_regularization=l2)), l2, note)
    choice = _choose(problem)
    chosen = noisy_sgd_plan(dataclasses.replace(problem, l2_regularization=choice.l2_regularization),
                            **choice.noisy_sgd_options())
    if choice.harm is not None:
        warnings.warn(choice.harm, LowUtilityWarning, stacklevel=2)
    return AutoPlan(noisy_sgd_train, chosen, choice.l2_regularization, choice.reason(epsilon, target.delta),
                    ((RULE_DETAIL, choice.rule()), (SCORES_DETAIL, choice.scores())), choice.harm)


def train(problem: Problem, plan: AutoPlan, random_state: RandomState = None) -> TrainingResult:
    """Train the chosen plan at the chosen λ; the certificate's notes say what was chosen and why.

    Parameters
    ----------
    problem, plan, random_state
        The problem :func:`plan` resolved, its plan, and ``random_state`` as in :func:`auto`.

    Returns
    -------
    TrainingResult
    """
    result = plan.train(dataclasses.replace(problem, l2_regularization=plan.l2_regularization), plan.plan,
                        random_state)
    certificate = result.certificate.with_notes(plan.note, *(() if plan.harm is None else (plan.harm,)))
    if plan.details:
        certificate = certificate.with_details(**dict(plan.details))
    return TrainingResult(coef=result.coef, certificate=certificate)


def auto(X: NDArray, y: NDArray, *, loss: Loss, l2_regularization: float | str = "auto", delta: float,
         epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
         label_bound: float | None = None, constraint: Constraint | str = "auto", strict: bool = False,
         random_state: None | int | np.random.Generator = None) -> TrainingResult:
    """Train :func:`select_configuration`'s choice; the certificate's notes give the rule and every score.

    :func:`plan`, then :func:`train`, on the validated data.

    A smooth loss is trained by :func:`~dpconvex.mechanisms.noisy_sgd.noisy_sgd` as :func:`plan` configures it; a
    non-smooth loss by :func:`~dpconvex.mechanisms.sco_noisy_sgd` with its defaults (λ = 0 for ``"auto"``).

    Parameters
    ----------
    X, y : array_like
        Features (n, d) and targets (n,); rows above ``data_norm`` (and targets above ``label_bound``) are clipped with
        a :class:`~dpconvex.exceptions.PrivacyLeakWarning` (``strict=True``: ``ValueError``).
    loss : Loss
        Per-example loss with declared constants (smooth or not).
    l2_regularization : float or "auto", default="auto"
        λ ≥ 0, or ``"auto"``: the module's λ rule (λ = 0 for a non-smooth loss); the certificate's
        ``assumptions["l2_regularization"]`` holds the value used.
    delta : float
        δ of the certificate, in (0, 1).
    epsilon : float
        The target ε (required: the choice depends on it).
    sigma : None
        Must be left ``None``: ``auto`` calibrates its own noise.
    data_norm, label_bound : float
        Declared bounds on ‖x‖₂ and |y|.
    constraint : Constraint or "auto", default="auto"
        As in :func:`~dpconvex.mechanisms.noisy_sgd.noisy_sgd` (``"auto"``: the ball of radius √(2ℓ(0)/λ) at the λ used;
        unconstrained at λ = 0).
    strict : bool
        Refuse rows (targets) beyond their bound with a ``ValueError`` instead of clipping them.
    random_state : None, int or Generator
        ``None`` (the only choice for a release) draws batches and noise from an OS-seeded generator.

    Returns
    -------
    TrainingResult
        ``coef``: the released parameter vector; ``certificate``: the certificate of the mechanism that ran, with
        ``auto``'s note (and the do-no-harm warning, if any) and, for noisy SGD, the rule and every score in its
        details.
    """
    _require_epsilon(epsilon, sigma)
    return train_with_keywords("auto", plan, train, locals(), require_smooth=False)
