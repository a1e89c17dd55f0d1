"""The hidden grader's verdict from a go test -json stream, judged by required test names."""

from __future__ import annotations

import json

import pytest

from hpbench.results.gotest import parse_go_test_json
from hpbench.results.verdict import VerdictStatus, judge

REQUIRED = {"m/kv": ("TestA", "TestB")}


def stream(*events: tuple[str, str | None]) -> list[str]:
    return [
        json.dumps({"Action": action, "Package": "m/kv", **({"Test": test} if test else {})})
        for action, test in events
    ]


def verdict_of(lines: list[str], exit_code: int | None = 0) -> VerdictStatus:
    return judge(parse_go_test_json(lines), REQUIRED, exit_code).status


def test_every_required_test_passed() -> None:
    """Both required tests report pass, the package passes, exit 0: passed."""
    lines = stream(("run", "TestA"), ("pass", "TestA"), ("run", "TestB"), ("pass", "TestB"))
    assert VerdictStatus.PASSED == verdict_of([*lines, *stream(("pass", None))])


def test_subtest_verdicts_do_not_stand_for_their_parent() -> None:
    """TestB/x passing says nothing about TestB itself."""
    lines = stream(("pass", "TestA"), ("pass", "TestB/x"))
    assert VerdictStatus.MISSING == verdict_of(lines)


def test_the_last_verdict_of_a_test_counts() -> None:
    """A test reported pass and then fail (a rerun, a forged line before the real one) failed."""
    lines = stream(("pass", "TestA"), ("pass", "TestB"), ("fail", "TestB"))
    assert VerdictStatus.FAILED == verdict_of(lines, exit_code=0)


def test_a_failed_package_fails_even_when_tests_passed() -> None:
    """A package that fails after its tests (an exit in TestMain, a panic) is a failure."""
    lines = stream(("pass", "TestA"), ("pass", "TestB"), ("fail", None))
    assert VerdictStatus.FAILED == verdict_of(lines, exit_code=0)


def test_unreadable_outranks_everything() -> None:
    """One line that is not JSON makes the whole stream untrustworthy."""
    lines = [*stream(("pass", "TestA"), ("pass", "TestB")), "ok  \tm/kv\t0.01s"]
    assert VerdictStatus.UNREADABLE == verdict_of(lines)


def test_no_output_is_missing() -> None:
    """A grader that printed nothing ran no required test."""
    assert VerdictStatus.MISSING == verdict_of([], exit_code=0)


def test_a_verdict_needs_required_tests() -> None:
    """Judging against no required test would pass anything: refused."""
    with pytest.raises(ValueError, match="at least one required test"):
        judge(parse_go_test_json([]), {}, 0)
