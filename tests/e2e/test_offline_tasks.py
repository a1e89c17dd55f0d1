"""The offline demo passes with every bundled task that ships replay scripts
(``TASK=<task> benchmarks/bench.sh paired``), each graded by its own grader kind, and a
latency-only task is reported as such: never graded, never a correctness claim.

kv-rangestream, the default task, has its own runs in test_bench_runs.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench.task.manifest import OracleTier, SourceKind
from hpbench.task.registry import load_task, task_ids

from ..conftest import TASKS_DIR
from .conftest import bench, leftovers, results

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]


def _offline_tasks() -> list[str]:
    ids = []
    for task_id in task_ids(TASKS_DIR):
        task = load_task(task_id, TASKS_DIR)
        offline = task.manifest.source.kind is SourceKind.BUNDLED
        if offline and (task.directory / "replay").is_dir() and task_id != "kv-rangestream":
            ids.append(task_id)
    return ids


def test_the_suite_has_offline_tasks_of_every_tier() -> None:
    """At least four more offline tasks than the default one, one of them latency-only."""
    tiers = {load_task(t, TASKS_DIR).manifest.oracle_tier for t in _offline_tasks()}
    assert len(_offline_tasks()) >= 4
    assert {OracleTier.CORRECTNESS, OracleTier.LATENCY_ONLY} <= tiers


@pytest.mark.parametrize("task_id", _offline_tasks())
def test_the_demo_passes(task_id: str, runs_dir: Path) -> None:
    result, run_dir = bench("paired", runs_dir, TASK=task_id, REPETITIONS="1")
    assert 0 == result.returncode, result.stderr[-4000:]
    assert "every attempt passed and all evidence validated" in result.stderr
    assert [] == leftovers(run_dir)
    task = load_task(task_id, TASKS_DIR)
    attempts = results(run_dir)
    assert {"control", "hpatch"} == {a["arm"] for a in attempts}
    summary = (run_dir / "summary.md").read_text()
    assert f"# hpbench: {task_id} (paired)" in summary
    if task.manifest.oracle_tier is OracleTier.LATENCY_ONLY:
        assert "Latency-only task: no correctness claim is made" in summary
        for attempt in attempts:
            assert attempt["passed"] is True
            assert attempt["correctness"] is None
            assert attempt["grader"]["ran"] is False
        arm_dirs = [run_dir / "attempts" / f"1-{arm}" for arm in ("control", "hpatch")]
        assert all((d / "ungraded").is_file() for d in arm_dirs)
        assert not any((d / "grader").exists() for d in arm_dirs)
        assert not (run_dir / "qualification").exists()
    else:
        grader = task.manifest.grader
        assert grader is not None
        required = sum(len(tests) for tests in grader.required_tests.values())
        for attempt in attempts:
            verdict = attempt["grader"]["hidden_tests"]
            assert ("passed", required) == (verdict["status"], len(verdict["passed"]))
        qualified = json.loads((run_dir / "qualification" / "oracle" / "verdict.json").read_text())
        assert "passed" == qualified["status"]
