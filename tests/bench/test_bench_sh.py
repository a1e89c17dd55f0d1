"""benchmarks/bench.sh: mode selection and refusal of bad settings before anything starts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "benchmarks" / "bench.sh"


def bench(*args: str, cwd: Path = REPO_ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "MODE"}
    return subprocess.run(
        [str(BENCH), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**clean, **env},
        timeout=60,
    )


class TestModeSelection:
    def test_unknown_mode_argument(self) -> None:
        """An unknown mode is refused, naming the setting and the choices."""
        result = bench("sideways")
        assert 1 == result.returncode
        assert "MODE 'sideways' is not a mode" in result.stderr
        assert "preparation-only" in result.stderr

    def test_unknown_mode_variable(self) -> None:
        """MODE from the environment is checked the same way."""
        result = bench(MODE="sideways")
        assert 1 == result.returncode
        assert "MODE 'sideways'" in result.stderr

    def test_conflicting_mode(self) -> None:
        """MODE and the argument must agree."""
        result = bench("paired", MODE="control-only")
        assert 1 == result.returncode
        assert "disagree" in result.stderr

    @pytest.mark.parametrize("where", ["benchmarks", "tasks/kv-rangestream", "/"])
    def test_any_working_directory(self, where: str) -> None:
        """bench.sh finds its libexec from any working directory."""
        cwd = Path(where) if where.startswith("/") else REPO_ROOT / where
        result = bench("sideways", cwd=cwd)
        assert 1 == result.returncode
        assert "is not a mode" in result.stderr
        assert "No such file" not in result.stderr

    def test_relative_invocation_from_benchmarks(self) -> None:
        """`./bench.sh` from inside benchmarks/ works as documented."""
        result = subprocess.run(
            ["./bench.sh", "sideways"],
            cwd=REPO_ROOT / "benchmarks",
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert 1 == result.returncode
        assert "is not a mode" in result.stderr


class TestContainmentSettings:
    def test_bad_cap_is_refused_before_anything_starts(self, tmp_path: Path) -> None:
        """A malformed cap stops the run at the settings check, naming the variable."""
        result = bench("paired", AGENT_MEMORY="lots", GRADER_PIDS="3", RUNS_DIR=str(tmp_path))
        assert 1 == result.returncode
        assert "AGENT_MEMORY" in result.stderr
        assert "GRADER_PIDS" in result.stderr
        assert [] == list(tmp_path.iterdir())

    @pytest.mark.docker
    def test_a_runtime_the_engine_lacks_is_refused(self, tmp_path: Path) -> None:
        """AGENT_RUNTIME=runsc without gVisor in the engine stops the run before any run
        directory, image or topology is made."""
        runtimes = subprocess.run(
            ["docker", "info", "--format", "{{range $n, $_ := .Runtimes}}{{$n}} {{end}}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        if "runsc" in runtimes:
            pytest.skip("this engine has gVisor (runsc): nothing to refuse")
        result = bench("paired", AGENT_RUNTIME="runsc", RUNS_DIR=str(tmp_path))
        assert 1 == result.returncode
        assert "AGENT_RUNTIME=runsc: the Docker engine has no such runtime" in result.stderr
        assert [] == list(tmp_path.iterdir())

    @pytest.mark.docker
    @pytest.mark.parametrize("setting", ["HPATCH_ROUTER_IMAGE", "CONTROL_ROUTER_IMAGE"])
    def test_an_absent_router_image_is_refused_by_name(self, tmp_path: Path, setting: str) -> None:
        """hpbench never pulls: a router image the engine lacks stops the run before any run
        directory, image build or topology, naming the setting and the image."""
        image = "hpbench-absent/router:nope"
        result = bench("paired", RUNS_DIR=str(tmp_path), **{setting: image})
        assert 1 == result.returncode
        assert f"{setting}={image}: no such image" in result.stderr
        assert [] == list(tmp_path.iterdir())
