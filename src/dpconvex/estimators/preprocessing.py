"""A scikit-learn transformer for tabular data with a declared (public) schema.

:class:`PublicSchemaTransformer` encodes the feature columns of a pandas DataFrame with a
:class:`~dpconvex.datasets.TabularSchema`: one-hot categories (plus, if declared, one
"missing/other" feature per column), numerical columns clipped to declared bounds and scaled
to [0, 1] (missing cells filled with a declared constant, plus an indicator feature), rows
scaled to a declared L2 norm. It runs the same feature map as
:func:`~dpconvex.datasets.preprocess`, ``load_adult`` and ``dpconvex train --csv``
(:func:`dpconvex.datasets.encoding.encode`). The schema is declared, so ``fit`` learns nothing
from the data and the encoding costs no privacy; the target stays outside (labels are the
estimator's business: declare the schema's label set as its ``classes=``, e.g.
``classes=list(schema.classes)`` for a multi-class schema, with the label texts as ``y``; see
docs/tabular-data.md).

Examples
--------
>>> from sklearn.pipeline import make_pipeline
>>> from dpconvex import PrivateLogisticRegression
>>> from dpconvex.datasets import ADULT_SCHEMA, load_adult_raw
>>> from dpconvex.estimators.preprocessing import PublicSchemaTransformer
>>> raw = load_adult_raw("test")
>>> y = (raw["income"] == ">50K").map({True: 1, False: -1})
>>> model = make_pipeline(PublicSchemaTransformer(ADULT_SCHEMA),
...                       PrivateLogisticRegression(epsilon=1.0, classes=[-1, 1], random_state=0))
>>> model.fit(raw.drop(columns="income"), y)[0].get_feature_names_out()[:2].tolist()
['age', 'fnlwgt']
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import Tags
from sklearn.utils.validation import check_is_fitted

from dpconvex.data.checks import is_dask_collection, mark_data_dependent
from dpconvex.datasets.encoding import encode, feature_names, require_columns
from dpconvex.datasets.private_counts import RandomState
from dpconvex.datasets.private_release import DEFAULT_DISCOVERY_SHARE, compose_discovery, discover_for_release
from dpconvex.datasets.private_schema import DiscoveryRecord
from dpconvex.datasets.tabular import DATA_DEPENDENT_SCHEMA_REASON, TabularSchema, check_data_dependent
from dpconvex.estimators.params import Instance, Interval, Options, validate_params
from dpconvex.exceptions import DataDependentPreprocessingWarning
from dpconvex.privacy.certificate import PrivacyCertificate

__all__ = ["CONVERSION_LOSES_MARK", "PublicSchemaTransformer"]

#: What the warning of a data-dependent schema's output says about converting it (the mark lives on the array).
CONVERSION_LOSES_MARK = (
    "the protection is a mark on this output array only: converting it (np.asarray, np.array, pd.DataFrame, or "
    "copying its values into a new array) drops the mark, and a model fitted on the converted data certifies a "
    "finite epsilon it does not have; fit the model in a Pipeline with this transformer "
    "(make_pipeline(transformer, estimator)) on the DataFrame itself"
)


class PublicSchemaTransformer(TransformerMixin, BaseEstimator):
    """Encode a DataFrame's feature columns by a declared schema (one-hot, bounded scaling, row norm).

    Parameters
    ----------
    schema : TabularSchema
        Declared categories, numeric bounds and missing-value handling (``missing_values``,
        ``other_slot``, ``numeric_fill``); its ``target`` and label set (``positive_label`` or
        ``classes``) are not used here.
    row_norm : float, default 1.0
        L2 norm of every output row (an all-zero row stays zero); match the estimator's
        ``data_norm``.
    discovery : DiscoveryRecord or None, default None
        Set by :meth:`discover`: what the private discovery of ``schema`` cost. :meth:`certify` then
        composes it with the model's certificate.
    allow_data_dependent : bool, default False
        A schema with ``data_dependent=True`` (read from the data, e.g. by
        :meth:`from_dataframe`) is refused by ``fit`` unless this is True. Whoever opts in
        must void the model's certificate: :meth:`certify` does it.  Each output of ``transform``
        then carries a mark that voids the certificate of an estimator fitted on it, with a
        :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning` saying that converting the
        output (``np.asarray``, ``pd.DataFrame``, copying it into a new array) drops the mark: fit
        the model in a ``Pipeline`` with this transformer (:data:`CONVERSION_LOSES_MARK`).

    Attributes
    ----------
    feature_names_in_ : numpy.ndarray of str
        Columns of the DataFrame seen by ``fit`` (only the schema's columns are encoded).
    n_features_in_ : int
        Their number.

    Notes
    -----
    Missing cells (NaN/None, or a text in ``schema.missing_values``: only the empty string by
    default, never ``"NA"`` or ``"null"`` unless declared) and categorical values outside the
    declared categories go to the column's ``"<missing/other>"`` feature when
    ``schema.other_slot`` is set (undeclared values are counted in a
    :class:`~dpconvex.exceptions.PrivacyLeakWarning`); otherwise ``transform`` raises a
    ``ValueError`` naming the column, the values and the fix. Numerical values outside their
    bounds are clipped, with a ``PrivacyLeakWarning``.

    Input must be a pandas DataFrame with the schema's columns (by name; other columns are
    ignored). The output is a float64 array in the order of :meth:`get_feature_names_out`
    (``set_output(transform="pandas")`` gives a DataFrame).
    """

    _parameter_constraints = {
        "schema": [Instance((TabularSchema,))],
        "row_norm": [Interval(0.0, np.inf, "neither")],
        "allow_data_dependent": [Options((True, False))],
        "discovery": [Options((None,)), Instance((DiscoveryRecord,))],
    }

    def __init__(self, schema: TabularSchema, *, row_norm: float = 1.0, allow_data_dependent: bool = False,
                 discovery: DiscoveryRecord | None = None) -> None:
        self.schema = schema
        self.row_norm = row_norm
        self.allow_data_dependent = allow_data_dependent
        self.discovery = discovery

    def fit(self, X: pd.DataFrame, y: Any = None) -> PublicSchemaTransformer:
        """Check the parameters and that ``X`` has the schema's columns; learn nothing else.

        Parameters
        ----------
        X : pandas.DataFrame
            Must contain every feature column of the schema.
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If a parameter is invalid, ``X`` is not a DataFrame or lacks a schema column, or
            the schema is data-dependent and ``allow_data_dependent`` is False.
        """
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        check_data_dependent(self.schema, self.allow_data_dependent)
        self._check_frame(X)
        self.feature_names_in_ = np.asarray([str(column) for column in X.columns], dtype=object)
        self.n_features_in_ = len(self.feature_names_in_)
        return self

    def transform(self, X: pd.DataFrame) -> np.ndarray:
        """Encode ``X`` (see the class notes for missing and undeclared values).

        Parameters
        ----------
        X : pandas.DataFrame or dask.dataframe.DataFrame
            Must contain every feature column of the schema.

        Returns
        -------
        numpy.ndarray of float64, shape (n_samples, len(get_feature_names_out()))
            Rows of L2 norm ``row_norm`` (or zero).  For a dask DataFrame: a dask DataFrame of those
            columns, encoded partition by partition when it is computed (declared schemas only:
            ``ValueError`` for a data-dependent one, whose mark a dask collection would not carry).
        """
        check_is_fitted(self)
        self._check_frame(X)
        if is_dask_collection(X):
            return self._transform_partitions(X)
        encoded = encode(X, self.schema, self.row_norm)
        if not self.schema.data_dependent:
            return encoded
        # Read from the data: mark the output, so an estimator fitted on it voids its certificate.
        warnings.warn(f"{DATA_DEPENDENT_SCHEMA_REASON}: a model fitted on this output has no differential-privacy "
                      f"guarantee (epsilon = inf); {CONVERSION_LOSES_MARK}", DataDependentPreprocessingWarning,
                      stacklevel=2)
        return mark_data_dependent(encoded, DATA_DEPENDENT_SCHEMA_REASON)

    def _transform_partitions(self, X: Any) -> Any:
        """:func:`encode` of each partition of a dask DataFrame (lazy), for a declared schema only."""
        if self.schema.data_dependent:
            raise ValueError(f"{DATA_DEPENDENT_SCHEMA_REASON}: a data-dependent schema cannot encode a dask "
                             "DataFrame (the collection would not carry the mark that voids the model's "
                             "certificate); declare the schema (TabularSchema with every category and range).")
        names = [str(name) for name in self.get_feature_names_out()]
        meta = pd.DataFrame(np.empty((0, len(names))), columns=names)
        return X.map_partitions(_encode_partition, self.schema, self.row_norm, names, meta=meta)

    def set_output(self, *, transform: str | None = None) -> PublicSchemaTransformer:
        """scikit-learn's output container; a data-dependent schema keeps NumPy output.

        A DataFrame would drop the mark that voids the certificate of a model fitted on the output
        (``dpconvex.data.checks.mark_data_dependent``, a private helper), so ``"pandas"`` / ``"polars"`` are refused
        for a data-dependent schema.

        Raises
        ------
        ValueError
            If ``transform`` is ``"pandas"`` or ``"polars"`` and the schema is data-dependent.
        """
        if transform in ("pandas", "polars") and getattr(self.schema, "data_dependent", False):
            raise ValueError(f"set_output(transform={transform!r}) is refused for a data-dependent schema: the "
                             "container would drop the mark that voids the model's certificate; keep NumPy output")
        return super().set_output(transform=transform)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Names of the output columns (:func:`~dpconvex.datasets.feature_names` of the schema).

        Parameters
        ----------
        input_features : array-like of str, optional
            If given, must contain the schema's columns.

        Returns
        -------
        numpy.ndarray of str
        """
        check_is_fitted(self)
        if input_features is not None:
            absent = sorted(set(self.schema.columns) - {str(name) for name in input_features})
            if absent:
                raise ValueError(f"input_features lacks the schema's columns {absent}")
        return np.asarray(feature_names(self.schema), dtype=object)

    def certify(self, certificate: PrivacyCertificate) -> PrivacyCertificate:
        """The certificate of a model trained on this transformer's output.

        ``certificate`` itself for a declared schema; for a data-dependent one (e.g. from
        :meth:`from_dataframe`) a copy without guarantee (ε = inf) saying why
        (:meth:`~dpconvex.privacy.certificate.PrivacyCertificate.without_guarantee`); for a privately
        discovered one (:meth:`discover`) the composition of the discovery and the model
        (:func:`~dpconvex.datasets.private_release.compose_discovery`), at δ = the model's δ plus the
        discovery's additive δ.

        Parameters
        ----------
        certificate : PrivacyCertificate
            The estimator's ``privacy_report_``.

        Returns
        -------
        PrivacyCertificate
        """
        if self.schema.data_dependent:
            return certificate.without_guarantee(DATA_DEPENDENT_SCHEMA_REASON)
        if self.discovery is not None:
            return compose_discovery(certificate, self.discovery)
        return certificate

    @classmethod
    def discover(cls, frame: pd.DataFrame, target: str | None = None, *, epsilon: float, delta: float,
                 share: float = DEFAULT_DISCOVERY_SHARE, random_state: RandomState = None,
                 **options: Any) -> PublicSchemaTransformer:
        """A transformer whose schema is discovered privately from ``frame``, with ``share`` of (ε, δ).

        :func:`~dpconvex.datasets.private_release.discover_for_release`: the columns' types (unless
        declared), the numerical columns' bounds, the categories and, with ``target``, the label set
        (or a regression target's bounds), each by a Gaussian mechanism; a column whose discovery finds
        nothing is left out (``discovery.dropped`` says why).  Train the model with
        ``epsilon=transformer.discovery.release.training_epsilon`` and
        ``delta=transformer.discovery.release.training_delta``; :meth:`certify` then gives the release's
        one certificate, at most (``epsilon``, ``delta``) for a GDP-certified model and otherwise what
        the composition gives (:func:`~dpconvex.estimators.discovered_fit.fit_with_discovery` fits
        within the budget whatever the model).  Docs: docs/tabular-data.md.

        Parameters
        ----------
        frame : pandas.DataFrame
            The private training records, as text or numbers (the header and the number of rows are public).
        target : str, optional
            The label column, left out of the features.
        epsilon, delta : float
            The whole release's budget (discovery and training): ε > 0, δ in (0, 1).
        share : float, default DEFAULT_DISCOVERY_SHARE
            The discovery's share of μ² and of δ, in (0, 1).
        random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default None
            Source of the noise; None (for a release) draws from the operating system's entropy.
        **options
            ``categorical_columns``, ``numerical_columns``, ``task``, ``positive_label``, ``quantiles``
            (:func:`~dpconvex.datasets.private_schema.discover_schema`), and ``row_norm``.

        Returns
        -------
        PublicSchemaTransformer
        """
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
        row_norm = options.pop("row_norm", 1.0)
        schema, record = discover_for_release(frame, target, epsilon=epsilon, delta=delta, share=share,
                                              random_state=random_state, **options)
        return cls(schema, row_norm=row_norm, discovery=record)

    @classmethod
    def from_dataframe(cls, frame: pd.DataFrame, target: str | None = None, **params: Any) -> PublicSchemaTransformer:
        """A transformer whose schema is read from ``frame``: no privacy guarantee then.

        Categories are the observed values (with a ``<missing/other>`` feature per column),
        bounds the observed minimum and maximum (with a fill at the lower bound and an
        indicator per numerical column), as in :meth:`TabularSchema.infer`, which emits a
        :class:`~dpconvex.exceptions.DataDependentPreprocessingWarning`. The schema says
        ``data_dependent=True``, so ``fit`` refuses it unless ``allow_data_dependent=True``
        is passed here, and :meth:`certify` voids the model's certificate.  A model fitted on
        the output in a ``Pipeline`` with the transformer voids its own; converting the output
        first (``np.asarray``, ``pd.DataFrame``) loses that protection, as ``transform``'s
        warning says.

        Parameters
        ----------
        frame : pandas.DataFrame
            Data whose columns (all but ``target``) become the features.
        target : str, optional
            A label column of ``frame`` to leave out.
        **params
            ``row_norm`` and ``allow_data_dependent``.

        Returns
        -------
        PublicSchemaTransformer
        """
        if not isinstance(frame, pd.DataFrame):
            raise ValueError(f"frame must be a pandas DataFrame; got {type(frame).__name__}")
        if target is not None:
            require_columns(frame, [target])
            frame = frame.drop(columns=[target])
        return cls(TabularSchema.infer(frame), **params)

    def _check_frame(self, X: Any) -> None:
        """Raise ValueError unless ``X`` is a (pandas or dask) DataFrame with the schema's columns."""
        if not (isinstance(X, pd.DataFrame) or (is_dask_collection(X) and getattr(X, "ndim", 0) == 2
                                                 and hasattr(X, "columns"))):
            raise ValueError(
                f"X must be a pandas DataFrame with the schema's columns {self.schema.columns}; got "
                f"{type(X).__name__} (wrap an array with pandas.DataFrame(X, columns=[...]))"
            )
        require_columns(X, self.schema.columns)

    def __sklearn_tags__(self) -> Tags:
        """scikit-learn's estimator tags: DataFrames of text, categories and NaN are accepted."""
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        return tags


def _encode_partition(partition: pd.DataFrame, schema: TabularSchema, row_norm: float,
                      names: list[str]) -> pd.DataFrame:
    """One partition of a dask DataFrame, encoded (:func:`encode`) as a DataFrame of the output columns."""
    return pd.DataFrame(encode(partition, schema, row_norm), columns=names, index=partition.index)
