"""What one attempt's Codex stream says, folded into a single result.

The fold reads the events once, in order. It keeps the completed command
executions and completed file changes (in stream order, for the command
analysis), counts everything else, and remembers the few scalars a report
needs: the final substantive agent message, the terminal error and the usage.

The final substantive agent message is the last agent message with text once any
router telemetry line (``Tokens: i=…, ci=…, o=…, r=…``, spec 002) is taken out: a
message that is only telemetry never replaces the response before it, and a later
ordinary message is the final response, whatever came before it.
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import attrs

from hpbench.codex.events import (
    Event,
    InvalidLine,
    ItemEvent,
    ItemPhase,
    OtherEvent,
    StreamError,
    ThreadStarted,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
)
from hpbench.codex.items import (
    AgentMessage,
    CommandExecution,
    ErrorItem,
    FileChange,
    UnknownItem,
    item_type,
)
from hpbench.codex.paths import workspace_relative
from hpbench.codex.reader import read_events
from hpbench.findings import Finding


class Outcome(enum.Enum):
    """How the stream ended."""

    COMPLETED = "completed"
    FAILED = "failed"
    INCOMPLETE = "incomplete"


@attrs.frozen
class CompletedCommand:
    """A command execution that reached ``item.completed`` (its exit code may be nonzero)."""

    line: int
    command: str
    exit_code: int | None
    status: str


@attrs.frozen
class ChangedPath:
    """A path of a completed file change, relative to the workspace root when inside it."""

    path: str
    kind: str


@attrs.frozen
class CompletedFileChange:
    """A ``file_change`` item that completed with status ``completed``."""

    line: int
    changes: tuple[ChangedPath, ...]


Step = CompletedCommand | CompletedFileChange
"""What the command analysis walks: commands and file changes in stream order."""


# A router's token telemetry line (spec 002): never part of the agent's response.
ROUTER_TELEMETRY = re.compile(r"^\s*Tokens: i=\d+, ci=\d+, o=\d+, r=\d+\s*$")


def substantive_text(text: str) -> str | None:
    """``text`` without router telemetry lines; None when nothing else is in it."""
    kept = "\n".join(line for line in text.splitlines() if not ROUTER_TELEMETRY.match(line))
    return kept if kept.strip() else None


@attrs.frozen
class CodexSummary:
    """Everything the stream of one attempt says that hpbench reports."""

    outcome: Outcome
    event_counts: dict[str, int]
    item_counts: dict[str, int]
    unfinished_items: dict[str, int]
    unknown_types: dict[str, int]
    steps: tuple[Step, ...]
    failed_file_changes: int
    final_message: str | None
    terminal_error: str | None
    warnings: tuple[str, ...]
    usage: Usage | None
    findings: tuple[Finding, ...]

    @property
    def commands(self) -> tuple[CompletedCommand, ...]:
        """The completed command executions."""
        return tuple(step for step in self.steps if isinstance(step, CompletedCommand))

    @property
    def file_changes(self) -> tuple[CompletedFileChange, ...]:
        """The completed file changes."""
        return tuple(step for step in self.steps if isinstance(step, CompletedFileChange))


@attrs.define
class _Fold:
    """Mutable state while the events stream past."""

    workspace_root: str | None
    event_counts: Counter[str] = attrs.field(factory=Counter)
    item_counts: Counter[str] = attrs.field(factory=Counter)
    unknown_types: Counter[str] = attrs.field(factory=Counter)
    in_flight: dict[str, str] = attrs.field(factory=dict)
    steps: list[Step] = attrs.field(factory=list)
    failed_file_changes: int = 0
    final_message: str | None = None
    terminal_error: str | None = None
    warnings: list[str] = attrs.field(factory=list)
    usage: Usage | None = None
    outcome: Outcome = Outcome.INCOMPLETE
    findings: list[Finding] = attrs.field(factory=list)

    def add(self, event: Event) -> None:
        if isinstance(event, InvalidLine):
            self.event_counts["(invalid line)"] += 1
            self.findings.append(event.finding)
            return
        self.event_counts[_event_type(event)] += 1
        if isinstance(event, ItemEvent):
            self._item(event)
        elif isinstance(event, TurnStarted):
            self.outcome = Outcome.INCOMPLETE
        elif isinstance(event, TurnCompleted):
            self.outcome = Outcome.COMPLETED
            self.terminal_error = None
            if event.usage is not None:
                # Thread total, not a per-turn delta: the last one is the answer.
                self.usage = event.usage
        elif isinstance(event, TurnFailed):
            self.outcome = Outcome.FAILED
            self.terminal_error = event.message
        elif isinstance(event, StreamError):
            self.warnings.append(event.message)
        elif isinstance(event, OtherEvent) and not event.known:
            self.unknown_types[f"event:{event.type}"] += 1

    def _item(self, event: ItemEvent) -> None:
        item = event.item
        kind = item_type(item)
        if isinstance(item, UnknownItem) and event.phase is ItemPhase.COMPLETED:
            self.unknown_types[f"item:{kind}"] += 1
        if event.phase is not ItemPhase.COMPLETED:
            if item.id is not None:
                self.in_flight[item.id] = kind
            return
        if item.id is not None:
            self.in_flight.pop(item.id, None)
        self.item_counts[kind] += 1
        if isinstance(item, CommandExecution):
            self.steps.append(
                CompletedCommand(
                    line=event.line,
                    command=item.command,
                    exit_code=item.exit_code,
                    status=item.status,
                )
            )
        elif isinstance(item, FileChange):
            self._file_change(item, event.line)
        elif isinstance(item, AgentMessage):
            substantive = substantive_text(item.text)
            if substantive is not None:
                self.final_message = substantive
        elif isinstance(item, ErrorItem):
            self.warnings.append(item.message)

    def _file_change(self, item: FileChange, line: int) -> None:
        if item.status != "completed":
            self.failed_file_changes += 1
            return
        changes = tuple(
            ChangedPath(path=workspace_relative(change.path, self.workspace_root), kind=change.kind)
            for change in item.changes
        )
        self.steps.append(CompletedFileChange(line=line, changes=changes))

    def result(self) -> CodexSummary:
        return CodexSummary(
            outcome=self.outcome,
            event_counts=dict(sorted(self.event_counts.items())),
            item_counts=dict(sorted(self.item_counts.items())),
            unfinished_items=dict(sorted(Counter(self.in_flight.values()).items())),
            unknown_types=dict(sorted(self.unknown_types.items())),
            steps=tuple(self.steps),
            failed_file_changes=self.failed_file_changes,
            final_message=self.final_message,
            terminal_error=self.terminal_error,
            warnings=tuple(self.warnings),
            usage=self.usage,
            findings=tuple(self.findings),
        )


def _event_type(event: Event) -> str:
    if isinstance(event, ItemEvent):
        return event.phase.value
    if isinstance(event, OtherEvent):
        return event.type
    names: dict[type, str] = {
        ThreadStarted: "thread.started",
        TurnStarted: "turn.started",
        TurnCompleted: "turn.completed",
        TurnFailed: "turn.failed",
        StreamError: "error",
    }
    return names[type(event)]


def summarize(events: Iterable[Event], *, workspace_root: str | None = None) -> CodexSummary:
    """Fold a stream of events into a :class:`CodexSummary`.

    Args:
        events: e.g. :func:`~hpbench.codex.reader.iter_events` of a stream.
        workspace_root: the directory Codex worked in; file-change paths inside
            it become relative.
    """
    fold = _Fold(workspace_root=workspace_root)
    for event in events:
        fold.add(event)
    return fold.result()


def summarize_file(path: Path, *, workspace_root: str | None = None) -> CodexSummary:
    """:func:`summarize` of a JSONL file, read line by line."""
    return summarize(read_events(path), workspace_root=workspace_root)
