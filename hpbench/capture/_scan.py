"""Streaming checks over the record files.

The record files are cut into chunks of about :data:`CHUNK_BYTES` at line boundaries.
:func:`scan_chunk` checks one chunk on its own (each record against the contract, the
sequence inside the chunk, and every exchange whose client record lies in the chunk) and
returns a small :class:`ChunkResult`. :class:`Merger` folds the results in file order and
finishes what crosses chunk boundaries: the sequence and exchange numbering between
chunks, and records whose exchange began in an earlier chunk ("carried" records).

Chunks are the same whether they are scanned in this process or in worker processes, so
the outcome does not depend on the number of workers. Memory is bounded by the chunk
size, the open exchanges and the finding cap, never by the size of the capture.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from hpbench._convert import structure
from hpbench.capture import codes
from hpbench.capture._check import record_ok
from hpbench.capture._converter import CONVERTER
from hpbench.capture._decode import decode_counted, decode_line
from hpbench.capture._facts import (
    ClientFacts,
    ErrorFacts,
    ExchangeFacts,
    Facts,
    ProviderFacts,
    Shape,
    facts_from_json,
)
from hpbench.capture._totals import Totals, shape_order
from hpbench.capture.models import RECORD_CLASSES, RECORD_SCHEMA_VERSION
from hpbench.errors import ContractError
from hpbench.findings import Finding

CHUNK_BYTES = 32 * 1024 * 1024
"""Target size of a chunk; chunks end at a line boundary."""

FINDING_CAP = 50
"""Findings kept per code; further ones are only counted."""


class FindingSink:
    """Findings with a cap per code, in the order they were found."""

    def __init__(self, cap: int = FINDING_CAP) -> None:
        self.cap = cap
        self.findings: list[Finding] = []
        self.counts: dict[str, int] = {}

    def add(
        self,
        code: str,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        """Keep a finding (or only count it once its code reached the cap)."""
        count = self.counts.get(code, 0) + 1
        self.counts[code] = count
        if count <= self.cap:
            self.findings.append(
                Finding(code=code, message=message, file=file, field=field, line=line)
            )

    def add_finding(self, finding: Finding) -> None:
        """Keep a finding made elsewhere."""
        self.add(
            finding.code, finding.message, file=finding.file, line=finding.line, field=finding.field
        )

    def merge(self, other: FindingSink, *, line_base: int = 0) -> None:
        """Append another sink's findings after this one's, shifting their line numbers."""
        for finding in other.findings:
            shifted = finding
            if finding.line is not None and line_base:
                shifted = attrs.evolve(finding, line=finding.line + line_base)
            self.add_finding(shifted)
        for code, count in other.counts.items():
            extra = count - min(count, other.cap)
            if extra:
                self.counts[code] = self.counts.get(code, 0) + extra

    def suppressed(self) -> dict[str, int]:
        """How many findings of each code were counted but not kept."""
        return {code: n - self.cap for code, n in sorted(self.counts.items()) if n > self.cap}


class ExchangeState:
    """What the checks remember about an open exchange."""

    __slots__ = (
        "client_bytes",
        "client_tokens",
        "delivered_attempt",
        "delivered_output",
        "delivered_output_text",
        "file",
        "last_request_bytes",
        "last_request_tokens",
        "line",
        "next_attempt",
        "role",
        "seen",
        "stream_bytes",
        "thread_id",
        "turn_state_sent",
    )

    def __init__(self, record: ClientFacts, file: str, line: int) -> None:
        self.file = file
        self.line = line
        self.thread_id = record.thread_id
        self.role = record.role
        self.turn_state_sent = record.turn_state_sent
        self.client_bytes = record.request_bytes
        self.client_tokens = record.request_tokens
        self.next_attempt = 0
        self.seen = 0
        self.delivered_attempt: int | None = None
        self.delivered_output = 0
        self.delivered_output_text = 0
        self.last_request_bytes = 0
        self.last_request_tokens: int | None = None
        self.stream_bytes = 0


@attrs.define
class ChunkSpec:
    """A byte range of one record file."""

    path: str
    name: str
    start: int
    end: int
    mode: str | None
    protocol: str | None
    cap: int = FINDING_CAP


@attrs.define
class ChunkResult:
    """What a chunk scan hands to the merger. Line numbers count from the chunk start."""

    name: str
    lines: int = 0
    raw_records: int = 0
    first_seq: tuple[int, int] | None = None  # (seq, line)
    next_seq: int | None = None
    clients: list[tuple[int, int]] = attrs.Factory(list)  # (exchange, line)
    carried: list[tuple[int, Facts]] = attrs.Factory(list)  # (line, facts)
    open: dict[int, ExchangeState] = attrs.Factory(dict)
    totals: Totals = attrs.Factory(Totals)
    sink: FindingSink = attrs.Factory(FindingSink)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        msg = f"duplicate key {duplicate!r}"
        raise ValueError(msg)
    return result


def _shapes_ok(shapes: tuple[Shape, ...]) -> str | None:
    previous: tuple[str, str, str] | None = None
    for item_type, namespace, name, count in shapes:
        if count < 1:
            return f"tool shape {item_type}:{name} has count {count}; a shape counts at least 1"
        order = shape_order((item_type, namespace, name))
        if previous is not None and order <= previous:
            return "tool shapes are not sorted by (item_type, namespace, name) or repeat a shape"
        previous = order
    return None


def _comparison_problem(name: str, value: tuple[Any, ...]) -> str | None:
    client, provider, savings, client_tokens, provider_tokens, savings_tokens = value
    if savings != client - provider:
        return (
            f"{name}.savings_bytes is {savings}, but client - provider bytes is {client - provider}"
        )
    tokens = (client_tokens, provider_tokens, savings_tokens)
    if any(t is None for t in tokens):
        if any(t is not None for t in tokens):
            return f"{name} token figures must be all null or all present"
        return None
    if savings_tokens != client_tokens - provider_tokens:
        return (
            f"{name}.savings_tokens is {savings_tokens}, but client - provider tokens is "
            f"{client_tokens - provider_tokens}"
        )
    return None


def _comparison_ok(value: tuple[Any, ...]) -> bool:
    client, provider, savings, client_tokens, provider_tokens, savings_tokens = value
    if savings != client - provider:
        return False
    if client_tokens is None:
        return provider_tokens is None and savings_tokens is None
    return (
        provider_tokens is not None
        and savings_tokens is not None
        and savings_tokens == client_tokens - provider_tokens
    )


class ChunkScanner:
    """Checks the records of one chunk."""

    def __init__(self, spec: ChunkSpec) -> None:
        self.name = spec.name
        self.mode = spec.mode
        self.protocol = spec.protocol
        self.result = ChunkResult(name=spec.name, sink=FindingSink(spec.cap))
        self.sink = self.result.sink
        self.totals = self.result.totals
        self.open = self.result.open

    # -- lines

    def feed(self, line_no: int, raw: bytes) -> None:
        """Check one raw line (with its newline, if it has one)."""
        if not raw.endswith(b"\n"):
            self.sink.add(
                codes.RECORD_SYNTAX,
                "the last line has no newline: the file was truncated or is still being written",
                file=self.name,
                line=line_no,
            )
            return
        facts = decode_line(raw[:-1])
        if facts is None:
            facts = self._slow(line_no, raw)
            if facts is None:
                return
        self.handle(line_no, facts)

    def _slow(self, line_no: int, raw: bytes) -> Facts | None:
        sink = self.sink
        name = self.name
        if not raw.strip():
            sink.add(codes.RECORD_SYNTAX, "empty line", file=name, line=line_no)
            return None
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # json.loads would let encoded surrogates through; a record is UTF-8 text.
            sink.add(codes.RECORD_SYNTAX, f"not UTF-8: {exc}", file=name, line=line_no)
            return None
        try:
            value = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
        except (ValueError, RecursionError) as exc:
            sink.add(codes.RECORD_SYNTAX, f"not a JSON object: {exc}", file=name, line=line_no)
            return None
        if not isinstance(value, dict):
            sink.add(codes.RECORD_SYNTAX, "a record must be a JSON object", file=name, line=line_no)
            return None
        version = value.get("schema_version")
        if type(version) is not int or version != RECORD_SCHEMA_VERSION:
            shown = "missing" if "schema_version" not in value else json.dumps(version)
            sink.add(
                codes.SCHEMA_VERSION,
                f"schema_version is {shown}; this validator reads schema-{RECORD_SCHEMA_VERSION} "
                "records only",
                file=name,
                line=line_no,
                field="$.schema_version",
            )
            return None
        if record_ok(value):
            return facts_from_json(value)
        kind = value.get("kind")
        cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
        if cls is None:
            allowed = ", ".join(repr(k) for k in RECORD_CLASSES)
            sink.add(
                codes.RECORD_SCHEMA,
                f"kind must be one of {allowed}, got {json.dumps(kind)}",
                file=name,
                line=line_no,
                field="$.kind",
            )
            return None
        try:
            structure(CONVERTER, value, cls, source=name, code=codes.RECORD_SCHEMA)
        except ContractError as exc:
            for finding in exc.findings:
                sink.add_finding(attrs.evolve(finding, line=line_no))
            return None
        sink.add(  # pragma: no cover - the two checks agree (tests/capture/test_check.py)
            codes.RECORD_SCHEMA,
            f"does not match the {cls.__name__} contract",
            file=name,
            line=line_no,
        )
        return None

    # -- records

    def handle(self, line: int, record: Facts) -> None:
        """Check one record's facts (sequence, binding, and its kind's rules)."""
        result = self.result
        seq = record[0]
        expected = result.next_seq
        if expected is None:
            result.first_seq = (seq, line)
        elif seq != expected:
            self.sequence(seq, expected, self.name, line)
        result.next_seq = seq + 1
        cls = type(record)
        at = 3 if cls is ProviderFacts else 2  # where mode and protocol sit
        if self.mode is not None and (record[at] != self.mode or record[at + 1] != self.protocol):
            self.binding(line, str(record[at]), str(record[at + 1]))
        if cls is ProviderFacts:
            self.provider(line, record)  # type: ignore[arg-type]
        elif cls is ExchangeFacts:
            self.exchange(line, record)  # type: ignore[arg-type]
        elif cls is ClientFacts:
            self.client(line, record)  # type: ignore[arg-type]
        else:
            self.error(line, record)  # type: ignore[arg-type]

    def binding(self, line: int, mode: str, protocol: str) -> None:
        """A record whose mode or protocol differs from the snapshot's."""
        self.sink.add(
            codes.BINDING,
            f"record says {mode}/{protocol}, the snapshot says {self.mode}/{self.protocol}",
            file=self.name,
            line=line,
            field="$.mode",
        )

    def sequence(self, seq: int, expected: int, file: str, line: int) -> None:
        """A record out of sequence."""
        what = "repeats or goes back" if seq < expected else "skips"
        self.sink.add(
            codes.SEQUENCE,
            f"seq is {seq}, expected {expected}: the sequence {what} (a record was "
            f"{'duplicated or reordered' if seq < expected else 'deleted or reordered'})",
            file=file,
            line=line,
            field="$.seq",
        )

    def client(self, line: int, record: ClientFacts) -> None:
        """A client record opens its exchange."""
        sink = self.sink
        name = self.name
        self.result.clients.append((record.exchange, line))
        if not record.complete:
            sink.add(
                codes.INCOMPLETE,
                f"client record of exchange {record.exchange} is marked incomplete",
                file=name,
                line=line,
                field="$.complete",
            )
        is_root = record.role == "root"
        if is_root != (record.parent_thread_id is None) or is_root != (
            record.root_thread_id == record.thread_id
        ):
            sink.add(
                codes.RECORD_INVARIANT,
                "a root thread has no parent and is its own root; a child has a parent and "
                "another root",
                file=name,
                line=line,
                field="$.thread",
            )
        if record.exchange in self.open:
            sink.add(
                codes.CLIENT_DUPLICATE,
                f"a second client record for open exchange {record.exchange}",
                file=name,
                line=line,
                field="$.exchange",
            )
            return
        self.open[record.exchange] = ExchangeState(record, name, line)
        self.totals.add_client(record)

    def _provider_invariants(self, line: int, record: ProviderFacts) -> None:
        problem: str | None = None
        field = "$"
        if (record.usage_state == "reported") != (record.usage is not None):
            problem, field = "usage is set exactly when usage_state is 'reported'", "$.usage"
        elif record.usage is not None and (
            (record.usage[2] == "explicit") != (record.usage[1] is not None)
        ):
            problem = "cached_input_tokens is set exactly when cached_input_state is 'explicit'"
            field = "$.usage.cached_input_tokens"
        elif (record.outcome == "connect_error") != (record.http_status is None):
            problem = "http_status is null exactly when the outcome is 'connect_error'"
            field = "$.http_status"
        elif record.outcome == "completed" and not 200 <= (record.http_status or 0) < 300:
            problem, field = "a completed attempt has a 2xx http_status", "$.http_status"
        else:
            problem = _shapes_ok(record.emitted_tools)
            field = "$.emitted_tools"
        if problem is not None:
            self.sink.add(codes.RECORD_INVARIANT, problem, file=self.name, line=line, field=field)

    def provider(self, line: int, record: ProviderFacts, *, carried: bool = False) -> None:
        """A provider record is one attempt of an open exchange."""
        (
            _,
            exchange,
            attempt,
            _,
            _,
            complete,
            _,
            request_bytes,
            request_tokens,
            forwarded,
            status,
            outcome,
            usage_state,
            usage,
            _,
            _,
            emitted,
            output_bytes,
            text_bytes,
            stream_bytes,
            delivered,
        ) = record
        if not carried:
            if (
                (usage_state == "reported") is (usage is None)
                or (usage is not None and (usage[2] == "explicit") is (usage[1] is None))
                or (outcome == "connect_error") is (status is not None)
                or (outcome == "completed" and not 200 <= (status or 0) < 300)
                or (emitted and _shapes_ok(emitted) is not None)
            ):
                self._provider_invariants(line, record)
            if not complete:
                self.sink.add(
                    codes.INCOMPLETE,
                    f"provider record {exchange}/{attempt} is marked incomplete",
                    file=self.name,
                    line=line,
                    field="$.complete",
                )
        state = self.open.get(exchange)
        if state is None:
            self.not_open(line, record)
            return
        if attempt != state.next_attempt:
            self._attempt_number(line, exchange, attempt, state.next_attempt)
        if attempt >= state.next_attempt:
            state.next_attempt = attempt + 1
        state.seen += 1
        if delivered:
            if state.delivered_attempt is not None:
                self.sink.add(
                    codes.ATTEMPT_DELIVERED,
                    f"exchange {exchange} delivered attempt {state.delivered_attempt} "
                    f"already; attempt {attempt} says delivered too",
                    file=self.name,
                    line=line,
                    field="$.delivered",
                )
            else:
                state.delivered_attempt = attempt
                state.delivered_output = output_bytes
                state.delivered_output_text = text_bytes
        if forwarded is not state.turn_state_sent:
            self.sink.add(
                codes.TURN_STATE,
                "the client sent x-codex-turn-state but this attempt did not forward it"
                if state.turn_state_sent
                else "this attempt forwarded an x-codex-turn-state the client did not send",
                file=self.name,
                line=line,
                field="$.turn_state_forwarded",
            )
        state.last_request_bytes = request_bytes
        state.last_request_tokens = request_tokens
        state.stream_bytes += stream_bytes
        self.totals.add_provider(record, state.thread_id, state.role)

    def _attempt_number(self, line: int, exchange: int, attempt: int, expected: int) -> None:
        if attempt < expected:
            self.sink.add(
                codes.ATTEMPT_DUPLICATE,
                f"attempt {attempt} of exchange {exchange} was already recorded",
                file=self.name,
                line=line,
                field="$.attempt",
            )
            return
        self.sink.add(
            codes.ATTEMPT_GAP,
            f"attempt {attempt} of exchange {exchange} follows attempt {expected - 1}: "
            f"attempts {expected}..{attempt - 1} are missing",
            file=self.name,
            line=line,
            field="$.attempt",
        )

    def _exchange_invariants(self, line: int, record: ExchangeFacts) -> None:
        sink = self.sink
        for name, value in (
            ("request", record.request),
            ("output", record.output),
            ("output_text", record.output_text),
        ):
            problem = _comparison_problem(name, value)
            if problem is not None:
                sink.add(
                    codes.RECORD_INVARIANT, problem, file=self.name, line=line, field=f"$.{name}"
                )
        problem = _shapes_ok(record.delivered_tools)
        if problem is not None:
            sink.add(
                codes.RECORD_INVARIANT,
                problem,
                file=self.name,
                line=line,
                field="$.delivered_tools",
            )
        if record.mode == "passthrough" and any(record.hpatch):
            sink.add(
                codes.BINDING,
                "a passthrough router reported Hpatch telemetry",
                file=self.name,
                line=line,
                field="$.hpatch",
            )

    def exchange(self, line: int, record: ExchangeFacts, *, carried: bool = False) -> None:
        """An exchange record closes its exchange and must agree with its records."""
        (
            _,
            exchange,
            mode,
            _,
            complete,
            thread_id,
            attempts,
            delivered_attempt,
            _,
            _,
            request,
            output,
            output_text,
            transport,
            tools,
            hpatch,
            dropped,
        ) = record
        if not carried:
            if (
                not (_comparison_ok(request) and _comparison_ok(output))
                or not _comparison_ok(output_text)
                or (tools and _shapes_ok(tools) is not None)
                or (mode == "passthrough" and any(hpatch))
            ):
                self._exchange_invariants(line, record)
            if not complete or dropped:
                self._exchange_flags(line, exchange, complete=complete, dropped=dropped)
        state = self.open.pop(exchange, None)
        if state is None:
            self.not_open(line, record)
            return
        self.totals.add_exchange(record)
        tokens_known = state.client_tokens is not None and state.last_request_tokens is not None
        said = (
            thread_id,
            attempts,
            delivered_attempt,
            request[0],
            request[1],
            request[3],
            request[4],
            output[1],
            output_text[1],
            transport[0],
        )
        derived = (
            state.thread_id,
            state.seen,
            state.delivered_attempt,
            state.client_bytes,
            state.last_request_bytes,
            state.client_tokens if tokens_known else None,
            state.last_request_tokens if tokens_known else None,
            state.delivered_output,
            state.delivered_output_text,
            state.stream_bytes,
        )
        if said != derived or state.seen == 0:
            self._exchange_mismatch(line, exchange, said, derived)

    def _exchange_flags(self, line: int, exchange: int, *, complete: bool, dropped: bool) -> None:
        if not complete:
            self.sink.add(
                codes.INCOMPLETE,
                f"exchange record {exchange} is marked incomplete",
                file=self.name,
                line=line,
                field="$.complete",
            )
        if dropped:
            self.sink.add(
                codes.DROPPED_DETAIL,
                f"the router dropped detail of exchange {exchange}",
                file=self.name,
                line=line,
                field="$.detail_dropped",
            )

    def _exchange_mismatch(
        self, line: int, exchange: int, said: tuple[Any, ...], derived: tuple[Any, ...]
    ) -> None:
        add = functools.partial(self.sink.add, file=self.name, line=line)
        thread_id, attempts, delivered_attempt = said[:3]
        own_thread, seen, own_delivered = derived[:3]
        if thread_id != own_thread:
            add(
                codes.BOUNDARY,
                f"exchange {exchange} closes thread {thread_id!r} but its client record "
                f"opened it for thread {own_thread!r}",
                field="$.thread_id",
            )
        if seen == 0 or attempts > seen:
            add(
                codes.PROVIDER_MISSING,
                f"exchange {exchange} says {attempts} attempt(s) but {seen} provider "
                "record(s) precede it",
                field="$.attempts",
            )
        elif attempts < seen:
            add(
                codes.RECONCILE_ATTEMPTS,
                f"exchange {exchange} says {attempts} attempt(s) but has {seen} provider records",
                field="$.attempts",
            )
        if delivered_attempt != own_delivered:
            add(
                codes.RECONCILE_ATTEMPTS,
                f"exchange {exchange} says attempt {delivered_attempt} was delivered; its "
                f"provider records say {own_delivered}",
                field="$.delivered_attempt",
            )
        names = (
            "request.client_bytes",
            "request.provider_bytes",
            "request.client_tokens",
            "request.provider_tokens",
            "output.provider_bytes",
            "output_text.provider_bytes",
            "transport.provider_stream_bytes",
        )
        for field, value, expected in zip(names, said[3:], derived[3:], strict=True):
            if value != expected:
                add(
                    codes.RECONCILE_EXCHANGE,
                    f"exchange {exchange}: {field} is {value}, its client and provider records "
                    f"give {expected}",
                    field=f"$.{field}",
                )

    def error(self, line: int, record: ErrorFacts) -> None:
        """A capture error record."""
        self.totals.add_error()
        about = "" if record.exchange is None else f" (exchange {record.exchange})"
        self.sink.add(
            codes.ERROR,
            f"the router recorded a capture error: {record.category}{about}",
            file=self.name,
            line=line,
            field="$.category",
        )

    def not_open(self, line: int, record: ProviderFacts | ExchangeFacts) -> None:
        """A record whose exchange did not begin in this chunk waits for the merger."""
        self.result.carried.append((line, record))


READ_BYTES = 4 * 1024 * 1024
"""Bytes read at a time inside a chunk."""


def _blocks(path: str, start: int, end: int) -> Iterator[bytes]:
    """The byte range as blocks of whole lines; a last piece without newline comes alone."""
    with Path(path).open("rb") as stream:
        stream.seek(start)
        remaining = end - start
        carry = b""
        while remaining > 0:
            data = stream.read(min(READ_BYTES, remaining))
            if not data:
                break
            remaining -= len(data)
            data = carry + data
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            if cut:
                yield data[:cut]
        if carry:
            yield carry


def _decode_block(block: bytes, lines: list[bytes]) -> list[Facts | None]:
    """The facts of each line of ``block`` (None where the general route must decide)."""
    decoded: list[Facts | None] = []
    keys = 0
    for raw in lines:
        counted = decode_counted(raw)
        if counted is None:
            keys += raw.count(b":")  # the general route's lines keep their own colons
            decoded.append(None)
        else:
            keys += counted[1]
            decoded.append(counted[0])
    if block.count(b":") != keys:  # a repeated key, or a colon in a string: line by line
        return [
            None if facts is None else decode_line(raw)
            for facts, raw in zip(decoded, lines, strict=True)
        ]
    return decoded


def scan_chunk(spec: ChunkSpec) -> ChunkResult:
    """Check one chunk on its own.

    Each block of lines is decoded first and handled after: the fast route decodes every
    line it can (see :mod:`hpbench.capture._decode`), and one colon count over the whole
    block proves that none of them repeats a key (each line's keys are implied by its
    facts; the lines left to the general route keep their own colons). When the count
    differs, each line is counted on its own. Then the decoded lines get the same sequence
    and binding checks as :meth:`ChunkScanner.handle`, inlined for speed, and any other
    line goes to :meth:`ChunkScanner.feed`, the general route, which also reports a last
    line without newline.
    """
    scanner = ChunkScanner(spec)
    result = scanner.result
    feed = scanner.feed
    handlers: dict[type[Any], tuple[Any, int]] = {
        ClientFacts: (scanner.client, 2),
        ProviderFacts: (scanner.provider, 3),
        ExchangeFacts: (scanner.exchange, 2),
        ErrorFacts: (scanner.error, 2),
    }
    mode, protocol = spec.mode, spec.protocol
    line_no = 0
    next_seq: int | None = None
    for block in _blocks(spec.path, spec.start, spec.end):
        if not block.endswith(b"\n"):
            result.next_seq = next_seq
            line_no += 1
            feed(line_no, block)
            next_seq = result.next_seq
            continue
        lines = block.split(b"\n")
        lines.pop()  # the empty piece after the final newline
        decoded = _decode_block(block, lines)
        for raw, record in zip(lines, decoded, strict=True):
            line_no += 1
            if record is None:
                result.next_seq = next_seq
                feed(line_no, raw + b"\n")
                next_seq = result.next_seq
                continue
            seq = record[0]
            if next_seq is None:
                result.first_seq = (seq, line_no)
            elif seq != next_seq:
                scanner.sequence(seq, next_seq, spec.name, line_no)
            next_seq = seq + 1
            handler, where = handlers[type(record)]
            if mode is not None and (record[where] != mode or record[where + 1] != protocol):
                scanner.binding(line_no, str(record[where]), str(record[where + 1]))
            handler(line_no, record)
    result.next_seq = next_seq
    result.lines = line_no
    result.raw_records = line_no
    return result


def chunk_specs(
    files: list[tuple[str, str]],
    *,
    mode: str | None,
    protocol: str | None,
    chunk_bytes: int = CHUNK_BYTES,
    cap: int = FINDING_CAP,
) -> list[ChunkSpec]:
    """Cut each ``(path, display name)`` into chunks ending at line boundaries."""
    specs: list[ChunkSpec] = []
    for path, name in files:
        size = Path(path).stat().st_size
        start = 0
        with Path(path).open("rb") as stream:
            while start < size:
                end = start + chunk_bytes
                if end < size:
                    stream.seek(end)
                    stream.readline()
                    end = stream.tell()
                end = min(end, size)
                specs.append(ChunkSpec(path, name, start, end, mode, protocol, cap))
                start = end
    return specs


class Merger(ChunkScanner):
    """Folds chunk results, in file order, into the state of the whole capture."""

    def __init__(self, *, mode: str | None, protocol: str | None, cap: int = FINDING_CAP) -> None:
        super().__init__(ChunkSpec("", "", 0, 0, mode, protocol, cap))
        self.next_exchange = 0
        self.next_seq = 0
        self.raw_records = 0
        self._line_base: dict[str, int] = {}

    def merge(self, chunk: ChunkResult) -> None:
        """Add the next chunk's result."""
        name = chunk.name
        base = self._line_base.get(name, 0)
        self._line_base[name] = base + chunk.lines
        self.raw_records += chunk.raw_records
        self.name = name
        if chunk.first_seq is not None:
            seq, line = chunk.first_seq
            if seq != self.next_seq:
                self.sequence(seq, self.next_seq, name, base + line)
        if chunk.next_seq is not None:
            self.next_seq = chunk.next_seq
        for exchange, line in chunk.clients:
            self._number(exchange, name, base + line)
        for line, record in chunk.carried:
            if isinstance(record, ProviderFacts):
                self.provider(base + line, record, carried=True)
            else:
                self.exchange(base + line, record, carried=True)  # type: ignore[arg-type]
        for exchange, state in chunk.open.items():
            if exchange not in self.open:
                state.line += base
                self.open[exchange] = state
        self.sink.merge(chunk.sink, line_base=base)
        self.totals.merge(chunk.totals)

    def _number(self, exchange: int, name: str, line: int) -> None:
        expected = self.next_exchange
        if exchange == expected:
            self.next_exchange = expected + 1
        elif exchange < expected:
            self.sink.add(
                codes.CLIENT_DUPLICATE,
                f"exchange {exchange} already had its client record (next expected {expected})",
                file=name,
                line=line,
                field="$.exchange",
            )
        else:
            self.sink.add(
                codes.EXCHANGE_GAP,
                f"client record of exchange {exchange} follows exchange {expected - 1}: "
                f"client records of exchanges {expected}..{exchange - 1} are missing",
                file=name,
                line=line,
                field="$.exchange",
            )
            self.next_exchange = exchange + 1

    def not_open(self, line: int, record: ProviderFacts | ExchangeFacts) -> None:
        """With the whole capture before it, a record of a closed or unknown exchange is a
        boundary mismatch."""
        if record.exchange >= self.next_exchange:
            where = "before its exchange's client record"
        else:
            where = "after its exchange was closed (or its client record is missing)"
        kind = "provider" if isinstance(record, ProviderFacts) else "exchange"
        self.sink.add(
            codes.BOUNDARY,
            f"{kind} record of exchange {record.exchange} comes {where}",
            file=self.name,
            line=line,
            field="$.exchange",
        )

    def finish(self) -> None:
        """Exchanges still open at the end never got their exchange record."""
        for exchange in sorted(self.open):
            state = self.open[exchange]
            self.sink.add(
                codes.INCOMPLETE,
                f"exchange {exchange} has a client record but no exchange record "
                "(the capture ends before the exchange was closed)",
                file=state.file,
                line=state.line,
                field="$.exchange",
            )
