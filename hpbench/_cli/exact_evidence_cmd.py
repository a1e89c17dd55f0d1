"""``hpbench exact-evidence``: validate, consolidate and aggregate an attempt's exact evidence."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import err_console, out_console, print_fields
from hpbench.exactevidence import analyze


def register(commands: Any) -> None:
    """Add ``exact-evidence`` and its sub-command."""
    group = commands.add_parser(
        "exact-evidence", help="Hpatch exact evidence (hpatch-only, hpatch-diagnostic)"
    )
    sub = group.add_subparsers(dest="exact_evidence_command", metavar="SUBCOMMAND", required=True)
    analyze_cmd = sub.add_parser(
        "analyze",
        help="validate an attempt's records, join them to its capture and print the rows",
        description=(
            "Read every record the router published under DIR/records/, refuse any that is "
            "not exactly right, join them to the capture's Hpatch telemetry by session, "
            "thread and exchange, write them to FILE (never replacing it) and print the "
            "aggregate rows. Exit 1 naming every finding. No payload, report, diagnostic, "
            "session or call is ever printed."
        ),
    )
    analyze_cmd.add_argument("--records", required=True, type=Path, metavar="DIR")
    analyze_cmd.add_argument("--capture", required=True, type=Path, metavar="DIR")
    analyze_cmd.add_argument("--out", required=True, type=Path, metavar="FILE")
    add_json_flag(analyze_cmd)
    analyze_cmd.set_defaults(handler=_analyze)


def _analyze(args: argparse.Namespace) -> int:
    analysis = analyze(args.records, args.capture, args.out)
    if args.json:
        print_json(analysis.to_json())
    if not analysis.ok:
        # Findings name files and fields, never a record's strings or identities.
        err_console.print(f"{args.records}: exact evidence refused", markup=False, highlight=False)
        for finding in analysis.findings:
            err_console.print(f"  {finding}", markup=False, highlight=False)
        return EXIT_FINDINGS
    if not args.json and analysis.rows is not None:
        out_console.print(f"{args.out}: consolidated", markup=False, highlight=False)
        print_fields(analysis.rows.lines())
    return EXIT_OK
