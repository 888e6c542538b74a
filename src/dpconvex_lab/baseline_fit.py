"""What every peer baseline returns and checks: :class:`BaselineFit`, :class:`BaselineUnavailable`, the common checks.

Shared by :mod:`.baselines` (the registry, the non-private references, objective perturbation,
diffprivlib) and :mod:`.dpsgd` (DP-SGD), which both import it.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpconvex.data.checks import check_training_data
from dpconvex.objectives.losses import Loss

__all__ = ["BaselineFit", "BaselineUnavailable", "RandomState", "check_common"]

RandomState = int | np.random.Generator | None


class BaselineUnavailable(RuntimeError):
    """A baseline cannot run here (missing or incompatible package, unsupported loss)."""


@dataclass(frozen=True, eq=False)
class BaselineFit:
    """A fitted baseline.

    Attributes
    ----------
    coef : ndarray of shape (d,) or (d·K,)
        Weights: one vector (binary losses) or W = ``coef.reshape(d, K)`` flattened row-major
        (K-class losses, :mod:`dpconvex.objectives.multiclass`).
    bound, note : str
        The privacy accounting that covers the release (``"none ..."`` if not private); details.
    intercept : float
        Only :func:`majority` sets it (to the majority label); the others fit no intercept.
    params : dict
        Numbers behind the release (σ, Δ, noise multiplier, steps, ...), for reports and tests.
    """

    coef: NDArray[np.float64]
    bound: str
    note: str
    intercept: float = 0.0
    params: dict[str, float] = field(default_factory=dict)

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Labels ±1 = sign(X·coef + intercept) (0 maps to +1), or class indices argmax_k (X W)_k for d·K weights.

        Raises
        ------
        ValueError
            If ``coef`` has neither d = ``X.shape[1]`` entries nor a multiple d·K of them (K ≥ 2).
        """
        X = np.asarray(X, dtype=float)
        d = X.shape[1]
        if self.coef.size == d:
            return np.where(X @ self.coef + self.intercept >= 0, 1.0, -1.0)
        if self.coef.size % d or self.coef.size < 2 * d:
            raise ValueError(f"X has {d} features but coef has {self.coef.size} entries; expected {d} or "
                             f"{d}·K for K >= 2 classes.")
        return np.argmax(X @ self.coef.reshape(d, -1), axis=1).astype(float)



def check_common(X: ArrayLike, y: ArrayLike, loss: Loss, l2_regularization: float,
                  data_norm: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validated float copies of X, y; ``ValueError``/``TypeError`` naming the bad parameter."""
    if not isinstance(loss, Loss):
        raise TypeError(f"loss must be a dpconvex.objectives.losses.Loss instance; got {type(loss).__name__}.")
    X, y = check_training_data(X, y)
    if not (isinstance(l2_regularization, numbers.Real) and np.isfinite(l2_regularization) and l2_regularization >= 0):
        raise ValueError(f"l2_regularization must be finite and >= 0; got {l2_regularization!r}.")
    if not (isinstance(data_norm, numbers.Real) and np.isfinite(data_norm) and data_norm > 0):
        raise ValueError(f"data_norm must be finite and > 0; got {data_norm!r}.")
    loss.check_labels(y)
    return X, y
