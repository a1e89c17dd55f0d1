"""A small HTTP/1.1 message layer on asyncio streams, enough for a streaming relay.

The standard library's ``http.server`` and ``http.client`` hide the two things
test equipment must control: sending a stream that ends abruptly (a fault) and
noticing that a stream ended abruptly (so a relay can pass the fault on). This
module keeps both explicit: bodies are sent chunked, and a chunked body that
stops before its last chunk raises :class:`IncompleteBodyError`.

It reads and writes messages only; opening a connection to an upstream lives in
:mod:`hpbench.reference._upstream`, listening and the per-connection loop in
:mod:`hpbench.reference._server`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable

import attrs

from hpbench._jsonio import canonical_json

MAX_LINE = 64 * 1024
MAX_HEADERS = 200
MAX_BODY = 256 * 1024 * 1024

# Hop-by-hop headers (RFC 9110 section 7.6.1) and the framing headers a relay
# recomputes; everything else is end to end and is relayed unchanged.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "host",
    }
)

# The header Codex uses to pin a turn to one backend; the provider issues it and the
# router must relay it untouched, so both watch for it.
TURN_STATE_HEADER = "x-codex-turn-state"

REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class HttpProtocolError(Exception):
    """The peer sent something that is not HTTP/1.1 this layer understands."""


class IncompleteBodyError(Exception):
    """A body ended before its framing said it would (a dropped stream)."""


@attrs.frozen
class Headers:
    """Header fields in arrival order, names as sent, looked up case-insensitively."""

    items: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str | None:
        """The first value of ``name``, or None."""
        wanted = name.lower()
        for key, value in self.items:
            if key.lower() == wanted:
                return value
        return None

    def names(self) -> list[str]:
        """The lower-cased names, sorted and without repeats."""
        return sorted({key.lower() for key, _ in self.items})

    def end_to_end(self, *, drop: Iterable[str] = ()) -> list[tuple[str, str]]:
        """The fields a relay passes on: hop-by-hop ones and ``drop`` removed."""
        dropped = HOP_BY_HOP | {name.lower() for name in drop}
        return [(key, value) for key, value in self.items if key.lower() not in dropped]


@attrs.frozen
class Request:
    """One request as received (the body is read whole: Responses bodies are JSON)."""

    method: str
    target: str
    headers: Headers
    body: bytes
    version: str = "HTTP/1.1"

    @property
    def path(self) -> str:
        """The target without its query string."""
        return self.target.split("?", 1)[0]

    @property
    def keep_alive(self) -> bool:
        """Whether the client allows another request on this connection: HTTP/1.1 unless
        it says ``close``, HTTP/1.0 only when it asks for ``keep-alive``."""
        connection = (self.headers.get("connection") or "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


@attrs.frozen
class Response:
    """Status and headers of a response whose body is still to be read."""

    status: int
    reason: str
    headers: Headers


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            msg = "connection closed in the middle of a line"
            raise IncompleteBodyError(msg) from exc
        return b""
    except asyncio.LimitOverrunError as exc:
        msg = "line too long"
        raise HttpProtocolError(msg) from exc
    return line


async def _read_headers(reader: asyncio.StreamReader) -> Headers:
    items: list[tuple[str, str]] = []
    while True:
        line = await _read_line(reader)
        if line in (b"\r\n", b"\n"):
            return Headers(tuple(items))
        if not line:
            msg = "connection closed inside the header block"
            raise HttpProtocolError(msg)
        name, sep, value = line.decode("latin-1").partition(":")
        if not sep or not name.strip():
            msg = "malformed header line"
            raise HttpProtocolError(msg)
        items.append((name.strip(), value.strip()))
        if len(items) > MAX_HEADERS:
            msg = "too many header fields"
            raise HttpProtocolError(msg)


def _content_length(headers: Headers) -> int | None:
    value = headers.get("content-length")
    if value is None:
        return None
    if not value.isdigit():
        msg = f"invalid content-length {value!r}"
        raise HttpProtocolError(msg)
    return int(value)


def _is_chunked(headers: Headers) -> bool:
    return "chunked" in (headers.get("transfer-encoding") or "").lower()


async def iter_chunked(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Decode a chunked body; raise :class:`IncompleteBodyError` if it stops early."""
    while True:
        line = await _read_line(reader)
        if not line:
            msg = "stream closed before its last chunk"
            raise IncompleteBodyError(msg)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError as exc:
            msg = "malformed chunk size"
            raise HttpProtocolError(msg) from exc
        if size == 0:
            while (await _read_line(reader)) not in (b"\r\n", b"\n", b""):
                pass  # trailer fields are read and ignored
            return
        try:
            data = await reader.readexactly(size)
            await reader.readexactly(2)
        except asyncio.IncompleteReadError as exc:
            msg = "stream closed inside a chunk"
            raise IncompleteBodyError(msg) from exc
        yield data


async def iter_body(reader: asyncio.StreamReader, headers: Headers) -> AsyncIterator[bytes]:
    """The body of a message with these headers, piece by piece as it arrives."""
    if _is_chunked(headers):
        async for data in iter_chunked(reader):
            yield data
        return
    length = _content_length(headers)
    if length is None:
        while data := await reader.read(65536):
            yield data
        return
    remaining = length
    while remaining > 0:
        data = await reader.read(min(remaining, 65536))
        if not data:
            msg = f"body ended {remaining} bytes short of its content-length"
            raise IncompleteBodyError(msg)
        remaining -= len(data)
        yield data


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on a connection, or None when the client closed it."""
    line = await _read_line(reader)
    while line in (b"\r\n", b"\n"):
        line = await _read_line(reader)
    if not line:
        return None
    parts = line.decode("latin-1").rstrip("\r\n").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        msg = "malformed request line"
        raise HttpProtocolError(msg)
    headers = await _read_headers(reader)
    length = _content_length(headers)
    if length is not None and length > MAX_BODY:
        msg = "request body too large"
        raise HttpProtocolError(msg)
    body = bytearray()
    if length is not None or _is_chunked(headers):
        async for data in iter_body(reader, headers):
            body += data
            if len(body) > MAX_BODY:
                msg = "request body too large"
                raise HttpProtocolError(msg)
    return Request(parts[0].upper(), parts[1], headers, bytes(body), parts[2])


async def read_response_head(reader: asyncio.StreamReader) -> Response:
    """The status line and headers of a response (the body is left on ``reader``)."""
    line = await _read_line(reader)
    if not line:
        msg = "upstream closed the connection before answering"
        raise IncompleteBodyError(msg)
    parts = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        msg = "malformed status line"
        raise HttpProtocolError(msg)
    headers = await _read_headers(reader)
    return Response(int(parts[1]), parts[2] if len(parts) > 2 else "", headers)


def _head(status: int, headers: Iterable[tuple[str, str]], reason: str | None = None) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason or REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send_full(
    writer: asyncio.StreamWriter,
    status: int,
    body: bytes,
    headers: Iterable[tuple[str, str]] = (),
    *,
    content_type: str = "application/json",
    reason: str | None = None,
    close: bool = False,
) -> None:
    """A complete response with a content-length."""
    fields = [*headers, ("content-type", content_type), ("content-length", str(len(body)))]
    if close:
        fields.append(("connection", "close"))
    writer.write(_head(status, fields, reason) + body)
    await writer.drain()


async def send_error(
    writer: asyncio.StreamWriter,
    status: int,
    *,
    kind: str,
    code: str,
    message: str,
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    """An error in the Responses API's shape: ``{"error": {"type", "code", "message"}}``."""
    body = canonical_json({"error": {"type": kind, "code": code, "message": message}})
    await send_full(writer, status, body.encode(), headers)


class ChunkedSender:
    """A streaming response: head first, then chunks, then the last chunk.

    Leaving out :meth:`finish` and closing the connection is how a stream is
    dropped on purpose.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def start(
        self, status: int, headers: Iterable[tuple[str, str]], reason: str | None = None
    ) -> None:
        """Send the status line and headers."""
        fields = [*headers, ("transfer-encoding", "chunked")]
        self._writer.write(_head(status, fields, reason))
        await self._writer.drain()

    async def send(self, data: bytes) -> None:
        """Send one chunk (an empty ``data`` sends nothing)."""
        if data:
            self._writer.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
            await self._writer.drain()

    async def finish(self) -> None:
        """Send the last chunk: the stream is complete."""
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()


async def close_writer(writer: asyncio.StreamWriter, *, abort: bool = False) -> None:
    """Close a connection; ``abort`` resets it without a clean shutdown."""
    if abort:
        writer.transport.abort()
        return
    writer.close()
    with contextlib.suppress(ConnectionError, OSError, asyncio.CancelledError):
        await writer.wait_closed()


async def watch_for_close(reader: asyncio.StreamReader) -> None:
    """Return when the peer closes its side (clients do not pipeline on a stream)."""
    with contextlib.suppress(ConnectionError, OSError):
        while await reader.read(1):
            pass
