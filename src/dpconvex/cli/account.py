"""``dpconvex account noisy-sgd``: the noisy mini-batch SGD accountant, with Ye & Shokri's number beside it.

The certificate (``epsilon``, ``bound``, ``candidates``) is :func:`dpconvex.accounting.noisy_sgd.account`'s
best-of.  Shuffled runs also get ``comparison``: Ye & Shokri's shuffled ε
(:mod:`dpconvex.accounting.ye_shokri`), a comparison number that never enters the best-of or the
certificate.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpconvex.accounting.noisy_sgd import NoisySGDEvent

__all__ = ["add_account_noisy_sgd"]


def add_account_noisy_sgd(families: argparse._SubParsersAction) -> None:
    """Register ``dpconvex account noisy-sgd`` under the ``account`` families.

    Parameters
    ----------
    families : argparse._SubParsersAction
        The families of the ``account`` subcommand.
    """
    from dpconvex.accounting import noisy_sgd
    from dpconvex.cli.main import _positive_float, _positive_int

    p = families.add_parser("noisy-sgd", help="mini-batch noisy SGD, hidden iterates (composition; Bok et al. 2024; "
                                                   "Ye & Shokri 2022 beside it as a comparison number)")
    p.add_argument("--n", type=_positive_int, required=True, help="dataset size")
    p.add_argument("--batch-size", type=_positive_int, required=True, help="b (Poisson: expected batch size)")
    p.add_argument("--epochs", type=_positive_int, required=True, help="E; the run has E*ceil(n/b) steps")
    p.add_argument("--batching", required=True, choices=list(noisy_sgd.BATCHINGS))
    p.add_argument("--step-size", type=_positive_float, required=True, help="eta")
    level = p.add_mutually_exclusive_group(required=True)
    level.add_argument("--sigma", type=_positive_float, help="sd of the Gaussian noise on the per-example gradient SUM")
    level.add_argument("--target-epsilon", type=_positive_float,
                       help="with --delta: calibrate sigma (never overshooting)")
    p.add_argument("--lipschitz", type=_positive_float, required=True,
                   help="L: per-example gradient norm bound (clip norm); sensitivity 2L")
    p.add_argument("--smoothness", type=float, default=float("inf"), help="M of every step objective")
    p.add_argument("--strong-convexity", type=float, default=0.0, help="m of every step objective (lambda)")
    p.add_argument("--diameter", type=_positive_float, help="D of the L2 ball the iterates are projected on")
    p.add_argument("--bound", default="best", help=f"best or one of {sorted(noisy_sgd.BOUNDS)}")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--order", type=float, help="print the RDP epsilon at this order (GDP bounds)")
    target.add_argument("--delta", type=float, help="print (epsilon, delta)-DP at this delta")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_account_noisy_sgd)


def _run_account_noisy_sgd(args: argparse.Namespace) -> dict:
    from dpconvex.accounting import noisy_sgd
    from dpconvex.accounting.best_of import bound_notes

    event = noisy_sgd.NoisySGDEvent(
        n=args.n, batch_size=args.batch_size, batching=args.batching, epochs=args.epochs, step_size=args.step_size,
        sigma=args.sigma or 1.0, sensitivity=2.0 * args.lipschitz, strong_convexity=args.strong_convexity,
        smoothness=args.smoothness, diameter=args.diameter,
    )
    names = noisy_sgd.candidate_bounds(event, args.bound)  # refuses excluded or inapplicable bounds, with the reason
    if args.target_epsilon is not None:
        if args.delta is None:
            raise ValueError("--target-epsilon needs --delta.")
        event = dataclasses.replace(event, sigma=noisy_sgd.calibrate_sigma(event, args.target_epsilon, args.delta,
                                                                           bound=args.bound))
    payload = {"sigma": event.sigma, "steps": event.steps, "sensitivity": event.sensitivity,
               "noise_multiplier": event.sigma / args.lipschitz}
    if args.order is not None:
        if not args.order > 1:
            raise ValueError(f"--order must be > 1; got {args.order}.")
        # A mu-GDP bound is the pair N(0,1) vs N(mu,1), whose Renyi divergence is order * mu^2 / 2.
        gdp_names = [name for name in names if name != "composition" or event.batching != "poisson"]
        if not gdp_names:
            raise ValueError("--order needs a GDP bound; the Poisson composition bound is a replace-one PLD "
                             "(dp-accounting's RDP accountant has no replace-one Poisson event): use --delta.")
        rdp = {name: args.order * noisy_sgd.gdp_mu(event, name) ** 2 / 2.0 for name in gdp_names}
        winner = min(rdp, key=rdp.get)
        return {"rdp": rdp[winner], "order": args.order, "bound": winner, "candidates": rdp,
                "composition_rdp": rdp.get("composition"), **payload, **_comparison(event, order=args.order)}
    result = noisy_sgd.account(event, args.delta, bound=args.bound)
    winner = noisy_sgd.BOUNDS[result.bound]
    mu = noisy_sgd.gdp_mu(event, result.bound) if winner.mu is not None or event.batching != "poisson" else None
    return {"epsilon": result.epsilon, "delta": result.delta, "bound": result.bound, "mu": mu,
            "theorem": result.theorem, "composition_epsilon": noisy_sgd.composition_epsilon(event, args.delta),
            "candidates": result.candidates, "notes": bound_notes(result),
            "assumptions": list(result.assumptions), **payload, **_comparison(event, delta=args.delta)}


def _comparison(event: NoisySGDEvent, *, delta: float | None = None, order: float | None = None) -> dict:
    """``{"comparison": ...}`` for shuffled runs; else {}.

    The comparison is Ye & Shokri's ε, or RDP at ``order``, and why it is not certified.
    """
    from dpconvex.accounting import ye_shokri
    from dpconvex.accounting.rdp import DEFAULT_ORDERS

    if event.batching != "shuffled":
        return {}
    if unmet := ye_shokri.unmet_conditions(event):
        numbers = {"ye_shokri_epsilon" if order is None else "ye_shokri_rdp": None, "not_applicable": unmet}
    elif order is not None:
        numbers = {"ye_shokri_rdp": float(ye_shokri.event_rdp(event, [order])[0])}
    else:
        theirs = ye_shokri.ye_shokri_epsilon(event, delta)
        improved = ye_shokri.ye_shokri_epsilon(event, delta, orders=DEFAULT_ORDERS, conversion="improved")
        numbers = {"ye_shokri_epsilon": theirs.epsilon, "ye_shokri_order": theirs.order,
                   "ye_shokri_conversion": "mironov (the authors' Opacus 0.13 conversion, their orders)",
                   "ye_shokri_epsilon_improved_conversion": improved.epsilon}
    return {"comparison": {**numbers, "note": ye_shokri.NOTE}}
