"""What the router conformance check collects, and where it lies in the check's run directory.

``benchmarks/libexec/bench-router-check`` runs the router image under test against the
scripted provider and writes the evidence below into ``RUN_DIR``; :mod:`.judge` reads it.
The client's document (:class:`ClientReport`) and the recorded requests
(:class:`RecordedRequest`) are attrs models, read with the project's strict converter: an
unknown key or a wrong type is refused naming the field.

=====================  ===========================================================
``facts.tsv``          ``key<TAB>value`` lines the shell wrote (:class:`Facts`)
``credential``         the fake bearer token the client sent (never a real key)
``identity.out``       stdout of ``IMAGE --version`` (``identity.err``: stderr)
``listeners.out``      ``/proc/net/tcp`` and ``/proc/net/tcp6`` of the router's network
                       namespace, each after a ``# FILE`` line
``requests/``          the recorded Codex requests that were sent (``*.json``)
``client/client.json`` what the client sent and received (:class:`ClientReport`)
``client/bodies/``     each response body as received
``metrics.json``       the router's ``GET /api/metrics`` body, fetched after the requests
``provider.jsonl``     the scripted provider's request records
``capture/``           the router's ``--capture-output`` directory, after it stopped
``router.log``         the router container's output (not judged)
=====================  ===========================================================
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import attrs

from hpbench import rundir
from hpbench._convert import make_converter, structure
from hpbench.errors import ContractError
from hpbench.findings import Finding

FACTS = "facts.tsv"
CREDENTIAL = "credential"
IDENTITY_OUT = "identity.out"
LISTENERS_OUT = "listeners.out"
REQUESTS = "requests"
CLIENT = "client"
CLIENT_REPORT = "client/client.json"
CLIENT_BODIES = "client/bodies"
# The same files as a run's router evidence, by the same names (hpbench/rundir.py).
METRICS = rundir.METRICS_JSON
PROVIDER_RECORDS = rundir.PROVIDER_RECORDS
CAPTURE = rundir.CAPTURE_DIR
ROUTER_LOG = "router.log"

CODE = "router_check.evidence"
T = TypeVar("T")
TURN_STATE_HEADER = "x-codex-turn-state"

_CONVERTER = make_converter()


@attrs.frozen
class RecordedRequest:
    """One recorded Codex request (``contrib/router-check/requests/*.json``).

    ``headers`` are the request's header fields as Codex 0.169 sends them, without
    ``authorization`` (the client adds the check's fake credential) and without
    ``x-codex-turn-state`` (the client carries it as Codex does: the first value a
    response of the turn returned, on every later request of that turn).
    """

    name: str
    turn: int
    headers: dict[str, str]
    body: dict[str, Any]


@attrs.frozen
class ClientExchange:
    """One HTTP request the client sent to the router, and what came back."""

    index: int
    request: str
    turn: int
    attempt: int
    request_sha256: str
    request_bytes: int
    turn_state_sent: str | None
    status: int | None
    headers: dict[str, str]
    body_sha256: str | None
    body_bytes: int
    complete: bool
    error: str | None


@attrs.frozen
class ClientReport:
    """Everything the client did (``client/client.json``)."""

    router: str
    ready: bool
    exchanges: tuple[ClientExchange, ...]
    metrics_status: int | None
    error: str | None

    @property
    def answered(self) -> int:
        """Requests the router answered with any status."""
        return sum(1 for exchange in self.exchanges if exchange.status is not None)


@attrs.frozen
class Facts:
    """What the shell observed (``facts.tsv``). Every value is text as the shell wrote it;
    a fact the shell could not establish is absent (None)."""

    image: str | None = None
    image_id: str | None = None
    listen_port: str | None = None
    identity_status: str | None = None
    listeners_status: str | None = None
    client_status: str | None = None
    stop_timeout: str | None = None
    running_before_stop: str | None = None
    stop_status: str | None = None
    stop_seconds: str | None = None
    exit_code: str | None = None
    running_after_stop: str | None = None


def read_facts(path: Path) -> Facts:
    """``facts.tsv`` as :class:`Facts`; an unknown key or a repeated one is refused."""
    values: dict[str, str] = {}
    known = {field.name for field in attrs.fields(Facts)}
    findings = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line:
            continue
        key, sep, value = line.partition("\t")
        if not sep or key not in known or key in values:
            problem = "not KEY<TAB>VALUE" if not sep else f"unknown or repeated key {key!r}"
            findings.append(Finding(CODE, problem, file=str(path), line=number))
            continue
        values[key] = value
    if findings:
        raise ContractError(f"{path}: not the check's facts", findings)
    return Facts(**values)


def _read(path: Path, cls: type[T]) -> T:
    """A JSON file through ``cls``, strictly: not JSON, or not ``cls``, is refused."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ContractError(
            f"{path}: not JSON", [Finding(CODE, f"not JSON: {exc}", file=str(path))]
        ) from exc
    return structure(_CONVERTER, data, cls, source=str(path), code=CODE)


def read_client_report(path: Path) -> ClientReport:
    """``client/client.json``, strictly."""
    return _read(path, ClientReport)


def client_report_json(report: ClientReport) -> dict[str, Any]:
    """The report as the JSON object :func:`read_client_report` reads back."""
    data: dict[str, Any] = _CONVERTER.unstructure(report)
    return data


def read_recorded_request(path: Path) -> RecordedRequest:
    """One recorded request file, strictly."""
    request = _read(path, RecordedRequest)
    reserved = sorted(
        name for name in request.headers if name.lower() in {"authorization", TURN_STATE_HEADER}
    )
    if reserved:
        finding = Finding(
            CODE,
            "the client adds these headers itself; a recording must not carry them",
            file=str(path),
            field=f"$.headers.{reserved[0]}",
        )
        raise ContractError(f"{path}: not a recorded request", [finding])
    return request


def recorded_requests(directory: Path) -> list[tuple[Path, RecordedRequest]]:
    """The recorded requests of a directory, in file-name order (the order they are sent)."""
    return [(path, read_recorded_request(path)) for path in sorted(directory.glob("*.json"))]
