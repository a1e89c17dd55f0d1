"""Python starts of an offline paired run, against the target 8 + 3 x repetitions.

Usage:
    .venv/bin/python benchmarks/perf/python_starts.py [--repetitions 1 2] [--runs-dir DIR]

Runs ``benchmarks/bench.sh paired`` (the offline demo) once per repetition count
with ``HPBENCH_VENV`` pointing at a counting wrapper
(:mod:`hpbench.reference.starts`), then prints the starts by command, the total,
the fixed part and the per-repetition slope fitted from the runs. Each run takes
a few minutes.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from hpbench.reference.starts import counting_venv, python_starts

ROOT = Path(__file__).resolve().parents[2]
FIXED_TARGET, PER_REPETITION_TARGET = 8, 3


def measure(repetitions: int, runs_dir: Path) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="hpbench-starts-") as scratch:
        venv = counting_venv(Path(scratch), ROOT / ".venv")
        env = {
            **os.environ,
            "HPBENCH_VENV": str(venv),
            "REPETITIONS": str(repetitions),
            "RUNS_DIR": str(runs_dir),
        }
        done = subprocess.run(
            [str(ROOT / "benchmarks" / "bench.sh"), "paired"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            sys.stderr.write(done.stderr[-3000:])
            msg = f"the paired run with {repetitions} repetition(s) failed"
            raise SystemExit(msg)
        return python_starts(venv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs-dir", type=Path, default=Path(tempfile.gettempdir()) / "runs")
    args = parser.parse_args()
    totals = {}
    for repetitions in args.repetitions:
        starts = measure(repetitions, args.runs_dir)
        totals[repetitions] = len(starts)
        target = FIXED_TARGET + PER_REPETITION_TARGET * repetitions
        print(f"repetitions={repetitions}: {len(starts)} Python starts (target <= {target})")
        for command, count in sorted(collections.Counter(starts).items()):
            print(f"  {count:3d}  hpbench {command}")
    if len(totals) >= 2:
        (low, low_total), (high, high_total) = min(totals.items()), max(totals.items())
        slope = (high_total - low_total) / (high - low)
        print(f"per repetition: {slope:g}; fixed: {low_total - slope * low:g}")


if __name__ == "__main__":
    main()
