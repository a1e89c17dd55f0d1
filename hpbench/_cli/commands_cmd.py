"""``hpbench commands``: analyse what the agent ran, and gate on same-path loops."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import err_console, out_console, print_table
from hpbench.commands import CommandAnalysis, analyze_file, observations, to_json


def register(commands: Any) -> None:
    """Add ``commands analyze`` and ``commands gate``."""
    group = commands.add_parser("commands", help="command-loop analysis of Codex JSONL")
    sub = group.add_subparsers(dest="commands_command", metavar="SUBCOMMAND", required=True)

    analyze = sub.add_parser(
        "analyze", help="parse, classify and find loops in one attempt's commands"
    )
    analyze.add_argument("jsonl", type=Path, metavar="JSONL", help="codex exec --json output")
    _add_root(analyze)
    add_json_flag(analyze)
    analyze.set_defaults(handler=analyze_command)

    gate = sub.add_parser(
        "gate",
        help="exit 1 when any attempt has a same-path file-read, search or content-diff loop",
    )
    gate.add_argument("jsonl", type=Path, nargs="+", metavar="JSONL", help="one per attempt")
    _add_root(gate)
    gate.add_argument(
        "--explicit-paths-only",
        action="store_true",
        help="ignore loops of bare worktree git diffs (workspace-wide scope)",
    )
    add_json_flag(gate)
    gate.set_defaults(handler=gate_command)


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace-root",
        required=True,
        metavar="PATH",
        help="the directory Codex worked in (its absolute paths become relative to it)",
    )


def analyze_command(args: argparse.Namespace) -> int:
    """``hpbench commands analyze JSONL --workspace-root PATH``.

    Exits 1 when lines of the stream could not be read (the analysis of the
    rest is still printed); loops alone are not an error here.
    """
    analysis = analyze_file(args.jsonl, workspace_root=args.workspace_root)
    if args.json:
        print_json(to_json(analysis))
    else:
        _print_text(analysis)
    for finding in analysis.input_findings:
        err_console.print(f"hpbench: {finding}", markup=False, highlight=False)
    return EXIT_FINDINGS if analysis.input_findings else EXIT_OK


def _print_text(analysis: CommandAnalysis) -> None:
    rows = [
        (category.value, str(count.total), str(count.after_edit))
        for category, count in analysis.counts.items()
    ]
    print_table("invocations by category", ("category", "total", "after_edit"), rows)
    loop_rows = [
        (loop.kind.value, str(loop.seq), loop.operand, loop.path) for loop in analysis.loops
    ]
    loop_rows += [
        ("workspace-diff", str(loop.seq), "(bare git diff)", ", ".join(loop.paths))
        for loop in analysis.workspace_diff_loops
    ]
    if loop_rows:
        print_table("same-path loops", ("kind", "seq", "operand", "path"), loop_rows)
    for observation in observations(analysis):
        out_console.print(observation.message, markup=False, highlight=False)


def _gate_failures(analysis: CommandAnalysis, *, explicit_only: bool) -> int:
    failures = len({loop.seq for loop in analysis.loops})
    if not explicit_only:
        failures += len(analysis.workspace_diff_loops)
    return failures


def gate_command(args: argparse.Namespace) -> int:
    """``hpbench commands gate JSONL… --workspace-root PATH``.

    The ``BENCHMARK_ENFORCE_NO_EDIT_LOOPS`` rule of spec 004: any same-path
    loop fails. A stream that cannot be read fully fails too, because the
    absence of loops in it cannot be shown.
    """
    results = []
    failed = False
    for path in args.jsonl:
        analysis = analyze_file(path, workspace_root=args.workspace_root)
        loops = _gate_failures(analysis, explicit_only=args.explicit_paths_only)
        unreadable = len(analysis.input_findings)
        failed = failed or bool(loops) or bool(unreadable)
        results.append(
            {"file": str(path), "loop_invocations": loops, "unreadable_lines": unreadable}
        )
        for finding in analysis.input_findings:
            err_console.print(f"hpbench: {finding}", markup=False, highlight=False)
    if args.json:
        print_json({"ok": not failed, "attempts": results})
    else:
        rows = [
            (
                "FAIL" if result["loop_invocations"] or result["unreadable_lines"] else "ok",
                str(result["file"]),
                str(result["loop_invocations"]),
                str(result["unreadable_lines"]),
            )
            for result in results
        ]
        print_table("loop gate", ("verdict", "file", "loop_invocations", "unreadable_lines"), rows)
    return EXIT_FINDINGS if failed else EXIT_OK
