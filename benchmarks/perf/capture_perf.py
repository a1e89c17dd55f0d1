"""Throughput of ``hpbench capture validate`` on a large generated capture.

Usage:
    .venv/bin/python benchmarks/perf/capture_perf.py [--size-mb 1024] [--dir /tmp/...]
        [--regenerate]

The capture is generated once under ``--dir`` (never in the repository): a block of
exchanges is written through :class:`hpbench.capture.CaptureWriter`, then repeated with
renumbered ``seq`` and ``exchange`` until the record file reaches the size; every integer
of the block's snapshot totals is scaled by the repeat count. The validation then runs in
a fresh process (one process, one core), so its peak RSS is its own. Targets: at least
100 MB/s on one core and at most 150 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hpbench.capture.synthetic import write_snapshot, write_synthetic_capture

BLOCK_EXCHANGES = 4_000
_SEQ = re.compile(r'"seq":(\d+)')
_EXCHANGE = re.compile(r'"exchange":(\d+)')


def _scale(value: Any, factor: int, path: tuple[str, ...] = ()) -> Any:
    if isinstance(value, bool) or path == ("capture", "record_schema_version"):
        return value
    if isinstance(value, int):
        return value * factor
    if isinstance(value, dict):
        return {k: _scale(v, factor, (*path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_scale(v, factor, path) for v in value]
    return value


def generate(directory: Path, size_mb: int) -> None:
    """Write ``directory/capture/records.jsonl`` (about ``size_mb`` MB) and ``metrics.json``."""
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        block_snapshot = write_synthetic_capture(
            Path(tmp) / "block", exchanges=BLOCK_EXCHANGES, root_threads=2
        )
        block = (Path(tmp) / "block" / "records.jsonl").read_text().splitlines(keepends=True)
    block_bytes = sum(len(line) for line in block)
    repeats = max(1, (size_mb * 1024 * 1024) // block_bytes)
    records = directory / "capture" / "records.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    with records.open("w", encoding="utf-8") as out:
        for index in range(repeats):
            seq_base = index * len(block)
            exchange_base = index * BLOCK_EXCHANGES
            chunk = "".join(block)
            if index:
                chunk = _SEQ.sub(lambda m, b=seq_base: f'"seq":{int(m.group(1)) + b}', chunk)
                chunk = _EXCHANGE.sub(
                    lambda m, b=exchange_base: f'"exchange":{int(m.group(1)) + b}', chunk
                )
            out.write(chunk)
    write_snapshot(_scale(block_snapshot, repeats), directory / "metrics.json")


def measure(directory: Path) -> dict[str, Any]:
    """Validate the capture and return the figures (run in a fresh process)."""
    from hpbench._logging import configure  # noqa: PLC0415 - in the measuring process only
    from hpbench.capture.validator import validate_capture  # noqa: PLC0415

    configure(level="warning")  # log events go to stderr; stdout carries the figures

    records = directory / "capture"
    size = sum(path.stat().st_size for path in records.glob("*.jsonl"))
    start = time.perf_counter()
    report = validate_capture(records, directory / "metrics.json", arm="hpatch")
    elapsed = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    # CPU time does not count the time other load on the machine took from this process.
    cpu = usage.ru_utime + usage.ru_stime
    with Path("/proc/loadavg").open() as stream:
        load = stream.read().split()[0]
    return {
        "ok": report.ok,
        "findings": [str(f) for f in report.findings[:5]],
        "bytes": size,
        "records": report.raw_records,
        "seconds": round(elapsed, 2),
        "mb_per_s": round(size / 1e6 / elapsed, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cpu_seconds": round(cpu, 2),
        "mb_per_cpu_second": round(size / 1e6 / cpu, 1),
        "load_average": load,
    }


def main() -> int:
    """Generate (once) and measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/hpbench-capture-perf"))  # noqa: S108
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.dir)))
        return 0
    marker = args.dir / f"generated-{args.size_mb}mb"
    if args.regenerate or not marker.exists():
        started = time.perf_counter()
        generate(args.dir, args.size_mb)
        marker.touch()
        print(f"generated {args.dir} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    command = [sys.executable, __file__, "--measure", "--dir", str(args.dir)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(result.stderr, file=sys.stderr)
        return result.returncode
    figures = json.loads(result.stdout)
    print(
        f"validated {figures['bytes'] / 1e6:.0f} MB ({figures['records']} records) in "
        f"{figures['seconds']} s on one core: {figures['mb_per_s']} MB/s; peak RSS "
        f"{figures['peak_rss_mb']} MB; valid={figures['ok']}"
    )
    print(
        f"CPU {figures['cpu_seconds']} s: {figures['mb_per_cpu_second']} MB per CPU-second; "
        f"1-minute load average at the end {figures['load_average']}"
    )
    for finding in figures["findings"]:
        print(f"  {finding}")
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
