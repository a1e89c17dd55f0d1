"""The scripted provider as an outside-provider stand-in, on loopback: HTTPS, the key check,
the request-id prefix, and the command line that enables them."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from hpbench.reference._scripted import key_refusal
from hpbench.reference._sse import EventDecoder
from hpbench.reference.harness import LOOPBACK, free_port, read_jsonl, stop
from hpbench.reference.identity import SCRIPTED_REQUEST_ID_PREFIX

from ..outside import fake_key, make_ca, make_server_cert

KEY_ENV = "HPBENCH_TEST_PROVIDER_KEY"
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
BODY = json.dumps({"model": "gpt-5.5", "stream": True, "input": [USER]}).encode()


@attrs.frozen
class Tls:
    ca: Path
    cert: Path
    key: Path
    other_ca: Path

    def client(self, ca: Path | None = None) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(ca or self.ca))


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Tls:
    """A test CA, a server certificate for 127.0.0.1 and a second, unrelated CA."""
    root = tmp_path_factory.mktemp("tls")
    ca = make_ca(root / "ca")
    server = make_server_cert(ca, root / "server", ips=[LOOPBACK])
    other = make_ca(root / "other", name="some other CA")
    return Tls(ca.cert, server.cert, server.key, other.cert)


@attrs.frozen
class Server:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    records: Path
    key: str

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def start(
    arguments: list[str], env: dict[str, str], log: Path
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    command = [sys.executable, "-m", "hpbench.reference.provider", "--listen", f"{LOOPBACK}:{port}"]
    with log.open("wb") as stream:
        process = subprocess.Popen(
            [*command, *arguments],
            stdin=subprocess.DEVNULL,
            stdout=stream,
            stderr=stream,
            env={**os.environ, **env},
        )
    return process, port


def request(
    port: int,
    method: str,
    path: str,
    *,
    context: ssl.SSLContext | None,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One request over HTTPS (``context``) or plain HTTP (None); status, headers, body."""
    connection: http.client.HTTPConnection
    if context is None:
        connection = http.client.HTTPConnection(LOOPBACK, port, timeout=10)
    else:
        connection = http.client.HTTPSConnection(LOOPBACK, port, timeout=10, context=context)
    try:
        connection.request(method, path, body, headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


@contextlib.contextmanager
def outside_server(tmp_path: Path, tls: Tls, replay_dir: Path) -> Iterator[Server]:
    """The provider on loopback with --tls-cert/--tls-key and --api-key-env, one script."""
    key = fake_key()
    log = tmp_path / "provider.log"
    records = tmp_path / "records.jsonl"
    arguments = ["--tls-cert", str(tls.cert), "--tls-key", str(tls.key)]
    arguments += ["--api-key-env", KEY_ENV, "--record", str(records)]
    arguments += ["--script", str(replay_dir / "edit-and-check.json")]
    process, port = start(arguments, {KEY_ENV: key}, log)
    try:
        deadline = time.monotonic() + 20
        while True:
            if process.poll() is not None:
                pytest.fail(f"provider exited {process.returncode}:\n{log.read_text()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if 200 == request(port, "GET", "/healthz", context=tls.client())[0]:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"provider not ready:\n{log.read_text()}")
            time.sleep(0.05)
        yield Server(process, port, log, records, key)
    finally:
        stop(process)


@pytest.fixture
def server(tmp_path: Path, tls: Tls, replay_dir: Path) -> Iterator[Server]:
    with outside_server(tmp_path, tls, replay_dir) as running:
        yield running


def post(server: Server, tls: Tls, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    fields = {"content-type": "application/json", **headers}
    return request(
        server.port, "POST", "/v1/responses", context=tls.client(), headers=fields, body=BODY
    )


class TestKeyRefusal:
    def test_reasons(self):
        """Only ``Bearer <key>`` (any case of the scheme) passes; each refusal is named."""
        assert key_refusal("k1", "Bearer k1") is None
        assert key_refusal("k1", "bearer k1") is None
        assert "missing" == key_refusal("k1", None)
        assert "not_bearer" == key_refusal("k1", "Basic k1")
        assert "wrong_key" == key_refusal("k1", "Bearer k2")
        assert "wrong_key" == key_refusal("k1", "Bearer ")
        assert "wrong_key" == key_refusal("k1", "Bearer k1k1")


class TestHttps:
    def test_streams_over_tls_with_the_key(self, server: Server, tls: Tls):
        """With the key, POST /v1/responses is a 200 event stream over verified TLS, and the
        request id carries the scripted prefix."""
        status, headers, data = post(server, tls, {"authorization": f"Bearer {server.key}"})
        assert 200 == status
        assert headers["content-type"] == "text/event-stream"
        assert headers["x-request-id"] == f"{SCRIPTED_REQUEST_ID_PREFIX}req_1"
        events = EventDecoder().feed(data)
        assert "response.completed" == events[-1]["type"]

    def test_untrusted_ca_fails_verification(self, server: Server, tls: Tls):
        """A client that trusts another CA refuses the server's certificate."""
        with pytest.raises(ssl.SSLCertVerificationError):
            request(server.port, "GET", "/healthz", context=tls.client(tls.other_ca))

    def test_plain_http_is_not_served(self, server: Server):
        """The listener speaks TLS only: a plain HTTP request gets no HTTP answer."""
        with pytest.raises((OSError, http.client.HTTPException)):
            request(server.port, "GET", "/healthz", context=None)
        assert server.process.poll() is None

    def test_health_needs_no_key(self, server: Server, tls: Tls):
        """/healthz stays open."""
        status, _, data = request(server.port, "GET", "/healthz", context=tls.client())
        assert (200, True) == (status, json.loads(data)["ok"])


class TestKey:
    @pytest.mark.parametrize(
        ("headers", "reason"),
        [
            ({}, "missing"),
            ({"authorization": "Bearer sk-hpbench-fake-not-the-key"}, "wrong_key"),
            ({"authorization": "Basic c2staHBiZW5jaA=="}, "not_bearer"),
        ],
    )
    def test_refused_with_401(self, server: Server, tls: Tls, headers: dict[str, str], reason: str):
        """Without the key: 401 with a Responses-style error, recorded as refused."""
        status, answer_headers, data = post(server, tls, headers)
        assert 401 == status
        error = json.loads(data)["error"]
        assert {"type", "code", "message"} == set(error)
        assert "invalid_api_key" == error["code"]
        assert answer_headers["x-request-id"].startswith(SCRIPTED_REQUEST_ID_PREFIX)
        [record] = read_jsonl(server.records)
        assert reason == record["refused"]
        assert {"status": 401, "outcome": "unauthorized"} == record["response"]
        assert record["script"] is None

    def test_requests_listing_needs_the_key(self, server: Server, tls: Tls):
        """GET /requests is refused without the key and served with it."""
        assert 401 == request(server.port, "GET", "/requests", context=tls.client())[0]
        auth = {"authorization": f"Bearer {server.key}"}
        status, _, data = request(
            server.port, "GET", "/requests", context=tls.client(), headers=auth
        )
        assert 200 == status
        assert ["missing"] == [record["refused"] for record in json.loads(data)]

    def test_key_is_never_recorded_or_logged(self, server: Server, tls: Tls):
        """Neither the expected key nor a presented one appears in a record or the log."""
        wrong = "sk-hpbench-fake-presented-but-wrong"
        post(server, tls, {"authorization": f"Bearer {wrong}"})
        post(server, tls, {"authorization": f"Bearer {server.key}"})
        post(server, tls, {})
        records = read_jsonl(server.records)
        assert [401, 200, 401] == [record["response"]["status"] for record in records]
        assert [1, 2, 3] == [record["seq"] for record in records]
        stop(server.process)
        for text in (server.records.read_text(), server.log_text()):
            assert server.key not in text
            assert wrong not in text
            assert "sk-hpbench-fake" not in text
        assert "refused" in server.log_text()


class TestCommandLine:
    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hpbench.reference.provider", "--listen", "127.0.0.1:0", *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={**{k: v for k, v in os.environ.items() if k != KEY_ENV}, **(env or {})},
        )

    @pytest.mark.parametrize(
        ("given", "missing"), [("--tls-cert", "--tls-key"), ("--tls-key", "--tls-cert")]
    )
    def test_tls_flags_come_in_pairs(self, tls: Tls, replay_dir: Path, given: str, missing: str):
        """One TLS flag without the other is refused by name."""
        result = self.run(given, str(tls.cert), "--script", str(replay_dir / "faults.json"))
        assert 2 == result.returncode
        assert f"{given} needs {missing}" in result.stderr

    def test_unreadable_certificate_exits_2(self, tmp_path: Path, tls: Tls, replay_dir: Path):
        """A certificate that is not one stops the provider before it listens, naming it."""
        bogus = tmp_path / "bogus.pem"
        bogus.write_text("not a certificate\n")
        result = self.run(
            "--tls-cert",
            str(bogus),
            "--tls-key",
            str(tls.key),
            "--script",
            str(replay_dir / "faults.json"),
        )
        assert 2 == result.returncode
        assert str(bogus) in result.stderr

    def test_key_variable_must_be_set(self, replay_dir: Path):
        """--api-key-env names a variable that must hold a key."""
        script = str(replay_dir / "faults.json")
        unset = self.run("--api-key-env", KEY_ENV, "--script", script)
        assert 2 == unset.returncode
        assert f"--api-key-env {KEY_ENV}" in unset.stderr
        empty = self.run("--api-key-env", KEY_ENV, "--script", script, env={KEY_ENV: ""})
        assert 2 == empty.returncode


def test_records_keep_their_shape_without_a_key(tmp_path: Path, replay_dir: Path) -> None:
    """Without --api-key-env every request is answered as before (no key is asked)."""
    log = tmp_path / "provider.log"
    process, port = start(["--script", str(replay_dir / "edit-and-check.json")], {}, log)
    try:
        deadline = time.monotonic() + 20
        answer: tuple[int, dict[str, str], bytes] | None = None
        while answer is None:
            with contextlib.suppress(OSError, http.client.HTTPException):
                answer = request(
                    port,
                    "POST",
                    "/v1/responses",
                    context=None,
                    body=BODY,
                    headers={"content-type": "application/json"},
                )
            if answer is None:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        status, headers, _ = answer
        assert 200 == status
        assert f"{SCRIPTED_REQUEST_ID_PREFIX}req_1" == headers["x-request-id"]
    finally:
        stop(process)
