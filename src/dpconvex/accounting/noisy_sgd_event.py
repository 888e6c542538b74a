"""The event record of noisy mini-batch SGD: what :mod:`dpconvex.accounting.noisy_sgd` certifies and calibrates.

Apart from the accountant so that a privacy ledger can hold the record without the bounds; pure,
and imports nothing of the library but the step's contraction (:mod:`.noisy_sgd_bounds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import noisy_sgd_bounds as nb

__all__ = ["BATCHINGS", "CLIPPINGS", "NoisySGDEvent"]

#: Batch orders: Poisson sampling, one random partition cycled every epoch, a fixed public partition.
BATCHINGS = ("poisson", "shuffled", "cyclic")
#: Per-example clipping: none, on a GLM / margin loss φ(θᵀx; y) (keeps F_B convex and M-smooth), other.
CLIPPINGS = ("none", "glm", "other")


@dataclass(frozen=True)
class NoisySGDEvent:
    """One run of noisy mini-batch SGD (the convention of :mod:`dpconvex.accounting.noisy_sgd`, which certifies it).

    Conventions.  Step k updates θ ← Π_C(θ − η·[(1/b)(Σ_{i∈B_k} ∇ℓ(θ; z_i) + σ·ξ_k) + ∇r(θ)]),
    ξ_k ~ N(0, I): σ is the standard deviation of the Gaussian noise added to the *sum* of the batch's
    per-example gradients, and the update divides by the nominal batch size b (a mean gradient).
    Neighbouring relation: replace-one (n fixed); ``sensitivity`` S_g bounds the change of one
    per-example gradient, so a step holding the differing record moves by at most ηS_g/b against
    noise of sd ησ/b, and z = σ/(S_g/2) is the DP-SGD noise multiplier.

    Theorems (:data:`.noisy_sgd.BOUNDS`, best of those that apply).  ``composition``: Poisson batches,
    the privacy-loss distribution of the Poisson-subsampled Gaussian (dp-accounting's
    ``PoissonSampledDpEvent``, replace-one); disjoint batches, the √E-fold Gaussian composition
    (Dong, Roth, Su 2019, arXiv:1905.02383, Cor. 3.3).  ``bok-cgd``: Bok, Su, Altschuler 2024
    (arXiv:2403.00278), Thm 4.5.  ``shifted-interpolation``: the same paper's Lemma C.3.
    ``exact-quadratic``: the exact Gaussian law of the loss ½‖θ − x‖² (Chourasia, Ye, Shokri 2021,
    arXiv:2102.05855, proof of Thm 3).  Every quantity these bounds use is a field (or a property
    derived from the fields).

    Parameters
    ----------
    n : int
        Number of records (replace-one neighbours keep n fixed).
    batch_size : int
        b, 1 ≤ b ≤ n: the batch size (Poisson: expected batch size, sampling rate q = b/n).
    batching : {"poisson", "shuffled", "cyclic"}
    epochs : int
        E ≥ 1; the run has T = E·⌈n/b⌉ steps.
    step_size : float
        η > 0.
    sigma : float
        σ > 0, standard deviation of the Gaussian noise added to the sum of per-example gradients.
    sensitivity : float
        S_g = sup ‖∇ℓ(θ; z) − ∇ℓ(θ; z')‖ (= 2L for L-bounded gradients).
    strong_convexity, smoothness : float
        m ≥ 0 and M ≥ m of every step objective (1/b)Σ_{i∈B}ℓ(·; z_i) + r.
    diameter : float or None
        Diameter D of the L2 ball C (None: C = R^d).
    permutation_secret : bool
        Shuffled runs only: the partition was never exposed.  (No implemented bound relies on it.)
    quadratic_loss : bool
        ℓ(θ; x) = ½‖θ − x‖² (unbounded gradients on R^d; S_g = 2·data-norm bound).
    last_iterate_only : bool
        Only θ_T is released (False: e.g. a mean of iterates; composition only).
    clipping : {"none", "glm", "other"}
        Per-example clipping: none, on a GLM / margin loss (keeps the declared m = λ and M), other.
    """

    n: int
    batch_size: int
    batching: str
    epochs: int
    step_size: float
    sigma: float
    sensitivity: float
    strong_convexity: float = 0.0
    smoothness: float = float("inf")
    diameter: float | None = None
    permutation_secret: bool = False
    quadratic_loss: bool = False
    last_iterate_only: bool = True
    clipping: str = "none"

    def __post_init__(self) -> None:
        def integer(v, lo):
            return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= lo

        checks = [
            ("n", integer(self.n, 1), "an integer >= 1"),
            ("batch_size", integer(self.batch_size, 1) and self.batch_size <= self.n, "an integer in [1, n]"),
            ("batching", self.batching in BATCHINGS, f"one of {BATCHINGS}"),
            ("epochs", integer(self.epochs, 1), "an integer >= 1"),
            ("step_size", math.isfinite(self.step_size) and self.step_size > 0, "finite and > 0"),
            ("sigma", math.isfinite(self.sigma) and self.sigma > 0, "finite and > 0"),
            ("sensitivity", math.isfinite(self.sensitivity) and self.sensitivity > 0, "finite and > 0"),
            ("strong_convexity", math.isfinite(self.strong_convexity) and self.strong_convexity >= 0,
             "finite and >= 0"),
            ("smoothness", self.smoothness >= self.strong_convexity, ">= strong_convexity"),
            ("diameter", self.diameter is None or (math.isfinite(self.diameter) and self.diameter > 0),
             "None or finite and > 0"),
            ("permutation_secret", not self.permutation_secret or self.batching == "shuffled",
             "False unless batching='shuffled' (a cyclic order is public; Poisson has no permutation)"),
            ("last_iterate_only", isinstance(self.last_iterate_only, bool), "a bool"),
            ("clipping", self.clipping in CLIPPINGS, f"one of {CLIPPINGS}"),
        ]
        for name, ok, valid in checks:
            if not ok:
                raise ValueError(f"{name} must be {valid}; got {getattr(self, name)!r}.")
        if self.quadratic_loss and self.strong_convexity != self.smoothness:
            raise ValueError("quadratic_loss=True needs strong_convexity == smoothness (1 + λ for the loss "
                             f"½‖θ − x‖² plus a ridge term); got {self.strong_convexity!r} and {self.smoothness!r}.")

    @property
    def batches(self) -> int:
        """l = ⌈n/b⌉ (batches per epoch; Poisson: steps per epoch)."""
        return -(-self.n // self.batch_size)

    @property
    def steps(self) -> int:
        """T = E·l."""
        return self.epochs * self.batches

    @property
    def sampling_rate(self) -> float:
        """q = b/n (Poisson)."""
        return self.batch_size / self.n

    @property
    def noise_multiplier(self) -> float:
        """z = σ/(S_g/2): the noise sd over one record's contribution bound (the DP-SGD noise multiplier)."""
        return self.sigma / (self.sensitivity / 2.0)

    @property
    def contraction(self) -> float:
        """c = max{|1 − ηm|, |1 − ηM|}."""
        return nb.contraction(self.step_size, self.strong_convexity, self.smoothness)
