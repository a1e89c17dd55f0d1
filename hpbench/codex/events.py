"""The top-level events of ``codex exec --json`` (one JSON object per line).

Every event carries the 1-based ``line`` it came from, so anything reported
about it can point back into the retained file.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from hpbench.codex import _fields as f
from hpbench.codex.items import Item, parse_item
from hpbench.findings import Finding


class ItemPhase(enum.Enum):
    """Which of the three item events carried the item."""

    STARTED = "item.started"
    UPDATED = "item.updated"
    COMPLETED = "item.completed"


@attrs.frozen
class Usage:
    """Token usage as ``turn.completed`` reports it: the total of the thread so far.

    A count Codex left out or wrote as null is ``None`` (unknown telemetry), never 0.
    """

    input_tokens: int | None
    cached_input_tokens: int | None
    cache_write_input_tokens: int | None
    output_tokens: int | None
    reasoning_output_tokens: int | None


@attrs.frozen
class ThreadStarted:
    """``thread.started``."""

    line: int
    thread_id: str


@attrs.frozen
class TurnStarted:
    """``turn.started``."""

    line: int


@attrs.frozen
class TurnCompleted:
    """``turn.completed``; ``usage`` is ``None`` only when the event had no usage object."""

    line: int
    usage: Usage | None


@attrs.frozen
class TurnFailed:
    """``turn.failed``: the turn ended with this error."""

    line: int
    message: str


@attrs.frozen
class StreamError:
    """A top-level ``error`` event; fatal only when a ``turn.failed`` follows."""

    line: int
    message: str


@attrs.frozen
class ItemEvent:
    """``item.started``, ``item.updated`` or ``item.completed``."""

    line: int
    phase: ItemPhase
    item: Item


@attrs.frozen
class OtherEvent:
    """An event type the reader does not interpret; ``known`` when Codex's source defines it."""

    line: int
    type: str
    known: bool


@attrs.frozen
class InvalidLine:
    """A line that could not be read as a Codex event; the finding says why.

    ``event_type`` is the line's ``type`` when it was a JSON object naming one, so a reader
    can tell a malformed event it relies on from one it does not read.
    """

    line: int
    finding: Finding
    event_type: str | None = None


Event = (
    ThreadStarted
    | TurnStarted
    | TurnCompleted
    | TurnFailed
    | StreamError
    | ItemEvent
    | OtherEvent
    | InvalidLine
)

# Defined in Codex's source but never observed from ``codex exec --json`` 0.169.
SOURCE_ONLY_EVENT_TYPES = frozenset({"item.plan.delta", "request_user_input"})

_PHASES = {phase.value: phase for phase in ItemPhase}


def _usage(raw: dict[str, Any]) -> Usage | None:
    if "usage" not in raw or raw["usage"] is None:
        return None
    usage = f.required_object(raw, "usage", "$")
    return Usage(
        input_tokens=f.optional_count(usage, "input_tokens", "$.usage"),
        cached_input_tokens=f.optional_count(usage, "cached_input_tokens", "$.usage"),
        cache_write_input_tokens=f.optional_count(usage, "cache_write_input_tokens", "$.usage"),
        output_tokens=f.optional_count(usage, "output_tokens", "$.usage"),
        reasoning_output_tokens=f.optional_count(usage, "reasoning_output_tokens", "$.usage"),
    )


def parse_event(raw: dict[str, Any], line: int) -> Event:
    """Turn one decoded line into its event class.

    Raises:
        FieldProblemError: a field the analysis relies on is missing or mistyped.
    """
    kind = f.required_str(raw, "type", "$")
    if kind in _PHASES:
        item = parse_item(f.required_object(raw, "item", "$"))
        return ItemEvent(line=line, phase=_PHASES[kind], item=item)
    if kind == "thread.started":
        return ThreadStarted(line=line, thread_id=f.required_str(raw, "thread_id", "$"))
    if kind == "turn.started":
        return TurnStarted(line=line)
    if kind == "turn.completed":
        return TurnCompleted(line=line, usage=_usage(raw))
    if kind == "turn.failed":
        error = f.required_object(raw, "error", "$")
        return TurnFailed(line=line, message=f.required_str(error, "message", "$.error"))
    if kind == "error":
        return StreamError(line=line, message=f.required_str(raw, "message", "$"))
    return OtherEvent(line=line, type=kind, known=kind in SOURCE_ONLY_EVENT_TYPES)
