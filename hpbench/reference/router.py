"""The reference router: test equipment that honours a router's flags and capture contract.

Run it as::

    python -m hpbench.reference.router --listen 0.0.0.0:8080 \\
        --capture-output /capture --mode passthrough --protocol native \\
        --upstream http://provider:8080/control/v1

One process, one listener. Codex's provider ``base_url`` is
``http://<router>:<port>/v1``; on that listener the router serves

- ``POST …/responses``: the Responses endpoint, relayed to
  ``<upstream>/responses`` as a byte-for-byte streaming relay;
- ``GET /api/metrics``: the ``hpatch.capture.metrics.v4`` snapshot;
- ``GET /healthz``: ``{"ok": true}`` once it listens (readiness).

What it guarantees:

- **Turn state is Codex's.** Every end-to-end request header, including
  ``x-codex-turn-state``, goes upstream unchanged on every attempt, retries
  included, and the provider's response headers come back unchanged. The router
  keeps no turn state: it never creates the header, never remembers it between
  requests and so never carries it into a new turn.
- **Credentials go upstream only**, and never into logs or capture.
- **Retries.** A connection failure, or a 502/503/504 before anything was
  relayed, is retried upstream (``--upstream-retries``, default 1), honouring
  ``retry-after`` up to a cap. Every attempt is a provider record of the same
  exchange. Any other status, and any failure after the first byte was relayed,
  goes to Codex as it came: a stream that breaks upstream breaks downstream.
- **Capture.** Records and the snapshot follow :mod:`hpbench.capture`
  (schema-6 records, ``hpatch.capture.metrics.v4``), written under
  ``--capture-output``; they hold sizes, counts, tool shapes, usage and thread
  identities, never conversation text or header values.

What the modes change (test equipment, never the real Hpatch, CTP or Mentor):

- ``--mode passthrough --protocol native --mentor off`` changes nothing: the byte-for-byte
  relay above.
- ``--mode hpatch`` offers the model the reference ``hpatch``/``hpatch_recover`` edit
  tools and routes their calls to Codex's ``apply_patch`` and back
  (:mod:`hpbench.reference._hpatch`).
- ``--protocol ctp2`` sends older tool outputs upstream as references and expands the
  model's references for Codex (:mod:`hpbench.reference._ctp2`).
- ``--mentor MODEL`` consults MODEL on the router-owned schedule of
  :mod:`hpbench.reference._mentor`, as child threads with retained child proofs.
- ``--report-issue HOOK`` (hpatch mode) offers the model ``report_issue``, keeps its calls
  from Codex and runs HOOK once per completed report (:mod:`hpbench.reference._issues`).

With any of them, routed response streams are rewritten event by event; an event routing
does not change is relayed as it came. Mode, protocol and mentor are recorded in the
snapshot, mode and protocol in every record.

This module is the command line; the relay is :mod:`hpbench.reference._relay`,
what it records :mod:`hpbench.reference._observe`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import structlog

from hpbench import __version__
from hpbench._logging import configure
from hpbench.capture import CaptureWriter, Protocol, RouterMode
from hpbench.issuereports.model import OFF
from hpbench.reference import _server
from hpbench.reference._relay import Router
from hpbench.reference._upstream import Upstream
from hpbench.reference.identity import REFERENCE_ROUTER_NAME

log = structlog.get_logger("hpbench.reference.router")


class _Identity(argparse.Action):
    """``--version``: one JSON line ``{"name": …, "version": …}`` and exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the router's identity")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(json.dumps({"name": REFERENCE_ROUTER_NAME, "version": __version__}) + "\n")
        parser.exit(0)


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        msg = "must be >= 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def _mentor(text: str) -> str:
    if not text.strip() or text != text.strip():
        msg = "must be a model name or off"
        raise argparse.ArgumentTypeError(msg)
    return text


def _report_issue(text: str) -> str:
    if text != OFF and not text.startswith("/"):
        msg = "must be off or the diagnose hook's absolute path"
        raise argparse.ArgumentTypeError(msg)
    return text


def _needs_hpatch(exact_evidence: Path | None, report_issue: str, mode: str) -> None:
    if mode == RouterMode.HPATCH.value:
        return
    if exact_evidence is not None:
        msg = "--exact-evidence needs --mode hpatch: only Hpatch calls have exact evidence"
        raise ValueError(msg)
    if report_issue != OFF:
        msg = "--report-issue needs --mode hpatch: a passthrough router offers no report_issue"
        raise ValueError(msg)


def build_parser() -> argparse.ArgumentParser:
    """The router's command line."""
    parser = argparse.ArgumentParser(
        prog="python -m hpbench.reference.router",
        description="Reference router (test equipment): streaming relay plus capture.",
    )
    parser.add_argument("--version", action=_Identity)
    _server.add_listener_arguments(parser)
    parser.add_argument("--capture-output", required=True, type=Path, metavar="DIR")
    parser.add_argument("--mode", required=True, choices=[m.value for m in RouterMode])
    parser.add_argument("--protocol", required=True, choices=[p.value for p in Protocol])
    parser.add_argument("--upstream", required=True, metavar="URL", help="base URL, e.g. …/v1")
    parser.add_argument(
        "--mentor",
        default="off",
        type=_mentor,
        metavar="MODEL|off",
        help="Mentor Handoff: the mentor model to consult, or off (the default; the control's)",
    )
    parser.add_argument(
        "--report-issue",
        default=OFF,
        type=_report_issue,
        metavar="HOOK|off",
        help="offer the model report_issue and run HOOK once per completed report, with the "
        "report as JSON on its standard input (spec 004; hpatch mode only); off (the default) "
        "offers no such tool",
    )
    parser.add_argument(
        "--exact-evidence",
        type=Path,
        metavar="DIR",
        help="keep each completed hpatch/hpatch_recover call's exact strings in DIR/records "
        "(spec 004's exact evidence; hpatch mode only; off when not given)",
    )
    parser.add_argument(
        "--upstream-retries",
        type=_non_negative,
        default=1,
        metavar="N",
        help="extra upstream attempts after a connection failure or 502/503/504 (default 1)",
    )
    parser.add_argument(
        "--upstream-idle-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="give up on a silent upstream stream after this long (default 300)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the router until SIGTERM or SIGINT."""
    args = build_parser().parse_args(argv)
    configure(level=args.log_level)
    try:
        host, port = _server.parse_listen(args.listen)
        upstream = Upstream.parse(args.upstream)
        mentor_model = None if args.mentor == "off" else args.mentor
        _needs_hpatch(args.exact_evidence, args.report_issue, args.mode)
        capture = CaptureWriter(
            args.capture_output,
            mode=RouterMode(args.mode),
            protocol=Protocol(args.protocol),
            mentor=mentor_model is not None,
        )
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"router: {exc}\n")
        return 2
    router = Router(
        upstream,
        capture,
        retries=args.upstream_retries,
        mentor_model=mentor_model,
        exact_evidence=args.exact_evidence,
        report_hook=None if args.report_issue == OFF else args.report_issue,
        head_timeout=args.upstream_idle_timeout,
        idle_timeout=args.upstream_idle_timeout,
    )
    serving = _server.serve(router.handle, host, port, log=log, upstream=str(upstream))
    try:
        return _server.run_until_signal(serving, "router", on_stop=router.drain_reports)
    finally:
        capture.close()


if __name__ == "__main__":
    sys.exit(main())
