"""Trees for the change-recording tests: a pristine base with a .git, and a work copy of it.

The base is made the way a run makes its snapshot (a one-commit repository);
the work tree starts as a byte-for-byte copy, .git included, and each test then
does what an agent might. Git runs here only on trees the test itself made, and
always with the machine's configuration shut out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH_CHANGES = REPO_ROOT / "benchmarks" / "libexec" / "bench-changes"

BASE_FILES: dict[str, bytes] = {
    "README.md": b"# demo\n\nA small tree.\n",
    "src/main.go": b"package main\n\nfunc main() {}\n",
    "crlf.txt": b"one\r\ntwo\r\n",
    "data/blob.bin": bytes(range(256)) * 4,
    "old_name.txt": b"moved soon\n",
    "doomed.txt": b"deleted soon\n",
    "run.sh": b"#!/bin/sh\necho hi\n",
}


def isolated_git_env(home: Path) -> dict[str, str]:
    """An environment in which git reads no configuration of this machine."""
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "LC_ALL": "C",
    }


GitRunner = Callable[..., subprocess.CompletedProcess[bytes]]


@pytest.fixture
def git(tmp_path: Path) -> GitRunner:
    """``git(directory, *args)``: git with isolated configuration, failing loudly."""
    env = isolated_git_env(tmp_path / "git-home")

    def run(directory: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", "-C", str(directory), *args], env=env, check=True, capture_output=True
        )

    return run


@pytest.fixture
def base(tmp_path: Path, git: GitRunner) -> Path:
    """A pristine base tree with a one-commit repository of its own."""
    root = tmp_path / "base"
    for name, data in BASE_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "run.sh").chmod(0o755)
    (root / "link").symlink_to("README.md")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A", "-f")
    git(root, "-c", "core.autocrlf=false", "commit", "-q", "--no-verify", "-m", "base")
    return root


@pytest.fixture
def work(tmp_path: Path, base: Path) -> Path:
    """The agent's workspace: an exact copy of the base, .git and symlinks included."""
    root = tmp_path / "work"
    shutil.copytree(base, root, symlinks=True)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host file outside both trees that a symlink may point at."""
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_bytes(b"HOST-SECRET-CONTENT\n")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    """``python -m hpbench`` with the given arguments, output captured as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "hpbench", *args],
        capture_output=True,
        check=False,
        cwd=REPO_ROOT,
        timeout=60,
    )


def run_bench_changes(
    base: Path, work: Path, out: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``benchmarks/libexec/bench-changes BASE WORK OUT``."""
    return subprocess.run(
        [str(BENCH_CHANGES), str(base), str(work), str(out)],
        capture_output=True,
        check=False,
        env=env if env is not None else dict(os.environ),
        timeout=120,
    )


def copy_without_git(source: Path, target: Path) -> Path:
    """``source`` without its top-level .git: the tree a patch is applied onto."""
    shutil.copytree(
        source,
        target,
        symlinks=True,
        ignore=lambda directory, names: [".git"] if Path(directory) == source else [],
    )
    return target
