"""Test verdicts from the ``pytest`` grader kind's report stream.

``hpbench-pytest`` (contrib/pytest) runs pytest with hpbench's report plugin, which
writes one JSON object a line to stdout and nothing else (every other output goes to
stderr): a ``test`` event per test item, a ``collect-error`` event per file that could
not be collected, and a ``session`` event at the end. This module folds that stream into
the same :class:`~hpbench.results.gotest.HiddenTestReport` a ``go test -json`` stream
gives, so one verdict rule (:mod:`hpbench.results.verdict`) judges both.

A test is named as the manifest's ``required_tests`` name it: by the hidden file's
workspace path (the "package") and the test's name within it (``test_x``, or
``TestGroup::test_x``). The parametrized cases of one test are folded into it, as Go's
subtests are into their parent: any failed case fails it, else any skipped case skips it.
A line that is not one of the plugin's events makes the stream unreadable; a count that
cannot be read is unknown (None), never zero.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hpbench.results.gotest import HiddenTestReport, read_stream, report_of

_OUTCOMES = {"passed": "pass", "failed": "fail", "skipped": "skip"}
_RANK = {"pass": 0, "skip": 1, "fail": 2}


def split_node_id(node_id: str) -> tuple[str, str] | None:
    """``(file, test)`` of a pytest node id, parameters dropped: ``tests/t.py::test_a[1]``
    is ``("tests/t.py", "test_a")``. None when the id names no test in a file."""
    file, separator, rest = node_id.partition("::")
    if not separator or not file or not rest:
        return None
    name = rest.split("[", 1)[0]
    return (file, name) if name else None


def _event(line: str) -> dict[str, object] | None:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        return None
    kind = event["event"]
    if kind == "test":
        valid = isinstance(event.get("nodeid"), str) and event.get("outcome") in _OUTCOMES
    elif kind == "collect-error":
        valid = isinstance(event.get("nodeid"), str)
    elif kind == "session":
        status = event.get("exitstatus")
        valid = isinstance(status, int) and not isinstance(status, bool)
    else:
        valid = False
    return event if valid else None


def parse_pytest_report(lines: Iterable[str]) -> HiddenTestReport:
    """Fold the report plugin's stream into per-test verdicts, line by line."""
    verdicts: dict[tuple[str, str], str] = {}
    failed_files: set[str] = set()
    unreadable = 0
    started = 0
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        event = _event(stripped)
        if event is None:
            unreadable += 1
            continue
        if event["event"] == "collect-error":
            node_id = str(event["nodeid"])
            failed_files.add(node_id.partition("::")[0] or "(collection)")
            continue
        if event["event"] != "test":
            continue
        key = split_node_id(str(event["nodeid"]))
        if key is None:
            unreadable += 1
            continue
        started += 1
        outcome = _OUTCOMES[str(event["outcome"])]
        previous = verdicts.get(key)
        if previous is None or _RANK[outcome] > _RANK[previous]:
            verdicts[key] = outcome
    return report_of(verdicts, failed_files, bool(failed_files), unreadable, started)


def parse_pytest_report_file(path: Path) -> HiddenTestReport:
    """:func:`parse_pytest_report` over a file; a missing file reads as no output."""
    return read_stream(path, parse_pytest_report)
