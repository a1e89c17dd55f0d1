"""``hpbench report build``: report.json and summary.md for a run directory."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench.errors import HpbenchError
from hpbench.finish import write_report
from hpbench.rundir import RunLayout


def register(commands: Any) -> None:
    """Add ``report``."""
    report = commands.add_parser("report", help="assemble report.json and summary.md")
    sub = report.add_subparsers(dest="report_command", metavar="SUBCOMMAND", required=True)
    build = sub.add_parser(
        "build",
        help="validate router captures, analyse commands, write report.json and summary.md",
        description="Exit 0 only when every scheduled attempt passed and all evidence validated.",
    )
    build.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    add_json_flag(build)
    build.set_defaults(handler=build_command)


def build_command(args: argparse.Namespace) -> int:
    """``hpbench report build RUN_DIR``."""
    layout = RunLayout(args.run_dir)
    if not layout.run_json.is_file():
        msg = f"{args.run_dir}: no run.json; not a run directory"
        raise HpbenchError(msg)
    # The same build as the end of every run (hpbench run finish).
    report = write_report(args.run_dir)
    if args.json:
        print_json(report["outcome"])
    else:
        summary = layout.summary.read_text(encoding="utf-8")
        out_console.print(summary, markup=False, highlight=False)
    return EXIT_OK if report["outcome"]["ok"] else EXIT_FINDINGS
