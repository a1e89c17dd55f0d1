"""Issue reports (spec 004): the ``report_issue`` tool, the diagnose hook, and the report.

With issue reporting on, a treatment router offers the model a ``report_issue`` tool and
runs one diagnose hook, which hpbench installs in the router's container, once for each
completed report. The router gives the hook the report on its standard input as one
JSON object, ``{"title": …, "markdown": …}`` (the model's exact strings); the hook
publishes those bytes, unchanged, as one mode-0600 file in a mode-0700 directory inside
the router's capture volume, by a unique temporary file and an atomic link. The capture
volume belongs to one attempt of one run, so no two attempts or runs share a directory.

After routing stopped, the runner reads every published report
(:mod:`hpbench.issuereports.collect`) and consolidates the exact titles and Markdown into
the attempt's ``issue-reports.jsonl``, adding nothing that says which agent, session,
thread or call a report came from. Reports are behavioural evidence: no metric reads
them, and summary.md gives only whether reporting was on and how many were collected.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import attrs

from hpbench import schemagen
from hpbench.rundir import ISSUE_REPORTS_DIR
from hpbench.schemagen import doc

REPORT_TOOL: Final = "report_issue"
"""The tool's name, as the model calls it."""

HOOK_PATH: Final = "/etc/hpbench/diagnose-hook"
"""Where the topology installs hpbench's diagnose hook in a treatment router's container
(``contrib/compose/report-issue.yaml``); the router's ``--report-issue`` names it."""

HOOK_DIRECTORY_VARIABLE: Final = "HPBENCH_ISSUE_REPORTS"
"""The hook's environment variable: the directory it publishes reports into."""

REPORTS_PATH: Final = f"/capture/{ISSUE_REPORTS_DIR}"
"""That directory in the router's container: inside its capture volume, so the reports
are per attempt and are collected with the capture."""

OFF: Final = "off"
"""``--report-issue off``: no tool, no hook."""

REPORT_NAME: Final = re.compile(r"report-[0-9]{8}T[0-9]{6}Z-[A-Za-z0-9]{10}\.json")
"""A published report's file name: ``report-<UTC time>-<10 random characters>.json``.

File-name order is publication order to the second, so consolidation is deterministic.
Anything else in the directory (the hook's temporary ``.report.*`` above all) is left
over from a report whose publication never completed."""

MAX_REPORT_BYTES: Final = 256 * 1024
"""The most a published report may hold: a report is a title and some Markdown."""

MAX_TITLE_CHARACTERS: Final = 200

CONSOLIDATED_SCHEMA: Final = "hpbench.issue-report.v1"
COLLECTION_SCHEMA: Final = "hpbench.issue-reports.v1"

# Finding codes: one per kind of refusal.
CODE_MISSING: Final = "issue_reports.missing"
CODE_FILE: Final = "issue_reports.file"
CODE_PERMISSIONS: Final = "issue_reports.permissions"
CODE_LEFTOVER: Final = "issue_reports.leftover"
CODE_SIZE: Final = "issue_reports.size"
CODE_ENCODING: Final = "issue_reports.encoding"
CODE_JSON: Final = "issue_reports.json"
CODE_SCHEMA: Final = "issue_reports.schema"
CODE_OVERWRITE: Final = "issue_reports.overwrite"


@attrs.frozen
class HookReport:
    """What the router gives the hook, and the hook publishes unchanged: one report."""

    title: str = attrs.field(
        metadata=doc(
            f"The report's title, exactly as the model gave it: one line of 1 to "
            f"{MAX_TITLE_CHARACTERS} characters."
        )
    )
    markdown: str = attrs.field(metadata=doc("The report's body in Markdown, exactly as given."))


@attrs.frozen
class ConsolidatedReport:
    """One line of an attempt's ``issue-reports.jsonl``: a report and nothing about who
    or what sent it."""

    schema: Literal["hpbench.issue-report.v1"] = attrs.field(
        metadata=doc("Always `hpbench.issue-report.v1`.")
    )
    title: str = attrs.field(metadata=doc("The report's exact title."))
    markdown: str = attrs.field(metadata=doc("The report's exact Markdown."))


@attrs.frozen
class AttemptReports:
    """One treatment attempt's collected reports, as the run's collection keeps them."""

    repetition: int = attrs.field(metadata=doc("The attempt's repetition."))
    arm: str = attrs.field(metadata=doc("The attempt's arm."))
    collected: int | None = attrs.field(
        metadata=doc("Reports collected; null when the attempt's reports were refused.")
    )
    calls: int | None = attrs.field(
        metadata=doc(
            "`report_issue` calls in the responses Codex received whole (the capture's "
            "delivered attempts of completed exchanges): what the model asked to report, "
            "valid or not; null when the capture cannot be read."
        )
    )
    file: str | None = attrs.field(
        metadata=doc(
            "The consolidated `issue-reports.jsonl`, relative to the run directory; null "
            "when refused."
        )
    )
    findings: list[str] = attrs.field(
        metadata=doc("Why the reports were refused (each names the file), or empty.")
    )


@attrs.frozen
class IssueReportsCollection:
    """``issue-reports.json``: every treatment attempt's reports, counted (never the
    bodies: those stay in each attempt's `issue-reports.jsonl`)."""

    schema: Literal["hpbench.issue-reports.v1"] = attrs.field(
        metadata=doc("Always `hpbench.issue-reports.v1`.")
    )
    attempts: list[AttemptReports] = attrs.field(
        metadata=doc("Each scheduled treatment attempt, in run order.")
    )


CONTRACT = schemagen.Contract(
    schema_file=f"{CONSOLIDATED_SCHEMA}.schema.json", roots=(ConsolidatedReport,)
)
COLLECTION_CONTRACT = schemagen.Contract(
    schema_file=f"{COLLECTION_SCHEMA}.schema.json", roots=(IssueReportsCollection,)
)


def title_problem(title: str) -> str | None:
    """Why ``title`` is not a report title; None when it is."""
    if not title.strip():
        return "must not be empty"
    if "\n" in title or "\r" in title:
        return "must be one line"
    if len(title) > MAX_TITLE_CHARACTERS:
        return f"has {len(title)} characters; at most {MAX_TITLE_CHARACTERS}"
    return None
