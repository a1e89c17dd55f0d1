"""What bench-suite was asked and how each task's run ended, read from the suite directory.

bench-suite writes, before the first task runs, ``mode.txt`` (the measuring mode) and
``tasks.txt`` (the task ids in the order they run, one a line), and appends one
``<id>\\t<exit status>`` line to ``exits.tsv`` as each task's run ends, or
``<id>\\tskipped`` for each task an interrupt kept from starting. Each file is read
strictly: a line off this form is a finding naming the file and line, never skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.modes import MODES
from hpbench.rundir import SUITE_SKIPPED, SuiteLayout

CODE = "suite.request"
# A task id as the manifest allows it (docs/tasks.md): a-z, 0-9 and -.
_TASK_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
# An exit status a shell can report.
_MAX_STATUS = 255


@attrs.frozen
class TaskExit:
    """How one task's run ended: its exit status, or skipped (it never started)."""

    status: int | None
    skipped: bool


@attrs.frozen
class SuiteRequest:
    """The mode, the tasks in order, and how each run that ended ended."""

    mode: str
    tasks: tuple[str, ...]
    exits: dict[str, TaskExit]

    @property
    def interrupted(self) -> bool:
        """An interrupt kept some task from starting."""
        return any(ended.skipped for ended in self.exits.values())


def _lines(path: Path, problems: list[Finding]) -> list[str] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        problems.append(Finding(CODE, "missing", file=str(path)))
        return None
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Finding(CODE, f"cannot be read: {exc}", file=str(path)))
        return None
    return text.splitlines()


def _mode(path: Path, problems: list[Finding]) -> str:
    lines = _lines(path, problems)
    if lines is None:
        return ""
    if len(lines) != 1 or lines[0] not in MODES:
        allowed = ", ".join(MODES)
        problems.append(
            Finding(CODE, f"expected one line naming a measuring mode ({allowed})", str(path))
        )
        return ""
    return lines[0]


def _tasks(path: Path, problems: list[Finding]) -> tuple[str, ...]:
    lines = _lines(path, problems)
    if lines is None:
        return ()
    tasks: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not _TASK_ID.fullmatch(line):
            problems.append(Finding(CODE, f"{line!r} is not a task id", str(path), line=number))
        elif line in tasks:
            problems.append(Finding(CODE, f"task {line} is listed twice", str(path), line=number))
        else:
            tasks.append(line)
    if not lines:
        problems.append(Finding(CODE, "no task is listed", str(path)))
    return tuple(tasks)


def _exit(value: str) -> TaskExit | None:
    if value == SUITE_SKIPPED:
        return TaskExit(status=None, skipped=True)
    if value.isdigit() and int(value) <= _MAX_STATUS:
        return TaskExit(status=int(value), skipped=False)
    return None


def _exits(path: Path, tasks: tuple[str, ...], problems: list[Finding]) -> dict[str, TaskExit]:
    # No task has ended yet (or the suite stopped before writing any): every status unknown.
    if not path.exists():
        return {}
    lines = _lines(path, problems)
    exits: dict[str, TaskExit] = {}
    for number, line in enumerate(lines or [], start=1):
        task, tab, value = line.partition("\t")
        ended = _exit(value) if tab else None
        if ended is None:
            message = f"expected <task>\\t<exit status 0-255 or {SUITE_SKIPPED}>, got {line!r}"
            problems.append(Finding(CODE, message, str(path), line=number))
        elif task not in tasks:
            problems.append(Finding(CODE, f"task {task!r} is not listed", str(path), line=number))
        elif task in exits:
            problems.append(Finding(CODE, f"task {task} ended twice", str(path), line=number))
        else:
            exits[task] = ended
    return exits


def read_request(suite_dir: Path) -> SuiteRequest:
    """The suite's mode, tasks and exits.

    Raises:
        ContractError: a file is missing or a line is off its form, each one a finding.
    """
    layout = SuiteLayout(suite_dir)
    problems: list[Finding] = []
    mode = _mode(layout.mode, problems)
    tasks = _tasks(layout.tasks_list, problems)
    exits = _exits(layout.exits, tasks, problems)
    if problems:
        raise ContractError(f"{suite_dir}: not a suite directory bench-suite wrote", problems)
    return SuiteRequest(mode=mode, tasks=tasks, exits=exits)
