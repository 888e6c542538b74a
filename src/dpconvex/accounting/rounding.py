"""The certificate's rounding margin: every certified ε and computed sensitivity is rounded up.

A certified number is the output of a floating-point computation (a conversion, a discretised
privacy-loss distribution, a recursion), and two platforms or two releases of NumPy / SciPy may
round it differently.  So that a certificate never rests on the last digits of one machine, every
ε an accountant certifies (:class:`.best_of.PrivacyAccount`, the PNSGD and fresh-sample accounts)
and every sensitivity the output-perturbation replay computes is reported as

    certified = (1 + ROUNDING_MARGIN) · computed, rounded towards +∞,

and every calibration compares the *certified* value with the target (so the margin sits inside
the target: a fit asked for ε = 0.1 certifies at most 0.1).  Pure: imports nothing.

Why 10⁻⁵ (``docs/ACCOUNTANTS.md``, "Rounding margin").  It must dominate the numerical error of
every computation behind a certified number, which is at most a few 10⁻⁷ relative:

* closed forms and recursions (GDP, RDP, Langevin, the output-perturbation replay): a few ulps per
  operation over at most ~10⁵ operations, ≤ 10⁻¹⁰ relative; the searches that invert them
  (:mod:`.calibration`) stop at 10⁻¹⁰ … 10⁻¹² relative;
* the Poisson PLD: its FFT round-off is already counted as mass at infinite loss
  (:func:`.poisson_pld.roundoff_allowance`); what remains, the readings of dp-accounting's ε(δ)
  on two different machines' PMFs, differed by at most 1.2 × 10⁻⁶ relative between our
  vectorised PLD and dp-accounting's own (newest releases, the grid of
  ``tests/test_accounting_poisson_pld.py``), without that allowance.

Sources.  No privacy theorem lives here: the margin makes every theorem's bound hold for the
computed number.  Why floating point matters for a DP guarantee: I. Mironov, "On significance of the
least significant bits for differential privacy", ACM CCS 2012.  Rounding of a product and of
directed steps: IEEE 754-2008 (``nextafter`` gives the next representable double), and N. J.
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, Thm 2.2 (a product is
exact to a factor 1 + u) and ch. 3 (error of sums and recursions, the "≤ 10⁻¹⁰" above).

Its cost is a noise scale larger by at most a factor 1 + 10⁻⁵, far below the privacy noise.
Exact zeros and infinities are kept.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ROUNDING_MARGIN", "round_up", "round_up_array", "largest_rounding_within"]

#: Relative margin added to every certified ε and computed sensitivity (module docstring).
ROUNDING_MARGIN = 1e-5


def round_up(value: float) -> float:
    """``value`` · (1 + :data:`ROUNDING_MARGIN`), rounded towards +∞; 0, ∞ and nan are returned as they are.

    Parameters
    ----------
    value : float
        A computed ε (or any non-negative number).

    Returns
    -------
    float
        The certified value.
    """
    value = float(value)
    if value == 0.0 or not math.isfinite(value):
        return value
    return math.nextafter(value * (1.0 + ROUNDING_MARGIN), math.inf)


def round_up_array(values: ArrayLike) -> NDArray[np.float64]:
    """:func:`round_up` of every entry of ``values``.

    Parameters
    ----------
    values : array_like
        Computed values.

    Returns
    -------
    ndarray
        The rounded values, same shape.
    """
    values = np.asarray(values, dtype=float)
    rounded = np.nextafter(values * (1.0 + ROUNDING_MARGIN), np.inf)
    return np.where((values == 0.0) | ~np.isfinite(values), values, rounded)


def largest_rounding_within(target: float) -> float:
    """A computed value whose :func:`round_up` is at most ``target`` (for searches on the computed scale).

    ``target``/(1 + margin) moved down by two ulps: the product and the upward step of
    :func:`round_up` add at most one ulp each, so the result rounds up to at most ``target``.

    Parameters
    ----------
    target : float
        The certified value to stay within (0, ∞ and nan are returned as they are).

    Returns
    -------
    float
        The computed value.
    """
    target = float(target)
    if target == 0.0 or not math.isfinite(target):
        return target
    below = math.nextafter(math.nextafter(target / (1.0 + ROUNDING_MARGIN), 0.0), 0.0)
    assert round_up(below) <= target
    return below
