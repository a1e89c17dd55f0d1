"""``hpbench gomodcache check``: refuse a module cache holding a benchmark-owned module."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench.errors import HpbenchError
from hpbench.gomodcache import owned_module_findings
from hpbench.task.registry import default_tasks_dir, load_task


def register(commands: Any) -> None:
    """Add ``gomodcache`` and its sub-commands."""
    cache = commands.add_parser("gomodcache", help="Go module cache proofs")
    sub = cache.add_subparsers(dest="gomodcache_command", metavar="SUBCOMMAND", required=True)
    check = sub.add_parser(
        "check",
        help="prove a module cache holds no benchmark-owned module",
        description=(
            "Walks GOMODCACHE for downloadable copies (cache/download), extracted source "
            "trees and version-control clones of any module under a benchmark-owned prefix: "
            "the task manifest's runtime.owned_module_prefixes, plus any --prefix. "
            "Exit 1 lists every copy found."
        ),
    )
    check.add_argument("directory", type=Path, metavar="GOMODCACHE")
    check.add_argument("--task", metavar="ID", help="take the owned prefixes from this task")
    check.add_argument("--tasks-dir", type=Path, default=None)
    check.add_argument(
        "--prefix", action="append", default=[], metavar="MODULE", help="an owned prefix"
    )
    add_json_flag(check)
    check.set_defaults(handler=check_command)


def check_command(args: argparse.Namespace) -> int:
    """Exit 0 when no owned module is cached, 1 with one finding per copy."""
    prefixes = list(args.prefix)
    if args.task is not None:
        tasks_dir = args.tasks_dir if args.tasks_dir is not None else default_tasks_dir()
        prefixes += load_task(args.task, tasks_dir).manifest.runtime.owned_module_prefixes
    if not prefixes:
        msg = "no owned module prefix: give --task ID or --prefix MODULE"
        raise HpbenchError(msg)
    findings = owned_module_findings(args.directory, prefixes)
    if args.json:
        print_json(
            {
                "ok": not findings,
                "gomodcache": str(args.directory),
                "owned_module_prefixes": prefixes,
                "findings": [finding.to_json() for finding in findings],
            }
        )
    elif findings:
        out_console.print(
            f"{args.directory}: rejected, it holds benchmark-owned modules",
            markup=False,
            highlight=False,
        )
        for finding in findings:
            out_console.print(f"  {finding}", markup=False, highlight=False)
    else:
        out_console.print(
            f"{args.directory}: no module under {', '.join(prefixes)}",
            markup=False,
            highlight=False,
        )
    return EXIT_FINDINGS if findings else EXIT_OK
