"""Suite directories as bench-suite leaves them: mode.txt, tasks.txt, exits.tsv, and each
task's run directory with a real report.json built by the report itself from fake
evidence (``tests/report/conftest.py``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from hpbench.capture.models import MetricsSnapshot
from hpbench.report import build_report, render_summary
from hpbench.rundir import RunLayout, SuiteLayout

from ..report.conftest import always_valid, make_run, paired_attempts, snapshot


def write_request(
    suite: Path, tasks: Sequence[str], exits: Sequence[str] = (), mode: str = "paired"
) -> SuiteLayout:
    """The files bench-suite writes: ``exits`` are exits.tsv's lines as written."""
    layout = SuiteLayout(suite)
    layout.tasks.mkdir(parents=True, exist_ok=True)
    layout.mode.write_text(f"{mode}\n")
    layout.tasks_list.write_text("".join(f"{task}\n" for task in tasks))
    if exits:
        layout.exits.write_text("".join(f"{line}\n" for line in exits))
    return layout


def task_report(
    suite: Path,
    task: str,
    outcomes: Sequence[tuple[bool, bool]],
    tokens: Sequence[tuple[MetricsSnapshot, MetricsSnapshot]],
    scratch: Path,
) -> dict[str, object]:
    """A paired run of ``task`` in ``suite``'s tasks/<task>: (control passed, hpatch passed)
    and (control, hpatch) snapshots per repetition; its report.json and summary.md are
    written as ``hpbench run finish`` writes them. Returns the report."""
    snapshots = {}
    for repetition, (control, hpatch) in enumerate(tokens, start=1):
        snapshots[f"{repetition}-control"] = control
        snapshots[f"{repetition}-hpatch"] = hpatch
    scratch.mkdir(parents=True)
    run = make_run(scratch, paired_attempts(outcomes), snapshots, repetitions=len(outcomes))
    target = SuiteLayout(suite).task_run(task)
    shutil.move(str(run), str(target))
    report = build_report(target, always_valid)
    run_section = report["run"]
    assert isinstance(run_section, dict)
    run_section["task"] = task
    run_section["run_id"] = task
    layout = RunLayout(target)
    layout.report_json.write_text(json.dumps(report))
    layout.summary.write_text(render_summary(report))
    return report


def tokens(
    control: int, hpatch: int, output: tuple[int, int] = (100, 100)
) -> tuple[MetricsSnapshot, MetricsSnapshot]:
    """One repetition's two snapshots with these input (and output) tokens."""
    return snapshot(control, output[0]), snapshot(hpatch, output[1])


__all__ = ["task_report", "tokens", "write_request"]
