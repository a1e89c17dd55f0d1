"""The real Codex CLI, driven by the scripted provider on loopback, analysed end to end.

This guards the reader and the analysis against the actual 0.169 stream, not
only against the recorded corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench.codex import Outcome, summarize_file
from hpbench.codexconfig import CodexConfig, write_config
from hpbench.commands import Category, PathLoop, analyze_file
from hpbench.reference.harness import codex_exec, running_provider
from hpbench.rundir import Arm

pytestmark = pytest.mark.codex

SCRIPT = {
    "schema_version": 1,
    "name": "commands-loop",
    "steps": [
        {
            "output": [
                {
                    "type": "apply_patch",
                    "patch": "*** Begin Patch\n*** Add File: src/a.go\n+package a\n*** End Patch",
                }
            ]
        },
        {"output": [{"type": "exec_command", "cmd": "cat src/a.go && rg -n package src"}]},
        {
            "output": [
                {
                    "type": "apply_patch",
                    "patch": (
                        "*** Begin Patch\n*** Update File: src/a.go\n@@\n-package a\n+package b\n"
                        "*** End Patch"
                    ),
                }
            ]
        },
        {"output": [{"type": "exec_command", "cmd": "sed -n 1,5p src/a.go | head -n 2"}]},
        {"output": [{"type": "message", "text": "Renamed the package."}]},
    ],
}


def test_live_stream(tmp_path: Path):
    """Loops, terminal validation and the summary come out of a fresh real stream."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), encoding="utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with running_provider({"live": script}, tmp_path) as provider:
        codex_home = tmp_path / "codex-home"
        config = CodexConfig(arm=Arm.CONTROL, router_url=f"{provider.url}/live/v1", model="gpt-5.5")
        write_config(config, codex_home / "config.toml")
        run = codex_exec(codex_home, workspace, "Rename the package.", timeout=90)
    stream = run.save(tmp_path / "codex.jsonl")
    assert 0 == run.returncode, run.stderr

    summary = summarize_file(stream, workspace_root=str(workspace))
    assert Outcome.COMPLETED is summary.outcome
    assert "Renamed the package." == summary.final_message
    assert [("src/a.go",), ("src/a.go",)] == [
        tuple(change.path for change in fc.changes) for fc in summary.file_changes
    ]
    assert () == summary.findings

    analysis = analyze_file(stream, workspace_root=str(workspace))
    assert [
        PathLoop(Category.FILE_READ, "src/a.go", "src/a.go", 0),
        PathLoop(Category.SEARCH, "src/a.go", "src", 1),
    ] == list(analysis.loops)
    assert [PathLoop(Category.FILE_READ, "src/a.go", "src/a.go", 2)] == list(
        analysis.terminal_validation
    )
    assert Category.OTHER is analysis.invocations[3].category
