"""The reference router's issue reporting (``--report-issue HOOK``, spec 004).

Test equipment, like the rest of the reference router: it does what spec 004 asks of a
treatment router when the benchmark turns issue reporting on, so the runner's side (the
diagnose hook, ``hpbench/issuereports``) is exercised end to end.

- The model is offered one more tool, the ``report_issue`` function
  (:func:`tool_definition`).
- A ``report_issue`` call is the router's, not Codex's: it never reaches the client (its
  item and argument events are dropped from the stream, and from a terminal event's
  ``output``). The reference router keeps no history of its own, so the model's next
  request simply does not carry the call; a real router may answer it.
- Each report in a response the client received whole (the exchange completed) is a
  completed report: the router runs the hook once for it, with the report on standard
  input as one JSON object, ``{"title": …, "markdown": …}``, the model's exact strings.
  Arguments that are not such an object are no report; they are logged and dropped.
- The hook's failure is logged and never changes routing (spec 004: the evidence is
  auxiliary to the tool's behaviour); the runner finds the report missing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, Final

import structlog

from hpbench.issuereports.model import MAX_REPORT_BYTES, REPORT_TOOL, title_problem

log = structlog.get_logger("hpbench.reference.issues")

HOOK_TIMEOUT: Final = 10.0
"""How long one hook run may take before the router gives up on it."""


def tool_definition() -> dict[str, Any]:
    """The ``report_issue`` function tool the model is offered."""
    return {
        "type": "function",
        "name": REPORT_TOOL,
        "description": (
            "Report one problem with the edit tools: a short title and a Markdown body "
            "saying what was rejected, what the diagnostic said and how you recovered. "
            "The report goes to the benchmark's maintainers, not to the user."
        ),
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "One line."},
                "markdown": {"type": "string", "description": "The report, in Markdown."},
            },
            "required": ["title", "markdown"],
            "additionalProperties": False,
        },
    }


def with_tool(body: dict[str, Any]) -> dict[str, Any]:
    """A new request body whose ``tools`` end with ``report_issue`` (once; a ``tools``
    that is not a list is left alone, as the Hpatch tools do)."""
    tools = body.get("tools", [])
    if not isinstance(tools, list):
        return dict(body)
    if any(isinstance(tool, dict) and tool.get("name") == REPORT_TOOL for tool in tools):
        return dict(body)
    return {**body, "tools": [*tools, tool_definition()]}


def is_report_call(item: Any) -> bool:
    """Whether an output item is a ``report_issue`` function call."""
    return (
        isinstance(item, dict)
        and item.get("type") == "function_call"
        and item.get("name") == REPORT_TOOL
    )


def report_of(item: dict[str, Any]) -> bytes | None:
    """The hook's input for a ``report_issue`` call: the report as one JSON object, or
    None when the call's arguments are not a report."""
    try:
        arguments = json.loads(str(item.get("arguments", "")))
    except ValueError:
        return None
    if not isinstance(arguments, dict) or set(arguments) != {"title", "markdown"}:
        return None
    title, markdown = arguments["title"], arguments["markdown"]
    if not isinstance(title, str) or not isinstance(markdown, str) or title_problem(title):
        return None
    try:
        data = json.dumps(
            {"title": title, "markdown": markdown}, ensure_ascii=False, separators=(",", ":")
        ).encode("utf-8")
    except UnicodeEncodeError:
        return None  # a lone surrogate has no UTF-8 form
    return data if len(data) <= MAX_REPORT_BYTES else None


async def run_hook(hook: str, reports: Sequence[bytes]) -> int:
    """Run ``hook`` once per report, in order; how many it published (exit status 0)."""
    published = 0
    for report in reports:
        try:
            process = await asyncio.create_subprocess_exec(
                hook,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            log.warning("diagnose hook did not start", error=str(exc))
            continue
        try:
            _, stderr = await asyncio.wait_for(process.communicate(report), HOOK_TIMEOUT)
        except TimeoutError:
            process.kill()
            await process.wait()
            log.warning("diagnose hook timed out", seconds=HOOK_TIMEOUT)
            continue
        if process.returncode == 0:
            published += 1
        else:
            log.warning(
                "diagnose hook failed",
                status=process.returncode,
                stderr=stderr.decode("utf-8", "replace")[-500:],
            )
    return published
