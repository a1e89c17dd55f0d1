"""``hpbench workspace verify``: prove a workspace is history-free."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import out_console
from hpbench.task.registry import default_tasks_dir, load_task
from hpbench.task.workspace import verify_workspace

log = structlog.get_logger()


def register(commands: Any) -> None:
    """Add ``workspace`` and its sub-commands."""
    workspace = commands.add_parser("workspace", help="agent workspace proofs")
    sub = workspace.add_subparsers(dest="workspace_command", metavar="SUBCOMMAND", required=True)
    verify = sub.add_parser(
        "verify",
        help="prove a workspace is a history-free base snapshot",
        description=(
            "Exactly one commit, no remote, no tags, no reflog beyond that commit, no object of "
            "the oracle revision, no hidden grader file. Exit 1 lists every reason it is not."
        ),
    )
    verify.add_argument("directory", type=Path, metavar="DIR")
    verify.add_argument("--task", required=True, metavar="ID")
    verify.add_argument("--tasks-dir", type=Path, default=None)
    verify.add_argument(
        "--task-repo",
        type=Path,
        default=None,
        help="repository holding base and oracle (built on the fly for bundled tasks)",
    )
    add_json_flag(verify)
    verify.set_defaults(handler=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    """Exit 0 when the workspace is history-free, 1 with findings otherwise."""
    tasks_dir = args.tasks_dir if args.tasks_dir is not None else default_tasks_dir()
    task = load_task(args.task, tasks_dir)
    findings = verify_workspace(args.directory, task, args.task_repo)
    log.info("workspace_verified", task=task.id, findings=[f.code for f in findings])
    if args.json:
        print_json(
            {
                "ok": not findings,
                "workspace": str(args.directory),
                "task": task.id,
                "findings": [finding.to_json() for finding in findings],
            }
        )
    elif findings:
        out_console.print(f"{args.directory}: not history-free", markup=False, highlight=False)
        for finding in findings:
            out_console.print(f"  {finding}", markup=False, highlight=False)
    else:
        out_console.print(f"{args.directory}: history-free", markup=False, highlight=False)
    return EXIT_FINDINGS if findings else EXIT_OK
