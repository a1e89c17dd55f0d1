"""What Codex reported for each measured root thread, held against the capture.

The streams are read through :mod:`hpbench.codex`, the project's one reader of
``codex exec --json`` (and so its one policy for a repeated key: the first value counts).
Codex reports the running thread total in each ``turn.completed``, so the last one is the
thread's usage. Codex 0.169 always writes all five counts: one it left out or wrote as null
is unknown (never 0), and the capture's figure for it cannot be proven, which is a finding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench.capture import codes
from hpbench.capture._sink import FindingSink
from hpbench.codex import InvalidLine, ItemEvent, ThreadStarted, TurnCompleted, read_events
from hpbench.codex.items import CollabToolCall
from hpbench.errors import HpbenchError

CODEX_TO_CAPTURE = (
    ("input_tokens", "input_tokens"),
    ("cached_input_tokens", "cached_input_tokens"),
    ("cache_write_input_tokens", "cache_write_input_tokens"),
    ("output_tokens", "output_tokens"),
    ("reasoning_output_tokens", "reasoning_tokens"),
)
"""Codex's ``turn.completed`` usage names and the capture's names for the same counts."""

_UNREADABLE = frozenset({"codex.line.not-json", "codex.line.not-utf8"})


@attrs.frozen
class CodexThread:
    """What one ``codex exec --json`` stream reported for its thread."""

    file: str
    thread_id: str | None
    usage: Mapping[str, int] | None
    spawned: tuple[str, ...] = ()
    """Child thread ids the stream's ``collab_tool_call`` items reached (Codex's own)."""


def read_codex_thread(path: Path | str, sink: FindingSink | None = None) -> CodexThread:
    """The thread id and thread-total usage of one ``codex exec --json`` stream.

    The thread id comes from the first ``thread.started``; the usage is that of the last
    ``turn.completed``. A line that is not JSON and a ``turn.completed`` whose usage is not
    an object of non-negative counts are findings; lines this check does not use are not.
    """
    sink = sink if sink is not None else FindingSink()
    name = str(path)
    thread_id: str | None = None
    usage: dict[str, int] | None = None
    spawned: list[str] = []
    try:
        for event in read_events(Path(path)):
            if isinstance(event, ItemEvent) and isinstance(event.item, CollabToolCall):
                spawned += event.item.receiver_thread_ids
            elif isinstance(event, ThreadStarted):
                if thread_id is None and event.thread_id:
                    thread_id = event.thread_id
            elif isinstance(event, TurnCompleted) and event.usage is not None:
                reported = attrs.asdict(event.usage)
                usage = {
                    key: reported[key] for key, _ in CODEX_TO_CAPTURE if reported[key] is not None
                }
            elif isinstance(event, TurnCompleted) or (
                isinstance(event, InvalidLine) and event.event_type == "turn.completed"
            ):
                sink.add(
                    codes.CODEX_SYNTAX,
                    "turn.completed usage is not an object of non-negative token counts",
                    file=name,
                    line=event.line,
                    field="$.usage",
                )
            elif isinstance(event, InvalidLine) and event.finding.code in _UNREADABLE:
                sink.add(codes.CODEX_SYNTAX, "not a JSON event", file=name, line=event.line)
    except HpbenchError as exc:
        sink.add(codes.CODEX_SYNTAX, f"cannot read the Codex stream: {exc}", file=name)
        return CodexThread(name, None, None)
    if thread_id is None:
        sink.add(codes.CODEX_SYNTAX, "no thread.started event names the thread", file=name)
    return CodexThread(name, thread_id, usage, tuple(spawned))


def reconcile_codex(
    threads: Sequence[CodexThread], totals: Mapping[str, Any], sink: FindingSink
) -> None:
    """Hold each root thread's delivered usage (``totals["threads"]``) to its Codex stream."""
    by_thread: dict[str, CodexThread] = {}
    for thread in threads:
        if thread.thread_id is not None:
            by_thread[thread.thread_id] = thread  # a later stream (a resume) wins
    captured = {t["thread_id"]: t for t in totals["threads"]}
    for thread_id, thread in by_thread.items():
        mine = captured.get(thread_id)
        if mine is None:
            sink.add(
                codes.RECONCILE_CODEX,
                f"Codex thread {thread_id} has no traffic in the capture",
                file=thread.file,
            )
        elif mine["role"] != "root":
            sink.add(
                codes.RECONCILE_CODEX,
                f"Codex thread {thread_id} is a child thread in the capture, not a root",
                file=thread.file,
            )
        elif thread.usage is None:
            sink.add(
                codes.CODEX_UNREPORTED,
                f"Codex reported no turn.completed usage for thread {thread_id}; its captured "
                "usage cannot be proven",
                file=thread.file,
            )
        else:
            _compare_usage(thread, thread.usage, mine["delivered_usage"], sink)
    for thread_id, mine in captured.items():
        if mine["role"] == "root" and thread_id not in by_thread:
            sink.add(
                codes.RECONCILE_CODEX,
                f"root thread {thread_id} of the capture matches none of the Codex streams",
            )


def _compare_usage(
    thread: CodexThread, usage: Mapping[str, int], delivered: Mapping[str, int], sink: FindingSink
) -> None:
    for codex_key, capture_key in CODEX_TO_CAPTURE:
        if codex_key not in usage:
            sink.add(
                codes.CODEX_UNREPORTED,
                f"Codex reported no {codex_key} for thread {thread.thread_id}; the captured "
                f"{capture_key} cannot be proven",
                file=thread.file,
                field=f"$.usage.{codex_key}",
            )
        elif usage[codex_key] != delivered[capture_key]:
            sink.add(
                codes.RECONCILE_CODEX,
                f"Codex reported {codex_key}={usage[codex_key]} for thread {thread.thread_id}; "
                f"the provider usage delivered to it sums to {delivered[capture_key]}",
                file=thread.file,
                field=f"$.usage.{codex_key}",
            )
