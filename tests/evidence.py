"""Attempt evidence shared by the results and report tests.

An attempt directory as the shell leaves it (Codex's stream and exit, changed paths,
the diff, the grading), the attempt's identity, attempt objects built through the
attempt model, and the scripted provider's records that prove an arm's instructions
were delivered.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench.codex.events import Usage
from hpbench.instructions.derive import delivered_digest
from hpbench.plan import GraderPlan, RunPlan, write_run_json
from hpbench.provenance import GO_IMAGES, Observed, RouterImage
from hpbench.results import Attempt, AttemptIdentity, FailureClass
from hpbench.results.gotest import HiddenTestCounts
from hpbench.results.model import ATTEMPT_SCHEMA, CodexSection, Elapsed, GraderSection
from hpbench.rundir import (
    PROVENANCE_AGENT_IMAGE_ID,
    PROVENANCE_CODEX_VERSION,
    PROVENANCE_GO_VERSION,
    PROVENANCE_IDENTITY,
    PROVENANCE_IMAGE_ID,
    RunLayout,
)

MODEL = "gpt-6-astra"
ANSWER = "kv/rangestream.go"

# A clean Codex stream: it edits the answer file, says so and completes its turn.
GOOD_JSONL: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": "t-1"},
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {
            "id": "item_0",
            "type": "file_change",
            "changes": [{"path": f"/home/agent/ws/{ANSWER}", "kind": "add"}],
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Done."}},
    {
        "type": "turn.completed",
        "usage": {
            "input_tokens": 300,
            "cached_input_tokens": 30,
            "cache_write_input_tokens": 0,
            "output_tokens": 60,
            "reasoning_output_tokens": 15,
        },
    },
]


def identity(arm: str = "control", repetition: int = 1, order: int = 1) -> AttemptIdentity:
    """An attempt's place in a run, with its arm's instructions artefact."""
    return AttemptIdentity(
        run_id="run-1",
        task_id="kv-rangestream",
        task_fingerprint="sha256:abc",
        arm=arm,
        repetition=repetition,
        pair_order=order,
        model=MODEL,
        effort="medium",
        instructions_artifact=f"instructions/{arm}.md",
        instructions_sha256="0" * 64,
    )


def write_lines(path: Path, events: Sequence[object]) -> None:
    """JSON lines, one event each."""
    path.write_text("".join(json.dumps(event) + "\n" for event in events))


def write_evidence(
    directory: Path,
    *,
    jsonl: Sequence[object],
    exit_code: int = 0,
    changed: Sequence[str] = (ANSWER,),
    grader: Sequence[object] | None = None,
    grader_exit: int | None = 0,
    agent_seconds: str | None = None,
    grader_seconds: str | None = None,
) -> Path:
    """An attempt directory as bench-attempt leaves it; ``grader_exit=None`` leaves no
    grading at all (the grader never ran)."""
    directory.mkdir(parents=True, exist_ok=True)
    write_lines(directory / "codex.jsonl", jsonl)
    (directory / "codex.exit").write_text(f"{exit_code}\n")
    if agent_seconds is not None:
        (directory / "agent.seconds").write_text(f"{agent_seconds}\n")
    (directory / "changed-paths.z").write_bytes(b"".join(p.encode() + b"\0" for p in changed))
    (directory / "diff.patch").write_text(f"diff --git a/{ANSWER} b/{ANSWER}\n")
    if grader_exit is not None:
        (directory / "grader").mkdir()
        write_lines(directory / "grader" / "grader.stdout", grader or [])
        (directory / "grader" / "grader.exit").write_text(f"{grader_exit}\n")
        if grader_seconds is not None:
            (directory / "grader.seconds").write_text(f"{grader_seconds}\n")
    return directory


def attempt(arm: str, repetition: int, order: int, passed: bool, failure: str = "none") -> Attempt:
    """An attempt object, built through the model, that passed or failed as ``failure``."""
    failure_class = FailureClass.NONE if passed else FailureClass(failure)
    return Attempt(
        schema=ATTEMPT_SCHEMA,
        **attrs.asdict(identity(arm, repetition, order)),
        workspace_root="/workspace",
        elapsed=Elapsed(agent_seconds=10.5),
        codex=CodexSection(
            exit_code=0,
            timed_out=False,
            jsonl="codex.jsonl",
            jsonl_findings=(),
            outcome="completed",
            item_counts={"agent_message": 1},
            terminal_error=None,
            final_message_present=True,
            usage=Usage(300, 30, 0, 60, 15),
        ),
        changed_paths=(ANSWER,),
        unauthorized_paths=(),
        diff=None,
        grader=GraderSection(
            ran=True,
            exit_code=0 if passed else 1,
            container_outcome="exited",
            timed_out=False,
            passed=passed,
            seconds=1.0,
            tests=HiddenTestCounts(passed=1 if passed else 0, failed=0 if passed else 1, skipped=0),
            failed_tests=() if passed else ("TestA",),
            build_failed=False,
            hidden_tests=None,
        ),
        agent_limits=None,
        agent_limits_met=(),
        agent_limits_findings=(),
        infrastructure_error=None,
        failure_attribution=None,
        oracle_tier="correctness",
        correctness=passed,
        passed=passed,
        failure_class=failure_class,
        final_response=None,
        commentary=None,
    )


def deliver(
    run: Path, repetition: int, arm: str, artifact: str, *, requests: int = 3, wrong: int = 0
) -> None:
    """Write the arm's instructions file and the scripted provider's records of its requests
    (``wrong`` of them carrying other instructions)."""
    instructions = run / artifact
    instructions.parent.mkdir(parents=True, exist_ok=True)
    instructions.write_text(f"instructions of {arm}\n")
    digest = delivered_digest(instructions)
    records = run / "reps" / str(repetition) / "provider.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    with records.open("a") as stream:
        for index in range(requests):
            sha = "0" * 64 if index < wrong else digest
            stream.write(
                json.dumps({"script": arm, "request": {"first_developer_sha256": sha}}) + "\n"
            )


def write_plan(
    run: Path,
    *,
    arms: Sequence[str] = ("control", "hpatch"),
    repetitions: int = 1,
    offline: bool = True,
    provenance: bool = True,
    **overrides: Any,
) -> RunPlan:
    """A run's run.json built through the plan model (a stand-in task's facts), with
    complete observed provenance unless ``provenance`` is false."""
    plan = RunPlan(
        mode={
            ("control",): "control-only",
            ("hpatch",): "hpatch-diagnostic",
            ("native", "ctp"): "ctp-only",
            ("hpatch", "mentor"): "mentor-handoff",
        }.get(tuple(arms), "paired"),
        arms=tuple(arms),
        task="kv-rangestream",
        model=MODEL,
        effort="medium",
        repetitions=repetitions,
        agent_timeout_seconds=1800,
        provider="replay" if offline else "https://responses.example/v1",
        offline_demo=offline,
        enforce_no_edit_loops=True,
        control_router_image="hpbench-router:local" if offline else "example/router:1",
        hpatch_router_image="hpbench-router:local" if offline else "example/router:1",
        codex_version="0.169.0",
        run_id=run.name,
        reference_router_image="hpbench-router:local",
        fingerprint="sha256:abc",
        task_directory="/tasks/kv-rangestream",
        prompt_file="/tasks/kv-rangestream/prompt.md",
        base_revision="b" * 40,
        oracle_revision="c" * 40,
        go_version="1.24.11",
        grader=GraderPlan(
            kind="go-test",
            command=("go", "test", "-json", "./..."),
            timeout_seconds=300,
            base_discriminator="undefined",
            files=("kv/hidden_test.go",),
            preload_go_qualification_grader=False,
        ),
        hpbench_version="0.1.0",
        hpbench_revision="d" * 40,
        # The captures these helpers make are native (the fixtures' treatment protocol).
        treatment_model_protocol="native",
    )
    if provenance:
        plan = attrs.evolve(plan, observed=observed(plan.arms))
    plan = attrs.evolve(plan, **overrides)
    write_run_json(RunLayout(run), plan)
    return plan


IMAGE_ID = "sha256:" + "9f" * 32
REFERENCE_IDENTITY = {"name": "hpbench-reference-router", "version": "0.1.0"}


def observed(
    arms: Sequence[str], identity: dict[str, str] | None = None, codex: str = "0.169.0"
) -> Observed:
    """Complete provenance, as ``hpbench run provenance`` reads it before a run."""
    said = identity or REFERENCE_IDENTITY
    return Observed(
        routers=tuple(
            RouterImage(arm, "hpbench-router:local", IMAGE_ID, said["name"], said["version"])
            for arm in arms
        ),
        codex_version=f"codex-cli {codex}",
        agent_image_id=IMAGE_ID,
        missing=(),
    )


def write_provenance(
    run: Path,
    arms: Sequence[str],
    identity: str | None = None,
    codex: str = "0.169.0",
    go: str = "1.24.11",
) -> None:
    """provenance/ as bench-provenance writes it after the images are built."""
    layout = RunLayout(run)
    layout.provenance.mkdir(parents=True, exist_ok=True)
    line = identity if identity is not None else json.dumps(REFERENCE_IDENTITY)
    for arm in arms:
        layout.router_fact(arm, PROVENANCE_IMAGE_ID).write_text(IMAGE_ID + "\n")
        layout.router_fact(arm, PROVENANCE_IDENTITY).write_text(line + "\n")
    (layout.provenance / PROVENANCE_AGENT_IMAGE_ID).write_text(IMAGE_ID + "\n")
    (layout.provenance / PROVENANCE_CODEX_VERSION).write_text(f"codex-cli {codex}\n")
    for image in GO_IMAGES:
        (layout.provenance / f"{image}.{PROVENANCE_GO_VERSION}").write_text(f"go{go}\n")
