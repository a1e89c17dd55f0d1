"""``hpbench results merge``: every attempt object of a run into results.jsonl."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_OK, add_json_flag, print_json
from hpbench._console import print_table
from hpbench.results import merge_results
from hpbench.rundir import RunLayout

log = structlog.get_logger()


def register(commands: Any) -> None:
    """Add ``results``."""
    results = commands.add_parser("results", help="merge attempt results")
    sub = results.add_subparsers(dest="results_command", metavar="SUBCOMMAND", required=True)
    merge = sub.add_parser("merge", help="write RUN_DIR/results.jsonl in a deterministic order")
    merge.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    add_json_flag(merge)
    merge.set_defaults(handler=merge_command)


def merge_command(args: argparse.Namespace) -> int:
    """``hpbench results merge RUN_DIR``."""
    attempts = merge_results(args.run_dir)
    log.info("results_merged", attempts=len(attempts))
    if args.json:
        print_json({"attempts": len(attempts), "results": str(RunLayout(args.run_dir).results)})
        return EXIT_OK
    rows = [
        (
            str(a.repetition),
            str(a.pair_order),
            a.arm,
            str(a.passed).lower(),
            a.failure_class.value,
        )
        for a in attempts
    ]
    print_table("attempts", ("repetition", "order", "arm", "passed", "failure class"), rows)
    return EXIT_OK
