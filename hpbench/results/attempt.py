"""The per-attempt result object (``hpbench.attempt.v2``).

The shell runs the attempt and leaves raw evidence in the attempt directory;
this module turns that evidence into one JSON object and the pass decision.
An attempt passes only when Codex exited 0 without timeout and its JSONL was
recorded, reads cleanly and ends in ``turn.completed``, every changed path is
allowed, and every hidden test the manifest names reported ``pass`` in the
grader's ``go test -json`` stream (:mod:`hpbench.results.verdict`), with
nothing else failing and the grader exiting 0. Anything unknown stays null.

Files read from the attempt directory (all written by the shell):

``codex.jsonl``  the ``codex exec --json`` stream
``codex.exit``   Codex's exit status (124 when the agent timeout killed it)
``agent.seconds`` measured agent wall time
``changed-paths.z`` NUL-separated workspace paths changed or added after Codex exited
``diff.patch``   the literal binary-capable diff of those changes
``agent.timeout``  the agent timeout in seconds (an exit near it is a timeout whatever the status)
``grader/grader.exit``, ``grader/grader.stdout``, ``grader/grader.state``, ``grader.seconds``
                 the hidden grading (grader.state: how its container ended)
``agent-limits.txt`` the agent container's caps and how often it met them
``infrastructure.txt`` present when the harness, not the agent, failed
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench._jsonio import readable_json, write_atomic
from hpbench.codex import summarize_file
from hpbench.commentary import CommentaryCoverage
from hpbench.results.attribution import Culprit, attribute
from hpbench.results.model import (
    ATTEMPT_SCHEMA,
    AgentLimits,
    Attempt,
    CodexSection,
    Elapsed,
    FailureAttribution,
    FailureClass,
    FileDigest,
    FinalResponseCheck,
    GraderSection,
    OracleTierName,
    attempt_to_json,
)
from hpbench.results.verdict import VerdictStatus, judge, read_grading
from hpbench.rundir import (
    AGENT_LIMITS,
    AGENT_SECONDS,
    AGENT_TIMEOUT,
    CHANGED_PATHS,
    CODEX_EXIT,
    CODEX_JSONL,
    DIFF_PATCH,
    GRADER_SECONDS,
    GRADER_STATE,
    GRADING_DIR,
    INFRASTRUCTURE_NOTE,
    RESULT_JSON,
)

RESULT_NAME = RESULT_JSON
TIMEOUT_STATUS = 124


# The verdict statuses that fail an attempt, and the class each one gets.
VERDICT_CLASSES = {
    VerdictStatus.UNREADABLE: FailureClass.GRADER_OUTPUT_UNREADABLE,
    VerdictStatus.MISSING: FailureClass.HIDDEN_TESTS_MISSING,
    VerdictStatus.FAILED: FailureClass.HIDDEN_TESTS_FAILED,
    VerdictStatus.SKIPPED: FailureClass.HIDDEN_TESTS_SKIPPED,
    VerdictStatus.EXIT: FailureClass.GRADER_FAILED,
}
# Exit statuses a kill by `timeout` produces: 124 (TERM), 137 (KILL after the grace).
KILL_STATUSES = frozenset({124, 137})
# An exit this close to the limit, with a kill status, is the timeout whatever docker said.
TIMEOUT_SLACK_SECONDS = 1.0


@attrs.frozen
class AttemptIdentity:
    """Where an attempt sits in the run: arm, repetition and its place in the pair."""

    run_id: str
    task_id: str
    task_fingerprint: str
    arm: str
    repetition: int
    pair_order: int
    model: str
    effort: str
    instructions_artifact: str
    instructions_sha256: str


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _read_float(path: Path) -> float | None:
    try:
        return round(float(path.read_text().strip()), 3)
    except (OSError, ValueError):
        return None


def _changed_paths(path: Path) -> tuple[str, ...] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    names = {name.decode("utf-8", "surrogateescape") for name in data.split(b"\0") if name}
    return tuple(sorted(names))


LIMIT_FIELDS = ("memory_limit_bytes", "oom_kills", "pids_limit", "pids_limit_hits")


def _agent_limits(path: Path) -> tuple[AgentLimits | None, list[str]]:
    """The agent container's caps and hits from ``agent-limits.txt``, and what was wrong.

    A missing file is unknown (None), never "no hits". A cap of ``max`` (none) is None.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, []
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"{path.name}: unreadable: {exc}"]
    values: dict[str, int | None] = {}
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        name, _, raw = line.partition(" ")
        if name not in LIMIT_FIELDS or name in values:
            problems.append(f"{path.name}:{number}: unexpected or repeated field {name!r}")
        elif raw == "max":
            values[name] = None
        elif raw.isdigit():
            values[name] = int(raw)
        else:
            problems.append(f"{path.name}:{number}: {name} is not a count: {raw!r}")
    missing = [name for name in LIMIT_FIELDS if name not in values]
    if missing:
        problems.append(f"{path.name}: missing {', '.join(missing)}")
    if problems:
        return None, problems
    return AgentLimits(**values), []


def limits_met(limits: AgentLimits | None) -> list[str]:
    """Which caps the agent's container met: a memory-hog kill, a spent process cap."""
    if limits is None:
        return []
    met = []
    if limits.oom_kills:
        met.append(f"memory cap: {limits.oom_kills} process(es) killed out of memory")
    if limits.pids_limit_hits:
        met.append(f"process cap: {limits.pids_limit_hits} fork(s) refused")
    return met


def _file_digest(path: Path) -> FileDigest | None:
    if not path.is_file():
        return None
    data = path.read_bytes()
    return FileDigest(path=path.name, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))


def agent_timed_out(exit_code: int | None, seconds: float | None, limit: int | None) -> bool:
    """Whether the agent timeout ended Codex.

    ``timeout`` exits 124, or 137 when its KILL after the grace struck; through
    ``docker exec`` other statuses are possible. So a run that lasted the whole
    limit is a timeout whatever its status, and 124 is one whenever the limit is
    unknown.
    """
    if seconds is not None and limit is not None and seconds >= limit - TIMEOUT_SLACK_SECONDS:
        return exit_code != 0
    if limit is None:
        return exit_code == TIMEOUT_STATUS
    return False


def _codex_section(directory: Path, workspace_root: str) -> tuple[CodexSection, str | None]:
    """What Codex did, and its final substantive agent message (None when there is none)."""
    jsonl = directory / CODEX_JSONL
    exit_code = _read_int(directory / CODEX_EXIT)
    timed_out = agent_timed_out(
        exit_code,
        _read_float(directory / AGENT_SECONDS),
        _read_int(directory / AGENT_TIMEOUT),
    )
    if not jsonl.is_file() or jsonl.stat().st_size == 0:
        return CodexSection(
            exit_code=exit_code,
            timed_out=timed_out,
            jsonl=None,
            jsonl_findings=("codex.jsonl is missing or empty",),
            outcome=None,
            item_counts={},
            terminal_error=None,
            final_message_present=False,
            usage=None,
        ), None
    summary = summarize_file(jsonl, workspace_root=workspace_root)
    section = CodexSection(
        exit_code=exit_code,
        timed_out=timed_out,
        jsonl=jsonl.name,
        jsonl_findings=tuple(str(finding) for finding in summary.findings),
        outcome=summary.outcome.value,
        item_counts=dict(sorted(summary.item_counts.items())),
        terminal_error=summary.terminal_error,
        final_message_present=summary.final_message is not None,
        usage=summary.usage,
    )
    return section, summary.final_message


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def final_response_check(required: str | None, message: str | None) -> FinalResponseCheck | None:
    """The task's exact final response (``required``; None: the task requires none) held
    against the final substantive agent message. Surrounding whitespace aside, it must be
    equal: no prefix, no paraphrase."""
    if required is None:
        return None
    return FinalResponseCheck(
        matched=message is not None and message.strip() == required.strip(),
        found=message is not None,
        required_sha256=_digest(required),
        response_sha256=None if message is None else _digest(message),
    )


def _grader_state(path: Path) -> dict[str, str] | None:
    """``grader.state`` (``key=value`` lines, written by bench-grade), or None."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)


def _grader_section(
    directory: Path, required_tests: Mapping[str, Sequence[str]], kind: str
) -> tuple[GraderSection, str | None]:
    """The grading as the attempt object records it, and an infrastructure error if the
    grader's container, not the agent's code, ended it."""
    grader = directory / GRADING_DIR
    report, exit_code = read_grading(grader, kind)
    state = _grader_state(grader / GRADER_STATE)
    outcome = None if state is None else state.get("outcome")
    timed_out = outcome == "timeout" or (outcome is None and exit_code in KILL_STATUSES)
    # A go-test or pytest grader names its tests (the manifest insists); a command grader
    # has only its exit status.
    judged = exit_code is not None and bool(required_tests)
    verdict = judge(report, required_tests, exit_code) if judged else None
    infrastructure = None
    # Out of memory before any test ran: the container, not the tests (those report).
    if outcome == "oom-killed" and report.started == 0:
        infrastructure = "the grader container ran out of memory before any hidden test ran"
    section = GraderSection(
        ran=exit_code is not None,
        exit_code=exit_code,
        container_outcome=outcome,
        timed_out=timed_out,
        passed=not timed_out
        and (
            verdict.status is VerdictStatus.PASSED
            if verdict is not None
            else exit_code == 0 and not required_tests
        ),
        seconds=_read_float(directory / GRADER_SECONDS),
        tests=report.counts,
        failed_tests=tuple(report.failed_tests),
        build_failed=report.build_failed,
        hidden_tests=verdict,
    )
    return section, infrastructure


def decide(
    *,
    infrastructure_error: str | None,
    codex: CodexSection,
    unauthorized: Sequence[str] | None,
    grader: GraderSection,
    limits_met: list[str] | None = None,
    gate_on_grader: bool = True,
    router_failed: bool = False,
    final_response: FinalResponseCheck | None = None,
    commentary: CommentaryCoverage | None = None,
) -> FailureClass:
    """The attempt's failure class; ``NONE`` means it passed.

    An agent that met its container's memory or process cap fails as
    ``resource-limit`` whatever followed: what it did then was done in a box that
    had stopped being the same for both arms.
    """
    if infrastructure_error is not None:
        return FailureClass.INFRASTRUCTURE
    if limits_met:
        return FailureClass.RESOURCE_LIMIT
    if codex.timed_out:
        return FailureClass.AGENT_TIMEOUT
    if router_failed:
        return FailureClass.ROUTER_FAILED
    if codex.exit_code != 0:
        return FailureClass.CODEX_FAILED
    if codex.jsonl is None or codex.jsonl_findings:
        return FailureClass.JSONL_INVALID
    # Exit 0 is not enough: the stream must end in turn.completed (not turn.failed, not cut).
    if codex.outcome != "completed":
        return FailureClass.CODEX_FAILED
    if unauthorized is None or unauthorized:
        return FailureClass.UNAUTHORIZED_PATH
    graded = _grader_class(grader) if gate_on_grader else FailureClass.NONE
    if graded is not FailureClass.NONE:
        return graded
    # A required exact final response holds after the grader (a failed hidden test says
    # more), and in a latency-only task too: it is the task's requirement, not a grade.
    if final_response is not None and not final_response.matched:
        return FailureClass.FINAL_RESPONSE
    if commentary is not None and not commentary.covered:
        return FailureClass.COMMENTARY
    return FailureClass.NONE


def _grader_class(grader: GraderSection) -> FailureClass:
    if grader.timed_out:
        return FailureClass.GRADER_TIMEOUT
    verdict = grader.hidden_tests
    if verdict is None:
        return FailureClass.NONE if grader.passed else FailureClass.GRADER_FAILED
    if verdict.status is not VerdictStatus.PASSED:
        return VERDICT_CLASSES[verdict.status]
    return FailureClass.NONE


def build_attempt(
    directory: Path,
    identity: AttemptIdentity,
    allowed_paths: tuple[str, ...],
    workspace_root: str,
    *,
    required_tests: Mapping[str, Sequence[str]],
    grader_kind: str = "go-test",
    oracle_tier: OracleTierName = "correctness",
    router_capture: Path | None = None,
    final_response: str | None = None,
    commentary: CommentaryCoverage | None = None,
) -> Attempt:
    """The attempt object for the evidence in ``directory``.

    ``required_tests`` is the manifest's ``grader.required_tests``: each must pass, as the
    stream of a ``grader_kind`` grader reports it.
    ``oracle_tier`` (spec 000): a ``correctness`` task gates on the grader and
    reports ``correctness``; a ``latency-only`` task never reports correctness
    (null), and its pass means only that the attempt ran cleanly within bounds.
    ``router_capture`` is the arm's router capture: when Codex failed, it says
    whether the provider (infrastructure) or the router (the arm's loss) did.
    ``final_response`` is the exact final response the task requires, if any, and
    ``commentary`` the attempt's commentary coverage (hpbench.commentary), if any.
    """
    gate_on_grader = oracle_tier == "correctness"
    infrastructure = directory / INFRASTRUCTURE_NOTE
    infrastructure_error = (
        infrastructure.read_text(encoding="utf-8", errors="replace").strip() or "unspecified"
        if infrastructure.is_file()
        else None
    )
    codex, message = _codex_section(directory, workspace_root)
    response = final_response_check(final_response, message)
    attribution = None
    codex_failed = codex.exit_code != 0 or codex.outcome != "completed"
    if codex_failed and not codex.timed_out and router_capture is not None:
        attribution = attribute(router_capture)
        if attribution.culprit is Culprit.PROVIDER and infrastructure_error is None:
            infrastructure_error = f"provider failure: {attribution.detail}"
    changed = _changed_paths(directory / CHANGED_PATHS)
    unauthorized = None if changed is None else tuple(p for p in changed if p not in allowed_paths)
    grader, grader_infrastructure = _grader_section(directory, required_tests, grader_kind)
    infrastructure_error = infrastructure_error or grader_infrastructure
    limits, limit_problems = _agent_limits(directory / AGENT_LIMITS)
    met = limits_met(limits)
    failure = decide(
        infrastructure_error=infrastructure_error,
        codex=codex,
        unauthorized=unauthorized,
        grader=grader,
        limits_met=met,
        gate_on_grader=gate_on_grader,
        router_failed=attribution is not None and attribution.culprit is Culprit.ROUTER,
        final_response=response,
        commentary=commentary,
    )
    return Attempt(
        schema=ATTEMPT_SCHEMA,
        **attrs.asdict(identity),
        workspace_root=workspace_root,
        elapsed=Elapsed(agent_seconds=_read_float(directory / AGENT_SECONDS)),
        codex=codex,
        changed_paths=changed,
        unauthorized_paths=unauthorized,
        diff=_file_digest(directory / DIFF_PATCH),
        grader=grader,
        agent_limits=limits,
        agent_limits_met=tuple(met),
        agent_limits_findings=tuple(limit_problems),
        infrastructure_error=infrastructure_error,
        failure_attribution=None
        if attribution is None
        else FailureAttribution(culprit=attribution.culprit, detail=attribution.detail),
        oracle_tier=oracle_tier,
        correctness=grader.passed if gate_on_grader else None,
        passed=failure is FailureClass.NONE,
        failure_class=failure,
        final_response=response,
        commentary=commentary,
    )


def write_result(directory: Path, result: Attempt | dict[str, Any]) -> Path:
    """Publish ``result.json`` (mode 0600, atomic rename)."""
    document = attempt_to_json(result) if isinstance(result, Attempt) else result
    path = directory / RESULT_NAME
    write_atomic(path, readable_json(document))
    return path


__all__ = [
    "ATTEMPT_SCHEMA",
    "RESULT_NAME",
    "Attempt",
    "AttemptIdentity",
    "FailureClass",
    "agent_timed_out",
    "build_attempt",
    "decide",
    "limits_met",
    "write_result",
]
