"""A run's exact evidence: every treatment attempt analysed once, after routing stopped.

``hpbench run finish`` calls :func:`analyze_run` when the run turned exact evidence on
(``HPATCH_EXACT_EVIDENCE``, hpatch-only and hpatch-diagnostic). Each Hpatch attempt's
router kept its records inside its capture (``<capture>/exact-evidence/``, collected with
it); :func:`~hpbench.exactevidence.analysis.analyze` checks them, joins them to the
capture's telemetry and consolidates them into the attempt's
``hpatch-exact-evidence.jsonl``. The run keeps every attempt's analysis (rows, the lines
the summary prints, findings; never a string or an identity of a record) in
``exact-evidence.json``, which the report reads. Off, nothing is read or written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hpbench._jsonio import readable_json, write_atomic
from hpbench.exactevidence.analysis import analyze
from hpbench.modes import ARM_ROUTERS, HPATCH, mode_of, scheduled_attempts
from hpbench.plan import RunPlan
from hpbench.rundir import CAPTURE_DIR, EXACT_EVIDENCE_DIR, EXACT_EVIDENCE_JSONL, RunLayout


def analyze_run(run_dir: Path, plan: RunPlan) -> dict[str, Any] | None:
    """Analyse every scheduled Hpatch attempt's exact evidence and keep the analyses;
    None (and nothing written) when the run has exact evidence off."""
    if not plan.exact_evidence:
        return None
    layout = RunLayout(run_dir)
    analyses: dict[str, Any] = {}
    for repetition, _, arm in scheduled_attempts(mode_of(plan.mode), plan.repetitions):
        if ARM_ROUTERS[arm].mode != HPATCH:
            continue
        capture = layout.router(repetition, arm.value) / CAPTURE_DIR
        out = layout.attempt(repetition, arm.value) / EXACT_EVIDENCE_JSONL
        analysis = analyze(capture / EXACT_EVIDENCE_DIR, capture, out)
        analyses[f"{repetition}-{arm.value}"] = {
            **analysis.to_json(),
            "lines": [
                {"label": label, "value": value}
                for label, value in (analysis.rows.lines() if analysis.rows else [])
            ],
        }
    write_atomic(layout.exact_evidence, readable_json(analyses))
    return analyses
