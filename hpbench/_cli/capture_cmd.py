"""``hpbench capture``: validate an arm's capture (its schemas: ``hpbench schemas``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, add_json_flag, print_json
from hpbench._console import err_console, out_console, print_fields
from hpbench.capture.children import ModelExpectation
from hpbench.capture.models import Protocol, RouterMode
from hpbench.capture.validator import CaptureReport, validate_capture
from hpbench.rundir import Arm


def register(commands: Any) -> None:
    """Add ``capture`` and its sub-commands."""
    capture = commands.add_parser("capture", help="router capture evidence (records + snapshot)")
    sub = capture.add_subparsers(dest="capture_command", metavar="SUBCOMMAND", required=True)

    validate = sub.add_parser(
        "validate",
        help="validate one arm's capture records and metrics snapshot",
        description=(
            "Stream the schema-6 records, reconcile them with the hpatch.capture.metrics.v4 "
            "snapshot (and with Codex's thread totals), and bind the arm to its router "
            "configuration. Exit 0 with a summary of the totals when valid, 1 with every "
            "finding when not."
        ),
    )
    validate.add_argument(
        "--arm", required=True, choices=[a.value for a in Arm], help="the measured arm"
    )
    validate.add_argument(
        "--records", required=True, type=Path, metavar="DIR", help="the --capture-output dir"
    )
    validate.add_argument(
        "--snapshot", required=True, type=Path, metavar="FILE", help="the /api/metrics snapshot"
    )
    validate.add_argument(
        "--expect-mode",
        choices=[m.value for m in RouterMode],
        help="router mode the arm must show (hpatch arm only; default hpatch)",
    )
    validate.add_argument(
        "--expect-protocol",
        choices=[p.value for p in Protocol],
        help="protocol the arm must show (hpatch arm only; default native)",
    )
    validate.add_argument(
        "--codex-jsonl",
        nargs="+",
        type=Path,
        default=[],
        metavar="FILE",
        help="codex exec --json streams of the measured root threads",
    )
    validate.add_argument(
        "--expect-model",
        metavar="MODEL",
        help="the configured parent model: every root attempt must ask for it, and every "
        "child thread must match a retained proof",
    )
    validate.add_argument(
        "--child-model",
        action="append",
        default=[],
        metavar="MODEL",
        help="a model child threads may use (repeatable; default the --expect-model)",
    )
    validate.add_argument(
        "--mentor-model",
        metavar="MODEL",
        help="a Mentor treatment's mentor model (children may use it; one request needed)",
    )
    add_json_flag(validate)
    validate.set_defaults(handler=validate_command)


def _signed(value: int | None) -> str:
    return "unavailable" if value is None else f"{value:+d}"


def _print_summary(report: CaptureReport) -> None:
    summary = report.summary()
    if summary is None:
        return
    requests = summary["requests"]
    usage = summary["usage"]
    savings = summary["savings"]
    hpatch = summary["hpatch"]
    print_fields(
        [
            ("arm", report.label or report.arm.value),
            ("logical requests", str(requests["logical_requests"])),
            (
                "provider attempts",
                f"{requests['provider_attempts']} ({requests['retries']} retries; "
                f"{requests['attempts_with_usage']} with usage, "
                f"{requests['attempts_without_usage']} without, "
                f"{requests['attempts_invalid_usage']} invalid)",
            ),
            ("input tokens", str(usage["input_tokens"])),
            (
                "cached input tokens",
                f"{usage['cached_input_tokens']} (explicit {usage['cached_input_explicit']}, "
                f"missing {usage['cached_input_missing']}, null {usage['cached_input_null']}, "
                f"invalid {usage['cached_input_invalid']})",
            ),
            ("output tokens", str(usage["output_tokens"])),
            ("reasoning tokens", str(usage["reasoning_tokens"])),
            ("request savings", f"{_signed(savings['request']['savings_bytes'])} bytes"),
            ("output savings", f"{_signed(savings['output']['savings_bytes'])} bytes"),
            (
                "output_text savings",
                f"{_signed(savings['output_text']['savings_bytes'])} bytes",
            ),
            (
                "stream transport",
                f"provider {savings['transport']['provider_stream_bytes']} bytes, "
                f"client {savings['transport']['client_stream_bytes']} bytes",
            ),
            (
                "hpatch",
                ", ".join(
                    f"{key} {value}" for key, value in hpatch.items() if isinstance(value, int)
                )
                + f", edit payload {_signed(hpatch['edit_payload']['savings_bytes'])} bytes",
            ),
            *(
                (
                    f"model ({row['role']})",
                    f"{row['response_model'] or 'unavailable'} "
                    f"[header {row['header_model'] or 'unavailable'}]: {row['attempts']} "
                    f"attempts, {row['attempts_with_usage']} with usage",
                )
                for row in summary["models"]
            ),
        ]
    )


def _models(args: argparse.Namespace) -> ModelExpectation | None:
    if args.expect_model is None:
        if args.child_model or args.mentor_model:
            msg = "--child-model and --mentor-model need --expect-model"
            raise ValueError(msg)
        return None
    return ModelExpectation(
        parent=args.expect_model,
        child=frozenset(args.child_model or [args.expect_model]),
        mentor=args.mentor_model,
    )


def validate_command(args: argparse.Namespace) -> int:
    """``hpbench capture validate``."""
    try:
        report = validate_capture(
            args.records,
            args.snapshot,
            arm=args.arm,
            expect_mode=args.expect_mode,
            expect_protocol=args.expect_protocol,
            codex_jsonl=args.codex_jsonl,
            models=_models(args),
        )
    except ValueError as exc:
        err_console.print(f"hpbench: {exc}", markup=False, highlight=False)
        return EXIT_USAGE
    if args.json:
        print_json(report.to_json())
        return EXIT_OK if report.ok else EXIT_FINDINGS
    if report.ok:
        out_console.print(f"{report.records_dir}: capture valid", markup=False, highlight=False)
        _print_summary(report)
        return EXIT_OK
    count = len(report.findings) + sum(report.suppressed.values())
    out_console.print(
        f"{report.records_dir}: capture invalid ({count} findings)", markup=False, highlight=False
    )
    for finding in report.findings:
        out_console.print(f"  {finding}", markup=False, highlight=False)
    for code, extra in report.suppressed.items():
        out_console.print(f"  ... and {extra} more [{code}]", markup=False, highlight=False)
    return EXIT_FINDINGS
