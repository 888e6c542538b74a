"""The problem record every mechanism trains on: data access, loss, domain, declared bounds and privacy target.

A :class:`Problem` is built once at the boundary (:meth:`Problem.from_arrays` validates and clips
the data, checks the declarations) and then travels unchanged: a mechanism's ``plan(problem,
**options)`` resolves its hyperparameters and calibrates the noise from public quantities only
(n, d and the declarations, never the values), and its ``train(problem, plan, random_state)``
runs and certifies (:mod:`dpconvex.mechanisms.registry`).  The data reach the gradient through
one method, :meth:`~dpconvex.data.in_memory.InMemoryData.gradient_sum`, so that another data
backend can stand in for the in-memory arrays; a plan sees only the data's shape (:class:`DataShape`
where there are no data).
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from dpconvex.accounting._checks import check_positive
from dpconvex.data.checks import (
    ValidatedRows,
    check_privacy_budget,
    check_targets,
    enforce_label_bound,
    is_dask_collection,
    norm_bound_scale,
)
from dpconvex.data.checks import (
    check_training_rows as check_training_data,  # its checks, and the row norms of that pass
)
from dpconvex.data.in_memory import InMemoryData
from dpconvex.exceptions import PrivacyLeakWarning
from dpconvex.objectives.constraints import Constraint, Unconstrained
from dpconvex.objectives.losses import Loss, LossConstants, row_norms

if TYPE_CHECKING:  # the Dask backend is an optional extra, imported only for Dask collections
    from dpconvex.data.dask_data import DaskData

__all__ = ["PrivacyTarget", "DataShape", "InMemoryData", "Problem", "PROBLEM_KEYWORDS"]


@dataclass(frozen=True)
class PrivacyTarget:
    """What a run must meet at δ: a target ε (the mechanism calibrates its noise) or a given noise level σ.

    Parameters
    ----------
    delta : float
        δ of the certificate, in (0, 1).
    epsilon, sigma : float, optional
        Exactly one: the target ε > 0, or σ > 0 in the mechanism's own noise convention.

    Raises
    ------
    ValueError
        Naming the parameter and its range, or if both or neither of ``epsilon`` and ``sigma`` are given.
    """

    delta: float
    epsilon: float | None = None
    sigma: float | None = None

    def __post_init__(self) -> None:
        check_privacy_budget(1.0 if self.epsilon is None else self.epsilon, self.delta)
        if (self.epsilon is None) == (self.sigma is None):
            raise ValueError("give exactly one of epsilon (target) or sigma (noise level).")
        if self.sigma is not None:
            check_positive(self.sigma, "sigma")


@dataclass(frozen=True)
class DataShape:
    """All a plan may read of the data: ``n`` records of ``n_features`` features (for planning without data).

    Attributes
    ----------
    n, n_features : int
        The numbers of records and of features.
    """

    n: int
    n_features: int


@dataclass(frozen=True)
class Problem:
    """One training problem: the data access, the loss and its domain, the declared bounds, the privacy target.

    Build it with :meth:`from_arrays`, which validates the data once; a mechanism's plan reads
    only ``n``, ``dimension`` and the declarations.

    Attributes
    ----------
    data : InMemoryData, DaskData or DataShape
        The validated data (clipped to the declared bounds): in memory, or row blocks held by a
        Dask cluster (:class:`~dpconvex.data.dask_data.DaskData`); or only their shape, for planning.
    loss : Loss
        The per-example loss.
    l2_regularization : float or "auto"
        λ ≥ 0 in f = mean loss + (λ/2)‖w‖²; ``"auto"`` leaves it to the mechanism (``method="auto"`` only).
    constraint : Constraint or "auto"
        The projection's set; ``"auto"`` lets the mechanism choose its own ball.
    data_norm, label_bound : float
        Declared bounds on ‖x‖₂ and |y| (``label_bound`` None for classification).
    target : PrivacyTarget
        ε or σ, and δ.
    strict : bool
        Whether rows or targets beyond the bounds raised instead of being clipped.
    """

    data: InMemoryData | DaskData | DataShape
    loss: Loss
    l2_regularization: float | str
    constraint: Constraint | str
    data_norm: float
    label_bound: float | None
    target: PrivacyTarget
    strict: bool = False
    _constants: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.l2_regularization, str) and self.l2_regularization == "auto"):
            check_positive(cast(float, self.l2_regularization), "l2_regularization", zero=True)

    @classmethod
    def from_arrays(
        cls, X: NDArray | ValidatedRows, y: NDArray, *, loss: Loss, l2_regularization: float | str, delta: float,
        epsilon: float | None = None, sigma: float | None = None, data_norm: float = 1.0,
        label_bound: float | None = None, constraint: Constraint | str = Unconstrained(), strict: bool = False,
        require_smooth: bool = True,
    ) -> Problem:
        """Validate X and y once and record them with the declarations.

        The labels must be ones the loss accepts (:meth:`~dpconvex.objectives.losses.Loss.check_labels`);
        rows above ``data_norm`` and regression targets above ``label_bound`` are clipped with a
        :class:`~dpconvex.exceptions.PrivacyLeakWarning` (``strict``: ``ValueError``).  How many
        were clipped depends on the data, so it goes to the warning (seen by the data holder) and
        never into the certificate, which is released with the model: a count of clipped rows is
        itself a sensitivity-1 statistic published without noise.  A target δ ≥ 1/n also gets a
        ``PrivacyLeakWarning`` (:meth:`large_delta`): such a δ permits releasing a record outright.

        Parameters
        ----------
        X, y : array_like
            Features (n, d) and targets (n,): finite, at least one record and one feature.  A dask
            array X (with y a dask array or an ndarray) is validated block by block on the cluster of
            the current ``distributed`` client and stays there
            (:meth:`~dpconvex.data.dask_data.DaskData.from_array`; a violation names the block and row).
            A :class:`~dpconvex.data.dask_data.DaskData` (``y`` must be None: it holds the labels) is used
            as it is, once it is known to have been validated within ``data_norm`` and
            ``label_bound`` and, if ``strict``, under ``strict=True``.  A
            :class:`~dpconvex.data.checks.ValidatedRows` (an estimator's features, validated when it
            checked its input) is not read again: only y is checked.
        loss, l2_regularization, constraint, data_norm, label_bound, strict
            As the attributes of the class.
        delta, epsilon, sigma : float
            The :class:`PrivacyTarget`.
        require_smooth : bool
            Refuse a loss without a finite smoothness constant (every mechanism but
            ``sco_noisy_sgd`` and ``auto``, which trains non-smooth losses with it).

        Returns
        -------
        Problem
            The record, its data an :class:`~dpconvex.data.in_memory.InMemoryData` (a
            :class:`~dpconvex.data.dask_data.DaskData` for a dask array).

        Raises
        ------
        ValueError
            Naming the parameter or the data's fault and the valid range.
        """
        if require_smooth and not loss.smooth:
            raise ValueError(f"the {loss.name} loss is not smooth, and this method needs a smooth loss "
                             "(finite smoothness); use method='sco_noisy_sgd' (Arora, Marinov, Ullah).")
        # The declarations are checked before the data are read (a refused call reads nothing).
        problem = cls(DataShape(0, 0), loss, l2_regularization, constraint, data_norm, label_bound,
                      PrivacyTarget(delta, epsilon, sigma), strict)
        targets_bound = None if loss.classification else label_bound
        if _is_dask_data(X):  # validated when it was built
            if y is not None:
                raise ValueError("y must be None with a DaskData: its labels are already held with its rows "
                                 "(DaskData.from_array / from_dataframe took them).")
            _check_held_validation(X, data_norm, targets_bound, strict)
            X.check_labels(loss)
            return _warn_large_delta(dataclasses.replace(problem, data=X))
        if is_dask_collection(X):
            from dpconvex.data.dask_data import DaskData

            data: DaskData | InMemoryData = DaskData.from_array(  # X is a dask collection here
                X, y, data_norm=data_norm, label_bound=targets_bound, strict=strict, loss=loss)  # type: ignore[arg-type]
            return _warn_large_delta(dataclasses.replace(problem, data=data))
        if isinstance(X, ValidatedRows):  # validated by the caller, its norms computed in that pass
            rows = X
            X, y, norms = rows.X, check_targets(y, rows.X.shape[0]), rows.norms
        else:
            X, y, norms = check_training_data(X, y)  # X as given (float64 is not copied) and its row norms
        loss.check_labels(y)
        scale, _ = norm_bound_scale(norms, data_norm, strict=strict)  # the count stays in the warning
        if targets_bound is not None:
            y, _ = enforce_label_bound(y, targets_bound, strict=strict)
        data = InMemoryData(X, y, scale)  # the rows above data_norm are clipped where they are read
        if scale is not None:  # only the clipped rows' norms change: row_norms of the clipped rows
            over = np.flatnonzero(scale != 1.0)
            norms = norms.copy()  # the caller's ValidatedRows stay as validated
            norms[over] = row_norms(X.take(over, 0) * scale[over, None])
        data.__dict__["row_norms"] = norms  # the cached_property's slot: row_norms of the clipped rows, computed once
        return _warn_large_delta(dataclasses.replace(problem, data=data))

    @property
    def n(self) -> int:
        """Number of records."""
        return self.data.n

    @property
    def n_features(self) -> int:
        """Number of features."""
        return self.data.n_features

    @property
    def dimension(self) -> int:
        """Length of the parameter vector: d, or d·K for a K-class loss."""
        return self.loss.parameter_dimension(self.data.n_features)

    @property
    def l2(self) -> float:
        """λ as a number; ``ValueError`` for ``"auto"``, which only ``method="auto"`` resolves."""
        if self.l2_regularization == "auto":
            raise ValueError("l2_regularization='auto' is chosen by method='auto' only; give a number >= 0.")
        return cast(float, self.l2_regularization)

    def resolved_constraint(self) -> Constraint:
        """The constraint set; ``ValueError`` for ``"auto"``, which the mechanism's plan resolves before reading it."""
        if isinstance(self.constraint, str):
            raise ValueError(f"constraint={self.constraint!r} is not resolved: the mechanism's plan chooses its set "
                             "(base.resolve_constraint); give a constraint set, e.g. L2Ball(radius).")
        return self.constraint

    def in_memory(self) -> InMemoryData:
        """The data as in-memory arrays; ``ValueError`` for a Dask collection or a bare :class:`DataShape`."""
        if not isinstance(self.data, InMemoryData):
            raise ValueError(f"this method reads its data in memory (NumPy) only; the problem holds "
                             f"{type(self.data).__name__}.")
        return self.data

    def trainable_data(self) -> InMemoryData | DaskData:
        """The data a run reads (in memory or on a Dask cluster); ``ValueError`` for a bare :class:`DataShape`."""
        if isinstance(self.data, DataShape):
            raise ValueError("the problem holds only the data's shape (for planning); training needs the data.")
        return self.data

    def constants(self, constraint: Constraint, l2: float | None = None) -> LossConstants:
        """The loss's declared constants on ``constraint`` at λ = ``l2`` (default: :attr:`l2`), computed once."""
        l2 = self.l2 if l2 is None else l2
        key = (constraint, l2)
        if key not in self._constants:
            self._constants[key] = self.loss.constants(self.data_norm, l2, constraint, self.label_bound)
        return self._constants[key]

    def loss_at_zero(self) -> float:
        """The declared bound on ℓ(0; x, y) over the data domain
        (:meth:`~dpconvex.objectives.losses.Loss.loss_at_zero`)."""
        return self.loss.loss_at_zero(self.data_norm, self.label_bound)

    def large_delta(self) -> str | None:
        """Why the target δ is too large for n records, or None: δ ≥ 1/n permits releasing a record outright.

        Publishing each record with probability δ is (0, δ)-DP, and with δ ≥ 1/n it publishes one
        record or more on average: a guarantee at such a δ does not rule out a plain leak.  The
        field's practice is δ well below 1/n.  The one statement of this rule: :meth:`from_arrays`
        warns with it and every mechanism's certificate carries it as a note
        (``dpconvex.mechanisms._certify.certify``); ε is not changed.

        Returns
        -------
        str or None
            The sentence naming δ, n and 1/n, or None when δ < 1/n (or there are no records).
        """
        n, delta = self.n, self.target.delta
        if n < 1 or delta * n < 1:
            return None
        return (f"delta={delta:g} is at least 1/n = {1 / n:.3g} (n = {n} records): a guarantee at such a delta "
                "permits releasing a record outright (publishing each record with probability delta is "
                f"(0, delta)-DP); choose delta well below 1/n, e.g. 1/n^2 = {1 / n**2:.3g} or less")

    def declared_assumptions(self) -> dict:
        """The certificate's first assumptions: n, dimension, loss, data_norm, label_bound and λ."""
        return {"n": self.n, "dimension": self.dimension, "loss": self.loss.name, "data_norm": self.data_norm,
                "label_bound": self.label_bound, "l2_regularization": self.l2_regularization}


def _is_dask_data(X: object) -> bool:
    """Whether ``X`` is a :class:`~dpconvex.data.dask_data.DaskData`, told without importing Dask (an optional extra):
    an instance exists only once its module was imported."""
    module = sys.modules.get("dpconvex.data.dask_data")
    return module is not None and isinstance(X, module.DaskData)


def _warn_large_delta(problem: Problem) -> Problem:
    """``problem``, after a ``PrivacyLeakWarning`` if δ ≥ 1/n (:meth:`Problem.large_delta`)."""
    reason = problem.large_delta()
    if reason is not None:  # stacklevel: past from_arrays and an estimator's _fit_private and fit, to its caller
        warnings.warn(reason, PrivacyLeakWarning, stacklevel=5)
    return problem


def _check_held_validation(data: DaskData, data_norm: float, label_bound: float | None, strict: bool) -> None:
    """``ValueError`` unless ``data`` was validated at least as the caller asks.

    Its rows (targets) must have been validated within ``data_norm`` (``label_bound``), and, with
    ``strict``, under ``strict=True``: rows clipped to the bound are not the refusal ``strict`` asks
    for.  Data validated under ``strict=True`` also meet ``strict=False`` (nothing was clipped).
    """
    # A relative 1e-12 for rounding: √(c² + c²) and √2·c may differ in their last bit.
    if not data.norm_bound <= data_norm * (1 + 1e-12):
        raise ValueError(f"data_norm={data_norm!r} is below the bound the DaskData's rows were validated at "
                         f"({data.norm_bound!r}); declare data_norm >= {data.norm_bound!r}.")
    if label_bound is not None and (data.label_bound is None or not data.label_bound <= label_bound):
        raise ValueError(f"label_bound={label_bound!r} is below the bound the DaskData's targets were validated "
                         f"at ({data.label_bound!r}); build it with label_bound <= {label_bound!r}.")
    if strict and not data.strict:
        raise ValueError("strict=True, but the DaskData was validated with strict=False (rows or targets above their "
                         "bounds were clipped, not refused); build it with strict=True, or pass strict=False.")


#: The keywords of :meth:`Problem.from_arrays` that a public trainer shares (the others are its options).
PROBLEM_KEYWORDS: tuple[str, ...] = tuple(
    name for name, parameter in inspect.signature(Problem.from_arrays).parameters.items()
    if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "require_smooth")
