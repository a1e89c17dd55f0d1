"""Judge the router conformance check's evidence, item by item.

Each item of ``docs/router-contract.md`` ("Conformance check") is one function of the
run directory's evidence (:mod:`hpbench.routercheck.evidence`) that returns an
:class:`ItemVerdict`: ok, or FAIL with the findings that name what broke (file and
field). Missing evidence is a FAIL of every item that needs it, never a pass.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench import provenance
from hpbench.capture import codes as capture_codes
from hpbench.capture.validator import load_snapshot, validate_capture
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.routercheck import evidence
from hpbench.routercheck.evidence import ClientExchange, ClientReport, Facts

EXPECTED_MODE = "passthrough"
EXPECTED_PROTOCOL = "native"
DOCKER_DNS_ADDRESS = "127.0.0.11"
"""Docker's embedded DNS server listens inside every container on a user-defined network,
at this address: it is the engine's, not the router's."""
TCP_LISTEN = "0A"
KILLED = 137
BAD_TURN_STATES = ("changed", "missing", "unsolicited")


@attrs.frozen
class ItemVerdict:
    """One item's verdict: ``ok`` with what held, or the findings that broke it."""

    item: str
    title: str
    ok: bool
    detail: str
    findings: tuple[Finding, ...] = ()

    def line(self) -> str:
        """The item's one line: ``ok`` or ``FAIL``, the item, and what held or why not."""
        status = "ok" if self.ok else "FAIL"
        why = self.detail if self.ok else "; ".join(str(f) for f in self.findings[:2])
        more = len(self.findings) - 2
        if not self.ok and more > 0:
            why += f"; and {more} more"
        return f"{status:<4}  {self.item:<12} {why}"

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object."""
        return {
            "item": self.item,
            "title": self.title,
            "ok": self.ok,
            "detail": self.detail,
            "findings": [finding.to_json() for finding in self.findings],
        }


class _Item:
    """Collects one item's findings."""

    def __init__(self, run_dir: Path, item: str) -> None:
        self.run_dir = run_dir
        self.code = f"router_check.{item}"
        self.findings: list[Finding] = []

    def fail(self, message: str, *, file: str | None = None, field: str | None = None) -> None:
        path = None if file is None else str(self.run_dir / file)
        self.findings.append(Finding(self.code, message, file=path, field=field))


@attrs.frozen
class Evidence:
    """The run directory's evidence, read once; what could not be read is None, and why
    is in ``problems`` (file name to message)."""

    run_dir: Path
    facts: Facts | None
    client: ClientReport | None
    provider: tuple[dict[str, Any], ...] | None
    credential: str | None
    requests: tuple[str, ...] | None
    problems: dict[str, str]

    def exchanges(self) -> tuple[ClientExchange, ...]:
        """The client's exchanges (none without a client report)."""
        return () if self.client is None else self.client.exchanges


def read_evidence(run_dir: Path) -> Evidence:
    """Read what every item shares; a file that is missing or malformed is a problem."""
    problems: dict[str, str] = {}
    facts = client = provider = credential = requests = None
    try:
        facts = evidence.read_facts(run_dir / evidence.FACTS)
    except (OSError, ContractError) as exc:
        problems[evidence.FACTS] = _why(exc)
    try:
        client = evidence.read_client_report(run_dir / evidence.CLIENT_REPORT)
    except (OSError, ContractError) as exc:
        problems[evidence.CLIENT_REPORT] = _why(exc)
    try:
        provider = tuple(_read_jsonl(run_dir / evidence.PROVIDER_RECORDS))
    except (OSError, ValueError) as exc:
        problems[evidence.PROVIDER_RECORDS] = _why(exc)
    try:
        credential = (run_dir / evidence.CREDENTIAL).read_text(encoding="utf-8").strip() or None
    except OSError as exc:
        problems[evidence.CREDENTIAL] = _why(exc)
    try:
        requests = tuple(
            request.name for _, request in evidence.recorded_requests(run_dir / evidence.REQUESTS)
        )
    except (OSError, ContractError) as exc:
        problems[evidence.REQUESTS] = _why(exc)
    return Evidence(run_dir, facts, client, provider, credential, requests, problems)


def _why(exc: BaseException) -> str:
    if isinstance(exc, ContractError) and exc.findings:
        return str(exc.findings[0])
    if isinstance(exc, FileNotFoundError):
        return "not collected"
    return str(exc)


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            value = json.loads(line)
            if not isinstance(value, dict):
                msg = "a provider record is not a JSON object"
                raise ValueError(msg)
            yield value


def _missing(item: _Item, ev: Evidence, *names: str) -> bool:
    """FAIL the item for each evidence file it needs that could not be read."""
    missing = False
    for name in names:
        if name in ev.problems:
            item.fail(f"evidence unusable: {ev.problems[name]}", file=name)
            missing = True
    return missing


def _fact_int(value: str | None) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


# ------------------------------------------------------------------------ 1 identity


def judge_identity(ev: Evidence) -> ItemVerdict:
    """``IMAGE --version`` under ``--network none``: exit 0, one JSON line, name and version."""
    item = _Item(ev.run_dir, "identity")
    detail = ""
    _missing(item, ev, evidence.FACTS)
    if ev.facts is not None:
        status = _fact_int(ev.facts.identity_status)
        if status != 0:
            item.fail(
                f"`IMAGE --version` exited {ev.facts.identity_status} (it must exit 0)",
                file=evidence.IDENTITY_OUT,
            )
    try:
        text = (ev.run_dir / evidence.IDENTITY_OUT).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        item.fail(f"no output of `IMAGE --version`: {_why(exc)}", file=evidence.IDENTITY_OUT)
        text = None
    if text is not None:
        lines = text.splitlines()
        if len(lines) != 1 or not text.endswith("\n"):
            item.fail(
                f"`IMAGE --version` printed {len(lines)} line(s); it must print exactly one "
                "line of JSON",
                file=evidence.IDENTITY_OUT,
            )
        else:
            identity = _identity(item, lines[0])
            if identity is not None:
                detail = f"{identity['name']} {identity['version']}"
    return _verdict("identity", "identity (`IMAGE --version`)", item, detail)


def _identity(item: _Item, line: str) -> dict[str, str] | None:
    # The one rule for the identity (hpbench.provenance): what passes here is what a run
    # accepts before it starts, and what fails here stops a run.
    identity, why = provenance.identity(line)
    if identity is None:
        item.fail(f"{why}: {line[:80]!r}", file=evidence.IDENTITY_OUT, field="$")
    return identity


# ------------------------------------------------------------------------ 2 one listener


@attrs.frozen
class Listener:
    """A listening TCP socket of the router's network namespace."""

    address: str
    port: int

    def __str__(self) -> str:
        if ":" in self.address:
            return f"[{self.address}]:{self.port}"
        return f"{self.address}:{self.port}"


def _address(hex_address: str) -> str:
    """A ``/proc/net/tcp{,6}`` address (host byte order, per 32-bit word) as text."""
    raw = bytes.fromhex(hex_address)
    words = [raw[i : i + 4][::-1] for i in range(0, len(raw), 4)]
    joined = b"".join(words)
    if len(joined) == 4:
        return str(ipaddress.IPv4Address(joined))
    address = ipaddress.IPv6Address(joined)
    mapped = address.ipv4_mapped
    return str(address) if mapped is None else f"::ffff:{mapped}"


def parse_listeners(text: str) -> tuple[list[Listener], list[str]]:
    """The LISTEN sockets in ``listeners.out`` and the tables it holds (``# FILE`` lines)."""
    listeners: list[Listener] = []
    tables: list[str] = []
    for line in text.splitlines():
        if line.startswith("# "):
            tables.append(line[2:].strip())
            continue
        fields = line.split()
        if len(fields) < 4 or fields[0] == "sl" or ":" not in fields[1]:
            continue
        local, state = fields[1], fields[3]
        if state != TCP_LISTEN:
            continue
        host, _, port = local.rpartition(":")
        listeners.append(Listener(_address(host), int(port, 16)))
    return listeners, tables


def judge_listener(ev: Evidence) -> ItemVerdict:
    """Only the ``--listen`` port listens (Docker's embedded DNS aside)."""
    item = _Item(ev.run_dir, "listener")
    detail = ""
    _missing(item, ev, evidence.FACTS)
    if ev.facts is None:
        return _verdict("listener", "one listener", item, detail)
    port = _fact_int(ev.facts.listen_port)
    if _fact_int(ev.facts.listeners_status) != 0:
        item.fail(
            "the router's sockets could not be read from a container in its network "
            f"namespace (status {ev.facts.listeners_status})",
            file=evidence.LISTENERS_OUT,
        )
        return _verdict("listener", "one listener", item, detail)
    try:
        text = (ev.run_dir / evidence.LISTENERS_OUT).read_text(encoding="utf-8")
    except OSError as exc:
        item.fail(f"evidence unusable: {_why(exc)}", file=evidence.LISTENERS_OUT)
        return _verdict("listener", "one listener", item, detail)
    listeners, tables = parse_listeners(text)
    if "/proc/net/tcp" not in tables:
        item.fail("/proc/net/tcp was not read", file=evidence.LISTENERS_OUT)
    own = [lst for lst in listeners if lst.address != DOCKER_DNS_ADDRESS]
    if port is None or not any(lst.port == port for lst in own):
        item.fail(
            f"nothing listens on the --listen port {ev.facts.listen_port}",
            file=evidence.LISTENERS_OUT,
        )
    others = sorted({str(lst) for lst in own if lst.port != port})
    if others:
        item.fail(
            f"also listening on {', '.join(others)}: the router may open no port but "
            f"--listen's ({port})",
            file=evidence.LISTENERS_OUT,
        )
    detail = f"only port {port} listens"
    return _verdict("listener", "one listener", item, detail)


# ------------------------------------------------------------------------ matching


def match_provider(
    exchanges: Sequence[ClientExchange], records: Sequence[dict[str, Any]]
) -> dict[int, dict[str, Any]]:
    """Each client exchange's provider record (by exchange index): the first record after
    the previous match whose request body is the one the client sent and whose status the
    client received. Records left over are the router's own retries."""
    matched: dict[int, dict[str, Any]] = {}
    used: set[int] = set()
    last = -1
    for exchange in exchanges:
        if exchange.status is None:
            continue
        for position, record in enumerate(records):
            if position <= last or position in used:
                continue
            request = record.get("request")
            response = record.get("response")
            if not isinstance(request, dict) or not isinstance(response, dict):
                continue
            if (
                request.get("sha256") == exchange.request_sha256
                and response.get("status") == exchange.status
            ):
                matched[exchange.index] = record
                used.add(position)
                last = position
                break
    return matched


# ------------------------------------------------------------------------ 3 relay


def judge_relay(ev: Evidence) -> ItemVerdict:
    """The recorded requests reach the provider unchanged, with the credential, and the
    provider's stream comes back byte for byte."""
    item = _Item(ev.run_dir, "relay")
    title = "Responses relayed"
    _missing(item, ev, evidence.CLIENT_REPORT, evidence.PROVIDER_RECORDS, evidence.REQUESTS)
    if ev.client is None or ev.provider is None or ev.requests is None:
        return _verdict("relay", title, item, "")
    if ev.client.error is not None:
        item.fail(f"the client stopped: {ev.client.error}", file=evidence.CLIENT_REPORT)
    matched = match_provider(ev.client.exchanges, ev.provider)
    delivered: set[str] = set()
    streams = 0
    for exchange in ev.client.exchanges:
        where = f"$.exchanges[{exchange.index}]"
        name = f"request {exchange.request} (attempt {exchange.attempt})"
        if exchange.status is None:
            item.fail(
                f"{name}: no answer ({exchange.error})", file=evidence.CLIENT_REPORT, field=where
            )
            continue
        record = matched.get(exchange.index)
        if record is None:
            item.fail(
                f"{name}: the client got {exchange.status}, but the provider answered no "
                "request with this body and status (the body was changed on the way, or the "
                "answer did not come from the provider)",
                file=evidence.CLIENT_REPORT,
                field=f"{where}.request_sha256",
            )
            continue
        headers = record.get("headers")
        kind = headers.get("authorization") if isinstance(headers, dict) else None
        if kind != "bearer":
            item.fail(
                f"{name}: the provider received authorization {kind!r}, not the client's "
                "Bearer credential",
                file=evidence.PROVIDER_RECORDS,
                field=f"$[seq={record.get('seq')}].headers.authorization",
            )
        if exchange.status != 200:
            continue
        response = record.get("response", {})
        if response.get("body_sha256") != exchange.body_sha256 or not exchange.complete:
            item.fail(
                f"{name}: the stream the client received ({exchange.body_bytes} bytes"
                f"{'' if exchange.complete else ', cut short'}) is not the provider's, "
                "byte for byte",
                file=evidence.CLIENT_REPORT,
                field=f"{where}.body_sha256",
            )
            continue
        content_type = exchange.headers.get("content-type", "")
        if "text/event-stream" not in content_type.lower():
            item.fail(
                f"{name}: content-type {content_type!r}, not the provider's text/event-stream",
                file=evidence.CLIENT_REPORT,
                field=f"{where}.headers.content-type",
            )
            continue
        delivered.add(exchange.request)
        streams += 1
    for name in ev.requests:
        if name not in delivered and not item.findings:
            item.fail(f"request {name} never got a whole 200 stream", file=evidence.CLIENT_REPORT)
    detail = f"{streams} streams byte for byte from {len(ev.requests)} recorded requests"
    return _verdict("relay", title, item, detail)


# ------------------------------------------------------------------------ 4 metrics


def judge_metrics(ev: Evidence) -> ItemVerdict:
    """``GET /api/metrics`` answers 200 with a valid ``hpatch.capture.metrics.v4`` snapshot
    of this router's configuration and traffic."""
    item = _Item(ev.run_dir, "metrics")
    title = "/api/metrics snapshot"
    _missing(item, ev, evidence.CLIENT_REPORT)
    if ev.client is None:
        return _verdict("metrics", title, item, "")
    if ev.client.metrics_status != 200:
        item.fail(
            "GET /api/metrics got no answer (it must answer 200)"
            if ev.client.metrics_status is None
            else f"GET /api/metrics answered {ev.client.metrics_status} (it must answer 200)",
            file=evidence.CLIENT_REPORT,
            field="$.metrics_status",
        )
        return _verdict("metrics", title, item, "")
    try:
        snapshot = load_snapshot(ev.run_dir / evidence.METRICS)
    except ContractError as exc:
        item.findings.extend(exc.findings)
        return _verdict("metrics", title, item, "")
    if snapshot.router.mode.value != EXPECTED_MODE:
        item.fail(
            f"the router ran with --mode {EXPECTED_MODE}; the snapshot says "
            f"{snapshot.router.mode.value}",
            file=evidence.METRICS,
            field="$.router.mode",
        )
    if snapshot.router.protocol.value != EXPECTED_PROTOCOL:
        item.fail(
            f"the router ran with --protocol {EXPECTED_PROTOCOL}; the snapshot says "
            f"{snapshot.router.protocol.value}",
            file=evidence.METRICS,
            field="$.router.protocol",
        )
    sent = ev.client.answered
    if snapshot.requests.logical_requests != sent:
        item.fail(
            f"logical_requests is {snapshot.requests.logical_requests}; the client sent "
            f"{sent} requests that were answered",
            file=evidence.METRICS,
            field="$.requests.logical_requests",
        )
    detail = (
        f"{snapshot.requests.logical_requests} logical requests, "
        f"{snapshot.requests.provider_attempts} attempts, {EXPECTED_MODE}/{EXPECTED_PROTOCOL}"
    )
    return _verdict("metrics", title, item, detail)


# ------------------------------------------------------------------------ 5 capture

_SNAPSHOT_CODES = frozenset(
    {
        capture_codes.SNAPSHOT_MISSING,
        capture_codes.SNAPSHOT_SYNTAX,
        capture_codes.SNAPSHOT_SCHEMA,
        capture_codes.SCHEMA_VERSION,
        capture_codes.BINDING,
    }
)


def judge_capture(ev: Evidence) -> ItemVerdict:
    """The records under ``--capture-output`` validate (``hpbench capture validate``, the
    control arm's binding) against the snapshot; the snapshot's own faults are item 4's."""
    item = _Item(ev.run_dir, "capture")
    snapshot = ev.run_dir / evidence.METRICS
    report = validate_capture(ev.run_dir / evidence.CAPTURE, snapshot, arm="control")
    for finding in report.findings:
        if finding.file == str(snapshot) and finding.code in _SNAPSHOT_CODES:
            continue
        item.findings.append(finding)
    detail = f"{report.raw_records} schema-6 records valid and reconciled with the snapshot"
    return _verdict("capture", "capture records", item, detail)


# ------------------------------------------------------------------------ 6 turn state


def judge_turn_state(ev: Evidence) -> ItemVerdict:
    """``x-codex-turn-state`` relayed unchanged both ways, never synthesized."""
    item = _Item(ev.run_dir, "turn-state")
    title = "x-codex-turn-state"
    _missing(item, ev, evidence.CLIENT_REPORT, evidence.PROVIDER_RECORDS)
    if ev.client is None or ev.provider is None:
        return _verdict("turn-state", title, item, "")
    unchanged = _provider_turn_states(item, ev.provider)
    matched = match_provider(ev.client.exchanges, ev.provider)
    per_turn: dict[int, set[str]] = {}
    for exchange in ev.client.exchanges:
        record = matched.get(exchange.index)
        if record is None:
            continue
        state = record.get("turn_state")
        issued = isinstance(state, dict) and state.get("issued") is True
        received = exchange.headers.get(evidence.TURN_STATE_HEADER)
        where = f"$.exchanges[{exchange.index}].headers.{evidence.TURN_STATE_HEADER}"
        name = f"request {exchange.request} (attempt {exchange.attempt})"
        if issued and received is None:
            item.fail(
                f"{name}: the provider's response carried x-codex-turn-state; the client "
                "received none",
                file=evidence.CLIENT_REPORT,
                field=where,
            )
        elif not issued and received is not None:
            item.fail(
                f"{name}: the client received x-codex-turn-state, but the provider sent "
                "none (made up by the router)",
                file=evidence.CLIENT_REPORT,
                field=where,
            )
        if received is not None:
            per_turn.setdefault(exchange.turn, set()).add(received)
    for turn, values in sorted(per_turn.items()):
        if len(values) > 1:
            item.fail(
                f"turn {turn}: the client received {len(values)} different x-codex-turn-state "
                "values; the provider sends one per turn",
                file=evidence.CLIENT_REPORT,
            )
    if unchanged == 0 and not item.findings:
        item.fail(
            "no request carried the turn's x-codex-turn-state back to the provider",
            file=evidence.PROVIDER_RECORDS,
        )
    detail = f"{unchanged} requests carried the turn's value unchanged; none made up"
    return _verdict("turn-state", title, item, detail)


def _provider_turn_states(item: _Item, records: Sequence[dict[str, Any]]) -> int:
    """FAIL each provider request whose turn state was not as issued; the number carried
    unchanged."""
    unchanged = 0
    for record in records:
        state = record.get("turn_state")
        if not isinstance(state, dict):
            continue
        status = state.get("status")
        if status == "unchanged":
            unchanged += 1
        if status in BAD_TURN_STATES:
            item.fail(
                f"provider request {record.get('seq')} (step {record.get('step')}, attempt "
                f"{record.get('attempt')}): x-codex-turn-state {status} "
                f"({_TURN_STATE_MEANING[str(status)]})",
                file=evidence.PROVIDER_RECORDS,
                field=f"$[seq={record.get('seq')}].turn_state.status",
            )
    return unchanged


_TURN_STATE_MEANING = {
    "changed": "another value than the turn's reached the provider",
    "missing": "the turn's value did not reach the provider",
    "unsolicited": "a value reached the provider before any was issued in the turn",
}


# ------------------------------------------------------------------------ 7 credentials


def judge_credentials(ev: Evidence) -> ItemVerdict:
    """The client's fake credential appears in no file of the capture and not in the
    metrics snapshot."""
    item = _Item(ev.run_dir, "credentials")
    title = "no credentials"
    if _missing(item, ev, evidence.CREDENTIAL) or ev.credential is None:
        if ev.credential is None and evidence.CREDENTIAL not in ev.problems:
            item.fail("the check's credential is empty", file=evidence.CREDENTIAL)
        return _verdict("credentials", title, item, "")
    needle = ev.credential.encode()
    searched = 0
    for path in _collected(ev.run_dir):
        searched += 1
        data = path.read_bytes()
        if needle in data:
            line = data[: data.index(needle)].count(b"\n") + 1
            item.findings.append(
                Finding(
                    item.code,
                    "holds the Authorization header's value (the client's Bearer credential)",
                    file=str(path),
                    line=line,
                )
            )
    detail = f"the Bearer credential is in none of {searched} collected files"
    return _verdict("credentials", title, item, detail)


def _collected(run_dir: Path) -> Iterator[Path]:
    """Every file the router wrote or served: the capture directory and the snapshot."""
    capture = run_dir / evidence.CAPTURE
    if capture.is_dir():
        yield from sorted(path for path in capture.rglob("*") if path.is_file())
    metrics = run_dir / evidence.METRICS
    if metrics.is_file():
        yield metrics


# ------------------------------------------------------------------------ 8 shutdown


def judge_shutdown(ev: Evidence) -> ItemVerdict:
    """``docker stop`` (SIGTERM, then a kill after the timeout) ends the router in time,
    and the capture afterwards closes every exchange the client made."""
    item = _Item(ev.run_dir, "shutdown")
    title = "shutdown on SIGTERM"
    _missing(item, ev, evidence.FACTS, evidence.CLIENT_REPORT)
    if ev.facts is None or ev.client is None:
        return _verdict("shutdown", title, item, "")
    facts = ev.facts
    timeout = _fact_int(facts.stop_timeout)
    try:
        seconds = float(facts.stop_seconds) if facts.stop_seconds is not None else None
    except ValueError:
        seconds = None
    exit_code = _fact_int(facts.exit_code)
    if facts.running_before_stop != "true":
        item.fail(
            f"the router was not running when the check stopped it (exit code "
            f"{facts.exit_code}): it must run until SIGTERM",
            file=evidence.FACTS,
            field="running_before_stop",
        )
    elif _fact_int(facts.stop_status) != 0 or facts.running_after_stop != "false":
        item.fail(
            f"`docker stop` did not stop it (status {facts.stop_status}, running afterwards: "
            f"{facts.running_after_stop})",
            file=evidence.FACTS,
            field="stop_status",
        )
    elif exit_code == KILLED or seconds is None or timeout is None or seconds >= timeout:
        item.fail(
            f"it did not exit within {facts.stop_timeout} s of SIGTERM (exit code "
            f"{facts.exit_code} after {facts.stop_seconds} s: killed)",
            file=evidence.FACTS,
            field="exit_code",
        )
    answered = ev.client.answered
    closed, opened = _captured_exchanges(ev.run_dir / evidence.CAPTURE)
    if closed < answered or opened < answered:
        item.fail(
            f"after the stop the capture opens {opened} and closes {closed} exchanges; the "
            f"client made {answered}",
            file=evidence.CAPTURE,
        )
    detail = (
        f"exited {facts.exit_code} {facts.stop_seconds} s after SIGTERM; the capture closes "
        f"all {answered} exchanges"
    )
    return _verdict("shutdown", title, item, detail)


def _captured_exchanges(capture: Path) -> tuple[int, int]:
    """Distinct exchanges with an ``exchange`` (closing) and a ``client`` (opening) record,
    read leniently: the records' validity is item 5's."""
    closed: set[object] = set()
    opened: set[object] = set()
    if not capture.is_dir():
        return 0, 0
    for path in sorted(capture.glob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            number = record.get("exchange")
            if record.get("kind") == "exchange":
                closed.add(number)
            elif record.get("kind") == "client":
                opened.add(number)
    return len(closed), len(opened)


# ------------------------------------------------------------------------ all


def _verdict(item: str, title: str, collected: _Item, detail: str) -> ItemVerdict:
    """The verdict, its findings naming files relative to the run directory."""
    findings = tuple(_relative(finding, collected.run_dir) for finding in collected.findings)
    return ItemVerdict(item, title, not findings, detail, findings)


def _relative(finding: Finding, run_dir: Path) -> Finding:
    if finding.file is None:
        return finding
    path = Path(finding.file)
    if not path.is_relative_to(run_dir):
        return finding
    return attrs.evolve(finding, file=str(path.relative_to(run_dir)))


JUDGES: tuple[Callable[[Evidence], ItemVerdict], ...] = (
    judge_identity,
    judge_listener,
    judge_relay,
    judge_metrics,
    judge_capture,
    judge_turn_state,
    judge_credentials,
    judge_shutdown,
)
ITEMS = (
    "identity",
    "listener",
    "relay",
    "metrics",
    "capture",
    "turn-state",
    "credentials",
    "shutdown",
)


def judge(run_dir: Path) -> list[ItemVerdict]:
    """Every item's verdict, in the contract's order."""
    ev = read_evidence(run_dir)
    return [one(ev) for one in JUDGES]
