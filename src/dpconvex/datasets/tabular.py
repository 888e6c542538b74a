"""Schema-driven preprocessing of tabular data (Chen, Lee and Kifer, 2019, Section 5).

Categorical columns are one-hot encoded over a declared category set, numerical columns are
scaled to [0, 1] with declared bounds, and every row is then scaled to unit L2 norm; labels
become -1/+1 (binary, ``positive_label``), stay the declared classes' texts (multi-class,
``classes``) or are numbers clipped into declared bounds (regression, ``target_bounds``; see
:mod:`dpconvex.datasets.labels`). Because the category sets, bounds and label set are declared
up front (a :class:`TabularSchema`), the map from a record to its feature vector does not depend on the
other records, so the preprocessing costs no privacy. A schema *inferred* from the private data
(:meth:`TabularSchema.infer`) breaks this, and is flagged with ``data_dependent=True`` and a
:class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`; a model trained on its output
has no differential-privacy guarantee (ε = inf). The feature map itself is
:func:`~dpconvex.datasets.encoding.encode`, shared with
:class:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer`; the schema is
:mod:`dpconvex.datasets.schema`'s (re-exported here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpconvex.datasets.cells import require_columns
from dpconvex.datasets.csv_reader import read_csv  # noqa: F401 (re-exported: this module was its home)
from dpconvex.datasets.encoding import encode, feature_names
from dpconvex.datasets.labels import encode_labels
from dpconvex.datasets.schema import DEFAULT_MISSING_VALUES, TabularSchema  # noqa: F401 (the schema's former home)

__all__ = ["DATA_DEPENDENT_SCHEMA_REASON", "TabularSchema", "preprocess", "feature_names"]

#: Why a model trained on data encoded with a ``data_dependent`` schema has no guarantee.
DATA_DEPENDENT_SCHEMA_REASON = (
    'the schema says "data_dependent": true, i.e. its category sets or numeric bounds were read '
    "from the private data; declare them without looking at that data to keep the guarantee"
)


def check_data_dependent(schema: TabularSchema, allow_data_dependent: bool) -> None:
    """Refuse a ``data_dependent`` schema unless ``allow_data_dependent`` (ValueError saying why).

    Parameters
    ----------
    schema : TabularSchema
        The schema about to be used for encoding.
    allow_data_dependent : bool
        Whether the caller accepts a schema read from the private data (and voids the guarantee).

    Returns
    -------
    None

    Raises
    ------
    ValueError
        If ``schema.data_dependent`` and not ``allow_data_dependent``, saying why and what to do.
    """
    if schema.data_dependent and not allow_data_dependent:
        raise ValueError(
            "the schema is data_dependent (read from the private data), so no model trained on this "
            "preprocessing has a differential-privacy guarantee; declare the schema, or pass "
            "allow_data_dependent=True and void the certificate (PrivacyCertificate.without_guarantee, "
            "or PublicSchemaTransformer.certify)"
        )


def preprocess(frame: pd.DataFrame, schema: TabularSchema, *,
               allow_data_dependent: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Encode a data frame as unit-norm feature rows and labels ({-1, +1}, the declared classes, or numbers).

    The features are :func:`~dpconvex.datasets.encoding.encode`'s (the feature map of
    :class:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer`): numerical columns scaled to
    [0, 1] by their declared bounds (out-of-bounds values clipped with a
    :class:`~dpconvex.exceptions.PrivacyLeakWarning` giving the count; missing cells filled as
    declared in ``schema.numeric_fill``), categorical columns one-hot encoded (missing and
    undeclared values to the ``<missing/other>`` feature if ``schema.other_slot``), each row
    then divided by its L2 norm (an all-zero row stays zero). The labels are
    :func:`~dpconvex.datasets.labels.encode_labels`': for a binary schema +1 where
    ``target == schema.positive_label`` and -1 for every other value (one-vs-rest); for a
    multi-class schema the label texts, each one of ``schema.classes`` (declare
    ``schema.label_set`` as the estimator's ``classes=``); for a regression schema the target
    parsed as numbers (as numerical features are) and clipped into ``schema.target_bounds``, with
    a ``PrivacyLeakWarning`` naming the column, the count and the bounds. Columns of ``frame`` not
    in the schema are ignored.

    Parameters
    ----------
    frame : pandas.DataFrame
        The data; must contain the target and every feature column of ``schema``.
    schema : TabularSchema
        Declared categories and bounds, with a target.
    allow_data_dependent : bool, default False
        A schema with ``data_dependent=True`` (read from the private data, e.g. by
        :meth:`TabularSchema.infer`) is refused unless this is True: no model trained on its output
        has a privacy guarantee, so whoever opts in must void the certificate
        (:meth:`~dpconvex.privacy.certificate.PrivacyCertificate.without_guarantee`), as ``dpconvex train``
        does.

    Returns
    -------
    X : numpy.ndarray of float64, shape (n, d)
        Features in the order of :func:`feature_names`; rows have unit L2 norm (or are zero).
    y : numpy.ndarray, shape (n,)
        int64 labels in {-1, +1} for a binary schema; the label texts (str, object dtype) for a
        multi-class one; float64 within ``target_bounds`` for a regression one.

    Raises
    ------
    ValueError
        Naming the column and what to do, if a column is absent, the schema has no target, a
        target cell is missing, a label is not among the declared classes (multi-class; up to 5
        such values are named) or not a number (regression), or a feature cell cannot be encoded
        (see :func:`~dpconvex.datasets.encoding.encode`); or if the schema is data-dependent and
        ``allow_data_dependent`` is False.
    """
    check_data_dependent(schema, allow_data_dependent)
    if schema.target is None:
        raise ValueError(
            "the schema has no target (a features-only schema); give it a target and positive_label, classes "
            "or target_bounds to preprocess labelled data, or encode the features with PublicSchemaTransformer"
        )
    require_columns(frame, [schema.target, *schema.columns])
    return encode(frame, schema), encode_labels(frame[schema.target], schema)
