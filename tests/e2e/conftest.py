"""Running benchmarks/bench.sh end to end, and reading what a run left behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import build_images_once

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "benchmarks" / "bench.sh"
SCENARIOS = REPO_ROOT / "tests" / "data" / "e2e"
RUN_TIMEOUT = 900


def bench_env(runs_dir: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without run settings, plus RUNS_DIR and ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"MODE", "HPBENCH_API_KEY", "OPENAI_API_KEY", "PROVIDER", "REPETITIONS"}
    }
    # Images are built once per session by the first run; later runs reuse them.
    return {**env, "RUNS_DIR": str(runs_dir), "HPBENCH_SKIP_BUILD": "1", **extra}


def run_dir_of(stderr: str) -> Path:
    """The run directory bench.sh announced."""
    match = re.search(r"run directory: (\S+)", stderr)
    assert match, stderr[-3000:]
    return Path(match.group(1))


def leftovers(run_dir: Path) -> list[str]:
    """Containers, networks and volumes of the run's Compose projects that still exist."""
    projects_file = run_dir / "compose-projects"
    projects = projects_file.read_text().split() if projects_file.is_file() else []
    left = []
    for project in projects:
        label = f"label=com.docker.compose.project={project}"
        for kind in (["ps", "-aq"], ["network", "ls", "-q"], ["volume", "ls", "-q"]):
            out = subprocess.run(
                ["docker", *kind, "--filter", label], capture_output=True, text=True, check=True
            ).stdout.split()
            left += [f"{kind[0]} {item}" for item in out]
    return left


def results(run_dir: Path) -> list[dict[str, object]]:
    """The run's merged attempt objects."""
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def run_bench(
    runs_dir: Path, mode: str | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    """bench.sh run to the end: ``benchmarks/bench.sh MODE`` when ``mode`` is given,
    else ``cd benchmarks && ./bench.sh`` (the mode then comes as ``MODE=…`` in ``extra``),
    the two ways people run it."""
    return subprocess.run(
        [str(BENCH), mode] if mode is not None else ["./bench.sh"],
        cwd=None if mode is not None else BENCH.parent,
        capture_output=True,
        text=True,
        env=bench_env(runs_dir, **extra),
        timeout=RUN_TIMEOUT,
        check=False,
    )


def bench(mode: str, runs_dir: Path, **extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run bench.sh in ``mode`` to the end; the result and the run directory."""
    result = run_bench(runs_dir, mode, **extra)
    return result, run_dir_of(result.stderr)


def bench_inside(runs_dir: Path, **extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``cd benchmarks && MODE=… ./bench.sh`` to the end; the result and the run directory."""
    result = run_bench(runs_dir, **extra)
    return result, run_dir_of(result.stderr)


def task_with(tmp_path: Path, manifest_text: str, task: str = "kv-rangestream") -> Path:
    """A tasks directory (for HPBENCH_TASKS_DIR) holding a copy of ``task`` whose manifest
    ends with ``manifest_text``."""
    tasks = tmp_path / "tasks"
    shutil.copytree(REPO_ROOT / "tasks" / task, tasks / task)
    manifest = tasks / task / "task.toml"
    manifest.write_text(manifest.read_text() + manifest_text)
    return tasks


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A runs directory shared by a module's runs, once this tree's images are built:
    the runs skip the build (HPBENCH_SKIP_BUILD), which must never find images of an
    older tree (whichever e2e module runs first)."""
    build_images_once()
    yield tmp_path_factory.mktemp("runs")
