"""``hpbench attempt result``: the attempt object from the evidence the shell left."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import print_fields
from hpbench.errors import HpbenchError
from hpbench.results import AttemptIdentity, build_result, write_result
from hpbench.task.fingerprint import task_fingerprint
from hpbench.task.registry import default_tasks_dir, load_task

log = structlog.get_logger()


def register(commands: Any) -> None:
    """Add ``attempt``."""
    attempt = commands.add_parser("attempt", help="per-attempt result objects")
    sub = attempt.add_subparsers(dest="attempt_command", metavar="SUBCOMMAND", required=True)
    result = sub.add_parser(
        "result",
        help="decide pass/fail and write result.json (0600, atomic) into an attempt directory",
        description="Exit 0 when the attempt passed, 1 when it failed; result.json is kept.",
    )
    result.add_argument("directory", type=Path, metavar="ATTEMPT_DIR")
    result.add_argument("--task", required=True, metavar="ID")
    result.add_argument("--tasks-dir", type=Path, default=None)
    result.add_argument("--run-id", required=True)
    result.add_argument("--arm", required=True)
    result.add_argument("--repetition", type=int, required=True)
    result.add_argument("--pair-order", type=int, required=True, choices=[1, 2])
    result.add_argument("--model", required=True)
    result.add_argument("--effort", required=True)
    result.add_argument(
        "--instructions", type=Path, required=True, help="the arm's retained instructions file"
    )
    result.add_argument(
        "--workspace-root",
        required=True,
        help="the workspace path as Codex saw it (for JSONL paths)",
    )
    result.add_argument(
        "--router-capture",
        type=Path,
        default=None,
        help="the arm's router capture directory: it says who failed when Codex did",
    )
    add_json_flag(result)
    result.set_defaults(handler=result_command)


def result_command(args: argparse.Namespace) -> int:
    """``hpbench attempt result``."""
    if not args.directory.is_dir():
        msg = f"no attempt directory at {args.directory}"
        raise HpbenchError(msg)
    task = load_task(args.task, args.tasks_dir or default_tasks_dir())
    try:
        instructions_digest = hashlib.sha256(args.instructions.read_bytes()).hexdigest()
    except OSError as exc:
        msg = f"cannot read the instructions artifact {args.instructions}: {exc}"
        raise HpbenchError(msg) from None
    identity = AttemptIdentity(
        run_id=args.run_id,
        task_id=task.id,
        task_fingerprint=task_fingerprint(task),
        arm=args.arm,
        repetition=args.repetition,
        pair_order=args.pair_order,
        model=args.model,
        effort=args.effort,
        instructions_artifact=f"instructions/{args.instructions.name}",
        instructions_sha256=instructions_digest,
    )
    result = build_result(
        args.directory,
        identity,
        task.manifest.paths.allowed,
        args.workspace_root,
        required_tests=task.manifest.grader.required_tests,
        oracle_tier=task.manifest.oracle_tier.value,
        router_capture=args.router_capture,
    )
    write_result(args.directory, result)
    log.info(
        "attempt_result",
        arm=args.arm,
        repetition=args.repetition,
        passed=result["passed"],
        failure_class=result["failure_class"],
    )
    if args.json:
        print_json(result)
    else:
        print_fields(
            [
                ("attempt", f"repetition {args.repetition} {args.arm}"),
                ("passed", "yes" if result["passed"] else "no"),
                ("failure class", result["failure_class"]),
            ]
        )
    return EXIT_OK if result["passed"] else EXIT_FINDINGS
