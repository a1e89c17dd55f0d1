"""The credential scrub of ``hpbench run finish``: speed and peak memory on a large run.

Usage:
    .venv/bin/python benchmarks/perf/scrub_perf.py [--megabytes 512] [--files 2000]

Makes a run directory holding one file of MEGABYTES with the key near its end and
FILES small files without it, then scrubs it and prints the seconds, the rate and
the process's peak memory growth. The scrub reads in chunks (``CHUNK``): an agent's
file can be as large as the disk allows, and the peak must not grow with it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from hpbench.credentials import CHUNK, scrub

KEY = "sk-hpbench-fake-perf-0123456789abcdef"


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=512)
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        (run / "small").mkdir(parents=True)
        block = b"x" * (1 << 20)
        with (run / "big.bin").open("wb") as stream:
            for _ in range(args.megabytes - 1):
                stream.write(block)
            stream.write(block[: len(block) // 2] + KEY.encode() + block[: len(block) // 2])
        for number in range(args.files):
            (run / "small" / f"{number}.txt").write_text(f"file {number}\n")
        baseline = _peak_mib()
        started = time.perf_counter()
        changed = scrub(run, (KEY,))
        seconds = time.perf_counter() - started
    if changed != ["big.bin"]:
        print(f"unexpected: {changed}", file=sys.stderr)
        return 1
    # The big file is read twice (search, then rewrite).
    print(f"scrub: {args.megabytes} MiB + {args.files} small files in {seconds:.2f} s")
    print(f"  {2 * args.megabytes / seconds:.0f} MiB/s read, chunk {CHUNK >> 10} KiB")
    print(f"  peak memory growth {_peak_mib() - baseline:.1f} MiB (the file: {args.megabytes} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
