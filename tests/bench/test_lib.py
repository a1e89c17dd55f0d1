"""bench-lib.sh helpers that the Python side must agree with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hpbench.modes import MODES, arm_order
from hpbench.rundir import Arm, RunLayout

from ..topology.test_proofs_script import closed_port, serving

REPO_ROOT = Path(__file__).resolve().parents[2]
LIB = REPO_ROOT / "benchmarks" / "libexec" / "bench-lib.sh"


def scheduled(repetition: int, arms: str) -> list[str]:
    done = subprocess.run(
        ["bash", "-c", f'source "{LIB}"; scheduled_arms "$1"', "lib", str(repetition)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "BENCH_ROOT": str(REPO_ROOT), "BENCH_ARMS": arms},
        timeout=30,
    )
    return done.stdout.split()


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("repetition", [1, 2, 3, 4])
def test_the_shell_runs_the_arms_in_the_order_python_reads(repetition: int, mode: str) -> None:
    """scheduled_arms and hpbench.modes.arm_order agree, mode by mode and repetition by
    repetition (BENCH_ARMS is the plan's arms: the mode's fresh arms, baseline first)."""
    fresh = " ".join(arm.value for arm in MODES[mode].fresh)
    expected = [arm.value for arm in arm_order(MODES[mode], repetition)]
    assert expected == scheduled(repetition, fresh)


def test_only_the_scheduled_arms() -> None:
    """control-only schedules control alone, whatever the repetition."""
    assert ["control"] == scheduled(2, "control")
    assert [] == scheduled(1, "")


# An engine whose `exec ID bash -c SCRIPT NAME PORT get HOST PATH` runs SCRIPT here
# with the router's port mapped to $ROUTER_PORT and HOST to 127.0.0.1 (logging the
# container and the host asked for), and whose `cp ID:/capture DEST` makes DEST.
FAKE_DOCKER = r"""#!/usr/bin/env bash
case "$1" in
  exec)
    # exec ID bash -c SCRIPT NAME PORT get HOST PATH
    echo "exec in $2" >>"${DOCKER_LOG}"
    echo "asked $9 ${10}" >>"${DOCKER_LOG}"
    exec bash -c "$5" "$6" "${ROUTER_PORT}" "$8" 127.0.0.1 "${10}"
    ;;
  cp) echo "cp $2" >>"${DOCKER_LOG}"; mkdir -p "$3" && echo captured >"$3/records.jsonl" ;;
  *) exit 1 ;;
esac
"""


def collect(tmp_path: Path, port: int) -> tuple[int, Path]:
    """collect_router against the stand-in engine; its status and evidence directory."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(0o755)
    out = tmp_path / "evidence"
    done = subprocess.run(
        [
            "bash",
            "-c",
            f'source "{LIB}"; collect_router sentinel-id control-router router-id "$1"',
            "lib",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
        env={
            **os.environ,
            "BENCH_ROOT": str(REPO_ROOT),
            "ROUTER_PORT": str(port),
            "DOCKER_LOG": str(tmp_path / "docker.log"),
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
        },
        timeout=60,
    )
    return done.returncode, out


def test_collect_router_keeps_the_metrics_body(tmp_path: Path) -> None:
    """The router's /api/metrics body (Content-Length bytes of it) and its capture land
    in the evidence directory, through in-container/proofs get."""
    with serving() as port:
        status, out = collect(tmp_path, port)
    assert 0 == status
    assert '{"v": 4}' == (out / "metrics.json").read_text()
    assert "" == (out / "metrics.stderr").read_text()
    assert (out / "capture" / "records.jsonl").is_file()
    assert (out / "collected").is_file()
    # Asked from the sentinel by the router's name; the capture copied from the router:
    # nothing runs inside the router, a plug-in image that need not hold a shell.
    log = (tmp_path / "docker.log").read_text().splitlines()
    assert [
        "exec in sentinel-id",
        "asked control-router /api/metrics",
        "cp router-id:/capture",
    ] == log


def test_collect_router_without_an_answer(tmp_path: Path) -> None:
    """A router that does not answer: status 1, no body, and the attempt still marked."""
    status, out = collect(tmp_path, closed_port())
    assert 1 == status
    assert "" == (out / "metrics.json").read_text()
    assert (out / "collected").is_file()


def lib(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``source bench-lib.sh; SCRIPT`` with ARGS as $1...; never raises."""
    return subprocess.run(
        ["bash", "-c", f'source "{LIB}"; {script}', "lib", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "BENCH_ROOT": str(REPO_ROOT)},
        timeout=30,
    )


class TestLayOutHidden:
    def _list(self, tmp_path: Path, lines: list[str]) -> Path:
        listing = tmp_path / "hidden-files"
        listing.write_text("".join(f"{line}\n" for line in lines))
        return listing

    def test_files_land_at_their_workspace_paths(self, tmp_path: Path) -> None:
        source = tmp_path / "src.go"
        source.write_text("package kv\n")
        listing = self._list(tmp_path, [f"kv/a_test.go\t{source}", f"b_test.go\t{source}"])
        done = lib('lay_out_hidden "$1" "$2"', str(listing), str(tmp_path / "out"))
        assert 0 == done.returncode, done.stderr
        assert "package kv\n" == (tmp_path / "out" / "kv" / "a_test.go").read_text()
        assert (tmp_path / "out" / "b_test.go").is_file()

    @pytest.mark.parametrize(
        ("relative", "message"),
        [
            ("../escape.go", "not a plain relative path"),
            ("kv/../../x.go", "not a plain relative path"),
            ("/etc/x.go", "is absolute"),
            ("kv//x.go", "not a plain relative path"),
        ],
    )
    def test_a_path_that_could_leave_is_refused(
        self, tmp_path: Path, relative: str, message: str
    ) -> None:
        source = tmp_path / "src.go"
        source.write_text("x\n")
        listing = self._list(tmp_path, [f"{relative}\t{source}"])
        done = lib('lay_out_hidden "$1" "$2"', str(listing), str(tmp_path / "out"))
        assert 1 == done.returncode
        assert message in done.stderr
        assert not (tmp_path / "escape.go").exists()

    def test_twice_or_missing_is_refused(self, tmp_path: Path) -> None:
        source = tmp_path / "src.go"
        source.write_text("x\n")
        twice = self._list(tmp_path, [f"a.go\t{source}", f"a.go\t{source}"])
        done = lib('lay_out_hidden "$1" "$2"', str(twice), str(tmp_path / "out"))
        assert (1, True) == (done.returncode, "listed twice" in done.stderr)
        missing = self._list(tmp_path, [f"b.go\t{tmp_path / 'nope.go'}"])
        done = lib('lay_out_hidden "$1" "$2"', str(missing), str(tmp_path / "out2"))
        assert (1, True) == (done.returncode, "does not exist" in done.stderr)


def test_instructions_names_agree_with_the_layout(tmp_path: Path) -> None:
    """instructions_file names each arm's instructions as RunLayout.instructions does."""
    for arm in Arm:
        done = lib('instructions_file "$1"', arm.value)
        assert RunLayout(tmp_path).instructions(arm).name == done.stdout.strip()
