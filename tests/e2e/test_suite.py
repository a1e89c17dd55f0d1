"""A suite end to end: the offline paired demo over the first two bundled tasks that ship
replay scripts, one repetition each, through `TASK=a,b benchmarks/bench.sh paired`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hpbench.rundir import RunLayout, SuiteLayout
from hpbench.task.manifest import SourceKind
from hpbench.task.registry import load_task, task_ids

from .conftest import REPO_ROOT, leftovers, results, run_bench

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]

TASKS_DIR = REPO_ROOT / "tasks"
# The scripts the offline demo's plan takes from a task (hpbench.plan: one per fresh arm).
REPLAY_SCRIPTS = ("control.json", "hpatch.json")


def offline_tasks() -> list[str]:
    """Bundled tasks with replay scripts for both paired arms, in id order."""
    found = []
    for task_id in task_ids(TASKS_DIR):
        task = load_task(task_id, TASKS_DIR)
        replay = TASKS_DIR / task_id / "replay"
        if task.manifest.source.kind is SourceKind.BUNDLED and all(
            (replay / name).is_file() for name in REPLAY_SCRIPTS
        ):
            found.append(task_id)
    return found


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def test_offline_suite_of_two_tasks(runs_dir: Path) -> None:
    """Both tasks run as complete ordinary runs in tasks/<id>; suite.json's rows are their
    reports' figures, the pooled counts are the sums of the tasks', summary.md has the
    per-task table, the pooled McNemar line and links; exit 0; nothing left in Docker."""
    tasks = offline_tasks()
    if len(tasks) < 2:
        pytest.skip(
            f"a suite needs two bundled tasks with replay scripts; tasks/ has {len(tasks)}: "
            f"{', '.join(tasks) or 'none'}"
        )
    chosen = tasks[:2]
    result = run_bench(runs_dir, "paired", TASK=",".join(chosen), REPETITIONS="1")
    match = re.search(r"suite directory: (\S+)", result.stderr)
    assert match, result.stderr[-3000:]
    assert 0 == result.returncode, result.stderr[-4000:]
    layout = SuiteLayout(Path(match.group(1)))
    assert 0o700 == layout.root.stat().st_mode & 0o777
    assert chosen == layout.tasks_list.read_text().split()
    assert [f"{task}\t0" for task in chosen] == layout.exits.read_text().splitlines()

    suite = _json(layout.suite_json)
    assert suite["outcome"] == {"ok": True, "reasons": []}
    assert suite["offline_demo"] is True
    rows = {row["task"]: row for row in suite["tasks"]}
    assert chosen == [row["task"] for row in suite["tasks"]]
    for task in chosen:
        run_dir = layout.task_run(task)
        run = RunLayout(run_dir)
        # A complete ordinary run: its plan, both attempts, merged results, report, summary.
        for path in (run.run_json, run.results, run.report_json, run.summary):
            assert path.is_file(), path
        assert task == _json(run.run_json)["task"]
        assert [(1, "control"), (1, "hpatch")] == sorted(
            (int(str(a["repetition"])), str(a["arm"])) for a in results(run_dir)
        )
        assert [] == leftovers(run_dir)
        report = _json(run.report_json)
        assert report["outcome"]["ok"], report["outcome"]
        row = rows[task]
        assert ("reported", 0, f"tasks/{task}/summary.md") == (
            row["status"],
            row["exit_status"],
            row["summary"],
        )
        figures = row["figures"]
        for arm in ("control", "hpatch"):
            stats = report["correctness"]["arms"][arm]
            tally = figures["arms"][arm]
            assert (stats["attempts"], stats["passed"]) == (tally["attempts"], tally["passed"])
            assert (stats["pass_rate"]["trials"], stats["pass_rate"]["successes"]) == (
                tally["compared"],
                tally["compared_passed"],
            )
        usage = report["usage"]
        for label, figure in figures["tokens"].items():
            assert usage["deltas"][label] == figure["delta"]
            assert usage["arms"]["control"][label] == figure["baseline"]
            assert usage["arms"]["hpatch"][label] == figure["treatment"]

    pooled = suite["pooled"]
    strata = {s["task"]: s for s in pooled["strata"]}
    assert sum(rows[t]["figures"]["compared_pairs"] for t in chosen) == pooled["compared_pairs"]
    for arm in ("control", "hpatch"):
        arms = [rows[t]["figures"]["arms"][arm] for t in chosen]
        assert sum(a["compared"] for a in arms) == pooled["arms"][arm]["compared"]
        assert sum(a["compared_passed"] for a in arms) == pooled["arms"][arm]["passed"]
    for key in ("baseline_only", "treatment_only"):
        per_task = [rows[t]["figures"]["discordance"][key] for t in chosen]
        assert per_task == [strata[t][key] for t in chosen]
        assert sum(per_task) == pooled["mcnemar"][key]

    summary = layout.summary.read_text()
    assert "**Offline demo.**" in summary
    assert "| task | run | repetitions |" in summary
    for task in chosen:
        assert f"| {task} | exit 0 | 1 | 1 / 1 | 1 / 1 |" in summary
        assert f"[tasks/{task}/summary.md](tasks/{task}/summary.md)" in summary
    assert "**Pooled McNemar**" in summary
    assert "| pooled (sum) | 2 |" in summary
