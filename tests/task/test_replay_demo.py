"""The offline demo's replay scripts solve kv-rangestream with the real Codex CLI.

Each arm's script drives the pinned Codex through the reference router (in the
arm's mode) on a history-free base snapshot; the hidden grader then passes,
every changed path is allowed, no same-path loop occurs, and the router's
capture validates. This is the host-side twin of the paired demo.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.capture.validator import validate_capture
from hpbench.codexconfig import CodexConfig, write_config
from hpbench.commands import analyze_file
from hpbench.reference.harness import codex_exec, running_provider, running_router
from hpbench.rundir import Arm
from hpbench.task.history import build_history
from hpbench.task.manifest import load_manifest

pytestmark = [pytest.mark.codex, pytest.mark.go]

REPO_ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = REPO_ROOT / "tasks" / "kv-rangestream"
SNAPSHOT = REPO_ROOT / "benchmarks" / "libexec" / "bench-snapshot"
MODES = {"control": "passthrough", "hpatch": "hpatch"}


@pytest.mark.parametrize("arm", ["control", "hpatch"])
def test_replay_solves_task(arm: str, tmp_path: Path) -> None:
    """The arm's replay passes the hidden grader within the allowed paths, with a valid capture."""
    task = load_manifest(TASK_DIR)
    built = build_history(task, tmp_path / "repo")
    workspace = tmp_path / "ws"
    subprocess.run(
        [str(SNAPSHOT), str(built.repository), built.base_revision, str(workspace)], check=True
    )
    scripts = {name: TASK_DIR / "replay" / f"{name}.json" for name in MODES}
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

    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=workspace,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    changed = sorted(line[3:] for line in status.splitlines())
    assert sorted(task.manifest.paths.allowed) == changed

    graded = tmp_path / "graded"
    shutil.copytree(workspace, graded, ignore=shutil.ignore_patterns(".git"))
    for name, path in task.grader_file_paths():
        shutil.copyfile(path, graded / name)
    result = subprocess.run(
        list(task.manifest.grader.command),
        cwd=graded,
        capture_output=True,
        text=True,
        env={**os.environ, "GOPROXY": "off", "GOFLAGS": "-mod=mod"},
        check=False,
    )
    assert 0 == result.returncode, result.stdout[-2000:]

    analysis = analyze_file(jsonl, workspace_root=str(workspace))
    assert () == analysis.loops
    assert () == analysis.workspace_diff_loops

    report = validate_capture(capture, tmp_path / "metrics.json", arm=arm, codex_jsonl=[jsonl])
    assert report.ok, [str(f) for f in report.findings]
