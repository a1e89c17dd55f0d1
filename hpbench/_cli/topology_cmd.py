"""``hpbench topology verify``: prove a running Compose project is isolated, structurally."""

from __future__ import annotations

import argparse
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench.topology import verify_project


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
    add_json_flag(verify)
    verify.set_defaults(handler=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    """Exit 0 when every structural rule holds, 1 with findings otherwise."""
    findings = verify_project(args.project)
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
