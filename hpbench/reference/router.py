"""The reference router: test equipment that honours a router's flags and capture contract.

Run it as::

    python -m hpbench.reference.router --listen 0.0.0.0:8080 \\
        --capture-output /capture --mode passthrough --protocol native \\
        --upstream http://provider:8080/control/v1

One process, one listener. Codex's provider ``base_url`` is
``http://<router>:<port>/v1``; on that listener the router serves

- ``POST …/responses``: the Responses endpoint, relayed to
  ``<upstream>/responses`` as a byte-for-byte streaming relay;
- ``GET /api/metrics``: the ``hpatch.capture.metrics.v4`` snapshot;
- ``GET /healthz``: ``{"ok": true}`` once it listens (readiness).

What it guarantees:

- **Turn state is Codex's.** Every end-to-end request header, including
  ``x-codex-turn-state``, goes upstream unchanged on every attempt, retries
  included, and the provider's response headers come back unchanged. The router
  keeps no turn state: it never creates the header, never remembers it between
  requests and so never carries it into a new turn.
- **Credentials go upstream only**, and never into logs or capture.
- **Retries.** A connection failure, or a 502/503/504 before anything was
  relayed, is retried upstream (``--upstream-retries``, default 1), honouring
  ``retry-after`` up to a cap. Every attempt is a provider record of the same
  exchange. Any other status, and any failure after the first byte was relayed,
  goes to Codex as it came: a stream that breaks upstream breaks downstream.
- **Capture.** Records and the snapshot follow :mod:`hpbench.capture`
  (schema-6 records, ``hpatch.capture.metrics.v4``), written under
  ``--capture-output``; they hold sizes, counts, tool shapes, usage and thread
  identities, never conversation text or header values.

``--mode hpatch`` relays exactly like ``passthrough`` for now; its mode and
``--protocol`` are recorded in every record and in the snapshot.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import structlog

from hpbench._jsonio import canonical_json
from hpbench._logging import configure
from hpbench.capture import (
    AttemptOutcome,
    CaptureErrorCategory,
    CaptureWriter,
    ExchangeCapture,
    ExchangeOutcome,
    Protocol,
    RouterMode,
    read_usage,
    thread_from_headers,
    tool_shapes,
)
from hpbench.reference import _http
from hpbench.reference._observe import StreamFacts, body_model, estimate_tokens
from hpbench.reference._sse import EventDecoder

log = structlog.get_logger("hpbench.reference.router")

TURN_STATE_HEADER = "x-codex-turn-state"
RETRYABLE_STATUSES = frozenset({502, 503, 504})
MAX_RETRY_AFTER = 5.0
BACKOFF_BASE = 0.25
THREAD_HEADERS = ("thread-id", "session-id", "x-openai-subagent")


class _ClientGoneError(Exception):
    """The client closed its connection while the router was answering."""


@attrs.define
class _Attempt:
    """What one upstream attempt showed, until it is written as a provider record."""

    http_status: int | None = None
    outcome: AttemptOutcome = AttemptOutcome.CONNECT_ERROR
    turn_state_returned: bool = False
    header_model: str | None = None
    provider_request_id: str | None = None
    stream: StreamFacts = attrs.field(factory=StreamFacts)
    stream_bytes: int = 0
    delivered: bool = False
    complete: bool = True
    is_stream: bool = False


@attrs.define
class _Exchange:
    """The client's side of an exchange, until it is written as an exchange record."""

    outcome: ExchangeOutcome = ExchangeOutcome.FAILED
    client_status: int | None = None
    client_stream_bytes: int = 0
    delivered: _Attempt | None = None


class Router:
    """Relays Responses requests to one upstream and captures each exchange."""

    def __init__(
        self,
        upstream: _http.Upstream,
        capture: CaptureWriter,
        *,
        retries: int = 1,
        connect_timeout: float = 10.0,
        head_timeout: float = 300.0,
        idle_timeout: float = 300.0,
    ) -> None:
        self.upstream = upstream
        self.capture = capture
        self.retries = retries
        self.connect_timeout = connect_timeout
        self.head_timeout = head_timeout
        self.idle_timeout = idle_timeout

    async def handle(
        self, request: _http.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; return whether the connection may be reused."""
        path = request.path
        if request.method == "GET" and path == "/api/metrics":
            body = canonical_json(self.capture.snapshot_json()).encode()
            await _http.send_full(writer, 200, body)
            return True
        if request.method == "GET" and path == "/healthz":
            await _http.send_full(writer, 200, b'{"ok":true}')
            return True
        if path.rstrip("/").endswith("/responses"):
            if request.method != "POST":
                await _json_error(writer, 405, "method_not_allowed", "POST only")
                return True
            return await self.relay(request, reader, writer)
        await _json_error(writer, 404, "not_found", "this router serves /v1/responses")
        return True

    def _begin(self, request: _http.Request) -> ExchangeCapture | None:
        headers = request.headers
        thread_headers = {
            name: value for name in THREAD_HEADERS if (value := headers.get(name)) is not None
        }
        try:
            thread = thread_from_headers(thread_headers)
        except ValueError:
            self.capture.note_skipped_request()
            log.warning("request names no thread; relayed without capture")
            return None
        size = len(request.body)
        return self.capture.begin(
            thread=thread,
            requested_model=body_model(request.body),
            request_bytes=size,
            request_tokens=estimate_tokens(size),
            turn_state_sent=headers.get(TURN_STATE_HEADER) is not None,
        )

    async def relay(
        self, request: _http.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Relay one Responses request: attempts upstream, then the chosen response back."""
        capture = self._begin(request)
        exchange = _Exchange()
        attempts = 0
        reusable = False
        try:
            for number in range(self.retries + 1):
                attempts += 1
                attempt = _Attempt()
                try:
                    done, reusable = await self._attempt(
                        attempt, number, request, exchange=exchange, reader=reader, writer=writer
                    )
                finally:
                    self._record_attempt(capture, request, attempt)
                if done:
                    break
        except (ConnectionError, OSError):
            exchange.outcome = ExchangeOutcome.CLIENT_DISCONNECTED
            raise
        except Exception:
            # A router fault, not a provider or client one: the capture must say so.
            if capture is not None:
                self.capture.record_error(CaptureErrorCategory.INTERNAL, exchange=capture.exchange)
            raise
        finally:
            self._finish(capture, exchange)
            log.info(
                "exchange",
                exchange=None if capture is None else capture.exchange,
                attempts=attempts,
                outcome=exchange.outcome.value,
                status=exchange.client_status,
                turn_state_sent=request.headers.get(TURN_STATE_HEADER) is not None,
            )
        return reusable and request.keep_alive

    async def _attempt(
        self,
        attempt: _Attempt,
        number: int,
        request: _http.Request,
        *,
        exchange: _Exchange,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> tuple[bool, bool]:
        """One upstream attempt; returns (exchange finished, connection reusable)."""
        last = number == self.retries
        try:
            upstream = await _http.open_exchange(
                self.upstream,
                "POST",
                f"{self.upstream.base_path}/responses",
                request.headers.end_to_end(),
                request.body,
                connect_timeout=self.connect_timeout,
                head_timeout=self.head_timeout,
            )
        except (OSError, TimeoutError, _http.IncompleteBodyError, _http.HttpProtocolError):
            attempt.outcome = AttemptOutcome.CONNECT_ERROR
            if not last:
                await asyncio.sleep(BACKOFF_BASE * 2**number)
                return False, False
            await _json_error(writer, 502, "upstream_unreachable", "upstream unreachable")
            exchange.client_status = 502
            return True, True
        response = upstream.response
        attempt.http_status = response.status
        attempt.turn_state_returned = response.headers.get(TURN_STATE_HEADER) is not None
        attempt.header_model = response.headers.get("openai-model")
        attempt.provider_request_id = response.headers.get("x-request-id")
        if response.status in RETRYABLE_STATUSES and not last:
            await self._discard(upstream, attempt)
            await asyncio.sleep(_retry_delay(response.headers, number))
            return False, False
        attempt.delivered = True
        exchange.delivered = attempt
        return True, await self._deliver(upstream, attempt, exchange, reader, writer)

    def _record_attempt(
        self, capture: ExchangeCapture | None, request: _http.Request, attempt: _Attempt
    ) -> None:
        if capture is None:
            return
        facts = attempt.stream
        size = len(request.body)
        capture.attempt(
            request_model=body_model(request.body),
            request_bytes=size,
            request_tokens=estimate_tokens(size),
            http_status=attempt.http_status,
            outcome=attempt.outcome,
            usage=read_usage(facts.response),
            response_model=facts.response_model,
            header_model=attempt.header_model,
            provider_request_id=attempt.provider_request_id,
            emitted_tools=tool_shapes(facts.output_items),
            output_bytes=facts.output_bytes(),
            output_text_bytes=facts.output_text_bytes(),
            stream_bytes=attempt.stream_bytes,
            delivered=attempt.delivered,
            turn_state_forwarded=request.headers.get(TURN_STATE_HEADER) is not None,
            turn_state_returned=attempt.turn_state_returned,
            complete=attempt.complete,
        )

    def _finish(self, capture: ExchangeCapture | None, exchange: _Exchange) -> None:
        if capture is None:
            return
        delivered = exchange.delivered
        facts = delivered.stream if delivered is not None else StreamFacts()
        output_bytes = facts.output_bytes()
        text_bytes = facts.output_text_bytes()
        capture.finish(
            outcome=exchange.outcome,
            client_status=exchange.client_status,
            client_output_bytes=output_bytes,
            client_output_text_bytes=text_bytes,
            client_stream_bytes=exchange.client_stream_bytes,
            delivered_tools=tool_shapes(facts.output_items),
            client_output_tokens=estimate_tokens(output_bytes),
            provider_output_tokens=estimate_tokens(output_bytes),
            client_output_text_tokens=estimate_tokens(text_bytes),
            provider_output_text_tokens=estimate_tokens(text_bytes),
        )

    async def _discard(self, upstream: _http.UpstreamExchange, attempt: _Attempt) -> None:
        attempt.outcome = AttemptOutcome.HTTP_ERROR
        try:
            async with asyncio.timeout(self.idle_timeout):
                async for data in upstream.body():
                    attempt.stream_bytes += len(data)
        except (OSError, TimeoutError, _http.IncompleteBodyError, _http.HttpProtocolError):
            pass
        finally:
            await upstream.close()

    async def _deliver(
        self,
        upstream: _http.UpstreamExchange,
        attempt: _Attempt,
        exchange: _Exchange,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Relay the upstream response to the client; return whether the client can go on."""
        response = upstream.response
        is_stream = "text/event-stream" in (response.headers.get("content-type") or "").lower()
        attempt.is_stream = is_stream
        decoder = EventDecoder()
        sender = _http.ChunkedSender(writer)
        watcher = asyncio.ensure_future(_http.watch_for_close(reader))
        broken = False
        terminal_sent = False
        try:
            await _guard(
                watcher, _to_client(sender.start(response.status, response.headers.end_to_end()))
            )
            exchange.client_status = response.status
            chunks = upstream.body().__aiter__()
            while True:
                try:
                    data = await _guard(watcher, asyncio.wait_for(anext(chunks), self.idle_timeout))
                except StopAsyncIteration:
                    break
                attempt.stream_bytes += len(data)
                if is_stream:
                    for event in decoder.feed(data):
                        attempt.stream.add(event)
                await _guard(watcher, _to_client(sender.send(data)))
                exchange.client_stream_bytes += len(data)
                terminal_sent = attempt.stream.terminal is not None
            await _guard(watcher, _to_client(sender.finish()))
        except _ClientGoneError:
            # Codex closes the connection as soon as it has the terminal event; only a
            # client that leaves before that event has disconnected from the exchange.
            broken = True
            if not terminal_sent:
                exchange.outcome = ExchangeOutcome.CLIENT_DISCONNECTED
        except (OSError, TimeoutError, _http.IncompleteBodyError, _http.HttpProtocolError):
            # The upstream stream broke: break the client's stream the same way.
            exchange.outcome = ExchangeOutcome.FAILED
            broken = True
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            await upstream.close()
            if broken:
                await _http.close_writer(writer, abort=True)
        if decoder.malformed:
            attempt.complete = False
        attempt.outcome = _attempt_outcome(attempt, broken=broken and not terminal_sent)
        if not broken or terminal_sent:
            completed = response.status < 400 and attempt.outcome is AttemptOutcome.COMPLETED
            exchange.outcome = ExchangeOutcome.COMPLETED if completed else ExchangeOutcome.FAILED
        return not broken


async def _guard(watcher: asyncio.Future[None], operation: Any) -> Any:
    """Run ``operation`` unless the client leaves first (then raise :class:`_ClientGoneError`)."""
    task = asyncio.ensure_future(operation)
    done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    raise _ClientGoneError


async def _to_client(operation: Any) -> None:
    """A write to the client; a broken client connection means the client left."""
    try:
        await operation
    except (ConnectionError, OSError) as exc:
        raise _ClientGoneError from exc


def _attempt_outcome(attempt: _Attempt, *, broken: bool) -> AttemptOutcome:
    status = attempt.http_status or 0
    if status >= 300 or status < 200:
        return AttemptOutcome.HTTP_ERROR
    facts = attempt.stream
    if facts.terminal is not None:
        return AttemptOutcome(facts.terminal)
    if facts.error_event or broken or attempt.is_stream:
        return AttemptOutcome.STREAM_ERROR
    return AttemptOutcome.COMPLETED


def _retry_delay(headers: _http.Headers, number: int) -> float:
    value = headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, min(float(value), MAX_RETRY_AFTER))
        except ValueError:
            pass
    return float(BACKOFF_BASE * 2**number)


async def _json_error(writer: asyncio.StreamWriter, status: int, code: str, message: str) -> None:
    body = canonical_json({"error": {"type": "router_error", "code": code, "message": message}})
    await _http.send_full(writer, status, body.encode())


async def serve_connection(
    router: Router, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve requests on one client connection until either side ends it."""
    try:
        while True:
            request = await _http.read_request(reader)
            if request is None:
                break
            if not await router.handle(request, reader, writer):
                break
    except (_http.HttpProtocolError, _http.IncompleteBodyError) as exc:
        log.warning("bad client request", error=str(exc))
    except (ConnectionError, OSError):
        pass
    except Exception:
        log.exception("internal error; connection closed")
    finally:
        if not writer.is_closing():
            await _http.close_writer(writer)


async def serve(router: Router, host: str, port: int, ready: asyncio.Event | None = None) -> None:
    """Listen until cancelled."""
    server = await asyncio.start_server(
        lambda r, w: serve_connection(router, r, w), host, port, limit=_http.MAX_LINE
    )
    bound = ", ".join(str(sock.getsockname()) for sock in server.sockets)
    log.info("listening", address=bound, upstream=str(router.upstream))
    if ready is not None:
        ready.set()
    async with server:
        await server.serve_forever()


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        msg = "must be >= 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def build_parser() -> argparse.ArgumentParser:
    """The router's command line."""
    parser = argparse.ArgumentParser(
        prog="python -m hpbench.reference.router",
        description="Reference router (test equipment): streaming relay plus capture.",
    )
    parser.add_argument("--listen", required=True, metavar="HOST:PORT")
    parser.add_argument("--capture-output", required=True, type=Path, metavar="DIR")
    parser.add_argument("--mode", required=True, choices=[m.value for m in RouterMode])
    parser.add_argument("--protocol", required=True, choices=[p.value for p in Protocol])
    parser.add_argument("--upstream", required=True, metavar="URL", help="base URL, e.g. …/v1")
    parser.add_argument(
        "--upstream-retries",
        type=_non_negative,
        default=1,
        metavar="N",
        help="extra upstream attempts after a connection failure or 502/503/504 (default 1)",
    )
    parser.add_argument(
        "--upstream-idle-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="give up on a silent upstream stream after this long (default 300)",
    )
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the router until SIGTERM or SIGINT."""
    args = build_parser().parse_args(argv)
    configure(level=args.log_level)
    try:
        host, port = _http.parse_listen(args.listen)
        upstream = _http.Upstream.parse(args.upstream)
        capture = CaptureWriter(
            args.capture_output, mode=RouterMode(args.mode), protocol=Protocol(args.protocol)
        )
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"router: {exc}\n")
        return 2
    router = Router(
        upstream,
        capture,
        retries=args.upstream_retries,
        head_timeout=args.upstream_idle_timeout,
        idle_timeout=args.upstream_idle_timeout,
    )

    try:
        return _http.run_until_signal(serve(router, host, port), "router")
    finally:
        capture.close()


if __name__ == "__main__":
    sys.exit(main())
