"""The attempt object's contract (``hpbench.attempt.v2``): one attrs model, strict both ways.

:mod:`hpbench.results.attempt` builds an :class:`Attempt` from the evidence the shell
left; ``result.json`` and each line of ``results.jsonl`` are its JSON form. Reading one
back goes through the project's strict converter: an unknown key, a missing field or a
wrong type is refused with a finding that names the field. The JSON Schema in
``contrib/schemas/`` is generated from these classes (``hpbench schemas --write``).
"""

from __future__ import annotations

import enum
from typing import Any, Final, Literal

import attrs

from hpbench import schemagen
from hpbench._documents import document_json, read_document
from hpbench.codex.events import Usage
from hpbench.commentary import CommentaryCoverage
from hpbench.results.attribution import Culprit
from hpbench.results.gotest import HiddenTestCounts
from hpbench.results.verdict import HiddenTestVerdict
from hpbench.schemagen import doc

ATTEMPT_SCHEMA: Final = "hpbench.attempt.v2"
SCHEMA_FILE = f"{ATTEMPT_SCHEMA}.schema.json"
OracleTierName = Literal["correctness", "latency-only"]


class FailureClass(enum.Enum):
    """Why an attempt did not pass, most fundamental first."""

    NONE = "none"
    INFRASTRUCTURE = "infrastructure"
    RESOURCE_LIMIT = "resource-limit"
    AGENT_TIMEOUT = "agent-timeout"
    ROUTER_FAILED = "router-failed"
    CODEX_FAILED = "codex-failed"
    JSONL_INVALID = "jsonl-invalid"
    UNAUTHORIZED_PATH = "unauthorized-path"
    GRADER_TIMEOUT = "grader-timeout"
    GRADER_OUTPUT_UNREADABLE = "grader-output-unreadable"
    HIDDEN_TESTS_MISSING = "hidden-tests-missing"
    HIDDEN_TESTS_FAILED = "hidden-tests-failed"
    HIDDEN_TESTS_SKIPPED = "hidden-tests-skipped"
    GRADER_FAILED = "grader-failed"
    # Spec 002: the task requires an exact final response, and the final substantive agent
    # message (router telemetry taken out) is not it, or there is none.
    FINAL_RESPONSE = "final-response"
    # Spec 002: a commentary-coverage profile assigned to the attempt's mode and arm is not
    # met by its Codex JSONL, or the stream is missing or malformed. Never a grader verdict.
    COMMENTARY = "commentary-coverage"


@attrs.frozen
class Elapsed:
    """Measured wall times."""

    agent_seconds: float | None = attrs.field(
        metadata=doc("Codex's wall time in the agent container (agent.seconds); null if unknown.")
    )


@attrs.frozen
class CodexSection:
    """What Codex did: its exit, its JSONL stream and the usage it reported."""

    exit_code: int | None = attrs.field(metadata=doc("Codex's exit status; null if unrecorded."))
    timed_out: bool = attrs.field(metadata=doc("The agent timeout ended Codex."))
    jsonl: str | None = attrs.field(
        metadata=doc("The stream's file name; null when it is missing or empty.")
    )
    jsonl_findings: tuple[str, ...] = attrs.field(
        metadata=doc("What is wrong with the stream; empty when it reads cleanly.")
    )
    outcome: str | None = attrs.field(
        metadata=doc("How the stream ended (`completed` when it ends in turn.completed).")
    )
    item_counts: dict[str, int] = attrs.field(metadata=doc("Completed items by type."))
    terminal_error: str | None = attrs.field(metadata=doc("The stream's last error message."))
    final_message_present: bool = attrs.field(metadata=doc("Codex wrote a final agent message."))
    usage: Usage | None = attrs.field(
        metadata=doc("The last turn.completed usage (thread totals); null when none.")
    )


@attrs.frozen
class FileDigest:
    """A retained file's name, SHA-256 and size."""

    path: str = attrs.field(metadata=doc("File name in the attempt directory."))
    sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the bytes."))
    bytes: int = attrs.field(metadata=doc("Size in bytes."))


@attrs.frozen
class GraderSection:
    """The hidden grading: how the grader ran and what its go test stream says."""

    ran: bool = attrs.field(metadata=doc("The grader reported an exit status."))
    exit_code: int | None = attrs.field(metadata=doc("The grader's exit status."))
    container_outcome: str | None = attrs.field(
        metadata=doc("How the grader's container ended (grader.state `outcome`).")
    )
    timed_out: bool = attrs.field(metadata=doc("The grader timeout ended the grading."))
    passed: bool = attrs.field(metadata=doc("The grading passed (the hidden tests' verdict)."))
    seconds: float | None = attrs.field(metadata=doc("The grader's wall time."))
    tests: HiddenTestCounts | None = attrs.field(
        metadata=doc("Top-level test counts; null when no test event could be read.")
    )
    failed_tests: tuple[str, ...] = attrs.field(metadata=doc("Failed top-level tests."))
    build_failed: bool = attrs.field(metadata=doc("A package reported a build failure."))
    hidden_tests: HiddenTestVerdict | None = attrs.field(
        metadata=doc("The required tests' verdict by name; null for a command grader.")
    )


@attrs.frozen
class AgentLimits:
    """The agent container's caps and how often it met them (agent-limits.txt)."""

    memory_limit_bytes: int | None = attrs.field(metadata=doc("Memory cap; null when none."))
    oom_kills: int | None = attrs.field(metadata=doc("Processes killed out of memory."))
    pids_limit: int | None = attrs.field(metadata=doc("Process cap; null when none."))
    pids_limit_hits: int | None = attrs.field(metadata=doc("Forks refused by the process cap."))


@attrs.frozen
class FailureAttribution:
    """Whose failure the arm's router capture shows when Codex failed."""

    culprit: Culprit = attrs.field(metadata=doc("The provider, the router, or neither."))
    detail: str = attrs.field(metadata=doc("What the capture shows."))


@attrs.frozen
class FinalResponseCheck:
    """The task's exact final response held against the agent's final substantive message.

    Only digests are kept: the response is the task's, and the message is the agent's,
    which the summary never quotes."""

    matched: bool = attrs.field(
        metadata=doc("The message equals the required response (surrounding whitespace aside).")
    )
    found: bool = attrs.field(metadata=doc("Codex wrote a final substantive agent message."))
    required_sha256: str = attrs.field(metadata=doc("Hex SHA-256 of the required response."))
    response_sha256: str | None = attrs.field(
        metadata=doc("Hex SHA-256 of the final substantive message; null when there is none.")
    )


@attrs.frozen
class Attempt:
    """One attempt of one arm in one repetition, and whether it passed (``hpbench.attempt.v2``).

    Anything unknown is null, never a guess.
    """

    schema: Literal["hpbench.attempt.v2"] = attrs.field(
        metadata=doc("Always `hpbench.attempt.v2`.")
    )
    run_id: str = attrs.field(metadata=doc("The run's id."))
    task_id: str = attrs.field(metadata=doc("The task's id."))
    task_fingerprint: str = attrs.field(metadata=doc("The task's fingerprint."))
    arm: str = attrs.field(
        metadata=doc("The arm (`control`, `hpatch`, `native`, `ctp` or `mentor`).")
    )
    repetition: int = attrs.field(metadata=doc("The repetition, from 1."))
    pair_order: int = attrs.field(metadata=doc("1 when this arm ran first in its pair, else 2."))
    model: str = attrs.field(metadata=doc("The model Codex asked for."))
    effort: str = attrs.field(metadata=doc("The reasoning effort."))
    instructions_artifact: str = attrs.field(
        metadata=doc("The arm's instructions file, relative to the run directory.")
    )
    instructions_sha256: str = attrs.field(metadata=doc("Hex SHA-256 of that file."))
    workspace_root: str = attrs.field(metadata=doc("The workspace path inside the agent."))
    elapsed: Elapsed = attrs.field(metadata=doc("Measured wall times."))
    codex: CodexSection = attrs.field(metadata=doc("What Codex did."))
    changed_paths: tuple[str, ...] | None = attrs.field(
        metadata=doc("Workspace paths changed or added; null when unrecorded.")
    )
    unauthorized_paths: tuple[str, ...] | None = attrs.field(
        metadata=doc("Changed paths the task does not allow; null when unknown.")
    )
    diff: FileDigest | None = attrs.field(metadata=doc("The retained diff.patch."))
    grader: GraderSection = attrs.field(metadata=doc("The hidden grading."))
    agent_limits: AgentLimits | None = attrs.field(
        metadata=doc("The agent container's caps and hits; null when unknown.")
    )
    agent_limits_met: tuple[str, ...] = attrs.field(
        metadata=doc("Each cap the agent met, in words; meeting one fails the attempt.")
    )
    agent_limits_findings: tuple[str, ...] = attrs.field(
        metadata=doc("What was wrong with agent-limits.txt.")
    )
    infrastructure_error: str | None = attrs.field(
        metadata=doc("Why the harness, not the agent, failed; null when it did not.")
    )
    failure_attribution: FailureAttribution | None = attrs.field(
        metadata=doc("Whose failure the router capture shows; null when not asked.")
    )
    oracle_tier: OracleTierName = attrs.field(
        metadata=doc("What a pass means: the hidden grader's verdict, or only a clean run.")
    )
    correctness: bool | None = attrs.field(
        metadata=doc("The grader's verdict; null for a latency-only task.")
    )
    passed: bool = attrs.field(metadata=doc("The attempt passed (`failure_class` is `none`)."))
    failure_class: FailureClass = attrs.field(
        metadata=doc("Why it did not pass, most fundamental first; `none` when it passed.")
    )
    final_response: FinalResponseCheck | None = attrs.field(
        metadata=doc("The exact final response the task requires; null when it requires none.")
    )
    commentary: CommentaryCoverage | None = attrs.field(
        metadata=doc(
            "Commentary coverage of the profiles assigned to this mode and arm; null when "
            "the task assigns none (also in commentary-coverage.json)"
        )
    )

    @property
    def key(self) -> str:
        """``<repetition>-<arm>``, the name of its attempt and router directories."""
        return f"{self.repetition}-{self.arm}"


def attempt_from_json(data: Any, *, source: str) -> Attempt:
    """An attempt object read back, or a :class:`ContractError` naming each wrong field."""
    return read_document(data, Attempt, source=source, code="results.attempt")


def attempt_to_json(attempt: Attempt) -> dict[str, Any]:
    """The attempt object as the JSON object ``result.json`` holds."""
    return document_json(attempt)


CONTRACT = schemagen.Contract(schema_file=SCHEMA_FILE, roots=(Attempt,))
