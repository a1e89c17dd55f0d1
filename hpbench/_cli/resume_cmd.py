"""``hpbench resume``: the checks and the bookkeeping of ``benchmarks/bench.sh resume``.

bench-resume asks, in order: ``check`` (settings and task against run.json, and which
repetitions run again), then, once the images are built and the instructions derived
again into ``resume/<n>/``, ``verify`` (provenance and instructions against the run's),
then ``start`` (the superseded evidence moved aside, the invocation recorded).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_OK, print_raw
from hpbench.errors import ContractError, HpbenchError
from hpbench.plan import load_plan, router_image
from hpbench.provenance import read_observed
from hpbench.resume import (
    instructions_mismatches,
    invocations,
    observed_mismatches,
    repetitions_to_run,
    settings_mismatches,
    start_invocation,
    task_mismatches,
)
from hpbench.rundir import Arm, RunLayout
from hpbench.task.registry import default_tasks_dir, load_task


def register(commands: Any) -> None:
    """Add ``resume``."""
    resume = commands.add_parser("resume", help="resume a stopped run (bench.sh resume asks)")
    sub = resume.add_subparsers(dest="resume_command", metavar="SUBCOMMAND", required=True)
    check = sub.add_parser(
        "check",
        help="settings and task against run.json; print the repetitions that run again",
        description=(
            "Exit 1 naming every setting (from the environment, the run's MODE and TASK when "
            "unset) and task input that differs from the run's. Otherwise print the next "
            "invocation's number, then the repetitions that run again, one a line."
        ),
    )
    check.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    check.add_argument("--tasks-dir", type=Path, default=None)
    check.set_defaults(handler=check_command)
    verify = sub.add_parser(
        "verify",
        help="the images' provenance and the instructions, had again, against the run's",
    )
    verify.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    verify.add_argument("invocation", type=int, metavar="N")
    verify.set_defaults(handler=verify_command)
    start = sub.add_parser(
        "start",
        help="move the evidence of the repetitions that run again aside; record the invocation",
    )
    start.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    start.set_defaults(handler=start_command)


def _refuse(findings: list[Any], what: str) -> None:
    if findings:
        raise ContractError(f"refusing to resume: {what}", findings)


def check_command(args: argparse.Namespace) -> int:
    """``hpbench resume check RUN_DIR``."""
    layout = RunLayout(args.run_dir)
    plan = load_plan(args.run_dir)
    if plan.grader is not None and not (layout.qualification / "oracle").is_dir():
        msg = f"{args.run_dir} stopped before its task was qualified: start a new run"
        raise HpbenchError(msg)
    if not layout.instructions(Arm(plan.arms[0])).is_file():
        msg = f"{args.run_dir} stopped before its instructions were derived: start a new run"
        raise HpbenchError(msg)
    _refuse(settings_mismatches(plan, os.environ), "this invocation is not the run's")
    task = load_task(plan.task, args.tasks_dir or default_tasks_dir())
    _refuse(task_mismatches(plan, task), "the task changed since the run")
    print_raw(str(invocations(args.run_dir)[-1].invocation + 1))
    for repetition in repetitions_to_run(args.run_dir, plan):
        print_raw(str(repetition))
    return EXIT_OK


def verify_command(args: argparse.Namespace) -> int:
    """``hpbench resume verify RUN_DIR N``: resume/N/ against the run's own."""
    layout = RunLayout(args.run_dir)
    plan = load_plan(args.run_dir)
    again = RunLayout(layout.resume_dir(args.invocation))
    images = {arm.value: router_image(plan, arm) for arm in Arm}
    now = read_observed(again, plan.arms, images, plan.codex_version, plan.go_version)
    findings = observed_mismatches(plan.observed, now)
    findings += instructions_mismatches(layout.instructions_dir, again.instructions_dir)
    _refuse(findings, "what the run measured with has changed")
    return EXIT_OK


def start_command(args: argparse.Namespace) -> int:
    """``hpbench resume start RUN_DIR``: prints the repetitions that run again."""
    plan = load_plan(args.run_dir)
    invocation = start_invocation(args.run_dir, repetitions_to_run(args.run_dir, plan))
    for repetition in invocation.repetitions:
        print_raw(str(repetition))
    return EXIT_OK
