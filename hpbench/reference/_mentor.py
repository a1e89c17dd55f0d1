"""The reference router's Mentor Handoff: a router-owned, bounded child schedule.

Test equipment, never Mentor Handoff's real schedule or prompts. With ``--mentor
MODEL`` the router consults the mentor model before the first request of each turn of a
root thread, at most :data:`MAX_CONSULTS_PER_THREAD` times per thread: it sends one child
request of its own (a new child thread of that root, ``x-openai-subagent: mentor``) with
the turn's user message, and hands the mentor's answer to the main model as one
developer message appended to that request's input. ``--mentor off`` (the control,
always) never consults. The schedule is the router's own: no setting of the benchmark
changes when or how often it consults, only which model answers.

Every consultation is captured like any exchange (the router is the child's client) and
leaves a :class:`~hpbench.capture.children.ChildProof` in the capture directory, so the
validator can hold each child thread to the proof its router retained.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from typing import Any, Final

from hpbench.reference._history import is_user_message, responses_in_history

MAX_CONSULTS_PER_THREAD: Final = 2
MENTOR_BRIEF: Final = (
    "You are a mentor for a coding agent. Read the task below and answer with at most "
    "three short pieces of advice for solving it; do not write code."
)
HANDOFF_PREFIX: Final = "Mentor advice (from the router's mentor consultation):\n"
_NAMESPACE: Final = uuid.UUID("6f1d2b1e-7c1a-4b55-9d7e-2a4d1c0b9e11")


def child_thread_id(root: str, number: int) -> str:
    """The deterministic thread id of a root thread's ``number``-th consultation."""
    return str(uuid.uuid5(_NAMESPACE, f"{root}/mentor/{number}"))


def _last_user_message(items: list[Any]) -> dict[str, Any] | None:
    for item in reversed(items):
        if is_user_message(item):
            return dict(item)
    return None


def starts_turn(items: list[Any]) -> bool:
    """Whether a request is the first of its turn: no model output after the last user
    message (later requests of the turn carry the model's calls and their results)."""
    last_user = None
    for index, item in enumerate(items):
        if is_user_message(item):
            last_user = index
    if last_user is None:
        return False
    return responses_in_history(items[last_user + 1 :]) == 0


class Schedule:
    """Which requests get a consultation: per root thread, turn starts, bounded."""

    def __init__(self, model: str | None) -> None:
        self.model = model
        self._consults: Counter[str] = Counter()

    def next_consult(self, root: str, is_root: bool, items: list[Any]) -> int | None:
        """The consultation number this request gets, or None (and then nothing is sent)."""
        if self.model is None or not is_root or not starts_turn(items):
            return None
        if self._consults[root] >= MAX_CONSULTS_PER_THREAD:
            return None
        self._consults[root] += 1
        return self._consults[root]


def child_body(model: str, items: list[Any]) -> bytes | None:
    """The consultation's request body: the brief and the turn's user message."""
    user = _last_user_message(items)
    if user is None:
        return None
    body = {
        "model": model,
        "stream": True,
        "store": False,
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": MENTOR_BRIEF}],
            },
            user,
        ],
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def handoff_item(advice: str) -> dict[str, Any]:
    """The developer message that hands the mentor's advice to the main model."""
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": HANDOFF_PREFIX + advice}],
    }


def advice_of(items: list[dict[str, Any]]) -> str | None:
    """The mentor's answer: the text of its assistant messages, or None without one."""
    texts = [
        str(part.get("text", ""))
        for item in items
        if item.get("type") == "message" and item.get("role") == "assistant"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    ]
    text = "".join(texts).strip()
    return text or None
