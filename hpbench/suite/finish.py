"""Finishing a suite: every task's row, the pooled statistics, suite.json and summary.md.

``hpbench suite finish SUITE_DIR`` runs once, after bench-suite ran the tasks one after
another (or was interrupted). It reads what bench-suite recorded (``hpbench.suite.request``)
and each task's report.json (``hpbench.suite.rows``), pools what exists
(``hpbench.suite.pooled``), and writes both files. It can be run again on the same
directory: the files are a function of what the suite directory holds.
"""

from __future__ import annotations

from pathlib import Path

import structlog

from hpbench._documents import document_json, read_document, write_document
from hpbench._jsonio import write_atomic
from hpbench.modes import mode_of
from hpbench.rundir import SuiteLayout
from hpbench.suite.document import SUITE_SCHEMA, SuiteDocument, SuiteOutcome, TaskRow
from hpbench.suite.pooled import pool
from hpbench.suite.request import read_request
from hpbench.suite.rows import task_row
from hpbench.suite.summary import render_suite_summary

log = structlog.get_logger()
CODE = "suite.document"


def _reasons(rows: tuple[TaskRow, ...], interrupted: bool) -> tuple[str, ...]:
    reasons = []
    if interrupted:
        reasons.append("the suite was interrupted; the tasks after it did not run")
    for row in rows:
        if row.figures is None:
            reasons.append(f"{row.task}: no report ({row.reason})")
            continue
        if row.exit_status is None:
            reasons.append(f"{row.task}: its run's exit status was not recorded")
        elif row.exit_status != 0:
            reasons.append(f"{row.task}: its run exited {row.exit_status}")
        if not row.figures.outcome_ok:
            reasons.append(f"{row.task}: its report's outcome is not ok (its summary says why)")
    return tuple(reasons)


def _all_or_none(values: list[bool]) -> bool | None:
    return all(values) if values else None


def build_suite(suite_dir: Path) -> SuiteDocument:
    """The suite document of a suite directory.

    Raises:
        ContractError: what bench-suite recorded is off its form (each line a finding).
    """
    layout = SuiteLayout(suite_dir)
    request = read_request(suite_dir)
    arms = tuple(arm.value for arm in mode_of(request.mode).arms)
    rows = tuple(
        task_row(layout, task, request.mode, request.exits.get(task)) for task in request.tasks
    )
    figures = [row.figures for row in rows if row.figures is not None]
    offline = [f.offline_demo for f in figures]
    reasons = _reasons(rows, request.interrupted)
    document = SuiteDocument(
        schema=SUITE_SCHEMA,
        mode=request.mode,
        arms=arms,
        interrupted=request.interrupted,
        offline_demo=any(offline) if offline else None,
        reference_routers=_all_or_none([f.reference_routers for f in figures]),
        tasks=rows,
        pooled=pool(rows, arms),
        outcome=SuiteOutcome(ok=not reasons, reasons=reasons),
    )
    # Through the contract once more, as report.json is: the written file is the model's form.
    return read_document(
        document_json(document), SuiteDocument, source=str(layout.suite_json), code=CODE
    )


def finish_suite(suite_dir: Path) -> SuiteDocument:
    """suite.json and summary.md of a suite directory; the document."""
    layout = SuiteLayout(suite_dir)
    document = build_suite(suite_dir)
    write_document(layout.suite_json, document)
    write_atomic(layout.summary, render_suite_summary(document))
    log.info("suite_finished", ok=document.outcome.ok, reasons=list(document.outcome.reasons))
    return document
