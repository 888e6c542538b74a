"""The ``dpconvex`` command: a thin layer over the public Python API.

Subcommands: ``train`` (:mod:`dpconvex.cli.train`), ``predict`` (:mod:`dpconvex.cli.predict`), ``account
langevin``, ``account output-perturbation``, ``account pnsgd``, ``account sco`` (here), ``account noisy-sgd``
(:mod:`dpconvex.cli.account`), ``report`` (:mod:`dpconvex.cli.report`), ``reproduce`` and ``bench``
(:mod:`dpconvex.cli.lab`), ``audit`` and ``soundness`` (:mod:`dpconvex.cli.audit`).  Run ``dpconvex COMMAND
--help`` for the options.

Only the handler of a subcommand imports what it needs: ``dpconvex --help`` and ``dpconvex account``
load neither scikit-learn, tqdm and matplotlib nor the estimators, the benchmark or the audit (the
choices the parsers list come from :mod:`dpconvex.cli.choices`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence

import numpy as np

from dpconvex.accounting import noisy_gd as accountant
from dpconvex.accounting.best_of import bound_notes
from dpconvex.accounting.rdp import CONVERSIONS
from dpconvex.cli.account import add_account_noisy_sgd
from dpconvex.cli.audit import add_audit, add_soundness
from dpconvex.cli.lab import add_bench, add_reproduce
from dpconvex.cli.output import VersionAction, cli_warnings, print_help_of, use_formatter
from dpconvex.cli.predict import add_predict
from dpconvex.cli.report import add_report
from dpconvex.cli.train import add_train
from dpconvex.exceptions import BudgetExceededError, CalibrationError

__all__ = ["main"]


def _positive_float(text: str) -> float:
    value = float(text)
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text!r}")
    return value


def _open_unit_float(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1; got {text!r}")
    return value


def _emit(payload: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(payload, indent=2, default=str))
    else:
        for key, value in payload.items():
            print(f"{key}: {value}")


# --------------------------------------------------------------------------- account langevin
def _add_account(sub: argparse._SubParsersAction) -> None:
    account = sub.add_parser("account", help="privacy accounting without training")
    families = account.add_subparsers(dest="family")
    account.set_defaults(handler=print_help_of(account))  # without a family: its help, exit status 0
    p = families.add_parser("langevin", help="noisy GD (Chourasia et al. 2021; Bok et al. 2024)")
    p.add_argument("--n", type=_positive_int, required=True, help="dataset size")
    p.add_argument("--sensitivity", type=float, required=True, help="S_g, sum-gradient sensitivity (<= 2L)")
    p.add_argument("--strong-convexity", type=float, default=0.0, help="lambda (0: merely convex)")
    p.add_argument("--smoothness", type=float, default=float("inf"), help="beta")
    p.add_argument("--step-size", type=_positive_float, required=True, help="eta")
    p.add_argument("--sigma", type=_positive_float, help="noise: per-step N(0, 2*eta*sigma^2 I)")
    p.add_argument("--iterations", type=_positive_int, required=True, help="K")
    p.add_argument("--bound", default="best", choices=["best", *accountant.BOUNDS])
    p.add_argument("--initialization", default="stationary", choices=list(accountant.INITIALIZATIONS),
                   help="stationary: theta0 ~ Proj(N(0, 2 sigma^2/lambda I)) (Cor. 1); fixed: data-independent point")
    p.add_argument("--constrained", action="store_true", help="iterates are projected onto a set C != R^d")
    p.add_argument("--diameter", type=_positive_float,
                   help="D of the convex set C the iterates are projected on (implies --constrained)")
    p.add_argument("--quadratic-loss", action="store_true", help="the loss is 1/2||theta - x||^2 (Cor. 2, exact)")
    p.add_argument("--lsi-constant", type=_positive_float, help="asserted c-LSI constant (Thm 2)")
    p.add_argument("--conversion", default="improved", choices=list(CONVERSIONS))
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--order", type=float, help="print the RDP epsilon at this order")
    target.add_argument("--delta", type=float, help="print (epsilon, delta)-DP at this delta")
    p.add_argument("--target-epsilon", type=_positive_float,
                   help="with --delta: calibrate sigma for this epsilon (never overshooting) instead")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_account_langevin)
    _add_account_output_perturbation(families)
    _add_account_pnsgd(families)
    _add_account_sco(families)
    add_account_noisy_sgd(families)


def _run_account_langevin(args: argparse.Namespace) -> dict:
    if (args.sigma is None) == (args.target_epsilon is None):
        raise ValueError("give exactly one of --sigma, or --target-epsilon with --delta to calibrate sigma.")
    event = accountant.NoisyGDEvent(
        n=args.n, sensitivity=args.sensitivity, step_size=args.step_size,
        sigma=args.sigma or 1.0, iterations=args.iterations,
        strong_convexity=args.strong_convexity, smoothness=args.smoothness,
        initialization=args.initialization, constrained=args.constrained or args.diameter is not None,
        quadratic_loss=args.quadratic_loss, lsi_constant=args.lsi_constant, diameter=args.diameter,
    )
    if args.target_epsilon is not None:
        if args.delta is None:
            raise ValueError("--target-epsilon needs --delta.")
        sigma = accountant.calibrate_sigma(event, args.target_epsilon, args.delta, bound=args.bound)
        achieved = accountant.account(dataclasses.replace(event, sigma=sigma), args.delta, bound=args.bound)
        return {"sigma": sigma, "epsilon": achieved.epsilon, "delta": args.delta, "bound": achieved.bound}
    if args.order is not None:
        if not args.order > 1:
            raise ValueError(f"--order must be > 1; got {args.order}.")
        if args.bound == "best":
            rdp, winner = accountant.best_rdp(event, [args.order])
            return {"rdp": float(rdp[0]), "order": args.order, "bound": str(winner[0])}
        rdp = accountant.rdp_curve(event, args.bound, [args.order])
        return {"rdp": float(rdp[0]), "order": args.order, "bound": args.bound}
    result = accountant.account(event, args.delta, bound=args.bound, conversion=args.conversion)
    return {
        "epsilon": result.epsilon, "delta": result.delta, "bound": result.bound,
        "theorem": result.theorem, "order": result.order, "conversion": result.conversion,
        "candidates": result.candidates,
        "notes": bound_notes(result),
    }


def _add_account_output_perturbation(families: argparse._SubParsersAction) -> None:
    p = families.add_parser("output-perturbation", help="output-perturbed SGD (Chen, Lee, Kifer 2019)")
    p.add_argument("--n", type=_positive_int, required=True, help="dataset size")
    p.add_argument("--batch-size", type=_positive_int, required=True)
    p.add_argument("--epochs", type=_positive_int, required=True)
    p.add_argument("--step-size", type=_positive_float, required=True, help="initial step size eta_0")
    p.add_argument("--schedule", default="inverse-epoch", choices=["inverse-epoch", "constant"],
                   help="eta_0/s (restarting at each averaging when --averaging-interval is given) or constant")
    p.add_argument("--averaging-interval", type=_positive_int,
                   help="tau: average the last m*tau iterates every tau epochs")
    p.add_argument("--smoothness", type=_positive_float, required=True, help="L")
    p.add_argument("--strong-convexity", type=_positive_float, required=True, help="mu")
    p.add_argument("--gradient-bound", type=float, required=True, help="R: ||grad f|| <= R (difference <= 2R)")
    p.add_argument("--sigma", type=_positive_float, help="output noise N(0, sigma^2 I)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--order", type=float, help="print the RDP epsilon at this order")
    target.add_argument("--delta", type=float, help="print (epsilon, delta)-DP at this delta")
    p.add_argument("--target-epsilon", type=_positive_float, help="with --delta: calibrate sigma instead")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run_account_output_perturbation)


def _run_account_output_perturbation(args: argparse.Namespace) -> dict:
    from dpconvex.accounting import sensitivity

    if (args.sigma is None) == (args.target_epsilon is None):
        raise ValueError("give exactly one of --sigma, or --target-epsilon with --delta to calibrate sigma.")
    if args.schedule == "constant" and args.averaging_interval:
        raise ValueError("--averaging-interval goes with --schedule inverse-epoch (RSGD-AR's restarts).")
    rule = "constant" if args.schedule == "constant" else ("restart" if args.averaging_interval else "inverse-epoch")
    schedule = sensitivity.make_schedule(args.n, args.batch_size, args.epochs, args.step_size, rule,
                                         args.averaging_interval)
    permuted = sensitivity.OutputPerturbationEvent(
        schedule=schedule, smoothness=args.smoothness, strong_convexity=args.strong_convexity,
        gradient_difference=2.0 * args.gradient_bound, sigma=args.sigma or 1.0, permuted=True,
    )
    if args.target_epsilon is not None:
        if args.delta is None:
            raise ValueError("--target-epsilon needs --delta.")
        sigma = sensitivity.calibrate_output_sigma(permuted, args.target_epsilon, args.delta)
        permuted = dataclasses.replace(permuted, sigma=sigma)
    fixed = dataclasses.replace(permuted, permuted=False)
    sensitivities = permuted.sensitivities()
    payload = {"sensitivity_max": float(sensitivities.max()), "sigma": permuted.sigma}
    if args.order is not None:
        if not args.order > 1:
            raise ValueError(f"--order must be > 1; got {args.order}.")
        curves = sensitivity.rdp_curves(permuted, [args.order])
        return {"rdp": float(min(c[0] for c in curves.values())),
                "worst_case_rdp": float(curves["worst_case"][0]), "order": args.order, **payload}
    best = sensitivity.account_output_perturbation(permuted, args.delta)
    worst = sensitivity.account_output_perturbation(fixed, args.delta)
    return {"epsilon": best.epsilon, "worst_case_epsilon": worst.epsilon, "delta": args.delta,
            "bound": best.bound, "candidates": best.candidates, **payload}


def _add_account_pnsgd(families: argparse._SubParsersAction) -> None:
    p = families.add_parser("pnsgd", help="projected noisy SGD, one record per step (Asoodeh, Diaz, Calmon 2020)")
    p.add_argument("--n", type=_positive_int, required=True, help="dataset size = number of steps")
    p.add_argument("--record", type=int, help="t in 1..n, the record to account for (default: n, the worst)")
    p.add_argument("--lipschitz", type=float, required=True, help="L: per-record gradient norm bound")
    p.add_argument("--smoothness", type=float, required=True, help="beta")
    p.add_argument("--strong-convexity", type=float, default=0.0, help="lambda (0: merely convex)")
    p.add_argument("--step-size", type=float, required=True, help="eta")
    level = p.add_mutually_exclusive_group(required=True)
    level.add_argument("--sigma", type=float, help="Gaussian Z ~ N(0, sigma^2 I); the step adds eta*Z (Thm 4)")
    level.add_argument("--scale", type=float, help="Laplace Z ~ Lap(0, b), d = 1; the step adds eta*Z (Thm 3)")
    p.add_argument("--diameter", type=float, required=True, help="D = diam(K) of the constraint set")
    p.add_argument("--noise", required=True, choices=["gaussian", "laplace"])
    p.add_argument("--random-stop", action="store_true", help="release x_T, T ~ Unif{1..n} (Thm 5, worst record t = 1)")
    p.add_argument("--dimension", type=int, default=1, help="d (Laplace noise needs d = 1)")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--epsilon", type=float, help="print delta(epsilon) of the bound and of the RDP baseline")
    target.add_argument("--delta", type=float, help="print the smallest epsilon with delta(epsilon) <= delta")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run_account_pnsgd)


def _run_account_pnsgd(args: argparse.Namespace) -> dict:
    from dpconvex.accounting import hockey_stick
    from dpconvex.accounting.hockey_stick import NOISES, RANDOM_STOP_THEOREM

    key, theorem = NOISES[args.noise]
    level = {"gaussian": args.sigma, "laplace": args.scale}[args.noise]
    if level is None:
        raise ValueError(f"--noise {args.noise} needs --{key} ({theorem}).")
    if args.dimension < 1 or (args.noise == "laplace" and args.dimension != 1):
        raise ValueError(f"dimension must be 1 with --noise laplace (Thm 3 is one-dimensional) and >= 1 with "
                         f"--noise gaussian; got {args.dimension}.")
    if args.random_stop and args.record is not None:
        raise ValueError("record cannot be given with --random-stop: Thm 5 gives every record the bound of the "
                         "worst one, t = 1.")
    record = 1 if args.random_stop else (args.n if args.record is None else args.record)
    common = dict(n=args.n, lipschitz=args.lipschitz, smoothness=args.smoothness,
                  strong_convexity=args.strong_convexity, step_size=args.step_size, diameter=args.diameter)
    payload = {
        "record": record, "theorem": RANDOM_STOP_THEOREM if args.random_stop else theorem, "noise": args.noise,
        key: level, "rho": hockey_stick.gradient_step_lipschitz(args.step_size, args.smoothness, args.strong_convexity),
    }
    baseline_note = None
    if args.noise == "laplace":
        baseline_note = "Prop. 1's RDP comparison (Feldman et al. 2018 Thm 23) is for Gaussian noise only."
    elif args.random_stop:
        baseline_note = "Prop. 1's RDP comparison is for the fixed stopping time n, not for random stopping."

    def baseline(epsilon: float) -> float:
        return float(hockey_stick.rdp_baseline_delta(
            epsilon, n=args.n, record=record, lipschitz=args.lipschitz, sigma=args.sigma,
            smoothness=args.smoothness, strong_convexity=args.strong_convexity, step_size=args.step_size))

    if args.delta is not None:
        result = hockey_stick.account_pnsgd(hockey_stick.PNSGDEvent(
            **common, **{key: level}, record=args.record, random_stop=args.random_stop), args.delta)
        rdp_epsilon = None if baseline_note else hockey_stick.epsilon_for_delta(baseline, args.delta)
        return {"epsilon": result.epsilon, "delta": result.delta, "epsilon_rdp_baseline": rdp_epsilon,
                **payload, "conversion": result.conversion, "assumptions": list(result.assumptions),
                **({"note": baseline_note} if baseline_note else {})}
    if args.random_stop:
        delta = hockey_stick.pnsgd_random_stop_delta(args.epsilon, **common, **{key: level})
    elif args.noise == "gaussian":
        delta = hockey_stick.pnsgd_gaussian_delta(args.epsilon, **common, record=record, sigma=level)
    else:
        delta = hockey_stick.pnsgd_laplace_delta(args.epsilon, **common, record=record, scale=level,
                                                 dimension=args.dimension)
    return {"delta": float(delta), "delta_rdp_baseline": None if baseline_note else baseline(args.epsilon),
            "epsilon": args.epsilon, **payload, **({"note": baseline_note} if baseline_note else {})}


def _add_account_sco(families: argparse._SubParsersAction) -> None:
    p = families.add_parser("sco", help="noisy SGD with the fresh-sample rule (Arora, Marinov, Ullah, Alg. 1)")
    p.add_argument("--n", type=_positive_int, required=True, help="dataset size")
    p.add_argument("--lipschitz", type=_positive_float, required=True, help="L; replace-one sensitivity is 2L")
    p.add_argument("--steps", type=_positive_int,
                   help="tau_max for the reported composition numbers (default 2n, the trainer's cap)")
    p.add_argument("--sigma", type=_positive_float, required=True, help="noise: xi ~ N(0, sigma^2 I) on the gradient")
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run_account_sco)


def _run_account_sco(args: argparse.Namespace) -> dict:
    from dpconvex.accounting import private_sco

    steps = 2 * args.n if args.steps is None else args.steps
    event = private_sco.SCOEvent(args.n, 2.0 * args.lipschitz, args.sigma, steps)
    result = private_sco.account_sco(event, args.delta)
    reported = private_sco.uncertified_epsilons(event, args.delta)
    return {"epsilon": result.epsilon, "delta": result.delta, "bound": result.bound,
            "epsilon_paper": reported["paper"], "epsilon_dp_accounting": reported["dp-accounting"],
            "note": "epsilon is certified (single-use bound); epsilon_paper and epsilon_dp_accounting are the "
                    "composition numbers, reported only: their per-step argument ignores the hidden set of "
                    "seen records",
            "steps": steps, "sensitivity": 2.0 * args.lipschitz, "theorem": result.theorem}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dpconvex`` command.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(prog="dpconvex", description=__doc__.splitlines()[0],
                                     epilog="Without a command, dpconvex prints this help.")
    parser.add_argument("--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command")
    parser.set_defaults(handler=print_help_of(parser))  # without a command: this help, exit status 0
    for add in (add_train, add_predict, _add_account, add_report, add_reproduce, add_bench, add_audit, add_soundness):
        add(sub)
    use_formatter(parser)  # every option's default in its --help
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (2 for invalid input, an unreadable file or a calibration that fails,
    with the message on stderr).

    Warnings are shown as ``dpconvex: warning: Category: message`` while it runs
    (:func:`dpconvex.cli.output.cli_warnings`).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0, or 2 on an error.
    """
    with cli_warnings():
        args = build_parser().parse_args(argv)
        try:
            payload = args.handler(args)
        except (ValueError, OSError, BudgetExceededError, CalibrationError) as error:
            print(f"dpconvex: error: {error}", file=sys.stderr)
            return 2
    if payload:
        _emit(payload, getattr(args, "json", True))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
