"""The scripted Responses provider: test equipment that stands in for the model.

Run it as::

    python -m hpbench.reference.provider --listen 0.0.0.0:8080 \\
        --script control=tasks/<id>/replay/control.json \\
        --script hpatch=tasks/<id>/replay/hpatch.json \\
        --record /records/provider.jsonl

Each ``--script NAME=FILE`` is served at ``POST /NAME/v1/responses``; a router
for that arm uses ``--upstream http://provider:8080/NAME/v1``. With a single
script, ``POST /v1/responses`` answers from it too. ``GET /healthz`` answers
``{"ok": true}`` once it listens; ``GET /requests`` returns every request
record so far. Logs go to stderr.

What it guarantees (``docs/reference-equipment.md`` has the details):

- **Step from history.** The step answered is the number of model responses
  already in the request's ``input`` (each maximal run of model-output items
  counts once), so a retry of a request gets the same step.
- **Deterministic usage.** Tokens are byte counts divided by four, rounded up.
  A cached prefix is kept per ``prompt_cache_key``: the longest run of leading
  prompt units (the tools, then each input item) equal to one already seen
  under that key, rounded down to 64 tokens.
- **Turn state.** Each turn (``prompt_cache_key`` plus the number of user
  messages) gets its own ``x-codex-turn-state`` value on every 200 response,
  and every later request of that turn is recorded as carrying it
  ``unchanged``, ``changed`` or ``missing``; a first request that already
  carries one is ``unsolicited``.
- **Faults on demand** per step and attempt (see :mod:`hpbench.reference.script`).
- **Sanitized records**: sizes, hashes, counts and item types, never an
  authorization value or conversation text.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import math
import re
import secrets
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import structlog

from hpbench._jsonio import canonical_json
from hpbench._logging import configure
from hpbench.errors import HpbenchError
from hpbench.reference import _http
from hpbench.reference._sse import encode_event
from hpbench.reference.script import Fault, FaultKind, ItemType, Script, Step, load_script

log = structlog.get_logger("hpbench.reference.provider")

TURN_STATE_HEADER = "x-codex-turn-state"
BYTES_PER_TOKEN = 4
CACHE_BLOCK_TOKENS = 64
MAX_PREFIXES_PER_KEY = 256
DEFAULT_SCRIPT = "default"
MODEL_OUTPUT_TYPES = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "web_search_call", "local_shell_call"}
)


def tokens_for(size: int) -> int:
    """Tokens for ``size`` bytes: a quarter, rounded up."""
    return math.ceil(size / BYTES_PER_TOKEN)


def short_hash(text: str) -> str:
    """A 16-hex-digit SHA-256 prefix: enough to tell values apart, useless to read them."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _is_model_output(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind in MODEL_OUTPUT_TYPES:
        return True
    return kind == "message" and item.get("role") == "assistant"


def responses_in_history(items: Sequence[Any]) -> int:
    """How many model responses ``input`` carries: maximal runs of model-output items."""
    runs = 0
    previous = False
    for item in items:
        current = _is_model_output(item)
        if current and not previous:
            runs += 1
        previous = current
    return runs


def user_messages(items: Sequence[Any]) -> int:
    """The number of user messages: grows by at least one with every new turn."""
    return sum(
        1
        for item in items
        if isinstance(item, dict) and item.get("type", "message") == "message"
        if item.get("role") == "user"
    )


def first_developer_hash(items: Sequence[Any]) -> str | None:
    """SHA-256 of the first developer message's text (where Codex puts base instructions)."""
    for item in items:
        if not isinstance(item, dict) or item.get("role") != "developer":
            continue
        if item.get("type", "message") != "message":
            continue
        content = item.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        else:
            return None
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    return None


_EXIT_CODE = re.compile(r"^Process exited with code (-?[0-9]+)$", re.MULTILINE)


def reported_exit_code(items: Sequence[Any], call_id: str) -> int | None:
    """The exit code Codex reported for ``call_id``'s command, or None when it reported none.

    Codex sends a finished ``exec_command`` back as ``function_call_output`` whose text
    holds "Process exited with code N"; a command still running (past its yield time)
    has no such line. The output may be a string or a list of ``input_text`` parts.
    """
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        if item.get("call_id") != call_id:
            continue
        output = item.get("output")
        if isinstance(output, list):
            output = "".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
        if not isinstance(output, str):
            return None
        match = _EXIT_CODE.search(output)
        return int(match[1]) if match else None
    return None


def unmet_expectation(
    script: Script, step_index: int, items: Sequence[Any]
) -> dict[str, Any] | None:
    """The previous step's ``expect_exit_code`` that the request's history does not meet.

    A replay script asserts this way that a command it relies on (the demo's
    ``go test``) really ran and passed; a command that exits 127 because its tool
    is missing then ends the attempt instead of being passed over.
    """
    if step_index == 0 or step_index > len(script.steps):
        return None
    previous = step_index - 1
    for position, item in enumerate(script.steps[previous].output):
        if item.type is not ItemType.EXEC_COMMAND or item.expect_exit_code is None:
            continue
        got = reported_exit_code(items, f"call_{previous}_{position}")
        if got != item.expect_exit_code:
            return {"step": previous, "expected": item.expect_exit_code, "got": got}
    return None


def item_type_counts(items: Sequence[Any]) -> dict[str, int]:
    """``type`` (``message:<role>`` for messages) to count."""
    counts: Counter[str] = Counter()
    for item in items:
        if not isinstance(item, dict):
            counts["<not an object>"] += 1
            continue
        kind = str(item.get("type", "message"))
        if kind == "message":
            kind = f"message:{item.get('role', '?')}"
        counts[kind] += 1
    return dict(sorted(counts.items()))


def render_step(step: Step, index: int) -> list[dict[str, Any]]:
    """The Responses output items of a step, with ids that name the step."""
    items: list[dict[str, Any]] = []
    for position, item in enumerate(step.output):
        suffix = f"{index}_{position}"
        if item.type is ItemType.REASONING:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{suffix}",
                    "summary": [{"type": "summary_text", "text": item.text}],
                }
            )
        elif item.type is ItemType.MESSAGE:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{suffix}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": item.text, "annotations": []}],
                }
            )
        elif item.type is ItemType.EXEC_COMMAND:
            arguments: dict[str, Any] = {"cmd": item.cmd}
            if item.workdir is not None:
                arguments["workdir"] = item.workdir
            if item.yield_time_ms is not None:
                arguments["yield_time_ms"] = item.yield_time_ms
            items.append(_function_call(suffix, "exec_command", json.dumps(arguments)))
        elif item.type is ItemType.FUNCTION_CALL:
            items.append(_function_call(suffix, str(item.name), str(item.arguments)))
        else:
            name = "apply_patch" if item.type is ItemType.APPLY_PATCH else str(item.name)
            text = item.patch if item.type is ItemType.APPLY_PATCH else item.input
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_{suffix}",
                    "call_id": f"call_{suffix}",
                    "name": name,
                    "input": text,
                    "status": "completed",
                }
            )
    return items


def _function_call(suffix: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{suffix}",
        "call_id": f"call_{suffix}",
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


@attrs.frozen
class Usage:
    """The usage block of one response."""

    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int
    reasoning_tokens: int

    def to_wire(self) -> dict[str, Any]:
        """The Responses ``usage`` object."""
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {
                "cached_tokens": self.cached_tokens,
                "cache_write_tokens": self.cache_write_tokens,
            },
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


def prompt_units(body: dict[str, Any]) -> list[tuple[str, int]]:
    """The prompt as cacheable units: (hash, tokens) of the tools, then of each input item."""
    units: list[tuple[str, int]] = []
    head = canonical_json({"model": body.get("model"), "tools": body.get("tools")})
    units.append((short_hash(head), tokens_for(len(head.encode("utf-8")))))
    for item in body.get("input") or []:
        text = canonical_json(item)
        units.append((short_hash(text), tokens_for(len(text.encode("utf-8")))))
    return units


def output_usage(items: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """Output and reasoning tokens of a response's items."""
    output = sum(tokens_for(len(canonical_json(item).encode("utf-8"))) for item in items)
    reasoning = sum(
        tokens_for(len(part.get("text", "").encode("utf-8")))
        for item in items
        if item.get("type") == "reasoning"
        for part in item.get("summary", [])
    )
    return output, reasoning


class PrefixCache:
    """The cached-prefix model: what prompt prefixes each ``prompt_cache_key`` has seen."""

    def __init__(self) -> None:
        self._seen: dict[str, list[tuple[str, ...]]] = {}

    def lookup(self, key: str | None, units: Sequence[tuple[str, int]]) -> int:
        """Cached tokens for ``units`` under ``key`` (zero without a key)."""
        if key is None:
            return 0
        hashes = tuple(digest for digest, _ in units)
        best = 0
        for seen in self._seen.get(key, []):
            common = 0
            for left, right in zip(seen, hashes, strict=False):
                if left != right:
                    break
                common += 1
            best = max(best, common)
        prefix_tokens = sum(tokens for _, tokens in units[:best])
        return (prefix_tokens // CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS

    def store(self, key: str | None, units: Sequence[tuple[str, int]]) -> None:
        """Remember a processed prompt."""
        if key is None:
            return
        seen = self._seen.setdefault(key, [])
        hashes = tuple(digest for digest, _ in units)
        if hashes not in seen:
            seen.append(hashes)
            del seen[:-MAX_PREFIXES_PER_KEY]


def turn_state_status(issued: str | None, received: str | None) -> str:
    """How a request's ``x-codex-turn-state`` compares with the value issued in its turn."""
    if issued is None:
        return "absent" if received is None else "unsolicited"
    if received is None:
        return "missing"
    return "unchanged" if hmac.compare_digest(issued, received) else "changed"


def authorization_kind(value: str | None) -> str:
    """``absent``, ``bearer`` or ``other``: never the value."""
    if value is None:
        return "absent"
    return "bearer" if value.lower().startswith("bearer ") else "other"


class Provider:
    """The scripts, the per-thread state, and the request records."""

    def __init__(self, scripts: dict[str, Script], record_path: Path | None = None) -> None:
        self.scripts = scripts
        self.record_path = record_path
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
        if request.method == "GET" and request.path == "/healthz":
            health = canonical_json({"ok": True, "scripts": sorted(self.scripts)})
            await _http.send_full(writer, 200, health.encode())
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
        received = request.headers.get(TURN_STATE_HEADER)
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
            "request": {
                "bytes": len(request.body),
                "sha256": hashlib.sha256(request.body).hexdigest(),
                "model": body.get("model") if isinstance(body.get("model"), str) else None,
                "stream": body.get("stream") is True,
                "input_items": len(items),
                "input_types": item_type_counts(items),
                "tools": len(body.get("tools") or []),
                "prompt_cache_key": key is not None,
                "instructions": "instructions" in body,
                "first_developer_sha256": first_developer_hash(items),
                "previous_response_id": "previous_response_id" in body,
            },
            "headers": {
                "names": request.headers.names(),
                "authorization": authorization_kind(request.headers.get("authorization")),
            },
            "turn_state": {
                "received": received is not None,
                "issued_before": issued is not None,
                "status": turn_state_status(issued, received),
                "issued": False,
            },
            "fault": None if fault is None else fault.kind.value,
        }
        headers = [("x-request-id", f"req_{self._seq}")]
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
            headers.append((TURN_STATE_HEADER, issued))
            record["turn_state"]["issued"] = True
        units = prompt_units(body)
        cached = self.cache.lookup(key, units)
        self.cache.store(key, units)
        output = render_step(step, step_index)
        output_tokens, reasoning_tokens = output_usage(output)
        input_tokens = sum(tokens for _, tokens in units)
        usage = Usage(
            input_tokens=input_tokens,
            cached_tokens=cached,
            cache_write_tokens=input_tokens - cached if key is not None else 0,
            output_tokens=output_tokens,
            reasoning_tokens=reasoning_tokens,
        )
        response_id = f"resp_{short_hash(f'{thread}/{step_index}')}"
        events = _events(response_id, body.get("model"), output, usage, fault)
        digest = hashlib.sha256()
        outcome = await _stream(writer, reader, headers, events, fault=fault, digest=digest)
        record["response"] = {
            "status": 200,
            "outcome": outcome,
            "output_types": [item["type"] for item in output],
            "usage": attrs.asdict(usage) if outcome == "completed" else None,
            "body_sha256": digest.hexdigest(),
        }
        self._finish(record)
        return outcome in ("completed", "response_failed")

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
        """Ends the turn (fatally) when the history misses an ``expect_exit_code``."""
        unmet = unmet_expectation(script, step_index, items)
        if unmet is None:
            return False
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
            step=record["step"],
            attempt=record["attempt"],
            turn_state=record["turn_state"]["status"],
            outcome=record["response"]["outcome"],
        )


async def _fail_stream(
    writer: asyncio.StreamWriter, headers: list[tuple[str, str]], response_id: str, message: str
) -> None:
    """A stream of one ``response.failed`` with a code Codex treats as fatal (no retry)."""
    event = {
        "type": "response.failed",
        "response": {"id": response_id, "error": {"code": "invalid_prompt", "message": message}},
    }
    sender = _http.ChunkedSender(writer)
    await sender.start(200, [*headers, ("content-type", "text/event-stream")])
    await sender.send(encode_event(event))
    await sender.finish()


def _seconds_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _events(
    response_id: str,
    model: Any,
    output: Sequence[dict[str, Any]],
    usage: Usage,
    fault: Fault | None,
) -> list[dict[str, Any]]:
    base = {"id": response_id, "object": "response", "model": model}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**base, "status": "in_progress"}}
    ]
    if fault is not None and fault.kind is FaultKind.RESPONSE_FAILED:
        error = {"code": fault.code, "message": fault.message}
        events.append(
            {"type": "response.failed", "response": {**base, "status": "failed", "error": error}}
        )
        return events
    for index, item in enumerate(output):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            text = item["content"][0]["text"]
            for start in range(0, len(text), 16):
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": text[start : start + 16],
                    }
                )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append(
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "usage": usage.to_wire()},
        }
    )
    return events


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
    body = canonical_json({"error": {"type": kind, "code": code, "message": message}})
    await _http.send_full(writer, status, body.encode(), headers)


async def serve_connection(
    provider: Provider, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Serve requests on one connection until either side ends it."""
    try:
        while True:
            request = await _http.read_request(reader)
            if request is None:
                break
            reuse = await provider.handle(request, reader, writer)
            if not (reuse and request.keep_alive):
                break
    except (_http.HttpProtocolError, _http.IncompleteBodyError) as exc:
        log.warning("bad request", error=str(exc))
    except (ConnectionError, OSError):
        pass
    finally:
        if not writer.is_closing():
            await _http.close_writer(writer)


async def serve(
    provider: Provider, host: str, port: int, ready: asyncio.Event | None = None
) -> None:
    """Listen until cancelled."""
    server = await asyncio.start_server(
        lambda r, w: serve_connection(provider, r, w), host, port, limit=_http.MAX_LINE
    )
    bound = ", ".join(str(sock.getsockname()) for sock in server.sockets)
    log.info("listening", address=bound, scripts=sorted(provider.scripts))
    if ready is not None:
        ready.set()
    async with server:
        await server.serve_forever()


def _parse_scripts(values: Sequence[str]) -> dict[str, Script]:
    scripts: dict[str, Script] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = DEFAULT_SCRIPT, value
        if not name or "/" in name or name in ("v1", "responses", "requests", "healthz"):
            msg = f"--script wants NAME=FILE with a plain name, got {value!r}"
            raise HpbenchError(msg)
        if name in scripts:
            msg = f"--script {name} given twice"
            raise HpbenchError(msg)
        scripts[name] = load_script(Path(path))
    return scripts


def build_parser() -> argparse.ArgumentParser:
    """The provider's command line."""
    parser = argparse.ArgumentParser(
        prog="python -m hpbench.reference.provider",
        description="Scripted Responses provider (test equipment; never a real model).",
    )
    parser.add_argument("--listen", required=True, metavar="HOST:PORT")
    parser.add_argument(
        "--script",
        action="append",
        required=True,
        metavar="NAME=FILE",
        help="serve FILE at /NAME/v1/responses (repeatable)",
    )
    parser.add_argument("--record", type=Path, metavar="FILE", help="request records as JSONL")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the provider until SIGTERM or SIGINT."""
    args = build_parser().parse_args(argv)
    configure(level=args.log_level)
    try:
        host, port = _http.parse_listen(args.listen)
        provider = Provider(_parse_scripts(args.script), args.record)
    except (HpbenchError, ValueError) as exc:
        sys.stderr.write(f"provider: {exc}\n")
        return 2
    return _http.run_until_signal(serve(provider, host, port), "provider")


if __name__ == "__main__":
    sys.exit(main())
