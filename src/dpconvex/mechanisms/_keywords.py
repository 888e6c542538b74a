"""The public trainers' keyword interface: their arguments become one problem record and the mechanism's options.

Every public trainer (``noisy_gd(X, y, *, loss=..., ...)``) writes its parameters out: the data and the
problem's keywords of :meth:`dpconvex.mechanisms.problem.Problem.from_arrays` (but ``require_smooth``),
then the keyword-only options of the mechanism's ``plan(problem, *, ...)`` with their defaults, then
``random_state`` (``tests/test_mechanism_signatures.py`` holds each trainer to that rule).  Its body
passes its arguments to :func:`train_with_keywords`, which refuses a data backend the method does not
read, validates the data once and runs the mechanism's ``plan`` and ``train``.  The planners of a data
shape (``plan_noisy_gd(n, dimension, ...)``) go through :func:`plan_for_shape` with the trainer's own
keywords and defaults.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from dpconvex.mechanisms.backends import require_backend
from dpconvex.mechanisms.problem import PROBLEM_KEYWORDS, DataShape, PrivacyTarget, Problem

__all__ = ["split_keywords", "train_with_keywords", "plan_for_shape"]


def split_keywords(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a public trainer's arguments into the problem's keywords and the rest (the mechanism's options).

    The problem's keywords are :data:`~dpconvex.mechanisms.problem.PROBLEM_KEYWORDS`.
    """
    declaration = {name: value for name, value in arguments.items() if name in PROBLEM_KEYWORDS}
    return declaration, {name: value for name, value in arguments.items() if name not in PROBLEM_KEYWORDS}


def train_with_keywords(method: str, plan: Callable, train: Callable, arguments: Mapping[str, Any], *,
                        require_smooth: bool = True) -> Any:
    """The body of a public trainer: build the problem from its arguments, plan, train.

    Parameters
    ----------
    method : str
        The mechanism's registry name: a data backend it does not read is refused before the data are
        read (:func:`~dpconvex.mechanisms.backends.require_backend`).
    plan, train : callable
        The mechanism's ``plan(problem, **options)`` and ``train(problem, plan, random_state)``.
    arguments : mapping
        The trainer's arguments by name (its ``locals()`` on entry): ``X``, ``y``,
        ``random_state``, the problem's keywords and the mechanism's options.
    require_smooth : bool
        Passed to :meth:`~dpconvex.mechanisms.problem.Problem.from_arrays`.

    Returns
    -------
    TrainingResult
        What ``train`` returns.
    """
    declaration, options = split_keywords(arguments)
    X, y, random_state = options.pop("X"), options.pop("y"), options.pop("random_state")
    require_backend(method, X, declaration["loss"])  # before the data are read
    problem = Problem.from_arrays(X, y, require_smooth=require_smooth, **declaration)
    return train(problem, plan(problem, **options), random_state)


def plan_for_shape(trainer: Callable, plan: Callable, n: int, dimension: int, keywords: Mapping[str, Any]) -> Any:
    """``plan`` for ``n`` records and a ``dimension``-vector parameter, from ``trainer``'s keywords and defaults.

    No data are read or validated (only the privacy target and λ are checked): for studies of a
    mechanism's configuration and for tests.

    Parameters
    ----------
    trainer : callable
        The public trainer whose keywords (and defaults) ``keywords`` follow.
    plan : callable
        The mechanism's ``plan(problem, **options)``.
    n, dimension : int
        Number of records and length of the parameter vector (d·K for a K-class loss).
    keywords : mapping
        The trainer's keyword arguments but the data.

    Returns
    -------
    object
        What ``plan`` returns.

    Raises
    ------
    ValueError
        If ``dimension`` is not a whole number of features for the loss (a multiple of K).
    """
    arguments = inspect.signature(trainer).bind_partial(**keywords)
    arguments.apply_defaults()
    declaration, options = split_keywords(arguments.arguments)
    options.pop("random_state", None)
    loss = declaration["loss"]
    outputs = loss.parameter_dimension(1)
    n_features, remainder = divmod(int(dimension), outputs)
    if remainder or n_features < 1:
        raise ValueError(f"dimension must be a positive multiple of {outputs} for the {loss.name} loss "
                         f"(n_features times its {outputs} outputs); got {dimension!r}.")
    target = PrivacyTarget(declaration.pop("delta"), declaration.pop("epsilon"), declaration.pop("sigma"))
    return plan(Problem(DataShape(n, n_features), target=target, **declaration), **options)
