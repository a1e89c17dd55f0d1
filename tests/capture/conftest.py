"""Fixtures for the capture tests: synthetic captures and ways to break them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from hpbench._jsonio import canonical_json
from hpbench.capture.models import Protocol, RouterMode
from hpbench.capture.synthetic import codex_streams, write_snapshot, write_synthetic_capture
from hpbench.capture.validator import CaptureReport, validate_capture


@attrs.define
class Capture:
    """A capture on disk: records directory, snapshot file and Codex streams."""

    records: Path
    snapshot_path: Path
    codex: list[Path]
    arm: str

    @property
    def record_file(self) -> Path:
        return self.records / "records.jsonl"

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.record_file.read_text().splitlines()]

    def write_lines(self, records: list[dict[str, Any]]) -> None:
        self.record_file.write_text("".join(canonical_json(r) + "\n" for r in records))

    def edit(self, index: int, change: Callable[[dict[str, Any]], None]) -> None:
        records = self.lines()
        change(records[index])
        self.write_lines(records)

    def snapshot(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.snapshot_path.read_text())
        return data

    def edit_snapshot(self, change: Callable[[dict[str, Any]], None]) -> None:
        data = self.snapshot()
        change(data)
        self.snapshot_path.write_text(json.dumps(data))

    def validate(self, **kwargs: Any) -> CaptureReport:
        kwargs.setdefault("arm", self.arm)
        return validate_capture(self.records, self.snapshot_path, **kwargs)

    def index_of(self, kind: str, nth: int = 0) -> int:
        """Line index of the ``nth`` record of ``kind``."""
        found = [i for i, r in enumerate(self.lines()) if r["kind"] == kind]
        return found[nth]


MakeCapture = Callable[..., Capture]


@pytest.fixture
def make_capture(tmp_path: Path) -> MakeCapture:
    """Write a valid synthetic capture; keyword arguments go to the generator."""
    counter = iter(range(1000))

    def make(arm: str = "hpatch", **kwargs: Any) -> Capture:
        root = tmp_path / f"capture-{next(counter)}"
        if arm == "control":
            kwargs.setdefault("mode", RouterMode.PASSTHROUGH)
            kwargs.setdefault("protocol", Protocol.NATIVE)
        kwargs.setdefault("exchanges", 12)
        snapshot = write_synthetic_capture(root / "capture", **kwargs)
        path = write_snapshot(snapshot, root / "metrics.json")
        return Capture(root / "capture", path, codex_streams(snapshot, root / "codex"), arm)

    return make


@pytest.fixture
def capture(make_capture: MakeCapture) -> Capture:
    """A small valid hpatch capture."""
    return make_capture()
