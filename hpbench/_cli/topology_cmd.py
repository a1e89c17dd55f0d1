"""``hpbench topology verify`` and ``proofs``: a running Compose project's isolation proofs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench.topology import inspect_project, verify_project
from hpbench.topology.proofs import AttachmentsError, parse_attachments, plan_proofs
from hpbench.topology.rules import ARMS, PAIRED_ARMS


def register(commands: Any) -> None:
    """Add ``topology`` and its sub-commands."""
    topology = commands.add_parser("topology", help="read-only proofs about a running topology")
    sub = topology.add_subparsers(dest="topology_command", metavar="SUBCOMMAND", required=True)
    verify = sub.add_parser(
        "verify",
        help="prove a running project's agents are isolated (inspection only)",
        description=(
            "Each agent attached only to its internal arm network, arm networks internal and "
            "holding only their agent and router, routers on their arm network and egress, "
            "no published port, no engine socket mount, no privileged container, one listener "
            "per router and no service beyond the topology's own. Exit 1 names every rule "
            "that failed."
        ),
    )
    verify.add_argument("--project", required=True, help="the Compose project name")
    _add_arms(verify)
    add_json_flag(verify)
    verify.set_defaults(handler=verify_command)
    proofs = sub.add_parser(
        "proofs",
        help="write every isolation proof a running project owes (bench-isolation runs them)",
        description=(
            "Inspects the project once and writes into --out: structure.verdicts (the "
            "structural rules judged, as verdict lines), host.probes (the host listener's "
            "own reachability) and <service>.probes for each agent (and each router when "
            "the scripted provider runs), one tab-separated probe or check per line for "
            "in-container/proofs. Exit 0 once written, whatever the verdicts say."
        ),
    )
    proofs.add_argument("--project", required=True, help="the Compose project name")
    proofs.add_argument(
        "--attachments",
        type=Path,
        required=True,
        help="the output of `bench-firewall attachments PROJECT`",
    )
    proofs.add_argument(
        "--host-port",
        type=int,
        help="the port of bench-isolation's host listener (omitted: it did not start)",
    )
    proofs.add_argument("--out", type=Path, required=True, help="the directory to write")
    _add_arms(proofs)
    proofs.add_argument(
        "--provider",
        type=_provider_address,
        help="a real run's provider URL: each agent must not reach its host and port",
    )
    proofs.set_defaults(handler=proofs_command)


def _arms(text: str) -> tuple[str, ...]:
    arms = tuple(text.split())
    unknown = [arm for arm in arms if arm not in ARMS]
    if not arms or unknown or len(set(arms)) != len(arms):
        msg = f"expected arms from {', '.join(ARMS)}, each once, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return arms


def _add_arms(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--arms",
        type=_arms,
        default=PAIRED_ARMS,
        help="the run's scheduled arms, space-separated (default: control hpatch)",
    )


def _provider_address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        msg = f"expected an http(s) URL, got {url!r}"
        raise argparse.ArgumentTypeError(msg)
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def verify_command(args: argparse.Namespace) -> int:
    """Exit 0 when every structural rule holds, 1 with findings otherwise."""
    findings = verify_project(args.project, arms=args.arms)
    if args.json:
        print_json(
            {
                "ok": not findings,
                "project": args.project,
                "findings": [finding.to_json() for finding in findings],
            }
        )
    elif findings:
        out_console.print(
            f"topology {args.project}: isolation not proven", markup=False, highlight=False
        )
        for finding in findings:
            out_console.print(f"  {finding}", markup=False, highlight=False)
    else:
        out_console.print(
            f"topology {args.project}: structurally isolated", markup=False, highlight=False
        )
    return EXIT_FINDINGS if findings else EXIT_OK


def proofs_command(args: argparse.Namespace) -> int:
    """Write the proof plan; a bad attachments file or engine error exits 1 (main)."""
    try:
        text = args.attachments.read_text(encoding="utf-8")
    except OSError as exc:
        raise AttachmentsError(f"cannot read {args.attachments}: {exc}") from exc
    attachments = parse_attachments(text)
    plan = plan_proofs(
        inspect_project(args.project), attachments, args.host_port, args.arms, args.provider
    )
    plan.write(args.out)
    return EXIT_OK
