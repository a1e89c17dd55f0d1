"""The report's exact-evidence section (spec 004): each treatment attempt's analysis as
``hpbench run finish`` kept it (``exact-evidence.json``, hpbench/exactevidence/run.py).

Counts, bytes and retained fractions only: the records' strings and identities stay in
the consolidated ``hpatch-exact-evidence.jsonl`` files. With exact evidence on, an
analysis that refused its records, or no analysis at all, fails the run: missing or
invalid enabled evidence fails evidence collection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hpbench.rundir import RunLayout


def exact_evidence_section(
    run_dir: Path, run: dict[str, Any]
) -> tuple[dict[str, Any] | None, list[str]]:
    """The section (None when the run has exact evidence off) and the outcome's reasons."""
    if not run["exact_evidence"]:
        return None, []
    path = RunLayout(run_dir).exact_evidence
    try:
        analyses: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}, ["exact evidence is on, but no readable analysis of it exists"]
    reasons = []
    for key, analysis in sorted(analyses.items()):
        if not analysis["ok"]:
            findings = analysis["findings"]
            codes = sorted({finding["code"] for finding in findings})
            reasons.append(
                f"exact evidence of {key} refused: {len(findings)} finding(s) ({', '.join(codes)})"
            )
    return analyses, reasons
