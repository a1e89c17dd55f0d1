"""What a Codex CLI rollout file holds, as far as codec replay needs it.

A rollout (``CODEX_HOME/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl``) is
one JSON object a line, ``{"timestamp", "type", "payload"}``. A ``session_meta``
line carries the logical session's id (``payload.id``); ``response_item`` lines
carry the conversation items Codex sends back as request ``input``. Token counts
(``event_msg`` ``token_count``, ``token_usage_record``) and every other line type
are never read here.

Nothing in this module returns or reports an item's contents: only identities,
counts and byte lengths leave it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Final

import attrs

from hpbench._jsonio import canonical_json
from hpbench.reference._history import is_model_output, is_user_message

# Rollout-only bookkeeping that Codex 0.169 writes on each item but does not send:
# an item in a request body equals the rollout's item without this key.
ROLLOUT_ONLY_KEYS: Final = frozenset({"internal_chat_message_metadata_passthrough"})


class IneligibleError(Exception):
    """A rollout that does not meet an eligibility criterion; ``reason`` is its code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# Each criterion a rollout must meet, by the code counted when it does not.
CRITERIA: Final = (
    ("not-a-regular-file", "a regular file named rollout-*.jsonl (symlinks are not followed)"),
    ("unreadable", "readable"),
    (
        "malformed-jsonl",
        'UTF-8 JSONL whose every non-blank line is an object with a string "type" and a '
        '"payload"; a response_item payload is an object',
    ),
    ("no-session-meta", "a session_meta line whose payload.id is a non-empty string (the first)"),
    ("no-user-message", "at least one response_item that is a user message"),
    ("no-model-output", "at least one response_item that is a model output"),
)


@attrs.frozen
class Rollout:
    """One eligible rollout: its logical session and its conversation items, in order."""

    session_id: str
    items: tuple[Any, ...]


def _lines(data: bytes) -> Iterator[dict[str, Any]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise IneligibleError("malformed-jsonl") from None
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise IneligibleError("malformed-jsonl") from None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise IneligibleError("malformed-jsonl")
        if "payload" not in value:
            raise IneligibleError("malformed-jsonl")
        yield value


def _wire_item(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise IneligibleError("malformed-jsonl")
    return {key: value for key, value in payload.items() if key not in ROLLOUT_ONLY_KEYS}


def parse_rollout(data: bytes) -> Rollout:
    """The rollout in ``data``.

    Raises:
        IneligibleError: the first criterion of :data:`CRITERIA` it does not meet.
    """
    session_id: str | None = None
    items: list[Any] = []
    for line in _lines(data):
        kind, payload = line["type"], line["payload"]
        if kind == "session_meta" and session_id is None:
            found = payload.get("id") if isinstance(payload, dict) else None
            if not isinstance(found, str) or not found:
                raise IneligibleError("no-session-meta")
            session_id = found
        elif kind == "response_item":
            items.append(_wire_item(payload))
    if session_id is None:
        raise IneligibleError("no-session-meta")
    if not any(is_user_message(item) for item in items):
        raise IneligibleError("no-user-message")
    if not any(is_model_output(item) for item in items):
        raise IneligibleError("no-model-output")
    return Rollout(session_id, tuple(items))


REQUEST_RULE: Final = (
    "Each model request's input is reconstructed as the prefix of the rollout's "
    "response_item payloads (rollout-only bookkeeping keys removed) that ends right "
    "before a maximal run of model-output items (reasoning, function and custom tool "
    "calls, web search and local shell calls, assistant messages) and holds at least "
    "one item. The base instructions, which Codex keeps in session_meta and sends as "
    "a developer message, are not part of the items and are not reconstructed."
)


def request_inputs(items: Sequence[Any]) -> Iterator[list[Any]]:
    """Every reconstructed request input of a rollout, in order (:data:`REQUEST_RULE`)."""
    for position, item in enumerate(items):
        if position == 0 or not is_model_output(item):
            continue
        if not is_model_output(items[position - 1]):
            yield list(items[:position])


def json_bytes(items: Sequence[Any]) -> int:
    """The UTF-8 size of ``items`` as compact JSON (a lone surrogate counts its 3 bytes)."""
    return len(canonical_json(list(items)).encode("utf-8", "surrogatepass"))
