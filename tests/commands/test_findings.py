"""Findings in plain words: counts, no identities, no paths."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hpbench.codex import iter_events
from hpbench.codex.testing import StreamBuilder
from hpbench.commands import analyze_events, analyze_file, observations, to_json

DATA = Path(__file__).resolve().parents[1] / "data" / "codex"
ROOT = "/workspace"


def messages(builder: StreamBuilder) -> dict[str, str]:
    analysis = analyze_events(iter_events(builder.lines), workspace_root=ROOT)
    return {observation.code: observation.message for observation in observations(analysis)}


class TestObservations:
    def test_loop_kinds_with_counts(self):
        """Each loop kind is reported with its count of invocations and paths."""
        builder = StreamBuilder(workspace_root=ROOT).start().patch(["a.go", "b.go"])
        builder.command("cat a.go").command("cat b.go").command("rg x .")
        found = messages(builder.patch(["a.go", "b.go"]))
        assert found["commands.loop.file-read"].startswith("2 same-path file-read loops")
        assert "2 paths involved" in found["commands.loop.file-read"]
        assert found["commands.loop.search"].startswith("1 same-path search loop:")
        assert "commands.loop.content-diff" not in found

    def test_no_loops_said_plainly(self):
        """An attempt without loops says so."""
        found = messages(StreamBuilder(workspace_root=ROOT).start().command("ls"))
        assert "No same-path or workspace-wide loops." == found["commands.loop.none"]

    def test_totals_and_split(self):
        """Totals, the before/after split and per-category counts."""
        builder = StreamBuilder(workspace_root=ROOT).start().command("ls && cat a")
        found = messages(builder.patch(["a"]).command("cat a"))
        assert (
            "3 invocations parsed from 2 command executions: 2 before the first edit, 1 after it."
            == found["commands.totals"]
        )
        assert (
            "By category: file-read 2 (1 after an edit); discovery 1 (0 after an edit)."
            == found["commands.categories"]
        )

    def test_workspace_and_terminal(self):
        """Workspace-wide loops and terminal validation have their own findings."""
        builder = StreamBuilder(workspace_root=ROOT).start().patch(["a"]).command("git diff")
        found = messages(builder.patch(["a"]).command("cat a"))
        assert found["commands.loop.workspace-diff"].startswith("1 bare worktree git diff loop")
        assert found["commands.terminal-validation"].startswith("1 invocation re-checked")


class TestNoIdentities:
    def test_findings_carry_no_ids_or_paths(self):
        """No thread, item or call ids and no paths appear in any finding."""
        for stream in sorted(DATA.glob("*.jsonl")):
            output = to_json(analyze_file(stream, workspace_root="/workspace"))
            text = json.dumps(output["findings"])
            assert not re.search(r"item_\d|01a2[0-9a-f]{4}-|call_|fc_|ws_\d", text), stream
            for invocation in output["invocations"]:
                for path in invocation["paths"]:
                    assert path not in text or path == ".", (stream, path)
