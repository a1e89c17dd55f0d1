"""The capture validator: one test per rejection class, reconciliation and binding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from hpbench.capture import codes
from hpbench.capture.models import (
    AttemptOutcome,
    CaptureErrorCategory,
    ExchangeOutcome,
    Protocol,
    RouterMode,
)
from hpbench.capture.synthetic import write_snapshot
from hpbench.capture.validator import expected_binding, validate_capture
from hpbench.capture.writer import CaptureWriter, read_usage, thread_from_headers
from hpbench.rundir import Arm

ROOT = {"thread-id": "thread-root", "session-id": "thread-root"}


def _usage(input_tokens: int = 100, cached: Any = 10, output: int = 20) -> dict[str, Any]:
    details = {} if cached is ... else {"cached_tokens": cached}
    return {
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": details,
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 5},
        }
    }


def _write(directory: Path, build: Any, *, mode: RouterMode = RouterMode.HPATCH) -> Path:
    """Run ``build(writer)`` and write the snapshot beside the capture."""
    writer = CaptureWriter(directory / "capture", mode=mode, protocol=Protocol.NATIVE)
    build(writer)
    writer.close()
    return write_snapshot(writer.snapshot_json(), directory / "metrics.json")


def _exchange(writer: CaptureWriter, *, attempts: int = 1, **finish: Any) -> None:
    exchange = writer.begin(
        thread=thread_from_headers(ROOT), requested_model="m", request_bytes=1000
    )
    for index in range(attempts):
        last = index == attempts - 1
        exchange.attempt(
            request_model="m",
            request_bytes=900,
            http_status=200 if last else 500,
            outcome=AttemptOutcome.COMPLETED if last else AttemptOutcome.HTTP_ERROR,
            usage=read_usage(_usage()) if last else read_usage(None),
            response_model="m-2026" if last else None,
            header_model="m" if last else None,
            output_bytes=300,
            stream_bytes=700,
            delivered=last,
        )
    finish.setdefault("outcome", ExchangeOutcome.COMPLETED)
    finish.setdefault("client_status", 200)
    finish.setdefault("client_output_bytes", 300)
    exchange.finish(**finish)


def _validate(directory: Path, arm: str = "hpatch", **kwargs: Any) -> Any:
    return validate_capture(directory / "capture", directory / "metrics.json", arm=arm, **kwargs)


class TestValid:
    def test_hpatch_capture_is_valid(self, capture):
        """A capture written by the writer validates, is labelled and summarised."""
        report = capture.validate(codex_jsonl=capture.codex)

        assert [] == [str(f) for f in report.findings]
        assert report.ok
        assert "hpatch (hpatch/native)" == report.label
        summary = report.summary()
        assert summary is not None
        assert 12 == summary["requests"]["logical_requests"]
        assert 13 == summary["requests"]["provider_attempts"]

    def test_logs_one_summary_line(self, capture):
        """Each validation logs one summary event."""
        with capture_logs() as logs:
            capture.validate()

        events = [e for e in logs if e["event"] == "capture validated"]
        assert [(37, 0)] == [(e["raw_records"], e["findings"]) for e in events]

    def test_control_capture_is_valid(self, make_capture):
        """A passthrough/native capture is valid control evidence."""
        control = make_capture("control")

        report = control.validate(codex_jsonl=control.codex)

        assert report.ok, [str(f) for f in report.findings]
        assert "control (passthrough/native)" == report.label

    def test_several_root_threads_reconcile_with_their_streams(self, make_capture):
        """Each root thread is held to its own Codex stream."""
        capture = make_capture(root_threads=3, exchanges=30)

        report = capture.validate(codex_jsonl=capture.codex)

        assert report.ok, [str(f) for f in report.findings]
        assert 3 == len(report.codex)


class TestSchemaVersions:
    def test_record_with_older_schema(self, capture):
        """A schema-5 record is refused with its line and field."""
        capture.edit(0, lambda r: r.update(schema_version=5))

        report = capture.validate()

        finding = next(f for f in report.findings if f.code == codes.SCHEMA_VERSION)
        assert (1, "$.schema_version") == (finding.line, finding.field)

    def test_record_without_schema_version(self, capture):
        """A record without schema_version is refused."""
        capture.edit(2, lambda r: r.pop("schema_version"))

        assert codes.SCHEMA_VERSION in capture.validate().codes()

    def test_snapshot_of_another_schema(self, capture):
        """hpatch.capture.metrics.v3 is not read."""
        capture.edit_snapshot(lambda s: s.update(schema="hpatch.capture.metrics.v3"))

        report = capture.validate()

        assert {"$.schema"} == {f.field for f in report.findings if f.code == codes.SCHEMA_VERSION}
        assert report.snapshot is None

    def test_snapshot_naming_other_record_schema(self, capture):
        """A snapshot that vouches for schema-5 records is refused."""
        capture.edit_snapshot(lambda s: s["capture"].update(record_schema_version=5))

        assert codes.SCHEMA_VERSION in capture.validate().codes()


class TestEmpty:
    def test_missing_directory(self, tmp_path):
        """No capture directory is an empty capture."""
        report = validate_capture(tmp_path / "nothing", tmp_path / "m.json", arm="control")

        assert {codes.EMPTY, codes.SNAPSHOT_MISSING} <= report.codes()

    def test_empty_record_file(self, tmp_path):
        """A capture with no record is empty, even with a matching snapshot."""
        _write(tmp_path, lambda w: None)

        assert codes.EMPTY in _validate(tmp_path).codes()

    def test_no_client_request(self, tmp_path):
        """Only an error record is still no capture of a request."""
        _write(tmp_path, lambda w: w.record_error(CaptureErrorCategory.INTERNAL))

        assert {codes.EMPTY, codes.ERROR} <= _validate(tmp_path).codes()


class TestRejectionClasses:
    def test_capture_error_record(self, tmp_path):
        """An error record fails the capture, with its line."""

        def build(writer: CaptureWriter) -> None:
            _exchange(writer)
            writer.record_error(CaptureErrorCategory.STREAM_PARSE, exchange=0)

        _write(tmp_path, build)

        report = _validate(tmp_path)
        lines = {f.line for f in report.findings if f.code == codes.ERROR}
        assert {4, None} == lines  # the record, and the snapshot's capture_errors

    def test_incomplete_record(self, capture):
        """A record marked incomplete is refused."""
        index = capture.index_of("provider")
        capture.edit(index, lambda r: r.update(complete=False))

        finding = next(f for f in capture.validate().findings if f.code == codes.INCOMPLETE)
        assert (index + 1, "$.complete") == (finding.line, finding.field)

    def test_exchange_never_closed(self, tmp_path):
        """A client request whose exchange record never came is incomplete."""

        def build(writer: CaptureWriter) -> None:
            _exchange(writer)
            writer.begin(thread=thread_from_headers(ROOT), requested_model="m", request_bytes=1)

        _write(tmp_path, build)

        finding = next(f for f in _validate(tmp_path).findings if f.code == codes.INCOMPLETE)
        assert 4 == finding.line

    def test_boundary_provider_before_client(self, capture):
        """A provider record that precedes its exchange's client record is a mismatch."""
        records = capture.lines()
        client = capture.index_of("client", 1)
        records[client], records[client + 1] = records[client + 1], records[client]
        records[client]["seq"], records[client + 1]["seq"] = client, client + 1
        capture.write_lines(records)

        assert codes.BOUNDARY in capture.validate().codes()

    def test_boundary_exchange_for_another_thread(self, capture):
        """An exchange record must close the thread its client record opened."""
        capture.edit(capture.index_of("exchange"), lambda r: r.update(thread_id="elsewhere"))

        assert codes.BOUNDARY in capture.validate().codes()

    def test_duplicate_client_record(self, capture):
        """Two client records for one exchange are refused."""
        records = capture.lines()
        second = capture.index_of("client", 1)
        records[second]["exchange"] = 0
        capture.write_lines(records)

        report = capture.validate()

        finding = next(f for f in report.findings if f.code == codes.CLIENT_DUPLICATE)
        assert (second + 1, "$.exchange") == (finding.line, finding.field)

    def test_missing_provider_record(self, capture):
        """An exchange that claims more attempts than it has provider records is refused."""
        capture.edit(capture.index_of("exchange"), lambda r: r.update(attempts=2))

        assert codes.PROVIDER_MISSING in capture.validate().codes()

    def test_exchange_without_any_provider_record(self, tmp_path):
        """A request that never reached the provider has no usage evidence."""

        def build(writer: CaptureWriter) -> None:
            exchange = writer.begin(
                thread=thread_from_headers(ROOT), requested_model="m", request_bytes=1
            )
            exchange.finish(outcome=ExchangeOutcome.FAILED, client_status=502)

        _write(tmp_path, build)

        assert codes.PROVIDER_MISSING in _validate(tmp_path).codes()

    def test_attempt_gap(self, tmp_path):
        """Attempt 0 then attempt 2 leaves a gap."""
        _write(tmp_path, lambda w: _exchange(w, attempts=2))
        path = tmp_path / "capture" / "records.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        records[2]["attempt"] = 2
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))

        finding = next(f for f in _validate(tmp_path).findings if f.code == codes.ATTEMPT_GAP)
        assert (3, "$.attempt") == (finding.line, finding.field)

    def test_attempt_repeated(self, tmp_path):
        """The same attempt twice is refused."""
        _write(tmp_path, lambda w: _exchange(w, attempts=2))
        path = tmp_path / "capture" / "records.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        records[2]["attempt"] = 0
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))

        assert codes.ATTEMPT_DUPLICATE in _validate(tmp_path).codes()

    def test_write_failure(self, tmp_path):
        """A record the writer failed to append fails the capture."""

        def build(writer: CaptureWriter) -> None:
            _exchange(writer)
            writer.close()  # later appends fail
            _exchange(writer)

        _write(tmp_path, build)

        assert codes.WRITE_FAILURE in _validate(tmp_path).codes()

    def test_skipped_request(self, tmp_path):
        """A request served without capture fails the capture."""

        def build(writer: CaptureWriter) -> None:
            _exchange(writer)
            writer.note_skipped_request()

        _write(tmp_path, build)

        finding = next(f for f in _validate(tmp_path).findings if f.code == codes.SKIPPED)
        assert "$.capture.skipped_requests" == finding.field

    def test_dropped_exchange_detail(self, tmp_path):
        """An exchange whose detail was dropped fails the capture, naming the record."""
        _write(tmp_path, lambda w: _exchange(w, detail_dropped=True))

        report = _validate(tmp_path)

        fields = {f.field for f in report.findings if f.code == codes.DROPPED_DETAIL}
        assert {"$.detail_dropped", "$.capture.dropped_exchange_detail"} == fields

    def test_two_delivered_attempts(self, tmp_path):
        """Only one attempt of an exchange can reach the client."""
        _write(tmp_path, lambda w: _exchange(w, attempts=2))
        path = tmp_path / "capture" / "records.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        records[1]["delivered"] = True
        path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))

        assert codes.ATTEMPT_DELIVERED in _validate(tmp_path).codes()

    def test_turn_state_not_forwarded(self, capture):
        """A turn-state the client sent must go upstream on every attempt."""
        records = capture.lines()
        client = next(i for i, r in enumerate(records) if r.get("turn_state_sent"))
        records[client + 1]["turn_state_forwarded"] = False
        capture.write_lines(records)

        assert codes.TURN_STATE in capture.validate().codes()


class TestRecordContract:
    def test_unknown_key_is_refused(self, capture):
        """A record carrying anything the contract does not name (a header, content) fails."""
        capture.edit(0, lambda r: r.update(authorization="Bearer sk-..."))

        finding = next(f for f in capture.validate().findings if f.code == codes.RECORD_SCHEMA)
        assert 1 == finding.line
        assert "authorization" in finding.message

    def test_wrong_type_names_the_field(self, capture):
        """A wrong type is refused with its $.path."""
        index = capture.index_of("provider")
        capture.edit(index, lambda r: r["usage"].update(input_tokens="100"))

        finding = next(f for f in capture.validate().findings if f.code == codes.RECORD_SCHEMA)
        assert (index + 1, "$.usage.input_tokens") == (finding.line, finding.field)

    def test_truncated_last_line(self, capture):
        """A file cut inside its last record is refused."""
        text = capture.record_file.read_bytes()
        capture.record_file.write_bytes(text[:-10])

        assert codes.RECORD_SYNTAX in capture.validate().codes()

    def test_duplicate_json_key(self, capture):
        """A record with a repeated key is ambiguous and refused."""
        text = capture.record_file.read_text().splitlines(keepends=True)
        text[0] = text[0].replace('{"complete":true,', '{"complete":true,"complete":true,')
        capture.record_file.write_text("".join(text))

        assert codes.RECORD_SYNTAX in capture.validate().codes()

    def test_repeated_nested_key_in_the_middle(self, capture):
        """A key repeated inside a nested object is refused on its own line, even when
        another line of the same block has a colon in a string (which is accepted)."""
        provider = capture.index_of("provider", 1)
        lines = capture.record_file.read_text().splitlines(keepends=True)
        lines[provider] = lines[provider].replace('"usage":{', '"usage":{"input_tokens":1,', 1)
        client = capture.index_of("client", 2)
        lines[client] = lines[client].replace('"requested_model":"', '"requested_model":"a:b', 1)
        assert '"usage":{"input_tokens":1,' in lines[provider]
        assert '"a:b' in lines[client]
        capture.record_file.write_text("".join(lines))

        findings = capture.validate().findings
        contract = [f for f in findings if f.code in (codes.RECORD_SYNTAX, codes.RECORD_SCHEMA)]
        assert [(codes.RECORD_SYNTAX, provider + 1)] == [(f.code, f.line) for f in contract]
        assert "duplicate key 'input_tokens'" in contract[0].message
        assert all(f.line != client + 1 for f in findings)

    def test_colon_in_a_string_is_accepted(self, capture):
        """A colon in a string sends its line to the general route, which accepts it."""
        records = capture.lines()
        for record in records:
            if record["kind"] == "provider":
                record["provider_request_id"] = "req:1:2"
        capture.write_lines(records)

        assert capture.validate().ok

    def test_deeply_nested_line(self, capture):
        """A pathological line is a syntax finding, not a crash."""
        with capture.record_file.open("a") as stream:
            stream.write("[" * 100_000 + "]" * 100_000 + "\n")

        assert codes.RECORD_SYNTAX in capture.validate().codes()

    def test_savings_must_be_the_difference(self, capture):
        """savings_bytes is client - provider; anything else is refused."""
        index = capture.index_of("exchange")
        capture.edit(index, lambda r: r["request"].update(savings_bytes=1))

        assert codes.RECORD_INVARIANT in capture.validate().codes()

    def test_non_canonical_spelling_is_accepted(self, capture):
        """Whitespace and key order are not part of the contract."""
        records = capture.lines()
        capture.record_file.write_text(
            "".join(json.dumps(dict(reversed(r.items())), indent=None) + "\n" for r in records)
        )

        assert capture.validate().ok


class TestReconciliation:
    def test_record_count_with_health(self, capture):
        """records_written must equal the lines in the record files."""
        capture.edit_snapshot(lambda s: s["capture"].update(records_written=1000))

        finding = next(
            f for f in capture.validate().findings if f.code == codes.RECONCILE_RECORD_COUNT
        )
        assert "$.capture.records_written" == finding.field

    def test_attempts_with_exchanges(self, capture):
        """provider_attempts must equal the provider records."""
        capture.edit_snapshot(lambda s: s["requests"].update(provider_attempts=12))

        assert codes.RECONCILE_ATTEMPTS in capture.validate().codes()

    def test_exchange_attempts_with_provider_records(self, capture):
        """An exchange claiming fewer attempts than it has is a reconciliation finding."""
        records = capture.lines()
        index = next(
            i for i, r in enumerate(records) if r["kind"] == "exchange" and r["attempts"] == 2
        )
        records[index]["attempts"] = 1
        capture.write_lines(records)

        assert codes.RECONCILE_ATTEMPTS in capture.validate().codes()

    def test_aggregate_usage_with_attempts(self, capture):
        """The snapshot's usage must be the sum over the attempts."""
        capture.edit_snapshot(
            lambda s: s["usage"].update(input_tokens=s["usage"]["input_tokens"] + 1)
        )

        finding = next(f for f in capture.validate().findings if f.code == codes.RECONCILE_USAGE)
        assert "$.usage.input_tokens" == finding.field

    def test_thread_usage(self, capture):
        """A thread's delivered usage is reconciled too."""
        capture.edit_snapshot(lambda s: s["threads"][0]["delivered_usage"].update(output_tokens=0))

        assert codes.RECONCILE_USAGE in capture.validate().codes()

    def test_exchange_figures_with_its_records(self, capture):
        """An exchange's provider sizes must come from its attempts."""
        capture.edit(
            capture.index_of("exchange"), lambda r: r["transport"].update(provider_stream_bytes=1)
        )

        assert codes.RECONCILE_EXCHANGE in capture.validate().codes()

    def test_models(self, capture):
        """Provider-reported models are reconciled, attempts without usage included."""
        capture.edit_snapshot(
            lambda s: s["models"][0].update(attempts=s["models"][0]["attempts"] + 1)
        )

        assert codes.RECONCILE_MODELS in capture.validate().codes()

    def test_tools_and_hpatch(self, capture):
        """Tool shapes and Hpatch totals are reconciled."""

        def change(snapshot: dict[str, Any]) -> None:
            snapshot["tools"]["client_delivered"] = []
            snapshot["hpatch"]["successes"] += 1

        capture.edit_snapshot(change)

        assert {codes.RECONCILE_TOOLS, codes.RECONCILE_HPATCH} <= capture.validate().codes()

    def test_savings(self, capture):
        """Signed savings are reconciled."""
        capture.edit_snapshot(lambda s: s["savings"]["output"].update(savings_bytes=0))

        assert codes.RECONCILE_SAVINGS in capture.validate().codes()

    def test_codex_usage_mismatch(self, capture):
        """Codex's thread total must equal the provider usage delivered to that thread."""
        stream = capture.codex[0]
        events = [json.loads(line) for line in stream.read_text().splitlines()]
        events[-1]["usage"]["input_tokens"] += 1
        stream.write_text("".join(json.dumps(e) + "\n" for e in events))

        report = capture.validate(codex_jsonl=capture.codex)

        finding = next(f for f in report.findings if f.code == codes.RECONCILE_CODEX)
        assert (str(stream), "$.usage.input_tokens") == (finding.file, finding.field)

    def test_codex_usage_fields_beyond_the_mapping_are_ignored(self, capture):
        """Fields of turn.completed usage that have no capture counterpart are not read."""
        stream = capture.codex[0]
        events = [json.loads(line) for line in stream.read_text().splitlines()]
        events[-1]["usage"]["future_field"] = None
        stream.write_text("".join(json.dumps(e) + "\n" for e in events))

        assert capture.validate(codex_jsonl=capture.codex).ok

    def test_codex_usage_must_be_counts(self, capture):
        """A mapped usage field that is not a count is a Codex stream finding."""
        stream = capture.codex[0]
        events = [json.loads(line) for line in stream.read_text().splitlines()]
        events[-1]["usage"]["output_tokens"] = "many"
        stream.write_text("".join(json.dumps(e) + "\n" for e in events))

        assert codes.CODEX_SYNTAX in capture.validate(codex_jsonl=capture.codex).codes()

    def test_codex_last_turn_is_the_thread_total(self, capture):
        """An earlier turn.completed is superseded by the last one."""
        stream = capture.codex[0]
        lines = stream.read_text().splitlines(keepends=True)
        early = json.loads(lines[-1])
        early["usage"] = dict.fromkeys(early["usage"], 1)
        stream.write_text("".join([*lines[:-1], json.dumps(early) + "\n", lines[-1]]))

        assert capture.validate(codex_jsonl=capture.codex).ok

    @pytest.mark.parametrize("how", ["null", "left out"])
    def test_codex_unknown_count_is_unproven_not_zero(self, capture, how):
        """Codex JSONL has one reader: a count Codex wrote as null or left out is unknown,
        never 0, and the capture's figure for it is unproven (a finding naming the count);
        the other counts are still compared."""
        stream = capture.codex[0]
        events = [json.loads(line) for line in stream.read_text().splitlines()]
        if how == "null":
            events[-1]["usage"]["cached_input_tokens"] = None
        else:
            del events[-1]["usage"]["cached_input_tokens"]
        events[-1]["usage"]["output_tokens"] += 1
        stream.write_text("".join(json.dumps(e) + "\n" for e in events))

        report = capture.validate(codex_jsonl=capture.codex)

        assert {
            (codes.CODEX_UNREPORTED, "$.usage.cached_input_tokens"),
            (codes.RECONCILE_CODEX, "$.usage.output_tokens"),
        } == {(f.code, f.field) for f in report.findings}

    def test_codex_repeated_key_keeps_the_first_value(self, capture):
        """A key Codex wrote twice reads as the first value, as everywhere Codex JSONL is read."""
        stream = capture.codex[0]
        lines = stream.read_text().splitlines(keepends=True)
        thread_id = json.loads(lines[0])["thread_id"]
        lines[0] = f'{{"type":"thread.started","thread_id":"{thread_id}","thread_id":"other"}}\n'
        stream.write_text("".join(lines))

        assert capture.validate(codex_jsonl=capture.codex).ok

    def test_codex_unreadable_lines(self, capture):
        """A line that is not JSON (however nested) is a Codex stream finding with its line;
        the stream is still read to its end."""
        stream = capture.codex[0]
        lines = stream.read_text().splitlines(keepends=True)
        lines.insert(1, "[" * 100_000 + "]" * 100_000 + "\n")
        lines.insert(1, "not json\n")
        stream.write_text("".join(lines))

        report = capture.validate(codex_jsonl=capture.codex)

        assert [(codes.CODEX_SYNTAX, 2), (codes.CODEX_SYNTAX, 3)] == [
            (f.code, f.line) for f in report.findings
        ]

    def test_root_thread_without_codex_stream(self, make_capture):
        """Every measured root thread must be matched by a Codex stream."""
        capture = make_capture(root_threads=2)

        report = capture.validate(codex_jsonl=capture.codex[:1])

        assert codes.RECONCILE_CODEX in report.codes()

    def test_codex_thread_not_captured(self, capture, tmp_path):
        """A Codex thread with no captured traffic is a finding."""
        stray = tmp_path / "stray.jsonl"
        stray.write_text(
            '{"type":"thread.started","thread_id":"other"}\n'
            '{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}\n'
        )

        report = capture.validate(codex_jsonl=[*capture.codex, stray])

        assert [str(stray)] == [f.file for f in report.findings]

    def test_codex_without_usage(self, capture):
        """A Codex stream that ends without turn.completed cannot prove the thread's usage."""
        stream = capture.codex[0]
        lines = stream.read_text().splitlines(keepends=True)
        stream.write_text(
            "".join([*lines[:-1], '{"type":"turn.failed","error":{"message":"x"}}\n'])
        )

        assert codes.CODEX_UNREPORTED in capture.validate(codex_jsonl=capture.codex).codes()


class TestBinding:
    def test_hpatch_evidence_is_not_control(self, capture):
        """Self-consistent hpatch evidence fails as control, and is not labelled."""
        report = capture.validate(arm="control")

        assert {codes.BINDING} == report.codes()
        assert report.label is None

    def test_control_evidence_is_not_hpatch(self, make_capture):
        """Passthrough evidence fails as the hpatch arm."""
        report = make_capture("control").validate(arm="hpatch")

        assert codes.BINDING in report.codes()
        assert report.label is None

    def test_wrong_protocol(self, capture):
        """A native capture is not CTP/2 evidence."""
        report = capture.validate(expect_protocol="ctp2")

        finding = next(f for f in report.findings if f.code == codes.BINDING)
        assert "$.router.protocol" == finding.field
        assert report.label is None

    def test_ctp2_capture_with_ctp2_expectation(self, make_capture):
        """An Hpatch/CTP2 capture is bound when CTP2 is expected."""
        capture = make_capture(protocol=Protocol.CTP2)

        report = capture.validate(expect_mode="hpatch", expect_protocol="ctp2")

        assert report.ok, [str(f) for f in report.findings]
        assert "hpatch (hpatch/ctp2)" == report.label

    def test_record_disagreeing_with_snapshot(self, capture):
        """Every raw record must carry its snapshot's mode and protocol."""
        capture.edit(3, lambda r: r.update(protocol="ctp2"))

        finding = next(f for f in capture.validate().findings if f.code == codes.BINDING)
        assert 4 == finding.line

    def test_control_with_mentor(self, make_capture):
        """The control router must disable Mentor Handoff."""
        control = make_capture("control")
        control.edit_snapshot(lambda s: s["router"].update(mentor=True))

        assert codes.BINDING in control.validate().codes()

    def test_hpatch_with_mentor(self, capture):
        """Only the mentor arm may enable Mentor Handoff: an hpatch arm (mentor-handoff's
        baseline among them) with Mentor on is self-consistent evidence of the wrong
        configuration."""
        capture.edit_snapshot(lambda s: s["router"].update(mentor=True))

        finding = next(f for f in capture.validate().findings if f.code == codes.BINDING)
        assert "$.router.mentor" == finding.field
        assert "only the mentor arm" in finding.message

    @pytest.mark.parametrize(
        ("arm", "protocol", "fixed"),
        [
            ("native", "ctp2", "hpatch/native"),
            ("ctp", "native", "hpatch/ctp2"),
            ("control", "ctp2", "passthrough/native"),
        ],
    )
    def test_fixed_arms_refuse_another_protocol(self, arm, protocol, fixed):
        """ctp-only's arms are fixed (spec 002): native is Hpatch/native, ctp Hpatch/CTP2;
        an expectation that contradicts the arm is refused before any evidence is read."""
        with pytest.raises(ValueError, match=f"the {arm} arm is {fixed}; drop --expect-protocol"):
            expected_binding(arm, expect_protocol=protocol)

    @pytest.mark.parametrize(
        ("arm", "label"),
        [
            ("native", "native (hpatch/native)"),
            ("ctp", "ctp (hpatch/ctp2)"),
            ("mentor", "mentor (hpatch/native)"),
        ],
    )
    def test_each_arm_has_its_binding(self, arm, label):
        assert label == expected_binding(arm).label

    def test_passthrough_with_hpatch_telemetry(self, make_capture):
        """A passthrough router cannot report Hpatch outcomes."""
        control = make_capture("control")
        control.edit(control.index_of("exchange"), lambda r: r["hpatch"].update(successes=1))

        assert codes.BINDING in control.validate().codes()

    def test_passthrough_with_an_edit_payload(self, make_capture):
        """A passthrough router cannot report edit payloads or rejection groups either."""
        control = make_capture("control")
        payload = {"client_bytes": 10, "provider_bytes": 4, "savings_bytes": 6}
        payload |= {"client_tokens": 3, "provider_tokens": 1, "savings_tokens": 2}
        control.edit(
            control.index_of("exchange"), lambda r: r["hpatch"].update(edit_payload=payload)
        )

        assert codes.BINDING in control.validate().codes()


def _routed_exchange(capture) -> int:
    """Index of the first exchange record with a rejection (the generator makes some)."""
    lines = capture.lines()
    return next(
        i for i, r in enumerate(lines) if r["kind"] == "exchange" and r["hpatch"]["rejections"]
    )


class TestHpatchTelemetry:
    """R17: a router cannot hide a rejection, invent a group or leak a path in a signature."""

    @pytest.fixture
    def routed(self, make_capture):
        return make_capture(exchanges=40, seed=3)

    def _finding(self, capture, field):
        report = capture.validate()
        found = [f for f in report.findings if f.code == codes.RECORD_INVARIANT]
        assert [field] == [f.field for f in found], [str(f) for f in report.findings]
        return found[0]

    def test_the_routed_capture_is_valid(self, routed):
        assert routed.validate().ok

    def test_a_rejection_left_out_of_the_causes(self, routed):
        routed.edit(_routed_exchange(routed), lambda r: r["hpatch"].update(rejection_causes=[]))

        finding = self._finding(routed, "$.hpatch.rejection_causes")
        assert "account for 0 rejections" in finding.message

    def test_a_signature_that_is_a_path(self, routed):
        def leak(record):
            record["hpatch"]["rejection_signatures"][0]["signature"] = "kv/rangestream.go"

        routed.edit(_routed_exchange(routed), leak)

        assert "digest" in self._finding(routed, "$.hpatch.rejection_signatures").message

    def test_repeated_cause_groups(self, routed):
        def split(record):
            causes = record["hpatch"]["rejection_causes"]
            record["hpatch"]["rejections"] += causes[0]["count"]
            record["hpatch"]["rejection_signatures"][0]["count"] *= 2
            record["hpatch"]["rejection_causes"] = [causes[0], causes[0]]

        routed.edit(_routed_exchange(routed), split)

        assert "not sorted or repeat" in self._finding(routed, "$.hpatch.rejection_causes").message

    def test_edit_payload_savings_must_be_the_difference(self, routed):
        def lie(record):
            record["hpatch"]["edit_payload"]["savings_bytes"] += 100

        routed.edit(_routed_exchange(routed), lie)

        self._finding(routed, "$.hpatch.edit_payload")

    def test_snapshot_groups_reconcile_with_the_records(self, routed):
        """A snapshot claiming a cause no record has is refused by name."""
        routed.edit_snapshot(
            lambda s: s["hpatch"]["rejection_causes"].append({"cause": "zz", "count": 1})
        )

        report = routed.validate()
        finding = next(f for f in report.findings if f.code == codes.RECONCILE_HPATCH)
        assert "$.hpatch.rejection_causes" == finding.field


class TestBindingExpectations:
    @pytest.mark.parametrize(
        ("arm", "mode", "protocol"),
        [("control", "hpatch", None), ("control", None, "ctp2"), ("hpatch", "passthrough", None)],
    )
    def test_contradictory_expectation(self, arm, mode, protocol):
        """An expectation that contradicts the arm is a usage error."""
        with pytest.raises(ValueError, match="arm"):
            expected_binding(arm, expect_mode=mode, expect_protocol=protocol)

    def test_hpatch_defaults_to_native(self):
        """Without an expected protocol the hpatch arm is Hpatch/native."""
        binding = expected_binding(Arm.HPATCH)

        assert (RouterMode.HPATCH, Protocol.NATIVE) == (binding.mode, binding.protocol)


class TestAccounting:
    def test_negative_savings_stay_negative(self, tmp_path):
        """A router that sends more than it received reports negative savings."""

        def build(writer: CaptureWriter) -> None:
            exchange = writer.begin(
                thread=thread_from_headers(ROOT), requested_model="m", request_bytes=500
            )
            exchange.attempt(
                request_model="m",
                request_bytes=800,
                http_status=200,
                outcome=AttemptOutcome.COMPLETED,
                usage=read_usage(_usage()),
                output_bytes=100,
                delivered=True,
            )
            exchange.finish(
                outcome=ExchangeOutcome.COMPLETED, client_status=200, client_output_bytes=60
            )

        _write(tmp_path, build)

        report = _validate(tmp_path)

        assert report.ok, [str(f) for f in report.findings]
        summary = report.summary()
        assert -300 == summary["savings"]["request"]["savings_bytes"]
        assert -40 == summary["savings"]["output"]["savings_bytes"]

    def test_retry_usage_is_kept_and_usage_free_attempts_counted_apart(self, tmp_path):
        """A failed attempt that reported usage still counts; one without usage is counted."""

        def build(writer: CaptureWriter) -> None:
            exchange = writer.begin(
                thread=thread_from_headers(ROOT), requested_model="m", request_bytes=500
            )
            exchange.attempt(
                request_model="m",
                request_bytes=500,
                http_status=502,
                outcome=AttemptOutcome.HTTP_ERROR,
                usage=read_usage(None),
            )
            exchange.attempt(
                request_model="m",
                request_bytes=500,
                http_status=200,
                outcome=AttemptOutcome.FAILED,
                usage=read_usage(_usage(input_tokens=70, cached=None, output=3)),
                response_model="m-2026",
            )
            exchange.attempt(
                request_model="m",
                request_bytes=500,
                http_status=200,
                outcome=AttemptOutcome.COMPLETED,
                usage=read_usage(_usage(input_tokens=100, cached=..., output=20)),
                response_model="m-2026",
                delivered=True,
            )
            exchange.finish(outcome=ExchangeOutcome.COMPLETED, client_status=200)

        _write(tmp_path, build)

        report = _validate(tmp_path)

        assert report.ok, [str(f) for f in report.findings]
        summary = report.summary()
        assert {"logical_requests": 1, "provider_attempts": 3, "retries": 2} == {
            k: summary["requests"][k] for k in ("logical_requests", "provider_attempts", "retries")
        }
        assert (2, 1) == (
            summary["requests"]["attempts_with_usage"],
            summary["requests"]["attempts_without_usage"],
        )
        assert 170 == summary["usage"]["input_tokens"]
        assert (0, 1, 1) == (
            summary["usage"]["cached_input_explicit"],
            summary["usage"]["cached_input_null"],
            summary["usage"]["cached_input_missing"],
        )
        models = {
            (m["response_model"], m["attempts"], m["attempts_with_usage"])
            for m in summary["models"]
        }
        assert {(None, 1, 0), ("m-2026", 2, 2)} == models
        thread = report.snapshot.threads[0]
        assert 100 == thread.delivered_usage.input_tokens


class TestStreaming:
    def test_record_files_are_one_sequence(self, make_capture):
        """Records split over several files, read in name order, are one capture: valid when
        whole, and with the same findings when broken."""
        capture = make_capture(exchanges=60, root_threads=2)
        whole = capture.validate(codex_jsonl=capture.codex)
        lines = capture.record_file.read_text().splitlines(keepends=True)
        capture.record_file.write_text("".join(lines[:70]))
        (capture.records / "records.z.jsonl").write_text("".join(lines[70:]))

        split = capture.validate(codex_jsonl=capture.codex)

        assert whole.ok, [str(f) for f in whole.findings]
        assert split.ok, [str(f) for f in split.findings]
        assert whole.raw_records == split.raw_records
        assert 2 == len(split.files)

    def test_sequence_runs_across_files(self, make_capture):
        """A record missing at a file boundary is found in the next file, on its line."""
        capture = make_capture(exchanges=20)
        lines = capture.record_file.read_text().splitlines(keepends=True)
        capture.record_file.write_text("".join(lines[:30]))
        second = capture.records / "records.z.jsonl"
        second.write_text("".join(lines[31:]))

        report = capture.validate()

        finding = next(f for f in report.findings if f.code == codes.SEQUENCE)
        assert (str(second), 1) == (finding.file, finding.line)

    def test_finding_cap(self, make_capture):
        """A flood of one problem keeps a bounded number of findings and counts the rest."""
        capture = make_capture(exchanges=40)
        records = capture.lines()
        for record in records:
            record["mode"] = "passthrough"
        capture.write_lines(records)

        report = capture.validate()

        assert 50 == sum(1 for f in report.findings if f.code == codes.BINDING)
        assert report.suppressed[codes.BINDING] >= len(records) - 50
