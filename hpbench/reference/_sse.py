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


class EventRewriter:
    """Splits a relayed stream into whole events, so a router can rewrite some of them.

    ``feed`` returns, for each event the bytes completed, its raw block (ending with the
    blank line) and its decoded payload (None when it has no JSON object payload). A
    block passed on as it came stays byte for byte what the upstream sent; only a
    rewritten event is encoded anew (:func:`encode_event`). ``rest`` is whatever never
    ended an event, for the stream's end.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self.malformed = 0

    def feed(self, data: bytes) -> list[tuple[bytes, dict[str, Any] | None]]:
        """The events completed by ``data``: (raw block, payload or None)."""
        self._buffer += data
        events: list[tuple[bytes, dict[str, Any] | None]] = []
        while True:
            end, separator = _event_end(self._buffer)
            if end < 0:
                return events
            block = self._buffer[: end + separator]
            self._buffer = self._buffer[end + separator :]
            payload = EventDecoder._payload(block.replace(b"\r", b"").rstrip(b"\n"))
            value: Any = None
            if payload is not None:
                try:
                    value = json.loads(payload)
                except ValueError:
                    self.malformed += 1
                if value is not None and not isinstance(value, dict):
                    self.malformed += 1
                    value = None
            events.append((block, value))

    def rest(self) -> bytes:
        """Bytes received that never ended an event."""
        rest, self._buffer = self._buffer, b""
        return rest


def _event_end(buffer: bytes) -> tuple[int, int]:
    """Where the first event of ``buffer`` ends and its separator's length; (-1, 0) if none."""
    found = [
        (index, len(sep)) for sep in (b"\n\n", b"\r\n\r\n") if (index := buffer.find(sep)) >= 0
    ]
    return min(found) if found else (-1, 0)
