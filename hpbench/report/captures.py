"""The report's capture check: the capture contract's validator, per router directory.

A router directory (``routers/<repetition>-<arm>/``) holds ``metrics.json``
(the ``/api/metrics`` snapshot) and ``capture/`` (the records). The attempt's
Codex JSONL is passed along so each root thread's usage is reconciled with
what Codex reported for it. The verdict keeps the validator's typed snapshot and
its findings as they are (code, file, line, field); the report reads nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench.capture.children import ModelExpectation
from hpbench.capture.validator import validate_capture
from hpbench.findings import Finding
from hpbench.modes import ARM_ROUTERS, arm_protocol
from hpbench.report.verdict import CaptureCheck, CaptureVerdict
from hpbench.rundir import CAPTURE_DIR, METRICS_JSON, Arm

SNAPSHOT_NAME = METRICS_JSON
RECORDS_DIR = CAPTURE_DIR
EVIDENCE_MISSING = "report.evidence.missing"
CODEX_JSONL_MISSING = "report.codex_jsonl.missing"


def capture_check(run: Mapping[str, Any]) -> CaptureCheck:
    """The capture check of a run (its run.json as JSON): each arm's router must show its
    configuration (hpbench.modes.ARM_ROUTERS), the hpatch and mentor arms the protocol the
    run retained (``"treatment_model_protocol"``), and only the mentor arm Mentor Handoff,
    consulting the retained ``"mentor_model"``."""
    protocol = run["treatment_model_protocol"]
    # Every arm runs the configured main model; a child (Codex's own sub-agent) runs it
    # too. Only the Mentor treatment may use a mentor model, and it must (spec 002): the
    # permitted one comes from the retained mentor configuration, never the main model.
    plain = ModelExpectation(parent=run["model"], child=frozenset({run["model"]}))
    mentored = attrs.evolve(plain, mentor=run["mentor_model"] or None)

    def check(router_dir: Path, arm: str, codex_jsonl: Sequence[Path]) -> CaptureVerdict:
        chosen = Arm(arm)
        return check_router_capture(
            router_dir,
            arm,
            codex_jsonl,
            expect_protocol=arm_protocol(chosen, protocol),
            models=mentored if ARM_ROUTERS[chosen].mentor else plain,
        )

    return check


def check_router_capture(
    router_dir: Path,
    arm: str,
    codex_jsonl: Sequence[Path],
    *,
    expect_protocol: str | None = None,
    models: ModelExpectation | None = None,
) -> CaptureVerdict:
    """Validate one router's evidence for ``arm`` (the hpatch arm's with
    ``expect_protocol``, native when not given), holding it to ``models`` when given."""
    snapshot = router_dir / SNAPSHOT_NAME
    records = router_dir / RECORDS_DIR
    problems = [
        Finding(EVIDENCE_MISSING, "missing router evidence", str(path))
        for path in (snapshot, records)
        if not path.exists()
    ]
    # The second source of every root thread's usage is Codex's own turn.completed. Without
    # its stream the capture's figures would stand unchecked, so a missing stream fails the
    # arm instead of quietly skipping the reconciliation.
    problems += [
        Finding(
            CODEX_JSONL_MISSING,
            "missing Codex JSONL; the capture cannot be reconciled with turn.completed",
            str(path),
        )
        for path in codex_jsonl
        if not path.is_file()
    ]
    if not codex_jsonl:
        problems.append(
            Finding(
                CODEX_JSONL_MISSING,
                "no Codex JSONL named; the capture cannot be reconciled with Codex",
                str(router_dir),
            )
        )
    if problems:
        return CaptureVerdict(tuple(problems), None)
    report = validate_capture(
        records,
        snapshot,
        arm=arm,
        codex_jsonl=list(codex_jsonl),
        expect_protocol=expect_protocol,
        models=models,
    )
    return CaptureVerdict(report.findings, report.snapshot, report.cache_prefix)
