"""The scaling curve of the offline paired demo: 1, 4 and 16 repetitions at once.

For each repetition count the demo runs once (images already built, HPBENCH_SKIP_BUILD),
and the script prints its wall time, its wall time as a ratio to one repetition's, and
the harness's CPU-seconds per attempt: the user + system time of every process the run
waited for (bash, Python, the docker and compose clients), which excludes the engine and
the containers themselves (the agents, routers, provider and graders do the measured
work). Ratios are taken within one invocation because the machine is noisy.

Targets (issue 19): 16 repetitions <= 2.5 x the wall of 1; harness CPU <= 1.5 s per
attempt. The figures go to docs/performance.md with the machine they came from.

Usage: .venv/bin/python benchmarks/perf/scaling.py [--counts 1,4,16]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "benchmarks" / "bench.sh"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_demo(runs_dir: Path, repetitions: int) -> tuple[float, float]:
    """One paired demo of ``repetitions``: (wall seconds, harness CPU-seconds)."""
    env = {k: v for k, v in os.environ.items() if k not in {"HPBENCH_API_KEY", "OPENAI_API_KEY"}}
    env.update(RUNS_DIR=str(runs_dir), REPETITIONS=str(repetitions), HPBENCH_SKIP_BUILD="1")
    cpu_before = _children_cpu()
    started = time.monotonic()
    result = subprocess.run(
        [str(BENCH), "paired"], capture_output=True, text=True, env=env, check=False
    )
    wall = time.monotonic() - started
    cpu = _children_cpu() - cpu_before
    if result.returncode != 0 or not re.search(r"every attempt passed", result.stderr):
        raise SystemExit(f"the demo failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,4,16", help="repetition counts, comma-separated")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    print(f"machine: {os.cpu_count()} cores, {os.uname().release}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="hpbench-scaling-") as runs:
        for count in counts:
            wall, cpu = run_demo(Path(runs), count)
            rows.append((count, wall, cpu))
            print(f"  {count:>2} repetition(s): {wall:6.1f} s wall", flush=True)
    base = rows[0][1]
    print("\nrepetitions  wall (s)  x wall of first  harness CPU-s/attempt")
    for count, wall, cpu in rows:
        print(f"{count:>11}  {wall:8.1f}  {wall / base:15.2f}  {cpu / (2 * count):21.2f}")
    last = rows[-1]
    ok = last[1] / base <= 2.5 and all(cpu / (2 * n) <= 1.5 for n, _, cpu in rows)
    print(f"\ntargets (<= 2.5 x at {last[0]}, <= 1.5 CPU-s/attempt): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
