"""Gating tests per oracle (spec 000, 003): every correctness task's grader, through the real
grading path (bench-grade in the grader container, then the verdict a run would give),
passes the oracle, fails a no-op agent (the untouched base) for the reason the manifest
names, and fails a blind agent (the task's plausible but wrong edit, ``[gating] blind``).

A grader that passes the blind edit checks too little; one that fails the oracle checks
the wrong thing; one that passes the base checks nothing. Any of them makes the task's
pass rate meaningless, so each bundled correctness task must declare its blind edit.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hpbench.task.manifest import OracleTier, SourceKind, Task
from hpbench.task.registry import load_task, task_ids

from ..conftest import HPBENCH, TASKS_DIR, run, task_snapshots
from ..grading.conftest import Graded, grade


def _bundled_tasks() -> list[Task]:
    tasks = [load_task(task_id, TASKS_DIR) for task_id in task_ids(TASKS_DIR)]
    return [t for t in tasks if t.manifest.source.kind is SourceKind.BUNDLED]


def _gated() -> list[Task]:
    return [t for t in _bundled_tasks() if t.manifest.oracle_tier is OracleTier.CORRECTNESS]


def test_every_bundled_correctness_task_has_a_blind_edit() -> None:
    """A task added without its blind edit would skip the gating tests silently."""
    missing = [t.id for t in _gated() if t.manifest.gating is None]
    assert [] == missing, "bundled correctness tasks without [gating] blind"
    assert len(_gated()) >= 1


def _verdict(task: Task, graded: Graded) -> tuple[int, str]:
    """The verdict a run gives the grading: ``hpbench grader verdict``'s status (0 passed)
    and what it printed."""
    assert 0 == graded.returncode, graded.stderr
    judged = run([str(HPBENCH), "grader", "verdict", str(graded.out), "--task", task.id])
    assert judged.returncode in (0, 1), judged.stderr
    return judged.returncode, judged.stdout + judged.stderr


@pytest.mark.docker
@pytest.mark.usefixtures("images")
@pytest.mark.parametrize("task", _gated(), ids=lambda t: t.id)
def test_oracle_passes_noop_and_blind_fail(task: Task, tmp_path: Path) -> None:
    assert task.manifest.gating is not None
    made = task_snapshots(tmp_path, task.id)
    base, oracle = made["base"], made["oracle"]
    blind = tmp_path / "blind"
    shutil.copytree(base, blind, symlinks=True)
    shutil.copytree(task.directory / task.manifest.gating.blind, blind, dirs_exist_ok=True)

    status, said = _verdict(task, grade(oracle, tmp_path / "grade-oracle", task=task.id))
    assert 0 == status, f"the oracle must pass: {said}"

    noop = grade(base, tmp_path / "grade-base", task=task.id)
    status, said = _verdict(task, noop)
    assert 1 == status, f"a no-op agent must fail: {said}"
    assert task.manifest.grader.base_discriminator in noop.stdout + noop.grader_stderr

    graded_blind = grade(blind, tmp_path / "grade-blind", task=task.id)
    status, said = _verdict(task, graded_blind)
    assert 1 == status, f"the blind edit must fail: {said}"
    # It failed on a test, not on the discriminator's reason: the edit compiles and runs.
    assert task.manifest.grader.base_discriminator not in graded_blind.stdout
