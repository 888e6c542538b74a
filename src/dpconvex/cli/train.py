"""``dpconvex train``: fit a private model, print its held-out score and certificate, save both with ``--out``.

The data are UCI Adult (embedded), a CSV file (``--csv``, split into a training and a held-out part)
or a Parquet table (``--parquet``, :mod:`.cli_parquet`).  The classifiers (``--model logistic``,
``huber``, ``hinge``) are scored by their held-out accuracy.  The regressors (``--model ridge``,
``lad``) need a numeric target with a declared range [lower, upper] (the schema's
``target_bounds``): they are trained on (y − c)/h, with the centre c = (lower + upper)/2 and the
half-width h = (upper − lower)/2 (public constants), a target in [−1, 1], the range the estimators'
defaults are set for (ridge's ``label_bound=1``, lad's ``radius=1``); they predict h·s + c from
their score s, and are scored by the held-out R² (scikit-learn's ``r2_score``, on the target's scale).
``--out FILE`` writes the model, its schema and its certificate to a JSON model file
(:mod:`dpconvex.estimators.model_file`), which ``dpconvex predict`` reads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpconvex.cli.choices import (
    DEFAULT_DELTA,
    DEFAULT_DISCOVERY_SHARE,
    DEFAULT_EPSILON,
    METHODS,
    MODELS,
    REGRESSION_MODELS,
    REPRODUCTION_METHODS,
)
from dpconvex.cli.output import check_data_options, small_held_out_note

__all__ = ["add_train", "trainer_keywords"]

#: ``train`` options that configure the trainer, passed to the estimator when given.
_TRAINER_OPTIONS = ("method", "iterations", "epochs")


def add_train(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex train`` (the estimators are imported by its handler only).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    from dpconvex.cli.main import _open_unit_float, _positive_float, _positive_int

    p = sub.add_parser("train", help="train a private model and print its held-out score and certificate")
    p.add_argument("--dataset", default="adult", choices=["adult"], help="embedded dataset (ignored with --csv)")
    p.add_argument("--csv", help="your own CSV file")
    p.add_argument("--target", help="with --csv: the label column (for --model ridge or lad: the numeric target)")
    p.add_argument("--positive", help="with --csv: the positive label value (binary: this label against the rest); "
                   "without it and without --schema, a target with more than two values trains a multi-class model")
    p.add_argument("--schema", help="with --csv: JSON schema with category sets, numeric bounds and the label set "
                   "(positive_label, or classes for multi-class, or target_bounds [lower, upper] of a numeric "
                   "target for --model ridge or lad); without one they are discovered privately from the "
                   "training rows with --discovery-share of the budget, and the certificate covers both")
    p.add_argument("--discovery-share", type=_open_unit_float, default=None,
                   help="with --csv and no --schema: the private schema discovery's share of the budget (of mu^2 "
                        f"and of delta; default {DEFAULT_DISCOVERY_SHARE}, docs/tabular-data.md)")
    p.add_argument("--save-schema", metavar="PATH",
                   help="with --csv and no --schema: write the discovered schema to this JSON file, to declare it "
                        "with --schema in later runs (it is part of this run's release)")
    p.add_argument("--schema-from-data", action="store_true",
                   help="with --csv and no --schema: read the category sets, bounds and labels from the data "
                        "instead of discovering them privately: NO guarantee (epsilon = inf)")
    p.add_argument("--parquet", help="a directory of Parquet files (or one file), trained on a Dask cluster without "
                   "loading it into memory; needs --target (numeric feature columns) or --schema; every row is "
                   "trained on (no held-out accuracy); methods auto, noisy_gd and noisy_sgd; classifiers only")
    p.add_argument("--scheduler", help="with --parquet: address of a running Dask scheduler (e.g. "
                   "tcp://10.0.0.5:8786); default: a LocalCluster started and closed for the run")
    p.add_argument("--test-size", type=float, default=0.2, help="with --csv: held-out fraction")
    p.add_argument("--epsilon", type=_positive_float, default=DEFAULT_EPSILON,
                   help="privacy budget of the certificate; the default is the Python estimators' own")
    p.add_argument("--delta", type=float, default=DEFAULT_DELTA,
                   help="delta of the certificate; the default is the estimators' own")
    p.add_argument("--model", default="logistic", choices=list(MODELS),
                   help="classifiers, scored by the held-out accuracy: logistic, huber (huberised hinge), hinge; "
                        "regressors of a numeric target, scored by the held-out R^2: ridge (squared loss), lad "
                        "(absolute error)")
    p.add_argument("--method", choices=list(METHODS),
                   help="trainer (default: auto, which configures Poisson noisy SGD by a stated utility bound; "
                        "for --model hinge and lad it trains sco_noisy_sgd). "
                        f"{' and '.join(sorted(REPRODUCTION_METHODS))} are faithful paper reproductions that score at "
                        "or below the majority class on Adult at epsilon <= 1: choosing one prints one line of "
                        "advice on stderr (use auto for accuracy with a smooth loss)")
    p.add_argument("--iterations", type=_positive_int, help="with --method noisy_gd: its iterations (default: "
                   "planned by theory, often thousands; with --parquet each is one pass over the table)")
    p.add_argument("--epochs", type=_positive_int, help="with --method noisy_sgd: its passes over the data")
    p.add_argument("--seed", type=int, default=None, help="seed for a reproducible experiment (not for releases)")
    p.add_argument("--out", metavar="FILE",
                   help="write the trained model, its schema and its certificate to this JSON model file (replaced "
                        "if it exists; read by dpconvex predict, or dpconvex.estimators.model_file.load_model); "
                        "with --csv or "
                        "the embedded data")
    p.add_argument("--ledger", metavar="FILE",
                   help="record the release in this privacy ledger (JSON; created if missing) and refuse the fit, "
                        "exit status 2, when the ledger's budget filter would be exceeded; with --csv or the "
                        "embedded data")
    p.add_argument("--budget", type=float, nargs=2, metavar=("EPSILON", "DELTA"),
                   help="the total budget of a new --ledger FILE (a ledger's budget is fixed when it is created; "
                        "default: none, the ledger only adds up)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run_train)


def trainer_keywords(args: argparse.Namespace, model_class: type) -> dict:
    """The estimator keywords of ``train``'s --method, --iterations and --epochs that were given.

    Parameters
    ----------
    args : argparse.Namespace
        The ``train`` options.
    model_class : type
        The estimator class of ``--model``.

    Returns
    -------
    dict
        Keyword arguments for ``model_class`` (the estimator refuses an option its method does not
        read, naming the methods that do).

    Raises
    ------
    ValueError
        Naming the option and the ``--model`` choices that take it, if ``model_class`` has no such
        parameter (``--model hinge`` and ``lad`` train by sco_noisy_sgd, which takes no iterations
        or epochs).
    """
    from dpconvex import estimators

    given = {name: getattr(args, name) for name in _TRAINER_OPTIONS if getattr(args, name) is not None}
    for name in given:
        if name not in model_class().get_params():
            takers = [model for model, cls in MODELS.items() if name in getattr(estimators, cls)().get_params()]
            raise ValueError(f"--{name} does not apply to --model {args.model} ({model_class.__name__} has no "
                             f"{name} option); it applies to --model {', '.join(takers)}: leave it out.")
    return given


def _check_out(path: str, inputs: dict[str, str | None], option: str = "--out") -> None:
    """Refuse an ``--out`` (or ``option``) path that cannot be written, before training: a directory, one in a
    missing directory, or one of the run's own input or output files (``inputs``: option -> path)."""
    target = Path(path)
    name = "model" if option == "--out" else "schema"
    for other, given in inputs.items():
        if given is not None and target.resolve() == Path(given).resolve():
            raise ValueError(f"{option} {path!r} is the {other} file of this run: writing the {name} there would "
                             f"replace it; give another path, e.g. {option} {name}.json.")
    if target.is_dir():
        raise ValueError(f"{option} {path!r} is a directory; give the path of the {name} file to write, e.g. "
                         f"{option} {target / (name + '.json')}.")
    if not target.parent.is_dir():
        raise ValueError(f"{option} {path!r}: the directory {str(target.parent)!r} does not exist; create it, or "
                         "give a path in an existing directory.")


def _run_train(args: argparse.Namespace) -> dict:
    check_data_options(args)  # --schema, --target, --positive without --csv would be ignored: refused
    regression = args.model in REGRESSION_MODELS  # --positive with one: refused by load_train_test
    if args.parquet and regression:
        classifiers = ", ".join(model for model in MODELS if model not in REGRESSION_MODELS)
        raise ValueError(f"--parquet trains the classifiers only (--model {classifiers}); to train --model "
                         f"{args.model} (a regressor), give the table as --csv FILE.")
    if args.parquet and args.ledger is not None:
        raise ValueError("--ledger applies to --csv and the embedded data; leave it out of a --parquet run.")
    if args.budget is not None and args.ledger is None:
        raise ValueError("--budget sets the budget of a new --ledger FILE: give --ledger too.")
    if args.save_schema is not None:
        _check_out(args.save_schema, {"--csv": args.csv, "--out": args.out}, option="--save-schema")
    if args.out is not None:
        if args.parquet:
            raise ValueError("--out applies to --csv and the embedded data: a model trained with --parquet is not "
                             "saved; leave --out out, or train on a CSV file.")
        _check_out(args.out, {"--csv": args.csv, "--schema": args.schema, "--save-schema": args.save_schema})
    from dpconvex import estimators
    from dpconvex.mechanisms import METHOD_ADVICE

    if args.method in METHOD_ADVICE:  # stderr, so that --json keeps stdout valid JSON
        print(f"dpconvex: note: {METHOD_ADVICE[args.method]}", file=sys.stderr)
    model_class = getattr(estimators, MODELS[args.model])
    if args.parquet:
        from dpconvex.cli.parquet import train_parquet

        return train_parquet(args, model_class)
    if args.scheduler:
        raise ValueError("--scheduler applies to --parquet only.")
    return _train_split(args, model_class, regression)


def _open_ledger(path: str, budget: list[float] | None):
    """The ledger in ``path``, or a new one with ``budget`` when the file does not exist (``ValueError`` when a
    budget is given for an existing ledger: its budget was fixed when it was created)."""
    import pathlib

    from dpconvex.privacy.ledger import PrivacyLedger

    if pathlib.Path(path).exists():
        if budget is not None:
            raise ValueError(f"--budget applies to a new ledger; {path} exists with its own budget.")
        return PrivacyLedger.from_json(path)
    return PrivacyLedger(budget=None if budget is None else (budget[0], budget[1]))


def _fit(model_class: type, keywords: dict, split) -> tuple:
    """``model_class(**keywords)`` fitted on the training part, the (scale, offset) that map its scores to the
    target, its held-out score and the release's certificate.

    A classifier declares the public label set (-1/+1 for a binary schema and Adult, the schema's
    classes otherwise) and is scored by its accuracy; a regressor is trained on the target mapped
    onto [-1, 1] (see the module docstring) and scored by R² on the target's own scale.  With a
    privately discovered schema the model is fitted within the training's share of the budget and
    the certificate composes both (:func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`);
    otherwise it is the model's own.
    """
    import numpy as np
    from sklearn.metrics import r2_score

    from dpconvex.estimators.discovered_fit import fit_with_discovery

    scale, offset, y_train = 1.0, 0.0, split.y_train
    if split.target_bounds is None:
        keywords = {"classes": list(split.classes), **keywords}
    else:
        lower, upper = split.target_bounds
        scale, offset = (upper - lower) / 2.0, (upper + lower) / 2.0
        # y lies in [lower, upper] already: the clip only absorbs the rounding of (y - offset) / scale
        y_train = np.clip((y_train - offset) / scale, -1.0, 1.0)
    if split.discovery is None:
        model = model_class(**keywords).fit(split.X_train, y_train)
        certificate = model.privacy_report_
    else:
        model, certificate = fit_with_discovery(model_class(**keywords), split.X_train, y_train, split.discovery)
    if split.target_bounds is None:
        return model, scale, offset, float(model.score(split.X_test, split.y_test)), certificate
    predicted = model.predict(split.X_test) * scale + offset
    score = float(r2_score(split.y_test, predicted)) if len(split.y_test) >= 2 else float("nan")  # R² needs 2 rows
    return model, scale, offset, score, certificate


def _record_spent(ledger, args: argparse.Namespace, share: float, label: str, error: Exception) -> None:
    """Record in ``ledger`` (and its file) what a stopped release's schema discovery spent (and the private-mean
    intercept ``error`` says was drawn, :func:`~dpconvex.estimators.discovered_fit.fit_with_discovery`)."""
    from dpconvex.datasets.private_release import discovery_spent_certificate, split_release_budget

    intercept = getattr(error, "intercept_epsilon", 0.0)
    spent = discovery_spent_certificate(split_release_budget(args.epsilon, args.delta, share), intercept)
    ledger.record(spent, f"{label} (schema discovered, training {'stopped' if intercept else 'not run'})")
    ledger.to_json(args.ledger)


def _check_schema_options(args: argparse.Namespace) -> bool:
    """Whether the run discovers its schema privately (``--csv`` without ``--schema`` or ``--schema-from-data``),
    after refusing the schema options that do not combine."""
    if args.schema_from_data and not args.csv:
        raise ValueError("--schema-from-data applies to --csv only.")
    if args.schema_from_data and args.schema:
        raise ValueError("--schema-from-data reads the schema from the data instead of --schema: give one of them.")
    discover = bool(args.csv) and not args.schema and not args.schema_from_data
    if not discover and args.discovery_share is not None:
        raise ValueError("--discovery-share applies to a private schema discovery: --csv without --schema or "
                         "--schema-from-data.")
    if args.save_schema is not None and not (args.csv and not args.schema):
        raise ValueError("--save-schema writes a discovered (or --schema-from-data) schema: give --csv without "
                         "--schema.")
    if discover and args.target is None:
        raise ValueError("--csv without --schema needs --target COLUMN (the label column, or the numeric target "
                         "of --model ridge or lad).")
    return discover


def _train_split(args: argparse.Namespace, model_class: type, regression: bool) -> dict:
    """Train on the training part of Adult or the CSV file, score on the held-out part, print or return the payload."""
    from dpconvex.datasets.holdout import HELD_OUT_NOTE, load_discovered_split, load_train_test
    from dpconvex.exceptions import DiscoverySpentError
    from dpconvex.privacy.dp_events import PrivacyCurve

    discover = _check_schema_options(args)
    keywords = dict(epsilon=args.epsilon, delta=args.delta, random_state=args.seed,
                    **trainer_keywords(args, model_class))  # an option the model lacks: refused before reading data
    ledger = _open_ledger(args.ledger, args.budget) if args.ledger is not None else None
    if ledger is not None and discover:  # the release's whole (epsilon, delta), before the discovery reads a record
        if ledger.budget is not None:
            ledger.check(PrivacyCurve.pair(args.epsilon, args.delta))
    elif ledger is not None:
        keywords["ledger"] = ledger
    task = "regression" if regression else "classification"
    if discover:
        share = DEFAULT_DISCOVERY_SHARE if args.discovery_share is None else args.discovery_share
        split = None  # set once the discovery has run: an error after that spent its budget
        try:
            split = load_discovered_split(args.csv, args.target, epsilon=args.epsilon, delta=args.delta,
                                          share=share, positive=args.positive, test_size=args.test_size,
                                          seed=args.seed, task=task)
            model, scale, offset, score, certificate = _fit(model_class, keywords, split)
        except (ValueError, RuntimeError) as error:
            if ledger is not None and (split is not None or isinstance(error, DiscoverySpentError)):
                _record_spent(ledger, args, share, f"{model_class.__name__} fit {len(ledger.releases) + 1}", error)
            raise
    else:
        split = load_train_test(csv=args.csv, target=args.target, positive=args.positive, schema=args.schema,
                                test_size=args.test_size, seed=args.seed, task=task)
        model, scale, offset, score, certificate = _fit(model_class, keywords, split)  # refused: ledger unchanged
    if ledger is not None:
        if discover:
            ledger.record(certificate, f"{model_class.__name__} fit {len(ledger.releases) + 1} (schema discovered)")
        ledger.to_json(args.ledger)
    if args.save_schema is not None:
        split.schema.to_json(args.save_schema)
    # the held-out score is a second release, computed without noise
    name = "test_r2" if regression else "test_accuracy"
    certificate = certificate.with_notes(HELD_OUT_NOTE.format(score=name), *split.notes)
    for reason in split.reasons:
        certificate = certificate.without_guarantee(reason)
    record = certificate.to_dict()
    payload = {"dataset": args.csv or args.dataset, "model": args.model}
    if regression:
        payload["target_bounds"] = list(split.target_bounds)
    else:
        payload.update(classes=[str(label) for label in split.classes], n_classes=len(split.classes))
    payload.update({
        "n_train": int(split.X_train.shape[0]), "n_test": int(split.X_test.shape[0]),
        name: score if score == score else None,
        "epsilon": record["epsilon"], "delta": record["delta"], "theorem": certificate.theorem, "certificate": record,
    })
    if ledger is not None:
        payload["ledger"] = args.ledger
        payload["ledger_releases"] = len(ledger.releases)
    if args.out is not None:
        from dpconvex.estimators.model_file import SEEDED_REASON, save_model

        saved = save_model(args.out, model, schema=split.schema, target_scale=scale, target_offset=offset,
                           certificate=certificate)
        payload["model_file"] = args.out
        if args.seed is not None:  # stderr, so that --json keeps stdout valid JSON
            print(f"dpconvex: note: {args.out} certifies epsilon = {saved.certificate.epsilon:g}: "
                  f"{SEEDED_REASON}", file=sys.stderr)
    label = "test R^2" if regression else "test accuracy"
    note = small_held_out_note(payload["n_test"], label)
    if args.json:
        if note:  # stderr, so that stdout stays valid JSON
            print(f"dpconvex: {note}", file=sys.stderr)
        return payload
    rows = f"{payload['n_test']} held-out row{'' if payload['n_test'] == 1 else 's'}"
    print(f"{label}: {score:.4f} on {rows}" if score == score else f"{label}: undefined on {rows} (it needs 2)")
    if note:
        print(note)
    print(certificate)
    if args.out is not None:
        print(f"saved the model and its certificate to {args.out}")
    return {}
