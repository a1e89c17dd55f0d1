"""``hpbench router check``: judge the evidence of a router conformance check."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    add_json_flag,
    print_json,
    print_raw,
)
from hpbench._console import err_console
from hpbench._jsonio import canonical_json, write_atomic
from hpbench.routercheck.judge import judge

VERDICTS = "verdicts.json"


def register(commands: Any) -> None:
    """Add ``router`` and its sub-command ``check``."""
    router = commands.add_parser("router", help="the router image contract")
    sub = router.add_subparsers(dest="router_command", metavar="SUBCOMMAND", required=True)
    check = sub.add_parser(
        "check",
        help="judge a router conformance check's evidence (benchmarks/bench.sh router-check)",
        description=(
            "Read the evidence benchmarks/bench.sh router-check collected in RUN_DIR and "
            "print one line per item of docs/router-contract.md's conformance check: ok, or "
            "FAIL with the reason. Writes RUN_DIR/verdicts.json. Exit 0 only when every "
            "item is ok."
        ),
    )
    check.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    add_json_flag(check)
    check.set_defaults(handler=check_command)


def check_command(args: argparse.Namespace) -> int:
    """Judge, print, keep the verdicts."""
    run_dir: Path = args.run_dir
    if not run_dir.is_dir():
        err_console.print(f"hpbench: {run_dir} is not a directory", markup=False)
        return EXIT_USAGE
    verdicts = judge(run_dir)
    ok = all(verdict.ok for verdict in verdicts)
    document = {"ok": ok, "items": [verdict.to_json() for verdict in verdicts]}
    write_atomic(run_dir / VERDICTS, canonical_json(document) + "\n")
    if args.json:
        print_json(document)
    else:
        for verdict in verdicts:
            print_raw(verdict.line())
    return EXIT_OK if ok else EXIT_FINDINGS
