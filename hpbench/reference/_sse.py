"""Server-sent events: encoding for the provider, incremental decoding for the router."""

from __future__ import annotations

import json
from typing import Any

from hpbench._jsonio import canonical_json


def encode_event(data: dict[str, Any]) -> bytes:
    """One event with an ``event:`` line named after its type, as the Responses API sends."""
    kind = data.get("type", "message")
    return f"event: {kind}\ndata: {canonical_json(data)}\n\n".encode()


class EventDecoder:
    """Turns relayed bytes into event payloads without changing the bytes relayed.

    ``feed`` takes any slice of the stream and returns the ``data`` payloads of
    the events it completed, decoded as JSON where possible (a payload that is
    not JSON is returned as None so that a count of malformed events is kept).
    """

    def __init__(self) -> None:
        self._buffer = b""
        self.malformed = 0

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """The events completed by ``data``."""
        self._buffer += data.replace(b"\r", b"")  # JSON payloads never hold a raw CR
        events: list[dict[str, Any]] = []
        while b"\n\n" in self._buffer:
            block, self._buffer = self._buffer.split(b"\n\n", 1)
            payload = self._payload(block)
            if payload is None:
                continue
            try:
                value = json.loads(payload)
            except ValueError:
                self.malformed += 1
                continue
            if isinstance(value, dict):
                events.append(value)
            else:
                self.malformed += 1
        return events

    @property
    def pending(self) -> int:
        """Bytes received that do not yet end an event."""
        return len(self._buffer)

    @staticmethod
    def _payload(block: bytes) -> str | None:
        lines = [
            line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")
        ]
        if not lines:
            return None
        text = b"\n".join(lines).decode("utf-8", errors="replace")
        return None if text.strip() == "[DONE]" else text
