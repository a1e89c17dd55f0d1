"""The router conformance check's judge: good evidence passes every item, and each kind of
bad evidence fails the item it breaks, naming the file (and the field where there is one)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpbench.routercheck import evidence
from hpbench.routercheck.judge import ITEMS, ItemVerdict, Listener, judge, parse_listeners

from .conftest import CREDENTIAL, FACTS, LISTENERS, write_facts


def verdicts(run_dir: Path) -> dict[str, ItemVerdict]:
    return {verdict.item: verdict for verdict in judge(run_dir)}


def failed(run_dir: Path) -> set[str]:
    return {item for item, verdict in verdicts(run_dir).items() if not verdict.ok}


def only_fails(run_dir: Path, item: str, *words: str) -> ItemVerdict:
    """Exactly ``item`` FAILs, and its line carries every one of ``words``."""
    found = verdicts(run_dir)
    assert {item} == {name for name, verdict in found.items() if not verdict.ok}, [
        verdict.line() for verdict in found.values()
    ]
    line = found[item].line()
    assert line.startswith(f"FAIL  {item}")
    for word in words:
        assert word in line, line
    return found[item]


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def edit_client(run_dir: Path, change: Callable[[dict[str, Any]], None]) -> None:
    edit_json(run_dir / evidence.CLIENT_REPORT, change)


def provider_records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / evidence.PROVIDER_RECORDS
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def write_provider_records(run_dir: Path, records: list[dict[str, Any]]) -> None:
    path = run_dir / evidence.PROVIDER_RECORDS
    path.write_text("".join(json.dumps(record) + "\n" for record in records))


def set_fact(run_dir: Path, key: str, value: str) -> None:
    write_facts(run_dir, {**FACTS, key: value})


def capture_file(run_dir: Path) -> Path:
    return run_dir / evidence.CAPTURE / "records.jsonl"


class TestGoodEvidence:
    def test_every_item_is_ok(self, run_dir: Path) -> None:
        """The reference router's evidence: eight lines, all ok, in the contract's order."""
        found = judge(run_dir)
        assert list(ITEMS) == [verdict.item for verdict in found]
        assert all(verdict.ok for verdict in found), [verdict.line() for verdict in found]
        assert found[0].line().startswith("ok    identity     hpbench-reference-router 0.1.0")

    def test_the_evidence_is_realistic(self, run_dir: Path) -> None:
        """The client met the scripted 500 and retried it with the turn's value; the second
        turn started without one."""
        report = evidence.read_client_report(run_dir / evidence.CLIENT_REPORT)
        assert [500] == [e.status for e in report.exchanges if e.status != 200]
        retried = [e for e in report.exchanges if e.attempt == 1]
        assert 1 == len(retried)
        assert retried[0].turn_state_sent is not None
        statuses = [r["turn_state"]["status"] for r in provider_records(run_dir)]
        assert ["absent", "unchanged", "unchanged", "unchanged", "absent", "unchanged"] == (
            statuses
        )


class TestIdentity:
    @pytest.mark.parametrize(
        ("output", "words"),
        [
            ("", ["printed 0 line(s)"]),
            ('{"name": "r", "version": "1"}\n{"name": "r", "version": "1"}\n', ["2 line(s)"]),
            ('{"name": "r", "version": "1"}', ["printed 1 line(s)"]),
            ("router 1.0\n", ["did not print JSON"]),
            ('{"name": "", "version": "1"}\n', ["printable text of 1 to 128"]),
            ('{"name": "r"}\n', ["exactly {name, version}"]),
            ('{"name": "r", "version": 1}\n', ["printable text"]),
            ('{"name": "r", "version": "1", "extra": 2}\n', ["exactly {name, version}"]),
            ('{"name": "' + "r" * 129 + '", "version": "1"}\n', ["printable text"]),
            ('{"name": "r\\u0007", "version": "1"}\n', ["printable text"]),
        ],
    )
    def test_bad_identity_output(self, run_dir: Path, output: str, words: list[str]) -> None:
        """Anything but one line of JSON with exactly a name and a version, each short
        printable text, fails: the same rule a run applies before it starts
        (hpbench.provenance), so an image that passes here is never refused there."""
        (run_dir / evidence.IDENTITY_OUT).write_text(output)
        only_fails(run_dir, "identity", "identity.out", *words)

    def test_a_failing_version_command(self, run_dir: Path) -> None:
        set_fact(run_dir, "identity_status", "125")
        only_fails(run_dir, "identity", "exited 125")


class TestListener:
    def test_a_second_ipv4_listener(self, run_dir: Path) -> None:
        extra = "   3: 0100007F:2382 00000000:0000 0A 00000000:00000000 00:00000000 0 0 0 4\n"
        text = LISTENERS.replace("# /proc/net/tcp6", extra + "# /proc/net/tcp6")
        (run_dir / evidence.LISTENERS_OUT).write_text(text)
        only_fails(run_dir, "listener", "listeners.out", "127.0.0.1:9090")

    def test_a_second_ipv6_listener(self, run_dir: Path) -> None:
        extra = (
            "   0: 00000000000000000000000000000000:1F91 "
            "00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 0 0 0 5\n"
        )
        (run_dir / evidence.LISTENERS_OUT).write_text(LISTENERS + extra)
        only_fails(run_dir, "listener", "[::]:8081")

    def test_nothing_on_the_listen_port(self, run_dir: Path) -> None:
        text = LISTENERS.replace("00000000:1F90 00000000:0000 0A", "00000000:1F92 00000000:0000 0A")
        (run_dir / evidence.LISTENERS_OUT).write_text(text)
        only_fails(run_dir, "listener", "nothing listens on the --listen port 8080", "8082")

    def test_unreadable_sockets(self, run_dir: Path) -> None:
        set_fact(run_dir, "listeners_status", "1")
        only_fails(run_dir, "listener", "could not be read")

    def test_addresses_are_decoded(self) -> None:
        """Host byte order per 32-bit word, IPv4 and IPv6; only LISTEN sockets count."""
        text = (
            "# /proc/net/tcp6\n"
            "   0: 0000000000000000FFFF00000100007F:1F90 "
            "00000000000000000000000000000000:0000 0A 0 0 0 0 0 1\n"
            "   1: 00000000000000000000000001000000:0050 "
            "00000000000000000000000000000000:0000 0A 0 0 0 0 0 1\n"
            "   2: 00000000000000000000000001000000:0051 "
            "00000000000000000000000000000000:0000 01 0 0 0 0 0 1\n"
        )
        listeners, tables = parse_listeners(text)
        assert ["/proc/net/tcp6"] == tables
        assert [Listener("::ffff:127.0.0.1", 8080), Listener("::1", 80)] == listeners


class TestRelay:
    def test_a_stream_that_is_not_the_providers(self, run_dir: Path) -> None:
        """A body the client received that differs from what the provider sent fails."""
        edit_client(run_dir, lambda d: d["exchanges"][0].update(body_sha256="0" * 64))
        only_fails(run_dir, "relay", "client/client.json", "$.exchanges[0].body_sha256")

    def test_a_stream_cut_short(self, run_dir: Path) -> None:
        edit_client(run_dir, lambda d: d["exchanges"][3].update(complete=False))
        only_fails(run_dir, "relay", "cut short")

    def test_a_request_changed_on_the_way(self, run_dir: Path) -> None:
        """When no provider request has the body the client sent, the relay changed it."""
        records = provider_records(run_dir)
        records[0]["request"]["sha256"] = "f" * 64
        write_provider_records(run_dir, records)
        verdict = verdicts(run_dir)["relay"]
        assert not verdict.ok
        assert "the provider answered no request with this body" in verdict.line()

    def test_another_content_type(self, run_dir: Path) -> None:
        edit_client(
            run_dir, lambda d: d["exchanges"][0]["headers"].update({"content-type": "text/plain"})
        )
        only_fails(run_dir, "relay", "content-type 'text/plain'")

    def test_the_credential_not_relayed(self, run_dir: Path) -> None:
        records = provider_records(run_dir)
        records[2]["headers"]["authorization"] = "absent"
        write_provider_records(run_dir, records)
        only_fails(run_dir, "relay", "provider.jsonl", "authorization 'absent'")

    def test_an_unanswered_request(self, run_dir: Path) -> None:
        def unanswered(data: dict[str, Any]) -> None:
            data["exchanges"][-1].update(
                status=None, body_sha256=None, complete=False, error="ConnectionResetError"
            )

        edit_client(run_dir, unanswered)
        assert "relay" in failed(run_dir)
        assert "no answer (ConnectionResetError)" in verdicts(run_dir)["relay"].line()

    def test_a_client_that_stopped(self, run_dir: Path) -> None:
        edit_client(run_dir, lambda d: d.update(error="nothing accepted a connection"))
        only_fails(run_dir, "relay", "the client stopped: nothing accepted a connection")


class TestMetrics:
    def test_not_200(self, run_dir: Path) -> None:
        edit_client(run_dir, lambda d: d.update(metrics_status=404))
        only_fails(run_dir, "metrics", "answered 404", "$.metrics_status")

    def test_not_json(self, run_dir: Path) -> None:
        (run_dir / evidence.METRICS).write_text("<html>metrics</html>")
        assert "metrics" in failed(run_dir)
        assert "capture.snapshot.syntax" in verdicts(run_dir)["metrics"].line()

    def test_another_schema(self, run_dir: Path) -> None:
        edit_json(
            run_dir / evidence.METRICS, lambda d: d.update(schema="hpatch.capture.metrics.v3")
        )
        assert "metrics" in failed(run_dir)
        assert "$.schema" in verdicts(run_dir)["metrics"].line()

    def test_a_field_missing(self, run_dir: Path) -> None:
        edit_json(run_dir / evidence.METRICS, lambda d: d["requests"].pop("retries"))
        assert "metrics" in failed(run_dir)
        line = verdicts(run_dir)["metrics"].line()
        assert "$.requests.retries" in line
        assert "capture.snapshot.schema" in line

    def test_another_mode(self, run_dir: Path) -> None:
        edit_json(run_dir / evidence.METRICS, lambda d: d["router"].update(mode="hpatch"))
        assert "metrics" in failed(run_dir)
        assert "$.router.mode" in verdicts(run_dir)["metrics"].line()

    def test_requests_not_counted(self, run_dir: Path) -> None:
        """A snapshot that misses the check's requests fails (and cannot reconcile)."""
        edit_client(run_dir, lambda d: d["exchanges"].append(dict(d["exchanges"][-1], index=6)))
        assert "$.requests.logical_requests" in verdicts(run_dir)["metrics"].line()


class TestCapture:
    def test_a_deleted_record(self, run_dir: Path) -> None:
        lines = capture_file(run_dir).read_text().splitlines(keepends=True)
        capture_file(run_dir).write_text("".join(lines[:3] + lines[4:]))
        verdict = verdicts(run_dir)["capture"]
        assert not verdict.ok
        assert "capture/records.jsonl" in verdict.line()

    def test_another_schema_version(self, run_dir: Path) -> None:
        lines = capture_file(run_dir).read_text().splitlines(keepends=True)
        first = json.loads(lines[0])
        first["schema_version"] = 5
        capture_file(run_dir).write_text(json.dumps(first) + "\n" + "".join(lines[1:]))
        only_fails(run_dir, "capture", "capture.schema_version")

    def test_a_foreign_record_file(self, run_dir: Path) -> None:
        (run_dir / evidence.CAPTURE / "zz.jsonl").write_text('{"kind": "client"}\n')
        only_fails(run_dir, "capture", "capture/zz.jsonl")

    def test_no_capture(self, run_dir: Path) -> None:
        shutil.rmtree(run_dir / evidence.CAPTURE)
        found = failed(run_dir)
        assert {"capture", "shutdown"} <= found
        assert "capture.empty" in verdicts(run_dir)["capture"].line()


class TestTurnState:
    @pytest.mark.parametrize("status", ["changed", "missing", "unsolicited"])
    def test_a_provider_request_not_carrying_the_turns_value(
        self, run_dir: Path, status: str
    ) -> None:
        records = provider_records(run_dir)
        records[3]["turn_state"]["status"] = status
        write_provider_records(run_dir, records)
        only_fails(
            run_dir,
            "turn-state",
            "provider.jsonl",
            "$[seq=4].turn_state.status",
            f"x-codex-turn-state {status}",
        )

    def test_a_response_header_dropped(self, run_dir: Path) -> None:
        edit_client(run_dir, lambda d: d["exchanges"][0]["headers"].pop("x-codex-turn-state"))
        only_fails(run_dir, "turn-state", "the client received none", "$.exchanges[0].headers")

    def test_a_header_made_up(self, run_dir: Path) -> None:
        """The provider's 500 carried no turn state; a router that adds one made it up."""

        def made_up(data: dict[str, Any]) -> None:
            failing = next(e for e in data["exchanges"] if e["status"] == 500)
            failing["headers"]["x-codex-turn-state"] = "ts_made_up"

        edit_client(run_dir, made_up)
        only_fails(run_dir, "turn-state", "made up by the router")

    def test_two_values_in_one_turn(self, run_dir: Path) -> None:
        edit_client(
            run_dir,
            lambda d: d["exchanges"][3]["headers"].update({"x-codex-turn-state": "ts_other"}),
        )
        only_fails(run_dir, "turn-state", "turn 1: the client received 2 different")

    def test_no_value_ever_carried(self, run_dir: Path) -> None:
        records = provider_records(run_dir)
        for record in records:
            record["turn_state"]["status"] = "absent"
        write_provider_records(run_dir, records)
        only_fails(run_dir, "turn-state", "no request carried the turn's x-codex-turn-state")


class TestCredentials:
    def test_in_a_capture_file(self, run_dir: Path) -> None:
        (run_dir / evidence.CAPTURE / "debug.log").write_text(
            f"request 1\nauthorization: Bearer {CREDENTIAL}\n"
        )
        only_fails(run_dir, "credentials", "capture/debug.log:2", "Authorization header's value")

    def test_in_the_snapshot(self, run_dir: Path) -> None:
        edit_json(run_dir / evidence.METRICS, lambda d: d.update(debug=CREDENTIAL))
        assert "metrics.json:1" in verdicts(run_dir)["credentials"].line()

    def test_in_a_record(self, run_dir: Path) -> None:
        """Inside a record it breaks the schema too; the credentials item names the file."""
        lines = capture_file(run_dir).read_text().splitlines(keepends=True)
        record = json.loads(lines[0])
        record["thread"]["subagent"] = f"Bearer {CREDENTIAL}"
        capture_file(run_dir).write_text(json.dumps(record) + "\n" + "".join(lines[1:]))
        assert "capture/records.jsonl:1" in verdicts(run_dir)["credentials"].line()

    def test_without_the_credential(self, run_dir: Path) -> None:
        (run_dir / evidence.CREDENTIAL).unlink()
        only_fails(run_dir, "credentials", "credential: evidence unusable: not collected")


class TestShutdown:
    def test_killed_after_the_timeout(self, run_dir: Path) -> None:
        write_facts(run_dir, {**FACTS, "exit_code": "137", "stop_seconds": "10.31"})
        only_fails(run_dir, "shutdown", "did not exit within 10 s of SIGTERM", "exit_code")

    def test_slower_than_the_timeout(self, run_dir: Path) -> None:
        set_fact(run_dir, "stop_seconds", "10.02")
        only_fails(run_dir, "shutdown", "did not exit within 10 s")

    def test_still_running(self, run_dir: Path) -> None:
        write_facts(run_dir, {**FACTS, "stop_status": "1", "running_after_stop": "true"})
        only_fails(run_dir, "shutdown", "`docker stop` did not stop it")

    def test_not_running_when_stopped(self, run_dir: Path) -> None:
        """A router that exited before the stop (a crash) fails, whatever its exit."""
        write_facts(run_dir, {**FACTS, "running_before_stop": "false", "exit_code": "1"})
        only_fails(run_dir, "shutdown", "was not running when the check stopped it")

    def test_an_exchange_not_closed(self, run_dir: Path) -> None:
        """A capture that lost the last exchange's closing record at the stop fails."""
        lines = capture_file(run_dir).read_text().splitlines(keepends=True)
        last = max(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "exchange")
        capture_file(run_dir).write_text("".join(lines[:last] + lines[last + 1 :]))
        found = verdicts(run_dir)
        assert "closes 5 exchanges; the client made 6" in found["shutdown"].line()
        assert not found["capture"].ok


class TestMissingEvidence:
    def test_no_client_report(self, run_dir: Path) -> None:
        """Without the client's report every item that needs it fails; none passes."""
        (run_dir / evidence.CLIENT_REPORT).unlink()
        assert {"relay", "metrics", "turn-state", "shutdown"} <= failed(run_dir)
        assert "client/client.json: evidence unusable: not collected" in (
            verdicts(run_dir)["relay"].line()
        )

    def test_no_facts(self, run_dir: Path) -> None:
        (run_dir / evidence.FACTS).unlink()
        assert {"identity", "listener", "shutdown"} <= failed(run_dir)

    def test_an_unknown_fact(self, run_dir: Path) -> None:
        write_facts(run_dir, {**FACTS, "colour": "blue"})
        assert "unknown or repeated key 'colour'" in verdicts(run_dir)["listener"].line()

    def test_a_client_report_with_an_unknown_field(self, run_dir: Path) -> None:
        edit_client(run_dir, lambda d: d["exchanges"][0].update(extra=1))
        line = verdicts(run_dir)["relay"].line()
        assert "$.exchanges[0]" in line
        assert "unknown field(s): extra" in line

    def test_no_provider_records(self, run_dir: Path) -> None:
        (run_dir / evidence.PROVIDER_RECORDS).unlink()
        assert {"relay", "turn-state"} <= failed(run_dir)
