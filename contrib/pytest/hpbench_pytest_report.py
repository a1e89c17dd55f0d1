"""pytest plugin of hpbench's ``pytest`` grader kind: one JSON line per verdict on stdout.

The grader image loads it with ``-p hpbench_pytest_report`` (``hpbench-pytest``). The
report takes the process's stdout for itself when it is imported, before pytest's
terminal reporter exists, and points file descriptor 1 at stderr: pytest's own output
and anything the tested code prints go to stderr, so stdout holds report lines only.
hpbench reads them strictly (``hpbench.results.pytestreport``): a line that is not one
of these events makes the whole stream unreadable.

Events (each a JSON object on its own line):

``{"event": "test", "nodeid": ..., "outcome": "passed"|"failed"|"skipped"}``
    once per test item, after its teardown: failed if any phase failed, skipped if its
    setup or call skipped, else passed.
``{"event": "collect-error", "nodeid": ...}``
    a file or node that could not be collected (an import error, say).
``{"event": "session", "exitstatus": N}``
    the session's end.

This module is hpbench's, installed in the grader image outside the graded tree; it
never imports anything from the workspace.
"""

from __future__ import annotations

import json
import os
from typing import Any

_REPORT = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)

_OUTCOMES: dict[str, str] = {}


def _emit(event: dict[str, Any]) -> None:
    _REPORT.write(json.dumps(event, sort_keys=True) + "\n")
    _REPORT.flush()


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _emit({"event": "collect-error", "nodeid": report.nodeid})


def pytest_runtest_logreport(report: Any) -> None:
    current = _OUTCOMES.get(report.nodeid, "passed")
    if report.failed:
        current = "failed"
    elif report.skipped and current == "passed" and report.when in ("setup", "call"):
        current = "skipped"
    _OUTCOMES[report.nodeid] = current
    if report.when == "teardown":
        _emit({"event": "test", "nodeid": report.nodeid, "outcome": current})


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    _emit({"event": "session", "exitstatus": int(exitstatus)})
