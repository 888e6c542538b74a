"""Audit targets of the default regression fit: its private intercept and ``method="auto"`` on the squared loss.

``PrivateRidge()`` releases two things (:mod:`dpconvex.mechanisms.private_mean`): the noisy mean
of the clipped targets (Laplace, pure ε₁) and a model trained by ``auto`` on the centred targets;
basic composition adds their ε.  Each part is audited on its own worst-case pair.

``private-mean``.  Ten records with target 0 and a canary with target +Y in row 0, replaced by −Y
(Y = 1): the means differ by 2Y/n, the sensitivity the Laplace scale 2Y/(n·ε₁) assumes, and both
stay inside [−Y, Y], so the clamp never acts.  The release is the noisy mean itself; σ of the
harness is the Laplace scale (the halved-noise mutant halves it).  The certificate is pure:
ε₁ = 2Y/(n·scale) at every δ.

``auto-ridge``.  ``auto`` on the squared loss (label bound Y = 1, ``l2_regularization="auto"``):
Poisson noisy SGD with every per-example gradient clipped at C = Y·X (the gradient bound at θ = 0),
certified by composition (PLD) at sensitivity 2C, λ by the prediction-noise rule.  Canary: nine
records at the origin (zero gradient) and x = e₁ with target +1, replaced by x = −e₁ with target +1;
at θ = 0 their gradients are −e₁ and +e₁, which differ by 2C.  As in the ``auto`` target
(:mod:`.targets_auto`) the release along e₁ is the statistic; away from θ = 0 the canary's residual
shrinks (the model fits it), so the audit is loose, not exact.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from dpconvex.audit.harness import AuditTarget, NeighbourPair, register
from dpconvex.audit.targets import NOISY_GD_SETTING, _calibrated, _canary_pair
from dpconvex.audit.targets_noisy_sgd import _POISSON_PROFILE
from dpconvex.mechanisms import TrainingResult, auto, noisy_sgd
from dpconvex.mechanisms.auto import AutoChoice, select_configuration
from dpconvex.mechanisms.private_mean import MEAN_THEOREM, private_mean
from dpconvex.objectives.losses import SquaredLoss
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["MEAN_EPSILON", "mean_pair", "run_private_mean", "ridge_choice", "run_auto_ridge"]

#: ε₁ of the audited intercept (the shared setting's ε).
MEAN_EPSILON = NOISY_GD_SETTING["epsilon"]
_N = NOISY_GD_SETTING["n"]


def mean_pair() -> NeighbourPair:
    """Targets 0 but the canary's, +1 in row 0, replaced by −1 (features unused).

    Returns
    -------
    NeighbourPair
    """
    X = np.zeros((_N, 1))
    y = np.zeros(_N)
    y[0] = 1.0
    y_prime = y.copy()
    y_prime[0] = -1.0
    return NeighbourPair(X=X, y=y, X_prime=X.copy(), y_prime=y_prime, direction=np.ones(1))


def run_private_mean(X, y, seed: int, sigma: float, delta: float) -> TrainingResult:
    """The intercept's release at Laplace scale ``sigma``, certified at the honest ε₁ (its scale: ``_scale()``).

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets.
    seed : int
        Seeds the run.
    sigma : float
        The noise parameter: the Laplace scale.
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
    """
    epsilon = 2.0 / (y.size * sigma)  # the mechanism's noise: scale 2Y/(n ε), here read back from the scale
    mean = private_mean(y, 1.0, epsilon, seed)
    honest = MEAN_EPSILON
    certificate = PrivacyCertificate(
        mechanism="private_mean", epsilon=honest, delta=delta, bound="laplace", theorem=MEAN_THEOREM,
        conditions=("targets within [-1, 1]",), assumptions={"n": int(y.size), "label_bound": 1.0}, order=None,
        conversion="pure", sigma=_scale(), iterations=1)
    return TrainingResult(coef=np.array([mean.value]), certificate=certificate)


def _scale() -> float:
    """The Laplace scale of ε₁ = :data:`MEAN_EPSILON` on n records with Y = 1."""
    return 2.0 / (_N * MEAN_EPSILON)


register(
    AuditTarget(
        name="private-mean",
        mechanism="private_mean",
        description=f"the default regressor's intercept: Laplace mean of n = {_N} targets in [-1, 1], "
                    f"eps = {MEAN_EPSILON:g}; canary target +1 vs -1 among zeros",
        make_pair=mean_pair,
        sigma=_scale,
        run=run_private_mean,
        delta=NOISY_GD_SETTING["delta"],
    )
)


# ----------------------------------------------------------------------------- auto on the squared loss
@cache
def ridge_choice() -> AutoChoice:
    """What ``auto`` picks for the squared loss in the shared setting (public quantities only).

    Returns
    -------
    AutoChoice
    """
    setting = NOISY_GD_SETTING
    return select_configuration(setting["n"], setting["dimension"], loss=SquaredLoss(), l2_regularization="auto",
                                label_bound=1.0, epsilon=setting["epsilon"], delta=setting["delta"])


def _ridge_pair() -> NeighbourPair:
    """Records at the origin (target 0) and the canary e₁ with target +1 in row 0, replaced by −e₁ (target +1)."""
    pair = _canary_pair(0.0)
    y = pair.y.copy()
    y[0] = 1.0
    return NeighbourPair(X=pair.X, y=y, X_prime=pair.X_prime, y_prime=y.copy(), direction=pair.direction)


def run_auto_ridge(X, y, seed: int, sigma: float, delta: float) -> TrainingResult:
    """``auto``'s call of noisy_sgd for :func:`ridge_choice`, at noise ``sigma``.

    Parameters
    ----------
    X, y : ndarray
        One of the neighbouring data sets.
    seed : int
        Seeds the run.
    sigma : float
        The noise parameter (noisy_sgd's σ).
    delta : float
        δ of the certificate.

    Returns
    -------
    TrainingResult
    """
    choice = ridge_choice()
    return noisy_sgd(X, y, loss=SquaredLoss(), l2_regularization=choice.l2_regularization, sigma=sigma, delta=delta,
                     data_norm=1.0, label_bound=1.0, constraint="auto", strict=False, random_state=seed,
                     **choice.noisy_sgd_options())


@cache
def _ridge_sigma() -> float:
    pair = _ridge_pair()
    return _calibrated(auto, pair, loss=SquaredLoss(), label_bound=1.0, l2_regularization="auto").sigma


register(
    AuditTarget(
        name="auto-ridge",
        mechanism="auto",
        description="method='auto' on the squared loss (clip at Y X, Poisson, tail average, composition), "
                    "n = 10, d = 2, eps = 3; canary e1 vs -e1 with target +1 among records at 0",
        make_pair=_ridge_pair,
        sigma=_ridge_sigma,
        run=run_auto_ridge,
        delta=NOISY_GD_SETTING["delta"],
        profile_deltas=_POISSON_PROFILE,
    )
)
