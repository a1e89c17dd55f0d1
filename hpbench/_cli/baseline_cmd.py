"""``hpbench baseline``: publish a run's passing control, and check a baseline's import."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hpbench._cli.common import EXIT_FINDINGS, EXIT_OK
from hpbench._console import err_console, out_console, print_fields
from hpbench.baseline import (
    current_metrics,
    export_baseline,
    import_problems,
    import_target,
    read_baseline,
    write_baseline,
)
from hpbench.imported import import_into


def register(commands: Any) -> None:
    """Add ``baseline`` and its sub-commands."""
    baseline = commands.add_parser("baseline", help="published control baselines (hpatch-only)")
    sub = baseline.add_subparsers(dest="baseline_command", metavar="SUBCOMMAND", required=True)

    export = sub.add_parser(
        "export",
        help="publish a paired or control-only run's passing control as a baseline file",
        description=(
            "Write hpbench.baseline.v2: the control's attempt object, what it ran against and "
            "its validated router metrics. Refuses a run without a passing control whose "
            "capture validates, and never replaces an existing file."
        ),
    )
    export.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    export.add_argument("--out", required=True, type=Path, metavar="FILE")
    export.add_argument(
        "--repetition", type=int, metavar="N", help="this repetition's control (default: first)"
    )
    export.set_defaults(handler=_export)

    check = sub.add_parser(
        "check",
        help="whether a baseline may be imported into a run",
        description=(
            "Exit 0 when the baseline matches the run on task, content fingerprint, stock "
            "instructions, Codex version, model, effort and demo-or-real, and its control "
            "passed; exit 1 naming every field that does not."
        ),
    )
    check.add_argument("baseline", type=Path, metavar="FILE")
    check.add_argument("--run", required=True, type=Path, metavar="RUN_DIR")
    check.set_defaults(handler=_check)

    into = sub.add_parser(
        "import",
        help="import an hpatch-only run's control from its BASELINE (bench-hpatch-only)",
        description=(
            "Check the baseline the run's BASELINE setting names (a baseline file, or a "
            "finished paired or control-only run directory) against the run, and keep it in "
            "the run directory as its imported control. Exit 1 naming every field that does "
            "not match; nothing is imported then."
        ),
    )
    into.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    into.set_defaults(handler=_import)


def _export(args: argparse.Namespace) -> int:
    baseline = export_baseline(args.run_dir, args.repetition)
    write_baseline(baseline, args.out)
    out_console.print(f"{args.out}: baseline written", markup=False, highlight=False)
    print_fields(
        [
            ("source", f"{baseline.source_run_id} ({baseline.source_mode})"),
            ("control", f"repetition {baseline.control.repetition}, passed"),
            ("task", f"{baseline.task_id} ({baseline.task_fingerprint})"),
            ("model", f"{baseline.model} / {baseline.effort}, Codex {baseline.codex_version}"),
        ]
    )
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    baseline = read_baseline(args.baseline)
    source = str(args.baseline)
    problems = import_problems(baseline, import_target(args.run), source=source)
    if problems:
        err_console.print(f"{source}: cannot be imported", markup=False, highlight=False)
        for problem in problems:
            err_console.print(f"  {problem}", markup=False, highlight=False)
        return EXIT_FINDINGS
    metrics = current_metrics(baseline, source=source)
    kind = "current metrics" if metrics is not None else "correctness context only"
    out_console.print(f"{source}: importable ({kind})", markup=False, highlight=False)
    return EXIT_OK


def _import(args: argparse.Namespace) -> int:
    baseline = import_into(args.run_dir)
    metrics = current_metrics(baseline, source=str(args.run_dir))
    kind = "with current metrics" if metrics is not None else "metrics: correctness context only"
    out_console.print(
        f"control imported from run {baseline.source_run_id} ({baseline.source_mode}), "
        f"repetition {baseline.control.repetition}, {kind}",
        markup=False,
        highlight=False,
    )
    return EXIT_OK
