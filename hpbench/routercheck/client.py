"""The router conformance check's client: sends the recorded Codex requests to the router.

Run inside the check's provider container (which has hpbench and is on the check's own
network), by ``benchmarks/libexec/bench-router-check``::

    python3 -m hpbench.routercheck.client --router router:8080 \\
        --requests /tmp/requests --out /tmp/evidence

It behaves as Codex 0.169 does where the check needs it to: ``Authorization: Bearer
<credential>`` (the value of ``HPBENCH_ROUTER_CHECK_CREDENTIAL``) on every request,
``x-codex-turn-state`` carried within a turn (the first value a response of the turn
returned goes on every later request of that turn, retries included; a new turn starts
without one), and one retry of a request answered with a 5xx or not answered at all.
It judges nothing: it writes what it sent and received (``client.json``, the bodies in
``bodies/``) and the router's ``GET /api/metrics`` body (``metrics.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from hpbench.routercheck.evidence import (
    METRICS,
    TURN_STATE_HEADER,
    ClientExchange,
    ClientReport,
    RecordedRequest,
    client_report_json,
    recorded_requests,
)

CREDENTIAL_VARIABLE = "HPBENCH_ROUTER_CHECK_CREDENTIAL"
READY_SECONDS = 30.0
REQUEST_TIMEOUT = 30.0
RETRY_DELAY = 0.2
MAX_ATTEMPTS = 2


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def wait_listening(address: str, seconds: float) -> bool:
    """Whether a TCP connection to ``address`` succeeded within ``seconds``."""
    host, port = _host_port(address)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1.0):
            return True
        time.sleep(0.1)
    return False


def _send(
    address: str, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes, bool]:
    """One request; status, lower-cased headers, the (de-chunked) body and whether it
    arrived whole."""
    host, port = _host_port(address)
    connection = http.client.HTTPConnection(host, port, timeout=REQUEST_TIMEOUT)
    try:
        connection.request(method, path, body, headers)
        response = connection.getresponse()
        names: dict[str, str] = {}
        for name, value in response.getheaders():
            names.setdefault(name.lower(), value)
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
        return response.status, names, bytes(raw), complete
    finally:
        connection.close()


def exchange_once(
    address: str,
    recorded: RecordedRequest,
    *,
    index: int,
    attempt: int,
    credential: str,
    turn_state: str | None,
    bodies: Path,
) -> ClientExchange:
    """Send one recorded request once and describe what came back."""
    payload = json.dumps(recorded.body, separators=(",", ":"), ensure_ascii=False).encode()
    headers = {**recorded.headers, "authorization": f"Bearer {credential}"}
    if turn_state is not None:
        headers[TURN_STATE_HEADER] = turn_state
    status: int | None = None
    names: dict[str, str] = {}
    raw = b""
    complete = False
    error = None
    try:
        status, names, raw, complete = _send(address, "POST", "/v1/responses", payload, headers)
    except (OSError, http.client.HTTPException) as exc:
        error = f"{type(exc).__name__}: {exc}"
    (bodies / f"{index:02d}-{recorded.name}.body").write_bytes(raw)
    return ClientExchange(
        index=index,
        request=recorded.name,
        turn=recorded.turn,
        attempt=attempt,
        request_sha256=hashlib.sha256(payload).hexdigest(),
        request_bytes=len(payload),
        turn_state_sent=turn_state,
        status=status,
        headers=names,
        body_sha256=hashlib.sha256(raw).hexdigest() if status is not None else None,
        body_bytes=len(raw),
        complete=complete,
        error=error,
    )


def run_requests(
    address: str, requests: Sequence[RecordedRequest], *, credential: str, bodies: Path
) -> list[ClientExchange]:
    """Every recorded request in order, with Codex's turn-state rule and one retry."""
    exchanges: list[ClientExchange] = []
    turn_states: dict[int, str] = {}
    for recorded in requests:
        for attempt in range(MAX_ATTEMPTS):
            exchange = exchange_once(
                address,
                recorded,
                index=len(exchanges),
                attempt=attempt,
                credential=credential,
                turn_state=turn_states.get(recorded.turn),
                bodies=bodies,
            )
            exchanges.append(exchange)
            received = exchange.headers.get(TURN_STATE_HEADER)
            if received is not None:
                turn_states.setdefault(recorded.turn, received)
            if exchange.status is not None and exchange.status < 500:
                break
            time.sleep(RETRY_DELAY)
    return exchanges


def _fetch_metrics(address: str, out: Path) -> tuple[int | None, str | None]:
    """GET /api/metrics into ``out``; its status, or why there is none."""
    try:
        status, _, raw, _ = _send(address, "GET", "/api/metrics", None, {})
    except (OSError, http.client.HTTPException) as exc:
        return None, f"GET /api/metrics: {type(exc).__name__}: {exc}"
    out.write_bytes(raw)
    return status, None


def main(argv: Sequence[str] | None = None) -> int:
    """Send the requests, fetch the metrics, write the evidence; 0 unless it could not."""
    parser = argparse.ArgumentParser(prog="python3 -m hpbench.routercheck.client")
    parser.add_argument("--router", required=True, metavar="HOST:PORT")
    parser.add_argument("--requests", required=True, type=Path, metavar="DIR")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR")
    parser.add_argument(
        "--provider", metavar="HOST:PORT", help="wait until the provider listens here first"
    )
    args = parser.parse_args(argv)
    credential = os.environ.get(CREDENTIAL_VARIABLE, "")
    if not credential:
        sys.stderr.write(f"client: {CREDENTIAL_VARIABLE} is not set\n")
        return 2
    bodies = args.out / "bodies"
    bodies.mkdir(parents=True, exist_ok=True)
    exchanges: list[ClientExchange] = []
    metrics_status = None
    error = None
    ready = False
    if args.provider is not None and not wait_listening(args.provider, READY_SECONDS):
        error = f"the provider did not listen on {args.provider} within {READY_SECONDS:g} s"
    elif not wait_listening(args.router, READY_SECONDS):
        error = f"nothing accepted a connection on {args.router} within {READY_SECONDS:g} s"
    else:
        ready = True
    try:
        if ready:
            requests = [request for _, request in recorded_requests(args.requests)]
            exchanges = run_requests(args.router, requests, credential=credential, bodies=bodies)
            metrics_status, error = _fetch_metrics(args.router, args.out / METRICS)
    except Exception as exc:  # the evidence must say why it stops short
        error = f"{type(exc).__name__}: {exc}"
    report = ClientReport(
        router=args.router,
        ready=ready,
        exchanges=tuple(exchanges),
        metrics_status=metrics_status,
        error=error,
    )
    (args.out / "client.json").write_text(
        json.dumps(client_report_json(report), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())
