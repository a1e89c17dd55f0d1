"""The small HTTP/1.1 and SSE layer under both servers."""

from __future__ import annotations

import asyncio

import pytest

from hpbench.reference import _http, _server, _upstream
from hpbench.reference._sse import EventDecoder, encode_event


def feed(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def collect(data: bytes, headers: _http.Headers) -> list[bytes]:
    return [chunk async for chunk in _http.iter_body(feed(data), headers)]


CHUNKED = _http.Headers((("Transfer-Encoding", "chunked"),))


class TestBodies:
    def test_chunked_with_extension_and_trailer(self):
        """Chunk extensions and trailer fields are accepted."""
        data = b"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: 1\r\n\r\n"
        assert [b"abc", b"de"] == asyncio.run(collect(data, CHUNKED))

    def test_chunked_cut_short_is_incomplete(self):
        """A chunked body without its last chunk is a dropped stream."""
        with pytest.raises(_http.IncompleteBodyError):
            asyncio.run(collect(b"3\r\nabc\r\n", CHUNKED))
        with pytest.raises(_http.IncompleteBodyError):
            asyncio.run(collect(b"5\r\nab", CHUNKED))

    def test_content_length_short_is_incomplete(self):
        """Fewer bytes than content-length is incomplete too."""
        headers = _http.Headers((("content-length", "10"),))
        with pytest.raises(_http.IncompleteBodyError):
            asyncio.run(collect(b"abc", headers))

    def test_request_parsing(self):
        """A request with a body; None at a clean end of the connection."""

        async def both() -> tuple[_http.Request | None, _http.Request | None]:
            reader = feed(
                b"POST /v1/responses?x=1 HTTP/1.1\r\nHost: r\r\nContent-Length: 2\r\n"
                b"Connection: close\r\n\r\n{}"
            )
            return await _http.read_request(reader), await _http.read_request(reader)

        request, after = asyncio.run(both())
        assert request is not None
        assert ("POST", "/v1/responses", b"{}") == (request.method, request.path, request.body)
        assert not request.keep_alive
        assert after is None

    @pytest.mark.parametrize(
        ("version", "connection", "keep_alive"),
        [
            ("HTTP/1.1", None, True),
            ("HTTP/1.1", "close", False),
            ("HTTP/1.0", None, False),
            ("HTTP/1.0", "Keep-Alive", True),
        ],
    )
    def test_keep_alive_by_version(self, version, connection, keep_alive):
        """HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 closes it unless
        asked to keep it (a bash /dev/tcp probe reads until the router closes)."""
        header = b"" if connection is None else f"Connection: {connection}\r\n".encode()
        head = f"GET /api/metrics {version}\r\nHost: r\r\n".encode() + header + b"\r\n"

        async def read() -> _http.Request | None:
            return await _http.read_request(feed(head))

        request = asyncio.run(read())
        assert request is not None
        assert keep_alive == request.keep_alive

    def test_malformed_request_line(self):
        """Garbage is a protocol error."""

        async def read() -> _http.Request | None:
            return await _http.read_request(feed(b"HELLO\r\n\r\n"))

        with pytest.raises(_http.HttpProtocolError):
            asyncio.run(read())


class TestHeaders:
    def test_end_to_end_drops_hop_by_hop_only(self):
        """Relayed headers keep order and case; hop-by-hop and framing ones go."""
        headers = _http.Headers(
            (
                ("Host", "router"),
                ("Authorization", "Bearer k"),
                ("Connection", "keep-alive"),
                ("x-codex-turn-state", "ts_1"),
                ("Content-Length", "3"),
                ("Transfer-Encoding", "chunked"),
            )
        )
        assert [("Authorization", "Bearer k"), ("x-codex-turn-state", "ts_1")] == (
            headers.end_to_end()
        )
        assert "ts_1" == headers.get("X-Codex-Turn-State")


class TestAddresses:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [("0.0.0.0:8080", ("0.0.0.0", 8080)), ("[::1]:9", ("::1", 9))],  # noqa: S104
    )
    def test_listen(self, text: str, expected: tuple[str, int]):
        """HOST:PORT, IPv6 in brackets."""
        assert expected == _server.parse_listen(text)

    @pytest.mark.parametrize("text", ["8080", "host:", ":80", "host:http"])
    def test_listen_refused(self, text: str):
        """Anything else is refused."""
        with pytest.raises(ValueError, match="HOST:PORT"):
            _server.parse_listen(text)

    def test_upstream(self):
        """The base path is kept without a trailing slash; default ports apply."""
        upstream = _upstream.Upstream.parse("http://provider:8080/control/v1/")
        assert ("provider", 8080, "/control/v1") == (
            upstream.host,
            upstream.port,
            upstream.base_path,
        )
        assert "provider:8080" == upstream.authority
        assert 443 == _upstream.Upstream.parse("https://p/v1").port

    @pytest.mark.parametrize(
        "url", ["ftp://p/v1", "http:///v1", "http://u:p@p/v1", "http://p/v1?x=1"]
    )
    def test_upstream_refused(self, url: str):
        """Only plain http(s) URLs without credentials, queries or fragments."""
        with pytest.raises(ValueError, match="upstream"):
            _upstream.Upstream.parse(url)


class TestEvents:
    def test_decoder_across_splits_and_crlf(self):
        """Events split anywhere, with CRLF line ends, decode the same."""
        stream = encode_event({"type": "a", "n": 1}) + encode_event({"type": "b"})
        stream = stream.replace(b"\n", b"\r\n") + b"data: [DONE]\r\n\r\ndata: {bad\r\n\r\n"
        decoder = EventDecoder()
        events = []
        for index in range(len(stream)):
            events += decoder.feed(stream[index : index + 1])
        assert [{"type": "a", "n": 1}, {"type": "b"}] == events
        assert 1 == decoder.malformed
        assert 0 == decoder.pending
