"""The writer API routers use."""

from __future__ import annotations

import json
import stat
import threading
from typing import Any

import pytest

from hpbench.capture import (
    AttemptOutcome,
    CachedInputState,
    CaptureWriter,
    ExchangeOutcome,
    Protocol,
    RouterMode,
    ThreadRole,
    UsageReading,
    UsageState,
    read_usage,
    thread_from_headers,
    tool_shapes,
    validate_capture,
)
from hpbench.capture.synthetic import write_snapshot

ROOT = {"thread-id": "t", "session-id": "t"}


class TestReadUsage:
    @pytest.mark.parametrize(
        ("details", "state", "cached"),
        [
            ({"cached_tokens": 7}, CachedInputState.EXPLICIT, 7),
            ({"cached_tokens": 0}, CachedInputState.EXPLICIT, 0),
            ({}, CachedInputState.MISSING, None),
            (None, CachedInputState.MISSING, None),
            ({"cached_tokens": None}, CachedInputState.NULL, None),
            ({"cached_tokens": -1}, CachedInputState.INVALID, None),
            ({"cached_tokens": "7"}, CachedInputState.INVALID, None),
            ({"cached_tokens": True}, CachedInputState.INVALID, None),
            ("seven", CachedInputState.INVALID, None),
        ],
    )
    def test_cached_states_are_kept_apart(self, details, state, cached):
        """explicit, missing, null and invalid cached counts are told apart."""
        usage: dict[str, Any] = {"input_tokens": 10, "output_tokens": 2}
        if details is not None:
            usage["input_tokens_details"] = details

        reading = read_usage({"usage": usage})

        assert UsageState.REPORTED == reading.state
        assert reading.usage is not None
        assert (state, cached) == (
            reading.usage.cached_input_state,
            reading.usage.cached_input_tokens,
        )

    @pytest.mark.parametrize("response", [None, {}, {"usage": None}])
    def test_absent(self, response):
        """No usage object is 'absent'."""
        assert UsageReading(UsageState.ABSENT, None) == read_usage(response)

    @pytest.mark.parametrize(
        "usage",
        [
            [],
            {"input_tokens": 1},
            {"input_tokens": -1, "output_tokens": 1},
            {"input_tokens": 1.5, "output_tokens": 1},
        ],
    )
    def test_invalid(self, usage):
        """A usage object without non-negative integer input and output is 'invalid'."""
        assert UsageState.INVALID == read_usage({"usage": usage}).state

    def test_reasoning_and_cache_write(self):
        """Reasoning and cache-write counts are read, null when absent."""
        full = read_usage(
            {
                "usage": {
                    "input_tokens": 9,
                    "input_tokens_details": {"cached_tokens": 1, "cache_write_tokens": 4},
                    "output_tokens": 3,
                    "output_tokens_details": {"reasoning_tokens": 2},
                }
            }
        ).usage
        bare = read_usage({"usage": {"input_tokens": 9, "output_tokens": 3}}).usage

        assert (4, 2) == (full.cache_write_input_tokens, full.reasoning_tokens)
        assert (None, None) == (bare.cache_write_input_tokens, bare.reasoning_tokens)

    def test_reading_invariant(self):
        """A reading carries usage exactly when reported."""
        with pytest.raises(ValueError, match="reported"):
            UsageReading(UsageState.REPORTED, None)


class TestShapesAndThreads:
    def test_tool_shapes(self):
        """Tool calls are counted by shape, in contract order; other items are ignored."""
        shapes = tool_shapes(
            [
                {"type": "function_call", "name": "exec_command"},
                {"type": "custom_tool_call", "name": "apply_patch"},
                {"type": "function_call", "name": "exec_command"},
                {"type": "function_call", "name": "exec", "namespace": "code"},
                {"type": "web_search_call"},
                {"type": "message"},
                {"type": "function_call_output", "call_id": "x"},
            ]
        )

        assert [
            ("custom_tool_call", None, "apply_patch", 1),
            ("function_call", None, "exec_command", 2),
            ("function_call", "code", "exec", 1),
            ("web_search_call", None, "web_search", 1),
        ] == [(s.item_type, s.namespace, s.name, s.count) for s in shapes]

    def test_root_thread(self):
        """thread-id equal to session-id is a root."""
        thread = thread_from_headers(ROOT)

        assert (ThreadRole.ROOT, None, "t") == (
            thread.role,
            thread.parent_thread_id,
            thread.root_thread_id,
        )

    def test_child_thread(self):
        """A sub-agent names its root; its parent defaults to the root."""
        thread = thread_from_headers(
            {"thread-id": "c", "session-id": "t", "x-openai-subagent": "collab_spawn"}
        )
        nested = thread_from_headers({"thread-id": "d", "session-id": "t"}, parent_thread_id="c")

        assert (ThreadRole.CHILD, "t", "collab_spawn") == (
            thread.role,
            thread.parent_thread_id,
            thread.subagent,
        )
        assert "c" == nested.parent_thread_id

    def test_no_thread(self):
        """A request naming no thread cannot be attributed."""
        with pytest.raises(ValueError, match="thread"):
            thread_from_headers({})


def _one_exchange(writer: CaptureWriter, *, delivered: bool = True) -> None:
    exchange = writer.begin(thread=thread_from_headers(ROOT), requested_model="m", request_bytes=10)
    exchange.attempt(
        request_model="m",
        request_bytes=8,
        http_status=200,
        outcome=AttemptOutcome.COMPLETED,
        usage=read_usage({"usage": {"input_tokens": 5, "output_tokens": 1}}),
        delivered=delivered,
    )
    exchange.finish(outcome=ExchangeOutcome.COMPLETED, client_status=200)


class TestCaptureWriter:
    def test_files_are_private_and_canonical(self, tmp_path):
        """The directory is 0700, the file 0600, each line canonical JSON."""
        with CaptureWriter(
            tmp_path / "cap", mode=RouterMode.HPATCH, protocol=Protocol.NATIVE
        ) as writer:
            _one_exchange(writer)

        assert 0o700 == stat.S_IMODE((tmp_path / "cap").stat().st_mode)
        assert 0o600 == stat.S_IMODE(writer.path.stat().st_mode)
        for line in writer.path.read_text().splitlines():
            assert json.dumps(json.loads(line), sort_keys=True, separators=(",", ":")) == line

    def test_numbers_and_derived_fields(self, tmp_path):
        """Numbers and the exchange's derived sizes come from the writer."""
        with CaptureWriter(tmp_path, mode=RouterMode.HPATCH, protocol=Protocol.NATIVE) as writer:
            exchange = writer.begin(
                thread=thread_from_headers(ROOT), requested_model="m", request_bytes=100
            )
            exchange.attempt(
                request_model="m",
                request_bytes=120,
                http_status=None,
                outcome=AttemptOutcome.CONNECT_ERROR,
                stream_bytes=0,
            )
            exchange.attempt(
                request_model="m",
                request_bytes=90,
                http_status=200,
                outcome=AttemptOutcome.COMPLETED,
                output_bytes=40,
                stream_bytes=70,
                delivered=True,
            )
            record = exchange.finish(
                outcome=ExchangeOutcome.COMPLETED, client_status=200, client_output_bytes=55
            )

        assert (3, 0, 2, 1) == (
            record.seq,
            record.exchange,
            record.attempts,
            record.delivered_attempt,
        )
        assert (100, 90, 10) == (
            record.request.client_bytes,
            record.request.provider_bytes,
            record.request.savings_bytes,
        )
        assert (55, 40, 15) == (
            record.output.client_bytes,
            record.output.provider_bytes,
            record.output.savings_bytes,
        )
        assert 70 == record.transport.provider_stream_bytes

    def test_misuse_is_refused(self, tmp_path):
        """Two delivered attempts, or an attempt after finish, are programming errors."""
        with CaptureWriter(tmp_path, mode=RouterMode.HPATCH, protocol=Protocol.NATIVE) as writer:
            exchange = writer.begin(
                thread=thread_from_headers(ROOT), requested_model="m", request_bytes=1
            )
            exchange.attempt(
                request_model="m",
                request_bytes=1,
                http_status=200,
                outcome=AttemptOutcome.COMPLETED,
                delivered=True,
            )
            with pytest.raises(ValueError, match="delivered"):
                exchange.attempt(
                    request_model="m",
                    request_bytes=1,
                    http_status=200,
                    outcome=AttemptOutcome.COMPLETED,
                    delivered=True,
                )
            exchange.finish(outcome=ExchangeOutcome.COMPLETED, client_status=200)
            with pytest.raises(ValueError, match="finished"):
                exchange.attempt(
                    request_model="m",
                    request_bytes=1,
                    http_status=200,
                    outcome=AttemptOutcome.COMPLETED,
                )

    def test_failed_writes_are_counted_not_totalled(self, tmp_path):
        """After a write fails the snapshot still describes exactly the records on disk."""
        writer = CaptureWriter(tmp_path, mode=RouterMode.HPATCH, protocol=Protocol.NATIVE)
        _one_exchange(writer)
        writer.close()
        _one_exchange(writer)

        snapshot = writer.snapshot()

        assert (3, 3, 1) == (
            snapshot.capture.records_written,
            snapshot.capture.write_failures,
            snapshot.requests.logical_requests,
        )

    def test_concurrent_exchanges_make_a_valid_capture(self, tmp_path):
        """Threads capturing interleaved exchanges still produce a valid capture."""
        writer = CaptureWriter(
            tmp_path / "capture", mode=RouterMode.HPATCH, protocol=Protocol.NATIVE
        )

        def work() -> None:
            for _ in range(25):
                _one_exchange(writer)

        workers = [threading.Thread(target=work) for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        writer.close()
        write_snapshot(writer.snapshot_json(), tmp_path / "metrics.json")

        report = validate_capture(tmp_path / "capture", tmp_path / "metrics.json", arm="hpatch")

        assert report.ok, [str(f) for f in report.findings]
        assert 100 == report.snapshot.requests.logical_requests
