"""The event record of projected noisy SGD with one record per step (PNSGD), and its checks.

What :mod:`.hockey_stick` certifies (:func:`.hockey_stick.account_pnsgd`) and calibrates
(:func:`.hockey_stick.calibrate_pnsgd_noise`, and :func:`.interface.calibrate` on the event).  The
record lives apart from the accountant so that a privacy ledger can hold it without the E_γ
formulas; pure, and imports nothing of the library but the argument checks (:mod:`._checks`).

Source: Asoodeh, Diaz, Calmon 2020, *Privacy Amplification of Iterative Algorithms via Contraction
Coefficients*, ISIT 2020, arXiv:2001.06546, eq. (12), Thms 3 (Laplace noise), 4 (Gaussian noise)
and 5 (random stopping).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from ._checks import check_positive

__all__ = ["NOISES", "RANDOM_STOP_THEOREM", "PNSGDEvent"]

#: Noise families of PNSGD: name → (keyword of its level here, theorem of the fixed-stop bound).
NOISES = {
    "gaussian": ("sigma", "Asoodeh, Diaz, Calmon 2020 (arXiv:2001.06546), Thm 4"),
    "laplace": ("scale", "Asoodeh, Diaz, Calmon 2020 (arXiv:2001.06546), Thm 3"),
}
#: Theorem of the random-stopping bound (x_T released for a secret T ~ Unif{1..n}).
RANDOM_STOP_THEOREM = "Asoodeh, Diaz, Calmon 2020 (arXiv:2001.06546), Thm 5 (random stopping)"


def _check_loss(lipschitz: float, smoothness: float, strong_convexity: float, step_size: float) -> None:
    checks = [
        ("lipschitz", np.isfinite(lipschitz) and lipschitz >= 0, "finite and >= 0"),
        ("strong_convexity", np.isfinite(strong_convexity) and strong_convexity >= 0, "finite and >= 0"),
        ("smoothness", np.isfinite(smoothness) and smoothness >= strong_convexity, "finite and >= strong_convexity"),
        ("step_size", np.isfinite(step_size) and step_size > 0, "finite and > 0"),
    ]
    for name, ok, valid in checks:
        if not ok:
            value = {"lipschitz": lipschitz, "strong_convexity": strong_convexity,
                     "smoothness": smoothness, "step_size": step_size}[name]
            raise ValueError(f"{name} must be {valid}; got {value!r}.")


def _check_n_record(n: int, record: int | None) -> None:
    if not (float(n).is_integer() and n >= 1):
        raise ValueError(f"n must be an integer >= 1; got {n!r}.")
    if record is not None and not (float(record).is_integer() and 1 <= record <= n):
        raise ValueError(f"record must be an integer in 1..n (= {n}); got {record!r}.")


@dataclass(frozen=True)
class PNSGDEvent:
    """One run of PNSGD (Asoodeh, Diaz, Calmon 2020, arXiv:2001.06546, eq. (12)).

    Conventions.  ``x_k = Π_K(x_{k−1} − η(∇ℓ(x_{k−1}, d_k) + Z_k))``: record k of the n records is
    used at step k only (one pass, in order), with its own (not a mean) gradient; x_0 is fixed and
    data-independent; only x_n is released, or x_T for a secret T ~ Unif{1..n} (``random_stop``).
    The noise level is the scale of Z_k, so the noise actually added is η·Z_k:
    Z_k ~ N(0, σ² I) (``sigma``) or Lap(0, b) in dimension 1 (``scale``).  Neighbouring relation:
    replace-one (n fixed); ℓ(·, d) is L-Lipschitz on K, so the gradient sensitivity of the record's
    step is 2L (the bound's first factor is θ_γ(2L/σ), resp. [1 − √γ e^{−L/b}]_+).

    Theorem.  Thm 4 (Gaussian noise) or Thm 3 (Laplace noise, d = 1) for record ``record``; Thm 5
    with ``random_stop`` (every record gets the bound of the worst one, t = 1).  ε at δ by Thm 1
    (E_{e^ε} ≤ δ).  Every quantity these bounds use is a field, so the record is also the input
    of the noise calibration (the level it carries is then ignored: only which one is set, the
    noise family, matters).

    Parameters
    ----------
    n : int
        Records, one per step (n ≥ 1).
    lipschitz, smoothness, strong_convexity : float
        L ≥ 0, β ≥ λ (finite) and λ ≥ 0 of the loss on K.
    step_size : float
        η > 0.
    diameter : float
        D > 0, the diameter of K.
    sigma, scale : float or None
        Exactly one: σ > 0 of Gaussian noise (Thm 4) or b > 0 of Laplace noise (Thm 3, d = 1).
    record : int or None
        The record t in 1..n to certify; None: the worst one (t = n).  Must be None with random stopping.
    random_stop : bool
        x_T released for a secret T ~ Unif{1..n} (Thm 5; every record gets the worst one's bound, t = 1).
    """

    n: int
    lipschitz: float
    smoothness: float
    strong_convexity: float
    step_size: float
    diameter: float
    sigma: float | None = None
    scale: float | None = None
    record: int | None = None
    random_stop: bool = False

    def __post_init__(self) -> None:
        _check_n_record(self.n, self.record)
        _check_loss(self.lipschitz, self.smoothness, self.strong_convexity, self.step_size)
        check_positive(self.diameter, "diameter")
        if (self.sigma is None) == (self.scale is None):
            raise ValueError("give exactly one of sigma (Gaussian noise) and scale (Laplace noise); got "
                             f"sigma={self.sigma!r}, scale={self.scale!r}.")
        check_positive(cast(float, self.scale if self.sigma is None else self.sigma),
                       "scale" if self.sigma is None else "sigma")
        if not isinstance(self.random_stop, bool):
            raise ValueError(f"random_stop must be a bool; got {self.random_stop!r}.")
        if self.random_stop and self.record is not None:
            raise ValueError(f"record must be None with random_stop=True (Thm 5 gives every record the bound of the "
                             f"worst one, t = 1); got {self.record!r}.")

    @property
    def noise(self) -> str:
        """The noise family: ``"gaussian"`` (``sigma`` set) or ``"laplace"`` (``scale`` set)."""
        return "laplace" if self.sigma is None else "gaussian"
