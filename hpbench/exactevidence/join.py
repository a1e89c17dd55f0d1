"""Joining records to the capture's Hpatch telemetry by session, thread and exchange.

A record names the exchange whose request carried its outcome back. That exchange must
exist in the capture, belong to the record's thread and session, and have counted at
least as many outcomes of the record's kind (applied initial call, applied correction,
rejected call) as records claim. A record that fails any of this is unmatched: it is
named in a finding and attributed to nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import attrs

from hpbench.capture.models import ClientRecord, ExchangeRecord, HpatchTelemetry
from hpbench.capture.validator import iter_records
from hpbench.errors import ContractError
from hpbench.exactevidence import model as m
from hpbench.exactevidence.read import ReadRecord
from hpbench.findings import Finding

KINDS = ("applied initial", "applied correction", "rejected")
"""The three kinds of outcome the telemetry counts per exchange."""


@attrs.frozen
class TelemetryTotals:
    """The capture's Hpatch outcome counts summed over every exchange."""

    successes: int = 0
    corrections: int = 0
    rejections: int = 0

    @property
    def routed(self) -> int:
        """Every routed call whose outcome the router counted."""
        return self.successes + self.corrections + self.rejections


@attrs.frozen
class CapturedExchange:
    """One closed exchange: its client thread and session, its record's `seq`, its telemetry."""

    thread: str
    session: str
    seq: int
    hpatch: HpatchTelemetry

    def allows(self, kind: str) -> int:
        """How many outcomes of ``kind`` (one of :data:`KINDS`) the telemetry counted."""
        counts = {
            "applied initial": self.hpatch.successes,
            "applied correction": self.hpatch.corrections,
            "rejected": self.hpatch.rejections,
        }
        return counts[kind]


@attrs.frozen
class CaptureIndex:
    """What the join needs of a capture: each closed exchange and the totals."""

    exchanges: dict[int, CapturedExchange]
    totals: TelemetryTotals


@attrs.frozen
class JoinedRecord:
    """A record matched to its capture exchange; ``seq`` is that exchange record's."""

    record: m.ExactEvidenceRecord
    file: str
    seq: int

    def sort_key(self) -> tuple[int, str, int, str]:
        """Telemetry order, then chain and attempt (the call breaks no real tie)."""
        return (self.seq, self.record.chain, self.record.attempt, self.record.call)


def kind_of(record: m.ExactEvidenceRecord) -> str:
    """Which of the telemetry's three counts the record's outcome falls under."""
    if record.outcome is m.Outcome.REJECTED:
        return "rejected"
    return "applied correction" if record.correction else "applied initial"


def read_capture(capture_dir: Path | str) -> tuple[CaptureIndex, list[Finding]]:
    """The capture's exchanges (client thread, exchange ``seq``, telemetry) and totals.

    An unreadable capture is one finding and an empty index, so every record goes
    unmatched rather than attributed to a guess.
    """
    clients: dict[int, ClientRecord] = {}
    closes: dict[int, ExchangeRecord] = {}
    try:
        for _, _, record in iter_records(capture_dir):
            if isinstance(record, ClientRecord):
                clients[record.exchange] = record
            elif isinstance(record, ExchangeRecord):
                closes[record.exchange] = record
    except (ContractError, OSError) as exc:
        finding = Finding(
            m.CODE_CAPTURE, f"the capture cannot be read: {exc}", file=str(capture_dir)
        )
        return CaptureIndex({}, TelemetryTotals()), [finding]
    exchanges: dict[int, CapturedExchange] = {}
    for number, close in closes.items():
        client = clients.get(number)
        if client is None:
            continue  # the capture's own validator reports an exchange without its request
        exchanges[number] = CapturedExchange(
            client.thread.thread_id, client.thread.root_thread_id, close.seq, close.hpatch
        )
    totals = TelemetryTotals(
        successes=sum(e.hpatch.successes for e in exchanges.values()),
        corrections=sum(e.hpatch.corrections for e in exchanges.values()),
        rejections=sum(e.hpatch.rejections for e in exchanges.values()),
    )
    return CaptureIndex(exchanges, totals), []


def join(
    records: Sequence[ReadRecord], capture_dir: Path | str
) -> tuple[list[JoinedRecord], list[Finding]]:
    """Match each record to its capture exchange; see :func:`join_index`."""
    index, findings = read_capture(capture_dir)
    joined, unmatched = join_index(records, index)
    return joined, findings + unmatched


def join_index(
    records: Sequence[ReadRecord], index: CaptureIndex
) -> tuple[list[JoinedRecord], list[Finding]]:
    """The records that match ``index`` in telemetry order, and one finding per other record.

    When more records of one kind name an exchange than its telemetry counted, none of
    them is attributed: which one the telemetry counted cannot be told.
    """
    findings: list[Finding] = []
    groups: dict[tuple[int, str], list[ReadRecord]] = defaultdict(list)
    for item in records:
        record = item.record
        exchange = index.exchanges.get(record.exchange)
        problem = None
        if exchange is None:
            problem = f"the capture has no closed exchange {record.exchange}"
        elif exchange.thread != record.thread:
            problem = f"exchange {record.exchange} belongs to another thread than the record's"
        elif exchange.session != record.session:
            problem = f"exchange {record.exchange} belongs to another session than the record's"
        if problem is not None:
            findings.append(Finding(m.CODE_UNMATCHED, problem, file=item.file, field="$.exchange"))
            continue
        groups[(record.exchange, kind_of(record))].append(item)
    joined: list[JoinedRecord] = []
    for (number, kind), items in sorted(groups.items()):
        exchange = index.exchanges[number]
        allowed = exchange.allows(kind)
        if len(items) > allowed:
            for item in items:
                findings.append(
                    Finding(
                        m.CODE_UNMATCHED,
                        f"exchange {number}'s telemetry counted {allowed} {kind} call(s); "
                        f"{len(items)} records claim one",
                        file=item.file,
                        field="$.outcome",
                    )
                )
            continue
        joined.extend(JoinedRecord(item.record, item.file, exchange.seq) for item in items)
    joined.sort(key=JoinedRecord.sort_key)
    return joined, findings
