"""The declared structure of a tabular data set (:class:`TabularSchema`): its columns, bounds and target.

A schema declares, before any private record is read, the category set of every categorical
column, the bounds of every numerical one, how missing cells are encoded and the target's label
set (binary, multi-class) or range (regression); :func:`~dpconvex.datasets.tabular.preprocess`
encodes a data frame with it.  It is read from and written to JSON, and
:meth:`TabularSchema.infer` reads one from the data itself (flagged ``data_dependent``: no
differential-privacy guarantee then holds).
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpconvex.datasets._schema_json import check_json_shapes
from dpconvex.datasets.cells import numbers, require_columns, text_cells
from dpconvex.datasets.encoding import feature_names
from dpconvex.datasets.labels import infer_labels, label_declaration
from dpconvex.exceptions import DataDependentPreprocessingWarning

__all__ = ["DEFAULT_MISSING_VALUES", "TabularSchema"]

#: Cell texts that mean "missing" unless a schema says otherwise: the empty cell only.
DEFAULT_MISSING_VALUES: tuple[str, ...] = ("",)


@dataclass(frozen=True)
class TabularSchema:
    """Declared structure of a tabular data set: binary, multi-class or regression target, or features only.

    A labelled schema has a ``target`` and exactly one of ``positive_label`` (binary), ``classes``
    (multi-class) and ``target_bounds`` (regression); a features-only schema has none.

    Parameters
    ----------
    target : str or None
        Name of the label column; None for a schema of the features only (as built by
        :meth:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer.from_dataframe`), which
        :func:`~dpconvex.datasets.tabular.preprocess` refuses.
    positive_label : str or None, default None
        Binary schema: the value of ``target`` mapped to +1; every other value is mapped to -1
        (one-vs-rest). None (omit it) for a multi-class or features-only schema.
    categorical : dict[str, tuple[str, ...]], default {}
        Categorical column -> its categories, in the order of the one-hot block.
    numerical : dict[str, tuple[float, float]], default {}
        Numerical column -> its declared bounds ``(lower, upper)``, ``lower <= upper``.
    data_dependent : bool, default False
        True when any part of the schema was read from the (private) data; training on data
        encoded with such a schema has no differential-privacy guarantee (ε = inf).
    missing_values : tuple of str, default ("",)
        Cell texts that mean "missing" in every column (compared after stripping whitespace;
        NaN/None cells are always missing). Only the empty cell by default: ``NA``, ``None``,
        ``null`` or ``?`` are ordinary values (categories) unless listed here. May not
        overlap a column's categories.
    other_slot : bool, default False
        Give every categorical column one extra feature ``"column=<missing/other>"``, last in
        its block: a missing cell, or a value not among the declared categories (counted in a
        :class:`~dpconvex.exceptions.PrivacyLeakWarning`), is encoded there. Without it such
        cells raise ``ValueError`` naming the column.
    numeric_fill : dict[str, float], default {}
        Numerical column -> value (within its bounds) taken by its missing cells; each such
        column also gets the indicator feature ``"column=<missing>"`` (1 where the cell was
        missing), right after it. Missing cells of other numerical columns raise ``ValueError``.
    classes : tuple of str or None, default None
        Multi-class schema: the declared (public) label set, at least 2 distinct texts, none of
        them empty, padded with spaces, or a ``missing_values`` marker;
        :func:`~dpconvex.datasets.tabular.preprocess` keeps each label's text and refuses a label
        outside this set. A declared class absent from the data
        is fine. None for a binary, regression or features-only schema.
    target_bounds : tuple of float or None, default None
        Regression schema: the declared (public) range ``(lower, upper)`` of the numeric target,
        finite, ``lower < upper``; :func:`~dpconvex.datasets.tabular.preprocess` parses each target
        cell as a number and clips it into this range. None for a classification or features-only schema.
    provenance : str or None, default None
        Where a schema that is not declared by hand came from, e.g. a private discovery's guarantee
        (:func:`~dpconvex.datasets.private_schema.discover_schema`): a model trained with it later
        certifies its own run only, and its certificate notes that the discovery was a release of its own.
        Written to JSON only when set.

    Notes
    -----
    The JSON format read by :meth:`from_json` and written by :meth:`to_json` is::

        {"target": "income", "positive_label": ">50K", "classes": null, "target_bounds": null,
         "categorical": {"sex": ["Female", "Male"], ...},
         "numerical": {"age": [17, 90], ...},
         "missing_values": [""],
         "other_slot": false,
         "numeric_fill": {"age": 17},
         "data_dependent": false}

    or, multi-class, ``"positive_label": null, "classes": ["Divorced", "Married", "Single"]``, or,
    regression, ``"target": "progression", "target_bounds": [25, 346]``. Only ``"target"`` is
    required (``null`` for a features-only schema); every other key is optional, with the defaults
    above (``"positive_label"``, ``"classes"`` and ``"target_bounds"`` default to ``null``, and a
    labelled schema gives exactly one of them); ``"categorical"``, ``"numerical"`` and
    ``"numeric_fill"`` may be empty objects. Category values and labels are strings (a number
    is read as its text, ``2`` as ``"2"``); cells are compared as whitespace-stripped strings.
    The defaults keep the feature map of a schema without these keys as it was (UCI Adult, whose
    missing-value marker ``"?"`` is a declared category, is unchanged). Treat the dictionaries
    as read-only.
    """

    target: str | None
    positive_label: str | None = None
    categorical: dict[str, tuple[str, ...]] = field(default_factory=dict)
    numerical: dict[str, tuple[float, float]] = field(default_factory=dict)
    data_dependent: bool = False
    missing_values: tuple[str, ...] = DEFAULT_MISSING_VALUES
    other_slot: bool = False
    numeric_fill: dict[str, float] = field(default_factory=dict)
    classes: tuple[str, ...] | None = None
    target_bounds: tuple[float, float] | None = None
    provenance: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.positive_label, Mapping):  # the categories passed positionally, positive_label omitted
            raise ValueError(f"positive_label must be a label or None; got the dict {self.positive_label!r}: pass "
                             "categorical= and numerical= by keyword (TabularSchema(target, positive_label, ...))")
        categorical = {str(c): tuple(str(v) for v in cats) for c, cats in self.categorical.items()}
        numerical = {str(c): (float(b[0]), float(b[1])) for c, b in self.numerical.items()}
        if isinstance(self.missing_values, str):
            raise ValueError(f"missing_values must be a list of strings, e.g. [{self.missing_values!r}]; "
                             f"got the string {self.missing_values!r}")
        markers = tuple(dict.fromkeys(str(value).strip() for value in self.missing_values))
        fill = {str(c): float(v) for c, v in self.numeric_fill.items()}
        for column, cats in categorical.items():
            if not cats or len(set(cats)) != len(cats):
                raise ValueError(
                    f"categorical column {column!r} needs a non-empty list of distinct "
                    f"categories, got {list(cats)}"
                )
            both = [cat for cat in cats if cat.strip() in markers]
            if both:
                raise ValueError(
                    f"categories {both} of column {column!r} are also missing_values markers "
                    f"{list(markers)}; remove them from one of the two lists"
                )
        for column, (lower, upper) in numerical.items():
            if not (math.isfinite(lower) and math.isfinite(upper) and lower <= upper):
                raise ValueError(
                    f"numerical column {column!r} needs finite bounds lower <= upper, "
                    f"got ({lower}, {upper})"
                )
        for column, value in fill.items():
            if column not in numerical or not numerical[column][0] <= value <= numerical[column][1]:
                raise ValueError(
                    f"numeric_fill declares {value} for column {column!r}; it must name a "
                    "numerical column and lie within its bounds "
                    f"{numerical.get(column, '(not a numerical column)')}"
                )
        overlap = sorted(set(categorical) & set(numerical))
        if overlap:
            raise ValueError(f"columns declared both categorical and numerical: {overlap}")
        if self.target in categorical or self.target in numerical:
            raise ValueError(f"target column {self.target!r} is also declared as a feature")
        if self.provenance is not None and not isinstance(self.provenance, str):
            raise ValueError(f"provenance must be a string or None; got {self.provenance!r}")
        for name in ("data_dependent", "other_slot"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False; got {getattr(self, name)!r}")
        positive_label, classes, bounds = label_declaration(self.target, self.positive_label, self.classes,
                                                            self.target_bounds, markers)
        object.__setattr__(self, "positive_label", positive_label)
        object.__setattr__(self, "classes", classes)
        object.__setattr__(self, "target_bounds", bounds)
        object.__setattr__(self, "categorical", categorical)
        object.__setattr__(self, "numerical", numerical)
        object.__setattr__(self, "missing_values", markers)
        object.__setattr__(self, "numeric_fill", fill)
        clashes = sorted(name for name, count in Counter(feature_names(self)).items() if count > 1)
        if clashes:
            raise ValueError(f"the schema gives several features the same name: {clashes}; rename them")

    @property
    def columns(self) -> list[str]:
        """Feature columns in feature order: numerical first, then categorical."""
        return [*self.numerical, *self.categorical]

    @property
    def discovered(self) -> bool:
        """Whether the schema has a ``provenance`` (a private discovery): then it is read leniently.

        A non-numeric cell of a numerical column is read as missing (a discovered column may hold a
        few texts such as ``"NA"``), and values outside the bounds or categories are clipped or sent
        to ``<missing/other>`` without the :class:`~dpconvex.exceptions.PrivacyLeakWarning` that
        names them (they are the rare values the discovery withheld):
        :func:`~dpconvex.datasets.encoding.encode` and :func:`~dpconvex.datasets.read_csv`.
        """
        return self.provenance is not None

    @property
    def task(self) -> str | None:
        """``"binary"`` (``positive_label``), ``"multiclass"`` (``classes``), ``"regression"`` (``target_bounds``).

        None for a features-only schema.
        """
        if self.target is None:
            return None
        if self.positive_label is not None:
            return "binary"
        return "regression" if self.target_bounds is not None else "multiclass"

    @property
    def label_set(self) -> tuple[int, int] | tuple[str, ...] | None:
        """The values ``y`` of :func:`~dpconvex.datasets.tabular.preprocess` can take, to declare as ``classes=``.

        ``(-1, 1)`` for a binary schema, ``classes`` for a multi-class one; None for a regression
        schema (``y`` is a number within ``target_bounds``: no label set) and a features-only one.
        """
        return (-1, 1) if self.task == "binary" else self.classes

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-compatible dictionary described in the class docstring."""
        spec = {
            "target": self.target,
            "positive_label": self.positive_label,
            "classes": None if self.classes is None else list(self.classes),
            "target_bounds": None if self.target_bounds is None else list(self.target_bounds),
            "categorical": {c: list(cats) for c, cats in self.categorical.items()},
            "numerical": {c: list(bounds) for c, bounds in self.numerical.items()},
            "missing_values": list(self.missing_values),
            "other_slot": self.other_slot,
            "numeric_fill": dict(self.numeric_fill),
            "data_dependent": self.data_dependent,
        }
        return spec if self.provenance is None else {**spec, "provenance": self.provenance}

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> TabularSchema:
        """Build a schema from the dictionary format described in the class docstring.

        Raises ValueError naming the key and its expected shape if a key is unknown, ``"target"``
        is absent or a value has the wrong JSON type (e.g. ``"numerical": {"age": 5}`` or
        ``"target_bounds": [25]``).
        """
        check_json_shapes(spec)
        return cls(
            target=spec["target"],
            positive_label=spec.get("positive_label"),
            classes=spec.get("classes"),
            target_bounds=spec.get("target_bounds"),
            categorical=dict(spec.get("categorical", {})),
            numerical=dict(spec.get("numerical", {})),
            data_dependent=spec.get("data_dependent", False),
            missing_values=spec.get("missing_values", DEFAULT_MISSING_VALUES),
            other_slot=spec.get("other_slot", False),
            numeric_fill=dict(spec.get("numeric_fill", {})),
            provenance=spec.get("provenance"),
        )

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> TabularSchema:
        """Read a schema from a JSON file (format in the class docstring)."""
        with open(path, encoding="utf-8") as handle:
            try:
                spec = json.load(handle)
            except json.JSONDecodeError as error:
                raise ValueError(f"schema file {os.fspath(path)!r} is not valid JSON: {error}") from error
        return cls.from_dict(spec)

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write the schema to a JSON file (format in the class docstring)."""
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.to_dict(), handle, indent=2)
            handle.write("\n")

    @classmethod
    def infer(
        cls, frame: pd.DataFrame, target: str | None = None, positive_label: str | None = None, *,
        task: str = "classification",
    ) -> TabularSchema:
        """Read a schema from the data itself (then no differential-privacy guarantee holds).

        Every column except ``target`` is a feature: numeric (non-boolean) columns become
        numerical with bounds ``(min, max)`` and a fill at the lower bound (so a missing cell
        scales to 0 and its indicator is 1), all others categorical with their sorted distinct
        values and ``other_slot=True``; missing cells (NaN or empty) are left out of both. A
        column whose every cell is missing is left out, with a warning. Emits
        :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning` and sets
        ``data_dependent=True``. The minimum, maximum and category set of a column can each
        hinge on one record, so a model trained on data encoded this way has no guarantee:
        ``dpconvex train`` then reports ε = inf. The target's declaration (its label set, or its
        bounds for regression) is read from the data too, unless ``positive_label`` gives it, and
        named in the warning (see :func:`~dpconvex.datasets.labels.infer_labels`).

        Parameters
        ----------
        frame : pandas.DataFrame
            The data.
        target : str, optional
            Name of the label column; None for a features-only schema.
        positive_label : str, optional
            Value of ``target`` mapped to +1 (a binary schema). Without it, a target with exactly
            two distinct values gives a binary schema whose positive label is the one that sorts
            last (as a string), e.g. ``">50K"`` over ``"<=50K"`` and ``"1"`` over ``"0"``; a
            target with more gives a multi-class schema with its distinct values as ``classes``,
            unless it has more than 20, all numbers (a continuous target: refused).
        task : {"classification", "regression"}, default "classification"
            ``"regression"``: ``target`` holds numbers, and ``target_bounds`` is its (min, max).

        Returns
        -------
        TabularSchema

        Raises
        ------
        ValueError
            Naming the parameter or column and what to do, if a column is absent, ``task`` is
            unknown, ``positive_label`` is given without ``target`` or with ``task="regression"``, a
            target cell is missing, or the target cannot be read for the task: fewer than two
            classes; more than 20 distinct values, all numbers (classification); a non-numeric or
            single value (regression).
        """
        if target is not None:
            require_columns(frame, [target])
        positive_label, classes, bounds, read = infer_labels(frame, target, positive_label, task,
                                                             DEFAULT_MISSING_VALUES)
        categorical: dict[str, tuple[str, ...]] = {}
        numerical: dict[str, tuple[float, float]] = {}
        empty: list[str] = []
        for name, series in frame.items():
            column = str(name)
            if name == target:
                continue
            if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                values = numbers(series, column, DEFAULT_MISSING_VALUES)
                if np.isnan(values).all():
                    empty.append(column)
                else:
                    numerical[column] = (float(np.nanmin(values)), float(np.nanmax(values)))
            else:
                text, missing = text_cells(series, DEFAULT_MISSING_VALUES)
                if missing.all():
                    empty.append(column)
                else:
                    categorical[column] = tuple(sorted(set(text[~missing])))
        left_out = f" Left out {empty}: every cell is missing." if empty else ""
        warnings.warn(
            f"TabularSchema.infer read {read}the category sets of {len(categorical)} "
            f"columns and the bounds of {len(numerical)} columns from the data; this "
            "preprocessing is NOT covered by any differential-privacy guarantee, so a model "
            "trained on its output has none (epsilon = inf). Declare the schema in advance "
            f"(TabularSchema.from_json) to avoid this.{left_out}",
            DataDependentPreprocessingWarning,
            stacklevel=2,
        )
        fill = {column: lower for column, (lower, _) in numerical.items()}
        return cls(target, positive_label, categorical, numerical, data_dependent=True,
                   other_slot=True, numeric_fill=fill, classes=classes, target_bounds=bounds)
