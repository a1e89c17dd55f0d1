"""The Codex JSONL reader: every event and item type, malformed lines, duplicate keys."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from hpbench.codex import (
    InvalidLine,
    ItemEvent,
    ItemPhase,
    OtherEvent,
    StreamError,
    ThreadStarted,
    TurnCompleted,
    TurnFailed,
    TurnStarted,
    Usage,
    iter_events,
    read_events,
)
from hpbench.codex._json import decode_line, later_value, repeated_keys
from hpbench.codex.items import (
    AgentMessage,
    CollabToolCall,
    CommandExecution,
    ErrorItem,
    FileChange,
    McpToolCall,
    PathChange,
    Reasoning,
    TodoEntry,
    TodoList,
    UnknownItem,
    WebSearch,
)
from hpbench.errors import HpbenchError

DATA = Path(__file__).resolve().parents[1] / "data" / "codex"


def _events(name: str) -> list:
    return list(read_events(DATA / name))


class TestDecodeLine:
    def test_first_duplicate_key_wins(self):
        """A repeated key keeps its first value; the later one stays reachable."""
        obj = decode_line('{"id":"item_0","type":"web_search","id":"ws_1"}')
        assert obj["id"] == "item_0"
        assert later_value(obj, "id") == "ws_1"
        assert repeated_keys(obj) == ("id",)

    def test_plain_objects_have_no_repeats(self):
        """Objects without repeats are plain dicts."""
        obj = decode_line('{"a":1,"b":{"c":2}}')
        assert later_value(obj, "a") is None
        assert repeated_keys(obj) == ()


class TestEventTypes:
    def test_every_top_level_event(self):
        """thread/turn events, error, item events and unknown events are all read."""
        events = _events("hand-all-items.jsonl")
        kinds = {type(event) for event in events}
        assert {
            ThreadStarted,
            TurnStarted,
            TurnCompleted,
            StreamError,
            ItemEvent,
            OtherEvent,
        } <= kinds
        assert not [event for event in events if isinstance(event, InvalidLine)]

    def test_thread_and_turn(self):
        """thread.started carries its id; turn.completed its usage."""
        events = _events("real-edit-loop.jsonl")
        assert isinstance(events[0], ThreadStarted)
        assert events[0].thread_id.startswith("01a23")
        assert isinstance(events[1], TurnStarted)
        assert Usage(1260, 360, 0, 180, 45) == events[-1].usage

    def test_turn_failed(self):
        """turn.failed carries the message; the error event before it is a StreamError."""
        events = _events("real-failure.jsonl")
        assert isinstance(events[-2], StreamError)
        assert isinstance(events[-1], TurnFailed)
        assert "context window" in events[-1].message

    def test_known_but_unseen_events(self):
        """item.plan.delta is known from Codex's source; session.paused is unknown."""
        others = [e for e in _events("hand-all-items.jsonl") if isinstance(e, OtherEvent)]
        assert [("item.plan.delta", True), ("session.paused", False)] == [
            (e.type, e.known) for e in others
        ]

    def test_turn_completed_without_usage(self):
        """A turn.completed without usage has usage None (unknown, not zero)."""
        (event,) = iter_events(['{"type":"turn.completed"}'])
        assert isinstance(event, TurnCompleted)
        assert event.usage is None

    def test_missing_usage_fields_are_unknown(self):
        """A count Codex left out or wrote as null is unknown (None), never 0."""
        (event,) = iter_events(
            ['{"type":"turn.completed","usage":{"input_tokens":7,"output_tokens":null}}']
        )
        assert Usage(7, None, None, None, None) == event.usage


class TestItemTypes:
    def _items(self) -> dict[str, object]:
        items = {}
        for event in _events("hand-all-items.jsonl"):
            if isinstance(event, ItemEvent) and event.phase is ItemPhase.COMPLETED:
                items[event.item.id] = event.item
        return items

    def test_each_known_item(self):
        """Every item type of Codex 0.169 becomes its class with the fields kept."""
        items = self._items()
        assert isinstance(items["item_0"], ErrorItem)
        assert Reasoning("item_1", "**Planning** I will look around first.") == items["item_1"]
        assert McpToolCall("item_3", "echo", "say", "completed", failed=False) == items["item_3"]
        assert (
            CollabToolCall(
                "item_5", "spawn_agent", "completed", ("01a23693-d235-7e93-94ee-9a0cea7da8d6",)
            )
            == items["item_5"]
        )
        assert (
            CommandExecution("item_6", "/bin/bash -lc 'cat src/app.go'", 0, "completed", 13)
            == items["item_6"]
        )
        assert (
            FileChange("item_7", (PathChange("/workspace/src/app.go", "update"),), "failed")
            == items["item_7"]
        )
        assert AgentMessage("item_12", "All done.") == items["item_12"]
        assert (
            TodoList("item_4", (TodoEntry("look", True), TodoEntry("edit", True)))
            == items["item_4"]
        )

    def test_web_search_duplicate_id(self):
        """web_search repeats ``id``: the item id stays, the second is the search id."""
        search = self._items()["item_2"]
        assert WebSearch("item_2", "ws_1", "q") == search

    def test_unknown_item_kept(self):
        """An unknown item type is kept with its id and type."""
        assert UnknownItem("item_10", "hologram") == self._items()["item_10"]

    def test_item_phases(self):
        """started, updated and completed are told apart."""
        phases = [e.phase for e in _events("hand-all-items.jsonl") if isinstance(e, ItemEvent)]
        assert set(ItemPhase) == set(phases)


class TestMalformedLines:
    def _findings(self) -> list[tuple[int, str, str | None]]:
        return [
            (e.line, e.finding.code, e.finding.field)
            for e in _events("hand-malformed.jsonl")
            if isinstance(e, InvalidLine)
        ]

    def test_each_problem_is_a_finding_with_its_line(self):
        """Truncated, non-JSON, non-object, blank, untyped, mistyped and non-UTF-8 lines."""
        assert [
            (4, "codex.line.not-json", None),
            (5, "codex.line.not-json", None),
            (6, "codex.line.not-object", None),
            (7, "codex.line.blank", None),
            (8, "codex.event.invalid", "$.type"),
            (9, "codex.event.invalid", "$.item.command"),
            (10, "codex.event.invalid", "$.item.changes[0].kind"),
            (11, "codex.event.invalid", "$.usage.input_tokens"),
            (12, "codex.line.not-utf8", None),
        ] == self._findings()

    def test_reading_goes_on(self):
        """Valid lines after malformed ones are still read."""
        events = _events("hand-malformed.jsonl")
        assert 16 == len(events)
        assert isinstance(events[-1], TurnCompleted)

    def test_findings_name_the_file(self):
        """A finding says which file and line."""
        path = DATA / "hand-malformed.jsonl"
        bad = next(e for e in read_events(path) if isinstance(e, InvalidLine))
        assert str(path) == bad.finding.file
        assert 4 == bad.finding.line
        assert f"{path}:4" in str(bad.finding)

    def test_nesting_too_deep_is_not_json(self):
        """A pathological line is a finding like any other, not an exception."""
        (event,) = iter_events([b"[" * 100_000 + b"]" * 100_000])
        assert isinstance(event, InvalidLine)
        assert "codex.line.not-json" == event.finding.code

    def test_invalid_event_says_its_type(self):
        """A malformed event keeps its type, so a reader can tell one it relies on."""
        lines = ['{"type":"turn.completed","usage":[1]}', '{"type":7}', "[]"]
        assert ["turn.completed", None, None] == [e.event_type for e in iter_events(lines)]

    def test_item_not_an_object(self):
        """``item`` must be an object."""
        (event,) = iter_events(['{"type":"item.completed","item":[1]}'])
        assert isinstance(event, InvalidLine)
        assert "$.item" == event.finding.field


class TestStreaming:
    def test_reads_lazily(self):
        """Events come one per line without reading ahead: an endless stream works."""

        def endless() -> Iterator[str]:
            for n in itertools.count():
                item = f'{{"id":"item_{n}","type":"reasoning","text":"x"}}'
                yield f'{{"type":"item.completed","item":{item}}}'

        first = list(itertools.islice(iter_events(endless()), 3))
        assert ["item_0", "item_1", "item_2"] == [e.item.id for e in first]

    def test_missing_file(self, tmp_path: Path):
        """A file that cannot be opened is an error a person can act on."""
        with pytest.raises(HpbenchError, match="cannot read"):
            list(read_events(tmp_path / "absent.jsonl"))

    def test_text_and_bytes(self):
        """Lines may be text or bytes, with or without newline."""
        line = '{"type":"turn.started"}'
        assert [TurnStarted(1), TurnStarted(2)] == list(iter_events([line, line.encode() + b"\n"]))
