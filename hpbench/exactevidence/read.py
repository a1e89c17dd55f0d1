"""Reading the records a router published, refusing every one that is not exactly right.

A record is evidence only when it is a private regular file with the published name, valid
UTF-8 JSON of the v1 schema, with lengths and digests that match its strings and the
invariants of its outcome and tool. Every way a file falls short is a finding that names
the file (and the field when there is one); nothing is repaired or guessed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import attrs

from hpbench._privatefiles import (
    Entry,
    ParseCodes,
    ScanCodes,
    is_real_dir,
    parse_document,
    read_nofollow,
    scan_private,
)
from hpbench.exactevidence import model as m
from hpbench.findings import Finding

_CODES = ParseCodes(m.CODE_ENCODING, m.CODE_JSON, m.CODE_SCHEMA)
_SCAN = ScanCodes(m.CODE_FILE, m.CODE_PERMISSIONS, m.CODE_LEFTOVER)


@attrs.frozen
class ReadRecord:
    """A record that passed every check of its own, and the file it came from."""

    record: m.ExactEvidenceRecord
    file: str


def read_records(directory: Path | str) -> tuple[list[ReadRecord], list[Finding]]:
    """Every record under ``directory/records/``, and a finding for each thing wrong.

    Returns the records that passed (in file-name order) and the findings; a record with
    any finding of its own is left out of the records. A missing ``records/`` directory
    holds no record (a router that routed no call need not create it); whether that is
    acceptable is the caller's to judge against the telemetry.
    """
    base = Path(directory)
    if not is_real_dir(base):
        return [], [Finding(m.CODE_MISSING, "no exact-evidence directory here", file=str(base))]
    entries, findings = scan_private(
        m.records_dir(base), name=m.RECORD_NAME, noun="record", codes=_SCAN
    )
    records: list[ReadRecord] = []
    for entry in entries:
        record = _read_one(entry) if entry.readable else None
        if record is not None:
            records.append(record)
        findings.extend(entry.findings)
    findings.extend(_cross_record_problems(records))
    return records, findings


def _read_one(entry: Entry) -> ReadRecord | None:
    """A published record when it passes every check of its own (its findings go to
    ``entry.findings``)."""
    source = str(entry.path)
    record = _parse(read_nofollow(entry.path), source, entry.findings)
    if record is not None:
        entry.findings.extend(record_problems(record, source=source, name=entry.path.name))
    return ReadRecord(record, source) if record is not None and not entry.findings else None


def _parse(raw: bytes, source: str, problems: list[Finding]) -> m.ExactEvidenceRecord | None:
    return parse_document(
        raw, m.ExactEvidenceRecord, source=source, codes=_CODES, problems=problems
    )


def record_problems(
    record: m.ExactEvidenceRecord, *, source: str, name: str | None = None
) -> list[Finding]:
    """What is wrong with one structured record on its own; empty when nothing is.

    Checks the constrained scalars, every exact string's length and digest, the
    invariants of outcome, tool and attempt and, given the file ``name``, that it is the
    name the record's exchange and call publish it under.
    """
    problems: list[Finding] = []

    def add(code: str, field: str, message: str) -> None:
        problems.append(Finding(code, message, file=source, field=field))

    for field in ("session", "thread", "call", "chain"):
        if not getattr(record, field):
            add(m.CODE_SCHEMA, f"$.{field}", "must not be empty")
    for field in ("exchange", "attempt"):
        if getattr(record, field) < 1:
            add(m.CODE_SCHEMA, f"$.{field}", f"must be at least 1, got {getattr(record, field)}")
    for field in ("payload", "report", "diagnostic"):
        exact: m.ExactString | None = getattr(record, field)
        if exact is not None:
            for code, where, message in _exact_problems(exact):
                add(code, f"$.{field}.{where}", message)
    for field, message in _invariant_problems(record):
        add(m.CODE_INVARIANT, field, message)
    if name is not None and not problems and name != m.record_name(record.exchange, record.call):
        add(
            m.CODE_NAME,
            "$.call",
            f"published as {name}, but its exchange and call name "
            f"{m.record_name(record.exchange, record.call)}",
        )
    return problems


def _exact_problems(exact: m.ExactString) -> list[tuple[str, str, str]]:
    try:
        data = exact.text.encode("utf-8")
    except UnicodeEncodeError:
        # JSON can spell a lone surrogate (\ud800) that no UTF-8 byte string holds.
        return [(m.CODE_ENCODING, "text", "holds a lone surrogate, which is not UTF-8")]
    found: list[tuple[str, str, str]] = []
    if exact.bytes != len(data):
        found.append(
            (m.CODE_LENGTH, "bytes", f"says {exact.bytes} bytes; the text is {len(data)} in UTF-8")
        )
    if not m.SHA256_HEX.fullmatch(exact.sha256):
        found.append((m.CODE_SCHEMA, "sha256", "must be 64 lower-case hex digits"))
    elif exact.sha256 != hashlib.sha256(data).hexdigest():
        found.append((m.CODE_DIGEST, "sha256", "is not the SHA-256 of the text's UTF-8 bytes"))
    return found


def _invariant_problems(record: m.ExactEvidenceRecord) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    applied = record.outcome is m.Outcome.APPLIED
    if applied and record.report is None:
        found.append(("$.report", "an applied call must carry Codex's report"))
    if applied and record.diagnostic is not None:
        found.append(("$.diagnostic", "an applied call must not carry a diagnostic"))
    if not applied and record.diagnostic is None:
        found.append(("$.diagnostic", "a rejected call must carry the diagnostic the model read"))
    if not applied and record.report is not None:
        found.append(("$.report", "a rejected call must not carry a report"))
    recover = record.tool is m.Tool.HPATCH_RECOVER
    if record.correction != recover:
        found.append(
            ("$.correction", f"must be {str(recover).lower()} for tool {record.tool.value}")
        )
    if recover != (record.attempt > 1):
        found.append(
            ("$.attempt", f"attempt {record.attempt} does not fit tool {record.tool.value}")
        )
    if (record.attempt == 1) != (record.chain == record.call):
        found.append(("$.chain", "must equal `call` exactly when `attempt` is 1"))
    return found


def _cross_record_problems(records: Sequence[ReadRecord]) -> list[Finding]:
    """Duplicated identities and chains whose attempts contradict each other."""
    problems: list[Finding] = []
    calls: dict[tuple[str, str], str] = {}
    attempts: dict[tuple[str, str, int], ReadRecord] = {}
    for item in records:
        record = item.record
        call_key = (record.session, record.call)
        if call_key in calls:
            problems.append(
                Finding(
                    m.CODE_DUPLICATE,
                    f"the same session and call as {calls[call_key]}",
                    file=item.file,
                    field="$.call",
                )
            )
        calls.setdefault(call_key, item.file)
        attempt_key = (record.session, record.chain, record.attempt)
        if attempt_key in attempts:
            problems.append(
                Finding(
                    m.CODE_DUPLICATE,
                    f"the same session, chain and attempt as {attempts[attempt_key].file}",
                    file=item.file,
                    field="$.attempt",
                )
            )
        attempts.setdefault(attempt_key, item)
    for (session, chain, attempt), item in sorted(attempts.items()):
        before = attempts.get((session, chain, attempt - 1))
        if before is None:
            continue  # a cancelled run may not have retained the previous attempt
        if before.record.outcome is not m.Outcome.REJECTED:
            problems.append(
                Finding(
                    m.CODE_CHAIN,
                    f"corrects attempt {attempt - 1}, which applied ({before.file})",
                    file=item.file,
                    field="$.attempt",
                )
            )
        if before.record.exchange >= item.record.exchange:
            # The model reads a diagnostic in a later request than the one carrying it back.
            problems.append(
                Finding(
                    m.CODE_CHAIN,
                    f"reported in exchange {item.record.exchange}, not after attempt "
                    f"{attempt - 1}'s exchange {before.record.exchange} ({before.file})",
                    file=item.file,
                    field="$.exchange",
                )
            )
    return problems
