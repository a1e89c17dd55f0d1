"""Finishing a run: every scheduled attempt's object, the merged results, the report.

``hpbench run finish RUN_DIR`` does all three in one start, after the repetitions
(or an interrupt). Attempt objects are a function of the evidence alone, so they
are built here rather than one Python start per attempt: an attempt that never
ran gets one too, classed infrastructure, so a report never silently counts
fewer attempts than were scheduled.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from hpbench._documents import write_document
from hpbench._jsonio import readable_json, write_atomic
from hpbench.commentary import coverage
from hpbench.credentials import scrub_run
from hpbench.errors import HpbenchError
from hpbench.exactevidence.run import analyze_run
from hpbench.issuereports.run import collect_run
from hpbench.modes import mode_of, scheduled_attempts
from hpbench.plan import RunPlan, load_plan, plan_json
from hpbench.report import build_report, render_summary
from hpbench.report.captures import capture_check
from hpbench.results import AttemptIdentity, build_attempt, merge_results, write_result
from hpbench.rundir import (
    AGENT_WORKSPACE,
    CAPTURE_DIR,
    CODEX_JSONL,
    COMMENTARY_COVERAGE,
    GRADER_SECONDS,
    INFRASTRUCTURE_NOTE,
    UNGRADED,
    Arm,
    RunLayout,
)
from hpbench.task.fingerprint import task_fingerprint
from hpbench.task.manifest import Task, load_manifest

log = structlog.get_logger()
NOT_RUN = "the attempt did not run to completion"


def scheduled(plan: RunPlan) -> list[tuple[int, int, Arm]]:
    """Every scheduled attempt as (repetition, place in its pair, arm), in run order."""
    return scheduled_attempts(mode_of(plan.mode), plan.repetitions)


def _task_of(plan: RunPlan) -> tuple[Task, str | None]:
    """The plan's task, and why its attempts are void when it changed since planning."""
    task = load_manifest(Path(plan.task_directory))
    if task_fingerprint(task) != plan.fingerprint:
        return task, f"task {plan.task} changed since the run was planned"
    return task, None


def write_attempts(run_dir: Path, plan: RunPlan) -> None:
    """``result.json`` for every scheduled attempt of the run."""
    layout = RunLayout(run_dir)
    task, changed = _task_of(plan)
    manifest = task.manifest
    for repetition, place, arm in scheduled(plan):
        directory = layout.attempt(repetition, arm.value)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        note = directory / INFRASTRUCTURE_NOTE
        # grader.seconds (ungraded, for a task without a grader) is the last thing
        # bench-attempt writes: without it the attempt stopped.
        last = GRADER_SECONDS if manifest.grader is not None else UNGRADED
        reasons = [NOT_RUN] if not (directory / last).is_file() else []
        reasons += [changed] if changed else []
        if reasons and not (note.is_file() and note.read_text(encoding="utf-8").strip()):
            write_atomic(note, "".join(f"{reason}\n" for reason in reasons))
        instructions = layout.instructions(arm)
        try:
            digest = hashlib.sha256(instructions.read_bytes()).hexdigest()
        except OSError as exc:
            msg = f"cannot read the {arm.value} arm's instructions {instructions}: {exc}"
            raise HpbenchError(msg) from None
        identity = AttemptIdentity(
            run_id=plan.run_id,
            task_id=plan.task,
            task_fingerprint=plan.fingerprint,
            arm=arm.value,
            repetition=repetition,
            pair_order=place,
            model=plan.model,
            effort=plan.effort,
            instructions_artifact=str(instructions.relative_to(run_dir)),
            instructions_sha256=digest,
        )
        commentary = coverage(
            manifest.commentary.profiles, plan.mode, arm.value, directory / CODEX_JSONL
        )
        if commentary is not None:
            # Its own artifact, apart from the grading and the capture (spec 002).
            write_document(directory / COMMENTARY_COVERAGE, commentary)
        attempt = build_attempt(
            directory,
            identity,
            manifest.paths.allowed,
            AGENT_WORKSPACE,
            required_tests=manifest.grader.required_tests if manifest.grader else {},
            grader_kind=manifest.grader.kind.value if manifest.grader else "none",
            oracle_tier=manifest.oracle_tier.value,
            router_capture=layout.router(repetition, arm.value) / CAPTURE_DIR,
            final_response=manifest.final_response.exact if manifest.final_response else None,
            commentary=commentary,
        )
        write_result(directory, attempt)
        log.info(
            "attempt_result",
            arm=arm.value,
            repetition=repetition,
            passed=attempt.passed,
            failure_class=attempt.failure_class.value,
        )


def write_report(run_dir: Path) -> dict[str, Any]:
    """report.json and summary.md from the merged results; the report document."""
    layout = RunLayout(run_dir)
    report = build_report(run_dir, capture_check(plan_json(load_plan(run_dir))))
    write_atomic(layout.report_json, readable_json(report))
    write_atomic(layout.summary, render_summary(report))
    log.info("report_built", ok=report["outcome"]["ok"], reasons=report["outcome"]["reasons"])
    return report


def finish_run(run_dir: Path, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Attempt objects, ``results.jsonl`` and the report of a planned run, built from
    evidence scrubbed of the run's credential first (``env`` holds it; default: this
    process's environment)."""
    plan = load_plan(run_dir)
    layout = RunLayout(run_dir)
    scrub_run(run_dir, plan, os.environ if env is None else env, layout.credential_exposures)
    write_attempts(run_dir, plan)
    merge_results(run_dir)
    # Exact evidence and issue reports (when on) are read once, after routing stopped,
    # before the report.
    analyze_run(run_dir, plan)
    collect_run(run_dir, plan)
    return write_report(run_dir)
