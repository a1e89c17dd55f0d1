"""The scripted provider's request handling: routing, turn state, faults, the answer.

:class:`Provider` picks the script a path selects, finds the step from the
request's history (:mod:`hpbench.reference._history`), issues and checks
``x-codex-turn-state`` per turn, injects the step's fault for this attempt, and
streams the rendered step (:mod:`hpbench.reference._render`) with deterministic
usage (:mod:`hpbench.reference._usage`). Every request leaves one sanitized
record (:mod:`hpbench.reference._records`). The guarantees are listed in
:mod:`hpbench.reference.provider`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import secrets
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import structlog

from hpbench._jsonio import canonical_json
from hpbench.capture.children import MENTOR_SUBAGENT
from hpbench.reference import _http
from hpbench.reference._history import responses_in_history, unmet_expectation, user_messages
from hpbench.reference._records import authorization_kind, request_facts
from hpbench.reference._render import (
    assistant_message,
    failed_event,
    render_step,
    response_events,
)
from hpbench.reference._sse import encode_event
from hpbench.reference._usage import PrefixCache, Usage, output_usage, prompt_units, short_hash
from hpbench.reference.identity import SCRIPTED_REQUEST_ID_PREFIX
from hpbench.reference.script import Fault, FaultKind, Script

log = structlog.get_logger("hpbench.reference.provider")

MENTOR_ADVICE = (
    "Mentor (scripted): pin the revision before the first batch, and check the final "
    "Count and More."
)
"""What the scripted provider answers every mentor consultation with."""


def offered_tools(body: dict[str, Any]) -> frozenset[str]:
    """The names of the tools a request offers the model."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return frozenset()
    return frozenset(
        str(tool["name"]) for tool in tools if isinstance(tool, dict) and "name" in tool
    )


def request_id(seq: int) -> str:
    """The ``x-request-id`` value of the provider's ``seq``-th request record."""
    return f"{SCRIPTED_REQUEST_ID_PREFIX}req_{seq}"


def key_refusal(expected: str, authorization: str | None) -> str | None:
    """Why a request's ``authorization`` does not carry ``Bearer <expected>``, or None.

    ``missing`` (no header), ``not_bearer`` (another scheme) or ``wrong_key``; the
    comparison takes the same time whatever the presented value is.
    """
    if authorization is None:
        return "missing"
    scheme, _, presented = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return "not_bearer"
    if not hmac.compare_digest(presented.strip().encode(), expected.encode()):
        return "wrong_key"
    return None


def turn_state_status(issued: str | None, received: str | None) -> str:
    """How a request's ``x-codex-turn-state`` compares with the value issued in its turn."""
    if issued is None:
        return "absent" if received is None else "unsolicited"
    if received is None:
        return "missing"
    return "unchanged" if hmac.compare_digest(issued, received) else "changed"


@attrs.frozen
class _Answer:
    """One response to stream: its id, the model it names, its items, their usage and the
    attempt's fault."""

    response_id: str
    model: Any
    output: list[dict[str, Any]]
    usage: Usage
    fault: Fault | None


def _usage(
    units: Sequence[tuple[str, int]],
    cached: int,
    output: list[dict[str, Any]],
    *,
    cache_writes: bool,
) -> Usage:
    """The usage of ``output`` answering a prompt of ``units`` of which ``cached`` tokens
    were cached: deterministic from sizes (:mod:`hpbench.reference._usage`)."""
    output_tokens, reasoning_tokens = output_usage(output)
    input_tokens = sum(tokens for _, tokens in units)
    return Usage(
        input_tokens=input_tokens,
        cached_tokens=cached,
        cache_write_tokens=input_tokens - cached if cache_writes else 0,
        output_tokens=output_tokens,
        reasoning_tokens=reasoning_tokens,
    )


class Provider:
    """The scripts, the per-thread state, and the request records."""

    def __init__(
        self,
        scripts: dict[str, Script],
        record_path: Path | None = None,
        *,
        api_key: str | None = None,
    ) -> None:
        self.scripts = scripts
        self.record_path = record_path
        self._api_key = api_key
        self.records: list[dict[str, Any]] = []
        self.cache = PrefixCache()
        self._attempts: Counter[tuple[str, str, int]] = Counter()
        self._turn_states: dict[tuple[str, str, int], str] = {}
        self._secret = secrets.token_bytes(16)
        self._seq = 0
        if record_path is not None:
            record_path.parent.mkdir(parents=True, exist_ok=True)
            record_path.write_text("", encoding="utf-8")

    def script_for(self, path: str) -> str | None:
        """The script name a request path selects, or None."""
        parts = [part for part in path.split("/") if part]
        if parts[-1:] != ["responses"]:
            return None
        if len(parts) >= 2 and parts[0] in self.scripts:
            return parts[0]
        if len(self.scripts) == 1 and parts in (["responses"], ["v1", "responses"]):
            return next(iter(self.scripts))
        return None

    def turn_state_value(self, script: str, thread: str, turn: int) -> str:
        """The value this provider gives the turn (stable within a process)."""
        message = f"{script}\0{thread}\0{turn}".encode()
        return "ts_" + hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:32]

    def _write_record(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self.record_path is not None:
            with self.record_path.open("a", encoding="utf-8") as stream:
                stream.write(canonical_json(record) + "\n")

    async def handle(
        self, request: _http.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; return whether the connection may be reused."""
        reuse = await self._route(request, reader, writer)
        return reuse and request.keep_alive

    async def _route(
        self, request: _http.Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if request.method == "GET" and request.path == "/healthz":
            health = canonical_json({"ok": True, "scripts": sorted(self.scripts)})
            await _http.send_full(writer, 200, health.encode())
            return True
        if self._api_key is not None:
            refusal = key_refusal(self._api_key, request.headers.get("authorization"))
            if refusal is not None:
                await self._refuse_key(request, refusal, writer)
                return True
        if request.method == "GET" and request.path == "/requests":
            await _http.send_full(writer, 200, canonical_json(self.records).encode())
            return True
        script_name = self.script_for(request.path)
        if script_name is None:
            await _error(writer, 404, "not_found", f"no script serves {request.path}")
            return True
        if request.method != "POST":
            await _error(writer, 405, "method_not_allowed", "POST only")
            return True
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("input"), list):
            await _error(writer, 400, "invalid_request", "expected a JSON object with input[]")
            return True
        return await self._answer(script_name, request, body, reader, writer)

    async def _answer(
        self,
        script_name: str,
        request: _http.Request,
        body: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if request.headers.get("x-openai-subagent") == MENTOR_SUBAGENT:
            return await self._answer_mentor(script_name, request, body, reader, writer)
        script = self.scripts[script_name]
        items: list[Any] = body["input"]
        raw_key = body.get("prompt_cache_key")
        key = raw_key if isinstance(raw_key, str) else None
        thread = key or "<no prompt_cache_key>"
        step_index = responses_in_history(items)
        turn = user_messages(items)
        attempt = self._attempts[(script_name, thread, step_index)]
        self._attempts[(script_name, thread, step_index)] += 1
        issued = self._turn_states.get((script_name, thread, turn))
        received = request.headers.get(_http.TURN_STATE_HEADER)
        self._seq += 1
        step = script.steps[step_index] if step_index < len(script.steps) else None
        fault = step.faults[attempt] if step is not None and attempt < len(step.faults) else None
        record: dict[str, Any] = {
            "seq": self._seq,
            "received_at": round(time.time(), 3),
            "script": script_name,
            "path": request.path,
            "thread": short_hash(thread),
            "turn": turn,
            "step": step_index,
            "attempt": attempt,
            **request_facts(request, body, items, key),
            "turn_state": {
                "received": received is not None,
                "issued_before": issued is not None,
                "status": turn_state_status(issued, received),
                "issued": False,
            },
            "fault": None if fault is None else fault.kind.value,
        }
        headers = [("x-request-id", request_id(self._seq))]
        if await self._refuse_unmet(
            script=script,
            step_index=step_index,
            items=items,
            headers=headers,
            record=record,
            writer=writer,
        ):
            return True
        if step is None:
            outcome = await self._exhausted(script, step_index, headers, writer)
            record["response"] = {"status": 200, "outcome": outcome}
            self._finish(record)
            return True
        if fault is not None and fault.kind in (
            FaultKind.HTTP_429,
            FaultKind.HTTP_500,
            FaultKind.HTTP_503,
        ):
            status = int(fault.kind.value.removeprefix("http_"))
            if fault.retry_after_seconds is not None:
                headers.append(("retry-after", _seconds_text(fault.retry_after_seconds)))
            code = "rate_limit_exceeded" if status == 429 else "server_error"
            await _error(writer, status, code, fault.message, headers)
            record["response"] = {"status": status, "outcome": f"http_{status}"}
            self._finish(record)
            return True
        if script.turn_state:
            if issued is None:
                issued = self.turn_state_value(script_name, thread, turn)
                self._turn_states[(script_name, thread, turn)] = issued
            headers.append((_http.TURN_STATE_HEADER, issued))
            record["turn_state"]["issued"] = True
        units = prompt_units(body)
        cached = self.cache.lookup(key, units)
        self.cache.store(key, units)
        output = render_step(step, step_index, offered_tools(body))
        usage = _usage(units, cached, output, cache_writes=key is not None)
        response_id = f"resp_{short_hash(f'{thread}/{step_index}')}"
        answer = _Answer(response_id, body.get("model"), output, usage, fault)
        outcome = await self._respond(answer, headers, record, reader, writer)
        return outcome in ("completed", "response_failed")

    async def _answer_mentor(
        self,
        script_name: str,
        request: _http.Request,
        body: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        """A router's mentor consultation: answered with :data:`MENTOR_ADVICE`, never from
        the script, so a consultation cannot move the script's steps."""
        self._seq += 1
        items: list[Any] = body["input"]
        thread = request.headers.get("thread-id") or "<no thread-id>"
        record: dict[str, Any] = {
            "seq": self._seq,
            "received_at": round(time.time(), 3),
            "script": script_name,
            "path": request.path,
            "mentor": True,
            "thread": short_hash(thread),
            **request_facts(request, body, items, None),
        }
        output = [assistant_message(f"msg_mentor_{self._seq}", MENTOR_ADVICE)]
        usage = _usage(prompt_units(body), 0, output, cache_writes=False)
        answer = _Answer(f"resp_mentor_{self._seq}", body.get("model"), output, usage, None)
        headers = [("x-request-id", request_id(self._seq))]
        return await self._respond(answer, headers, record, reader, writer) == "completed"

    async def _respond(
        self,
        answer: _Answer,
        headers: list[tuple[str, str]],
        record: dict[str, Any],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> str:
        """Stream one answer and finish its record; the stream's outcome."""
        usage = answer.usage
        events = response_events(
            answer.response_id, answer.model, answer.output, usage, answer.fault
        )
        digest = hashlib.sha256()
        outcome = await _stream(writer, reader, headers, events, fault=answer.fault, digest=digest)
        record["response"] = {
            "status": 200,
            "outcome": outcome,
            "output_types": [item["type"] for item in answer.output],
            "usage": attrs.asdict(usage) if outcome == "completed" else None,
            "body_sha256": digest.hexdigest(),
        }
        self._finish(record)
        return outcome

    async def _refuse_key(
        self, request: _http.Request, refusal: str, writer: asyncio.StreamWriter
    ) -> None:
        """401 for a request without the expected key; recorded without any header value."""
        self._seq += 1
        message = (
            "You didn't provide an API key: send Authorization: Bearer <key>."
            if refusal == "missing"
            else "Incorrect API key provided."
        )
        error = {"type": "invalid_request_error", "code": "invalid_api_key", "message": message}
        # Recorded before the answer: whoever reads the records after the 401 finds it.
        record = {
            "seq": self._seq,
            "received_at": round(time.time(), 3),
            "script": None,
            "method": request.method,
            "path": request.path,
            "refused": refusal,
            "headers": {
                "names": request.headers.names(),
                "authorization": authorization_kind(request.headers.get("authorization")),
            },
            "response": {"status": 401, "outcome": "unauthorized"},
        }
        self._write_record(record)
        await _http.send_full(
            writer,
            401,
            canonical_json({"error": error}).encode(),
            [("x-request-id", request_id(self._seq)), ("www-authenticate", "Bearer")],
            reason="Unauthorized",
        )
        log.warning("refused", seq=self._seq, path=request.path, reason=refusal)

    async def _refuse_unmet(
        self,
        *,
        script: Script,
        step_index: int,
        items: Sequence[Any],
        headers: list[tuple[str, str]],
        record: dict[str, Any],
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Ends the turn (fatally) when the history misses an ``expect_exit_code`` or an
        ``expect_applied``."""
        unmet = unmet_expectation(script, step_index, items)
        if unmet is None:
            return False
        if isinstance(unmet["expected"], str):
            message = (
                f"replay expectation failed: the edit of step {unmet['step']} of script "
                f"{script.name} came back {unmet['got'] or 'without an answer'}, expected "
                f"{unmet['expected']}"
            )
        else:
            got = "no exit code" if unmet["got"] is None else f"exit code {unmet['got']}"
            message = (
                f"replay expectation failed: the command of step {unmet['step']} of script "
                f"{script.name} reported {got}, expected {unmet['expected']}"
            )
        await _fail_stream(writer, headers, "resp_expectation", message)
        record["expectation"] = unmet
        record["response"] = {"status": 200, "outcome": "expectation_failed"}
        self._finish(record)
        return True

    async def _exhausted(
        self,
        script: Script,
        step_index: int,
        headers: list[tuple[str, str]],
        writer: asyncio.StreamWriter,
    ) -> str:
        message = f"script {script.name} has {len(script.steps)} steps; step {step_index} asked"
        await _fail_stream(writer, headers, "resp_exhausted", message)
        return "script_exhausted"

    def _finish(self, record: dict[str, Any]) -> None:
        self._write_record(record)
        log.info(
            "request",
            seq=record["seq"],
            script=record["script"],
            step=record.get("step"),
            attempt=record.get("attempt"),
            mentor=record.get("mentor", False),
            turn_state=record["turn_state"]["status"] if "turn_state" in record else None,
            outcome=record["response"]["outcome"],
        )


async def _fail_stream(
    writer: asyncio.StreamWriter, headers: list[tuple[str, str]], response_id: str, message: str
) -> None:
    """A stream of one ``response.failed`` with a code Codex treats as fatal (no retry)."""
    sender = _http.ChunkedSender(writer)
    await sender.start(200, [*headers, ("content-type", "text/event-stream")])
    await sender.send(encode_event(failed_event(response_id, message)))
    await sender.finish()


def _seconds_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


async def _stream(
    writer: asyncio.StreamWriter,
    reader: asyncio.StreamReader,
    headers: list[tuple[str, str]],
    events: Sequence[dict[str, Any]],
    *,
    fault: Fault | None,
    digest: Any,
) -> str:
    """Send the events (cut short for a drop or stall); ``digest`` hashes the body sent."""
    sender = _http.ChunkedSender(writer)
    await sender.start(200, [*headers, ("content-type", "text/event-stream")])
    cut = None
    if fault is not None and fault.kind in (FaultKind.DROP, FaultKind.STALL):
        cut = min(fault.after_events, len(events) - 1)
    for position, event in enumerate(events):
        if cut is not None and position >= cut:
            break
        data = encode_event(event)
        digest.update(data)
        await sender.send(data)
    if fault is not None and fault.kind is FaultKind.STALL:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_http.watch_for_close(reader), fault.seconds)
        await _http.close_writer(writer, abort=True)
        return "stalled"
    if fault is not None and fault.kind is FaultKind.DROP:
        await _http.close_writer(writer, abort=True)
        return "dropped"
    with contextlib.suppress(ConnectionError, OSError):
        await sender.finish()  # Codex may hang up as soon as it has the terminal event
    if fault is not None and fault.kind is FaultKind.RESPONSE_FAILED:
        return "response_failed"
    return "completed"


async def _error(
    writer: asyncio.StreamWriter,
    status: int,
    code: str,
    message: str,
    headers: Sequence[tuple[str, str]] = (),
) -> None:
    kind = "rate_limit_error" if status == 429 else "invalid_request_error"
    if status >= 500:
        kind = "server_error"
    await _http.send_error(writer, status, kind=kind, code=code, message=message, headers=headers)
