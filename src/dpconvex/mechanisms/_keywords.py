"""The public trainers' keyword interface: their arguments become one problem record and the mechanism's options.

Every public trainer (``noisy_gd(X, y, *, loss=..., ...)``) has the signature :func:`keyword_signature`
builds from the two places that define its keywords: :meth:`dpconvex.mechanisms.problem.Problem.from_arrays` (the
data and the problem's keywords) and the mechanism's ``plan(problem, *, ...)`` (its options and their
defaults).  Its body passes its arguments to :func:`train_with_keywords`, which validates the data once
and runs the mechanism's ``plan`` and ``train``.  The planners of a data shape
(``plan_noisy_gd(n, dimension, ...)``) go through :func:`plan_for_shape` with the trainer's own
keywords and defaults.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dpconvex.data.checks import is_dask_collection
from dpconvex.mechanisms.problem import PROBLEM_KEYWORDS, DataShape, PrivacyTarget, Problem
from dpconvex.objectives.losses import Loss

__all__ = ["RANDOM_STATE", "keyword_signature", "split_keywords", "train_with_keywords", "plan_for_shape",
           "data_backend", "require_backend"]

Result = TypeVar("Result")

#: The last keyword of every public trainer: the seed of ``train(problem, plan, random_state)``.
RANDOM_STATE = inspect.Parameter("random_state", inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation="None | int | np.random.Generator")


def keyword_signature(plan: Callable[..., Any], **defaults: Any
                      ) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Decorator: the public trainer ``trainer(**arguments)`` of the mechanism planned by ``plan``, with its signature.

    The signature is ``(X, y, *, <problem keywords>, <options>, random_state=None)``: the parameters
    of :meth:`~dpconvex.mechanisms.problem.Problem.from_arrays` but ``require_smooth`` (the data and
    :data:`~dpconvex.mechanisms.problem.PROBLEM_KEYWORDS`), then the keyword-only parameters of
    ``plan(problem, *, ...)`` (the mechanism's options, with their defaults), then
    :data:`RANDOM_STATE`.  It is the trainer's ``__signature__`` (what :func:`inspect.signature`,
    ``help`` and the API reference show); a call is bound to it as to any function's (an unknown,
    missing or repeated argument is a ``TypeError`` naming it), and ``trainer`` receives every
    argument by name, the defaults applied.

    Parameters
    ----------
    plan : callable
        The mechanism's ``plan(problem, *, option=default, ...)``.
    **defaults
        The trainer's own defaults of problem keywords, where they differ from ``from_arrays``'s
        (e.g. ``constraint="auto"``).

    Returns
    -------
    callable
        The decorator; it keeps the trainer's name, docstring and return annotation.

    Raises
    ------
    TypeError
        If ``defaults`` names a keyword that is not a problem keyword.
    """
    problem = [parameter for name, parameter in inspect.signature(Problem.from_arrays).parameters.items()
               if name != "require_smooth"]
    unknown = set(defaults) - {parameter.name for parameter in problem}
    if unknown:
        raise TypeError(f"defaults may only set problem keywords {PROBLEM_KEYWORDS}; got {sorted(unknown)}.")
    options = [parameter for parameter in inspect.signature(plan).parameters.values()
               if parameter.kind is inspect.Parameter.KEYWORD_ONLY]
    parameters = ([parameter.replace(default=defaults.get(parameter.name, parameter.default)) for parameter in problem]
                  + options + [RANDOM_STATE])

    def decorate(trainer: Callable[..., Result]) -> Callable[..., Result]:
        signature = inspect.Signature(parameters, return_annotation=inspect.signature(trainer).return_annotation)

        @functools.wraps(trainer)
        def bound_trainer(*args: Any, **kwargs: Any) -> Result:
            try:
                arguments = signature.bind(*args, **kwargs)
            except TypeError as error:  # as Python words it for a function's own signature, with its name
                raise TypeError(f"{trainer.__name__}() {error}") from None
            arguments.apply_defaults()
            return trainer(**arguments.arguments)

        bound_trainer.__signature__ = signature
        return bound_trainer

    return decorate


def split_keywords(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a public trainer's arguments into the problem's keywords and the rest (the mechanism's options).

    The problem's keywords are :data:`~dpconvex.mechanisms.problem.PROBLEM_KEYWORDS`.
    """
    declaration = {name: value for name, value in arguments.items() if name in PROBLEM_KEYWORDS}
    return declaration, {name: value for name, value in arguments.items() if name not in PROBLEM_KEYWORDS}


def data_backend(data: object) -> str:
    """The data backend of ``data``, told without reading it: ``"dask"`` for a dask collection, else its ``backend``.

    ``data`` is what a trainer was handed (arrays, a dask array or DataFrame, a
    :class:`~dpconvex.data.dask_data.DaskData`) or a problem's data (``InMemoryData``, ``DaskData``,
    ``DataShape``); anything without a ``backend`` of its class is ``"numpy"``.
    """
    return "dask" if is_dask_collection(data) else getattr(type(data), "backend", "numpy")


def require_backend(method: str, data: object, loss: Loss) -> None:
    """``ValueError`` unless ``method`` reads the backend of ``data``, naming the methods that do.

    Call it before any pass over the data: it reads only the type of ``data`` (:func:`data_backend`),
    so a method that cannot train on a Dask collection is refused before the collection is read.
    The backends of a method are its registry entry's ``backends``
    (:data:`dpconvex.mechanisms.registry.REGISTRY`); ``method="auto"`` stands for the mechanism
    ``auto`` trains ``loss`` with (:func:`dpconvex.mechanisms.auto.trained_method`).
    """
    backend = data_backend(data)
    if backend == "numpy":  # every method reads memory (tests/test_registry.py)
        return
    from dpconvex.mechanisms.auto import trained_method  # auto and the registry import this module
    from dpconvex.mechanisms.registry import REGISTRY

    if method == "auto":
        method = trained_method(loss)
    if method not in REGISTRY or backend in REGISTRY[method].backends:  # an unknown method: its plan refuses it
        return
    supported = [name for name, spec in REGISTRY.items() if backend in spec.backends]
    raise ValueError(f"method={method!r} reads its data in memory (NumPy) only and cannot train on a {backend} "
                     f"collection; the methods that can are {supported}. Use one of them, or load the data into "
                     "memory (e.g. X.compute()) if it fits.")


def train_with_keywords(method: str, plan: Callable, train: Callable, arguments: Mapping[str, Any], *,
                        require_smooth: bool = True) -> Any:
    """The body of a public trainer: build the problem from its arguments, plan, train.

    Parameters
    ----------
    method : str
        The mechanism's registry name: a data backend it does not read is refused before the data are
        read (:func:`require_backend`).
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
