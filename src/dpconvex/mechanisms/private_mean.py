"""A private intercept for regression: the noisy mean of the clipped targets, composed with the model's certificate.

Mechanism (conventions: replace-one neighbours, n public, targets clipped to [−Y, Y] with
Y = ``label_bound`` declared).  Replacing one record moves the mean of the targets by at most
2Y/n, so releasing the mean plus Laplace noise of scale 2Y/(n·ε₁) is (ε₁, 0)-DP (the Laplace
mechanism: Dwork, Roth 2014, *The Algorithmic Foundations of Differential Privacy*, Thm 3.6).  The
estimate m̂ is then clamped to [−Y, Y] (post-processing).

Composition (derivation note).  The model is trained afterwards on the centred targets y − m̂, whose
bound |y − m̂| ≤ Y + |m̂| it declares, at (ε − ε₁, δ): a mechanism chosen after seeing m̂.  Basic
composition holds for such adaptively chosen mechanisms (Dwork, Roth 2014, Thm 3.16; its adaptive
form: Dwork, Rothblum, Vadhan 2010, "Boosting and differential privacy", FOCS), so the
release (m̂, w) is (ε₁ + ε₂, δ)-DP, ε₂ ≤ ε − ε₁ the model's certified ε.  The pair's certificate
(:func:`compose_with_mean`) adds ε₁ to every ε the model's certificate states.

Why a share of ε and not a fixed intercept column.  A constant feature equal to X raises the norm
bound to √2·X (twice the noise variance on every weight); the trivial predictor of regression is the
mean, which the model without an intercept cannot reach on targets mapped onto [−Y, Y].  On
scikit-learn's diabetes data (n = 442, targets mapped by the bounds [0, 400]) the default ridge fit
scored R² = −0.55 at ε = 1 without an intercept; the share (:data:`MEAN_SHARE` to
:data:`MAX_MEAN_SHARE`) was chosen on the panel
benchmark (``dpconvex bench panel``, docs/BENCHMARKS.md) with :func:`mean_epsilon`'s aim.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import NDArray

from dpconvex.data.checks import make_rng
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["MAX_MEAN_SHARE", "MEAN_PRECISION", "MEAN_SHARE", "MEAN_THEOREM", "PRIVATE_MEAN", "mean_epsilon",
           "PrivateMean", "private_mean", "compose_with_mean"]

#: ``fit_intercept`` of the regressors that centres the targets by their private mean (this module: a share of
#: ε, composed into the certificate).
PRIVATE_MEAN = "private_mean"
#: Least share of the target ε spent on the intercept (the model gets the rest, and all of δ).
MEAN_SHARE = 0.1
#: Largest share of the target ε spent on the intercept.
MAX_MEAN_SHARE = 0.5
#: The intercept's aim: Laplace noise of standard deviation √2·scale at most this share of Y.
MEAN_PRECISION = 0.05


def mean_epsilon(n: int, epsilon: float) -> float:
    """ε₁ of the intercept: enough for a noise sd of :data:`MEAN_PRECISION`·Y, within [MEAN_SHARE, MAX_MEAN_SHARE]·ε.

    The Laplace noise's sd is √2·2Y/(n·ε₁), so the aim needs ε₁ = 2√2/(MEAN_PRECISION·n); with few
    records that is more than the model could use anyway (its own noise is then larger), with many a
    tenth of ε already exceeds it.  Only n and ε enter.

    Parameters
    ----------
    n : int
        The number of records.
    epsilon : float
        The fit's whole ε.

    Returns
    -------
    float
        ε₁.
    """
    aim = 2.0 * math.sqrt(2.0) / (MEAN_PRECISION * n)
    return float(min(MAX_MEAN_SHARE * epsilon, max(MEAN_SHARE * epsilon, aim)))

#: The theorems behind the pair's certificate.
MEAN_THEOREM = ("the intercept: Laplace mechanism on the mean of the clipped targets (Dwork, Roth 2014, Thm 3.6; "
                "sensitivity 2Y/n, replace-one); the pair: basic composition of adaptively chosen mechanisms "
                "(Dwork, Roth 2014, Thm 3.16)")


@dataclasses.dataclass(frozen=True)
class PrivateMean:
    """A released intercept: the noisy mean ``value`` (in [−bound, bound]), its ε and its Laplace ``scale``.

    Attributes
    ----------
    value : float
        The released mean, clipped to [−bound, bound].
    epsilon : float
        ε spent on it.
    scale : float
        The Laplace noise's scale 2·bound/(n·ε).
    bound : float
        Y, the declared bound on |y|.
    n : int
        The number of records.
    """

    value: float
    epsilon: float
    scale: float
    bound: float
    n: int


def private_mean(y: NDArray[np.float64], bound: float, epsilon: float,
                 random_state: None | int | np.random.Generator = None) -> PrivateMean:
    """The mean of ``y`` (already within [−bound, bound]) plus Laplace noise of scale 2·bound/(n·ε), clamped.

    Parameters
    ----------
    y : ndarray or dask array of shape (n,)
        Targets within the declared bound (the caller clips them); a dask array is reduced on its cluster.
    bound : float
        The declared bound Y > 0 on |y|.
    epsilon : float
        ε₁ > 0 of the intercept.
    random_state : None, int or Generator
        ``None`` (the only choice for a release) draws the noise from an OS-seeded generator.

    Returns
    -------
    PrivateMean

    Raises
    ------
    ValueError
        If a target lies outside [−bound, bound] (the sensitivity would not hold) or ε ≤ 0.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0; got {epsilon!r}.")
    if type(y).__module__.split(".")[0] == "dask":  # a dask array, reduced on its cluster
        n, exact, largest = int(y.shape[0]), *(float(v) for v in _dask_mean_and_largest(y))
    else:
        y = np.asarray(y, dtype=float)
        n = int(y.size) if y.ndim == 1 else 0
        exact, largest = (float(np.mean(y)), float(np.max(np.abs(y)))) if n else (0.0, math.inf)
    if n == 0 or not largest <= bound:
        raise ValueError(f"y must be a non-empty 1-d array within [-{bound:g}, {bound:g}] (clip it to label_bound).")
    scale = 2.0 * bound / (n * epsilon)
    noisy = exact + float(make_rng(random_state).laplace(0.0, scale))
    return PrivateMean(value=float(np.clip(noisy, -bound, bound)), epsilon=float(epsilon), scale=scale,
                       bound=float(bound), n=n)


def _dask_mean_and_largest(y) -> tuple:
    """The mean and the largest |yᵢ| of a dask array, in one pass on its cluster."""
    import dask

    return dask.compute(y.mean(), abs(y).max())


def compose_with_mean(certificate: PrivacyCertificate, mean: PrivateMean) -> PrivacyCertificate:
    """The certificate of the pair (intercept, model): ε₁ added to every ε of the model's certificate.

    Parameters
    ----------
    certificate : PrivacyCertificate
        The model's, trained on the targets centred by ``mean.value``.
    mean : PrivateMean
        The released intercept.

    Returns
    -------
    PrivacyCertificate
        Its ``bound`` names both parts, its ``theorem`` starts with :data:`MEAN_THEOREM`, its
        assumptions record the intercept's ε and noise scale.
    """
    return dataclasses.replace(
        certificate,
        epsilon=mean.epsilon + certificate.epsilon,
        bound=f"private mean + {certificate.bound}",
        theorem=f"{MEAN_THEOREM}; the model: {certificate.theorem}",
        conditions=(f"the intercept is the mean of the targets clipped to [-{mean.bound:g}, {mean.bound:g}] plus "
                    f"Laplace noise of scale {mean.scale:.4g} (epsilon={mean.epsilon:.4g}); the model was trained "
                    "on the targets minus it", *certificate.conditions),
        assumptions={**certificate.assumptions, "intercept": "private mean", "intercept_epsilon": mean.epsilon,
                     "intercept_noise_scale": mean.scale},
        candidates={name: mean.epsilon + value for name, value in certificate.candidates.items()},
        composition_epsilon=mean.epsilon + certificate.composition_epsilon,
    )
