"""Argument checks shared by mechanisms and estimators: the privacy budget, the random state, the input's kind.

Besides the rows (:mod:`dpconvex.data.checks`, which re-exports every name here): the (ε, δ) budget a
mechanism is asked for, the generator of its noise, whether an input is a Dask collection or a pandas
DataFrame that needs encoding, and the mark that a feature matrix's encoding was read from the private
data (which voids the guarantee of any model fitted on it).  Errors name the parameter and its range.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting._checks import check_delta, check_epsilon

__all__ = ["check_privacy_budget", "make_rng", "is_dask_collection", "check_frame", "DataDependentFeatures",
           "mark_data_dependent", "input_leaks"]


def check_privacy_budget(epsilon: float, delta: float) -> None:
    """Raise ``ValueError`` unless ε is a finite real number > 0 and δ a real number in (0, 1).

    The ranges are the accountants' own (:func:`dpconvex.accounting._checks.check_epsilon`,
    :func:`~dpconvex.accounting._checks.check_delta`); on top of them a mechanism's budget must be a
    real number (not an array or a string).

    Parameters
    ----------
    epsilon : float
        ε, finite and > 0.
    delta : float
        δ in (0, 1).

    Raises
    ------
    ValueError
        Naming the parameter and its range.
    """
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if not isinstance(value, numbers.Real):
            raise ValueError(f"{name} must be a real number; got {name}={value!r}.")
    check_epsilon(epsilon)
    check_delta(delta)


def make_rng(random_state: None | int | np.random.Generator | np.random.RandomState) -> np.random.Generator:
    """The generator that draws a mechanism's noise.

    ``None`` (the default, and the only choice for a release) gives a generator seeded from the
    operating system's entropy pool.  An ``int``, ``Generator`` or ``RandomState`` gives a
    reproducible stream, for experiments and tests only.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        A ``Generator`` is used as it is (not copied); a ``RandomState`` seeds a new generator from
        one draw of its stream.

    Returns
    -------
    numpy.random.Generator
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, numbers.Integral):
        return np.random.default_rng(int(random_state))
    raise ValueError(f"random_state must be None, an int, a numpy Generator or a RandomState; got {random_state!r}.")


def is_dask_collection(X: object) -> bool:
    """Whether ``X`` is a Dask collection (array, DataFrame, Series), told without importing Dask.

    Parameters
    ----------
    X : object
        Any input.

    Returns
    -------
    bool
        Its type comes from ``dask`` (or ``dask_expr``) and it has a task graph.
    """
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr") and hasattr(X, "__dask_graph__")


def check_frame(X: object) -> None:
    """For a pandas DataFrame X: ``ValueError`` naming its non-numeric columns or its columns with
    missing values, and what to do (encode them with a declared schema); other inputs pass through.

    scikit-learn would stop at the first bad cell ("could not convert string to float", "Input X
    contains NaN") without naming the column.

    Parameters
    ----------
    X : object
        The features; only a two-dimensional pandas object is checked.

    Raises
    ------
    ValueError
        Naming up to ten non-numeric columns (booleans count as numeric), else up to ten columns with
        missing values.
    """
    if not type(X).__module__.startswith("pandas") or not hasattr(X, "dtypes") or getattr(X, "ndim", 0) != 2:
        return
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    text = [column for column, dtype in X.dtypes.items() if not (is_numeric_dtype(dtype) or is_bool_dtype(dtype))]
    if text:
        raise ValueError(f"X has non-numeric columns {_named(text)}: encode them with a declared schema first, "
                         "e.g. dpconvex.estimators.preprocessing.PublicSchemaTransformer in a Pipeline before the "
                         "estimator.")
    missing = [column for column, any_missing in X.isna().any().items() if any_missing]
    if missing:
        raise ValueError(f"X has missing values in columns {_named(missing)}: declare a fill value for them "
                         "(PublicSchemaTransformer's numeric_fill, which adds a missing-value indicator), or "
                         "remove those rows.")


def _named(columns: list) -> str:
    """The first ten of ``columns`` as text (`` ...`` when there are more), for :func:`check_frame`'s errors."""
    return f"{[str(c) for c in columns[:10]]}{' ...' if len(columns) > 10 else ''}"


class DataDependentFeatures(np.ndarray):
    """Features whose encoding was read from the private data: no model fitted on them has a guarantee.

    :class:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer` returns this array (a float ndarray with
    the attribute ``privacy_leak``, the reason) for a data-dependent schema, so that an estimator
    fitted on its output in a ``Pipeline`` voids its own certificate (:func:`input_leaks`).  Slices
    and copies keep the reason, and so does stacking it beside other columns (``np.hstack``,
    ``np.concatenate``, ``np.column_stack``: what scikit-learn's ``ColumnTransformer`` does with its
    transformers' outputs); ``numpy.asarray`` drops it (validation happens after it is read).

    Attributes
    ----------
    privacy_leak : str
        Why the encoding depends on the private data (empty: no mark).
    """

    privacy_leak: str = ""

    def __array_finalize__(self, source: object) -> None:
        self.privacy_leak = getattr(source, "privacy_leak", "")

    def __array_function__(self, func, types, args, kwargs):
        result = super().__array_function__(func, types, args, kwargs)
        if func in _STACKING and isinstance(result, np.ndarray):
            reasons = [getattr(part, "privacy_leak", "") for part in args[0]]
            reason = "; ".join(dict.fromkeys(r for r in reasons if r))
            if reason:
                result = mark_data_dependent(result, reason)
        return result


#: The numpy functions that stack arrays side by side or on top of each other: their result keeps the mark.
_STACKING = frozenset({np.concatenate, np.hstack, np.vstack, np.column_stack, np.stack})


def mark_data_dependent(features: NDArray[np.float64], reason: str) -> DataDependentFeatures:
    """``features`` as :class:`DataDependentFeatures` carrying ``reason``.

    Parameters
    ----------
    features : array_like
        The encoded features (converted to float; a float64 array is viewed, not copied).
    reason : str
        What was read from the private data (becomes ``privacy_leak``).

    Returns
    -------
    DataDependentFeatures
    """
    marked = np.asarray(features, dtype=float).view(DataDependentFeatures)
    marked.privacy_leak = reason
    return marked


def input_leaks(X: object) -> tuple[str, ...]:
    """The reasons a feature matrix voids the guarantee: ``(X.privacy_leak,)`` if it carries one, else ``()``.

    Parameters
    ----------
    X : object
        The features an estimator was given (before any conversion, which would drop the mark).

    Returns
    -------
    tuple of str
    """
    reason = getattr(X, "privacy_leak", "")
    return (reason,) if isinstance(reason, str) and reason else ()
