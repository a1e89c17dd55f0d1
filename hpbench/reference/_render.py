"""A script step as the Responses API sends it: output items, then the SSE events.

Item ids name the step and the item's position (``call_<step>_<position>``), so
the provider can later find the output Codex reported for a call it made.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from hpbench.issuereports.model import REPORT_TOOL
from hpbench.reference._usage import Usage
from hpbench.reference.script import Fault, FaultKind, ItemType, Step


def render_step(
    step: Step, index: int, offered: Collection[str] = frozenset()
) -> list[dict[str, Any]]:
    """The Responses output items of a step, with ids that name the step; a
    ``report_issue`` item only when ``offered`` (the request's tool names) has the tool."""
    items: list[dict[str, Any]] = []
    for position, item in enumerate(step.output):
        suffix = f"{index}_{position}"
        if item.type is ItemType.REPORT_ISSUE:
            if REPORT_TOOL in offered:
                report = {"title": item.title, "markdown": item.markdown}
                items.append(_function_call(suffix, REPORT_TOOL, json.dumps(report)))
        elif item.type is ItemType.REASONING:
            items.append(
                {
                    "type": "reasoning",
                    "id": f"rs_{suffix}",
                    "summary": [{"type": "summary_text", "text": item.text}],
                }
            )
        elif item.type is ItemType.MESSAGE:
            items.append(assistant_message(f"msg_{suffix}", str(item.text)))
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
            name = {
                ItemType.APPLY_PATCH: "apply_patch",
                ItemType.HPATCH: "hpatch",
                ItemType.HPATCH_RECOVER: "hpatch_recover",
            }.get(item.type, str(item.name))
            text = item.input if item.type is ItemType.CUSTOM_TOOL_CALL else item.patch
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


def assistant_message(item_id: str, text: str) -> dict[str, Any]:
    """A finished assistant message carrying ``text``."""
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _function_call(suffix: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{suffix}",
        "call_id": f"call_{suffix}",
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def response_events(
    response_id: str,
    model: Any,
    output: Sequence[dict[str, Any]],
    usage: Usage,
    fault: Fault | None,
) -> list[dict[str, Any]]:
    """The SSE events of one response: created, each item, then completed (or failed).

    Message text is streamed as 16-character deltas; a ``response_failed`` fault
    replaces everything after ``response.created`` with one ``response.failed``.
    """
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


def failed_event(response_id: str, message: str) -> dict[str, Any]:
    """A ``response.failed`` event with a code Codex treats as fatal (no retry)."""
    return {
        "type": "response.failed",
        "response": {"id": response_id, "error": {"code": "invalid_prompt", "message": message}},
    }
