"""Harness overhead of the paired benchmark, and what concurrent repetitions cost.

Runs the offline demo twice (REPETITIONS=1, then 4) and prints:

- per-attempt harness overhead: the attempt's wall time minus the agent's
  measured wall time minus the grader's, against the floor of the two
  container starts every attempt needs (an agent exec and a grader run),
  measured here as trivial `docker run` starts of the same images;
- the wall time of 4 concurrent repetitions against 1.

Targets: overhead <= 1.5 x floor; 4 repetitions <= 1.8 x one. Ratios are taken
within one invocation because the machine is noisy.

Usage: .venv/bin/python benchmarks/perf/harness_perf.py
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCH = REPO_ROOT / "benchmarks" / "bench.sh"


def run_demo(runs_dir: Path, repetitions: int) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in {"HPBENCH_API_KEY", "OPENAI_API_KEY"}}
    env.update(RUNS_DIR=str(runs_dir), REPETITIONS=str(repetitions), HPBENCH_SKIP_BUILD="1")
    result = subprocess.run(
        [str(BENCH), "paired"], capture_output=True, text=True, env=env, check=False
    )
    match = re.search(r"run directory: (\S+)", result.stderr)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"the demo failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return Path(match.group(1))


def phases(run_dir: Path) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for line in (run_dir / "phases.tsv").read_text().splitlines():
        name, _, seconds = line.partition("\t")
        found.setdefault(name, []).append(float(seconds))
    return found


def floor_seconds(samples: int = 5) -> float:
    """Median start-to-exit time of a trivial agent container plus a grader container."""
    total = []
    for _ in range(samples):
        started = time.monotonic()
        for image in ("hpbench-agent:local", "hpbench-grader:local"):
            subprocess.run(
                ["docker", "run", "--rm", "--network", "none", image, "true"],
                check=True,
                capture_output=True,
            )
        total.append(time.monotonic() - started)
    return statistics.median(total)


def overhead_per_attempt(run_dir: Path) -> float:
    attempts = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    wall = phases(run_dir)["attempt"]
    agent = [a["elapsed"]["agent_seconds"] for a in attempts]
    grader = [a["grader"]["seconds"] for a in attempts]
    return statistics.mean(w - a - g for w, a, g in zip(wall, agent, grader, strict=True))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="hpbench-perf-") as scratch:
        runs = Path(scratch)
        one = run_demo(runs, 1)
        four = run_demo(runs, 4)
        floor = floor_seconds()
        overhead = overhead_per_attempt(one)
        single = phases(one)["repetitions"][0]
        concurrent = phases(four)["repetitions"][0]
    print(f"container-start floor per attempt : {floor:7.2f} s")
    print(f"harness overhead per attempt      : {overhead:7.2f} s")
    print(f"overhead / floor                  : {overhead / floor:7.2f}  (target <= 1.5)")
    print(f"1 repetition wall time            : {single:7.1f} s")
    print(f"4 concurrent repetitions wall time: {concurrent:7.1f} s")
    print(f"4 / 1                             : {concurrent / single:7.2f}  (target <= 1.8)")


if __name__ == "__main__":
    main()
