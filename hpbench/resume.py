"""Resuming a stopped or partly failed run (``benchmarks/bench.sh resume RUN_DIR``).

A resumed run keeps what it measured only when nothing it measured with has changed: the
invocation's settings (read from its environment as any run's are, with the run's MODE
and TASK when unset) must equal run.json's, the task's fingerprint must be the same, and,
once the images are built, the router, agent and Go facts provenance records and the
instructions derived again must equal the first invocation's. Any difference refuses the
resume, naming it; nothing is moved or run.

What runs again is whole repetitions: a repetition's topology, its isolation proofs, its
provider records and its attempts are one unit of evidence, and the pair it makes is only
a pair when both arms ran under the same conditions. A repetition is kept when every
attempt it scheduled ended (its end marker is there) and none is void for infrastructure
(a harness or provider failure, not the arm's). A failed attempt is data and is kept. The
evidence of a repetition that runs again is moved, never deleted, to
``superseded/<invocation>/``; ``invocations.jsonl`` records each invocation's repetitions,
and the report says which came from which.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from hpbench._convert import make_converter, structure
from hpbench._jsonio import write_atomic
from hpbench.errors import ContractError, HpbenchError
from hpbench.findings import Finding
from hpbench.modes import mode_of, scheduled_attempts
from hpbench.plan import RunPlan, load_plan
from hpbench.provenance import Observed
from hpbench.rundir import (
    GRADER_SECONDS,
    INFRASTRUCTURE_NOTE,
    INSTRUCTIONS_HASHES,
    RESULT_JSON,
    UNGRADED,
    RunLayout,
)
from hpbench.settings import Settings, settings_from_env
from hpbench.task.fingerprint import task_fingerprint
from hpbench.task.manifest import Task

# Where a setting comes from, to name it in a refusal; the rest are named by field.
_VARIABLES = {
    "mode": "MODE",
    "task": "TASK",
    "model": "MODEL",
    "effort": "EFFORT",
    "repetitions": "REPETITIONS",
    "agent_timeout_seconds": "AGENT_TIMEOUT",
    "provider": "PROVIDER",
    "offline_demo": "HPBENCH_API_KEY/OPENAI_API_KEY/CODEX_AUTH_FILE (offline demo or not)",
    "enforce_no_edit_loops": "BENCHMARK_ENFORCE_NO_EDIT_LOOPS",
    "control_router_image": "CONTROL_ROUTER_IMAGE",
    "hpatch_router_image": "HPATCH_ROUTER_IMAGE",
    "treatment_model_protocol": "TREATMENT_MODEL_PROTOCOL",
    "mentor_model": "MENTOR_MODEL",
    "baseline": "BASELINE",
    "exact_evidence": "HPATCH_EXACT_EVIDENCE",
    "report_issue": "HPATCH_REPORT_ISSUE",
    "credential": "the credential's variable",
    "auth_file": "CODEX_AUTH_FILE",
    "provider_ca_bundle": "PROVIDER_CA_BUNDLE",
    "agent_memory": "AGENT_MEMORY",
    "agent_cpus": "AGENT_CPUS",
    "agent_pids": "AGENT_PIDS",
    "agent_runtime": "AGENT_RUNTIME",
    "grader_memory": "GRADER_MEMORY",
    "grader_cpus": "GRADER_CPUS",
    "grader_pids": "GRADER_PIDS",
    "codex_version": "contrib/codex/pins.toml codex_version",
}
CODE = "resume.mismatch"
_CONVERTER = make_converter()
INVOCATIONS_CODE = "resume.invocations"


@attrs.frozen
class Invocation:
    """One invocation of a run: the first, or a resume (one line of invocations.jsonl)."""

    invocation: int
    repetitions: tuple[int, ...]
    superseded: tuple[int, ...] = ()


def _mismatch(what: str, recorded: object, now: object) -> Finding:
    return Finding(CODE, f"{what}: the run has {recorded!r}, this invocation {now!r}")


def settings_mismatches(plan: RunPlan, env: Mapping[str, str]) -> list[Finding]:
    """Every setting of this invocation (its environment, the run's MODE and TASK when
    unset) that differs from the run's; a setting the environment gets wrong is refused
    as it would be at the start of a run.

    Raises:
        ContractError: a setting of the environment is not valid at all.
    """
    env = {**env, "TASK": env.get("TASK") or plan.task}
    now = settings_from_env(env.get("MODE") or plan.mode, env)
    findings = []
    for field in attrs.fields(Settings):
        recorded, current = getattr(plan, field.name), getattr(now, field.name)
        if recorded != current:
            what = f"setting {field.name} ({_VARIABLES.get(field.name, field.name)})"
            findings.append(_mismatch(what, recorded, current))
    return findings


def task_mismatches(plan: RunPlan, task: Task) -> list[Finding]:
    """The task's content, as its fingerprint covers it, must be the run's."""
    now = task_fingerprint(task)
    return [] if now == plan.fingerprint else [_mismatch("task fingerprint", plan.fingerprint, now)]


def observed_mismatches(recorded: Observed | None, now: Observed) -> list[Finding]:
    """What the engine and the images say now against what they said for the run: every
    router image id and identity, the agent image id, Codex's version and Go's."""
    if recorded is None:
        return [Finding(CODE, "the run recorded no provenance: nothing to hold a resume to")]
    findings = [Finding(CODE, f"provenance now: {line}") for line in now.missing]
    before = {r.arm: r for r in recorded.routers}
    for router in now.routers:
        old = before.get(router.arm)
        for name in ("image", "image_id", "name", "version"):
            was = None if old is None else getattr(old, name)
            if was != getattr(router, name):
                what = f"{router.arm} router {name.replace('_', ' ')}"
                findings.append(_mismatch(what, was, getattr(router, name)))
    for name in ("agent_image_id", "codex_version", "go_versions"):
        if getattr(recorded, name) != getattr(now, name):
            what = name.replace("_", " ")
            findings.append(_mismatch(what, getattr(recorded, name), getattr(now, name)))
    return findings


def instructions_mismatches(recorded: Path, now: Path) -> list[Finding]:
    """The instructions derived again (``now``'s hashes.json) must be the run's: the same
    stock text, guidance, rules, pins and derived files, byte for byte."""
    documents = []
    for path in (recorded / INSTRUCTIONS_HASHES, now / INSTRUCTIONS_HASHES):
        try:
            documents.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise HpbenchError(f"{path}: cannot be read: {exc}") from None
    old, new = documents
    return [
        _mismatch(f"instructions {key}", old.get(key), new.get(key))
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key)
    ]


def _void(directory: Path, graded: bool) -> bool:
    """Whether an attempt must run again: it never reached its end, or its result (or the
    run's first finish) says the harness or the provider, not the arm, voided it."""
    if not (directory / (GRADER_SECONDS if graded else UNGRADED)).is_file():
        return True
    note = directory / INFRASTRUCTURE_NOTE
    if note.is_file() and note.read_text(encoding="utf-8", errors="replace").strip():
        return True
    try:
        result = json.loads((directory / RESULT_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # not finished yet: the markers above already judged it
    return isinstance(result, dict) and result.get("failure_class") == "infrastructure"


def repetitions_to_run(run_dir: Path, plan: RunPlan) -> list[int]:
    """The repetitions whose attempts do not all stand, in order."""
    layout = RunLayout(run_dir)
    graded = plan.grader is not None
    again: set[int] = set()
    for repetition, _, arm in scheduled_attempts(mode_of(plan.mode), plan.repetitions):
        if _void(layout.attempt(repetition, arm.value), graded):
            again.add(repetition)
    return sorted(again)


def invocations(run_dir: Path) -> list[Invocation]:
    """invocations.jsonl, strictly; the first invocation alone when it has no line (a run
    that was never resumed)."""
    layout = RunLayout(run_dir)
    path = layout.invocations
    if not path.is_file():
        plan = load_plan(run_dir)
        return [Invocation(1, tuple(range(1, plan.repetitions + 1)))]
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            data = json.loads(line)
        except ValueError as exc:
            finding = Finding(INVOCATIONS_CODE, f"line {number}: not JSON: {exc}", str(path))
            raise ContractError(f"{path}: not an invocations record", [finding]) from None
        where = f"{path}:{number}"
        found.append(structure(_CONVERTER, data, Invocation, source=where, code=INVOCATIONS_CODE))
    return found


def start_invocation(run_dir: Path, rerun: Sequence[int]) -> Invocation:
    """Move the evidence of each repetition in ``rerun`` to superseded/<n>/ and record the
    new invocation; returns it. The first invocation's line is written first when the run
    has none yet."""
    layout = RunLayout(run_dir)
    before = invocations(run_dir)
    plan = load_plan(run_dir)
    number = before[-1].invocation + 1
    target = layout.superseded(number)
    for repetition in rerun:
        for arm in plan.arms:
            for source in (layout.attempt(repetition, arm), layout.router(repetition, arm)):
                _move(source, target / source.parent.name / source.name)
        reps = layout.repetition(repetition)
        _move(reps, target / reps.parent.name / reps.name)
    invocation = Invocation(number, tuple(rerun), tuple(rerun))
    lines = [json.dumps(attrs.asdict(i)) for i in [*before, invocation]]
    write_atomic(layout.invocations, "".join(f"{line}\n" for line in lines))
    return invocation


def _move(source: Path, destination: Path) -> None:
    if not source.exists() and not source.is_symlink():
        return
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(source), str(destination))
