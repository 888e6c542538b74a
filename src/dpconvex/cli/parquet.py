"""``dpconvex train --parquet DIRECTORY``: train on a Parquet table on a Dask cluster, without loading it.

The table is read partition by partition (``dask.dataframe.read_parquet``); with ``--schema`` the
features are encoded by the declared schema partition by partition
(:class:`~dpconvex.estimators.preprocessing.PublicSchemaTransformer`) and the labels by
:func:`~dpconvex.datasets.encoding.encode_labels`; without one, every column but the target must
be numeric.  The estimator validates, clips and reduces the blocks on the cluster
(:mod:`dpconvex.data.dask_data`); a table larger than half the workers' memory is read from the files
at every pass instead of being held (out of core).  ``--scheduler ADDRESS`` connects to a running
cluster; without it a ``LocalCluster`` is started for the run and closed after it.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd

__all__ = ["train_parquet"]

#: The certificate's note on the data: every row was trained on.
NO_HELD_OUT = "trained on every row of the Parquet table: no held-out accuracy is reported"


@contextlib.contextmanager
def dask_client(scheduler: str | None) -> Iterator:
    """A client of the cluster at ``scheduler``, or of a LocalCluster started here and closed on exit.

    Parameters
    ----------
    scheduler : str or None
        The scheduler's address; ``None`` or empty starts a LocalCluster.

    Yields
    ------
    distributed.Client
    """
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    with LocalCluster(processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


#: The label column of the encoded table (after the features).
_LABEL = "__label__"


def _features_and_labels(frame, args: argparse.Namespace) -> tuple:
    """(X, y, classes, class names) of the table: one dask array, its last column the labels.

    Features and labels are encoded by one function per partition (:func:`_encoded_partition`), so
    that they come out of one collection with the same row blocks (two collections read from the
    same files may be split differently once Dask optimises each).  Multi-class labels become
    their index in the declared classes.
    """
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    from dpconvex.datasets import TabularSchema
    from dpconvex.datasets.encoding import feature_names
    from dpconvex.datasets.labels import check_task
    from dpconvex.datasets.tabular import DATA_DEPENDENT_SCHEMA_REASON
    from dpconvex.estimators.dask_fit import array_with_lengths

    if args.schema:
        schema = TabularSchema.from_json(args.schema)
        if schema.target is None or (args.target is not None and args.target != schema.target):
            raise ValueError(f"the schema's target {schema.target!r} must name the label column (--target "
                             f"{args.target!r}); give a schema with its target and label set.")
        if args.positive is not None:
            raise ValueError("--positive applies without --schema only: the schema declares the label set.")
        check_task("classification", schema)  # a regression schema: refused with the models that fit it
        if schema.data_dependent:
            raise ValueError(f"{DATA_DEPENDENT_SCHEMA_REASON}: --parquet needs a declared schema (every category, "
                             "range and the label set), since a model trained on a data-dependent encoding has no "
                             "guarantee.")
        names, target = [*feature_names(schema), _LABEL], schema.target
        label_set = list(schema.label_set)
        classes = label_set if schema.classes is None else list(range(len(label_set)))
    else:
        if args.target is None:
            raise ValueError("--target is required with --parquet unless --schema names it.")
        if args.target not in frame.columns:
            raise ValueError(f"--target {args.target!r} is not a column of the table; its columns are "
                             f"{list(frame.columns)[:20]}.")
        text = [str(column) for column, dtype in frame.dtypes.items()
                if column != args.target and not (is_numeric_dtype(dtype) or is_bool_dtype(dtype))]
        if text:
            raise ValueError(f"columns {text[:10]} are not numeric: give a --schema that declares their categories "
                             "(dpconvex.datasets.TabularSchema), or drop them from the table.")
        target_numeric = is_numeric_dtype(frame.dtypes[args.target]) or is_bool_dtype(frame.dtypes[args.target])
        if args.positive is None and not target_numeric:
            raise ValueError(f"the target {args.target!r} holds text: give --positive LABEL (that label against the "
                             "rest) or a --schema declaring the label set.")
        if args.positive is not None and target_numeric:
            raise ValueError(f"--positive compares label texts, but the target {args.target!r} is numeric: declare "
                             "the label set with a --schema, or store the labels as text.")
        schema, target = None, args.target
        names = [*[str(column) for column in frame.columns if column != target], _LABEL]
        # --positive: this label against the rest, as for a CSV; else the labels are read from the data
        # by the estimator (epsilon = inf, with the reason).
        label_set = classes = None if args.positive is None else [-1, 1]
    meta = pd.DataFrame({name: np.empty(0) for name in names})
    encoded = frame.map_partitions(_encoded_partition, schema, target, args.positive, names, meta=meta)
    table = array_with_lengths(encoded)
    return table[:, :-1], table[:, -1], classes, label_set


def _encoded_partition(partition: pd.DataFrame, schema, target: str, positive: str | None,
                       names: list[str]) -> pd.DataFrame:
    """One partition as float columns: the features (encoded by ``schema``, or as they are) and the label last."""
    from dpconvex.datasets.encoding import encode, encode_labels

    if schema is not None:
        features = encode(partition, schema, 1.0)
        labels = encode_labels(partition[target], schema)
        if schema.classes is not None:
            labels = pd.Categorical(labels, categories=list(schema.classes)).codes  # declared order: index
    else:
        features = partition.drop(columns=[target])
        labels = partition[target]
        if labels.isna().any():
            raise ValueError(f"the target {target!r} has missing values (partition rows "
                             f"{list(np.flatnonzero(labels.isna().to_numpy())[:5])}); remove those records.")
        if positive is not None:
            labels = np.where(labels.astype(str).str.strip() == str(positive), 1.0, -1.0)
    return pd.DataFrame(np.column_stack([np.asarray(features, dtype=float), np.asarray(labels, dtype=float)]),
                        columns=names, index=partition.index)


def train_parquet(args: argparse.Namespace, model_class: type) -> dict:
    """Fit ``model_class`` on the Parquet table ``args.parquet`` and return the ``train`` payload.

    Parameters
    ----------
    args : argparse.Namespace
        The ``train`` options (``parquet``, ``scheduler``, ``target``, ``schema``, ``positive``,
        ``epsilon``, ``delta``, ``method``, ``iterations``, ``epochs``, ``seed``, ``model``, ``json``);
        ``--test-size`` other
        than its default is refused (no held-out split of a Parquet directory; the default, given
        explicitly, cannot be told apart from its absence).
    model_class : type
        The estimator class of ``--model``.

    Returns
    -------
    dict
        The payload printed by ``dpconvex train`` (no test accuracy: every row is trained on).
    """
    import dask.dataframe as dd

    from dpconvex.cli.main import build_parser
    from dpconvex.cli.train import trainer_keywords

    if args.csv:
        raise ValueError("give --csv or --parquet, not both.")
    if args.test_size != build_parser().parse_args(["train"]).test_size:  # set on the command line
        raise ValueError("--test-size applies to --csv only: with --parquet every row is trained on (no held-out "
                         "split of a Parquet directory is drawn, so no test accuracy is reported). Drop --test-size, "
                         "and evaluate on a separate Parquet directory of held-out rows.")
    with dask_client(args.scheduler):
        frame = dd.read_parquet(args.parquet)
        X, y, classes, label_set = _features_and_labels(frame, args)
        model = model_class(epsilon=args.epsilon, delta=args.delta, random_state=args.seed, classes=classes,
                            **trainer_keywords(args, model_class))
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # the PrivacyLeakWarnings reach stderr, once each
            model.fit(X, y)
    certificate = model.privacy_report_.with_notes(NO_HELD_OUT)
    record = certificate.to_dict()
    payload = {
        "dataset": args.parquet, "model": args.model,
        "classes": [str(label) for label in (model.classes_ if label_set is None else label_set)],
        "n_classes": len(model.classes_), "n_train": int(record["assumptions"]["n"]), "n_test": 0,
        "test_accuracy": None, "epsilon": record["epsilon"], "delta": record["delta"],
        "theorem": certificate.theorem, "certificate": record,
    }
    if not args.json:
        print(f"trained on {payload['n_train']} rows of {args.parquet} (no held-out rows)", file=sys.stdout)
        print(certificate)
        return {}
    return payload
