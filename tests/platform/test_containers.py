"""Grading, the module cache and preparation-only, in the real containers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ..conftest import LIBEXEC, REPO_ROOT, TASK, grader_spec

pytestmark = pytest.mark.docker

# Passes only without a network interface beyond loopback and without root.
NO_NETWORK_TEST = """package kv_test

import (
\t"net"
\t"os"
\t"testing"
)

func TestGraderSandbox(t *testing.T) {
\tinterfaces, err := net.Interfaces()
\tif err != nil {
\t\tt.Fatal(err)
\t}
\tfor _, i := range interfaces {
\t\tif i.Flags&net.FlagLoopback == 0 {
\t\t\tt.Fatalf("network interface %s is present", i.Name)
\t\t}
\t}
\tif os.Getuid() == 0 {
\t\tt.Fatal("the grader runs as root")
\t}
}
"""


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".git"))
    return target


def _leftovers(project: str) -> list[str]:
    label = f"label=com.docker.compose.project={project}"
    found: list[str] = []
    for kind in (["ps", "-aq"], ["network", "ls", "-q"], ["volume", "ls", "-q"]):
        listed = subprocess.run(
            ["docker", *kind, "--filter", label], capture_output=True, text=True, check=True
        )
        found += listed.stdout.split()
    return found


@pytest.mark.usefixtures("images")
class TestGraderContainer:
    def test_grades_without_network_as_a_user(
        self, snapshots: dict[str, Path], tmp_path: Path, bench: Any
    ) -> None:
        """The oracle plus a sandbox probe passes: no interface but lo, not root."""
        workspace = _copy(snapshots["oracle"], tmp_path / "ws")
        (workspace / "kv" / "sandbox_probe_test.go").write_text(NO_NETWORK_TEST)
        done = bench(
            [str(LIBEXEC / "bench-grade"), TASK, str(workspace), str(tmp_path / "out")],
            {"BENCH_GRADER_SPEC": str(grader_spec(tmp_path / "spec"))},
        )
        assert 0 == done.returncode, done.stderr
        stdout = (tmp_path / "out" / "grader.stdout").read_text()
        assert "0" == (tmp_path / "out" / "grader.exit").read_text().strip(), stdout[-3000:]
        assert '"Test":"TestGraderSandbox"' in stdout

    def test_qualification(self, snapshots: dict[str, Path], tmp_path: Path, bench: Any) -> None:
        """Base fails with the discriminator and oracle passes, in the grader container."""
        done = bench(
            [
                str(LIBEXEC / "bench-qualify"),
                TASK,
                str(snapshots["base"]),
                str(snapshots["oracle"]),
                str(tmp_path / "q"),
            ],
            {"BENCH_GRADER_SPEC": str(grader_spec(tmp_path / "spec"))},
        )
        assert 0 == done.returncode, done.stderr
        assert "base fails with 'has no field or method RangeStream', oracle passes" in done.stderr
        oracle = json.loads((tmp_path / "q" / "oracle" / "verdict.json").read_text())
        assert ("passed", 7, 7) == (oracle["status"], oracle["required"], len(oracle["passed"]))
        base = json.loads((tmp_path / "q" / "base" / "verdict.json").read_text())
        assert ("missing", 7) == (base["status"], len(base["missing"]))

    def test_an_oracle_that_runs_one_test_does_not_qualify(
        self, snapshots: dict[str, Path], tmp_path: Path, bench: Any
    ) -> None:
        """A grader that exits 0 on oracle having run only one of the required tests (here a
        -run filter in its command) does not qualify: every required test must pass."""
        tasks = tmp_path / "tasks"
        shutil.copytree(REPO_ROOT / "tasks" / TASK, tasks / TASK)
        manifest = tasks / TASK / "task.toml"
        manifest.write_text(
            manifest.read_text().replace('"-count=1",', '"-count=1", "-run=TestRangeStreamErrors",')
        )
        done = bench(
            [
                str(LIBEXEC / "bench-qualify"),
                TASK,
                str(snapshots["base"]),
                str(snapshots["oracle"]),
                str(tmp_path / "q"),
            ],
            {
                "HPBENCH_TASKS_DIR": str(tasks),
                "BENCH_GRADER_SPEC": str(
                    grader_spec(tmp_path / "spec", env={"HPBENCH_TASKS_DIR": str(tasks)})
                ),
            },
        )
        assert 1 == done.returncode, done.stderr
        assert "on oracle not every required hidden test reported pass" in done.stderr
        verdict = json.loads((tmp_path / "q" / "oracle" / "verdict.json").read_text())
        assert ("missing", 0) == (verdict["status"], verdict["exit_code"])
        assert 6 == len(verdict["missing"])

    def test_qualification_names_what_differed(
        self, snapshots: dict[str, Path], tmp_path: Path, bench: Any
    ) -> None:
        """Qualifying the oracle as base fails, naming the task and the verdict."""
        done = bench(
            [
                str(LIBEXEC / "bench-qualify"),
                TASK,
                str(snapshots["oracle"]),
                str(snapshots["oracle"]),
                str(tmp_path / "q"),
            ],
            {"BENCH_GRADER_SPEC": str(grader_spec(tmp_path / "spec"))},
        )
        assert 1 == done.returncode
        assert "task kv-rangestream: the hidden grader passed on base" in done.stderr


@pytest.mark.usefixtures("images")
class TestModuleCacheSetup:
    def _variant(self, snapshots: dict[str, Path], tmp_path: Path, requires: str) -> Path:
        base = _copy(snapshots["base"], tmp_path / "base")
        go_mod = base / "go.mod"
        go_mod.write_text(go_mod.read_text() + f"\nrequire {requires}\n")
        return base

    def test_owned_module_is_rejected(
        self, snapshots: dict[str, Path], tmp_path: Path, go_proxy: Any, bench: Any
    ) -> None:
        """A task variant whose dependencies include an owned module: the cache is refused."""
        go_proxy.add("kvstore.example/kv/v2", "v2.0.0")
        base = self._variant(snapshots, tmp_path, "kvstore.example/kv/v2 v2.0.0")
        done = bench(
            [str(LIBEXEC / "bench-gomodcache"), TASK, str(base), str(base), str(tmp_path / "c")],
            {
                "BENCH_SETUP_GOPROXY_DIR": str(go_proxy.root),
                "BENCH_GRADER_SPEC": str(grader_spec(tmp_path / "spec")),
            },
        )
        assert 1 == done.returncode
        assert "isolation proof failed: gomodcache.owned" in done.stderr
        assert "no arm may start" in done.stderr
        assert "kvstore.example/kv/v2@v2.0.0" in done.stdout + done.stderr

    def test_foreign_module_is_cached(
        self, snapshots: dict[str, Path], tmp_path: Path, go_proxy: Any, bench: Any
    ) -> None:
        """A foreign dependency is downloaded offline from the file proxy and accepted."""
        go_proxy.add("example.test/dep", "v1.0.0")
        base = self._variant(snapshots, tmp_path, "example.test/dep v1.0.0")
        cache = tmp_path / "c"
        done = bench(
            [str(LIBEXEC / "bench-gomodcache"), TASK, str(base), str(base), str(cache)],
            {
                "BENCH_SETUP_GOPROXY_DIR": str(go_proxy.root),
                "BENCH_GRADER_SPEC": str(grader_spec(tmp_path / "spec")),
            },
        )
        assert 0 == done.returncode, done.stderr
        assert (cache / "cache/download/example.test/dep/@v/v1.0.0.zip").is_file()
        assert not list(tmp_path.glob("gomodcache-setup.*"))


@pytest.mark.usefixtures("images")
class TestPreparationOnly:
    def test_clean_run(self, tmp_path: Path, bench: Any) -> None:
        """The whole mode succeeds and leaves nothing of its Compose project behind."""
        done = bench(
            [str(REPO_ROOT / "benchmarks" / "bench.sh"), "preparation-only"],
            {"RUNS_DIR": str(tmp_path), "HPBENCH_SKIP_BUILD": "1"},
        )
        assert 0 == done.returncode, done.stderr[-4000:]
        (run_dir,) = tmp_path.iterdir()
        phases = dict(
            line.split("\t") for line in (run_dir / "phases.tsv").read_text().splitlines()
        )
        assert {"provision", "images", "snapshots", "gomodcache", "qualification"} <= set(phases)
        assert {"topology-up", "isolation", "topology-down"} <= set(phases)
        project = (run_dir / "compose-project").read_text().strip()
        assert [] == _leftovers(project)
        assert "no model was invoked and no arm started" in done.stderr

    def test_failed_proof_stops_the_run(self, tmp_path: Path, bench: Any) -> None:
        """An agent on the other arm's network: the run stops, named, and is taken down."""
        override = tmp_path / "fault.yaml"
        override.write_text("services:\n  hpatch-agent:\n    networks: [hpatch, control]\n")
        runs = tmp_path / "runs"
        done = bench(
            [str(REPO_ROOT / "benchmarks" / "bench.sh"), "preparation-only"],
            {
                "RUNS_DIR": str(runs),
                "HPBENCH_SKIP_BUILD": "1",
                "BENCH_COMPOSE_OVERRIDES": str(override),
            },
        )
        assert 1 == done.returncode
        assert "isolation proof failed: topology.verify" in done.stderr
        assert "isolation proof failed: hpatch-agent: other-router.name" in done.stderr
        assert "no arm may start" in done.stderr
        assert "no arm started" not in done.stderr
        (run_dir,) = runs.iterdir()
        assert [] == _leftovers((run_dir / "compose-project").read_text().strip())


@pytest.mark.usefixtures("images")
class TestInterrupt:
    def test_interrupt_takes_the_project_down(self, tmp_path: Path) -> None:
        """Ctrl-C while the topology runs: exit 130 and nothing of the project remains."""
        env = {
            **os.environ,
            "BENCH_ROOT": str(REPO_ROOT),
            "RUNS_DIR": str(tmp_path),
            "HPBENCH_SKIP_BUILD": "1",
        }
        process = subprocess.Popen(
            [str(REPO_ROOT / "benchmarks" / "bench.sh"), "preparation-only"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        project = ""
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and process.poll() is None:
            marker = list(tmp_path.glob("*/compose-project"))
            if marker:
                project = marker[0].read_text().strip()
                running = subprocess.run(
                    [
                        "docker",
                        "ps",
                        "-q",
                        "--filter",
                        f"label=com.docker.compose.project={project}",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                if running.stdout.strip():
                    break
            time.sleep(0.5)
        assert project, "the run never brought a topology up"
        os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        _, stderr = process.communicate(timeout=120)
        assert 130 == process.returncode, stderr[-3000:]
        assert [] == _leftovers(project)
