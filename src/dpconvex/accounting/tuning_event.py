"""The event record of private selection (the best of a random number K of runs) and the laws of K.

What :mod:`.hyperparameter_tuning` certifies and calibrates (Papernot & Steinke 2022,
"Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022, arXiv:2110.03620: Def. 1 for
the truncated negative binomial law, Thms 2 and 6 for the bounds; statements in
:mod:`.hyperparameter_tuning`).  Apart from the accountant so that a privacy ledger can hold the
record without the bounds; pure, and imports nothing of the library but :mod:`.gdp` (the exact δ of a
μ-GDP base) and the argument checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from . import gdp
from ._checks import check_open_unit, check_orders, check_positive

__all__ = ["TruncatedNegativeBinomial", "PoissonRepetitions", "RepetitionLaw", "TuningEvent"]


@dataclass(frozen=True)
class TruncatedNegativeBinomial:
    """The law D_{η,γ} of the number of runs (Papernot & Steinke 2022, Def. 1; module docstring).

    Parameters
    ----------
    shape : float
        η ∈ (−1, ∞): 0 is the logarithmic law, 1 the geometric law.
    gamma : float
        γ ∈ (0, 1); the smaller, the more runs.
    """

    shape: float
    gamma: float

    def __post_init__(self) -> None:
        if not (isinstance(self.shape, (int, float)) and not isinstance(self.shape, bool)
                and math.isfinite(self.shape) and self.shape > -1.0):
            raise ValueError(f"shape must be a finite number > -1 (eta of the truncated negative binomial); "
                             f"got shape={self.shape!r}.")
        check_open_unit(self.gamma, "gamma")

    @classmethod
    def with_mean(cls, mean: float, shape: float) -> TruncatedNegativeBinomial:
        """The law of shape η whose mean E[K] is ``mean`` (> 1), γ solved to machine precision.

        E[K] decreases from ∞ (γ → 0) to 1 (γ → 1), so the root is unique; the law's own ``mean``
        (computed from γ) is what every bound uses.
        """
        if not (isinstance(mean, (int, float)) and not isinstance(mean, bool) and math.isfinite(mean) and mean > 1.0):
            raise ValueError(f"mean must be a finite number > 1 (the expected number of runs); got mean={mean!r}.")
        from scipy.optimize import brentq  # here: scipy.optimize takes 0.4 s to import

        probe = cls(shape, 0.5)  # validates the shape
        log_gamma = brentq(lambda t: math.log(_tnb_mean(probe.shape, math.exp(t))) - math.log(mean),
                           math.log(1e-300), math.log1p(-1e-15), xtol=1e-15, rtol=4 * np.finfo(float).eps)
        return cls(float(shape), math.exp(log_gamma))

    @property
    def mean(self) -> float:
        """E[K]."""
        return _tnb_mean(self.shape, self.gamma)

    def log_pmf(self, k: ArrayLike) -> NDArray[np.float64]:
        """log P[K = k] for integers k ≥ 1 (vectorised; −inf below 1)."""
        k = np.asarray(k, dtype=float)
        eta, log_q = float(self.shape), math.log1p(-self.gamma)
        safe = np.maximum(k, 1.0)
        if eta == 0.0:
            out = safe * log_q - np.log(safe) - math.log(-math.log(self.gamma))
        else:
            # |∏(ℓ + η)/(ℓ + 1)| = |Γ(k + η)/(Γ(η) k!)| and |γ^{−η} − 1| (both negative for η < 0)
            out = (safe * log_q + gammaln(safe + eta) - gammaln(safe + 1.0) - gammaln(eta)
                   - math.log(abs(math.expm1(-eta * math.log(self.gamma)))))
        return np.where(k >= 1.0, out, -np.inf)

    def sample(self, rng: np.random.Generator) -> int:
        """One draw of K, by inversion of the distribution function (``rng.random()`` once).

        Walks k = 1, 2, … accumulating P[K = k] (ratio P[k + 1]/P[k] = (1 − γ)(k + η)/(k + 1)) until
        the sum passes the uniform draw.  Should rounding keep the sum below a draw within ~1e-16
        of 1, the walk ends where the terms underflow to 0.
        """
        u = rng.random()
        k, term = 1, float(np.exp(self.log_pmf(1)))
        total = term
        while total < u and term > 0.0:
            term *= (1.0 - self.gamma) * (k + self.shape) / (k + 1.0)
            total += term
            k += 1
        return k

    def describe(self) -> str:
        """The law in words, for certificates."""
        name = {0.0: "logarithmic", 1.0: "geometric"}.get(float(self.shape), "truncated negative binomial")
        return f"{name} (eta={self.shape:g}, gamma={self.gamma:.6g}, E[K]={self.mean:.6g})"


def _tnb_mean(eta: float, gamma: float) -> float:
    """E[K] of D_{η,γ} (module docstring), without cancellation near η = 0 and γ = 1."""
    log_gamma = math.log(gamma)
    if eta == 0.0:
        return -math.expm1(log_gamma) / (gamma * -log_gamma)
    return eta * -math.expm1(log_gamma) / (gamma * -math.expm1(eta * log_gamma))


@dataclass(frozen=True)
class PoissonRepetitions:
    """K ~ Poisson(mean) (Papernot & Steinke 2022, Thm 6); K = 0 releases a fixed, data-independent output.

    Parameters
    ----------
    mean : float
        μ_K = E[K] ≥ 1.
    """

    mean: float

    def __post_init__(self) -> None:
        if not (isinstance(self.mean, (int, float)) and not isinstance(self.mean, bool) and math.isfinite(self.mean)
                and self.mean >= 1.0):
            raise ValueError("mean must be a finite number >= 1 (the expected number of runs); "
                             f"got mean={self.mean!r}.")

    def log_pmf(self, k: ArrayLike) -> NDArray[np.float64]:
        """log P[K = k] for integers k ≥ 0 (vectorised; −inf below 0)."""
        k = np.asarray(k, dtype=float)
        safe = np.maximum(k, 0.0)
        return np.where(k >= 0.0, safe * math.log(self.mean) - self.mean - gammaln(safe + 1.0), -np.inf)

    def sample(self, rng: np.random.Generator) -> int:
        """One draw of K (``rng.poisson``)."""
        return int(rng.poisson(self.mean))

    def describe(self) -> str:
        """The law in words, for certificates."""
        return f"Poisson (E[K]={self.mean:g})"


#: The laws of K the accountant knows.
RepetitionLaw = TruncatedNegativeBinomial | PoissonRepetitions


@dataclass(frozen=True)
class TuningEvent:
    """The best of K runs of a base mechanism Q, K drawn from ``law``; K and the other runs stay secret.

    Give exactly one description of Q: ``base_mu`` (Q is μ-GDP) or its RDP curve
    (``base_orders``, ``base_rdp``: Q is (α, r)-RDP at each pair; a curve event is evaluated at
    its own orders).

    Conventions.  Q's noise, sensitivity and gradient convention are its own: the record only holds
    the privacy curve they give Q (μ, or the RDP curve), in Q's neighbouring relation, replace-one
    throughout this library (the theorems hold for whichever relation Q's curve is stated in).  The
    per-run budget ``base_mu`` plays the part of the noise level, inverted: calibrating the selection
    sets μ (a larger μ is less noise).  Theorems: Papernot & Steinke 2022 (arXiv:2110.03620), Thm 2 for
    a truncated negative binomial K, Thm 6 for a Poisson K (:mod:`.hyperparameter_tuning`); every
    quantity they use (the law's η, γ and E[K], Q's curve) is a field or derived from one.

    Parameters
    ----------
    law : TruncatedNegativeBinomial or PoissonRepetitions
    base_mu : float, optional
        μ > 0 of Q's μ-GDP guarantee.
    base_orders, base_rdp : tuple of float, optional
        Q's RDP curve (orders > 1, values ≥ 0, equal lengths).
    """

    law: RepetitionLaw
    base_mu: float | None = None
    base_orders: tuple[float, ...] | None = None
    base_rdp: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.law, (TruncatedNegativeBinomial, PoissonRepetitions)):
            raise ValueError(f"law must be a TruncatedNegativeBinomial or a PoissonRepetitions; got {self.law!r}.")
        curve = self.base_orders is not None or self.base_rdp is not None
        if (self.base_mu is None) == (not curve):
            raise ValueError("give exactly one description of the base: base_mu, or base_orders with base_rdp.")
        if self.base_mu is not None:
            check_positive(self.base_mu, "base_mu")
            return
        orders = check_orders(np.asarray(self.base_orders, dtype=float), "base_orders")
        values = np.asarray(self.base_rdp, dtype=float)
        if orders.ndim != 1 or orders.size == 0 or values.shape != orders.shape:
            raise ValueError("base_orders and base_rdp must be non-empty sequences of the same length.")
        if np.any(np.isnan(values)) or np.any(values < 0.0):
            raise ValueError("base_rdp values must be >= 0 (not nan).")

    @classmethod
    def from_curve(cls, law: RepetitionLaw, orders: ArrayLike, rdp: ArrayLike) -> TuningEvent:
        """The event of a base given by its RDP curve (arrays accepted)."""
        return cls(law, base_orders=tuple(np.asarray(orders, dtype=float).tolist()),
                   base_rdp=tuple(np.asarray(rdp, dtype=float).tolist()))

    def orders(self, requested: ArrayLike) -> NDArray[np.float64]:
        """The orders the bounds are evaluated at: ``requested`` for a GDP base, the curve's own otherwise."""
        return np.asarray(requested if self.base_orders is None else self.base_orders, dtype=float)

    def base_curve(self, orders: NDArray[np.float64]) -> NDArray[np.float64]:
        """Q's RDP at ``orders`` (for a curve base, ``orders`` must be :meth:`orders`' answer)."""
        return orders * self.base_mu**2 / 2.0 if self.base_mu is not None else np.asarray(self.base_rdp, dtype=float)

    def base_delta(self, epsilon: NDArray[np.float64]) -> NDArray[np.float64]:
        """δ of Q at each ε (exact for a GDP base; the improved RDP conversion for a curve: note 3)."""
        if self.base_mu is not None:
            return gdp.gdp_delta(epsilon, self.base_mu)
        from dp_accounting.rdp.rdp_privacy_accountant import compute_delta  # here: the package loads in ~1 s

        orders, rdp = list(cast(tuple, self.base_orders)), list(cast(tuple, self.base_rdp))
        return np.array([compute_delta(orders, rdp, float(e))[0] for e in np.atleast_1d(epsilon)])
