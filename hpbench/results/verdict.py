"""The hidden grader's verdict: every required test, by name, reported ``pass``.

A grader's exit status proves little: a production ``init`` that exits 0 when
it runs inside a test binary, or that rewrites the binary's own ``-test.run``
or ``-test.skip`` flags, makes ``go test`` exit 0 having run no hidden test.
So the verdict reads the ``go test -json`` stream (or the pytest grader kind's
report, :mod:`hpbench.results.pytestreport`) and requires each test the
manifest names (``grader.required_tests``) to report ``pass``. Anything else
is a failure with a status of its own, most fundamental first:

``unreadable``  the stream has lines that are not JSON events (``go test -json``
                writes nothing else to stdout), so nothing in it can be trusted
``missing``     a required test reported no verdict: it never ran (a build
                failure, an exit before the tests, a filter the code rewrote)
``failed``      a required test failed, or any other test or package failed
                (a failure beside exit 0 still fails)
``skipped``     a required test was skipped
``exit``        every required test passed but the grader exited non-zero
``passed``      every required test passed, nothing failed, and the exit was 0

What a timed-out or never-run grader means is the attempt's business
(:mod:`hpbench.results.attempt`); this module judges the stream.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from hpbench.results.gotest import HiddenTestReport, parse_go_test_file
from hpbench.results.pytestreport import parse_pytest_report_file
from hpbench.rundir import GRADER_EXIT, GRADER_STDOUT


class VerdictStatus(enum.Enum):
    """What the grader's stream says about the required tests."""

    PASSED = "passed"
    UNREADABLE = "unreadable"
    MISSING = "missing"
    FAILED = "failed"
    SKIPPED = "skipped"
    EXIT = "exit"


@attrs.frozen
class HiddenTestVerdict:
    """The verdict and the names behind it (``package.Test``)."""

    status: VerdictStatus
    required: int
    passed: tuple[str, ...]
    failed: tuple[str, ...]
    skipped: tuple[str, ...]
    missing: tuple[str, ...]
    other_failures: tuple[str, ...]
    unreadable_lines: int

    def to_json(self) -> dict[str, object]:
        """The verdict as the attempt object and qualification record it."""
        return {
            "status": self.status.value,
            "required": self.required,
            "passed": list(self.passed),
            "failed": list(self.failed),
            "skipped": list(self.skipped),
            "missing": list(self.missing),
            "other_failures": list(self.other_failures),
            "unreadable_lines": self.unreadable_lines,
        }


def required_names(required: Mapping[str, Sequence[str]]) -> list[tuple[str, str]]:
    """``(package, test)`` for every required test, in a stable order."""
    return sorted((package, test) for package, tests in required.items() for test in tests)


def judge(
    report: HiddenTestReport, required: Mapping[str, Sequence[str]], exit_code: int | None
) -> HiddenTestVerdict:
    """The verdict of one grading.

    Raises:
        ValueError: when ``required`` names no test (a manifest the loader would refuse).
    """
    names = required_names(required)
    if not names:
        msg = "a verdict needs at least one required test"
        raise ValueError(msg)
    by_outcome: dict[str, list[str]] = {"pass": [], "fail": [], "skip": [], "missing": []}
    for package, test in names:
        outcome = report.outcomes.get((package, test), "missing")
        by_outcome[outcome].append(f"{package}.{test}")
    required_set = set(names)
    other = sorted(
        f"{package}.{test}"
        for (package, test), outcome in report.outcomes.items()
        if outcome == "fail" and (package, test) not in required_set
    )
    other += [f"{package} (package)" for package in report.failed_packages]
    if report.unreadable_lines:
        status = VerdictStatus.UNREADABLE
    elif by_outcome["missing"]:
        status = VerdictStatus.MISSING
    elif by_outcome["fail"] or other:
        status = VerdictStatus.FAILED
    elif by_outcome["skip"]:
        status = VerdictStatus.SKIPPED
    elif exit_code != 0:
        status = VerdictStatus.EXIT
    else:
        status = VerdictStatus.PASSED
    return HiddenTestVerdict(
        status=status,
        required=len(names),
        passed=tuple(by_outcome["pass"]),
        failed=tuple(by_outcome["fail"]),
        skipped=tuple(by_outcome["skip"]),
        missing=tuple(by_outcome["missing"]),
        other_failures=tuple(other),
        unreadable_lines=report.unreadable_lines,
    )


def read_grading(directory: Path, kind: str = "go-test") -> tuple[HiddenTestReport, int | None]:
    """A grading directory's stream (``grader.stdout``), read as the grader ``kind``
    writes it (``pytest``: hpbench's report plugin; otherwise ``go test -json``), and its
    exit status (``grader.exit``; None when it is missing or not a number: the grader
    never reported one)."""
    try:
        exit_code: int | None = int((directory / GRADER_EXIT).read_text().strip())
    except (OSError, ValueError):
        exit_code = None
    parse = parse_pytest_report_file if kind == "pytest" else parse_go_test_file
    return parse(directory / GRADER_STDOUT), exit_code
