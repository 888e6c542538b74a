"""``dpconvex reproduce`` and ``dpconvex bench``: the paper figures and the benchmarks of :mod:`dpconvex_lab`.

The experiment modules (matplotlib, the baselines, the Adult benchmark) are imported by the
handlers only, so that registering these commands costs ``dpconvex --help`` nothing.
"""

from __future__ import annotations

import argparse

from dpconvex.cli.choices import (
    BENCH_BASELINES,
    BENCH_DATASETS,
    BENCH_EPSILONS,
    BENCH_PANEL_TABLES,
    BENCH_TASKS,
    METHODS,
)

__all__ = ["add_bench", "add_reproduce"]


def add_reproduce(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex reproduce langevin|contraction|sco``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    p = sub.add_parser("reproduce", help="reproduce a paper's figures as PNG + CSV")
    p.add_argument("figure", choices=["langevin", "contraction", "sco"],
                   help="langevin: Chourasia et al. Figures 1 and 2; contraction: Asoodeh et al. Figures 2 and 3")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--n", type=int, help="contraction only: dataset size (default 100; records 1, n/2, n-1 plotted)")
    p.set_defaults(handler=_run_reproduce)


def _run_reproduce(args: argparse.Namespace) -> dict:
    if args.figure == "sco":
        from dpconvex_lab.sco_risk import reproduce_sco

        if args.n is not None:
            raise ValueError("--n applies to the contraction figures only.")
        paths, finding = reproduce_sco(args.out)
        return {**{name: str(path) for name, path in paths.items()}, "finding": finding}
    if args.figure == "contraction":
        from dpconvex_lab.contraction_figures import reproduce_contraction

        paths, finding = reproduce_contraction(args.out, **({} if args.n is None else {"n": args.n}))
        return {**{name: str(path) for name, path in paths.items()}, "finding": finding}
    if args.n is not None:
        raise ValueError("--n applies to the contraction figures only.")
    from dpconvex_lab.langevin_figures import reproduce_langevin

    return {name: str(path) for name, path in reproduce_langevin(args.out).items()}


def add_bench(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex bench adult|breast_cancer|wine|digits|scale|planning|panel|ledger|discovery``.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    from dpconvex.cli.main import _positive_float, _positive_int

    p = sub.add_parser("bench",
                       help="head-to-head benchmark (and, for adult, time vs n), written to docs/BENCHMARKS.md")
    p.add_argument("dataset", choices=["adult", *BENCH_DATASETS, "scale", "planning", "panel", "ledger", "discovery"],
                   help="UCI Adult (every method, peers, timings), a data set bundled with scikit-learn (the "
                        "defaults against non-private, majority and the peers that apply; 20 repeats of 5-fold CV), "
                        "or scale: in-memory NumPy against Dask on 4.9M x 120 rows, and an out-of-core Parquet run "
                        "twice the machine's memory (--quick: 200,000 rows and a 2M-row Parquet set), or planning: "
                        "time and memory of the default fit on 100 x 3 at epsilon 0.01 ... 1e12 (--epsilons to "
                        "choose them, --repeats timed fits per epsilon, default 3), or panel: the default estimators "
                        "on 12 tables (scikit-learn's, statsmodels' with pip install \"dpconvex[bench]\", Adult, a "
                        "generated 1M-row table) against peers and references, a verdict per table and epsilon "
                        "(--tables to choose them; --quick: two small tables and a 20,000-row generated table), or "
                        "ledger: ten releases of the default and of noisy GD at epsilon 0.1 on Adult, their total by "
                        "the privacy ledger against diffprivlib's composition formulas and dp-accounting, or "
                        "discovery: the default on every panel table from its raw cells (schema discovered privately "
                        "with a share of the budget) against the declared schema, at epsilon 0.1 and 1, and the "
                        "discovery's share 0.1 / 0.3 / 0.5 on the tables of 5,000 rows and more (--tables, --epsilons; "
                        "--quick: iris, diabetes and fair, two folds, one seed)")
    p.add_argument("--task", default="all", choices=["all", *BENCH_TASKS],
                   help="logistic regression, huberised SVM, or both")
    p.add_argument("--quick", action="store_true",
                   help="two epsilons, two of the five folds, no oracle, small timings, one default-vs-scikit-learn "
                        "cell, a two-point tuned DP-SGD grid, noisy_gd and noisy_sgd only (CI); for panel: iris, "
                        "diabetes and the generated table at 20,000 rows, two epsilons, two folds; for discovery: "
                        "iris, diabetes and fair, two folds, one seed")
    p.add_argument("--repeats", type=_positive_int, default=None,
                   help="repetitions of stratified 5-fold CV (default: 2 for adult, 20 for the bundled data sets)")
    p.add_argument("--epsilons", type=_positive_float, nargs="+", default=None,
                   help="epsilons of the private entries (default: the full grid for adult, 0.1 0.5 1 2 for the "
                        "bundled data sets and the panel, 0.1 1 for discovery)")
    p.add_argument("--methods", nargs="+", choices=list(METHODS), default=None,
                   help="dpconvex methods (default: all; with --quick: noisy_gd and noisy_sgd); the default method, "
                        "auto, is fitted once, as the entry 'auto (default)' with only epsilon, delta, the label set "
                        "and a seed")
    p.add_argument("--baselines", nargs="*", choices=list(BENCH_BASELINES), default=list(BENCH_BASELINES))
    p.add_argument("--no-timing", action="store_true",
                   help="skip the time-vs-n part and, unless --speed-epsilons is given, the default-vs-scikit-learn "
                        "speed table (both keep their previous CSV)")
    p.add_argument("--speed-epsilons", type=_positive_float, nargs="+", default=None,
                   help="epsilons of the default estimator's speed table against scikit-learn "
                        "(bench_default_speed.csv; default: the full grid)")
    p.add_argument("--speed-replications", type=_positive_float, nargs="+", default=None,
                   help="Adult row-replication factors of that table (default: 1 10; a factor < 1 is a row subset)")
    p.add_argument("--no-speed", action="store_true", help="skip the default-vs-scikit-learn speed table")
    p.add_argument("--no-oracle", action="store_true", help="skip the oracle-tuned (not private) section")
    p.add_argument("--no-tuned", action="store_true",
                   help="skip the tuned DP-SGD section (not private: grid point chosen on the test folds; the "
                        "headline's same-run DP-SGD references; a previous bench_tuned_<task>.csv is kept)")
    p.add_argument("--replicates", type=int, default=None,
                   help="fresh noise seeds per fold of the replicated headline (default 8, 1 with --quick; 0 skips "
                        "it and keeps a previous bench_replicates_<task>.csv)")
    p.add_argument("--no-selection", action="store_true",
                   help="skip the private model selection section (the ...CV estimators against the default and the "
                        "oracle, at the epsilons among 0.05 0.1 0.2 1; --quick skips it too; a previous "
                        "bench_selection.csv is kept)")
    p.add_argument("--selection-only", action="store_true",
                   help="run only the private model selection section (for --task) and rewrite its part of "
                        "BENCHMARKS.md")
    p.add_argument("--tables", nargs="+", choices=list(BENCH_PANEL_TABLES), default=None, metavar="TABLE",
                   help=f"panel and discovery only: the tables to run, among {', '.join(BENCH_PANEL_TABLES)} "
                        "(default: all; a run replaces its tables' rows of bench_panel.csv or bench_discovery.csv and "
                        "keeps the others')")
    p.add_argument("--out", default="docs", help="directory for BENCHMARKS.md, the CSVs and the PNGs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true",
                   help="reuse the folds an interrupted run of the same grid finished (checkpoints in "
                        "OUT/.bench_checkpoints; the full run takes hours on two cores)")
    p.set_defaults(handler=_run_bench)


#: ``bench`` options that only the Adult benchmark reads, with their defaults.
_ADULT_ONLY = {"methods": None, "baselines": list(BENCH_BASELINES), "no_timing": False,
               "speed_epsilons": None, "speed_replications": None, "no_speed": False, "no_oracle": False,
               "no_tuned": False, "replicates": None, "resume": False, "no_selection": False,
               "selection_only": False}


def _refuse_options(args: argparse.Namespace, refused: dict, explanation: str) -> None:
    """Raise ``ValueError`` naming the options in ``refused`` (name -> default) that ``args`` sets."""
    given = [f"--{name.replace('_', '-')}" for name, default in refused.items() if getattr(args, name) != default]
    if given:
        raise ValueError(f"{', '.join(given)}: {explanation}: leave them out.")


def _run_bench(args: argparse.Namespace) -> dict:
    if args.tables is not None and args.dataset not in ("panel", "discovery"):
        raise ValueError(f"--tables applies to 'bench panel' and 'bench discovery' only; leave it out of "
                         f"'bench {args.dataset}'.")
    if args.dataset == "panel":
        _refuse_options(args, {**_ADULT_ONLY, "task": "all", "repeats": None},
                        "not options of 'bench panel' (it takes --tables, --epsilons, --quick, --seed and --out; "
                        "repetitions are set per table)")
        from dpconvex_lab.bench_panel import run_panel

        return run_panel(args.tables, args.epsilons, out=args.out, seed=args.seed, quick=args.quick)
    if args.dataset == "discovery":
        _refuse_options(args, {**_ADULT_ONLY, "task": "all", "repeats": None},
                        "not options of 'bench discovery' (it takes --tables, --epsilons, --quick, --seed and --out; "
                        "folds and seeds are set per table)")
        from dpconvex_lab.bench_discovery import run_discovery

        return run_discovery(args.tables, args.epsilons, out=args.out, seed=args.seed, quick=args.quick)
    if args.dataset == "ledger":
        _refuse_options(args, {**_ADULT_ONLY, "task": "all", "repeats": None, "epsilons": None, "quick": False},
                        "not options of 'bench ledger' (it takes --seed and --out)")
        from dpconvex_lab.bench_ledger import run_ledger

        return run_ledger(out=args.out, seed=args.seed)
    if args.dataset == "planning":
        from dpconvex_lab.bench_planning import EPSILONS, run_planning

        _refuse_options(args, {**_ADULT_ONLY, "quick": False, "task": "all"},
                        "not options of 'bench planning' (it takes --epsilons, --repeats, --seed and --out)")
        return run_planning(out=args.out, epsilons=tuple(args.epsilons or EPSILONS), repeats=args.repeats or 3,
                            seed=args.seed)
    if args.dataset == "scale":
        from dpconvex_lab.bench_scale import run_scale

        sizes = dict(rows=200_000, out_of_core_rows=2_000_000, rows_per_block=50_000) if args.quick else {}
        return run_scale(out=args.out, seed=args.seed, **sizes)
    if args.dataset != "adult":
        _refuse_options(args, _ADULT_ONLY, "apply to 'bench adult' only; the bundled data sets run the default "
                                           "estimators against fixed references")
        from dpconvex_lab.bench_datasets import EPSILONS, REPEATS, run_datasets

        return run_datasets([args.dataset], epsilons=args.epsilons or EPSILONS, out=args.out, seed=args.seed,
                            repeats=args.repeats or REPEATS, quick=args.quick,
                            tasks=BENCH_TASKS if args.task == "all" else (args.task,))
    from dpconvex_lab.bench import run_adult_benchmark

    options = {"sizes": (), "synthetic": None} if args.no_timing else {}
    if args.no_oracle:
        options["oracle_epsilons"] = ()
    if args.no_speed:
        options["speed_epsilons"] = ()
    elif args.speed_epsilons is not None:
        options["speed_epsilons"] = args.speed_epsilons
    if args.speed_replications is not None:
        options["speed_replications"] = args.speed_replications
    return run_adult_benchmark(out_dir=args.out, task=args.task, epsilons=args.epsilons or list(BENCH_EPSILONS),
                               repeats=args.repeats or 2, methods=args.methods, baselines=args.baselines,
                               quick=args.quick, seed=args.seed, tuned=not args.no_tuned,
                               replicates=args.replicates, resume=args.resume, selection=not args.no_selection,
                               only_selection=args.selection_only, **options)


