"""What the reference router observes of an exchange, and how it becomes capture records.

The router feeds every SSE event it relays into :class:`StreamFacts`, keeps
what each upstream attempt and the client's side showed in :class:`AttemptSeen`
and :class:`ExchangeSeen`, and hands them to the capture writer
(:mod:`hpbench.capture.writer`) through :func:`begin_exchange`,
:func:`record_attempt` and :func:`finish_exchange`. The writer keeps only sizes,
counts, tool shapes and usage; the output items held here live only as long as
one attempt and are never written anywhere.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import structlog

from hpbench._jsonio import canonical_json
from hpbench.capture import (
    NO_HPATCH,
    AttemptOutcome,
    CaptureWriter,
    ExchangeCapture,
    ExchangeOutcome,
    read_usage,
    thread_from_headers,
    tool_shapes,
)
from hpbench.reference._http import TURN_STATE_HEADER, Request, Response
from hpbench.reference._transform import Routing
from hpbench.reference._usage import tokens_for

log = structlog.get_logger("hpbench.reference.router")

THREAD_HEADERS = ("thread-id", "session-id", "x-openai-subagent")


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


def is_event_stream(response: Response) -> bool:
    """Whether a response is a server-sent event stream (its content-type says so)."""
    return "text/event-stream" in (response.headers.get("content-type") or "").lower()


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


@attrs.define
class AttemptSeen:
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

    def take_head(self, response: Response) -> None:
        """What the response head says: status, turn state, model and request id."""
        headers = response.headers
        self.http_status = response.status
        self.turn_state_returned = headers.get(TURN_STATE_HEADER) is not None
        self.header_model = headers.get("openai-model")
        self.provider_request_id = headers.get("x-request-id")

    def settle(self, *, broken: bool) -> None:
        """Set the outcome once the attempt's response has been relayed (or broke)."""
        status = self.http_status or 0
        facts = self.stream
        if status >= 300 or status < 200:
            self.outcome = AttemptOutcome.HTTP_ERROR
        elif facts.terminal is not None:
            self.outcome = AttemptOutcome(facts.terminal)
        elif facts.error_event or broken or self.is_stream:
            self.outcome = AttemptOutcome.STREAM_ERROR
        else:
            self.outcome = AttemptOutcome.COMPLETED


@attrs.define
class ExchangeSeen:
    """The client's side of an exchange, until it is written as an exchange record.

    Without routing (passthrough/native) the client is sent the delivered attempt's
    stream unchanged, so its facts are the client's; with routing the client's own
    facts are kept apart (``client``).
    """

    outcome: ExchangeOutcome = ExchangeOutcome.FAILED
    client_status: int | None = None
    client_stream_bytes: int = 0
    delivered: AttemptSeen | None = None
    routing: Routing | None = None
    client: StreamFacts | None = None

    def upstream_body(self, request: Request) -> bytes:
        """The body every upstream attempt of this exchange sends."""
        return request.body if self.routing is None else self.routing.upstream_body

    def client_facts(self) -> StreamFacts:
        """The facts of what the client was sent (kept apart once routing changes it)."""
        if self.client is None:
            self.client = StreamFacts()
        return self.client


def begin_exchange(capture: CaptureWriter, request: Request) -> ExchangeCapture | None:
    """Open the exchange's capture; None (and a skipped request counted) without a thread."""
    headers = request.headers
    thread_headers = {
        name: value for name in THREAD_HEADERS if (value := headers.get(name)) is not None
    }
    try:
        thread = thread_from_headers(thread_headers)
    except ValueError:
        capture.note_skipped_request()
        log.warning("request names no thread; relayed without capture")
        return None
    size = len(request.body)
    return capture.begin(
        thread=thread,
        requested_model=body_model(request.body),
        request_bytes=size,
        request_tokens=tokens_for(size),
        turn_state_sent=headers.get(TURN_STATE_HEADER) is not None,
    )


def record_attempt(
    capture: ExchangeCapture | None, body: bytes, attempt: AttemptSeen, *, turn_state: bool
) -> None:
    """Write one upstream attempt (which sent ``body``, and the turn's
    ``x-codex-turn-state`` when ``turn_state``) as a provider record of the exchange."""
    if capture is None:
        return
    facts = attempt.stream
    size = len(body)
    capture.attempt(
        request_model=body_model(body),
        request_bytes=size,
        request_tokens=tokens_for(size),
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
        turn_state_forwarded=turn_state,
        turn_state_returned=attempt.turn_state_returned,
        complete=attempt.complete,
    )


def finish_exchange(capture: ExchangeCapture | None, exchange: ExchangeSeen) -> None:
    """Write the exchange record: what the client was given."""
    if capture is None:
        return
    delivered = exchange.delivered
    provider = delivered.stream if delivered is not None else StreamFacts()
    facts = provider
    if exchange.routing is not None and delivered is not None:
        facts = exchange.client or StreamFacts()
    output_bytes = facts.output_bytes()
    text_bytes = facts.output_text_bytes()
    provider_bytes = provider.output_bytes()
    provider_text_bytes = provider.output_text_bytes()
    capture.finish(
        outcome=exchange.outcome,
        client_status=exchange.client_status,
        client_output_bytes=output_bytes,
        client_output_text_bytes=text_bytes,
        client_stream_bytes=exchange.client_stream_bytes,
        delivered_tools=tool_shapes(facts.output_items),
        hpatch=NO_HPATCH if exchange.routing is None else exchange.routing.telemetry(),
        client_output_tokens=tokens_for(output_bytes),
        provider_output_tokens=tokens_for(provider_bytes),
        client_output_text_tokens=tokens_for(text_bytes),
        provider_output_text_tokens=tokens_for(provider_text_bytes),
    )
