"""The run report: report.json (the document) and summary.md (its rendering)."""

from hpbench.report.model import REPORT_SCHEMA, build_report
from hpbench.report.summary import render_summary
from hpbench.report.verdict import CaptureCheck, CaptureVerdict

__all__ = ["REPORT_SCHEMA", "CaptureCheck", "CaptureVerdict", "build_report", "render_summary"]
