"""Reading the JSONL stream of ``codex exec --json`` (Codex CLI 0.169)."""

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
from hpbench.codex.items import KNOWN_ITEM_TYPES, Item, item_type, parse_item
from hpbench.codex.paths import workspace_relative
from hpbench.codex.reader import iter_events, read_events
from hpbench.codex.summary import (
    ChangedPath,
    CodexSummary,
    CompletedCommand,
    CompletedFileChange,
    Outcome,
    Step,
    summarize,
    summarize_file,
)

__all__ = [
    "KNOWN_ITEM_TYPES",
    "ChangedPath",
    "CodexSummary",
    "CompletedCommand",
    "CompletedFileChange",
    "Event",
    "InvalidLine",
    "Item",
    "ItemEvent",
    "ItemPhase",
    "OtherEvent",
    "Outcome",
    "Step",
    "StreamError",
    "ThreadStarted",
    "TurnCompleted",
    "TurnFailed",
    "TurnStarted",
    "Usage",
    "item_type",
    "iter_events",
    "parse_item",
    "read_events",
    "summarize",
    "summarize_file",
    "workspace_relative",
]
