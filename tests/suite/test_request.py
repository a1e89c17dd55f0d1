"""What bench-suite recorded (mode.txt, tasks.txt, exits.tsv), read strictly: every line
off its form is a finding naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpbench.errors import ContractError
from hpbench.rundir import SuiteLayout
from hpbench.suite.request import TaskExit, read_request

from .conftest import write_request


def _findings(suite: Path) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ContractError) as caught:
        read_request(suite)
    return [(Path(f.file or "").name, f.line, f.message) for f in caught.value.findings]


def test_reads_mode_tasks_and_exits(tmp_path: Path) -> None:
    write_request(tmp_path, ["a", "b", "c"], ["a\t0", "b\t143", "c\tskipped"], mode="ctp-only")
    request = read_request(tmp_path)
    assert ("ctp-only", ("a", "b", "c")) == (request.mode, request.tasks)
    assert {
        "a": TaskExit(0, skipped=False),
        "b": TaskExit(143, skipped=False),
        "c": TaskExit(None, skipped=True),
    } == request.exits
    assert request.interrupted


def test_no_exits_yet_is_every_status_unknown(tmp_path: Path) -> None:
    write_request(tmp_path, ["a", "b"])
    request = read_request(tmp_path)
    assert ({}, False) == (request.exits, request.interrupted)


def test_missing_files_are_named(tmp_path: Path) -> None:
    assert [("mode.txt", None, "missing"), ("tasks.txt", None, "missing")] == _findings(tmp_path)


@pytest.mark.parametrize("mode", ["preparation-only", "router-check", "paired\npaired", ""])
def test_mode_must_be_one_measuring_mode(tmp_path: Path, mode: str) -> None:
    write_request(tmp_path, ["a"])
    SuiteLayout(tmp_path).mode.write_text(mode)
    [(name, _, message)] = _findings(tmp_path)
    assert "mode.txt" == name
    assert message.startswith("expected one line naming a measuring mode")


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (["a", "a"], 2, "task a is listed twice"),
        (["a", ""], 2, "'' is not a task id"),
        (["a", "B c"], 2, "'B c' is not a task id"),
        (["../x"], 1, "'../x' is not a task id"),
    ],
)
def test_task_list_is_checked_line_by_line(
    tmp_path: Path, lines: list[str], line: int, message: str
) -> None:
    write_request(tmp_path, ["a"])
    SuiteLayout(tmp_path).tasks_list.write_text("".join(f"{x}\n" for x in lines))
    assert [("tasks.txt", line, message)] == _findings(tmp_path)


def test_empty_task_list_is_refused(tmp_path: Path) -> None:
    write_request(tmp_path, [])
    assert [("tasks.txt", None, "no task is listed")] == _findings(tmp_path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("a 0", "expected <task>\\t<exit status 0-255 or skipped>, got 'a 0'"),
        ("a\t256", "expected <task>\\t<exit status 0-255 or skipped>, got 'a\\t256'"),
        ("a\t-1", "expected <task>\\t<exit status 0-255 or skipped>, got 'a\\t-1'"),
        ("a\tdone", "expected <task>\\t<exit status 0-255 or skipped>, got 'a\\tdone'"),
        ("z\t0", "task 'z' is not listed"),
    ],
)
def test_exit_lines_are_checked(tmp_path: Path, line: str, message: str) -> None:
    write_request(tmp_path, ["a", "b"], ["b\t0", line])
    assert [("exits.tsv", 2, message)] == _findings(tmp_path)


def test_a_task_ends_once(tmp_path: Path) -> None:
    write_request(tmp_path, ["a"], ["a\t0", "a\t1"])
    assert [("exits.tsv", 2, "task a ended twice")] == _findings(tmp_path)
