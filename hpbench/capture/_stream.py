"""One streaming pass over the record files: every rule that spans records (R1-R7, R13-R15).

:class:`RecordStream` reads the files in order, one line at a time: it decodes the line
(:mod:`~hpbench.capture._decode`), checks the record's own invariants
(:mod:`~hpbench.capture._rules`) and its place among the others, and adds it to the
snapshot totals (:mod:`~hpbench.capture._totals`). Memory is bounded by the exchanges
open at a time and the finding cap. Records are structs that mirror the attrs classes, so
they are told apart by ``kind``, never ``isinstance``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hpbench.capture import codes
from hpbench.capture._decode import decode_canonical, decode_general
from hpbench.capture._rules import Problem, exchange_problems, provider_problem, thread_role_problem
from hpbench.capture._sink import FindingSink
from hpbench.capture._totals import ThreadSum, Totals
from hpbench.capture.models import (
    ClientRecord,
    ErrorRecord,
    ExchangeRecord,
    Protocol,
    ProviderRecord,
    Record,
    RouterMode,
)


class ExchangeState:
    """What the stream remembers about an open exchange: its client record, where that
    was, and what its provider records so far add up to."""

    __slots__ = (
        "client",
        "delivered",
        "file",
        "last",
        "line",
        "next_attempt",
        "seen",
        "stream_bytes",
        "thread",
    )

    def __init__(self, client: ClientRecord, thread: ThreadSum, file: str, line: int) -> None:
        self.client = client
        self.thread = thread
        self.file = file
        self.line = line
        self.next_attempt = 0
        self.seen = 0
        self.delivered: ProviderRecord | None = None
        self.last: ProviderRecord | None = None
        self.stream_bytes = 0


class RecordStream:
    """Checks the records of a capture, in file order, against the snapshot's binding."""

    def __init__(
        self,
        sink: FindingSink,
        *,
        mode: RouterMode,
        protocol: Protocol,
        watch: Callable[[Record, str, int], None] | None = None,
    ) -> None:
        self.sink = sink
        self.watch = watch
        self.mode = mode
        self.protocol = protocol
        self.totals = Totals()
        self.open: dict[int, ExchangeState] = {}
        self.raw_records = 0
        self.next_seq = 0
        self.next_exchange = 0
        self.file = ""

    # -- lines

    def read(self, path: Path) -> None:
        """Check every line of one record file (read after the files before it)."""
        name = self.file = str(path)
        sink = self.sink
        mode, protocol = self.mode, self.protocol
        provider, exchange, client = self.provider, self.exchange, self.client
        watch = self.watch
        line = 0
        with path.open("rb") as stream:
            for line, raw in enumerate(stream, start=1):
                if raw[-1:] != b"\n":
                    sink.add(
                        codes.RECORD_SYNTAX,
                        "the last line has no newline: the file was truncated or is still "
                        "being written",
                        file=name,
                        line=line,
                    )
                    continue
                body = raw[:-1]
                record = decode_canonical(body)
                if record is None:
                    record = decode_general(body, sink, file=name, line=line)
                    if record is None:
                        continue
                seq = record.seq
                if seq != self.next_seq:
                    self._sequence(seq, line)
                self.next_seq = seq + 1
                if record.mode is not mode or record.protocol is not protocol:
                    self._binding(record, line)
                if record.kind == "provider":
                    provider(record, line)
                elif record.kind == "exchange":
                    exchange(record, line)
                elif record.kind == "client":
                    client(record, line)
                else:
                    self.error(record, line)
                if watch is not None:
                    watch(record, name, line)
        self.raw_records += line

    def _add(self, code: str, message: str, line: int | None, field: str | None = None) -> None:
        self.sink.add(code, message, file=self.file, line=line, field=field)

    def _sequence(self, seq: int, line: int) -> None:
        """R1: ``seq`` counts 0, 1, 2, ... over all files."""
        expected = self.next_seq
        what = "repeats or goes back" if seq < expected else "skips"
        cause = "duplicated or reordered" if seq < expected else "deleted or reordered"
        self._add(
            codes.SEQUENCE,
            f"seq is {seq}, expected {expected}: the sequence {what} (a record was {cause})",
            line,
            "$.seq",
        )

    def _binding(self, record: Record, line: int) -> None:
        """R13: every record carries the snapshot's mode and protocol."""
        self._add(
            codes.BINDING,
            f"record says {record.mode.value}/{record.protocol.value}, the snapshot says "
            f"{self.mode.value}/{self.protocol.value}",
            line,
            "$.mode",
        )

    def _report(self, problem: Problem, line: int) -> None:
        self.sink.add(problem.code, problem.message, file=self.file, line=line, field=problem.field)

    # -- records

    def client(self, record: ClientRecord, line: int) -> None:
        """A client record opens its exchange (R2, R12, R15)."""
        exchange = record.exchange
        if exchange != self.next_exchange:
            self._exchange_number(exchange, line)
        else:
            self.next_exchange = exchange + 1
        if not record.complete:
            self._add(
                codes.INCOMPLETE,
                f"client record of exchange {exchange} is marked incomplete",
                line,
                "$.complete",
            )
        problem = thread_role_problem(record)
        if problem is not None:
            self._report(problem, line)
        if exchange in self.open:
            self._add(
                codes.CLIENT_DUPLICATE,
                f"a second client record for open exchange {exchange}",
                line,
                "$.exchange",
            )
            return
        self.open[exchange] = ExchangeState(record, self.totals.add_client(record), self.file, line)

    def _exchange_number(self, exchange: int, line: int) -> None:
        """R2: client records number their exchanges 0, 1, 2, ..."""
        expected = self.next_exchange
        if exchange < expected:
            self._add(
                codes.CLIENT_DUPLICATE,
                f"exchange {exchange} already had its client record (next expected {expected})",
                line,
                "$.exchange",
            )
            return
        self._add(
            codes.EXCHANGE_GAP,
            f"client record of exchange {exchange} follows exchange {expected - 1}: "
            f"client records of exchanges {expected}..{exchange - 1} are missing",
            line,
            "$.exchange",
        )
        self.next_exchange = exchange + 1

    def provider(self, record: ProviderRecord, line: int) -> None:
        """A provider record is one attempt of an open exchange (R3, R4, R6, R8, R9, R11,
        R14, R15)."""
        problem = provider_problem(record)
        if problem is not None:
            self._report(problem, line)
        exchange, attempt = record.exchange, record.attempt
        if not record.complete:
            self._add(
                codes.INCOMPLETE,
                f"provider record {exchange}/{attempt} is marked incomplete",
                line,
                "$.complete",
            )
        state = self.open.get(exchange)
        if state is None:
            self._not_open("provider", exchange, line)
            return
        if attempt != state.next_attempt:
            self._attempt_number(exchange, attempt, state.next_attempt, line)
        if attempt >= state.next_attempt:
            state.next_attempt = attempt + 1
        state.seen += 1
        if record.delivered:
            if state.delivered is not None:
                self._add(
                    codes.ATTEMPT_DELIVERED,
                    f"exchange {exchange} delivered attempt {state.delivered.attempt} "
                    f"already; attempt {attempt} says delivered too",
                    line,
                    "$.delivered",
                )
            else:
                state.delivered = record
        client = state.client
        if record.turn_state_forwarded is not client.turn_state_sent:
            self._add(
                codes.TURN_STATE,
                "the client sent x-codex-turn-state but this attempt did not forward it"
                if client.turn_state_sent
                else "this attempt forwarded an x-codex-turn-state the client did not send",
                line,
                "$.turn_state_forwarded",
            )
        state.last = record
        state.stream_bytes += record.stream_bytes
        self.totals.add_provider(record, state.thread)

    def _attempt_number(self, exchange: int, attempt: int, expected: int, line: int) -> None:
        """R4: attempts of an exchange count 0, 1, 2, ..."""
        if attempt < expected:
            self._add(
                codes.ATTEMPT_DUPLICATE,
                f"attempt {attempt} of exchange {exchange} was already recorded",
                line,
                "$.attempt",
            )
            return
        self._add(
            codes.ATTEMPT_GAP,
            f"attempt {attempt} of exchange {exchange} follows attempt {expected - 1}: "
            f"attempts {expected}..{attempt - 1} are missing",
            line,
            "$.attempt",
        )

    def _not_open(self, kind: str, exchange: int, line: int) -> None:
        """R3: a record of an exchange that is not open at this point."""
        if exchange >= self.next_exchange:
            where = "before its exchange's client record (or without one)"
        else:
            where = "after its exchange was closed (or its client record is missing)"
        self._add(
            codes.BOUNDARY,
            f"{kind} record of exchange {exchange} comes {where}",
            line,
            "$.exchange",
        )

    def exchange(self, record: ExchangeRecord, line: int) -> None:
        """An exchange record closes its exchange and must agree with its records (R3, R5-R7,
        R10, R11, R13, R15)."""
        for problem in exchange_problems(record):
            if problem is not None:
                self._report(problem, line)
        exchange = record.exchange
        if not record.complete:
            self._add(
                codes.INCOMPLETE,
                f"exchange record {exchange} is marked incomplete",
                line,
                "$.complete",
            )
        if record.detail_dropped:
            self._add(
                codes.DROPPED_DETAIL,
                f"the router dropped detail of exchange {exchange}",
                line,
                "$.detail_dropped",
            )
        state = self.open.pop(exchange, None)
        if state is None:
            self._not_open("exchange", exchange, line)
            return
        self.totals.add_exchange(record)
        self._agree(record, state, line)

    def _agree(self, record: ExchangeRecord, state: ExchangeState, line: int) -> None:
        """R5-R7: the exchange record says what its client and provider records give."""
        exchange, attempts, seen = record.exchange, record.attempts, state.seen
        client = state.client
        if record.thread_id != client.thread.thread_id:
            self._add(
                codes.BOUNDARY,
                f"exchange {exchange} closes thread {record.thread_id!r} but its client record "
                f"opened it for thread {client.thread.thread_id!r}",
                line,
                "$.thread_id",
            )
        if seen == 0 or attempts > seen:
            self._add(
                codes.PROVIDER_MISSING,
                f"exchange {exchange} says {attempts} attempt(s) but {seen} provider "
                "record(s) precede it",
                line,
                "$.attempts",
            )
        elif attempts < seen:
            self._add(
                codes.RECONCILE_ATTEMPTS,
                f"exchange {exchange} says {attempts} attempt(s) but has {seen} provider records",
                line,
                "$.attempts",
            )
        delivered, last = state.delivered, state.last
        delivered_attempt = None if delivered is None else delivered.attempt
        if record.delivered_attempt != delivered_attempt:
            self._add(
                codes.RECONCILE_ATTEMPTS,
                f"exchange {exchange} says attempt {record.delivered_attempt} was delivered; its "
                f"provider records say {delivered_attempt}",
                line,
                "$.delivered_attempt",
            )
        request, figure = record.request, self._figure
        said: int | None = request.client_bytes
        if said != client.request_bytes:
            figure(line, exchange, "request.client_bytes", said, client.request_bytes)
        provider_bytes = 0 if last is None else last.request_bytes
        if request.provider_bytes != provider_bytes:
            figure(line, exchange, "request.provider_bytes", request.provider_bytes, provider_bytes)
        # Token estimates compare only when both sides have one; otherwise both must be null.
        client_tokens = client.request_tokens
        provider_tokens = None if last is None else last.request_tokens
        if client_tokens is None or provider_tokens is None:
            client_tokens = provider_tokens = None
        if request.client_tokens != client_tokens:
            figure(line, exchange, "request.client_tokens", request.client_tokens, client_tokens)
        said = request.provider_tokens
        if said != provider_tokens:
            figure(line, exchange, "request.provider_tokens", said, provider_tokens)
        output = 0 if delivered is None else delivered.output_bytes
        if record.output.provider_bytes != output:
            figure(line, exchange, "output.provider_bytes", record.output.provider_bytes, output)
        text = 0 if delivered is None else delivered.output_text_bytes
        said = record.output_text.provider_bytes
        if said != text:
            figure(line, exchange, "output_text.provider_bytes", said, text)
        said = record.transport.provider_stream_bytes
        if said != state.stream_bytes:
            figure(line, exchange, "transport.provider_stream_bytes", said, state.stream_bytes)

    def _figure(
        self, line: int, exchange: int, field: str, said: int | None, derived: int | None
    ) -> None:
        """R7: one figure of an exchange record differs from what its records give."""
        self._add(
            codes.RECONCILE_EXCHANGE,
            f"exchange {exchange}: {field} is {said}, its client and provider records give "
            f"{derived}",
            line,
            f"$.{field}",
        )

    def error(self, record: ErrorRecord, line: int) -> None:
        """R15: a capture error record."""
        self.totals.add_error()
        about = "" if record.exchange is None else f" (exchange {record.exchange})"
        self._add(
            codes.ERROR,
            f"the router recorded a capture error: {record.category.value}{about}",
            line,
            "$.category",
        )

    def finish(self) -> None:
        """R15: exchanges still open at the end never got their exchange record."""
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
