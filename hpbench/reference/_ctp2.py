"""The reference CTP/2 codec: test equipment, never CTP's real algorithm or results.

CTP/2 lets a router send the provider less than the client sent and hand the
client more than the provider sent. This module is the reference router's
stand-in for it, chosen so that every saving it produces is a real, signed
measurement of bytes that did or did not cross a link, not a model of one:

- **Deterministic.** Pure functions of their arguments (no I/O, no clock, no
  state), so the same history always compresses to the same bytes and a paired
  run can be replayed.
- **Reversible.** Nothing is summarised or dropped: a compressed tool output is
  replaced by a reference to its own ``call_id``, and the client's history,
  which Codex resends whole with every request, still holds the original.
  :func:`expand_input` restores it from there.

Both directions use one marker, :data:`REFERENCE`::

    [[ctp2:<call_id>]]                       # what the model may write
    [[ctp2:<call_id>]] (<n> bytes elided)    # what compression leaves in an output

where ``<call_id>`` matches ``[A-Za-z0-9_.:-]{1,128}`` and ``<n>`` is the UTF-8
size of the text the marker stands for.

**Request compression** (:func:`compress_input`): a tool output
(``function_call_output`` or ``custom_tool_call_output``) that the model has
already answered, that is, one before the last maximal run of model-output
items in ``input``, and whose text is longer than :data:`THRESHOLD_BYTES`, has
its ``output`` replaced by the elided marker. The results of the last model
response come after that run and are never touched: the model has not seen
them yet.

**Output expansion** (:func:`expand_output_item`): in an assistant ``message``,
each reference in an ``output_text`` part that names a tool output in the
client's history is replaced by that output's full text, so the model can quote
an earlier result by name and the client still receives it whole. A reference
that names nothing is left as written and counted.

A reference must name exactly one text output: a ``call_id`` carried by two
tool outputs in one history, or an output that is not all text (a list with an
image part, say), is neither compressed nor expanded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

from hpbench.reference._history import is_model_output

TOOL_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})

# Outputs this short are left alone: the marker plus its note would save little
# or nothing, and a small result is the one the model most often needs verbatim.
THRESHOLD_BYTES = 64

CALL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")

# One pattern for both directions. The elision note is optional so that a model
# copying the marker exactly as it saw it gets the whole marker expanded, not
# the full text followed by a note that no longer holds.
REFERENCE = re.compile(
    r"\[\[ctp2:(?P<call_id>" + CALL_ID.pattern + r")\]\](?: \((?P<elided>[0-9]+) bytes elided\))?"
)


def marker(call_id: str, size: int) -> str:
    """The text an elided output becomes: ``[[ctp2:<call_id>]] (<size> bytes elided)``."""
    return f"[[ctp2:{call_id}]] ({size} bytes elided)"


def output_text(output: Any) -> str | None:
    """A tool output's text, or None when it is not all text.

    A string is its own text; a list is the concatenation of its parts when
    every part is an ``input_text`` with string text. Anything else (an image
    part, a number, a missing output) has no text a reference could carry.
    """
    if isinstance(output, str):
        return output
    if not isinstance(output, list):
        return None
    texts: list[str] = []
    for part in output:
        if not isinstance(part, dict) or part.get("type") != "input_text":
            return None
        text = part.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return "".join(texts)


def _last_response_start(items: Sequence[Any]) -> int:
    """Where the last maximal run of model-output items begins; 0 when there is none."""
    end = len(items)
    while end > 0 and not is_model_output(items[end - 1]):
        end -= 1
    start = end
    while start > 0 and is_model_output(items[start - 1]):
        start -= 1
    return start


def _referable(item: Any) -> str | None:
    """The call_id a marker may name for this item, or None when it is no tool output."""
    if not isinstance(item, dict) or item.get("type") not in TOOL_OUTPUT_TYPES:
        return None
    call_id = item.get("call_id")
    if not isinstance(call_id, str) or CALL_ID.fullmatch(call_id) is None:
        return None
    return call_id


def tool_outputs(history: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """The tool output items a reference can name, by call_id.

    A call_id carried by more than one tool output is left out: a reference to it
    could mean either, so it means neither.
    """
    found: dict[str, dict[str, Any]] = {}
    seen_twice: set[str] = set()
    for item in history:
        call_id = _referable(item)
        if call_id is None:
            continue
        if call_id in found:
            seen_twice.add(call_id)
        found[call_id] = item
    return {call_id: item for call_id, item in found.items() if call_id not in seen_twice}


def compress_input(items: list[Any]) -> list[Any]:
    """``input`` with every answered tool output over :data:`THRESHOLD_BYTES` elided.

    Returns a new list. An elided item is a new dict with the marker as its
    ``output``; every other item is the caller's own object, unchanged. Items
    this codec cannot name safely (not a dict, no parseable ``call_id``, an
    output that is not text) pass through.
    """
    answered = _last_response_start(items)
    nameable = tool_outputs(items)
    compressed: list[Any] = []
    for position, item in enumerate(items):
        call_id = _referable(item) if position < answered else None
        # This very item when its call_id names it alone; None when it names several.
        source = nameable.get(call_id) if call_id is not None else None
        text = output_text(source.get("output")) if source is not None else None
        size = len(text.encode("utf-8")) if text is not None else 0
        if call_id is None or source is None or size <= THRESHOLD_BYTES:
            compressed.append(item)
            continue
        compressed.append({**source, "output": marker(call_id, size)})
    return compressed


def expand_input(compressed: list[Any], original: list[Any]) -> list[Any]:
    """Undo :func:`compress_input` from the client's own history.

    A tool output whose ``output`` is exactly the elided marker for its own
    call_id gets back the output of the one tool output in ``original`` with
    that call_id and type, provided its text is the size the marker states.
    Anything else is returned as it is.
    """
    sources = tool_outputs(original)
    restored: list[Any] = []
    for item in compressed:
        call_id = _referable(item)
        output = item.get("output") if call_id is not None else None
        found = REFERENCE.fullmatch(output) if isinstance(output, str) else None
        source = sources.get(call_id) if call_id is not None else None
        if (
            found is None
            or found["elided"] is None
            or found["call_id"] != call_id
            or source is None
            or source.get("type") != item.get("type")
        ):
            restored.append(item)
            continue
        text = output_text(source.get("output"))
        # Compared as text: a note of thousands of digits must not reach int().
        if text is None or str(len(text.encode("utf-8"))) != found["elided"]:
            restored.append(item)
            continue
        restored.append({**item, "output": source["output"]})
    return restored


@attrs.frozen
class Expanded:
    """One output item as the client receives it, and what expansion did to it."""

    item: dict[str, Any]
    expanded: int = 0
    unresolved: int = 0


def expand_output_item(item: dict[str, Any], history: list[Any]) -> Expanded:
    """An assistant message with each reference replaced by the full text it names.

    ``history`` is the client's ``input`` for this exchange, before compression,
    so it holds every output whole. A reference that names no text output in it
    stays verbatim and is counted in ``unresolved``. The returned item is a new
    dict when any reference was replaced and ``item`` itself otherwise; items
    other than assistant messages pass through. Annotations are carried
    unchanged (the scripted provider sends none, so none point into moved text).
    """
    if not isinstance(item, dict) or item.get("type") != "message":
        return Expanded(item)
    content = item.get("content")
    if item.get("role") != "assistant" or not isinstance(content, list):
        return Expanded(item)
    texts: dict[str, str] = {}
    for call_id, source in tool_outputs(history).items():
        text = output_text(source.get("output"))
        if text is not None:
            texts[call_id] = text
    expanded = 0
    unresolved = 0

    def replace(found: re.Match[str]) -> str:
        nonlocal expanded, unresolved
        text = texts.get(found["call_id"])
        if text is None:
            unresolved += 1
            return found[0]
        expanded += 1
        return text

    parts: list[Any] = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "output_text":
            parts.append(part)
            continue
        text = part.get("text")
        if not isinstance(text, str):
            parts.append(part)
            continue
        before = expanded
        new_text = REFERENCE.sub(replace, text)
        parts.append(part if expanded == before else {**part, "text": new_text})
    if expanded == 0:
        return Expanded(item, unresolved=unresolved)
    return Expanded({**item, "content": parts}, expanded=expanded, unresolved=unresolved)
