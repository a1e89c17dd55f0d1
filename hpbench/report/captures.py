"""The report's capture check: the capture contract's validator, per router directory.

A router directory (``routers/<repetition>-<arm>/``) holds ``metrics.json``
(the ``/api/metrics`` snapshot) and ``capture/`` (the records). The attempt's
Codex JSONL is passed along so each root thread's usage is reconciled with
what Codex reported for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hpbench.capture.validator import validate_capture
from hpbench.report.model import CaptureVerdict

SNAPSHOT_NAME = "metrics.json"
RECORDS_DIR = "capture"


def check_router_capture(router_dir: Path, arm: str, codex_jsonl: Sequence[Path]) -> CaptureVerdict:
    """Validate one router's evidence for ``arm``; every finding is kept as text."""
    snapshot = router_dir / SNAPSHOT_NAME
    records = router_dir / RECORDS_DIR
    missing = [str(path) for path in (snapshot, records) if not path.exists()]
    if missing:
        return CaptureVerdict(False, tuple(f"missing router evidence: {path}" for path in missing))
    report = validate_capture(
        records,
        snapshot,
        arm=arm,
        codex_jsonl=[path for path in codex_jsonl if path.is_file()],
        jobs=1,
    )
    return CaptureVerdict(report.ok, tuple(str(finding) for finding in report.findings))
