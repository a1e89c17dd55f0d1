"""``hpbench suite finish``: suite.json and summary.md of a suite directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json, print_raw
from hpbench._documents import document_json
from hpbench.rundir import SuiteLayout
from hpbench.suite import finish_suite


def register(commands: Any) -> None:
    """Add ``suite``."""
    suite = commands.add_parser(
        "suite", help="several tasks' runs in one directory: per-task rows and pooled statistics"
    )
    sub = suite.add_subparsers(dest="suite_command", metavar="SUBCOMMAND", required=True)
    finish = sub.add_parser(
        "finish",
        help="read every task's report.json and write suite.json and summary.md",
        description=(
            "Reads what benchmarks/libexec/bench-suite recorded in SUITE_DIR (mode.txt, "
            "tasks.txt, exits.tsv) and each task's tasks/<id>/report.json; a task without a "
            "report is listed with the reason. Writes suite.json (hpbench.suite.v1) and "
            "summary.md. Exit 0 only when every task's run exited 0 and its report is ok."
        ),
    )
    finish.add_argument("suite_dir", type=Path, metavar="SUITE_DIR")
    add_json_flag(finish)
    finish.set_defaults(handler=finish_command)


def finish_command(args: argparse.Namespace) -> int:
    """``hpbench suite finish SUITE_DIR``: prints the summary's path and the outcome."""
    document = finish_suite(args.suite_dir)
    outcome = document.outcome
    if args.json:
        print_json(document_json(outcome))
    else:
        print_raw(f"{SuiteLayout(args.suite_dir).summary}: {'ok' if outcome.ok else 'not ok'}")
        for reason in outcome.reasons:
            print_raw(f"  {reason}")
    return EXIT_OK if outcome.ok else EXIT_FINDINGS
