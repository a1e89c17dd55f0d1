"""The writer side of the capture contract, for routers written in Python.

A router creates one :class:`CaptureWriter` for its ``--capture-output`` directory and,
per client request::

    writer = CaptureWriter(capture_dir, mode=RouterMode.HPATCH, protocol=Protocol.NATIVE)
    exchange = writer.begin(
        thread=thread_from_headers(request.headers),
        requested_model=body.get("model"),
        request_bytes=len(raw_body),
        turn_state_sent="x-codex-turn-state" in request.headers,
    )
    for each upstream attempt:
        exchange.attempt(
            request_model=upstream_body["model"],
            request_bytes=len(upstream_raw),
            http_status=status,                    # None when no response arrived
            outcome=AttemptOutcome.COMPLETED,
            usage=read_usage(completed_response),  # the `response` object, or None
            response_model=completed_response.get("model"),
            header_model=response_headers.get("openai-model"),
            emitted_tools=tool_shapes(output_items),
            output_bytes=..., output_text_bytes=..., stream_bytes=...,
            delivered=True,                        # this attempt's stream went to the client
            turn_state_forwarded=..., turn_state_returned=...,
        )
    exchange.finish(
        outcome=ExchangeOutcome.COMPLETED, client_status=200,
        client_output_bytes=..., client_output_text_bytes=..., client_stream_bytes=...,
        delivered_tools=tool_shapes(delivered_items),
    )

``writer.snapshot_json()`` is the ``/api/metrics`` document. The writer takes sizes,
counts and identifiers only, never bodies, so what it writes stays sanitized. It is safe to
use from several threads; an asyncio router may call it directly (each call appends one
short line).

Derived fields (sequence numbers, exchange numbers, attempt numbers, the exchange's
attempt count, final provider request size, delivered attempt and signed savings) are
computed here, so a router cannot get them inconsistent.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hpbench._jsonio import canonical_json
from hpbench.capture._converter import CONVERTER
from hpbench.capture._exchange import NO_HPATCH, ExchangeCapture, hpatch_telemetry
from hpbench.capture._totals import ThreadSum, Totals
from hpbench.capture.models import (
    RECORD_SCHEMA_VERSION,
    SNAPSHOT_SCHEMA,
    CaptureErrorCategory,
    ClientRecord,
    Count,
    ErrorRecord,
    ExchangeRecord,
    MetricsSnapshot,
    Protocol,
    ProviderRecord,
    RouterMode,
    ThreadRef,
)
from hpbench.capture.readings import (
    NO_USAGE,
    UsageReading,
    read_usage,
    thread_from_headers,
    tool_shapes,
)

_R = TypeVar("_R", ClientRecord, ProviderRecord, ExchangeRecord, ErrorRecord)

DEFAULT_FILE_NAME = "records.jsonl"
"""The file a :class:`CaptureWriter` appends to inside the capture directory."""


class CaptureWriter:
    """Appends schema-6 records to ``directory/records.jsonl`` and keeps snapshot totals.

    Args:
        directory: the ``--capture-output`` directory (created 0700 when missing).
        mode: the router mode written into every record and the snapshot.
        protocol: the model protocol written into every record and the snapshot.
        mentor: whether Mentor Handoff is enabled (snapshot only).
        file_name: the record file inside ``directory``.

    The file is opened for appending (mode 0600) and every record is one ``write`` of one
    line. A failed write is counted in ``capture.write_failures`` and the record is left
    out of the totals, so the snapshot always describes exactly the records on disk.
    """

    def __init__(
        self,
        directory: Path | str,
        *,
        mode: RouterMode,
        protocol: Protocol,
        mentor: bool = False,
        file_name: str = DEFAULT_FILE_NAME,
    ) -> None:
        self.directory = Path(directory)
        self.mode = mode
        self.protocol = protocol
        self.mentor = mentor
        self.path = self.directory / file_name
        self._lock = threading.RLock()
        self._seq = 0
        self._exchanges = 0
        self._totals = Totals()
        self._threads: dict[int, ThreadSum] = {}
        self._health = {
            "write_failures": 0,
            "skipped_requests": 0,
            "dropped_exchange_detail": 0,
            "capture_errors": 0,
        }
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._fd: int | None = os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
        )

    # -- writing

    def _write_line(self, line: bytes) -> bool:
        if self._fd is None:
            return False
        try:
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError:
            return False
        return True

    def _append(self, build: Callable[[int], _R], sink: list[_R]) -> _R:
        with self._lock:
            record = build(self._seq)
            data = CONVERTER.unstructure(record)
            try:
                line = (canonical_json(data) + "\n").encode("utf-8")
            except (TypeError, ValueError):
                self._health["capture_errors"] += 1
                self._health["write_failures"] += 1
                sink.append(record)
                return record
            if self._write_line(line):
                self._seq += 1
                self._count(record)
            else:
                self._health["write_failures"] += 1
            sink.append(record)
            return record

    def _count(self, record: ClientRecord | ProviderRecord | ExchangeRecord | ErrorRecord) -> None:
        totals = self._totals
        if record.kind == "client":
            self._threads[record.exchange] = totals.add_client(record)
        elif record.kind == "provider":
            totals.add_provider(record, self._threads.get(record.exchange))
        elif record.kind == "exchange":
            totals.add_exchange(record)
            self._threads.pop(record.exchange, None)
            if record.detail_dropped:
                self._health["dropped_exchange_detail"] += 1
        else:
            totals.add_error()

    def begin(
        self,
        *,
        thread: ThreadRef,
        requested_model: str | None,
        request_bytes: int,
        request_tokens: int | None = None,
        turn_state_sent: bool = False,
        complete: bool = True,
    ) -> ExchangeCapture:
        """Start capturing a logical client request; appends its ``client`` record."""
        holder: list[ClientRecord] = []
        with self._lock:
            exchange = self._exchanges
            self._exchanges += 1
            self._append(
                lambda seq: ClientRecord(
                    schema_version=RECORD_SCHEMA_VERSION,
                    kind="client",
                    seq=Count(seq),
                    exchange=Count(exchange),
                    mode=self.mode,
                    protocol=self.protocol,
                    complete=complete,
                    thread=thread,
                    requested_model=requested_model,
                    request_bytes=Count(request_bytes),
                    request_tokens=Count(request_tokens) if request_tokens is not None else None,
                    turn_state_sent=turn_state_sent,
                ),
                holder,
            )
        return ExchangeCapture(self, holder[0])

    def record_error(
        self, category: CaptureErrorCategory, *, exchange: int | None = None
    ) -> ErrorRecord:
        """Count a capture error and append an ``error`` record (the capture becomes invalid)."""
        holder: list[ErrorRecord] = []
        with self._lock:
            self._health["capture_errors"] += 1
            return self._append(
                lambda seq: ErrorRecord(
                    schema_version=RECORD_SCHEMA_VERSION,
                    kind="error",
                    seq=Count(seq),
                    exchange=Count(exchange) if exchange is not None else None,
                    mode=self.mode,
                    protocol=self.protocol,
                    category=category,
                ),
                holder,
            )

    def note_skipped_request(self) -> None:
        """Count a client request the router served without capturing it."""
        with self._lock:
            self._health["skipped_requests"] += 1

    def note_dropped_detail(self) -> None:
        """Count an exchange whose detail was dropped before any record could say so."""
        with self._lock:
            self._health["dropped_exchange_detail"] += 1

    # -- reading back

    def snapshot_json(self) -> dict[str, Any]:
        """The ``/api/metrics`` document (``hpatch.capture.metrics.v4``) as JSON data."""
        with self._lock:
            kinds = self._totals.kinds
            return {
                "schema": SNAPSHOT_SCHEMA,
                "router": {
                    "mode": self.mode.value,
                    "protocol": self.protocol.value,
                    "mentor": self.mentor,
                },
                "capture": {
                    "record_schema_version": RECORD_SCHEMA_VERSION,
                    "records_written": sum(kinds.values()),
                    "client_records": kinds["client"],
                    "provider_records": kinds["provider"],
                    "exchange_records": kinds["exchange"],
                    "error_records": kinds["error"],
                    **self._health,
                },
                **self._totals.aggregates_json(),
            }

    def snapshot(self) -> MetricsSnapshot:
        """The snapshot as a typed :class:`~hpbench.capture.models.MetricsSnapshot`."""
        return CONVERTER.structure(self.snapshot_json(), MetricsSnapshot)

    def close(self) -> None:
        """Close the record file; later appends count as write failures."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


__all__ = [
    "DEFAULT_FILE_NAME",
    "NO_HPATCH",
    "NO_USAGE",
    "CaptureWriter",
    "ExchangeCapture",
    "UsageReading",
    "hpatch_telemetry",
    "read_usage",
    "thread_from_headers",
    "tool_shapes",
]
