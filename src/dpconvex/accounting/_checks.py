"""The one set of argument checks of the privacy parameters: ε, δ, RDP orders and tolerances.

Every accountant and :mod:`.calibration` checks its ε, δ, orders and ``rtol`` here, and so does
``dpconvex._validation.check_privacy_budget`` (the mechanisms' check).  A value outside its
range, or not a number (a string, ``None``, a bool: ``True`` is not ε = 1), raises ``ValueError``
naming the parameter, its valid range and the value given, e.g. ``delta must lie in the open
interval (0, 1); got delta=1.5.``  Pure; imports nothing of the library.

Sources of the ranges (no privacy formula lives here).  (ε, δ)-DP: Dwork & Roth, *The Algorithmic
Foundations of Differential Privacy* (2014), Def. 2.4 — ε ≥ 0 and δ ∈ [0, 1]; the library
certifies only ε > 0 and δ ∈ (0, 1) (δ = 0 has no finite ε for the Gaussian mechanism, δ = 1 says
nothing), hence the open ranges.  Rényi DP: Mironov 2017 (arXiv:1702.07476), Def. 3 — orders α > 1
(α = 1 is the KL limit, which the accountants do not evaluate).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["check_delta", "check_epsilon", "check_nonnegative", "check_open_unit", "check_orders", "check_positive",
           "check_positive_array"]


def _refuse(name: str, valid: str, value: object) -> ValueError:
    """The error for ``name`` outside its range; ``valid`` completes "<name> must ..."."""
    return ValueError(f"{name} must {valid}; got {name}={value!r}.")


def _checked(value: ArrayLike, name: str, valid: str, ok: Callable[[NDArray[np.float64]], object], *,
             scalar: bool) -> NDArray[np.float64]:
    """``value`` as a float array if ``ok`` holds for it (and it is 0-d when ``scalar``), else the error.

    A value that is not a number (a string, an object, a bool or an array of bools) is refused
    like one out of range.
    """
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise _refuse(name, valid, value)
    if np.asarray(value).dtype == np.bool_:
        raise _refuse(name, valid, value)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise _refuse(name, valid, value) from None
    if (scalar and arr.ndim != 0) or not ok(arr):
        raise _refuse(name, valid, value)
    return arr


def check_positive(value: float, name: str, *, zero: bool = False) -> float:
    """``value`` as a float, or ``ValueError`` unless it is a finite number > 0 (>= 0 with ``zero=True``).

    Parameters
    ----------
    value : float
        The argument (a scalar: a 0-d array is accepted, a longer one is not).
    name : str
        The parameter's name, for the message.
    zero : bool, default False
        Whether 0 is allowed.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``name``, its range and ``value``, if ``value`` is not a finite number in range
        (a string, ``None``, a bool and an array of more than one entry are refused).
    """
    valid = "be finite and >= 0" if zero else "be finite and > 0"
    return float(_checked(value, name, valid, lambda x: np.isfinite(x) and (x >= 0.0 if zero else x > 0.0),
                          scalar=True))


def check_positive_array(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """``values`` as a float array, or ``ValueError`` unless every entry is finite and > 0 (vectorised).

    Parameters
    ----------
    values : array_like
        The argument, of any shape (e.g. a noise scale σ broadcast against ε).
    name : str
        The parameter's name, for the message.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Naming ``name``, its range and ``values``, if some entry is not finite and > 0 or not a number.
    """
    return _checked(values, name, "be finite and > 0", lambda x: np.all(np.isfinite(x) & (x > 0.0)), scalar=False)


def check_epsilon(epsilon: float, name: str = "epsilon", *, zero: bool = False) -> float:
    """A privacy loss ε (a target, or where a δ(ε) curve is read): :func:`check_positive` named ``epsilon``.

    Parameters
    ----------
    epsilon : float
        ε (a scalar).
    name : str, default "epsilon"
        The parameter's name, for the message.
    zero : bool, default False
        Whether ε = 0 is allowed (where a curve is read at 0).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``name``, its range and the value, if ε is not a finite number > 0 (>= 0 with
        ``zero=True``): ``inf``, ``nan``, a string, ``None``, a bool (``True`` is not ε = 1) or an array.
    """
    return check_positive(epsilon, name, zero=zero)


def check_open_unit(value: float, name: str) -> float:
    """``value`` as a float, or ``ValueError`` unless it lies in the open interval (0, 1).

    Parameters
    ----------
    value : float
        The argument (a scalar), e.g. δ or a relative tolerance ``rtol``.
    name : str
        The parameter's name, for the message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``name``, its range and ``value``, if ``value`` is not a number in (0, 1).
    """
    return float(_checked(value, name, "lie in the open interval (0, 1)", lambda x: 0.0 < x < 1.0, scalar=True))


def check_delta(delta: float, name: str = "delta") -> float:
    """The δ of an (ε, δ) guarantee: :func:`check_open_unit` named ``delta``.

    Parameters
    ----------
    delta : float
        δ (a scalar).
    name : str, default "delta"
        The parameter's name, for the message.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``name``, its range and the value, if δ is not a number in the open interval
        (0, 1): 0, 1, ``nan``, a string, ``None`` or a bool.
    """
    return check_open_unit(delta, name)


def check_nonnegative(values: ArrayLike, name: str, *, finite: bool = True) -> NDArray[np.float64]:
    """``values`` as a float array, or ``ValueError`` unless every entry is >= 0 (and finite, by default).

    Parameters
    ----------
    values : array_like
        Where a δ(ε) curve is read (ε, vectorised), or another non-negative argument of a curve.
    name : str
        The parameter's name, for the message.
    finite : bool, default True
        Whether ``inf`` is refused (``nan`` always is).

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Naming ``name``, its range and ``values``, if some entry is out of range or not a number.
    """
    valid = "be finite and >= 0" if finite else "be >= 0 (not nan)"
    return _checked(values, name, valid, lambda x: np.all((x >= 0.0) & (np.isfinite(x) | (not finite))), scalar=False)


def check_orders(orders: ArrayLike, name: str = "orders") -> NDArray[np.float64]:
    """``orders`` as a float array, or ``ValueError`` unless every Rényi order α is finite and > 1.

    Parameters
    ----------
    orders : array_like
        RDP orders (any shape: a caller that needs a non-empty 1-D grid checks the shape itself).
    name : str, default "orders"
        The parameter's name, for the message.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Naming ``name``, its range and ``orders``, if some order is not a finite number > 1.
    """
    return _checked(orders, name, "be finite and > 1", lambda x: np.all(np.isfinite(x) & (x > 1.0)), scalar=False)
