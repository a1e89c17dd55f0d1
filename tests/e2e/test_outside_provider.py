"""The scripted provider as an outside-provider stand-in, reached across Docker networks.

:func:`tests.outside.outside_provider` runs the provider image on a network of its own,
serving HTTPS with a key, published only on that network's gateway. Clients here are
``python3`` in the router image, on networks this test creates: a non-internal one (a
route out, as a topology's egress network has) reaches it; an internal one does not.
The only targets are the stand-in's gateway address and loopback inside containers.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hpbench.reference.identity import SCRIPTED_REQUEST_ID_PREFIX

from ..conftest import build_images_once
from ..outside import (
    KEY_PREFIX,
    OutsideProvider,
    docker,
    make_ca,
    outside_provider,
    router_image,
)

pytestmark = [pytest.mark.docker, pytest.mark.e2e]

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "tests" / "data" / "replay" / "edit-and-check.json"
CLIENT_KEY_ENV = "OUTSIDE_KEY"

# Runs in the client container: one request, its outcome as one JSON line.
CLIENT = """\
import http.client, json, os, ssl, sys, urllib.parse
url, method = sys.argv[1], sys.argv[2]
parts = urllib.parse.urlsplit(url)
headers = {"content-type": "application/json"}
key = os.environ.get("OUTSIDE_KEY")
if key:
    headers["authorization"] = "Bearer " + key
user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
payload = {"model": "gpt-5.5", "stream": True, "input": [user]}
body = json.dumps(payload) if method == "POST" else None
out = {}
try:
    connection = http.client.HTTPSConnection(
        parts.hostname, parts.port, timeout=5, context=ssl.create_default_context()
    )
    connection.request(method, parts.path, body, headers)
    response = connection.getresponse()
    out["status"] = response.status
    out["headers"] = {k.lower(): v for k, v in response.getheaders()}
    out["body"] = response.read().decode("utf-8", "replace")
except Exception as exc:
    out["error"] = type(exc).__name__ + ": " + str(exc)
print(json.dumps(out))
"""


@contextlib.contextmanager
def scratch_network(*, internal: bool) -> Iterator[str]:
    """A network of this test's own (removed afterwards)."""
    name = f"hpbench-outside-client-{secrets.token_hex(4)}"
    docker("network", "create", *(["--internal"] if internal else []), name)
    try:
        yield name
    finally:
        subprocess.run(["docker", "network", "rm", name], capture_output=True, check=False)


def call(
    network: str,
    url: str,
    *,
    ca_bundle: Path,
    method: str = "POST",
    key: str | None = None,
) -> dict[str, Any]:
    """One request from a fresh router-image container on ``network``, trusting only
    ``ca_bundle`` (mounted, SSL_CERT_FILE); the key travels in the environment."""
    ca_bundle.chmod(0o644)
    arguments = ["run", "--rm", "--network", network, "--entrypoint", "python3"]
    arguments += ["-v", f"{ca_bundle}:/etc/hpbench-test-ca.pem:ro"]
    arguments += ["-e", "SSL_CERT_FILE=/etc/hpbench-test-ca.pem"]
    env = {}
    if key is not None:
        arguments += ["-e", CLIENT_KEY_ENV]
        env[CLIENT_KEY_ENV] = key
    output = docker(*arguments, router_image(), "-c", CLIENT, url, method, env=env, timeout=120)
    value: dict[str, Any] = json.loads(output.splitlines()[-1])
    return value


def events(body: str) -> list[str]:
    """The SSE event names of a streamed body, in order."""
    return [
        line.removeprefix("event:").strip()
        for line in body.splitlines()
        if line.startswith("event:")
    ]


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OutsideProvider]:
    """The stand-in (this tree's images), one script, for the module."""
    build_images_once()
    with outside_provider(SCRIPT, tmp_path_factory.mktemp("outside")) as running:
        yield running


@pytest.fixture(scope="module")
def egress() -> Iterator[str]:
    """A non-internal network of the test's own: a route out, like a topology's egress."""
    with scratch_network(internal=False) as name:
        yield name


def test_published_on_the_gateway_only(outside: OutsideProvider):
    """Port 8443 is published on the stand-in network's gateway address and nowhere else."""
    bindings = docker("port", outside.container).splitlines()
    assert bindings, "nothing published"
    for binding in bindings:
        port, _, host = binding.partition(" -> ")
        assert port.strip() == "8443/tcp"
        assert host.strip() == f"{outside.gateway}:{outside.port}"
    assert outside.url == f"https://{outside.gateway}:{outside.port}/v1"
    assert outside.key.startswith(KEY_PREFIX)


def test_key_tls_and_records_across_networks(outside: OutsideProvider, egress: str, tmp_path: Path):
    """From another (non-internal) network: no key is a 401, the key gets a 200 stream,
    another CA fails verification; the key is in no record or log of the provider."""
    responses = f"{outside.url}/responses"
    refused = call(egress, responses, ca_bundle=outside.ca_bundle)
    assert 401 == refused.get("status"), refused
    assert "invalid_api_key" == json.loads(refused["body"])["error"]["code"]

    answered = call(egress, responses, ca_bundle=outside.ca_bundle, key=outside.key)
    assert 200 == answered.get("status"), answered
    assert answered["headers"]["content-type"] == "text/event-stream"
    assert answered["headers"]["x-request-id"].startswith(SCRIPTED_REQUEST_ID_PREFIX)
    assert "response.completed" == events(answered["body"])[-1]

    other_ca = make_ca(tmp_path / "other-ca", name="a CA the stand-in never used")
    untrusted = call(egress, responses, ca_bundle=other_ca.cert, key=outside.key)
    assert "status" not in untrusted, untrusted
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted["error"], untrusted

    health = call(
        egress,
        f"https://{outside.gateway}:{outside.port}/healthz",
        method="GET",
        ca_bundle=outside.ca_bundle,
    )
    assert 200 == health.get("status"), health

    records = outside.records()
    assert [401, 200] == [record["response"]["status"] for record in records]
    assert "missing" == records[0]["refused"]
    assert "bearer" == records[1]["headers"]["authorization"]
    stored = json.dumps(records) + outside.logs()
    assert outside.key not in stored
    assert KEY_PREFIX not in stored


def test_internal_network_cannot_reach_it(outside: OutsideProvider):
    """A container on an internal network has no route to the stand-in: its connection
    fails (refused, unreachable or timed out) and the provider sees no request."""
    before = len(outside.records())
    with scratch_network(internal=True) as internal:
        result = call(
            internal, f"{outside.url}/responses", ca_bundle=outside.ca_bundle, key=outside.key
        )
    assert "status" not in result, result
    failure = result["error"].split(":")[0]
    assert failure in {"OSError", "TimeoutError", "ConnectionRefusedError"}, result
    assert before == len(outside.records())


def test_nothing_is_left_behind(tmp_path: Path):
    """Leaving the block removes the container and the network, after a failure too."""
    build_images_once()
    seen: dict[str, str] = {}
    with (
        pytest.raises(RuntimeError, match="the test failed"),
        outside_provider(SCRIPT, tmp_path) as running,
    ):
        seen = {"container": running.container, "network": running.network}
        raise RuntimeError("the test failed")
    gone_container = subprocess.run(
        ["docker", "inspect", seen["container"]], capture_output=True, check=False
    )
    gone_network = subprocess.run(
        ["docker", "network", "inspect", seen["network"]], capture_output=True, check=False
    )
    assert 0 != gone_container.returncode
    assert 0 != gone_network.returncode
