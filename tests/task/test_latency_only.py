"""A latency-only task (spec 000) has no hidden grader: it is planned, run and finished
without one, and nothing may turn that absence into a verdict.

A correctness task without a grader would pass on an exit status; a latency-only task with
one would compute a verdict only to leave it out. Both manifests are refused. An attempt
of a latency-only task that never reached its end (no ``ungraded`` marker) is voided as
any unfinished attempt is, not passed for want of a grade.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from hpbench.errors import ContractError
from hpbench.finish import NOT_RUN, write_attempts
from hpbench.plan import write_plan
from hpbench.rundir import INFRASTRUCTURE_NOTE, UNGRADED, Arm, RunLayout
from hpbench.task.manifest import OracleTier, load_manifest
from hpbench.task.registry import load_task

from ..conftest import HPBENCH, TASKS_DIR, run
from .conftest import dump_toml

TASK = "service-logs-digest"


def test_the_bundled_latency_only_task_has_no_grader() -> None:
    task = load_manifest(TASKS_DIR / TASK)
    assert OracleTier.LATENCY_ONLY is task.manifest.oracle_tier
    assert task.manifest.grader is None
    assert [] == task.grader_file_paths()


def _copy(tmp_path: Path, task: str) -> Path:
    target = tmp_path / "tasks" / task
    shutil.copytree(TASKS_DIR / task, target)
    return target


def _refusals(task_dir: Path) -> dict[str, str]:
    with pytest.raises(ContractError) as caught:
        load_manifest(task_dir)
    return {f.field or "": f.message for f in caught.value.findings}


def test_a_correctness_task_without_a_grader_is_refused(tmp_path: Path) -> None:
    task_dir = _copy(tmp_path, "kv-rangestream")
    data = tomllib.loads((task_dir / "task.toml").read_text())
    del data["grader"]
    del data["gating"]
    (task_dir / "task.toml").write_text(dump_toml(data))
    assert "a correctness task needs a hidden grader" in _refusals(task_dir)["$.grader"]


def test_a_latency_only_task_with_a_grader_is_refused(tmp_path: Path) -> None:
    task_dir = _copy(tmp_path, TASK)
    grader = (TASKS_DIR / "kv-rangestream" / "task.toml").read_text().split("[grader]", 1)[1]
    grader = grader.split("[runtime]", 1)[0]
    manifest = task_dir / "task.toml"
    manifest.write_text(manifest.read_text() + "\n[grader]" + grader)
    (task_dir / "hidden" / "kv").mkdir(parents=True)
    shutil.copy(
        TASKS_DIR / "kv-rangestream" / "hidden" / "kv" / "rangestream_hidden_test.go",
        task_dir / "hidden" / "kv",
    )
    assert "no correctness claim" in _refusals(task_dir)["$.grader"]


def test_the_plan_says_there_is_no_grader(tmp_path: Path) -> None:
    """run.json's grader is null and the spec the shell reads says kind none, with no
    command: bench-prepare skips qualification and bench-attempt the grading."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_plan("paired", run_dir, {"TASK": TASK}, lambda task: load_task(task, TASKS_DIR))
    assert json.loads((run_dir / "run.json").read_text())["grader"] is None
    spec = RunLayout(run_dir).grader_spec
    assert "none\n" == (spec / "kind").read_text()
    assert "" == (spec / "command").read_text()
    assert "" == (spec / "hidden-files").read_text()


def test_grader_commands_refuse_the_task(tmp_path: Path) -> None:
    grading = tmp_path / "grading"
    grading.mkdir()
    (grading / "grader.exit").write_text("0\n")
    done = run([str(HPBENCH), "grader", "verdict", str(grading), "--task", TASK])
    assert 0 != done.returncode
    assert "latency-only: it has no hidden grader, so no verdict" in done.stderr
    assert not (grading / "verdict.json").exists()


def test_an_attempt_without_its_end_marker_is_not_run(tmp_path: Path) -> None:
    """No ``ungraded`` marker: the attempt stopped before its end, whatever else is there."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    plan = write_plan("paired", run_dir, {"TASK": TASK}, lambda task: load_task(task, TASKS_DIR))
    layout = RunLayout(run_dir)
    layout.instructions_dir.mkdir()
    for arm in (Arm.CONTROL, Arm.HPATCH):
        layout.instructions(arm).write_text("instructions\n")
    finished = layout.attempt(1, "control")
    finished.mkdir(parents=True)
    (finished / UNGRADED).write_text("")
    stopped = layout.attempt(1, "hpatch")
    stopped.mkdir(parents=True)
    write_attempts(run_dir, plan)
    assert not (finished / INFRASTRUCTURE_NOTE).exists()
    assert NOT_RUN in (stopped / INFRASTRUCTURE_NOTE).read_text()
