"""The pytest grader kind's report stream, folded and judged by required test names."""

from __future__ import annotations

import json

import pytest

from hpbench.results.gotest import HiddenTestCounts
from hpbench.results.pytestreport import parse_pytest_report, split_node_id
from hpbench.results.verdict import VerdictStatus, judge

FILE = "tests/test_hidden.py"
REQUIRED = {FILE: ("test_a", "TestGroup::test_b")}


def event_line(node: str, outcome: str) -> str:
    return json.dumps({"event": "test", "nodeid": f"{FILE}::{node}", "outcome": outcome})


def session(status: int = 0) -> str:
    return json.dumps({"event": "session", "exitstatus": status})


def verdict_of(lines: list[str], exit_code: int | None = 0) -> VerdictStatus:
    return judge(parse_pytest_report(lines), REQUIRED, exit_code).status


@pytest.mark.parametrize(
    ("node_id", "expected"),
    [
        ("tests/t.py::test_a", ("tests/t.py", "test_a")),
        ("tests/t.py::test_a[1-x]", ("tests/t.py", "test_a")),
        ("tests/t.py::TestGroup::test_b[p]", ("tests/t.py", "TestGroup::test_b")),
        ("tests/t.py", None),
        ("::test_a", None),
        ("tests/t.py::[1]", None),
    ],
)
def test_node_ids_name_file_and_test(node_id: str, expected: tuple[str, str] | None) -> None:
    assert expected == split_node_id(node_id)


def test_every_required_test_passed() -> None:
    lines = [event_line("test_a", "passed"), event_line("TestGroup::test_b", "passed"), session()]
    report = parse_pytest_report(lines)
    assert HiddenTestCounts(passed=2, failed=0, skipped=0) == report.counts
    assert VerdictStatus.PASSED == verdict_of(lines)


def test_one_failed_case_fails_the_parametrized_test() -> None:
    """Cases fold into their test as Go subtests into their parent: a later pass does not
    hide an earlier failure."""
    lines = [
        event_line("test_a[1]", "failed"),
        event_line("test_a[2]", "passed"),
        event_line("TestGroup::test_b", "passed"),
    ]
    assert VerdictStatus.FAILED == verdict_of(lines)
    assert ("test_a",) == parse_pytest_report(lines).failed_tests


def test_a_skipped_case_skips_the_test() -> None:
    lines = [
        event_line("test_a[1]", "passed"),
        event_line("test_a[2]", "skipped"),
        event_line("TestGroup::test_b", "passed"),
    ]
    assert VerdictStatus.SKIPPED == verdict_of(lines)


def test_a_collection_error_leaves_the_tests_missing() -> None:
    """The base's import error: no test ran, the file is named as failed."""
    lines = [json.dumps({"event": "collect-error", "nodeid": FILE}), session(2)]
    report = parse_pytest_report(lines)
    assert report.counts is None  # unknown, never zero
    assert report.build_failed
    assert (FILE,) == report.failed_packages
    assert VerdictStatus.MISSING == verdict_of(lines, 2)


def test_another_failing_test_fails_the_verdict() -> None:
    lines = [
        event_line("test_a", "passed"),
        event_line("TestGroup::test_b", "passed"),
        event_line("test_extra", "failed"),
    ]
    assert VerdictStatus.FAILED == verdict_of(lines, 1)


def test_passing_tests_with_a_nonzero_exit_fail() -> None:
    lines = [event_line("test_a", "passed"), event_line("TestGroup::test_b", "passed")]
    assert VerdictStatus.EXIT == verdict_of(lines, 1)


@pytest.mark.parametrize(
    "line",
    [
        "....",  # pytest's own progress, which belongs on stderr
        "PASSED tests/test_hidden.py::test_a",
        json.dumps(["test", "tests/test_hidden.py::test_a", "passed"]),
        json.dumps({"event": "test", "nodeid": f"{FILE}::test_a", "outcome": "xpassed"}),
        json.dumps({"event": "test", "nodeid": f"{FILE}::test_a"}),
        json.dumps({"event": "test", "nodeid": FILE, "outcome": "passed"}),
        json.dumps({"event": "session", "exitstatus": True}),
        json.dumps({"event": "verdict", "status": "passed"}),
    ],
)
def test_a_foreign_line_makes_the_stream_unreadable(line: str) -> None:
    """Anything but the plugin's events means something else wrote the stream."""
    lines = [event_line("test_a", "passed"), event_line("TestGroup::test_b", "passed"), line]
    assert 1 == parse_pytest_report(lines).unreadable_lines
    assert VerdictStatus.UNREADABLE == verdict_of(lines)


def test_an_empty_stream_is_unknown() -> None:
    report = parse_pytest_report([])
    assert report.counts is None
    assert VerdictStatus.MISSING == verdict_of([], None)
