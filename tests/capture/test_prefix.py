"""Cache-prefix observations (hpbench.capture.prefix): the router's comparison, the file
it keeps, and the validator holding that file to the records."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from hpbench.capture import codes
from hpbench.capture.models import RouterMode
from hpbench.capture.prefix import (
    Category,
    PrefixWatch,
    Stage,
    Status,
    compare,
    fingerprint,
    observations_path,
)
from hpbench.capture.synthetic import write_snapshot, write_synthetic_capture
from hpbench.capture.validator import iter_records, validate_capture

CONTENT = "the-conversation-text-never-leaves-the-router"


def body(input_items: list[Any], **fields: Any) -> bytes:
    request = {
        "model": "gpt-6-astra",
        "instructions": "stock",
        "tools": [{"type": "function", "name": "exec_command"}],
        "reasoning": {"effort": "medium"},
        "prompt_cache_key": "conversation-1",
        "stream": True,
        "input": input_items,
        **fields,
    }
    return json.dumps(request).encode()


def message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


FIRST = [message(CONTENT)]
LATER = [*FIRST, {"type": "function_call_output", "call_id": "c1", "output": "ok"}]


def judged(before: bytes, after: bytes) -> tuple[Status, tuple[Category, ...]]:
    previous, current = fingerprint(before), fingerprint(after)
    assert previous is not None and current is not None
    return compare(previous, current)


class TestCompare:
    def test_the_first_request_has_nothing_to_compare_with(self) -> None:
        current = fingerprint(body(FIRST))
        assert current is not None
        assert (Status.FIRST, ()) == compare(None, current)

    def test_appended_input_keeps_the_prefix(self) -> None:
        assert (Status.STABLE, ()) == judged(body(FIRST), body(LATER))

    def test_per_request_fields_are_not_the_prompt(self) -> None:
        """stream, store, include and request metadata may change without breaking the prefix."""
        after = body(
            LATER,
            stream=False,
            store=True,
            include=["x"],
            metadata={"a": 1},
            client_metadata={"turn_id": "t2"},
        )
        assert (Status.STABLE, ()) == judged(body(FIRST), after)

    @pytest.mark.parametrize(
        ("change", "category"),
        [
            ({"instructions": "treatment"}, Category.INSTRUCTIONS),
            ({"tools": []}, Category.TOOLS),
            ({"tool_choice": "none"}, Category.TOOLS),
            ({"model": "gpt-6-mentor"}, Category.MODEL),
            ({"reasoning": {"effort": "high"}}, Category.REASONING),
            ({"prompt_cache_key": "conversation-2"}, Category.PROMPT_CACHE_KEY),
            ({"temperature": 0.5}, Category.OTHER),
        ],
    )
    def test_each_field_changes_its_category(
        self, change: dict[str, Any], category: Category
    ) -> None:
        assert (Status.CHANGED, (category,)) == judged(body(FIRST), body(LATER, **change))

    def test_a_rewritten_earlier_item_breaks_the_input_prefix(self) -> None:
        """What CTP/2 does to an older output on the provider side."""
        rewritten = [message("[[ctp2:c0]] (120 bytes elided)"), LATER[1]]
        assert (Status.CHANGED, (Category.INPUT_PREFIX,)) == judged(body(FIRST), body(rewritten))

    def test_a_shorter_input_breaks_the_input_prefix(self) -> None:
        assert (Status.CHANGED, (Category.INPUT_PREFIX,)) == judged(body(LATER), body(FIRST))

    def test_several_categories_in_their_fixed_order(self) -> None:
        after = body([message("other")], model="m2", instructions="i2")
        status, changed = judged(body(FIRST), after)
        assert (Status.CHANGED, (Category.INSTRUCTIONS, Category.MODEL, Category.INPUT_PREFIX)) == (
            status,
            changed,
        )

    @pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'"text"'])
    def test_a_body_that_is_not_an_object_has_no_fingerprint(self, raw: bytes) -> None:
        assert fingerprint(raw) is None


class TestWatch:
    def test_observations_hold_statuses_only(self, tmp_path: Path) -> None:
        watch = PrefixWatch(tmp_path)
        watch.observe(1, "t1", Stage.CLIENT, body(FIRST))
        watch.observe(2, "t1", Stage.CLIENT, body(LATER))
        watch.observe(3, "t1", Stage.CLIENT, body(LATER, model="m2"))
        watch.observe(4, "t2", Stage.CLIENT, body(FIRST))  # another thread starts afresh
        watch.observe(5, "t1", Stage.PROVIDER, body(FIRST))  # the other stage too
        watch.observe(6, "t1", Stage.CLIENT, b"not json")  # nothing claimed
        path = observations_path(tmp_path)
        text = path.read_text()
        lines = [json.loads(line) for line in text.splitlines()]
        assert [
            (1, "client", "first", []),
            (2, "client", "stable", []),
            (3, "client", "changed", ["model"]),
            (4, "client", "first", []),
            (5, "provider", "first", []),
        ] == [(x["exchange"], x["stage"], x["status"], x["changed"]) for x in lines]
        # No content, fingerprint or key: only the contract's five fields.
        assert CONTENT not in text
        assert "conversation-1" not in text
        assert all(set(x) == {"schema", "exchange", "stage", "status", "changed"} for x in lines)
        assert 0o600 == stat.S_IMODE(path.stat().st_mode)
        assert 0o700 == stat.S_IMODE(path.parent.stat().st_mode)

    def test_an_exchange_observes_both_stages(self, tmp_path: Path) -> None:
        """One body (passthrough) or two (a rewriting router): the same lines as
        observing each stage on its own."""
        rewritten = body([message("elided"), LATER[1]])
        watch = PrefixWatch(tmp_path / "exchange")
        watch.observe_exchange(1, "t", body(FIRST), body(FIRST))
        watch.observe_exchange(2, "t", body(LATER), rewritten)
        apart = PrefixWatch(tmp_path / "apart")
        for exchange, client, provider in (
            (1, body(FIRST), body(FIRST)),
            (2, body(LATER), rewritten),
        ):
            apart.observe(exchange, "t", Stage.CLIENT, client)
            apart.observe(exchange, "t", Stage.PROVIDER, provider)
        text = observations_path(tmp_path / "exchange").read_text()
        assert observations_path(tmp_path / "apart").read_text() == text
        assert (
            '"changed":["input_prefix"],"exchange":2,"schema":"hpbench.cache-prefix.v1","stage":"provider","status":"changed"'
            in text
        )


def capture(tmp_path: Path, exchanges: int = 3) -> tuple[Path, Path, list[int]]:
    """A valid synthetic capture of one root thread, and its exchange numbers."""
    records = tmp_path / "capture"
    snapshot = write_synthetic_capture(
        records, exchanges=exchanges, retry_every=0, child_every=0, seed=3
    )
    metrics = write_snapshot(snapshot, tmp_path / "metrics.json")
    numbers = [r.exchange for _, _, r in iter_records(records) if r.kind == "client"]
    return records, metrics, numbers


def validate(records: Path, metrics: Path) -> Any:
    return validate_capture(records, metrics, arm="hpatch")


def write_lines(records: Path, lines: list[dict[str, Any]]) -> None:
    path = observations_path(records)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def line(exchange: int, status: str, changed: list[str] | None = None, stage: str = "client"):
    return {
        "schema": "hpbench.cache-prefix.v1",
        "exchange": exchange,
        "stage": stage,
        "status": status,
        "changed": changed or [],
    }


class TestValidation:
    def test_rows_join_observations_to_usage_and_turn_state(self, tmp_path: Path) -> None:
        records, metrics, (one, two, three) = capture(tmp_path)
        write_lines(
            records,
            [
                line(one, "first"),
                line(one, "first", stage="provider"),
                line(two, "stable"),
                line(two, "changed", ["input_prefix"], stage="provider"),
                line(three, "stable"),
            ],
        )
        report = validate(records, metrics)
        assert report.ok, report.findings
        rows = report.cache_prefix
        assert [1, 2, 3] == [row.ordinal for row in rows]
        assert [("first", "first"), ("stable", "changed"), ("stable", "unavailable")] == [
            (row.client, row.provider) for row in rows
        ]
        assert ("provider:input_prefix",) == rows[1].changed
        assert all(row.input_tokens is not None for row in rows)
        # The synthetic capture sends no turn state on its first exchange, then forwards it.
        assert ["not sent", "forwarded", "forwarded"] == [row.turn_state for row in rows]

    def test_without_observations_every_status_is_unavailable_never_stable(
        self, tmp_path: Path
    ) -> None:
        records, metrics, _ = capture(tmp_path)
        report = validate(records, metrics)
        assert report.ok, report.findings
        assert {("unavailable", "unavailable")} == {
            (r.client, r.provider) for r in report.cache_prefix
        }

    @pytest.mark.parametrize(
        ("lines", "message"),
        [
            (lambda n: [line(n[0], "first"), line(n[0], "first")], "observed twice"),
            (lambda n: [line(999, "first")], "exchange 999 (client): no such exchange"),
            (lambda n: [line(n[1], "first")], "but it is not its thread's first request"),
            (lambda n: [line(n[0], "stable")], "but it is its thread's first request"),
            (lambda n: [line(n[1], "changed")], "a changed request names no changed category"),
            (
                lambda n: [line(n[1], "stable", ["model"])],
                "a stable request names changed categories",
            ),
            (
                lambda n: [line(n[1], "changed", ["model", "model"])],
                "a category is named twice",
            ),
            (lambda n: [line(n[1], "changed", ["temperature"])], "$.changed[0]: expected one of"),
            (
                lambda n: [{**line(n[0], "first"), "fingerprint": "ab12"}],
                "unknown field(s): fingerprint",
            ),
            (lambda n: [line(n[0], "first", stage="agent")], "$.stage: expected one of"),
            (
                lambda n: [{**line(n[0], "first"), "schema": "hpbench.cache-prefix.v9"}],
                "$.schema: hpbench.cache-prefix.v9",
            ),
        ],
    )
    def test_bad_observations_are_refused_by_name(
        self, tmp_path: Path, lines: Any, message: str
    ) -> None:
        records, metrics, numbers = capture(tmp_path)
        write_lines(records, lines(numbers))
        report = validate(records, metrics)
        found = [f for f in report.findings if f.code == codes.CACHE_PREFIX]
        assert found, report.findings
        assert any(message in f.message for f in found), found

    def test_an_unreadable_line_is_a_finding_with_its_line(self, tmp_path: Path) -> None:
        records, metrics, numbers = capture(tmp_path)
        path = observations_path(records)
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(line(numbers[0], "first")) + "\n{not json\n")
        report = validate(records, metrics)
        (found,) = [f for f in report.findings if f.code == codes.CACHE_PREFIX]
        assert 2 == found.line


def test_a_passthrough_router_whose_stages_disagree_is_refused(tmp_path: Path) -> None:
    """A passthrough router sends upstream what it got, so a provider-side change its
    client side does not show is a false observation."""
    records = tmp_path / "capture"
    snapshot = write_synthetic_capture(
        records, mode=RouterMode.PASSTHROUGH, exchanges=2, retry_every=0, child_every=0
    )
    metrics = write_snapshot(snapshot, tmp_path / "metrics.json")
    one, two = [r.exchange for _, _, r in iter_records(records) if r.kind == "client"]
    agreeing = [line(one, "first"), line(one, "first", stage="provider"), line(two, "stable")]
    write_lines(records, [*agreeing, line(two, "stable", stage="provider")])
    report = validate_capture(records, metrics, arm="control")
    assert report.ok, report.findings
    write_lines(records, [*agreeing, line(two, "changed", ["input_prefix"], stage="provider")])
    report = validate_capture(records, metrics, arm="control")
    (found,) = report.findings
    assert "stages disagree (stable and changed)" in found.message
