"""Reading an attempt's published issue reports, refusing every one not exactly right,
and consolidating them.

A report is evidence only when it is a private regular file with a published name, at
most :data:`~hpbench.issuereports.model.MAX_REPORT_BYTES`, valid UTF-8 holding one JSON
object with exactly a one-line ``title`` and a ``markdown`` string. Each way a file falls
short is a finding that names the file (and the field when there is one); nothing is
repaired, and a report that fails is never consolidated as if it were fine. The reports
come from the router's container, so they are read as hostile input: no symlink is
followed, no size is trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from hpbench._jsonio import canonical_json, write_new
from hpbench._privatefiles import (
    ParseCodes,
    ScanCodes,
    is_real_dir,
    parse_document,
    read_nofollow,
    scan_private,
)
from hpbench.findings import Finding
from hpbench.issuereports import model as m

_CODES = ParseCodes(m.CODE_ENCODING, m.CODE_JSON, m.CODE_SCHEMA)
_SCAN = ScanCodes(m.CODE_FILE, m.CODE_PERMISSIONS, m.CODE_LEFTOVER)


@attrs.frozen
class Collected:
    """An attempt's reports: the consolidated file (None when refused or not written),
    how many it holds, and what was wrong."""

    reports: tuple[m.HookReport, ...]
    findings: tuple[Finding, ...]
    written: Path | None

    @property
    def ok(self) -> bool:
        """Whether every published report was accepted and consolidated."""
        return not self.findings


def read_reports(directory: Path) -> tuple[list[m.HookReport], list[Finding]]:
    """Every report published in ``directory``, in file-name order, and the findings.

    A missing directory holds no report: the hook creates it with the first report, and
    a model that reported nothing leaves none. A report with any finding is left out.
    """
    entries, findings = scan_private(directory, name=m.REPORT_NAME, noun="report", codes=_SCAN)
    reports: list[m.HookReport] = []
    for entry in entries:
        if entry.readable:
            raw = read_nofollow(entry.path, m.MAX_REPORT_BYTES)
            report = _parse(raw, str(entry.path), entry.findings)
            if report is not None and not entry.findings:
                reports.append(report)
        findings.extend(entry.findings)
    return reports, findings


def _parse(raw: bytes, source: str, problems: list[Finding]) -> m.HookReport | None:
    if len(raw) > m.MAX_REPORT_BYTES:
        problems.append(
            Finding(m.CODE_SIZE, f"holds more than {m.MAX_REPORT_BYTES} bytes", file=source)
        )
        return None
    report = parse_document(raw, m.HookReport, source=source, codes=_CODES, problems=problems)
    if report is None:
        return None
    if (problem := m.title_problem(report.title)) is not None:
        problems.append(Finding(m.CODE_SCHEMA, problem, file=source, field="$.title"))
    for field in ("title", "markdown"):
        try:
            getattr(report, field).encode("utf-8")
        except UnicodeEncodeError:
            # JSON can spell a lone surrogate (\ud800) that no UTF-8 byte string holds.
            problems.append(
                Finding(m.CODE_ENCODING, "holds a lone surrogate", file=source, field=f"$.{field}")
            )
    return report


def consolidated_text(reports: Sequence[m.HookReport]) -> str:
    """The consolidated JSON Lines: one report a line, in the order given, nothing added
    but the schema."""
    return "".join(
        canonical_json(
            {"schema": m.CONSOLIDATED_SCHEMA, "title": report.title, "markdown": report.markdown}
        )
        + "\n"
        for report in reports
    )


def collect(directory: Path, out_path: Path) -> Collected:
    """Read the reports published in ``directory`` and, when every one is acceptable,
    consolidate them into ``out_path`` (a new file, never replacing one; written even
    when there are none, so an empty collection is evidence too)."""
    if not is_real_dir(directory.parent):
        finding = Finding(m.CODE_MISSING, "no router capture to collect from", str(directory))
        return Collected((), (finding,), None)
    reports, findings = read_reports(directory)
    if findings:
        return Collected(tuple(reports), tuple(findings), None)
    try:
        write_new(out_path, consolidated_text(reports))
    except FileExistsError:
        message = "already exists; collected issue reports are never overwritten"
        return Collected(tuple(reports), (Finding(m.CODE_OVERWRITE, message, str(out_path)),), None)
    return Collected(tuple(reports), (), out_path)
