"""One attempt's exact-evidence analysis: read, join, consolidate, aggregate.

The runner calls :func:`analyze` once per treatment attempt after its routing stopped.
Any finding fails the analysis: the consolidated file is then not written and no rows are
given, because rows over records that could not all be attributed would claim more than
the evidence holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench._jsonio import canonical_json, write_new
from hpbench.errors import HpbenchError
from hpbench.exactevidence import model as m
from hpbench.exactevidence.join import JoinedRecord, join_index, read_capture
from hpbench.exactevidence.read import read_records
from hpbench.exactevidence.rows import ExactEvidenceRows, aggregate
from hpbench.findings import Finding


class OverwriteError(HpbenchError):
    """The consolidated file already exists; evidence is never replaced."""


@attrs.frozen
class ExactEvidenceAnalysis:
    """The rows of one attempt's exact evidence, or the findings that refused it."""

    rows: ExactEvidenceRows | None
    findings: tuple[Finding, ...]
    consolidated: Path | None

    @property
    def ok(self) -> bool:
        """True when nothing was refused (and so the rows and the file exist)."""
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        """The analysis as JSON: never a record's strings or identities."""
        return {
            "ok": self.ok,
            "rows": self.rows.to_json() if self.rows is not None else None,
            "consolidated": str(self.consolidated) if self.consolidated is not None else None,
            "findings": [finding.to_json() for finding in self.findings],
        }


def consolidated_text(joined: Sequence[JoinedRecord]) -> str:
    """The consolidated JSONL: one canonical record a line, in telemetry order."""
    ordered = sorted(joined, key=JoinedRecord.sort_key)
    return "".join(canonical_json(m.record_json(item.record)) + "\n" for item in ordered)


def consolidate(joined: Sequence[JoinedRecord], out_path: Path | str) -> Path:
    """Write ``joined`` to ``out_path`` (mode 0600); refuse a path that already exists.

    The text goes to a private same-directory temporary file first and is then linked
    into place: a link never replaces a file, so a reader sees the whole file or none,
    and an existing file stays untouched.

    Raises:
        OverwriteError: when ``out_path`` exists.
    """
    target = Path(out_path)
    try:
        write_new(target, consolidated_text(joined))
    except FileExistsError:
        msg = f"{target}: already exists; exact evidence is never overwritten"
        raise OverwriteError(msg) from None
    return target


def analyze(
    records_dir: Path | str, capture_dir: Path | str, out_path: Path | str
) -> ExactEvidenceAnalysis:
    """Validate the records in ``records_dir``, join them to ``capture_dir``'s telemetry,
    consolidate them into ``out_path`` and aggregate their rows.

    ``records_dir`` is the exact-evidence directory the router was given (its records
    live in ``records/`` under it). A missing ``records/`` is accepted only when the
    telemetry counted no routed call.
    """
    records, findings = read_records(records_dir)
    index, capture_findings = read_capture(capture_dir)
    findings += capture_findings
    if not m.records_dir(records_dir).exists() and index.totals.routed and not findings:
        findings.append(
            Finding(
                m.CODE_MISSING,
                f"no records directory, but the telemetry counted {index.totals.routed} "
                "routed call(s)",
                file=str(m.records_dir(records_dir)),
            )
        )
    joined, unmatched = join_index(records, index)
    findings += unmatched
    if findings:
        return ExactEvidenceAnalysis(None, tuple(findings), None)
    try:
        written = consolidate(joined, out_path)
    except OverwriteError as exc:
        finding = Finding(m.CODE_OVERWRITE, str(exc), file=str(out_path))
        return ExactEvidenceAnalysis(None, (finding,), None)
    return ExactEvidenceAnalysis(aggregate(joined, index.totals), (), written)
