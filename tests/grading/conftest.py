"""Fixtures for the grading containment tests: bench-grade on hostile workspaces.

A test either grades the bundled task (its real hidden test) or a tiny fake
task: a grader spec directory (``BENCH_GRADER_SPEC``) with a command, a timeout
and hidden files kept in ``tmp_path``, so hostile cases run in seconds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..conftest import LIBEXEC, REPO_ROOT, TASK, grader_spec, run

HIDDEN_TEST = "kv/rangestream_hidden_test.go"
HIDDEN_SOURCE = REPO_ROOT / "tasks" / TASK / "hidden" / HIDDEN_TEST


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
    """``bench-grade TASK WORKSPACE OUT`` with ``env`` added; without a
    ``BENCH_GRADER_SPEC`` there, the task's own spec (written beside OUT)."""
    env = dict(env or {})
    if "BENCH_GRADER_SPEC" not in env:
        env["BENCH_GRADER_SPEC"] = str(grader_spec(out.parent / f"{out.name}-spec", task, env))
    done = run([str(LIBEXEC / "bench-grade"), task, str(workspace), str(out)], env, timeout)
    return Graded(out, done.returncode, done.stderr)


def fake_spec(
    root: Path,
    command: Sequence[str],
    hidden: Mapping[str, str],
    timeout_seconds: int = 60,
    caps: Mapping[str, str] | None = None,
) -> Path:
    """A grader spec directory as bench-prepare writes it, for a fake task under ``root``."""
    spec = root / "spec"
    files = root / "spec-files"
    spec.mkdir(parents=True)
    (spec / "command").write_text("".join(f"{arg}\n" for arg in command))
    (spec / "timeout_seconds").write_text(f"{timeout_seconds}\n")
    for name, value in {"memory": "4g", "cpus": "1", "pids": "1024", **(caps or {})}.items():
        (spec / name).write_text(f"{value}\n")
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
