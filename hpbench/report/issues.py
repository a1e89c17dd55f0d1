"""The report's issue-report section (spec 004): whether the Hpatch routers offered
``report_issue``, and how many reports each attempt's diagnose hook published, as
``hpbench run finish`` collected them (``issue-reports.json``,
hpbench/issuereports/run.py).

Counts only: titles and bodies stay in each attempt's ``issue-reports.jsonl``. With issue
reporting on, reports that were refused, or no collection at all, fail the run: evidence
the run was asked to collect is either there and valid or the verdict says it is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hpbench._documents import document_json, read_document
from hpbench.errors import ContractError
from hpbench.issuereports.model import CODE_SCHEMA, IssueReportsCollection
from hpbench.rundir import RunLayout


def issue_reports_section(
    run_dir: Path, run: dict[str, Any]
) -> tuple[dict[str, Any] | None, list[str]]:
    """The section (None when the run has issue reporting off) and the outcome's reasons."""
    if not run.get("report_issue", False):
        return None, []
    path = RunLayout(run_dir).issue_reports
    try:
        collection = read_document(
            json.loads(path.read_text(encoding="utf-8")),
            IssueReportsCollection,
            source=str(path),
            code=CODE_SCHEMA,
        )
    except (OSError, ValueError, ContractError):
        reason = "issue reporting is on, but no readable collection of the reports exists"
        return {"collected": None, "calls": None, "attempts": []}, [reason]
    reasons = [
        f"issue reports of {attempt.repetition}-{attempt.arm} refused: "
        f"{len(attempt.findings)} finding(s)"
        for attempt in collection.attempts
        if attempt.collected is None
    ]
    return {
        "collected": _total([attempt.collected for attempt in collection.attempts]),
        "calls": _total([attempt.calls for attempt in collection.attempts]),
        "attempts": document_json(collection)["attempts"],
    }, reasons


def _total(counts: list[int | None]) -> int | None:
    """The sum, or None when any count is unknown (never a partial sum)."""
    return None if None in counts else sum(count or 0 for count in counts)
