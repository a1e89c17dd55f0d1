"""``hpbench grader verdict`` and ``qualify``: judge gradings by the task's hidden tests."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import structlog

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import err_console, print_fields
from hpbench._jsonio import write_atomic
from hpbench.errors import HpbenchError
from hpbench.results.verdict import HiddenTestVerdict, VerdictStatus, judge, read_grading
from hpbench.rundir import GRADER_EXIT, GRADER_STDERR, GRADER_STDOUT, VERDICT_JSON
from hpbench.task.manifest import Grader, Task
from hpbench.task.registry import default_tasks_dir, load_task

log = structlog.get_logger()


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

    qualify = sub.add_parser(
        "qualify",
        help="judge a task's qualification: base fails for the right reason, oracle passes",
        description=(
            "QUALIFICATION_DIR holds base/ and oracle/ gradings (bench-qualify). Base must "
            "fail with the manifest's base_discriminator in its output; the oracle must exit "
            "0 and, for a go-test or pytest grader, report pass for every required hidden "
            "test. Both verdict.json files are written; exit 1 names what did not hold."
        ),
    )
    qualify.add_argument("directory", type=Path, metavar="QUALIFICATION_DIR")
    qualify.add_argument("--task", required=True, metavar="ID")
    qualify.add_argument("--tasks-dir", type=Path, default=None)
    qualify.set_defaults(handler=qualify_command)


def _grader(task: Task) -> Grader:
    """The task's hidden grader; a latency-only task has none to judge by."""
    if task.manifest.grader is None:
        msg = f"task {task.id} is latency-only: it has no hidden grader, so no verdict"
        raise HpbenchError(msg)
    return task.manifest.grader


def _write_verdict(task: Task, directory: Path) -> tuple[HiddenTestVerdict, dict[str, Any]]:
    grader = _grader(task)
    report, exit_code = read_grading(directory, grader.kind.value)
    verdict = judge(report, grader.required_tests, exit_code)
    document = {"exit_code": exit_code, **verdict.to_json()}
    write_atomic(directory / VERDICT_JSON, json.dumps(document, indent=2) + "\n")
    log.info("grader_verdict", task=task.id, grading=directory.name, status=verdict.status.value)
    return verdict, document


def verdict_command(args: argparse.Namespace) -> int:
    """``hpbench grader verdict GRADING_DIR --task ID``."""
    task = load_task(args.task, args.tasks_dir or default_tasks_dir())
    if not _grader(task).required_tests:
        msg = f"task {task.id} names no required hidden tests (a command grader has no verdict)"
        raise HpbenchError(msg)
    verdict, document = _write_verdict(task, args.directory)
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


def _exit_code(directory: Path) -> str:
    try:
        return (directory / GRADER_EXIT).read_text(encoding="utf-8").strip()
    except OSError:
        return "none"


def _output(directory: Path) -> str:
    text = ""
    for name in (GRADER_STDOUT, GRADER_STDERR):
        try:
            text += (directory / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return text


def qualification_problem(task: Task, directory: Path) -> str | None:
    """What keeps the task from qualifying, or None; writes both verdicts when the grader
    names its tests (go-test, pytest)."""
    base, oracle = directory / "base", directory / "oracle"
    grader = _grader(task)
    base_exit, oracle_exit = _exit_code(base), _exit_code(oracle)
    verdict = None
    if grader.kind.names_tests:
        _write_verdict(task, base)
        verdict, _ = _write_verdict(task, oracle)
    if base_exit == "0":
        return f"the hidden grader passed on base; it must fail (evidence: {base})"
    if grader.base_discriminator not in _output(base):
        return (
            f"on base the grader failed (exit {base_exit}) without the discriminator "
            f"'{grader.base_discriminator}' (evidence: {base})"
        )
    if oracle_exit != "0":
        return (
            f"the hidden grader failed on oracle (exit {oracle_exit}); it must pass "
            f"(evidence: {oracle})"
        )
    if verdict is not None and verdict.status is not VerdictStatus.PASSED:
        return (
            "on oracle not every required hidden test reported pass "
            f"(verdict: {oracle / VERDICT_JSON})"
        )
    return None


def qualify_command(args: argparse.Namespace) -> int:
    """``hpbench grader qualify QUALIFICATION_DIR --task ID``."""
    task = load_task(args.task, args.tasks_dir or default_tasks_dir())
    problem = qualification_problem(task, args.directory)
    if problem is not None:
        err_console.print(f"hpbench: task {task.id}: {problem}", markup=False, highlight=False)
        return EXIT_FINDINGS
    err_console.print(
        f"hpbench: task {task.id}: base fails with '{_grader(task).base_discriminator}', "
        "oracle passes",
        markup=False,
        highlight=False,
    )
    return EXIT_OK
