"""A run's issue reports: every Hpatch attempt's collected once, after routing stopped.

``hpbench run finish`` calls :func:`collect_run` when the run turned issue reporting on
(``HPATCH_REPORT_ISSUE``). Each Hpatch attempt's diagnose hook published its reports
inside the router's capture (``<capture>/issue-reports/``, collected with it);
:func:`~hpbench.issuereports.collect.collect` checks them and consolidates them into the
attempt's ``issue-reports.jsonl``. The run keeps each attempt's count and findings (never
a title or a body) in ``issue-reports.json``, which the report reads. Off, nothing is
read or written.
"""

from __future__ import annotations

from pathlib import Path

from hpbench._documents import write_document
from hpbench.capture.models import ExchangeOutcome, ExchangeRecord, ProviderRecord
from hpbench.capture.validator import iter_records
from hpbench.errors import ContractError
from hpbench.issuereports import model as m
from hpbench.issuereports.collect import collect
from hpbench.modes import mode_of, reports_issues, scheduled_attempts
from hpbench.plan import RunPlan
from hpbench.rundir import CAPTURE_DIR, ISSUE_REPORTS_DIR, ISSUE_REPORTS_JSONL, RunLayout


def report_calls(capture_dir: Path) -> int | None:
    """How many ``report_issue`` calls the responses Codex received whole carried: each
    completed exchange's delivered attempt's emitted tool shapes. None when the capture
    cannot be read (unknown, never zero)."""
    if not capture_dir.is_dir():
        return None
    delivered: dict[int, int] = {}
    calls: dict[tuple[int, int], int] = {}
    try:
        for _, _, record in iter_records(capture_dir):
            if isinstance(record, ExchangeRecord):
                completed = record.outcome is ExchangeOutcome.COMPLETED
                if completed and record.delivered_attempt is not None:
                    delivered[record.exchange] = record.delivered_attempt
            elif isinstance(record, ProviderRecord):
                calls[(record.exchange, record.attempt)] = sum(
                    shape.count
                    for shape in record.emitted_tools
                    if (shape.item_type, shape.name) == ("function_call", m.REPORT_TOOL)
                )
    except (ContractError, OSError):
        return None
    return sum(calls.get(key, 0) for key in delivered.items())


def collect_run(run_dir: Path, plan: RunPlan) -> m.IssueReportsCollection | None:
    """Collect every scheduled Hpatch attempt's issue reports and keep the counts; None
    (and nothing written) when the run has issue reporting off."""
    if not plan.report_issue:
        return None
    layout = RunLayout(run_dir)
    attempts: list[m.AttemptReports] = []
    for repetition, _, arm in scheduled_attempts(mode_of(plan.mode), plan.repetitions):
        if not reports_issues(arm):
            continue
        capture = layout.router(repetition, arm.value) / CAPTURE_DIR
        out = layout.attempt(repetition, arm.value) / ISSUE_REPORTS_JSONL
        collected = collect(capture / ISSUE_REPORTS_DIR, out)
        attempts.append(
            m.AttemptReports(
                repetition=repetition,
                arm=arm.value,
                collected=len(collected.reports) if collected.ok else None,
                calls=report_calls(capture),
                file=str(out.relative_to(run_dir)) if collected.written else None,
                findings=[str(finding) for finding in collected.findings],
            )
        )
    collection = m.IssueReportsCollection(schema=m.COLLECTION_SCHEMA, attempts=attempts)
    write_document(layout.issue_reports, collection)
    return collection
