"""Exact evidence (spec 004): the runner's side of the Hpatch exact-evidence records.

With ``HPATCH_EXACT_EVIDENCE=true`` the treatment router publishes one record per
completed ``hpatch``/``hpatch_recover`` call (:mod:`~hpbench.exactevidence.model`).
After routing stops, :func:`analyze` reads them strictly (:func:`read_records`), joins
them to the capture's Hpatch telemetry (:func:`join`), writes them deterministically to
``hpatch-exact-evidence.jsonl`` (:func:`consolidate`) and aggregates counts and bytes
(:func:`aggregate`). See ``docs/exact-evidence.md``.
"""

from hpbench.exactevidence.analysis import (
    ExactEvidenceAnalysis,
    OverwriteError,
    analyze,
    consolidate,
    consolidated_text,
)
from hpbench.exactevidence.join import (
    CaptureIndex,
    JoinedRecord,
    TelemetryTotals,
    join,
    join_index,
    read_capture,
)
from hpbench.exactevidence.model import (
    CONSOLIDATED_NAME,
    RECORD_SCHEMA,
    ExactEvidenceRecord,
    ExactString,
    Outcome,
    Tool,
    exact_string,
    record_json,
    record_name,
    records_dir,
)
from hpbench.exactevidence.read import ReadRecord, read_records, record_problems
from hpbench.exactevidence.rows import ExactEvidenceRows, aggregate, correction_fragments

__all__ = [
    "CONSOLIDATED_NAME",
    "RECORD_SCHEMA",
    "CaptureIndex",
    "ExactEvidenceAnalysis",
    "ExactEvidenceRecord",
    "ExactEvidenceRows",
    "ExactString",
    "JoinedRecord",
    "Outcome",
    "OverwriteError",
    "ReadRecord",
    "TelemetryTotals",
    "Tool",
    "aggregate",
    "analyze",
    "consolidate",
    "consolidated_text",
    "correction_fragments",
    "exact_string",
    "join",
    "join_index",
    "read_capture",
    "read_records",
    "record_json",
    "record_name",
    "record_problems",
    "records_dir",
]
