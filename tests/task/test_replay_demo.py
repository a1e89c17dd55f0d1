"""The offline demo's replay scripts solve kv-rangestream with the real Codex CLI.

Each arm's script drives the pinned Codex through the reference router (in the
arm's mode) on a history-free base snapshot; the hidden grader then passes,
every changed path is allowed, no same-path loop occurs, and the router's
capture validates. This is the host-side twin of the paired demo.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.manifest import load_manifest

from .replay import changed_paths, replay

pytestmark = [pytest.mark.codex, pytest.mark.go]

REPO_ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = REPO_ROOT / "tasks" / "kv-rangestream"


@pytest.mark.parametrize("arm", ["control", "hpatch"])
def test_replay_solves_task(arm: str, tmp_path: Path) -> None:
    """The arm's replay passes the hidden grader within the allowed paths, with a valid capture."""
    task = load_manifest(TASK_DIR)
    workspace = replay(task, arm, tmp_path)

    assert sorted(task.manifest.paths.allowed) == changed_paths(workspace)

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
