"""The reference router between a hand-driven client and the scripted provider (loopback)."""

from __future__ import annotations

import hashlib
import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from hpbench import __version__
from hpbench._jsonio import canonical_json
from hpbench.capture.validator import validate_capture
from hpbench.reference import health
from hpbench.reference._sse import EventDecoder
from hpbench.reference.harness import (
    Running,
    free_port,
    read_jsonl,
    running_provider,
    running_router,
)

BEARER_VALUE = "Bearer sk-router-test-credential"
CONVERSATION_TEXT = "text-of-the-conversation-never-captured"
THREAD = "01a23701-0000-7000-8000-000000000001"
TOOLS = [{"type": "function", "name": "exec_command", "description": "Runs. " * 80}]


def user(text: str = CONVERSATION_TEXT) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def body(items: list[dict[str, Any]]) -> bytes:
    return json.dumps(
        {
            "model": "gpt-5.5",
            "stream": True,
            "input": items,
            "tools": TOOLS,
            "prompt_cache_key": THREAD,
        }
    ).encode()


@attrs.frozen
class Answer:
    status: int
    headers: dict[str, str]
    raw: bytes
    complete: bool

    @property
    def events(self) -> list[dict[str, Any]]:
        return EventDecoder().feed(self.raw)

    def items(self) -> list[dict[str, Any]]:
        return [e["item"] for e in self.events if e["type"] == "response.output_item.done"]


def post(
    port: int,
    payload: bytes,
    *,
    path: str = "/v1/responses",
    turn_state: str | None = None,
    timeout: float = 15.0,
) -> Answer:
    headers = {
        "content-type": "application/json",
        "authorization": BEARER_VALUE,
        "session-id": THREAD,
        "thread-id": THREAD,
        "x-client-request-id": THREAD,
        "accept": "text/event-stream",
    }
    if turn_state is not None:
        headers["x-codex-turn-state"] = turn_state
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, payload, headers)
        response = connection.getresponse()
        raw = bytearray()
        complete = True
        try:
            while data := response.read1(65536):
                raw += data
        except http.client.IncompleteRead as exc:
            raw += exc.partial
            complete = False
        except (OSError, http.client.HTTPException):
            complete = False
        names = {name.lower(): value for name, value in response.getheaders()}
        return Answer(response.status, names, bytes(raw), complete)
    finally:
        connection.close()


def follow_up(answer: Answer) -> list[dict[str, Any]]:
    items = answer.items()
    outputs = [
        {"type": "function_call_output", "call_id": i["call_id"], "output": "ok"}
        for i in items
        if i["type"] == "function_call"
    ]
    outputs += [
        {"type": "custom_tool_call_output", "call_id": i["call_id"], "output": "ok"}
        for i in items
        if i["type"] == "custom_tool_call"
    ]
    return items + outputs


@attrs.frozen
class Bench:
    provider: Running
    router: Running
    capture: Path
    workdir: Path

    def provider_records(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = self.provider.get_json("/requests")
        return value

    def capture_records(self, exchanges: int = 0) -> list[dict[str, Any]]:
        """The records, once at least ``exchanges`` exchanges are closed (the router writes
        an exchange record just after the client has its last byte)."""
        deadline = time.monotonic() + 10
        while True:
            records = read_jsonl(self.capture / "records.jsonl")
            closed = sum(1 for r in records if r["kind"] == "exchange")
            if closed >= exchanges or time.monotonic() > deadline:
                return records
            time.sleep(0.02)

    def metrics(self) -> dict[str, Any]:
        value: dict[str, Any] = self.router.get_json("/api/metrics")
        return value


@pytest.fixture
def bench(tmp_path: Path, replay_dir: Path) -> Iterator[Bench]:
    scripts = {
        "demo": replay_dir / "edit-and-check.json",
        "faults": replay_dir / "faults.json",
        "turns": replay_dir / "retry-turn-state.json",
    }
    with running_provider(scripts, tmp_path) as provider:
        capture = tmp_path / "capture"
        with running_router(
            f"{provider.url}/demo/v1", capture, log=tmp_path / "router.log"
        ) as router:
            yield Bench(provider, router, capture, tmp_path)


@pytest.fixture
def faults_bench(tmp_path: Path, replay_dir: Path) -> Iterator[Bench]:
    with running_provider({"faults": replay_dir / "faults.json"}, tmp_path) as provider:
        capture = tmp_path / "capture"
        with running_router(
            f"{provider.url}/faults/v1", capture, log=tmp_path / "router.log"
        ) as router:
            yield Bench(provider, router, capture, tmp_path)


def step_items(step: int) -> list[dict[str, Any]]:
    said = {"type": "message", "role": "assistant", "content": []}
    out = {"type": "function_call_output", "call_id": "c", "output": ""}
    items = [user()]
    for _ in range(step):
        items += [said, out]
    return items


class TestRelay:
    def test_stream_relayed_byte_for_byte(self, bench: Bench):
        """The client gets exactly the bytes the provider sent (by the provider's own hash)."""
        through = post(bench.router.port, body([user()]))
        assert through.complete
        assert 200 == through.status
        sent = bench.provider_records()[-1]["response"]["body_sha256"]
        assert sent == hashlib.sha256(through.raw).hexdigest()
        assert "text/event-stream" == through.headers["content-type"]

    def test_metrics_and_health(self, bench: Bench):
        """/api/metrics serves the v4 snapshot with mode and protocol; /healthz answers."""
        post(bench.router.port, body([user()]))
        metrics = bench.metrics()
        assert "hpatch.capture.metrics.v4" == metrics["schema"]
        assert {"mode": "passthrough", "protocol": "native", "mentor": False} == metrics["router"]
        assert 1 == metrics["requests"]["logical_requests"]
        assert {"ok": True} == bench.router.get_json("/healthz")

    def test_unknown_path_is_404(self, bench: Bench):
        """Only the Responses endpoint relays."""
        assert 404 == post(bench.router.port, body([user()]), path="/v1/chat/completions").status
        assert 0 == bench.metrics()["requests"]["logical_requests"]


class TestTurnState:
    def test_relayed_unchanged_both_ways(self, bench: Bench):
        """The provider's value reaches the client; the client's value reaches the provider."""
        first = post(bench.router.port, body([user()]))
        value = first.headers["x-codex-turn-state"]
        post(bench.router.port, body([user(), *follow_up(first)]), turn_state=value)
        statuses = [r["turn_state"]["status"] for r in bench.provider_records()]
        assert ["absent", "unchanged"] == statuses
        client, provider = [r for r in bench.capture_records(2) if r["exchange"] == 1][:2]
        assert client["turn_state_sent"]
        assert provider["turn_state_forwarded"]
        assert provider["turn_state_returned"]

    def test_never_synthesized_or_carried(self, bench: Bench):
        """A request without the header goes upstream without it, even mid-turn."""
        first = post(bench.router.port, body([user()]))
        assert "x-codex-turn-state" in first.headers
        post(bench.router.port, body([user(), *follow_up(first)]))
        post(bench.router.port, body([user(), *follow_up(first), user("next turn")]))
        statuses = [r["turn_state"]["status"] for r in bench.provider_records()]
        assert ["absent", "missing", "absent"] == statuses

    def test_router_retry_keeps_turn_state(self, faults_bench: Bench):
        """A 503 retried by the router carries the client's value on both attempts."""
        first = post(faults_bench.router.port, body(step_items(0)))
        assert 429 == first.status  # 429s are Codex's to retry, not the router's
        answer = post(faults_bench.router.port, body(step_items(1)), turn_state="ts_client_value")
        assert 500 == answer.status  # so are 500s
        answer = post(faults_bench.router.port, body(step_items(1)), turn_state="ts_client_value")
        assert 200 == answer.status
        step1 = [r for r in faults_bench.provider_records() if r["step"] == 1]
        assert [0, 1, 2] == [r["attempt"] for r in step1]
        assert ["http_500", "http_503", None] == [r["fault"] for r in step1]
        assert all(r["turn_state"]["received"] for r in step1)
        exchange = [r for r in faults_bench.capture_records(3) if r["kind"] == "exchange"][-1]
        assert 2 == exchange["attempts"]
        assert 1 == exchange["delivered_attempt"]
        attempts = [
            r
            for r in faults_bench.capture_records()
            if r["kind"] == "provider" and r["exchange"] == exchange["exchange"]
        ]
        assert [503, 200] == [a["http_status"] for a in attempts]
        assert all(a["turn_state_forwarded"] for a in attempts)
        assert 1 == faults_bench.metrics()["requests"]["retries"]


class TestFaults:
    def test_drop_is_relayed_as_a_drop(self, faults_bench: Bench):
        """An upstream stream cut short is cut short for the client too."""
        answer = post(faults_bench.router.port, body(step_items(2)))
        assert 200 == answer.status
        assert not answer.complete
        records = faults_bench.capture_records(1)
        exchange = [r for r in records if r["kind"] == "exchange"][-1]
        provider = [r for r in records if r["kind"] == "provider"][-1]
        assert "failed" == exchange["outcome"]
        assert "stream_error" == provider["outcome"]
        assert "absent" == provider["usage_state"]

    def test_client_leaving_a_stall(self, faults_bench: Bench):
        """A client that gives up on a stall is recorded as disconnected."""
        answer = post(faults_bench.router.port, body(step_items(3)), timeout=0.5)
        assert not answer.complete
        records = faults_bench.capture_records(1)
        exchanges = [r for r in records if r["kind"] == "exchange"]
        assert "client_disconnected" == exchanges[-1]["outcome"]
        assert 200 == exchanges[-1]["client_status"]

    def test_response_failed_is_a_failed_exchange(self, faults_bench: Bench):
        """response.failed reaches the client; the attempt is 'failed'."""
        answer = post(faults_bench.router.port, body(step_items(4)))
        assert answer.complete
        provider = [r for r in faults_bench.capture_records(1) if r["kind"] == "provider"][-1]
        assert "failed" == provider["outcome"]

    def test_unreachable_upstream(self, tmp_path: Path):
        """No upstream: every attempt is a connect_error and the client gets 502."""
        port = free_port()
        capture = tmp_path / "capture"
        with running_router(
            f"http://127.0.0.1:{port}/v1", capture, log=tmp_path / "router.log"
        ) as router:
            answer = post(router.port, body([user()]))
            metrics = router.get_json("/api/metrics")
        assert 502 == answer.status
        attempts = [r for r in read_jsonl(capture / "records.jsonl") if r["kind"] == "provider"]
        assert ["connect_error", "connect_error"] == [a["outcome"] for a in attempts]
        assert 2 == metrics["requests"]["provider_attempts"]


class TestThreadless:
    def test_request_without_thread_is_relayed_and_counted_skipped(self, bench: Bench):
        """No thread-id/session-id: relayed, but the capture says it skipped a request."""
        connection = http.client.HTTPConnection("127.0.0.1", bench.router.port, timeout=10)
        try:
            connection.request(
                "POST", "/v1/responses", body([user()]), {"content-type": "application/json"}
            )
            response = connection.getresponse()
            response.read()
        finally:
            connection.close()
        assert 200 == response.status
        capture = bench.metrics()["capture"]
        assert 1 == capture["skipped_requests"]
        assert 0 == capture["client_records"]


class TestSanitized:
    def test_credentials_only_upstream(self, bench: Bench):
        """The provider sees the bearer token; capture, metrics and logs never do."""
        first = post(bench.router.port, body([user()]))
        post(bench.router.port, body([user(), *follow_up(first)]))
        assert all(r["headers"]["authorization"] == "bearer" for r in bench.provider_records())
        texts = [
            (bench.capture / "records.jsonl").read_text(),
            json.dumps(bench.metrics()),
            bench.router.log_text(),
        ]
        for text in texts:
            assert "sk-router-test-credential" not in text
            assert CONVERSATION_TEXT not in text
            assert "cat hello.txt" not in text

    def test_capture_files_are_private(self, bench: Bench):
        """The capture directory is 0700 and the record file 0600."""
        post(bench.router.port, body([user()]))
        assert 0o700 == bench.capture.stat().st_mode & 0o777
        assert 0o600 == (bench.capture / "records.jsonl").stat().st_mode & 0o777


class TestModes:
    @pytest.mark.parametrize(("mode", "protocol"), [("hpatch", "native"), ("hpatch", "ctp2")])
    def test_hpatch_mode_records_mode_and_protocol(
        self, tmp_path: Path, replay_dir: Path, mode: str, protocol: str
    ):
        """hpatch mode relays like passthrough and records its mode and protocol everywhere."""
        with running_provider({"demo": replay_dir / "edit-and-check.json"}, tmp_path) as provider:
            capture = tmp_path / "capture"
            with running_router(
                f"{provider.url}/demo/v1",
                capture,
                mode=mode,
                protocol=protocol,
                log=tmp_path / "router.log",
            ) as router:
                answer = post(router.port, body([user()]))
                metrics = router.get_json("/api/metrics")
        assert answer.complete
        assert {"mode": mode, "protocol": protocol, "mentor": False} == metrics["router"]
        records = read_jsonl(capture / "records.jsonl")
        assert {(mode, protocol)} == {(r["mode"], r["protocol"]) for r in records}


class TestConformance:
    def test_every_fault_kind_validates(self, faults_bench: Bench):
        """A capture through 429s, a 500, a router-retried 503, a drop, a stall the client
        leaves and a response.failed passes ``hpbench capture validate``."""
        port = faults_bench.router.port
        statuses = [post(port, body(step_items(0))).status for _ in range(3)]
        statuses += [post(port, body(step_items(1))).status for _ in range(2)]
        assert [429, 429, 200, 500, 200] == statuses
        assert not post(port, body(step_items(2))).complete
        assert post(port, body(step_items(2))).complete
        assert not post(port, body(step_items(3)), timeout=0.5).complete
        assert post(port, body(step_items(3))).complete
        assert post(port, body(step_items(4))).complete
        faults_bench.capture_records(10)
        snapshot = faults_bench.workdir / "control-metrics.json"
        snapshot.write_text(canonical_json(faults_bench.metrics()))
        report = validate_capture(faults_bench.capture, snapshot, arm="control")
        assert report.ok, [str(f) for f in report.findings]
        assert 10 == report.snapshot.requests.logical_requests
        assert 11 == report.snapshot.requests.provider_attempts

    def test_wrong_arm_is_refused(self, bench: Bench):
        """A passthrough capture is not hpatch evidence."""
        post(bench.router.port, body([user()]))
        bench.capture_records(1)
        snapshot = bench.workdir / "metrics.json"
        snapshot.write_text(canonical_json(bench.metrics()))
        report = validate_capture(bench.capture, snapshot, arm="hpatch")
        assert not report.ok
        assert report.label is None


class TestHealthProbe:
    def test_probe(self, bench: Bench):
        """The container probe passes on a ready listener and fails on a closed port."""
        assert 0 == health.main([f"{bench.router.url}/healthz"])
        assert 0 == health.main([f"{bench.provider.url}/healthz"])
        assert 1 == health.main([f"http://127.0.0.1:{free_port()}/healthz"])


class TestCommandLine:
    @pytest.mark.parametrize(
        "change",
        [
            ("--mode", "mirror"),
            ("--protocol", "ctp3"),
            ("--upstream", "ftp://provider/v1"),
            ("--listen", "8080"),
            ("--upstream-retries", "-1"),
        ],
    )
    def test_bad_flags_exit_2(self, tmp_path: Path, change: tuple[str, str]):
        """Each named flag is required and checked; mistakes exit 2 before listening."""
        flags = {
            "--listen": "127.0.0.1:0",
            "--capture-output": str(tmp_path / "capture"),
            "--mode": "passthrough",
            "--protocol": "native",
            "--upstream": "http://127.0.0.1:9/v1",
        }
        flags[change[0]] = change[1]
        argv = [part for pair in flags.items() for part in pair]
        result = subprocess.run(
            [sys.executable, "-m", "hpbench.reference.router", *argv],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert 2 == result.returncode, result.stderr


class TestIdentity:
    """``--version``: the identity the report's "What ran" table names (router contract)."""

    def test_version_prints_one_json_line_and_exits_zero(self):
        done = subprocess.run(
            [sys.executable, "-m", "hpbench.reference.router", "--version"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 1
        assert json.loads(lines[0]) == {"name": "hpbench-reference-router", "version": __version__}

    def test_without_version_the_contract_flags_stay_required(self):
        done = subprocess.run(
            [sys.executable, "-m", "hpbench.reference.router", "--listen", "127.0.0.1:0"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2
        assert "--capture-output" in done.stderr
