"""Aggregate reliability and byte-cost rows over the joined records.

Every row is a count or a byte sum over the retained records; no row holds a payload, a
report, a diagnostic, a session or a call. The fragment rows count how many of a
correction's target and value fragments occur verbatim in the diagnostic the model read
just before it. They measure textual overlap only: a fragment can occur there because
the diagnostic echoed the rejected payload, by coincidence, or for any other reason, so
these counts are not evidence of what a model understood or of why it wrote what it did.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Final

import attrs

from hpbench.exactevidence import model as m
from hpbench.exactevidence.join import JoinedRecord, TelemetryTotals

_HEADER: Final = re.compile(r"[AUDM] (.+)")
_DIFF_MARKERS: Final = ("+", "-", " ")


@attrs.frozen
class ExactEvidenceRows:
    """The aggregate rows of one attempt's exact evidence (counts and bytes only)."""

    routed_calls: int
    """Calls the telemetry counted: successes, corrections and rejections."""
    retained_records: int
    """Records that joined; fewer than ``routed_calls`` after a cancellation."""
    routed_applied: int
    retained_applied: int
    routed_rejected: int
    retained_rejected: int
    initial_records: int
    initial_payload_bytes: int
    """UTF-8 bytes of every retained attempt-1 payload."""
    rejected_records: int
    rejected_payload_bytes: int
    """UTF-8 bytes of every retained rejected payload (initial or correction)."""
    correction_records: int
    correction_payload_bytes: int
    diagnostic_bytes: int
    """UTF-8 bytes of every rendered diagnostic the model read."""
    report_bytes: int
    """UTF-8 bytes of every successful report Codex gave."""
    chains: int
    chains_applied_initially: int
    chains_recovered_first_correction: int
    chains_recovered_later: int
    chains_not_recovered: int
    """Rejected initially and no retained attempt applied."""
    chains_incomplete: int
    """Chains whose retained attempts do not run 1, 2, ... without a gap: unclassified."""
    corrections_checked: int
    """Corrections whose retained previous attempt was rejected (the fragment base)."""
    fragments_checked: int
    """Distinct fragments of those corrections."""
    fragments_found: int
    """Of those, fragments that occur verbatim in the previous attempt's diagnostic."""

    @property
    def complete(self) -> bool:
        """Whether a record was retained for every routed call."""
        return self.retained_records == self.routed_calls

    def to_json(self) -> dict[str, Any]:
        """The rows as a JSON object, with the completeness stated."""
        return {**attrs.asdict(self), "complete": self.complete}

    def lines(self) -> list[tuple[str, str]]:
        """``(label, value)`` lines for people; retained fractions give both numbers."""
        state = "complete" if self.complete else "incomplete: fewer records than routed calls"
        return [
            ("retained", f"{_fraction(self.retained_records, self.routed_calls)} ({state})"),
            ("retained applied", _fraction(self.retained_applied, self.routed_applied)),
            ("retained rejected", _fraction(self.retained_rejected, self.routed_rejected)),
            ("initial payload", _bytes(self.initial_payload_bytes, self.initial_records)),
            ("rejected payload", _bytes(self.rejected_payload_bytes, self.rejected_records)),
            ("correction payload", _bytes(self.correction_payload_bytes, self.correction_records)),
            ("diagnostics", _bytes(self.diagnostic_bytes, self.retained_rejected)),
            ("reports", _bytes(self.report_bytes, self.retained_applied)),
            (
                "chains",
                f"{self.chains}: {self.chains_applied_initially} applied initially, "
                f"{self.chains_recovered_first_correction} recovered on the first correction, "
                f"{self.chains_recovered_later} recovered later, "
                f"{self.chains_not_recovered} not recovered, "
                f"{self.chains_incomplete} incomplete",
            ),
            (
                "fragments in diagnostic",
                f"{self.fragments_found} of {self.fragments_checked} distinct correction "
                f"fragments over {self.corrections_checked} correction(s) "
                "(textual overlap only)",
            ),
        ]


def _fraction(part: int, whole: int) -> str:
    return f"{part} of {whole} routed calls"


def _bytes(total: int, count: int) -> str:
    return f"{total} bytes over {count} record(s)"


def aggregate(
    joined: Sequence[JoinedRecord], telemetry_totals: TelemetryTotals
) -> ExactEvidenceRows:
    """The rows of ``joined`` (in telemetry order) against the capture's totals."""
    records = [item.record for item in joined]
    applied = [r for r in records if r.outcome is m.Outcome.APPLIED]
    rejected = [r for r in records if r.outcome is m.Outcome.REJECTED]
    initial = [r for r in records if r.attempt == 1]
    corrections = [r for r in records if r.correction]
    chains = _chains(records)
    outcomes = [_chain_outcome(attempts) for attempts in chains.values()]
    checked, fragments, found = _fragment_counts(chains)
    return ExactEvidenceRows(
        routed_calls=telemetry_totals.routed,
        retained_records=len(records),
        routed_applied=telemetry_totals.successes + telemetry_totals.corrections,
        retained_applied=len(applied),
        routed_rejected=telemetry_totals.rejections,
        retained_rejected=len(rejected),
        initial_records=len(initial),
        initial_payload_bytes=sum(r.payload.bytes for r in initial),
        rejected_records=len(rejected),
        rejected_payload_bytes=sum(r.payload.bytes for r in rejected),
        correction_records=len(corrections),
        correction_payload_bytes=sum(r.payload.bytes for r in corrections),
        diagnostic_bytes=sum(r.diagnostic.bytes for r in rejected if r.diagnostic),
        report_bytes=sum(r.report.bytes for r in applied if r.report),
        chains=len(chains),
        chains_applied_initially=outcomes.count("applied initially"),
        chains_recovered_first_correction=outcomes.count("recovered first"),
        chains_recovered_later=outcomes.count("recovered later"),
        chains_not_recovered=outcomes.count("not recovered"),
        chains_incomplete=outcomes.count("incomplete"),
        corrections_checked=checked,
        fragments_checked=fragments,
        fragments_found=found,
    )


def _chains(
    records: Sequence[m.ExactEvidenceRecord],
) -> dict[tuple[str, str], dict[int, m.ExactEvidenceRecord]]:
    chains: dict[tuple[str, str], dict[int, m.ExactEvidenceRecord]] = defaultdict(dict)
    for record in records:
        chains[(record.session, record.chain)][record.attempt] = record
    return chains


def _chain_outcome(attempts: dict[int, m.ExactEvidenceRecord]) -> str:
    if sorted(attempts) != list(range(1, len(attempts) + 1)):
        return "incomplete"  # a cancelled run dropped an attempt: nothing to claim
    if attempts[1].outcome is m.Outcome.APPLIED:
        return "applied initially"
    if 2 in attempts and attempts[2].outcome is m.Outcome.APPLIED:
        return "recovered first"
    if any(r.outcome is m.Outcome.APPLIED for r in attempts.values()):
        return "recovered later"
    return "not recovered"


def _fragment_counts(
    chains: dict[tuple[str, str], dict[int, m.ExactEvidenceRecord]],
) -> tuple[int, int, int]:
    """(corrections checked, distinct fragments checked, fragments found); counts only."""
    checked = fragments = found = 0
    for attempts in chains.values():
        for number, record in attempts.items():
            before = attempts.get(number - 1)
            if not record.correction or before is None or before.diagnostic is None:
                continue
            checked += 1
            # The fragments live only inside this loop; only their counts leave it.
            pieces = correction_fragments(record.payload.text)
            fragments += len(pieces)
            found += sum(piece in before.diagnostic.text for piece in pieces)
    return checked, fragments, found


def correction_fragments(payload: str) -> set[str]:
    """A payload's distinct target and value fragments.

    Each non-empty line with a leading ``+``, ``-`` or space diff marker, marker removed
    and stripped, and the path of each ``A``/``U``/``D``/``M <path>`` header line.
    Distinct, so a repeated line (a lone ``}``) counts once, and empty ones not at all.
    """
    pieces: set[str] = set()
    for raw in payload.split("\n"):
        line = raw.removesuffix("\r")
        header = _HEADER.fullmatch(line)
        if header is not None:
            piece = header.group(1).strip()
        elif line[:1] in _DIFF_MARKERS:
            piece = line[1:].strip()
        else:
            continue
        if piece:
            pieces.add(piece)
    return pieces
