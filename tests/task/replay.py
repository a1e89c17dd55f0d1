"""Driving a task's replay script through the real Codex CLI on the host, for the task tests.

One arm's script (``tasks/<id>/replay/<arm>.json``) is played by the scripted provider
through the reference router in the arm's mode, on a history-free base snapshot; Codex
must finish, the run must hold no same-path or workspace loop, and the router's capture
must validate. What the test then checks of the workspace (paths, bytes, the grader) is
the task's own business.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hpbench.capture.validator import validate_capture
from hpbench.codexconfig import CodexConfig, write_config
from hpbench.commands import analyze_file
from hpbench.reference.harness import codex_exec, running_provider, running_router
from hpbench.rundir import Arm
from hpbench.task.history import build_history
from hpbench.task.manifest import Task

from ..conftest import LIBEXEC

# The reference router's mode for each arm a task's replay scripts serve.
MODES = {"control": "passthrough", "hpatch": "hpatch"}


def replay(task: Task, arm: str, tmp_path: Path) -> Path:
    """Play ``arm``'s script on a fresh base snapshot of ``task``; the workspace Codex left."""
    built = build_history(task, tmp_path / "repo")
    workspace = tmp_path / "ws"
    subprocess.run(
        [
            str(LIBEXEC / "bench-snapshot"),
            str(built.repository),
            built.base_revision,
            str(workspace),
        ],
        check=True,
    )
    scripts = {name: task.directory / "replay" / f"{name}.json" for name in MODES}
    capture = tmp_path / "capture"
    with (
        running_provider(scripts, tmp_path) as provider,
        running_router(
            f"{provider.url}/{arm}/v1", capture, mode=MODES[arm], log=tmp_path / "router.log"
        ) as router,
    ):
        config = CodexConfig(arm=Arm(arm), router_url=f"{router.url}/v1", request_max_retries=1)
        write_config(config, tmp_path / "codex-home" / "config.toml")
        run = codex_exec(
            tmp_path / "codex-home", workspace, task.prompt_path.read_text(), timeout=300
        )
        snapshot = router.get_json("/api/metrics")
    assert 0 == run.returncode, run.stderr[-2000:]
    jsonl = run.save(tmp_path / "codex.jsonl")
    (tmp_path / "metrics.json").write_text(json.dumps(snapshot))

    analysis = analyze_file(jsonl, workspace_root=str(workspace))
    assert () == analysis.loops
    assert () == analysis.workspace_diff_loops
    report = validate_capture(capture, tmp_path / "metrics.json", arm=arm, codex_jsonl=[jsonl])
    assert report.ok, [str(f) for f in report.findings]
    return workspace


def changed_paths(workspace: Path) -> list[str]:
    """Every path git sees changed or added in ``workspace``, sorted."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(line[3:] for line in status.splitlines())
