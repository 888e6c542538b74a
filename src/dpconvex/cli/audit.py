"""The ``audit`` and ``soundness`` commands of the ``dpconvex`` CLI (empirical checks of the certificates)."""

from __future__ import annotations

import argparse
import json

__all__ = ["add_audit", "add_soundness"]

#: Slack of the soundness search's ratio test (the oracles are attained to about 1e-14).
SOUNDNESS_TOLERANCE = 1e-9


def add_audit(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex audit MECHANISM|all`` (the audit itself is imported by the handler only).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    from dpconvex.cli.choices import AUDIT_TARGETS
    from dpconvex.cli.main import _positive_int

    p = sub.add_parser("audit", help="empirical privacy audit of a mechanism (lower bound on epsilon)")
    p.add_argument("mechanism", choices=["all", *AUDIT_TARGETS], help="a registered audit target, or all")
    p.add_argument("--runs", type=_positive_int, default=2000, help="trainings per neighbouring data set")
    p.add_argument("--alpha", type=float, default=1e-3, help="1 - confidence of the lower bound")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run_audit)


def _run_audit(args: argparse.Namespace) -> dict:
    from dpconvex.audit import AUDITS, run_audit, run_law_check

    names = sorted(AUDITS) if args.mechanism == "all" else [args.mechanism]
    results = [run_audit(name, args.runs, alpha=args.alpha, seed=args.seed, progress=not args.json) for name in names]
    laws = {name: run_law_check(name, args.runs, seed=args.seed) for name in names if AUDITS[name].exact_law}
    if args.json:
        print(json.dumps([{**r.to_dict(), "law_check": laws[r.mechanism].to_dict() if r.mechanism in laws else None}
                          for r in results], indent=2))
    else:
        print(f"{'mechanism':<20} {'runs':>6} {'delta':>8} {'certified_eps':>14} {'audit_eps_lower':>16} "
              f"{'ratio':>6} {'profile_margin':>15}  {'audit':<6} law check")
        for r in results:
            law = laws.get(r.mechanism)
            law_text = "n/a (law unknown)" if law is None else (
                f"{'pass' if law.passed else 'FAIL'} (gap z = {law.gap_z:+.2f}, variance ratios "
                f"{law.variance_ratios[0]:.3f}, {law.variance_ratios[1]:.3f})")
            print(f"{r.mechanism:<20} {r.runs:>6} {r.delta:>8.1e} {r.certified_epsilon:>14.4f} "
                  f"{r.audit_epsilon_lower:>16.4f} {r.ratio:>6.3f} {r.profile_margin:>+15.3f}  "
                  f"{'pass' if r.passed else 'FAIL':<6} {law_text}")
    if not (all(r.passed for r in results) and all(law.passed for law in laws.values())):
        raise SystemExit(1)
    return {}


def add_soundness(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex soundness``.

    The adversarial search of :mod:`dpconvex.audit.soundness`, imported by the handler.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    from dpconvex.cli.choices import METHODS
    from dpconvex.cli.main import _positive_int

    p = sub.add_parser("soundness", help="adversarial search for neighbours that beat a certificate (noise off)")
    p.add_argument("--cover", choices=["each", "all"], default="each",
                   help="each method x loss x constraint once (CI) or the full product with every option set")
    p.add_argument("--methods", nargs="+", choices=list(METHODS), help="restrict to these methods (default: all)")
    p.add_argument("--samples", type=_positive_int, default=16, help="random starts per sub-search")
    p.add_argument("--polish", type=_positive_int, default=80, help="Nelder-Mead evaluations per polish")
    p.add_argument("--workers", type=_positive_int, default=1, help="parallel processes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_run_soundness)


def _run_soundness(args: argparse.Namespace) -> dict:
    from dpconvex.audit.soundness import summary, sweep

    results = sweep(args.cover, methods=None if args.methods is None else tuple(args.methods),
                    samples=args.samples, polish=args.polish, seed=args.seed, workers=args.workers)
    table = summary(results)
    offenders = [(r.scenario, r.ratio) for r in results if r.ratio is not None and r.ratio > 1.0 + SOUNDNESS_TOLERANCE]
    if args.json:
        print(json.dumps({"summary": table, "offenders": offenders}, indent=2))
    else:
        print(f"{'mechanism':<15} {'accepted':>9} {'refused':>8} {'largest observed/certified':>28}")
        for method, row in table.items():
            print(f"{method:<15} {row['accepted']:>9} {row['refused']:>8} {row['largest_ratio']:>28.15f}")
        for scenario, ratio in offenders:
            print(f"UNSOUND ({ratio:.6f}): {scenario}")
    if offenders:
        raise SystemExit(1)
    return {}
