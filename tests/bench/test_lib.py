"""bench-lib.sh helpers that the Python side must agree with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hpbench.rundir import arm_order

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


@pytest.mark.parametrize("repetition", [1, 2, 3, 4])
def test_the_shell_runs_the_arms_in_the_order_python_reads(repetition: int) -> None:
    """scheduled_arms and hpbench.rundir.arm_order agree, repetition by repetition."""
    expected = [arm.value for arm in arm_order(repetition)]
    assert expected == scheduled(repetition, "control hpatch")


def test_only_the_scheduled_arms() -> None:
    """control-only schedules control alone, whatever the repetition."""
    assert ["control"] == scheduled(2, "control")
    assert [] == scheduled(1, "")
