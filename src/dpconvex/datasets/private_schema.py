"""Private schema discovery: a :class:`~dpconvex.datasets.tabular.TabularSchema` read from the private data
under a GDP certificate.

:func:`discover_schema` reads what :meth:`~dpconvex.datasets.tabular.TabularSchema.infer` reads
(which columns are numerical, their bounds, the categories of the others, the label set or the
target's bounds), each through a Gaussian mechanism of :mod:`dpconvex.datasets.private_counts`,
and returns the schema with a :class:`DiscoveryRecord` of its privacy cost: ``mu``-GDP plus an
additive ``delta``.  Conventions: replace-one neighbours, n and the header public.

* Which columns are numerical (:func:`decide_numerical`): a noisy count of the cells that parse as
  numbers, of those that do not and of the missing ones (a record is in one of the three: sensitivity
  √2, μ-GDP); numerical if the first is at least :data:`NUMERIC_SHARE` of the noisy present count
  n − (noisy missing count).  Columns declared in ``categorical_columns``/``numerical_columns`` skip it.
* Bounds: :func:`~dpconvex.datasets.private_counts.private_bounds` (grid-rounded private quantiles).
* Categories and the label set: :func:`~dpconvex.datasets.private_counts.select_partitions`
  (Gaussian thresholding).

Budget (:func:`split_discovery_budget`): the k tasks (one type decision per undeclared column, one
discovery per column, one for the target unless ``positive_label`` declares it) share μ² by
weight (:data:`TYPE_WEIGHT` for a type decision, 1 for a column, :data:`TARGET_WEIGHT` for the
target; fixed before any record is read), μ_i = μ·√(w_i/Σw), so Σμ_i² = μ²: by Dong, Roth, Su
2019 (arXiv:1905.02383) Thm 3.2 and Cor. 3.3 the adaptive composition is μ-GDP on the Gaussian
parts.  Every task that may run a partition selection (undeclared and categorical columns, a
classification target) gets δ_τ = ``delta``/(their number); the fresh-value events add their δ_τ
(derivation in :mod:`dpconvex.datasets.private_counts`), so the discovery's δ(ε) ≤ δ_μ(ε) +
``delta`` for every ε.  Composed with a μ₂-GDP training run on the encoded data (the feature map
is record by record once the schema is fixed), the pair has
δ(ε) ≤ δ_{√(μ² + μ₂²)}(ε) + ``delta``: :meth:`DiscoveryRecord.epsilon`.

The schema is not ``data_dependent`` (its reading is paid for); the record is the mark that it was
discovered, and its cost must enter the certificate.  Categorical columns get the ``<missing/other>``
slot (rare categories are not released) and numerical columns a fill at their lower bound (as
:meth:`~dpconvex.datasets.tabular.TabularSchema.infer` does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpconvex.accounting._checks import check_delta, check_positive
from dpconvex.accounting.gdp import gdp_epsilon
from dpconvex.data.checks import make_rng
from dpconvex.datasets.encoding import parse_numbers, require_columns, text_cells
from dpconvex.datasets.private_counts import (
    MIN_PRESENT_SDS,
    RandomState,
    count_noise,
    private_bounds,
    select_partitions,
)
from dpconvex.datasets.tabular import DEFAULT_MISSING_VALUES, TabularSchema

__all__ = ["DISCOVERY_THEOREM", "NUMERIC_SHARE", "TARGET_WEIGHT", "TYPE_TASK", "TYPE_WEIGHT", "DiscoveryRecord",
           "ReleaseBudget", "decide_numerical",
           "discover_schema", "split_discovery_budget"]

#: Least share of the present cells that must parse as numbers for a column to be numerical.
NUMERIC_SHARE = 0.5

#: Weight (share of μ², against 1 for a column's discovery) of a column's type decision: its counts
#: need only tell a share of numbers near 0 or 1 from :data:`NUMERIC_SHARE`, a margin of about n/2.
TYPE_WEIGHT = 0.25

#: Weight of the target's discovery (its label set or bounds): a classifier needs both labels, and
#: the rarer one must pass the selection threshold.
TARGET_WEIGHT = 4.0

#: Suffix of the budget entry of a column's type decision (its discovery's entry is the column's name).
TYPE_TASK = " (type)"

#: The theorems behind a :class:`DiscoveryRecord`'s guarantee.
DISCOVERY_THEOREM = (
    "private schema discovery: Gaussian mechanisms on replace-one count vectors (sensitivity sqrt 2; Dong, Roth, "
    "Su 2019, Thm 2.7), Gaussian thresholding for the category and label sets (Korolova et al. 2009; Gopi et al. "
    "2020; Desfontaines et al. 2022) with an additive delta per selection, composed by Dong, Roth, Su 2019, "
    "Thm 3.2 and Cor. 3.3"
)


@dataclass(frozen=True)
class ReleaseBudget:
    """The split of a release's (ε, δ) between a private schema discovery and the training.

    Built by :func:`~dpconvex.datasets.private_release.split_release_budget` (the rule is there).

    Attributes
    ----------
    epsilon, delta : float
        The whole release's budget.
    share : float
        The discovery's share of μ² and of δ.
    discovery_mu : float
        μ_d, the discovery's GDP parameter.
    discovery_delta : float
        δ_sel, the discovery's additive δ.
    training_epsilon, training_delta : float
        What the training run is asked for.
    """

    epsilon: float
    delta: float
    share: float
    discovery_mu: float
    discovery_delta: float
    training_epsilon: float
    training_delta: float


@dataclass(frozen=True)
class DiscoveryRecord:
    """What a schema discovery cost: ``mu``-GDP plus an additive ``delta``, and what it left out.

    Attributes
    ----------
    mu : float
        GDP parameter of the whole discovery (√ of the sum of ``budget``'s μ_i²).
    delta : float
        Additive δ: δ(ε) ≤ δ_μ(ε) + ``delta`` for every ε ≥ 0; 0 when no partition selection could run.
    budget : dict[str, float]
        Task -> its μ_i: a column's name for its discovery, the name plus :data:`TYPE_TASK` for its
        type decision, the target's name for its label set or bounds.
    selection_delta : float
        δ_τ of each partition selection (``delta`` divided by their possible number).
    dropped : dict[str, str]
        Column -> why it is not in the schema (its discovery found nothing).
    theorem : str
        The theorems behind the guarantee (:data:`DISCOVERY_THEOREM`).
    release : ReleaseBudget or None
        When the discovery is one part of a release's budget
        (:func:`~dpconvex.datasets.private_release.discover_for_release`): the split, with what the
        training run is asked for; None otherwise.
    """

    mu: float
    delta: float
    budget: dict[str, float] = field(default_factory=dict)
    selection_delta: float = 0.0
    dropped: dict[str, str] = field(default_factory=dict)
    theorem: str = DISCOVERY_THEOREM
    release: ReleaseBudget | None = None

    @property
    def shares(self) -> dict[str, float]:
        """Task -> its share μ_i²/μ² of the budget (the shares sum to 1)."""
        return {task: (mu_i / self.mu) ** 2 for task, mu_i in self.budget.items()}

    def combined_mu(self, training_mu: float = 0.0) -> float:
        """μ of the discovery composed with a ``training_mu``-GDP run: √(μ² + μ₂²) (Cor. 3.3)."""
        return math.hypot(self.mu, float(training_mu))

    def epsilon(self, delta: float, training_mu: float = 0.0) -> float:
        """ε at ``delta`` of the discovery composed with a ``training_mu``-GDP training run.

        The smallest ε with δ_{μ'}(ε) ≤ ``delta`` − ``self.delta``, μ' = :meth:`combined_mu`
        (:func:`~dpconvex.accounting.gdp.gdp_epsilon`).

        Parameters
        ----------
        delta : float
            Target δ of the pair, in (0, 1) and above the discovery's own ``self.delta``.
        training_mu : float, default 0.0
            GDP parameter of the training run (0: the discovery alone).

        Returns
        -------
        float
            ε.
        """
        left = check_delta(delta) - self.delta
        if not left > 0.0:
            raise ValueError(f"delta={delta} must exceed the discovery's additive delta {self.delta}")
        return gdp_epsilon(left, self.combined_mu(training_mu))


def split_discovery_budget(columns: Sequence[str], mu_total: float,
                           weights: Sequence[float] | None = None) -> dict[str, float]:
    """μ² in proportion to the tasks' weights: μ_i = μ·√(w_i/Σw), so Σμ_i² = μ² (μ = ``mu_total``).

    Parameters
    ----------
    columns : sequence of str
        The tasks (distinct names, e.g. columns), at least one.
    mu_total : float
        GDP parameter of the whole discovery, > 0.
    weights : sequence of float, optional
        One positive weight per task; None: equal weights (μ_i = μ/√k for k tasks).

    Returns
    -------
    dict[str, float]
        Task -> μ_i, in the order given.
    """
    tasks = [str(task) for task in columns]
    mu_total = check_positive(mu_total, "mu_total")
    if not tasks or len(set(tasks)) != len(tasks):
        raise ValueError(f"columns must be at least one distinct name; got {tasks}")
    shares = np.ones(len(tasks)) if weights is None else np.asarray(weights, dtype=float)
    if shares.shape != (len(tasks),) or not np.all(np.isfinite(shares) & (shares > 0)):
        raise ValueError(f"weights must be one positive finite number per task ({len(tasks)}); got {weights!r}")
    return {task: mu_total * math.sqrt(w / math.fsum(shares)) for task, w in zip(tasks, shares)}


def decide_numerical(series: pd.Series, *, mu: float, share: float = NUMERIC_SHARE,
                     missing_values: Sequence[str] = DEFAULT_MISSING_VALUES,
                     random_state: RandomState = None) -> bool | None:
    """Whether a column is numerical, from noisy counts of its numeric, non-numeric and missing cells.

    The three counts (a record is in exactly one) get N(0, σ²) noise, σ =
    :func:`~dpconvex.datasets.private_counts.count_noise` (``mu``): ``mu``-GDP.  With
    n̂ = n − (noisy missing count): None if n̂ ≤ :data:`~dpconvex.datasets.private_counts.MIN_PRESENT_SDS`·σ
    (the column is as good as empty), else whether the noisy numeric count is at least ``share``·n̂.

    Parameters
    ----------
    series : pandas.Series
        One column (cells parsed as :func:`~dpconvex.datasets.encoding.parse_numbers` does).
    mu : float
        GDP parameter, > 0.
    share : float, default NUMERIC_SHARE
        Least share of present cells that must be numbers, in (0, 1].
    missing_values : sequence of str, default ("",)
        Cell texts that mean missing.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default None
        Source of the noise; None (for a release) draws from the operating system's entropy.

    Returns
    -------
    bool or None
    """
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must lie in (0, 1]; got {share!r}")
    sigma = count_noise(mu)
    values, missing, _ = parse_numbers(series, missing_values)
    numeric = ~missing & ~np.isnan(values)
    counts = np.array([numeric.sum(), (~missing & ~numeric).sum(), missing.sum()], dtype=float)
    noisy = counts + make_rng(random_state).normal(0.0, sigma, size=3)
    n_present = len(series) - noisy[2]
    if not n_present > MIN_PRESENT_SDS * sigma:
        return None
    return bool(noisy[0] >= share * n_present)


def _declared(frame: pd.DataFrame, target: str | None, categorical: Sequence[str] | None,
              numerical: Sequence[str] | None) -> tuple[list[str], list[str], list[str]]:
    """Feature columns, declared categorical and declared numerical ones, after checking them."""
    cats = [str(c) for c in categorical or ()]
    nums = [str(c) for c in numerical or ()]
    require_columns(frame, [*cats, *nums, *([] if target is None else [target])])
    both = sorted(set(cats) & set(nums))
    if both or target in cats or target in nums:
        raise ValueError(f"columns declared twice (categorical and numerical, or the target): {both or [target]}")
    return [str(c) for c in frame.columns if c != target], cats, nums


def _target_tasks(target: str | None, task: str, positive_label: object) -> tuple[bool, bool]:
    """(the target needs a discovery, that discovery is a partition selection), after checking the task."""
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression'; got {task!r}")
    if positive_label is not None and (target is None or task == "regression"):
        raise ValueError("positive_label needs a target and task='classification'")
    if target is None:
        if task == "regression":
            raise ValueError("task='regression' needs a target column; pass target=")
        return False, False
    return task == "regression" or positive_label is None, task == "classification" and positive_label is None


def _labels(target: str, found: tuple[str, ...]) -> tuple[str | None, tuple[str, ...] | None]:
    """(positive_label, classes) of a discovered label set: binary for two labels, multi-class for more."""
    if len(found) < 2:
        raise ValueError(f"the private label discovery of target {target!r} found {len(found)} label(s) {list(found)}; "
                         "a classifier needs two: declare the labels (positive_label, or classes in a schema), "
                         "or raise mu")
    return (found[-1], None) if len(found) == 2 else (None, found)


def discover_schema(frame: pd.DataFrame, target: str | None, *, mu: float, delta: float,
                    categorical_columns: Sequence[str] | None = None,
                    numerical_columns: Sequence[str] | None = None, task: str = "classification",
                    positive_label: str | None = None, quantiles: Sequence[float] = (0.01, 0.99),
                    random_state: RandomState = None) -> tuple[TabularSchema, DiscoveryRecord]:
    """Read a schema from the private data, ``mu``-GDP plus an additive ``delta`` (module docstring).

    Every column but ``target`` is a feature; a column in neither declared list gets a private type
    decision (:func:`decide_numerical`).  Numerical columns get private grid-rounded bounds
    (:func:`~dpconvex.datasets.private_counts.private_bounds`) and a fill at the lower bound;
    categorical ones the categories that pass Gaussian thresholding
    (:func:`~dpconvex.datasets.private_counts.select_partitions`) and the ``<missing/other>`` slot.
    A column whose discovery finds nothing is left out and named, with the reason, in
    the record's ``dropped``.  The target: a classification target without
    ``positive_label`` gets its label set privately (two labels: binary, the one that sorts last
    positive; more: multi-class, whose rarer unreleased labels :func:`~dpconvex.datasets.tabular.preprocess`
    will refuse), a regression target private bounds.

    Parameters
    ----------
    frame : pandas.DataFrame
        The private data (its header and length are public).
    target : str or None
        The label column; None for a features-only schema.
    mu : float
        GDP parameter of the whole discovery, > 0.
    delta : float
        Its additive δ, in (0, 1), split equally among the possible partition selections.
    categorical_columns, numerical_columns : sequence of str, optional
        Columns whose type is declared (public); the others' types are decided privately.
    task : {"classification", "regression"}, default "classification"
        What the target holds.
    positive_label : str, optional
        A declared positive label (binary): then the label set is not discovered.
    quantiles : pair of float, default (0.01, 0.99)
        The quantiles whose grid-rounded values bound numerical columns and a regression target.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default None
        Source of the noise; None (for a release) draws from the operating system's entropy.

    Returns
    -------
    schema : TabularSchema
        Not ``data_dependent``: its privacy cost is ``record``'s.
    record : DiscoveryRecord

    Raises
    ------
    ValueError
        If a named column is absent or declared twice, ``task`` or ``positive_label`` is invalid,
        or the target's discovery finds fewer than two labels or no bounds with lower < upper.
    """
    mu, delta = check_positive(mu, "mu"), check_delta(delta)
    if not all(isinstance(column, str) for column in frame.columns):
        frame = frame.rename(columns=str)
    features, cats, nums = _declared(frame, target, categorical_columns, numerical_columns)
    target_task, target_selects = _target_tasks(target, task, positive_label)
    undecided = [c for c in features if c not in cats and c not in nums]
    tasks = [c + TYPE_TASK for c in undecided] + features + ([str(target)] if target_task else [])
    weights = [TYPE_WEIGHT] * len(undecided) + [1.0] * len(features) + ([TARGET_WEIGHT] if target_task else [])
    budget = split_discovery_budget(tasks, mu, weights)
    selections = len(undecided) + len(cats) + int(target_selects)
    selection_delta = delta / selections if selections else 0.0
    rng = make_rng(random_state)
    categorical: dict[str, tuple[str, ...]] = {}
    numerical: dict[str, tuple[float, float]] = {}
    dropped: dict[str, str] = {}
    for column in features:
        series = frame[column]
        is_numerical = column in nums or (column not in cats and decide_numerical(
            series, mu=budget[column + TYPE_TASK], random_state=rng))
        if is_numerical is None:
            dropped[column] = "its noisy count of present cells is within noise of 0 (as good as empty)"
        elif is_numerical:
            values = parse_numbers(series, DEFAULT_MISSING_VALUES)[0]
            bounds = private_bounds(values, mu=budget[column], quantiles=quantiles, random_state=rng)
            if bounds is None:
                dropped[column] = "its private quantiles found no bounds (too few numbers for the noise)"
            else:
                numerical[column] = bounds
        else:
            text, missing = text_cells(series, DEFAULT_MISSING_VALUES)
            found = select_partitions(text[~missing], mu=budget[column], delta=selection_delta, random_state=rng)
            if found:
                categorical[column] = found
            else:
                dropped[column] = "no category's noisy count passed the selection threshold"
    classes = bounds = None
    if target is not None and task == "regression":
        values = parse_numbers(frame[target], DEFAULT_MISSING_VALUES)[0]
        bounds = private_bounds(values, mu=budget[target], quantiles=quantiles, stray_guard=True, random_state=rng)
        if bounds is None or not bounds[0] < bounds[1]:
            raise ValueError(f"the private bounds discovery of regression target {target!r} found {bounds}; "
                             "declare target_bounds in a schema, or raise mu")
    elif target_selects:
        text, missing = text_cells(frame[target], DEFAULT_MISSING_VALUES)
        positive_label, classes = _labels(target, select_partitions(
            text[~missing], mu=budget[target], delta=selection_delta, random_state=rng))
    provenance = (f"discovered privately by dpconvex: {mu:.6g}-GDP plus delta {delta if selections else 0.0:.6g} "
                  "(a release of its own: count it with the models trained on the same records)")
    schema = TabularSchema(target, positive_label, categorical, numerical, other_slot=True,
                           numeric_fill={column: lower for column, (lower, _) in numerical.items()},
                           classes=classes, target_bounds=bounds, provenance=provenance)
    record = DiscoveryRecord(mu=mu, delta=delta if selections else 0.0, budget=budget,
                             selection_delta=selection_delta, dropped=dropped)
    return schema, record
