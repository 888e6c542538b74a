"""``dpconvex report``: one self-contained HTML page for a certificate, a model file or a privacy ledger.

The page (:mod:`dpconvex.privacy.report`) states the guarantee in one sentence, draws the ε(δ) and
trade-off curves, names the theorem and its conditions and the composition baseline, and, for a
ledger, lists the releases and their total.  The input file is recognised by its content: a model
file (``dpconvex train --out``, ``format`` ``"dpconvex-model"``), a ledger
(``PrivacyLedger.to_json``, ``format`` ``"dpconvex-privacy-ledger"``) or a certificate's
``to_dict()`` / ``to_json()``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
from typing import Any

__all__ = ["add_report", "page_of"]

#: The ``format`` values of the files that are not a bare certificate.
MODEL_FORMAT, LEDGER_FORMAT = "dpconvex-model", "dpconvex-privacy-ledger"


def add_report(sub: argparse._SubParsersAction) -> None:
    """Register ``dpconvex report`` (the file is read by its handler only).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``dpconvex`` parser.
    """
    p = sub.add_parser("report", help="write an HTML page of a certificate, a model file or a privacy ledger")
    p.add_argument("file", metavar="FILE",
                   help="a model file (dpconvex train --out), a ledger (PrivacyLedger.to_json) or a certificate "
                        "(PrivacyCertificate.to_json)")
    p.add_argument("--out", metavar="PAGE", default=None,
                   help="where to write the page (default: FILE with the suffix .html)")
    p.add_argument("--delta", type=float, default=None,
                   help="the delta of a ledger's total (default: its budget's delta, else the sum of its releases')")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=_run_report)


def page_of(record: dict[str, Any], delta: float | None = None) -> tuple[str, str]:
    """The page of a JSON record, and the guarantee it shows in one line.

    Parameters
    ----------
    record : dict
        A model file's, a ledger's or a certificate's JSON object.
    delta : float, optional
        The δ of a ledger's total.

    Returns
    -------
    (str, str)
        The HTML page and a one-line summary.

    Raises
    ------
    ValueError
        When the record is none of the three.
    """
    from dpconvex.privacy.certificate import PrivacyCertificate
    from dpconvex.privacy.certificate_text import headline
    from dpconvex.privacy.ledger import PrivacyLedger
    from dpconvex.privacy.report import certificate_page, ledger_page

    kind = record.get("format") if isinstance(record, dict) else None
    if kind == LEDGER_FORMAT:
        ledger = PrivacyLedger.from_dict(record)
        if delta is not None and not 0.0 < delta < 1.0:
            raise ValueError(f"--delta must be in (0, 1); got {delta!r}.")
        page = ledger_page(ledger, delta)
        if not ledger.releases:
            return page, "an empty ledger"
        total = ledger.total(delta if delta is not None else
                             (ledger.budget[1] if ledger.budget else
                              min(0.5, sum(r.certificate.delta for r in ledger.releases))))
        return page, f"{len(ledger.releases)} releases: ({total.epsilon:.4g}, {total.delta:.3g})-DP by {total.method}"
    if kind == MODEL_FORMAT:
        record = record.get("certificate")
    if not isinstance(record, dict) or "mechanism" not in record or "epsilon" not in record:
        raise ValueError("FILE must hold a model file (dpconvex train --out), a privacy ledger "
                         "(PrivacyLedger.to_json) or a certificate (PrivacyCertificate.to_json).")
    certificate = PrivacyCertificate.from_dict(record)
    return certificate_page(certificate), headline(certificate)


def _run_report(args: argparse.Namespace) -> dict[str, Any]:
    source = pathlib.Path(args.file)
    try:
        record = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{source} is not a JSON file: {error}") from error
    page, summary = page_of(record, args.delta)
    out = pathlib.Path(args.out) if args.out else source.with_suffix(".html")
    out.write_text(page, encoding="utf-8")
    return {"page": str(out), "guarantee": summary}
