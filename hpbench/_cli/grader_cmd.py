"""``hpbench grader verdict``: judge one grading by the task's required hidden tests."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import print_fields
from hpbench._jsonio import write_atomic
from hpbench.errors import HpbenchError
from hpbench.results.verdict import VerdictStatus, judge, read_grading
from hpbench.task.registry import default_tasks_dir, load_task

log = structlog.get_logger()
VERDICT_NAME = "verdict.json"


def register(commands: Any) -> None:
    """Add ``grader``."""
    grader = commands.add_parser("grader", help="the hidden grader's verdicts")
    sub = grader.add_subparsers(dest="grader_command", metavar="SUBCOMMAND", required=True)
    verdict = sub.add_parser(
        "verdict",
        help="judge a grading (grader.stdout, grader.exit) and write its verdict.json",
        description=(
            "Exit 0 when every hidden test the task names reported pass, nothing else failed "
            "and the grader exited 0; 1 otherwise. verdict.json is written either way."
        ),
    )
    verdict.add_argument("directory", type=Path, metavar="GRADING_DIR")
    verdict.add_argument("--task", required=True, metavar="ID")
    verdict.add_argument("--tasks-dir", type=Path, default=None)
    add_json_flag(verdict)
    verdict.set_defaults(handler=verdict_command)


def verdict_command(args: argparse.Namespace) -> int:
    """``hpbench grader verdict GRADING_DIR --task ID``."""
    task = load_task(args.task, args.tasks_dir or default_tasks_dir())
    required = task.manifest.grader.required_tests
    if not required:
        msg = f"task {task.id} names no required hidden tests (a command grader has no verdict)"
        raise HpbenchError(msg)
    report, exit_code = read_grading(args.directory)
    verdict = judge(report, required, exit_code)
    document = {"exit_code": exit_code, **verdict.to_json()}
    write_atomic(args.directory / VERDICT_NAME, json.dumps(document, indent=2) + "\n")
    log.info("grader_verdict", task=task.id, status=verdict.status.value)
    if args.json:
        print_json(document)
    else:
        print_fields(
            [
                ("verdict", verdict.status.value),
                ("required tests passed", f"{len(verdict.passed)} of {verdict.required}"),
                ("failed", ", ".join(verdict.failed) or "none"),
                ("missing", ", ".join(verdict.missing) or "none"),
            ]
        )
    return EXIT_OK if verdict.status is VerdictStatus.PASSED else EXIT_FINDINGS
