"""Fixtures for the grading containment tests: bench-grade on hostile workspaces.

A test either grades the bundled task (its real hidden test) or a tiny fake
task: a grader spec directory (``BENCH_GRADER_SPEC``) with a command, a timeout
and hidden files kept in ``tmp_path``, so hostile cases run in seconds.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LIBEXEC = REPO_ROOT / "benchmarks" / "libexec"
HPBENCH = REPO_ROOT / ".venv" / "bin" / "hpbench"
IMAGES_READY = "HPBENCH_TEST_IMAGES_READY"
TASK = "kv-rangestream"
HIDDEN_TEST = "kv/rangestream_hidden_test.go"
HIDDEN_SOURCE = REPO_ROOT / "tasks" / TASK / "hidden" / HIDDEN_TEST


def run(
    command: Sequence[str], env: Mapping[str, str] | None = None, timeout: int = 900
) -> subprocess.CompletedProcess[str]:
    """Run a command from the checkout with ``env`` added; never raises on failure."""
    return subprocess.run(
        list(command),
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        env={**os.environ, "BENCH_ROOT": str(REPO_ROOT), **(env or {})},
        cwd=REPO_ROOT,
    )


@dataclass(frozen=True)
class Graded:
    """What one bench-grade call left behind."""

    out: Path
    returncode: int
    stderr: str

    @property
    def exit(self) -> str:
        return (self.out / "grader.exit").read_text().strip()

    @property
    def stdout(self) -> str:
        return (self.out / "grader.stdout").read_text(errors="replace")

    @property
    def grader_stderr(self) -> str:
        return (self.out / "grader.stderr").read_text(errors="replace")

    @property
    def evidence(self) -> list[list[str]]:
        text = (self.out / "grader.evidence").read_text()
        return [line.split("\t") for line in text.splitlines()]

    @property
    def state(self) -> dict[str, str]:
        lines = (self.out / "grader.state").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines)


GradeFn = Callable[..., Graded]


def grade(
    workspace: Path,
    out: Path,
    env: Mapping[str, str] | None = None,
    task: str = TASK,
    timeout: int = 600,
) -> Graded:
    """``bench-grade TASK WORKSPACE OUT`` with ``env`` added."""
    done = run([str(LIBEXEC / "bench-grade"), task, str(workspace), str(out)], env, timeout)
    return Graded(out, done.returncode, done.stderr)


def fake_spec(
    root: Path, command: Sequence[str], hidden: Mapping[str, str], timeout_seconds: int = 60
) -> Path:
    """A grader spec directory as bench-prepare writes it, for a fake task under ``root``."""
    spec = root / "spec"
    files = root / "spec-files"
    spec.mkdir(parents=True)
    (spec / "command").write_text("".join(f"{arg}\n" for arg in command))
    (spec / "timeout_seconds").write_text(f"{timeout_seconds}\n")
    lines = []
    for relative, text in hidden.items():
        source = files / relative
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text)
        lines.append(f"{relative}\t{source}\n")
    (spec / "hidden-files").write_text("".join(lines))
    return spec


def tree_digest(root: Path) -> str:
    """A digest of every path, type, symlink target and file content under ``root``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        if path.is_symlink():
            digest.update(b"L" + str(path.readlink()).encode())
        elif path.is_file():
            digest.update(b"F" + path.read_bytes())
        else:
            digest.update(b"D" if path.is_dir() else b"O")
    return digest.hexdigest()


@pytest.fixture
def images() -> None:
    """The hpbench images, built once per test process."""
    if os.environ.get(IMAGES_READY) == "1":
        return
    done = run([str(LIBEXEC / "bench-images")], timeout=1800)
    assert 0 == done.returncode, done.stderr
    os.environ[IMAGES_READY] = "1"


@pytest.fixture(scope="session")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """History-free base and oracle snapshots of the bundled task (made once)."""
    root = tmp_path_factory.mktemp("snapshots")
    built = run([str(HPBENCH), "task", "build", TASK, "--out", str(root / "repo")])
    assert 0 == built.returncode, built.stderr
    out: dict[str, Path] = {}
    for name in ("base", "oracle"):
        revision = run([str(HPBENCH), "task", "field", TASK, f"source.{name}_revision"])
        made = run(
            [
                str(LIBEXEC / "bench-snapshot"),
                str(root / "repo"),
                revision.stdout.strip(),
                str(root / name),
            ]
        )
        assert 0 == made.returncode, made.stderr
        out[name] = root / name
    return out
