"""``hpbench codex``: what one ``codex exec --json`` stream says."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import attrs

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, add_json_flag, print_json
from hpbench._console import err_console, print_fields
from hpbench.codex import CodexSummary, summarize_file


def register(commands: Any) -> None:
    """Add ``codex summarize``."""
    group = commands.add_parser("codex", help="read Codex JSONL streams")
    sub = group.add_subparsers(dest="codex_command", metavar="SUBCOMMAND", required=True)
    summarize = sub.add_parser(
        "summarize", help="outcome, item counts, usage and final message of one stream"
    )
    summarize.add_argument("jsonl", type=Path, metavar="JSONL", help="codex exec --json output")
    summarize.add_argument(
        "--workspace-root", metavar="PATH", help="make file-change paths relative to this directory"
    )
    add_json_flag(summarize)
    summarize.set_defaults(handler=summarize_command)


def summary_json(summary: CodexSummary) -> dict[str, Any]:
    """The JSON form of ``codex summarize``."""
    return {
        "schema": "hpbench.codex.summary.v1",
        "outcome": summary.outcome.value,
        "event_counts": summary.event_counts,
        "item_counts": summary.item_counts,
        "unfinished_items": summary.unfinished_items,
        "unknown_types": summary.unknown_types,
        "commands": [
            {"line": c.line, "command": c.command, "exit_code": c.exit_code, "status": c.status}
            for c in summary.commands
        ],
        "file_changes": [
            {"line": change.line, "changes": [attrs.asdict(path) for path in change.changes]}
            for change in summary.file_changes
        ],
        "failed_file_changes": summary.failed_file_changes,
        "final_message": summary.final_message,
        "terminal_error": summary.terminal_error,
        "warnings": list(summary.warnings),
        "usage": None if summary.usage is None else attrs.asdict(summary.usage),
        "findings": [finding.to_json() for finding in summary.findings],
    }


def _count(value: int | None) -> str:
    """A count Codex reported, or "unavailable" when it did not (never 0)."""
    return "unavailable" if value is None else str(value)


def summarize_command(args: argparse.Namespace) -> int:
    """``hpbench codex summarize JSONL``; exits 1 when lines could not be read."""
    summary = summarize_file(args.jsonl, workspace_root=args.workspace_root)
    if args.json:
        print_json(summary_json(summary))
    else:
        usage = summary.usage
        print_fields(
            [
                ("outcome", summary.outcome.value),
                ("items", ", ".join(f"{k} {v}" for k, v in summary.item_counts.items())),
                ("commands", str(len(summary.commands))),
                ("file changes", str(len(summary.file_changes))),
                ("input tokens", _count(None if usage is None else usage.input_tokens)),
                ("output tokens", _count(None if usage is None else usage.output_tokens)),
                ("terminal error", summary.terminal_error or "none"),
                ("final message", summary.final_message or "none"),
            ]
        )
    for finding in summary.findings:
        err_console.print(f"hpbench: {finding}", markup=False, highlight=False)
    return EXIT_FINDINGS if summary.findings else EXIT_OK
