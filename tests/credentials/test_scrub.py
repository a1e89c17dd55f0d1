"""The run's credential scrubbed from everything the run keeps: found wherever an agent or a
router put it, replaced in place, named for the report, and nothing else touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hpbench import credentials
from hpbench.credentials import REDACTED, credential_values, scrub, scrub_run
from hpbench.report import build_report, render_summary
from hpbench.rundir import RunLayout
from hpbench.settings import settings_from_env

from ..evidence import attempt
from ..report.conftest import always_valid, make_run, snapshot

KEY = "sk-hpbench-fake-0123456789abcdef"
REAL = {
    "PROVIDER": "https://models.example.invalid/v1",
    "HPATCH_ROUTER_IMAGE": "example/r:1",
}


class TestValues:
    @pytest.mark.parametrize("name", ["HPBENCH_API_KEY", "OPENAI_API_KEY"])
    def test_the_planned_variable(self, name: str) -> None:
        plan = settings_from_env("paired", {**REAL, name: KEY})
        assert (KEY,) == credential_values(plan, {name: KEY, "OTHER": "x" * 20})

    def test_the_auth_files_key(self, tmp_path: Path) -> None:
        auth = tmp_path / "auth.json"
        auth.write_text(json.dumps({"OPENAI_API_KEY": KEY}))
        plan = settings_from_env("paired", {**REAL, "CODEX_AUTH_FILE": str(auth)})
        assert (KEY,) == credential_values(plan, {})

    def test_none_offline_and_none_too_short(self) -> None:
        assert () == credential_values(settings_from_env("paired", {}), {"HPBENCH_API_KEY": KEY})
        plan = settings_from_env("paired", {**REAL, "HPBENCH_API_KEY": "short"})
        assert () == credential_values(plan, {"HPBENCH_API_KEY": "short"})


class TestScrub:
    def test_found_replaced_and_named_everywhere(self, tmp_path: Path) -> None:
        """In the run directory and under its mount root (the workspaces during the run);
        the file's mode is kept and the rest of its bytes too."""
        run = tmp_path / "run"
        (run / "attempts" / "1-control").mkdir(parents=True)
        jsonl = run / "attempts" / "1-control" / "codex.jsonl"
        jsonl.write_text(json.dumps({"output": f"HPBENCH_API_KEY={KEY}\n"}) + "\n")
        jsonl.chmod(0o640)
        root = tmp_path / "mounts"
        (root / "ab" / "m").mkdir(parents=True)
        (root / "ab" / "m" / "leak.txt").write_text(f"{KEY}{KEY}")
        (run / ".mounts").symlink_to(root)
        clean = run / "summary.md"
        clean.write_text("nothing to see\n")
        before = clean.stat().st_mtime_ns
        assert ["attempts/1-control/codex.jsonl", ".mounts/ab/m/leak.txt"] == sorted(
            scrub(run, (KEY,)), key=lambda p: p.startswith(".")
        )
        text = jsonl.read_text()
        assert KEY not in text
        assert json.loads(text)["output"] == "HPBENCH_API_KEY=" + REDACTED.decode() + "\n"
        assert 0o640 == jsonl.stat().st_mode & 0o777
        assert REDACTED * 2 == (root / "ab" / "m" / "leak.txt").read_bytes()
        assert before == clean.stat().st_mtime_ns

    def test_a_planted_symlink_is_never_followed(self, tmp_path: Path) -> None:
        """A hostile agent's symlink in its workspace cannot make the scrub rewrite a file
        outside the run."""
        outside = tmp_path / "outside.txt"
        outside.write_text(KEY)
        run = tmp_path / "run"
        (run / "reps" / "1" / "workspaces" / "control").mkdir(parents=True)
        (run / "reps" / "1" / "workspaces" / "control" / "link").symlink_to(outside)
        (run / "reps" / "1" / "workspaces" / "control" / "dir").symlink_to(tmp_path)
        assert [] == scrub(run, (KEY,))
        assert KEY == outside.read_text()

    @pytest.mark.parametrize("offset", [0, 1, 7, 15, 16, 17, 31])
    def test_read_in_chunks_a_key_across_a_boundary_is_found(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offset: int
    ) -> None:
        """Files are read in chunks (an agent's file can be as large as the disk): a key
        that straddles two chunks is found and replaced, and every other byte kept."""
        monkeypatch.setattr(credentials, "CHUNK", 16)
        run = tmp_path / "run"
        run.mkdir()
        before, after = b"a" * offset, b"z" * 40
        (run / "big.bin").write_bytes(before + KEY.encode() + after + KEY.encode())
        assert ["big.bin"] == scrub(run, (KEY,))
        assert before + REDACTED + after + REDACTED == (run / "big.bin").read_bytes()

    def test_the_marker_alone_is_no_exposure_and_a_fifo_is_not_read(self, tmp_path: Path) -> None:
        """An agent that writes the redaction marker itself exposes nothing, and a fifo it
        left is never opened (reading it would block the run's finish)."""
        run = tmp_path / "run"
        run.mkdir()
        (run / "marker.txt").write_bytes(REDACTED)
        os.mkfifo(run / "pipe")
        assert [] == scrub(run, (KEY,))
        assert REDACTED == (run / "marker.txt").read_bytes()

    def test_the_record_is_written_even_when_clean(self, tmp_path: Path) -> None:
        run = tmp_path / "run"
        run.mkdir()
        plan = settings_from_env("paired", {**REAL, "HPBENCH_API_KEY": KEY})
        assert [] == scrub_run(
            run, plan, {"HPBENCH_API_KEY": KEY}, RunLayout(run).credential_exposures
        )
        assert "" == RunLayout(run).credential_exposures.read_text()


def test_the_report_refuses_a_run_whose_credential_was_exposed(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
        {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
    )
    RunLayout(run).credential_exposures.write_text("attempts/1-hpatch/codex.jsonl\n")
    report = build_report(run, always_valid)
    assert not report["outcome"]["ok"]
    (reason,) = [r for r in report["outcome"]["reasons"] if "credential" in r]
    assert "1 file(s)" in reason and "attempts/1-hpatch/codex.jsonl" in reason
    assert "attempts/1-hpatch/codex.jsonl" in render_summary(report)
