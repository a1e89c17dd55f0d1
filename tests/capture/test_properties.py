"""Properties: generated valid captures pass; deleting, duplicating or reordering a
record, truncating the file, or changing any integer of the snapshot fails."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpbench.capture.models import (
    AttemptOutcome,
    ExchangeOutcome,
    Protocol,
    RouterMode,
)
from hpbench.capture.synthetic import codex_streams, write_snapshot
from hpbench.capture.validator import CaptureReport, validate_capture
from hpbench.capture.writer import (
    NO_HPATCH,
    CaptureWriter,
    hpatch_telemetry,
    read_usage,
    thread_from_headers,
    tool_shapes,
)

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

cached_values = st.sampled_from(["explicit", "missing", "null", "invalid"])
usages = st.one_of(
    st.none(),
    st.just("invalid"),
    st.tuples(st.integers(0, 50_000), cached_values, st.integers(0, 4_000), st.booleans()),
)
attempt_plans = st.tuples(st.sampled_from([200, 500, 429, None]), usages, st.integers(0, 9_000))
exchange_plans = st.fixed_dictionaries(
    {
        "thread": st.integers(0, 3),
        "child": st.booleans(),
        "client_bytes": st.integers(0, 200_000),
        "attempts": st.lists(attempt_plans, min_size=1, max_size=3),
        "deliver": st.booleans(),
        "turn_state": st.booleans(),
        "tools": st.lists(
            st.sampled_from(["apply_patch", "exec_command", "web_search"]), max_size=3
        ),
        "client_output": st.integers(0, 9_000),
        "hpatch": st.integers(0, 3),
    }
)
captures = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(list(RouterMode)),
        "protocol": st.sampled_from(list(Protocol)),
        "exchanges": st.lists(exchange_plans, min_size=1, max_size=8),
    }
)


def _usage(plan: Any) -> dict[str, Any] | None:
    if plan is None:
        return None
    if plan == "invalid":
        return {"usage": {"input_tokens": "many"}}
    input_tokens, cached, output, reasoning = plan
    details: dict[str, Any] = {
        "explicit": {"cached_tokens": input_tokens // 2},
        "missing": {},
        "null": {"cached_tokens": None},
        "invalid": {"cached_tokens": -3},
    }[cached]
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "input_tokens_details": details,
        "output_tokens": output,
    }
    if reasoning:
        usage["output_tokens_details"] = {"reasoning_tokens": output // 3}
    return {"usage": usage}


def write_plan(plan: dict[str, Any], root: Path) -> tuple[Path, Path, list[Path]]:
    """Write a planned capture through the writer; return records, snapshot, Codex streams."""
    mode = plan["mode"]
    writer = CaptureWriter(root / "capture", mode=mode, protocol=plan["protocol"])
    for item in plan["exchanges"]:
        root_id = f"root-{item['thread']}"
        headers = {"session-id": root_id, "thread-id": root_id}
        if item["child"]:
            headers["thread-id"] = f"child-{item['thread']}"
        exchange = writer.begin(
            thread=thread_from_headers(headers),
            requested_model="m",
            request_bytes=item["client_bytes"],
            turn_state_sent=item["turn_state"],
        )
        shapes = tool_shapes({"type": "function_call", "name": n} for n in item["tools"])
        attempts = item["attempts"]
        for index, (status, usage, size) in enumerate(attempts):
            last = index == len(attempts) - 1
            delivered = last and item["deliver"] and status == 200
            outcome = {
                200: AttemptOutcome.COMPLETED if delivered or last else AttemptOutcome.FAILED,
                500: AttemptOutcome.HTTP_ERROR,
                429: AttemptOutcome.HTTP_ERROR,
                None: AttemptOutcome.CONNECT_ERROR,
            }[status]
            exchange.attempt(
                request_model="m",
                request_bytes=size,
                http_status=status,
                outcome=outcome,
                usage=read_usage(_usage(usage)),
                response_model="m-1" if status == 200 else None,
                header_model="m" if status == 200 else None,
                emitted_tools=shapes if status == 200 else (),
                output_bytes=size // 2,
                output_text_bytes=size // 5,
                stream_bytes=size,
                delivered=delivered,
                turn_state_forwarded=item["turn_state"],
            )
        count = item["hpatch"] if mode is RouterMode.HPATCH else 0
        exchange.finish(
            outcome=ExchangeOutcome.COMPLETED if item["deliver"] else ExchangeOutcome.FAILED,
            client_status=200 if item["deliver"] else 502,
            client_output_bytes=item["client_output"],
            delivered_tools=shapes if item["deliver"] else (),
            hpatch=(
                hpatch_telemetry(
                    successes=count,
                    diagnostics=count,
                    carrier_tokens=count * 7,
                    client_payload=(count * 40, count * 10),
                    provider_payload=(count * 20, count * 5),
                    causes={"other": count},
                    signatures={f"{count:016x}": count},
                )
                if count
                else NO_HPATCH
            ),
        )
    writer.close()
    snapshot = writer.snapshot_json()
    path = write_snapshot(snapshot, root / "metrics.json")
    return root / "capture", path, codex_streams(snapshot, root / "codex")


def _validate(plan: dict[str, Any], records: Path, snapshot: Path, **kwargs: Any) -> CaptureReport:
    arm = "control" if plan["mode"] is RouterMode.PASSTHROUGH else "hpatch"
    if arm == "control" and plan["protocol"] is Protocol.CTP2:
        arm = "hpatch"  # a passthrough/ctp2 router is bound to no arm; check it as hpatch
    return validate_capture(
        records,
        snapshot,
        arm=arm,
        expect_protocol=None if arm == "control" else plan["protocol"].value,
        **kwargs,
    )


def _bound(plan: dict[str, Any]) -> bool:
    return not (plan["mode"] is RouterMode.PASSTHROUGH and plan["protocol"] is Protocol.CTP2)


@st.composite
def valid_plans(draw: st.DrawFn) -> dict[str, Any]:
    plan = draw(captures)
    if not _bound(plan):
        plan["protocol"] = Protocol.NATIVE
    return plan


class TestValidCaptures:
    @SETTINGS
    @given(valid_plans(), st.data())
    def test_generated_capture_is_accepted(self, plan, data):
        """Whatever the writer writes (retries, missing usage, children, failures) passes,
        in one record file or split over several."""
        with tempfile.TemporaryDirectory() as tmp:
            records, snapshot, streams = write_plan(plan, Path(tmp))
            path = records / "records.jsonl"
            lines = path.read_text().splitlines(keepends=True)
            cut = data.draw(st.integers(0, len(lines)))
            if 0 < cut < len(lines):  # files are read in name order, as one sequence
                path.write_text("".join(lines[:cut]))
                (records / "records.z.jsonl").write_text("".join(lines[cut:]))
            report = _validate(plan, records, snapshot, codex_jsonl=streams)
            assert report.ok, [str(f) for f in report.findings]


def _mutated_lines(plan: dict[str, Any], change: Any) -> CaptureReport:
    with tempfile.TemporaryDirectory() as tmp:
        records, snapshot, _ = write_plan(plan, Path(tmp))
        path = records / "records.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(change(lines)))
        return _validate(plan, records, snapshot)


class TestBrokenCaptures:
    @SETTINGS
    @given(valid_plans(), st.data())
    def test_deleting_a_record(self, plan, data):
        """Deleting any one record is detected."""

        def change(lines: list[str]) -> list[str]:
            index = data.draw(st.integers(0, len(lines) - 1))
            return lines[:index] + lines[index + 1 :]

        assert not _mutated_lines(plan, change).ok

    @SETTINGS
    @given(valid_plans(), st.data())
    def test_duplicating_a_record(self, plan, data):
        """A copy of any record, anywhere, is detected."""

        def change(lines: list[str]) -> list[str]:
            source = data.draw(st.integers(0, len(lines) - 1))
            target = data.draw(st.integers(0, len(lines)))
            return [*lines[:target], lines[source], *lines[target:]]

        assert not _mutated_lines(plan, change).ok

    @SETTINGS
    @given(valid_plans(), st.data())
    def test_reordering_records(self, plan, data):
        """Moving any record to another place is detected."""

        def change(lines: list[str]) -> list[str]:
            source = data.draw(st.integers(0, len(lines) - 1))
            moved = lines.pop(source)
            others = [i for i in range(len(lines) + 1) if i != source]
            target = data.draw(st.sampled_from(others)) if others else source
            lines.insert(target, moved)
            return lines

        plan_lines = sum(2 + len(e["attempts"]) for e in plan["exchanges"])
        if plan_lines > 1:
            assert not _mutated_lines(plan, change).ok

    @SETTINGS
    @given(valid_plans(), st.data())
    def test_truncating_the_file(self, plan, data):
        """Any strict prefix of the record file is detected."""
        with tempfile.TemporaryDirectory() as tmp:
            records, snapshot, _ = write_plan(plan, Path(tmp))
            path = records / "records.jsonl"
            raw = path.read_bytes()
            path.write_bytes(raw[: data.draw(st.integers(0, len(raw) - 1))])
            assert not _validate(plan, records, snapshot).ok

    @SETTINGS
    @given(valid_plans(), st.data())
    def test_changing_any_snapshot_integer(self, plan, data):
        """Changing any integer of the snapshot, by any amount, is detected."""
        with tempfile.TemporaryDirectory() as tmp:
            records, snapshot_path, _ = write_plan(plan, Path(tmp))
            snapshot = json.loads(snapshot_path.read_text())
            leaves = _integer_leaves(snapshot)
            path = data.draw(st.sampled_from(leaves))
            delta = data.draw(st.integers(-1000, 1000).filter(bool))
            parent = snapshot
            for step in path[:-1]:
                parent = parent[step]
            parent[path[-1]] += delta
            snapshot_path.write_text(json.dumps(snapshot))
            report = _validate(plan, records, snapshot_path)
            assert not report.ok, path


def _integer_leaves(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [prefix]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in _integer_leaves(item, (*prefix, key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _integer_leaves(item, (*prefix, i))]
    return []
