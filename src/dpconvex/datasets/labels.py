"""The target column of a :class:`~dpconvex.datasets.tabular.TabularSchema`: its declaration and its map.

A labelled schema declares one of three targets: binary (``positive_label``: that label is +1, every
other -1), multi-class (``classes``: the label texts) or regression (``target_bounds``: a number,
clipped into the declared range). :func:`label_declaration` checks the declaration,
:func:`encode_labels` maps a target column by it (record by record, so it costs no privacy),
:func:`infer_labels` reads a declaration from the data (no guarantee) and :func:`check_task` refuses
a schema that does not fit the task asked for (a classifier's or a regressor's).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from dpconvex.datasets.cells import EXAMPLES, outside_note, parse_numbers, text_cells
from dpconvex.exceptions import PrivacyLeakWarning

if TYPE_CHECKING:
    from dpconvex.datasets.schema import TabularSchema

__all__ = ["MAX_INFERRED_CLASSES", "TASKS", "check_task", "encode_labels", "infer_labels", "label_declaration",
           "label_texts", "target_values"]

#: The tasks a schema can be read or checked for: a class label, or a number (``--model ridge`` or ``lad``).
TASKS: tuple[str, ...] = ("classification", "regression")

#: Above this many distinct values, all of them numbers, a target read from the data is taken for a
#: continuous one and refused as a label set (declare ``classes`` to have that many classes).
MAX_INFERRED_CLASSES = 20

def _refuse_missing(series: pd.Series, column: str, missing: np.ndarray) -> None:
    """Raise ValueError naming the target column, the count and up to 5 row labels of its missing cells."""
    if missing.any():
        rows = list(series.index[missing][:EXAMPLES])
        raise ValueError(
            f"target column {column!r} has {int(missing.sum())} missing values (rows with index "
            f"{rows}{', ...' if missing.sum() > EXAMPLES else ''}); a record without a label cannot be "
            "trained on: remove those rows from the data, or give them a label"
        )


def label_texts(series: pd.Series, column: str, missing_values: Sequence[str]) -> np.ndarray:
    """Whitespace-stripped texts of a target column (see :func:`~dpconvex.datasets.encoding.text_cells`).

    Parameters
    ----------
    series : pandas.Series
        The target column.
    column : str
        Its name, for the message.
    missing_values : sequence of str
        Cell texts that mean missing.

    Returns
    -------
    numpy.ndarray of str (object), shape (len(series),)

    Raises
    ------
    ValueError
        Naming the column, the count and up to 5 row labels of the missing cells, and what to do.
    """
    text, missing = text_cells(series, missing_values)
    _refuse_missing(series, column, missing)
    return text


def target_values(series: pd.Series, column: str, missing_values: Sequence[str]) -> np.ndarray:
    """The numbers of a regression target column, parsed as numerical features are.

    The parser is :func:`~dpconvex.datasets.encoding.parse_numbers`, that of
    :func:`~dpconvex.datasets.encoding.numbers`; no cell may be missing or other than a number.

    Parameters
    ----------
    series : pandas.Series
        The target column: numbers, or texts of numbers.
    column : str
        Its name, for the message.
    missing_values : sequence of str
        Cell texts that mean missing.

    Returns
    -------
    numpy.ndarray of float64, shape (len(series),)

    Raises
    ------
    ValueError
        Naming the column, if a cell is missing (with the count and up to 5 row labels) or not a
        number (with the count and up to 5 such values), and what to do.
    """
    values, missing, non_numeric = parse_numbers(series, missing_values)
    _refuse_missing(series, column, missing)
    if non_numeric.size:
        raise ValueError(
            f"target column {column!r} has {non_numeric.size} non-numeric values (e.g. "
            f"{sorted(set(non_numeric))[:EXAMPLES]}) but the schema declares target_bounds (a numeric target): "
            "correct them or remove those rows; for a class label declare classes or positive_label instead"
        )
    return values


def encode_labels(series: pd.Series, schema: TabularSchema) -> np.ndarray:
    """The labels of a target column by the schema: -1/+1, the declared label texts, or clipped numbers.

    A binary schema (``schema.positive_label``) maps ``positive_label`` to +1 and every other
    value to -1 (one-vs-rest). A multi-class schema (``schema.classes``) keeps each label's
    whitespace-stripped text, which must be one of the declared classes; a declared class absent
    from the data is fine (the estimator declares it all the same). A regression schema
    (``schema.target_bounds``) parses each cell as a number (:func:`target_values`) and clips it
    into the declared bounds, counting the clipped values in a
    :class:`~dpconvex.exceptions.PrivacyLeakWarning` that names the column and the bounds.

    Parameters
    ----------
    series : pandas.Series
        The target column.
    schema : TabularSchema
        A labelled schema (with a target).

    Returns
    -------
    numpy.ndarray, shape (len(series),)
        int64 in {-1, +1} for a binary schema; str (object) among ``schema.classes`` for a
        multi-class one; float64 within ``schema.target_bounds`` for a regression one.

    Raises
    ------
    ValueError
        Naming the target column and what to do, if a label is missing (:func:`label_texts`), or,
        for a multi-class schema, not among the declared classes (with up to 5 such values), or,
        for a regression schema, not a number (:func:`target_values`).
    """
    if schema.discovered:
        return _discovered_labels(series, schema)
    column = str(schema.target)
    if schema.target_bounds is not None:
        values = target_values(series, column, schema.missing_values)
        lower, upper = schema.target_bounds
        outside = int(np.count_nonzero((values < lower) | (values > upper)))
        if outside:
            warnings.warn(f"{outside} target values lay outside the declared target_bounds and were clipped to "
                          f"them ({outside_note(column, outside, schema.target_bounds)})",
                          PrivacyLeakWarning, stacklevel=3)
        return np.clip(values, lower, upper)
    text = label_texts(series, column, schema.missing_values)
    if schema.classes is None:
        return np.where(text == schema.positive_label, 1, -1).astype(np.int64)
    undeclared = ~np.isin(text, list(schema.classes))
    if undeclared.any():
        values = sorted(set(text[undeclared]))
        raise ValueError(
            f"target column {column!r} has {int(undeclared.sum())} labels not among the declared classes "
            f"{list(schema.classes)}: {values[:EXAMPLES]}{' ...' if len(values) > EXAMPLES else ''}; declare "
            "them in the schema's \"classes\", or remove those rows from the data"
        )
    return text


def _discovered_labels(series: pd.Series, schema: TabularSchema) -> np.ndarray:
    """The labels under a privately discovered schema: record by record, never refused, no value named.

    A label the release withheld must neither stop the run nor appear in a message (either reveals it),
    nor be dropped (replace-one holds n public): a missing or unreleased label becomes the first released
    class (binary: -1), a missing or non-numeric target the middle of ``target_bounds``; a
    :class:`~dpconvex.exceptions.PrivacyLeakWarning` counts them."""
    if schema.target_bounds is not None:
        values = parse_numbers(series, schema.missing_values)[0]
        lower, upper = schema.target_bounds
        changed = np.isnan(values)
        labels = np.clip(np.where(changed, (lower + upper) / 2.0, values), lower, upper)
        what = f"the middle of target_bounds, {(lower + upper) / 2.0:g}"
    else:
        text, missing = text_cells(series, schema.missing_values)
        released = [schema.positive_label] if schema.classes is None else list(schema.classes)
        changed = missing | ~np.isin(text, released)
        if schema.classes is None:
            labels, changed = np.where(text == schema.positive_label, 1, -1).astype(np.int64), missing
            what = "-1 (not the positive label)"
        else:
            labels = np.where(changed, schema.classes[0], text)
            what = f"the first released class, {schema.classes[0]!r}"
    if changed.any():
        warnings.warn(f"{int(changed.sum())} records have a missing label or one the private discovery did not "
                      f"release; each is trained as {what} (record by record: n and the guarantee unchanged)",
                      PrivacyLeakWarning, stacklevel=3)
    return labels


def label_declaration(
    target: str | None, positive_label: object, classes: object, target_bounds: object, markers: tuple[str, ...]
) -> tuple[str | None, tuple[str, ...] | None, tuple[float, float] | None]:
    """``(positive_label, classes, target_bounds)`` of a schema as stored, after checking that one target is declared.

    A labelled schema (``target`` given) has exactly one of ``positive_label`` (binary),
    ``classes`` (multi-class: at least 2 distinct texts, none of them empty, padded with spaces,
    or among the missing-value ``markers``) and ``target_bounds`` (regression: ``(lower, upper)``,
    finite, ``lower < upper``); a features-only schema has none.

    Parameters
    ----------
    target : str or None
        The schema's target column.
    positive_label, classes, target_bounds : object
        As given to :class:`~dpconvex.datasets.tabular.TabularSchema`.
    markers : tuple of str
        The schema's ``missing_values``.

    Returns
    -------
    positive_label : str or None
    classes : tuple of str or None
    target_bounds : tuple of float or None

    Raises
    ------
    ValueError
        Saying what to declare, if the target is not declared exactly once, or ``classes`` or
        ``target_bounds`` breaks its rules.
    """
    given = {"positive_label": positive_label, "classes": classes, "target_bounds": target_bounds}
    if target is None:
        if any(value is not None for value in given.values()):
            raise ValueError(
                "a features-only schema (target None) declares no labels; got "
                f"{', '.join(f'{name}={value!r}' for name, value in given.items())}: give the target column too"
            )
        return None, None, None
    if sum(value is not None for value in given.values()) != 1:
        raise ValueError(
            f"target {target!r} needs exactly one of positive_label (binary: that label is +1, every other "
            "-1), target_bounds (regression: [lower, upper] of a numeric target) and classes (multi-class: the "
            f"declared label set); got {', '.join(f'{name}={value!r}' for name, value in given.items())}"
        )
    if positive_label is not None:
        return str(positive_label), None, None
    if target_bounds is not None:
        return None, None, _bounds(target, target_bounds)
    if isinstance(classes, str) or not isinstance(classes, Iterable):
        raise ValueError(f"classes must be a list of label strings, e.g. [{classes!r}, ...]; got {classes!r}")
    declared = tuple(str(label) for label in classes)
    bad = [label for label in declared if not label or label != label.strip() or label in markers]
    if bad or len(set(declared)) != len(declared) or len(declared) < 2:
        raise ValueError(
            f"classes of target {target!r} must be at least 2 distinct labels, none of them empty, padded with "
            f"spaces, or among the missing_values markers {list(markers)}; got {list(declared)}"
        )
    return None, declared, None


def _bounds(target: str, target_bounds: object) -> tuple[float, float]:
    """``target_bounds`` as two floats, or ValueError naming it and its valid form."""
    rule = (f"target_bounds of target {target!r} must be [lower, upper], two finite numbers with lower < upper "
            f"(e.g. [25, 346]); got {target_bounds!r}")
    if isinstance(target_bounds, str) or not isinstance(target_bounds, Iterable):
        raise ValueError(rule)
    try:
        lower, upper = (float(bound) for bound in target_bounds)
    except (TypeError, ValueError) as error:
        raise ValueError(rule) from error
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(rule)
    return lower, upper


def check_task(task: str, schema: TabularSchema | None = None, positive_label: object = None) -> None:
    """Refuse an unknown ``task``, or a schema or ``positive_label`` that does not fit it.

    Parameters
    ----------
    task : str
        One of :data:`TASKS`: ``"classification"`` (a binary or multi-class label) or
        ``"regression"`` (a number: ``--model ridge`` or ``lad``).
    schema : TabularSchema, optional
        The declared schema, if any; a features-only schema fits every task.
    positive_label : object, optional
        The positive label asked for (``--positive``), if any.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Naming ``task`` and its valid values if it is not one of them; saying which models fit the
        schema if it declares the other kind of target; naming ``positive_label`` (``--positive``) if
        it is given with a regression task, or with a multi-class schema.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)} ('regression' for --model ridge or lad); got {task!r}")
    if task == "regression" and positive_label is not None:
        raise ValueError(
            f"positive_label (--positive) {positive_label!r} names the positive class of a binary label, but the "
            "task is regression (--model ridge or lad), whose target is a number: leave it out"
        )
    if schema is None:
        return
    if task == "classification" and schema.task == "regression":
        raise ValueError(
            "the schema declares target_bounds (a regression target): use --model ridge or --model lad "
            "(task='regression'), or declare classes/positive_label instead of target_bounds"
        )
    if task == "regression" and schema.task in ("binary", "multiclass"):
        raise ValueError(
            f"the schema declares {'classes' if schema.classes else 'positive_label'} (a class label), but "
            "--model ridge or lad (task='regression') needs a numeric target: declare \"target_bounds\": "
            "[lower, upper] instead, or train a classifier (--model logistic, huber or hinge)"
        )
    if positive_label is not None and schema.classes is not None:
        raise ValueError(
            f"positive_label={positive_label!r} is for a binary schema, but the schema declares the classes "
            f"{list(schema.classes)} (multi-class); leave positive_label out, or declare \"positive_label\" "
            "instead of \"classes\" in the schema"
        )


def infer_labels(
    frame: pd.DataFrame, target: str | None, positive_label: object, task: str, missing_values: Sequence[str]
) -> tuple[object, tuple[str, ...] | None, tuple[float, float] | None, str]:
    """The target declaration read from the data (data-dependent), and what was read, for the warning.

    ``task="regression"``: ``target_bounds`` = the target's (min, max). ``task="classification"``:
    with ``positive_label``, binary (the label must occur); otherwise binary for two distinct values
    (the one that sorts last as a string is positive), multi-class for 3 to
    :data:`MAX_INFERRED_CLASSES`, or for more unless every value is a number (a continuous
    target, refused: declare it).

    Parameters
    ----------
    frame : pandas.DataFrame
        The data; holds ``target`` if one is given.
    target : str or None
        The target column; None for a features-only schema.
    positive_label : object
        The positive label asked for, or None.
    task : str
        One of :data:`TASKS`.
    missing_values : sequence of str
        Cell texts that mean missing.

    Returns
    -------
    positive_label : object
    classes : tuple of str or None
    target_bounds : tuple of float or None
    read : str
        What was read from the data (``"the positive label, "`` ...), empty when nothing was.

    Raises
    ------
    ValueError
        Naming the parameter or the target column and what to do: an unknown ``task``, a
        ``positive_label`` without target, with a regression task or absent from the data; a
        regression task without target, or a target with a missing, non-numeric or single value;
        fewer than two classes; more than :data:`MAX_INFERRED_CLASSES` distinct numbers.
    """
    check_task(task, positive_label=positive_label)
    if target is None:
        if positive_label is not None or task == "regression":
            given = f"positive_label={positive_label!r}" if positive_label is not None else "task='regression'"
            raise ValueError(f"{given} needs a target column; pass target=")
        return None, None, None, ""
    if task == "regression":
        values = target_values(frame[target], target, missing_values)
        lower, upper = float(values.min()), float(values.max())
        if not lower < upper:
            raise ValueError(f"target column {target!r} holds the one value {lower:.10g}: regression needs a target "
                             "that varies; declare \"target_bounds\": [lower, upper] in a schema")
        return None, None, (lower, upper), f"the target bounds [{lower:.10g}, {upper:.10g}], "
    distinct = sorted(set(label_texts(frame[target], target, missing_values)))
    shown = f"{distinct[:10]}{' ...' if len(distinct) > 10 else ''}"
    if positive_label is not None:
        if str(positive_label) not in distinct:
            raise ValueError(f"positive_label {positive_label!r} does not occur in target column {target!r} "
                             f"(values {shown}); check its spelling")
        return positive_label, None, None, ""
    if len(distinct) < 2:
        raise ValueError(
            f"target column {target!r} has {len(distinct)} distinct value(s) {distinct}; a classifier "
            "needs two classes: check the target column, or, if the other classes are merely absent "
            "from this data, declare the label set (positive_label, or classes in a schema)"
        )
    if len(distinct) > MAX_INFERRED_CLASSES and not parse_numbers(frame[target], missing_values)[2].size:
        raise ValueError(
            f"target column {target!r} has {len(distinct)} distinct values, all of them numbers: a continuous "
            f"target, not a label set of at most {MAX_INFERRED_CLASSES} classes; for regression use --model ridge "
            "or --model lad with \"target_bounds\": [lower, upper] in the schema (task='regression' in Python); "
            "for classification declare the label set (\"classes\" in a schema, or --positive LABEL)"
        )
    if len(distinct) == 2:
        return distinct[-1], None, None, "the positive label, "
    return None, tuple(distinct), None, f"the label set ({len(distinct)} classes), "
