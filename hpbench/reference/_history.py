"""What a request's ``input`` history says: which step and turn it is, what commands reported.

The provider keeps no conversation of its own: the step it answers is counted
from the model responses already in ``input``, the turn from the user messages,
and a previous step's ``expect_exit_code`` is checked against the exit code
Codex reported back for that step's command.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hpbench.reference.script import ItemType, Script

MODEL_OUTPUT_TYPES = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "web_search_call", "local_shell_call"}
)


def is_model_output(item: Any) -> bool:
    """Whether an ``input`` item is something the model produced (a response's item)."""
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
        current = is_model_output(item)
        if current and not previous:
            runs += 1
        previous = current
    return runs


def is_user_message(item: Any) -> bool:
    """Whether an ``input`` item is a user message (a message's ``type`` may be left out)."""
    return (
        isinstance(item, dict)
        and item.get("type", "message") == "message"
        and item.get("role") == "user"
    )


def user_messages(items: Sequence[Any]) -> int:
    """The number of user messages: grows by at least one with every new turn."""
    return sum(1 for item in items if is_user_message(item))


_EXIT_CODE = re.compile(r"^Process exited with code (-?[0-9]+)$", re.MULTILINE)


def _reported_output(items: Sequence[Any], item_type: str, call_id: str) -> tuple[bool, Any]:
    """Whether Codex sent back an output of ``item_type`` for ``call_id``, and its text
    (a list of ``input_text`` parts joined; anything but a string or list as it came)."""
    for item in items:
        if not isinstance(item, dict) or item.get("type") != item_type:
            continue
        if item.get("call_id") != call_id:
            continue
        output = item.get("output")
        if isinstance(output, list):
            output = "".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
        return True, output
    return False, None


def reported_exit_code(items: Sequence[Any], call_id: str) -> int | None:
    """The exit code Codex reported for ``call_id``'s command, or None when it reported none.

    Codex sends a finished ``exec_command`` back as ``function_call_output`` whose text
    holds "Process exited with code N"; a command still running (past its yield time)
    has no such line. The output may be a string or a list of ``input_text`` parts.
    """
    _, output = _reported_output(items, "function_call_output", call_id)
    if not isinstance(output, str):
        return None
    match = _EXIT_CODE.search(output)
    return int(match[1]) if match else None


REJECTION_PREFIX = "hpatch rejected"
"""How the reference router's diagnostic for a rejected Hpatch edit begins."""


def reported_edit(items: Sequence[Any], call_id: str) -> str | None:
    """What came back for ``call_id``'s edit: ``applied``, ``rejected`` (the router's
    diagnostic), ``other``, or None when nothing came back."""
    found, output = _reported_output(items, "custom_tool_call_output", call_id)
    if not found:
        return None
    if not isinstance(output, str):
        return "other"
    if output.startswith(REJECTION_PREFIX):
        return "rejected"
    return "applied" if "Success." in output else "other"


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
        call_id = f"call_{previous}_{position}"
        if item.expect_applied is not None:
            wanted = "applied" if item.expect_applied else "rejected"
            edit = reported_edit(items, call_id)
            if edit != wanted:
                return {"step": previous, "expected": wanted, "got": edit}
        if item.type is not ItemType.EXEC_COMMAND or item.expect_exit_code is None:
            continue
        got = reported_exit_code(items, call_id)
        if got != item.expect_exit_code:
            return {"step": previous, "expected": item.expect_exit_code, "got": got}
    return None
