"""What a router reads off Codex requests and provider responses, in the contract's terms.

A router hands the :class:`~hpbench.capture.CaptureWriter` sizes, counts and identities
only; these helpers turn a request's headers, a response's ``usage`` object and its output
items into them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from hpbench.capture._converter import CONVERTER
from hpbench.capture._totals import shapes_json
from hpbench.capture.models import (
    CachedInputState,
    Count,
    Ident,
    ThreadRef,
    ThreadRole,
    ToolShape,
    Usage,
    UsageState,
)


@attrs.frozen
class UsageReading:
    """What an attempt's response said about usage: a state and, when reported, the usage."""

    state: UsageState
    usage: Usage | None

    def __attrs_post_init__(self) -> None:
        if (self.state is UsageState.REPORTED) != (self.usage is not None):
            msg = "usage must be given exactly when the state is 'reported'"
            raise ValueError(msg)


NO_USAGE = UsageReading(UsageState.ABSENT, None)
"""The reading of an attempt whose response carried no usage."""


def _count_or_none(value: Any) -> Count | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return Count(value)


def read_usage(response: Mapping[str, Any] | None) -> UsageReading:
    """Classify the usage of a Responses API ``response`` object.

    Args:
        response: the ``response`` object of the terminal event (``response.completed``,
            ``response.failed``, ``response.incomplete``), or None when there was none.

    Returns:
        ``absent`` when there is no ``usage`` (or it is null); ``invalid`` when
        ``input_tokens`` or ``output_tokens`` is not a non-negative integer; otherwise
        ``reported``, with the cached count's state kept (explicit, missing, null, invalid).
    """
    if response is None:
        return NO_USAGE
    usage = response.get("usage")
    if usage is None:
        return NO_USAGE
    if not isinstance(usage, Mapping):
        return UsageReading(UsageState.INVALID, None)
    input_tokens = _count_or_none(usage.get("input_tokens"))
    output_tokens = _count_or_none(usage.get("output_tokens"))
    if input_tokens is None or output_tokens is None:
        return UsageReading(UsageState.INVALID, None)
    input_details = usage.get("input_tokens_details")
    cached: Count | None = None
    cache_write: Count | None = None
    if not isinstance(input_details, Mapping):
        state = CachedInputState.MISSING if input_details is None else CachedInputState.INVALID
    elif "cached_tokens" not in input_details:
        state = CachedInputState.MISSING
    elif input_details["cached_tokens"] is None:
        state = CachedInputState.NULL
    else:
        cached = _count_or_none(input_details["cached_tokens"])
        state = CachedInputState.INVALID if cached is None else CachedInputState.EXPLICIT
    if isinstance(input_details, Mapping):
        cache_write = _count_or_none(input_details.get("cache_write_tokens"))
    output_details = usage.get("output_tokens_details")
    reasoning = (
        _count_or_none(output_details.get("reasoning_tokens"))
        if isinstance(output_details, Mapping)
        else None
    )
    return UsageReading(
        UsageState.REPORTED,
        Usage(
            input_tokens=input_tokens,
            cached_input_tokens=cached,
            cached_input_state=state,
            cache_write_input_tokens=cache_write,
            output_tokens=output_tokens,
            reasoning_tokens=reasoning,
        ),
    )


def tool_shapes(items: Iterable[Mapping[str, Any]]) -> tuple[ToolShape, ...]:
    """Count the tool calls among Responses API output items, by shape.

    An item is a tool call when its ``type`` ends with ``_call``; its name is ``name``
    (or the type without ``_call``), its namespace ``namespace`` (or null).
    """
    counts: dict[tuple[str, str | None, str], int] = {}
    for item in items:
        item_type = item.get("type")
        if not isinstance(item_type, str) or not item_type.endswith("_call"):
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name:
            name = item_type.removesuffix("_call") or item_type
        namespace = item.get("namespace")
        if not isinstance(namespace, str) or not namespace:
            namespace = None
        key = (item_type, namespace, name)
        counts[key] = counts.get(key, 0) + 1
    return tuple(CONVERTER.structure(shape, ToolShape) for shape in shapes_json(counts))


def thread_from_headers(
    headers: Mapping[str, str], *, parent_thread_id: str | None = None
) -> ThreadRef:
    """The thread of a Codex request, from its ``thread-id``, ``session-id`` and
    ``x-openai-subagent`` headers (looked up lower-case; pass a case-insensitive mapping
    or lower-cased keys).

    Codex names a child's root (``session-id``) but not its parent; unless
    ``parent_thread_id`` says otherwise, a child's parent is taken to be its root.

    Raises:
        ValueError: when neither ``thread-id`` nor ``session-id`` is present.
    """
    thread_id = headers.get("thread-id") or headers.get("session-id")
    root_id = headers.get("session-id") or thread_id
    if not thread_id or not root_id:
        msg = "the request names no thread (no thread-id or session-id header)"
        raise ValueError(msg)
    subagent = headers.get("x-openai-subagent") or None
    if thread_id == root_id:
        return ThreadRef(
            thread_id=Ident(thread_id),
            root_thread_id=Ident(root_id),
            parent_thread_id=None,
            role=ThreadRole.ROOT,
            subagent=subagent,
        )
    return ThreadRef(
        thread_id=Ident(thread_id),
        root_thread_id=Ident(root_id),
        parent_thread_id=Ident(parent_thread_id or root_id),
        role=ThreadRole.CHILD,
        subagent=subagent,
    )


__all__ = [
    "NO_USAGE",
    "UsageReading",
    "read_usage",
    "thread_from_headers",
    "tool_shapes",
]
