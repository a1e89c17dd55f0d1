"""Throughput of the command analysis: commands per second and peak memory.

Usage: .venv/bin/python benchmarks/perf/commands_perf.py [--commands N]

Writes a Codex-shaped JSONL file of N command executions (default 100,000;
varied, mostly compound, every command string unique so no cache can help)
with a file change after every tenth command, then times the full path the
CLI takes: reading the file line by line, parsing every command with
tree-sitter-bash, classifying each invocation and finding loops. Peak memory
is the process's maximum resident set size (resource.getrusage) before and
after the analysis. The target is at least 10,000 commands per second (wall
clock); the CPU-time rate is printed too, since a busy machine slows the wall
clock without the analysis getting any slower.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from hpbench._logging import configure
from hpbench.codex.testing import StreamBuilder
from hpbench.commands import analyze_file
from hpbench.commands.plain import split_plain

ROOT = "/workspace"
TEMPLATES = (
    "cat src/pkg{n}/file{n}.go",
    "rg -n -e 'Func{n}' --glob '*.go' src/pkg{n}",
    "sed -n '{n},+40p' src/pkg{n}/file{n}.go",
    "cd src/pkg{n} && grep -rn 'needle{n}' . | head -n 20",
    "git diff -- src/pkg{n}/file{n}.go",
    "git status --short && git diff --stat",
    "go test ./src/pkg{n}/... 2>&1 | tail -n 30",
    "ls -la src/pkg{n}; find src -name 'file{n}*.go'",
    "cat > notes{n}.txt <<'EOF'\nline {n}\nEOF",
    'for f in src/pkg{n}/*.go; do head -n 5 "$f"; done',
)


def write_stream(path: Path, commands: int) -> None:
    """A stream of ``commands`` command executions and a change every tenth."""
    with path.open("w", encoding="utf-8") as out:
        builder = StreamBuilder(workspace_root=ROOT).start()
        for n in range(commands):
            builder.command(TEMPLATES[n % len(TEMPLATES)].format(n=n))
            if n % 10 == 9:
                # Change a file read a few commands ago and again a few commands on,
                # so that the loop search has real work to do.
                builder.patch([f"src/pkg{n - 6}/file{n - 6}.go", f"src/pkg{n + 4}/file{n + 4}.go"])
            if len(builder.lines) > 1000:
                out.write(builder.text())
                builder.lines.clear()
        out.write(builder.complete().text())


def peak_rss_mib() -> float:
    """Maximum resident set size of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=100_000)
    args = parser.parse_args()
    configure(level="warning")  # as the CLI does: no per-file info line in the figures
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "codex.jsonl"
        write_stream(path, args.commands)
        size_mib = path.stat().st_size / 2**20
        rss_before = peak_rss_mib()
        start = time.perf_counter()
        cpu_start = time.process_time()
        analysis = analyze_file(path, workspace_root=ROOT)
        cpu = time.process_time() - cpu_start
        elapsed = time.perf_counter() - start
        rss_after = peak_rss_mib()
    rate = analysis.commands / elapsed
    print(f"commands:        {analysis.commands:,} ({size_mib:.1f} MiB of JSONL)")
    print(f"invocations:     {len(analysis.invocations):,}")
    plain = sum(split_plain(t.format(n=1), ".") is not None for t in TEMPLATES)
    print(f"command forms:   {len(TEMPLATES)}, {plain} plain (split without the parser)")
    print(
        f"loops:           {len(analysis.loops):,} same-path, "
        f"{len(analysis.workspace_diff_loops):,} workspace-wide"
    )
    print(f"elapsed:         {elapsed:.2f} s wall, {cpu:.2f} s CPU")
    print(f"commands/s:      {rate:,.0f} (wall), {analysis.commands / cpu:,.0f} (CPU)")
    print(f"invocations/s:   {len(analysis.invocations) / elapsed:,.0f}")
    print(f"peak RSS:        {rss_after:.1f} MiB (before analysis: {rss_before:.1f} MiB)")
    target = 10_000
    print(f"target:          {target:,} commands/s -> {'met' if rate >= target else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
