"""``dpconvex predict``: the predictions of a saved model (``dpconvex train --out``) for the records of a CSV file.

The model file is read without executing code (:func:`dpconvex.estimators.model_file.load_model`); the CSV file
is read with the model's schema (:func:`~dpconvex.datasets.read_csv`) and each record encoded by
it.  One prediction per row is written to stdout or ``--output FILE``: CSV with the header
``prediction`` (default) or a JSON list (``--json``).  A classifier trained on a binary schema
predicts 1 for the schema's ``positive_label`` and -1 for any other label; a multi-class one
predicts a label of its ``classes``; a regressor a number on the target's scale.

stderr gets the first line of the model's certificate (the guarantee the released model carries)
and, when the CSV file has the target column, the accuracy (classifiers) or R² (regressors) on its
rows: a score computed without noise on the given file, which the certificate does not cover.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from dpconvex.estimators.model_file import SavedModel

__all__ = ["add_predict"]


def add_predict(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex predict`` (the model file and the data are read by its handler only).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    p = sub.add_parser("predict", help="predict with a model saved by dpconvex train --out, one row per CSV record")
    p.add_argument("--model", required=True, metavar="FILE",
                   help="the model file (JSON) written by dpconvex train --out")
    p.add_argument("--csv", required=True, metavar="FILE",
                   help="CSV file of records with the model's feature columns; if it has the target column too, "
                        "the score on its rows is printed on stderr")
    p.add_argument("--output", metavar="FILE",
                   help="write the predictions to this file (replaced if it exists) instead of stdout")
    p.add_argument("--json", action="store_true", help="write a JSON list instead of CSV with a header 'prediction'")
    p.set_defaults(handler=_run_predict)


def _run_predict(args: argparse.Namespace) -> dict:
    from dpconvex.datasets import read_csv
    from dpconvex.estimators.model_file import load_model

    model = load_model(args.model)
    if model.schema is None:
        raise ValueError(f"--model {args.model!r} was saved without a schema (trained on arrays in Python), so "
                         f"it cannot encode the columns of --csv {args.csv!r}; predict in Python: "
                         "dpconvex.estimators.model_file.load_model(...).predict(X) on rows encoded as at training.")
    try:
        frame, _ = read_csv(args.csv, schema=model.schema,
                            task="classification" if model.is_classifier else "regression")
        predictions = model.predict_frame(frame)
        score = _score(model, frame, predictions)
    except ValueError as error:
        raise ValueError(f"--csv {args.csv!r}: {error}") from error
    print(f"dpconvex: model certificate: {str(model.certificate).splitlines()[0]} (in full: \"certificate\" in "
          f"{args.model})", file=sys.stderr)
    if score:
        print(f"dpconvex: {score} of {args.csv}, computed without noise on this file: not covered by the "
              "certificate", file=sys.stderr)
    text = _formatted(predictions.tolist(), args.json)
    if args.output is None:
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        print(f"dpconvex: wrote {len(predictions)} predictions to {args.output}", file=sys.stderr)
    return {}


def _score(model: SavedModel, frame: pd.DataFrame, predictions: np.ndarray) -> str | None:
    """``"accuracy 0.8500 on the 40 rows"`` (or R²) when ``frame`` holds the target column; None otherwise.

    The labels are encoded by the schema as for training (:func:`~dpconvex.datasets.labels.encode_labels`:
    -1/+1, the class texts, or the number clipped into ``target_bounds``).
    """
    target = model.schema.target
    if target is None or target not in frame.columns:
        return None
    from dpconvex.datasets.labels import encode_labels

    labels = encode_labels(frame[target], model.schema)
    rows = f"the {len(frame)} row{'s' if len(frame) > 1 else ''}"
    if model.is_classifier:
        return f"accuracy {float((predictions == labels).mean()):.4f} on {rows}"
    if len(frame) < 2:
        return None  # R^2 needs two rows
    from sklearn.metrics import r2_score

    return f"R^2 {float(r2_score(labels, predictions)):.4f} on {rows}"


def _formatted(predictions: list, as_json: bool) -> str:
    """The predictions as a JSON list, or as CSV under the header ``prediction``."""
    if as_json:
        return json.dumps(predictions) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["prediction"])
    writer.writerows([value] for value in predictions)  # the csv module writes a float's repr: every digit
    return buffer.getvalue()
