"""What the reference router reads from a relayed response stream.

The router feeds every SSE event it relays into :class:`StreamFacts` and hands
the result to the capture writer (:mod:`hpbench.capture.writer`), which keeps
only sizes, counts, tool shapes and usage. The output items held here live only
as long as one attempt and are never written anywhere.
"""

from __future__ import annotations

import json
import math
from typing import Any

import attrs

from hpbench._jsonio import canonical_json

BYTES_PER_TOKEN = 4


def estimate_tokens(size: int) -> int:
    """The router's own token estimate for ``size`` bytes (a quarter, rounded up)."""
    return math.ceil(size / BYTES_PER_TOKEN)


@attrs.define
class StreamFacts:
    """Facts taken from the SSE events of one response stream."""

    terminal: str | None = None
    response: dict[str, Any] | None = None
    response_model: str | None = None
    output_items: list[dict[str, Any]] = attrs.field(factory=list)
    error_event: bool = False

    def add(self, event: dict[str, Any]) -> None:
        """Take what matters from one event."""
        kind = event.get("type")
        response = event.get("response")
        if kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            self.output_items.append(event["item"])
        elif kind in ("response.completed", "response.failed", "response.incomplete"):
            self.terminal = str(kind).removeprefix("response.")
            if isinstance(response, dict):
                self.response = response
        elif kind == "error":
            self.error_event = True
        if isinstance(response, dict) and isinstance(response.get("model"), str):
            self.response_model = response["model"]

    def output_bytes(self) -> int:
        """Bytes of the model-origin output array: canonical JSON of the finished items."""
        if not self.output_items:
            return 0
        return len(canonical_json(self.output_items).encode("utf-8"))

    def output_text_bytes(self) -> int:
        """Bytes of assistant ``output_text`` among the finished items."""
        total = 0
        for item in self.output_items:
            if item.get("type") != "message" or item.get("role") != "assistant":
                continue
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "output_text":
                    total += len(str(part.get("text", "")).encode("utf-8"))
        return total


def body_model(body: bytes) -> str | None:
    """The ``model`` of a JSON request body, or None."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    model = value.get("model")
    return model if isinstance(model, str) else None
