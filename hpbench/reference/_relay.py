"""The reference router's relay: one Responses request, its upstream attempts, its answer.

:class:`Router` answers the router's three endpoints. A Responses request is
sent upstream unchanged, retried on a connection failure or a 502/503/504 that
arrived before anything was relayed, and the chosen response is relayed to the
client byte for byte while a watcher notices the client leaving. What each
attempt and the client's side showed is written to the capture by
:mod:`hpbench.reference._observe`. The guarantees are listed in
:mod:`hpbench.reference.router`.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import structlog

from hpbench._jsonio import canonical_json
from hpbench.capture import (
    AttemptOutcome,
    CaptureErrorCategory,
    CaptureWriter,
    ExchangeCapture,
    ExchangeOutcome,
    ThreadRef,
    ThreadRole,
)
from hpbench.capture.children import MENTOR_SUBAGENT, PROOF_SCHEMA, ChildProof, append_proof
from hpbench.capture.models import Count, Ident
from hpbench.capture.prefix import PrefixWatch
from hpbench.reference import _http
from hpbench.reference._exact import ExactRecorder
from hpbench.reference._issues import run_hook
from hpbench.reference._mentor import (
    Schedule,
    advice_of,
    child_body,
    child_thread_id,
    handoff_item,
)
from hpbench.reference._observe import (
    AttemptSeen,
    ExchangeSeen,
    begin_exchange,
    finish_exchange,
    is_event_stream,
    record_attempt,
)
from hpbench.reference._sse import EventDecoder, EventRewriter, encode_event
from hpbench.reference._transform import DROP, Routing, Transform
from hpbench.reference._upstream import Upstream, UpstreamExchange, open_exchange
from hpbench.reference._usage import tokens_for

log = structlog.get_logger("hpbench.reference.router")

RETRYABLE_STATUSES = frozenset({502, 503, 504})
# A consultation is the router's own request: Codex's thread identity and turn state are
# replaced by the child's, and nothing of the parent's turn goes along.
_CHILD_DROPPED_HEADERS = (
    "thread-id",
    "session-id",
    "x-openai-subagent",
    _http.TURN_STATE_HEADER,
    "x-client-request-id",
    "x-codex-window-id",
    "x-codex-turn-metadata",
)
MAX_RETRY_AFTER = 5.0
BACKOFF_BASE = 0.25
# What a failed upstream connection or a broken upstream stream raises.
_UPSTREAM_FAILURES = (OSError, TimeoutError, _http.IncompleteBodyError, _http.HttpProtocolError)


class _ClientGoneError(Exception):
    """The client closed its connection while the router was answering."""


class Router:
    """Relays Responses requests to one upstream and captures each exchange."""

    def __init__(
        self,
        upstream: Upstream,
        capture: CaptureWriter,
        *,
        retries: int = 1,
        mentor_model: str | None = None,
        exact_evidence: Path | None = None,
        report_hook: str | None = None,
        connect_timeout: float = 10.0,
        head_timeout: float = 300.0,
        idle_timeout: float = 300.0,
    ) -> None:
        self.upstream = upstream
        self.capture = capture
        self.transform = Transform(
            capture.mode,
            capture.protocol,
            mentor=mentor_model is not None,
            exact=exact_evidence is not None,
            report_issue=report_hook is not None,
        )
        # Issue reporting on: the diagnose hook each completed report is handed to, and
        # the hook runs not yet finished (a SIGTERM waits for them: drain_reports).
        self.report_hook = report_hook if self.transform.report_issue else None
        self._hook_runs: set[asyncio.Future[int]] = set()
        # Off (None): no recorder, and the transform builds no exact strings at all.
        self.exact = ExactRecorder(exact_evidence) if exact_evidence is not None else None
        self.mentor = Schedule(mentor_model)
        # Whether each request kept its thread's prompt prefix, client and provider side.
        self.prefix = PrefixWatch(capture.directory)
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

    async def relay(
        self, request: _http.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Relay one Responses request: attempts upstream, then the chosen response back."""
        capture = begin_exchange(self.capture, request)
        exchange = ExchangeSeen()
        if self.transform.active:
            thread = request.headers.get("thread-id") or ""
            exchange.routing = self.transform.prepare(request.body, thread)
            if capture is not None:
                await self._consult_mentor(request, capture, exchange.routing)
        if capture is not None and self.exact is not None and exchange.routing is not None:
            self.exact.record(
                exchange=capture.exchange,
                session=capture.client.thread.root_thread_id,
                thread=capture.client.thread.thread_id,
                model=capture.client.requested_model,
                attempts=exchange.routing.exact,
            )
        if capture is not None:
            self.prefix.observe_exchange(
                capture.exchange,
                capture.client.thread.thread_id,
                request.body,
                exchange.upstream_body(request),
            )
        attempts = 0
        reusable = False
        try:
            for number in range(self.retries + 1):
                attempts += 1
                attempt = AttemptSeen()
                try:
                    done, reusable = await self._attempt(
                        attempt, number, request, exchange=exchange, reader=reader, writer=writer
                    )
                finally:
                    record_attempt(
                        capture,
                        exchange.upstream_body(request),
                        attempt,
                        turn_state=request.headers.get(_http.TURN_STATE_HEADER) is not None,
                    )
                if done:
                    break
            await self._publish_reports(exchange)
        except (ConnectionError, OSError):
            exchange.outcome = ExchangeOutcome.CLIENT_DISCONNECTED
            raise
        except Exception:
            # A router fault, not a provider or client one: the capture must say so.
            if capture is not None:
                self.capture.record_error(CaptureErrorCategory.INTERNAL, exchange=capture.exchange)
            raise
        finally:
            finish_exchange(capture, exchange)
            log.info(
                "exchange",
                exchange=None if capture is None else capture.exchange,
                attempts=attempts,
                outcome=exchange.outcome.value,
                status=exchange.client_status,
                turn_state_sent=request.headers.get(_http.TURN_STATE_HEADER) is not None,
            )
        return reusable and request.keep_alive

    async def _publish_reports(self, exchange: ExchangeSeen) -> None:
        """Hand each report_issue call of a completed exchange to the diagnose hook: the
        client has the whole response, so the reports are complete (spec 004)."""
        routing = exchange.routing
        if self.report_hook is None or routing is None or not routing.reports:
            return
        if exchange.outcome is not ExchangeOutcome.COMPLETED:
            log.info("reports of an unfinished exchange not published", count=len(routing.reports))
            return
        run = asyncio.ensure_future(run_hook(self.report_hook, routing.reports))
        self._hook_runs.add(run)
        run.add_done_callback(self._hook_runs.discard)
        # Shielded: a router stopped now still publishes the reports (drain_reports).
        await asyncio.shield(run)

    async def drain_reports(self) -> None:
        """Wait for the hook runs still under way, so that a stopped router loses no
        report the client already has the response of (each run is bounded by the hook's
        own timeout)."""
        if self._hook_runs:
            log.info("waiting for the diagnose hook", runs=len(self._hook_runs))
            await asyncio.gather(*self._hook_runs, return_exceptions=True)

    async def _consult_mentor(
        self, request: _http.Request, parent: ExchangeCapture, routing: Routing
    ) -> None:
        """Consult the mentor when the schedule says so, and hand its advice over.

        The consultation is a child thread of the request's root: captured as its own
        exchange (the router is its client), proven by a child proof written before it
        starts, and never retried. A consultation that fails hands nothing over; the
        main request goes on as it came.
        """
        ref = parent.client.thread
        model = self.mentor.model
        is_root = ref.role is ThreadRole.ROOT
        number = self.mentor.next_consult(ref.root_thread_id, is_root, routing.history)
        body = None if number is None or model is None else child_body(model, routing.history)
        if number is None or model is None or body is None:
            return
        child = ThreadRef(
            thread_id=Ident(child_thread_id(ref.root_thread_id, number)),
            root_thread_id=ref.root_thread_id,
            parent_thread_id=ref.thread_id,
            role=ThreadRole.CHILD,
            subagent=MENTOR_SUBAGENT,
        )
        append_proof(
            self.capture.directory,
            ChildProof(
                schema=PROOF_SCHEMA,
                thread_id=child.thread_id,
                parent_thread_id=ref.thread_id,
                root_thread_id=ref.root_thread_id,
                kind="mentor",
                model=Ident(model),
                trigger_exchange=Count(parent.exchange),
            ),
        )
        headers = request.headers.end_to_end(drop=_CHILD_DROPPED_HEADERS)
        headers += [
            ("thread-id", child.thread_id),
            ("session-id", child.root_thread_id),
            ("x-openai-subagent", MENTOR_SUBAGENT),
        ]
        advice = await self._child_exchange(child, model, headers, body)
        if advice is not None:
            routing.append_input(handoff_item(advice))

    async def _child_exchange(
        self, child: ThreadRef, model: str, headers: list[tuple[str, str]], body: bytes
    ) -> str | None:
        """One router-owned child request, captured; the mentor's advice or None."""
        capture = self.capture.begin(
            thread=child,
            requested_model=model,
            request_bytes=len(body),
            request_tokens=tokens_for(len(body)),
        )
        attempt = AttemptSeen()
        exchange = ExchangeSeen()
        try:
            upstream = await open_exchange(
                self.upstream,
                "POST",
                f"{self.upstream.base_path}/responses",
                headers,
                body,
                connect_timeout=self.connect_timeout,
                head_timeout=self.head_timeout,
            )
        except _UPSTREAM_FAILURES:
            record_attempt(capture, body, attempt, turn_state=False)
            finish_exchange(capture, exchange)
            return None
        response = upstream.response
        attempt.take_head(response)
        exchange.client_status = response.status
        attempt.is_stream = is_event_stream(response)
        attempt.delivered = True
        exchange.delivered = attempt
        decoder = EventDecoder()
        broken = False
        try:
            async with asyncio.timeout(self.idle_timeout):
                async for data in upstream.body():
                    attempt.stream_bytes += len(data)
                    for event in decoder.feed(data):
                        attempt.stream.add(event)
        except _UPSTREAM_FAILURES:
            broken = True
        finally:
            await upstream.close()
        attempt.complete = not decoder.malformed
        attempt.settle(broken=broken)
        exchange.client_stream_bytes = attempt.stream_bytes
        ok = attempt.outcome is AttemptOutcome.COMPLETED
        exchange.outcome = ExchangeOutcome.COMPLETED if ok else ExchangeOutcome.FAILED
        record_attempt(capture, body, attempt, turn_state=False)
        finish_exchange(capture, exchange)
        return advice_of(attempt.stream.output_items) if ok else None

    async def _attempt(
        self,
        attempt: AttemptSeen,
        number: int,
        request: _http.Request,
        *,
        exchange: ExchangeSeen,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> tuple[bool, bool]:
        """One upstream attempt; returns (exchange finished, connection reusable)."""
        last = number == self.retries
        try:
            upstream = await open_exchange(
                self.upstream,
                "POST",
                f"{self.upstream.base_path}/responses",
                request.headers.end_to_end(),
                exchange.upstream_body(request),
                connect_timeout=self.connect_timeout,
                head_timeout=self.head_timeout,
            )
        except _UPSTREAM_FAILURES:
            attempt.outcome = AttemptOutcome.CONNECT_ERROR
            if not last:
                await asyncio.sleep(BACKOFF_BASE * 2**number)
                return False, False
            await _json_error(writer, 502, "upstream_unreachable", "upstream unreachable")
            exchange.client_status = 502
            return True, True
        response = upstream.response
        attempt.take_head(response)
        if response.status in RETRYABLE_STATUSES and not last:
            await self._discard(upstream, attempt)
            await asyncio.sleep(_retry_delay(response.headers, number))
            return False, False
        attempt.delivered = True
        exchange.delivered = attempt
        return True, await self._deliver(upstream, attempt, exchange, reader, writer)

    async def _discard(self, upstream: UpstreamExchange, attempt: AttemptSeen) -> None:
        attempt.outcome = AttemptOutcome.HTTP_ERROR
        try:
            async with asyncio.timeout(self.idle_timeout):
                async for data in upstream.body():
                    attempt.stream_bytes += len(data)
        except _UPSTREAM_FAILURES:
            pass
        finally:
            await upstream.close()

    async def _deliver(
        self,
        upstream: UpstreamExchange,
        attempt: AttemptSeen,
        exchange: ExchangeSeen,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Relay the upstream response to the client; return whether the client can go on."""
        response = upstream.response
        is_stream = attempt.is_stream = is_event_stream(response)
        feed = _Feed(self.transform, attempt, exchange, is_stream=is_stream)
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
                data = feed.take(data)
                await _guard(watcher, _to_client(sender.send(data)))
                exchange.client_stream_bytes += len(data)
                terminal_sent = attempt.stream.terminal is not None
            rest = feed.rest()
            await _guard(watcher, _to_client(sender.send(rest)))
            exchange.client_stream_bytes += len(rest)
            await _guard(watcher, _to_client(sender.finish()))
        except _ClientGoneError:
            # Codex closes the connection as soon as it has the terminal event; only a
            # client that leaves before that event has disconnected from the exchange.
            broken = True
            if not terminal_sent:
                exchange.outcome = ExchangeOutcome.CLIENT_DISCONNECTED
        except _UPSTREAM_FAILURES:
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
        if feed.malformed:
            attempt.complete = False
        attempt.settle(broken=broken and not terminal_sent)
        if not broken or terminal_sent:
            completed = response.status < 400 and attempt.outcome is AttemptOutcome.COMPLETED
            exchange.outcome = ExchangeOutcome.COMPLETED if completed else ExchangeOutcome.FAILED
        return not broken


class _Feed:
    """What the client is sent for each piece of the provider's stream, and what is seen.

    Without routing the bytes go on unchanged, as they came, and the events are only
    observed. With routing the stream is cut into whole events, each passed on as it came
    or rewritten (:meth:`Transform.event`); the provider's events are what the attempt
    records, what the client is sent is what the exchange records.
    """

    def __init__(
        self, transform: Transform, attempt: AttemptSeen, exchange: ExchangeSeen, *, is_stream: bool
    ) -> None:
        self.transform = transform
        self.attempt = attempt
        self.exchange = exchange
        self.routing = exchange.routing if is_stream else None
        self.is_stream = is_stream
        self.decoder = EventDecoder()
        self.rewriter = EventRewriter()

    @property
    def malformed(self) -> int:
        """Events whose payload was not a JSON object."""
        return self.decoder.malformed + self.rewriter.malformed

    def take(self, data: bytes) -> bytes:
        """The client's bytes for ``data``."""
        if self.routing is None:
            if self.is_stream:
                for decoded in self.decoder.feed(data):
                    self.attempt.stream.add(decoded)
            return data
        out = bytearray()
        client = self.exchange.client_facts()
        for block, event in self.rewriter.feed(data):
            if event is None:
                out += block
                continue
            self.attempt.stream.add(event)
            sent = self.transform.event(event, self.routing)
            if sent is DROP:
                continue
            if sent is None:
                out += block
                client.add(event)
            else:
                out += encode_event(sent)
                client.add(sent)
        return bytes(out)

    def rest(self) -> bytes:
        """Bytes held back that never ended an event, for the end of the stream."""
        return b"" if self.routing is None else self.rewriter.rest()


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


def _retry_delay(headers: _http.Headers, number: int) -> float:
    value = headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, min(float(value), MAX_RETRY_AFTER))
        except ValueError:
            pass
    return float(BACKOFF_BASE * 2**number)


async def _json_error(writer: asyncio.StreamWriter, status: int, code: str, message: str) -> None:
    await _http.send_error(writer, status, kind="router_error", code=code, message=message)
