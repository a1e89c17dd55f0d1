"""Test counts from ``go test -json`` output.

A count that cannot be read is unknown (None), never zero: a grader that did
not build ran no test, and "0 passed" would read as a result. Only top-level
tests are counted; subtests are part of their parent's verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs


@attrs.frozen
class HiddenTestCounts:
    """How many top-level tests passed, failed and were skipped."""

    passed: int
    failed: int
    skipped: int


@attrs.frozen
class HiddenTestReport:
    """What a hidden grader's test stream says: ``go test -json`` (here) or the pytest
    grader kind's report (:mod:`hpbench.results.pytestreport`).

    ``counts`` is None when no test event could be read (build failure,
    truncated or non-JSON output). ``failed_tests`` names failed top-level
    tests; ``build_failed`` is true when a package reported a build failure
    (pytest: a file could not be collected, named in ``failed_packages``).
    """

    counts: HiddenTestCounts | None
    failed_tests: tuple[str, ...]
    failed_packages: tuple[str, ...]
    build_failed: bool
    unreadable_lines: int
    outcomes: dict[tuple[str, str], str] = attrs.field(factory=dict)
    """The last verdict (pass, fail, skip) of each top-level test, by (package, test)."""
    started: int = 0
    """How many top-level tests began to run (``run`` events)."""


def parse_go_test_json(lines: Iterable[str]) -> HiddenTestReport:
    """Fold a ``go test -json`` stream into counts, line by line."""
    verdicts: dict[tuple[str, str], str] = {}
    failed_packages: set[str] = set()
    build_failed = False
    unreadable = 0
    started = 0
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        try:
            event = json.loads(stripped)
        except json.JSONDecodeError:
            unreadable += 1
            build_failed = build_failed or "[build failed]" in stripped
            continue
        if not isinstance(event, dict):
            unreadable += 1
            continue
        action = event.get("Action")
        package = str(event.get("Package", ""))
        test = event.get("Test")
        output = event.get("Output")
        if isinstance(output, str) and "[build failed]" in output:
            build_failed = True
        if action == "build-fail":
            build_failed = True
        if action == "run" and isinstance(test, str) and "/" not in test:
            started += 1
        if action not in {"pass", "fail", "skip"}:
            continue
        if isinstance(test, str) and "/" not in test:
            verdicts[(package, test)] = action
        elif test is None and action == "fail":
            failed_packages.add(package)
    return report_of(verdicts, failed_packages, build_failed, unreadable, started)


def report_of(
    verdicts: dict[tuple[str, str], str],
    failed_packages: set[str],
    build_failed: bool,
    unreadable: int,
    started: int,
) -> HiddenTestReport:
    """The report of a folded stream: each top-level test's last verdict by (package,
    test), the packages that failed on their own, and what could not be read. The counts
    are unknown (None) when no test reported a verdict."""
    counts = None
    if verdicts:
        values = list(verdicts.values())
        counts = HiddenTestCounts(values.count("pass"), values.count("fail"), values.count("skip"))
    failed = sorted(test for (_, test), verdict in verdicts.items() if verdict == "fail")
    return HiddenTestReport(
        counts,
        tuple(failed),
        tuple(sorted(failed_packages)),
        build_failed,
        unreadable,
        verdicts,
        started,
    )


def read_stream(path: Path, parse: Callable[[Iterable[str]], HiddenTestReport]) -> HiddenTestReport:
    """``parse`` over a grader's stream file; a missing file reads as no output."""
    if not path.is_file():
        return HiddenTestReport(None, (), (), False, 0)
    with path.open(encoding="utf-8", errors="replace") as stream:
        return parse(stream)


def parse_go_test_file(path: Path) -> HiddenTestReport:
    """:func:`parse_go_test_json` over a file; a missing file reads as no output."""
    return read_stream(path, parse_go_test_json)
