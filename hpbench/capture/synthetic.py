"""Synthetic captures: valid record files and snapshots made with :class:`CaptureWriter`.

Test equipment for the validator's tests, fixtures and throughput benchmark. A synthetic
capture goes through the same writer a Python router uses, so it is valid by
construction; the tests then break it on purpose.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

from hpbench._jsonio import canonical_json
from hpbench.capture.models import (
    AttemptOutcome,
    ExchangeOutcome,
    Protocol,
    RouterMode,
    ThreadRole,
)
from hpbench.capture.writer import (
    NO_HPATCH,
    NO_USAGE,
    CaptureWriter,
    hpatch_telemetry,
    read_usage,
    thread_from_headers,
    tool_shapes,
)

MODEL = "gpt-6-astra"
CHILD_MODEL = MODEL  # Codex runs a spawned sub-agent on its parent's model


def _thread_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _usage(rng: random.Random, turn: int) -> dict[str, Any]:
    input_tokens = 12_000 + 900 * turn + rng.randrange(400)
    details: dict[str, Any] = {"cached_tokens": input_tokens - rng.randrange(200, 2_000)}
    roll = rng.random()
    if roll < 0.03:
        details = {}
    elif roll < 0.05:
        details["cached_tokens"] = None
    details["cache_write_tokens"] = 0
    output = 40 + rng.randrange(600)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": details,
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": rng.randrange(output)},
        "total_tokens": input_tokens + output,
    }


def write_synthetic_capture(
    directory: Path | str,
    *,
    mode: RouterMode = RouterMode.HPATCH,
    protocol: Protocol = Protocol.NATIVE,
    exchanges: int = 40,
    seed: int = 0,
    retry_every: int = 7,
    child_every: int = 11,
    root_threads: int = 1,
) -> dict[str, Any]:
    """Write a valid capture into ``directory`` and return its snapshot (JSON data).

    Every ``retry_every``-th exchange has a failed first attempt (an HTTP 500 without
    usage) before its delivered one; every ``child_every``-th runs on a child thread.
    Returns the snapshot; :func:`codex_streams` derives matching Codex JSONL.
    """
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    roots = [_thread_id(rng) for _ in range(root_threads)]
    children = {root: _thread_id(rng) for root in roots}
    hpatch_mode = mode is RouterMode.HPATCH
    with CaptureWriter(directory, mode=mode, protocol=protocol) as writer:
        for index in range(exchanges):
            root = roots[index % len(roots)]
            child = child_every > 0 and index % child_every == child_every - 1
            headers = {"session-id": root, "thread-id": children[root] if child else root}
            if child:
                headers["x-openai-subagent"] = "collab_spawn"
            thread = thread_from_headers(headers)
            model = CHILD_MODEL if child else MODEL
            client_bytes = 40_000 + 3_000 * index + rng.randrange(2_000)
            provider_bytes = client_bytes - (rng.randrange(-500, 4_000) if hpatch_mode else 0)
            turn_state = index % 3 != 0
            exchange = writer.begin(
                thread=thread,
                requested_model=model,
                request_bytes=client_bytes,
                turn_state_sent=turn_state,
            )
            if retry_every > 0 and index % retry_every == retry_every - 1:
                exchange.attempt(
                    request_model=model,
                    request_bytes=provider_bytes,
                    http_status=500,
                    outcome=AttemptOutcome.HTTP_ERROR,
                    usage=NO_USAGE,
                    provider_request_id=f"req_{rng.getrandbits(128):032x}",
                    stream_bytes=120,
                    turn_state_forwarded=turn_state,
                )
            calls = [{"type": "custom_tool_call", "name": "apply_patch"}] * rng.randrange(2)
            calls += [{"type": "function_call", "name": "exec_command"}] * rng.randrange(3)
            emitted = tool_shapes(calls)
            output_bytes = 800 + rng.randrange(4_000)
            text_bytes = rng.randrange(output_bytes // 2)
            exchange.attempt(
                request_model=model,
                request_bytes=provider_bytes,
                http_status=200,
                outcome=AttemptOutcome.COMPLETED,
                usage=read_usage({"usage": _usage(rng, index)}),
                response_model=f"{model}-2026-11-01",
                header_model=model,
                provider_request_id=f"req_{rng.getrandbits(128):032x}",
                emitted_tools=emitted,
                output_bytes=output_bytes,
                output_text_bytes=text_bytes,
                stream_bytes=output_bytes * 3 + 400,
                delivered=True,
                turn_state_forwarded=turn_state,
                turn_state_returned=True,
            )
            applied = sum(s.count for s in emitted if s.name == "apply_patch")
            hpatch = NO_HPATCH
            if hpatch_mode and applied:
                rejected = rng.randrange(2)
                payload = rng.randrange(200, 2_000)
                hpatch = hpatch_telemetry(
                    successes=applied,
                    corrections=rejected,
                    diagnostics=rejected,
                    carrier_tokens=30 * applied,
                    client_payload=(payload, -(-payload // 4)),
                    provider_payload=(payload // 2, -(-payload // 8)),
                    causes={"context_mismatch": rejected},
                    signatures={f"{rng.getrandbits(64):016x}": rejected},
                )
            exchange.finish(
                outcome=ExchangeOutcome.COMPLETED,
                client_status=200,
                client_output_bytes=output_bytes + (rng.randrange(-200, 600) if hpatch_mode else 0),
                client_output_text_bytes=text_bytes,
                client_stream_bytes=output_bytes * 3 + 500,
                router_commentary_bytes=rng.randrange(200) if hpatch_mode else 0,
                delivered_tools=emitted,
                hpatch=hpatch,
            )
        return writer.snapshot_json()


def codex_streams(snapshot: dict[str, Any], directory: Path | str) -> list[Path]:
    """Write one ``codex exec --json`` stream per root thread of ``snapshot``.

    Each stream's last ``turn.completed`` carries the thread's delivered usage, as Codex
    would report it, and a ``collab_tool_call`` names the children the root spawned (the
    proof a child thread of Codex's own needs); returns the files written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for thread in snapshot["threads"]:
        if thread["role"] != ThreadRole.ROOT.value:
            continue
        usage = thread["delivered_usage"]
        spawned = [
            child["thread_id"]
            for child in snapshot["threads"]
            if child["role"] == ThreadRole.CHILD.value
            and child["root_thread_id"] == thread["thread_id"]
        ]
        spawn = {"id": "item_1", "type": "collab_tool_call", "tool": "spawn_agent"}
        events = [
            {"type": "thread.started", "thread_id": thread["thread_id"]},
            {"type": "turn.started"},
            {"type": "item.completed", "item": {**spawn, "receiver_thread_ids": spawned}},
            {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message"}},
            {
                "type": "turn.completed",
                "usage": {
                    "input_tokens": usage["input_tokens"],
                    "cached_input_tokens": usage["cached_input_tokens"],
                    "cache_write_input_tokens": usage["cache_write_input_tokens"],
                    "output_tokens": usage["output_tokens"],
                    "reasoning_output_tokens": usage["reasoning_tokens"],
                },
            },
        ]
        path = out / f"codex-{thread['thread_id']}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        paths.append(path)
    return paths


def write_snapshot(snapshot: dict[str, Any], path: Path | str) -> Path:
    """Write a snapshot document as canonical JSON."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(canonical_json(snapshot) + "\n", encoding="utf-8")
    return target


__all__ = ["codex_streams", "write_snapshot", "write_synthetic_capture"]
