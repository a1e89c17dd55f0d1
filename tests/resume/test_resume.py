"""Resuming a run: what must match (settings, task, images, instructions), each mismatch
refused by name with nothing moved; which repetitions run again; and the bookkeeping that
keeps every piece of superseded evidence and says which invocation ran what."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import attrs
import pytest

from hpbench.errors import ContractError
from hpbench.plan import load_plan, write_plan
from hpbench.report.summary import invocation_lines
from hpbench.resume import (
    instructions_mismatches,
    invocations,
    observed_mismatches,
    repetitions_to_run,
    settings_mismatches,
    start_invocation,
    task_mismatches,
)
from hpbench.rundir import RunLayout
from hpbench.task.registry import load_task

from ..conftest import HPBENCH, TASKS_DIR, run
from ..evidence import observed

ENV = {"REPETITIONS": "4", "MODEL": "gpt-6-astra"}


def _plan(run_dir: Path, env: dict[str, str] | None = None, tasks: Path = TASKS_DIR):  # type: ignore[no-untyped-def]
    run_dir.mkdir(parents=True, exist_ok=True)
    return write_plan("paired", run_dir, env or ENV, lambda task: load_task(task, tasks))


class TestSettings:
    def test_the_same_settings_match(self, tmp_path: Path) -> None:
        plan = _plan(tmp_path / "run")
        assert [] == settings_mismatches(plan, {**ENV, "MODE": "paired"})

    def test_mode_and_task_default_to_the_runs(self, tmp_path: Path) -> None:
        plan = _plan(tmp_path / "run", {**ENV, "TASK": "lru-recency"})
        assert [] == settings_mismatches(plan, ENV)

    def test_each_difference_is_named(self, tmp_path: Path) -> None:
        plan = _plan(tmp_path / "run")
        findings = settings_mismatches(plan, {"REPETITIONS": "3", "EFFORT": "high"})
        assert [
            "setting effort (EFFORT): the run has 'medium', this invocation 'high'",
            "setting repetitions (REPETITIONS): the run has 4, this invocation 3",
        ] == sorted(f.message for f in findings)

    def test_a_real_key_is_not_the_offline_demo(self, tmp_path: Path) -> None:
        plan = _plan(tmp_path / "run")
        env = {**ENV, "HPBENCH_API_KEY": "sk-test", "PROVIDER": "https://api.example.invalid/v1"}
        env["HPATCH_ROUTER_IMAGE"] = "example/router:1"
        messages = [f.message for f in settings_mismatches(plan, env)]
        assert any(m.startswith("setting offline_demo") for m in messages), messages

    def test_a_bad_setting_is_refused_as_at_a_start(self, tmp_path: Path) -> None:
        plan = _plan(tmp_path / "run")
        with pytest.raises(ContractError):
            settings_mismatches(plan, {"REPETITIONS": "many"})


def test_a_changed_task_is_named(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR / "kv-rangestream", tasks / "kv-rangestream")
    plan = _plan(tmp_path / "run", tasks=tasks)
    assert [] == task_mismatches(plan, load_task("kv-rangestream", tasks))
    prompt = tasks / "kv-rangestream" / "prompt.md"
    prompt.write_text(prompt.read_text() + "\nOne more thing.\n")
    (finding,) = task_mismatches(plan, load_task("kv-rangestream", tasks))
    assert finding.message.startswith("task fingerprint: the run has 'sha256:")


class TestObserved:
    def test_the_same_images_match(self) -> None:
        assert [] == observed_mismatches(
            observed(("control", "hpatch")), observed(("control", "hpatch"))
        )

    def test_another_router_and_agent_image(self) -> None:
        before = observed(("control", "hpatch"))
        routers = (
            before.routers[0],
            attrs.evolve(before.routers[1], image_id="sha256:" + "e" * 64),
        )
        now = attrs.evolve(before, routers=routers, agent_image_id="sha256:" + "f" * 64)
        messages = [f.message for f in observed_mismatches(before, now)]
        assert [m.split(":")[0] for m in messages] == ["hpatch router image id", "agent image id"]

    def test_another_codex_and_go(self) -> None:
        before = attrs.evolve(observed(("control",)), go_versions={"agent": "go1.24.11"})
        now = attrs.evolve(
            before, codex_version="codex-cli 0.170.0", go_versions={"agent": "go1.25.0"}
        )
        messages = [f.message.split(":")[0] for f in observed_mismatches(before, now)]
        assert ["codex version", "go versions"] == messages

    def test_what_could_not_be_had_now_is_refused(self) -> None:
        now = attrs.evolve(observed(("control",)), missing=("agent image id: not recorded",))
        (finding,) = observed_mismatches(observed(("control",)), now)
        assert "provenance now: agent image id: not recorded" == finding.message

    def test_a_run_without_provenance_is_refused(self) -> None:
        (finding,) = observed_mismatches(None, observed(("control",)))
        assert "recorded no provenance" in finding.message


def test_instructions_are_compared_key_by_key(tmp_path: Path) -> None:
    recorded, now = tmp_path / "a", tmp_path / "b"
    for directory, guidance in ((recorded, "1" * 64), (now, "2" * 64)):
        directory.mkdir()
        document = {"guidance_sha256": guidance, "model": "gpt-6-astra"}
        (directory / "hashes.json").write_text(json.dumps(document))
    (finding,) = instructions_mismatches(recorded, now)
    assert finding.message.startswith("instructions guidance_sha256: the run has '1111")
    shutil.copy(recorded / "hashes.json", now / "hashes.json")
    assert [] == instructions_mismatches(recorded, now)


def _attempt(run_dir: Path, repetition: int, arm: str, *, ended: bool = True, **files: str) -> Path:
    directory = RunLayout(run_dir).attempt(repetition, arm)
    directory.mkdir(parents=True)
    if ended:
        (directory / "grader.seconds").write_text("1.0\n")
    for name, text in files.items():
        (directory / name.replace("_", ".", 1)).write_text(text)
    return directory


class TestWhatRunsAgain:
    def _run(self, tmp_path: Path) -> Path:
        run_dir = tmp_path / "run"
        _plan(run_dir)
        for arm in ("control", "hpatch"):
            _attempt(run_dir, 1, arm)  # stands
            _attempt(run_dir, 4, arm, result_json=json.dumps({"failure_class": "codex-failed"}))
        _attempt(run_dir, 2, "control")
        _attempt(run_dir, 2, "hpatch", ended=False)  # stopped mid-attempt
        _attempt(run_dir, 3, "control", infrastructure_txt="the grader could not run\n")
        _attempt(run_dir, 3, "hpatch")
        return run_dir

    def test_stopped_and_void_repetitions_run_again_failures_stand(self, tmp_path: Path) -> None:
        run_dir = self._run(tmp_path)
        assert [2, 3] == repetitions_to_run(run_dir, load_plan(run_dir))

    def test_a_provider_failure_voids_its_repetition(self, tmp_path: Path) -> None:
        run_dir = self._run(tmp_path)
        result = RunLayout(run_dir).attempt(1, "hpatch") / "result.json"
        result.write_text(json.dumps({"failure_class": "infrastructure"}))
        assert [1, 2, 3] == repetitions_to_run(run_dir, load_plan(run_dir))

    def test_evidence_is_moved_never_deleted_and_the_invocation_recorded(
        self, tmp_path: Path
    ) -> None:
        run_dir = self._run(tmp_path)
        layout = RunLayout(run_dir)
        layout.router(2, "hpatch").mkdir(parents=True)
        (layout.router(2, "hpatch") / "metrics.json").write_text("{}")
        layout.repetition(2).mkdir(parents=True)
        (layout.repetition(2) / "provider.jsonl").write_text("{}\n")
        first = start_invocation(run_dir, [2, 3])
        assert (2, (2, 3)) == (first.invocation, first.repetitions)
        moved = layout.superseded(2)
        assert (moved / "attempts" / "2-control" / "grader.seconds").is_file()
        assert (moved / "attempts" / "3-control" / "infrastructure.txt").is_file()
        assert (moved / "routers" / "2-hpatch" / "metrics.json").is_file()
        assert (moved / "reps" / "2" / "provider.jsonl").is_file()
        assert not layout.attempt(2, "control").exists()
        assert layout.attempt(1, "control").is_dir()
        second = start_invocation(run_dir, [3])
        assert [1, 2, 3] == [i.invocation for i in invocations(run_dir)]
        assert ((1, 2, 3, 4), (2, 3), (3,)) == tuple(i.repetitions for i in invocations(run_dir))
        assert 3 == second.invocation

    def test_the_record_is_read_strictly(self, tmp_path: Path) -> None:
        run_dir = self._run(tmp_path)
        RunLayout(run_dir).invocations.write_text(
            json.dumps({"invocation": 1, "repetitions": [1], "superseded": [], "by": "me"}) + "\n"
        )
        with pytest.raises(ContractError) as caught:
            invocations(run_dir)
        assert "by" in str(caught.value.findings[0])


def test_the_summary_says_which_invocation_ran_what(tmp_path: Path) -> None:
    lines = invocation_lines(
        [
            {"invocation": 1, "repetitions": [1, 2, 3, 4], "superseded": []},
            {"invocation": 2, "repetitions": [2, 3], "superseded": [2, 3]},
        ]
    )
    text = "\n".join(lines)
    assert "- invocation 1 ran repetition(s) 1, 2, 3, 4;" in text
    again = "- invocation 2 ran repetition(s) 2, 3 again (the evidence it replaced is in "
    assert again + "superseded/2/)." in text
    assert [] == invocation_lines(None)


def test_check_refuses_a_run_that_never_reached_its_repetitions(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _plan(run_dir)
    done = run([str(HPBENCH), "resume", "check", str(run_dir)], ENV)
    assert 1 == done.returncode
    assert "stopped before its task was qualified: start a new run" in done.stderr
