"""The relay's client side: one upstream request per connection, its response streamed back.

The reference router opens a new connection for every upstream attempt and
reads the response head before it decides whether to retry, so the client here
returns the head at once and leaves the body on the connection
(:class:`UpstreamExchange`). Messages are read and written by
:mod:`hpbench.reference._http`.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Iterable
from urllib.parse import urlsplit

import attrs

from hpbench.reference._http import (
    MAX_LINE,
    Response,
    close_writer,
    iter_body,
    read_response_head,
)


@attrs.frozen
class Upstream:
    """Where a relay sends requests: scheme, host, port and base path."""

    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, url: str) -> Upstream:
        """``http://host:port/base`` (https also works; nothing else)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            msg = f"upstream must be an http(s) URL with a host, got {url!r}"
            raise ValueError(msg)
        if parts.query or parts.fragment or parts.username or parts.password:
            msg = "upstream URL must not carry a query, fragment or credentials"
            raise ValueError(msg)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def authority(self) -> str:
        """``host:port`` as sent in the Host header."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.authority}{self.base_path}"


@attrs.define
class UpstreamExchange:
    """An open upstream request: the response head and a reader for its body."""

    response: Response
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def body(self) -> AsyncIterator[bytes]:
        """The response body as it arrives."""
        return iter_body(self.reader, self.response.headers)

    async def close(self) -> None:
        """Drop the connection (one connection per upstream request)."""
        await close_writer(self.writer, abort=True)


async def open_exchange(
    upstream: Upstream,
    method: str,
    path: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    *,
    connect_timeout: float,
    head_timeout: float,
) -> UpstreamExchange:
    """Send one request on a new connection and read the response head."""
    context = ssl.create_default_context() if upstream.scheme == "https" else None
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(
            upstream.host, upstream.port, ssl=context, limit=MAX_LINE, happy_eyeballs_delay=None
        ),
        connect_timeout,
    )
    try:
        fields = [
            ("host", upstream.authority),
            *headers,
            ("content-length", str(len(body))),
            ("connection", "close"),
        ]
        writer.write(
            (
                f"{method} {path} HTTP/1.1\r\n"
                + "".join(f"{name}: {value}\r\n" for name, value in fields)
                + "\r\n"
            ).encode("latin-1")
            + body
        )
        await writer.drain()
        response = await asyncio.wait_for(read_response_head(reader), head_timeout)
    except BaseException:
        await close_writer(writer, abort=True)
        raise
    return UpstreamExchange(response, reader, writer)
