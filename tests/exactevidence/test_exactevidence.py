"""Exact evidence: strict records, the join to telemetry, consolidation, rows and the CLI."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hpbench._cli.main import main
from hpbench._jsonio import canonical_json
from hpbench.capture.models import (
    AttemptOutcome,
    ExchangeOutcome,
    HpatchTelemetry,
    Protocol,
    RouterMode,
)
from hpbench.capture.writer import NO_HPATCH, CaptureWriter, hpatch_telemetry, thread_from_headers
from hpbench.exactevidence import (
    CONSOLIDATED_NAME,
    RECORD_SCHEMA,
    ExactEvidenceRows,
    OverwriteError,
    TelemetryTotals,
    aggregate,
    analyze,
    consolidate,
    consolidated_text,
    correction_fragments,
    join,
    read_records,
    record_name,
)
from hpbench.findings import Finding

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "contrib" / "schemas"
ROOT = "thread-root-7f3a"
CHILD = "thread-child-91bc"
MODEL = "gpt-6-astra"
DISTINCTIVE = "zebraQuokkaLimit"
INITIAL = (
    "U src/kv/range.go\n@@ func Range\n-    return rangeStream(ctx, lo, hi)\n"
    "+    return rangeStream(ctx, lo, hi, opts)\n"
)
DIAGNOSTIC = (
    "hpatch rejected: context mismatch in src/kv/range.go\n"
    "expected:\n    return rangeStream(ctx, lo, hi)\nfound:\n\treturn rangeStream(ctx, lo, hi)\n"
)
# Four distinct fragments: the path, the removed line (twice: counted once), the added
# line and a line whose text occurs nowhere else; the diagnostic holds the first two.
CORRECTION = (
    "U src/kv/range.go\n@@ func Range\n-\treturn rangeStream(ctx, lo, hi)\n"
    f"+\treturn rangeStream(ctx, lo, hi, opts)\n+\t{DISTINCTIVE} := 8\n"
    " \treturn rangeStream(ctx, lo, hi)\n"
)
REPORT = "Success. Updated the following files:\nM src/kv/range.go\n"


# ----------------------------------------------------------------------- equipment


def exact(text: str) -> dict[str, Any]:
    """An exact string as a router records it."""
    data = text.encode("utf-8")
    return {"text": text, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def record(
    call: str,
    *,
    exchange: int,
    chain: str | None = None,
    attempt: int = 1,
    outcome: str = "rejected",
    payload: str = INITIAL,
    text: str | None = None,
    thread: str = ROOT,
    session: str = ROOT,
) -> dict[str, Any]:
    """One record of the v1 format; ``text`` is its report or diagnostic."""
    applied = outcome == "applied"
    after = text if text is not None else (REPORT if applied else DIAGNOSTIC)
    return {
        "schema": RECORD_SCHEMA,
        "session": session,
        "thread": thread,
        "exchange": exchange,
        "call": call,
        "chain": chain or call,
        "attempt": attempt,
        "tool": "hpatch" if attempt == 1 else "hpatch_recover",
        "correction": attempt > 1,
        "model": MODEL,
        "outcome": outcome,
        "payload": exact(payload),
        "report": exact(after) if applied else None,
        "diagnostic": None if applied else exact(after),
    }


def good_chain() -> list[dict[str, Any]]:
    """A rejected initial call (exchange 1) and its applied first correction (exchange 2)."""
    return [
        record("call_initial", exchange=1),
        record(
            "call_fix",
            exchange=2,
            chain="call_initial",
            attempt=2,
            outcome="applied",
            payload=CORRECTION,
        ),
    ]


def records_dir(evidence: Path) -> Path:
    folder = evidence / "records"
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # explicit: the test's umask must not decide the mode
    return folder


def write_record(
    evidence: Path,
    data: dict[str, Any],
    *,
    name: str | None = None,
    raw: bytes | None = None,
    mode: int = 0o600,
) -> Path:
    """Publish ``data`` (or ``raw`` bytes) as the router does: private, under its name."""
    path = records_dir(evidence) / (name or record_name(data["exchange"], data["call"]))
    path.write_bytes(raw if raw is not None else canonical_json(data).encode("utf-8"))
    path.chmod(mode)
    return path


def write_records(evidence: Path, records: Sequence[dict[str, Any]]) -> list[Path]:
    records_dir(evidence)
    return [write_record(evidence, data) for data in records]


def rejected(count: int = 1) -> HpatchTelemetry:
    return hpatch_telemetry(
        diagnostics=count,
        causes={"context_mismatch": count},
        signatures={"0123456789abcdef": count},
    )


def applied(*, successes: int = 0, corrections: int = 0) -> HpatchTelemetry:
    return hpatch_telemetry(successes=successes, corrections=corrections)


def write_capture(
    directory: Path,
    telemetry: Sequence[HpatchTelemetry],
    *,
    threads: Sequence[str] | None = None,
) -> Path:
    """One exchange per telemetry entry (exchange 0 first), on ``threads`` (default root)."""
    with CaptureWriter(directory, mode=RouterMode.HPATCH, protocol=Protocol.NATIVE) as writer:
        for index, hpatch in enumerate(telemetry):
            thread = threads[index] if threads else ROOT
            exchange = writer.begin(
                thread=thread_from_headers({"session-id": ROOT, "thread-id": thread}),
                requested_model=MODEL,
                request_bytes=1_000,
            )
            exchange.attempt(
                request_model=MODEL,
                request_bytes=1_000,
                http_status=200,
                outcome=AttemptOutcome.COMPLETED,
                delivered=True,
            )
            exchange.finish(outcome=ExchangeOutcome.COMPLETED, client_status=200, hpatch=hpatch)
    return directory


GOOD_TELEMETRY = (NO_HPATCH, rejected(), applied(corrections=1))


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    return write_capture(tmp_path / "capture", GOOD_TELEMETRY)


def codes(findings: Sequence[Finding]) -> list[str]:
    return sorted({finding.code for finding in findings})


def only(findings: Sequence[Finding]) -> Finding:
    assert 1 == len(findings), findings
    return findings[0]


# -------------------------------------------------------------------------- reading


class TestReadRecords:
    def test_good_chain(self, tmp_path: Path) -> None:
        """A well-formed chain reads back with no finding, in file-name order."""
        write_records(tmp_path, good_chain())

        records, findings = read_records(tmp_path)

        assert [] == findings
        assert ["call_initial", "call_fix"] == [r.record.call for r in records]
        assert CORRECTION == records[1].record.payload.text

    @pytest.mark.parametrize(
        ("change", "code", "field", "words"),
        [
            (
                lambda d: d["payload"].update(bytes=d["payload"]["bytes"] + 1),
                "exact_evidence.length",
                "$.payload.bytes",
                "in UTF-8",
            ),
            (
                lambda d: d["payload"].update(sha256=hashlib.sha256(b"other").hexdigest()),
                "exact_evidence.digest",
                "$.payload.sha256",
                "SHA-256",
            ),
            (
                # Same length, one character changed: only the digest can tell.
                lambda d: d["diagnostic"].update(text=d["diagnostic"]["text"].replace("h", "j", 1)),
                "exact_evidence.digest",
                "$.diagnostic.sha256",
                "SHA-256",
            ),
            (
                lambda d: d["payload"].update(sha256=d["payload"]["sha256"].upper()),
                "exact_evidence.schema",
                "$.payload.sha256",
                "hex",
            ),
            (
                lambda d: d.update(headers={"authorization": "Bearer x"}),
                "exact_evidence.schema",
                "$",
                "headers",
            ),
            (lambda d: d.pop("model"), "exact_evidence.schema", "$.model", "required"),
            (lambda d: d.update(outcome="partial"), "exact_evidence.schema", "$.outcome", "one of"),
            (lambda d: d.update(tool="apply_patch"), "exact_evidence.schema", "$.tool", "one of"),
            (lambda d: d.update(exchange="1"), "exact_evidence.schema", "$.exchange", "integer"),
            (lambda d: d.update(schema="v2"), "exact_evidence.schema", "$.schema", "v2"),
            (lambda d: d.update(session=""), "exact_evidence.schema", "$.session", "empty"),
            (
                lambda d: d["payload"].update(bytes=-1),
                "exact_evidence.length",
                "$.payload.bytes",
                "-1",
            ),
        ],
        ids=[
            "length",
            "digest",
            "digest-same-length",
            "digest-not-hex",
            "unknown-key",
            "missing-field",
            "bad-outcome",
            "bad-tool",
            "wrong-type",
            "other-schema",
            "empty-session",
            "negative-bytes",
        ],
    )
    def test_bad_record(
        self,
        tmp_path: Path,
        change: Callable[[dict[str, Any]], object],
        code: str,
        field: str,
        words: str,
    ) -> None:
        """Each broken record is refused by its code, its file and its field, and left out."""
        data = record("call_initial", exchange=1)
        change(data)
        path = write_record(tmp_path, data, name=record_name(1, "call_initial"))

        records, findings = read_records(tmp_path)

        finding = only(findings)
        assert (code, str(path), field) == (finding.code, finding.file, finding.field)
        assert words in finding.message
        assert [] == records

    @pytest.mark.parametrize(
        ("overrides", "field", "words"),
        [
            ({"outcome": "applied", "diagnostic": None}, "$.report", "must carry Codex's report"),
            (
                {"outcome": "applied", "report": exact(REPORT)},
                "$.diagnostic",
                "must not carry a diagnostic",
            ),
            ({"diagnostic": None}, "$.diagnostic", "must carry the diagnostic"),
            ({"report": exact(REPORT)}, "$.report", "must not carry a report"),
            ({"correction": True}, "$.correction", "must be false"),
            ({"tool": "hpatch_recover"}, "$.attempt", "does not fit tool"),
            ({"chain": "call_other"}, "$.chain", "exactly when `attempt` is 1"),
        ],
        ids=[
            "applied-no-report",
            "applied-with-diagnostic",
            "rejected-no-diagnostic",
            "rejected-with-report",
            "correction-on-hpatch",
            "recover-at-attempt-1",
            "chain-not-call",
        ],
    )
    def test_broken_invariant(
        self, tmp_path: Path, overrides: dict[str, Any], field: str, words: str
    ) -> None:
        """Each invariant of outcome, tool, attempt and chain is refused by the field."""
        data = {**record("call_initial", exchange=1), **overrides}
        write_record(tmp_path, data)

        records, findings = read_records(tmp_path)

        assert ["exact_evidence.invariant"] == codes(findings)
        assert field in [f.field for f in findings]
        assert any(words in f.message for f in findings if f.field == field)
        assert [] == records

    def test_correction_whose_chain_is_its_own_call(self, tmp_path: Path) -> None:
        """A correction (attempt 2) cannot start its own chain."""
        data = good_chain()[1]
        data["chain"] = data["call"]
        write_record(tmp_path, data)

        _, findings = read_records(tmp_path)

        assert ("exact_evidence.invariant", "$.chain") == (only(findings).code, findings[0].field)

    def test_invalid_utf8(self, tmp_path: Path) -> None:
        """A record whose bytes are not UTF-8 is refused at the byte it breaks."""
        data = canonical_json(record("call_initial", exchange=1)).encode()
        path = write_record(tmp_path, {"exchange": 1, "call": "call_initial"}, raw=b"\xff" + data)

        _, findings = read_records(tmp_path)

        finding = only(findings)
        assert ("exact_evidence.encoding", str(path)) == (finding.code, finding.file)
        assert "byte 0" in finding.message

    def test_lone_surrogate(self, tmp_path: Path) -> None:
        """JSON can spell a lone surrogate; no UTF-8 length or digest exists for it."""
        data = record("call_initial", exchange=1)
        raw = canonical_json(data).replace('"text":"U src', '"text":"\\ud800U src').encode()
        write_record(tmp_path, data, raw=raw)

        _, findings = read_records(tmp_path)

        assert ("exact_evidence.encoding", "$.payload.text") == (
            only(findings).code,
            findings[0].field,
        )

    @pytest.mark.parametrize(
        ("raw", "words"),
        [(b"{not json", "not one JSON object"), (b'{"schema":1,"schema":2}', "given twice")],
        ids=["not-json", "duplicate-key"],
    )
    def test_not_json(self, tmp_path: Path, raw: bytes, words: str) -> None:
        """Text that is not one JSON object with unique keys is refused."""
        write_record(tmp_path, {"exchange": 1, "call": "c"}, raw=raw)

        _, findings = read_records(tmp_path)

        assert "exact_evidence.json" == only(findings).code
        assert words in findings[0].message

    def test_name_does_not_match(self, tmp_path: Path) -> None:
        """A record published under another exchange's name is refused, naming both."""
        data = record("call_initial", exchange=1)
        write_record(tmp_path, data, name=record_name(3, "call_initial"))

        _, findings = read_records(tmp_path)

        assert "exact_evidence.name" == only(findings).code
        assert record_name(1, "call_initial") in findings[0].message

    def test_duplicate_session_and_call(self, tmp_path: Path) -> None:
        """Two records of one session and call are refused, the second naming the first."""
        first = write_record(tmp_path, record("call_initial", exchange=1))
        write_record(tmp_path, record("call_initial", exchange=2))

        _, findings = read_records(tmp_path)

        duplicates = [f for f in findings if f.field == "$.call"]
        assert "exact_evidence.duplicate" == only(duplicates).code
        assert str(first) in duplicates[0].message

    def test_duplicate_attempt_of_a_chain(self, tmp_path: Path) -> None:
        """Two calls claiming the same attempt of one chain are refused."""
        write_records(tmp_path, good_chain())
        twin = record("call_twin", exchange=3, chain="call_initial", attempt=2, outcome="applied")
        write_record(tmp_path, twin)

        _, findings = read_records(tmp_path)

        assert "exact_evidence.duplicate" in codes(findings)
        assert any(f.field == "$.attempt" and "chain" in f.message for f in findings)

    def test_correction_of_an_applied_attempt(self, tmp_path: Path) -> None:
        """A chain ends when a patch applies; a later correction contradicts it."""
        initial = record("call_initial", exchange=1, outcome="applied")
        fix = good_chain()[1]
        write_records(tmp_path, [initial, fix])

        _, findings = read_records(tmp_path)

        assert "exact_evidence.chain" == only(findings).code
        assert "which applied" in findings[0].message

    def test_correction_not_after_its_diagnostic(self, tmp_path: Path) -> None:
        """A correction's outcome comes back after the diagnostic the model read."""
        initial, fix = good_chain()
        fix["exchange"] = 1
        write_records(tmp_path, [initial, fix])

        _, findings = read_records(tmp_path)

        assert ("exact_evidence.chain", "$.exchange") == (only(findings).code, findings[0].field)

    def test_world_readable_record(self, tmp_path: Path) -> None:
        """A record readable by others is refused by its mode."""
        path = write_record(tmp_path, good_chain()[0], mode=0o644)

        records, findings = read_records(tmp_path)

        finding = only(findings)
        assert ("exact_evidence.permissions", str(path)) == (finding.code, finding.file)
        assert "0644" in finding.message
        assert [] == records

    def test_open_records_directory(self, tmp_path: Path) -> None:
        """A records directory others may enter is refused by its mode."""
        write_records(tmp_path, good_chain())
        (tmp_path / "records").chmod(0o755)

        _, findings = read_records(tmp_path)

        assert ("exact_evidence.permissions", str(tmp_path / "records")) == (
            only(findings).code,
            findings[0].file,
        )
        assert "0755" in findings[0].message

    def test_symlinked_record(self, tmp_path: Path) -> None:
        """A record that is a symlink is refused, never followed."""
        target = tmp_path / "elsewhere.json"
        target.write_text(canonical_json(good_chain()[0]))
        target.chmod(0o600)
        link = records_dir(tmp_path / "evidence") / record_name(1, "call_initial")
        link.symlink_to(target)

        records, findings = read_records(tmp_path / "evidence")

        assert ("exact_evidence.file", str(link)) == (only(findings).code, findings[0].file)
        assert "symlink" in findings[0].message
        assert [] == records

    def test_symlinked_records_directory(self, tmp_path: Path) -> None:
        """A records directory that is a symlink is refused."""
        write_records(tmp_path / "real", good_chain())
        (tmp_path / "evidence").mkdir()
        (tmp_path / "evidence" / "records").symlink_to(tmp_path / "real" / "records")

        records, findings = read_records(tmp_path / "evidence")

        assert "exact_evidence.file" == only(findings).code
        assert [] == records

    def test_non_regular_record(self, tmp_path: Path) -> None:
        """A directory with a record's name is refused as not a regular file."""
        (records_dir(tmp_path) / record_name(1, "call_initial")).mkdir()

        _, findings = read_records(tmp_path)

        assert "exact_evidence.file" == only(findings).code
        assert "not a regular file" in findings[0].message

    def test_leftover_temporary_file(self, tmp_path: Path) -> None:
        """A temporary file a write never renamed is refused by name."""
        write_records(tmp_path, good_chain())
        leftover = records_dir(tmp_path) / ".1-0123456789abcdef.json.tmp"
        leftover.write_text("{")

        records, findings = read_records(tmp_path)

        assert ("exact_evidence.leftover", str(leftover)) == (
            only(findings).code,
            findings[0].file,
        )
        assert 2 == len(records)

    def test_missing_directory(self, tmp_path: Path) -> None:
        """No evidence directory at all is a finding."""
        _, findings = read_records(tmp_path / "absent")

        assert "exact_evidence.missing" == only(findings).code

    def test_no_records_directory(self, tmp_path: Path) -> None:
        """An evidence directory without records/ holds no record and no finding of its own."""
        assert ([], []) == read_records(tmp_path)


# ---------------------------------------------------------------------------- join


class TestJoin:
    def test_good_chain_in_telemetry_order(self, tmp_path: Path, capture: Path) -> None:
        """Both records join, ordered by their exchange record's seq."""
        write_records(tmp_path, list(reversed(good_chain())))
        records, _ = read_records(tmp_path)

        joined, findings = join(records, capture)

        assert [] == findings
        assert ["call_initial", "call_fix"] == [j.record.call for j in joined]
        assert joined[0].seq < joined[1].seq

    def _refused(self, tmp_path: Path, capture: Path, data: dict[str, Any]) -> Finding:
        write_records(tmp_path, [data])
        records, read_findings = read_records(tmp_path)
        assert [] == read_findings

        joined, findings = join(records, capture)

        assert [] == joined
        return only(findings)

    def test_exchange_not_in_capture(self, tmp_path: Path, capture: Path) -> None:
        """A record naming an exchange the capture does not have is unmatched."""
        path = records_dir(tmp_path) / record_name(9, "call_initial")

        finding = self._refused(tmp_path, capture, record("call_initial", exchange=9))

        assert ("exact_evidence.unmatched", str(path)) == (finding.code, finding.file)
        assert "no closed exchange 9" in finding.message

    def test_other_thread(self, tmp_path: Path, capture: Path) -> None:
        """A record whose thread is not its exchange's is unmatched."""
        finding = self._refused(tmp_path, capture, record("c", exchange=1, thread=CHILD))

        assert "exact_evidence.unmatched" == finding.code
        assert "another thread" in finding.message

    def test_other_session(self, tmp_path: Path, capture: Path) -> None:
        """A record whose session is not its exchange's root thread is unmatched."""
        finding = self._refused(tmp_path, capture, record("c", exchange=1, session=CHILD))

        assert "exact_evidence.unmatched" == finding.code
        assert "another session" in finding.message

    def test_child_thread_joins(self, tmp_path: Path) -> None:
        """A child thread's record joins by its own thread and its root's session."""
        capture = write_capture(tmp_path / "capture", GOOD_TELEMETRY, threads=[ROOT, CHILD, ROOT])
        write_records(tmp_path, [record("c", exchange=1, thread=CHILD)])
        records, _ = read_records(tmp_path)

        joined, findings = join(records, capture)

        assert ([], 1) == (findings, len(joined))

    def test_more_records_than_telemetry_counted(self, tmp_path: Path, capture: Path) -> None:
        """One applied record more than an exchange counted: none of them is attributed."""
        extra = record("call_extra", exchange=2, outcome="applied")  # an applied initial call
        second = record("call_second", exchange=2, chain="call_initial", attempt=3)
        second.update(outcome="applied", diagnostic=None, report=exact(REPORT))
        write_records(tmp_path, [*good_chain(), extra, second])
        records, _ = read_records(tmp_path)

        joined, findings = join(records, capture)

        assert ["call_initial"] == [j.record.call for j in joined]
        unmatched = sorted(f.file or "" for f in findings)
        assert [
            str(records_dir(tmp_path) / record_name(2, call))
            for call in sorted(
                ["call_extra", "call_fix", "call_second"], key=lambda c: record_name(2, c)
            )
        ] == unmatched
        assert {"exact_evidence.unmatched"} == {f.code for f in findings}
        assert any("counted 1 applied correction call(s); 2 records" in f.message for f in findings)
        assert any("counted 0 applied initial call(s); 1 records" in f.message for f in findings)

    def test_unreadable_capture(self, tmp_path: Path) -> None:
        """A capture that cannot be read is a finding, and nothing is attributed."""
        bad = tmp_path / "capture"
        bad.mkdir()
        (bad / "records.jsonl").write_text("{not a record\n")
        write_records(tmp_path, good_chain())
        records, _ = read_records(tmp_path)

        joined, findings = join(records, bad)

        assert [] == joined
        assert ["exact_evidence.capture", "exact_evidence.unmatched"] == codes(findings)


# --------------------------------------------------------------------- consolidation


def _joined(evidence: Path, capture: Path, data: Sequence[dict[str, Any]]) -> Any:
    write_records(evidence, data)
    records, findings = read_records(evidence)
    joined, join_findings = join(records, capture)
    assert [] == findings + join_findings
    return joined


class TestConsolidate:
    def test_deterministic(self, tmp_path: Path, capture: Path) -> None:
        """Twice, and from files written and joined in another order: identical bytes."""
        joined = _joined(tmp_path / "a", capture, good_chain())
        other = _joined(tmp_path / "b", capture, list(reversed(good_chain())))
        shuffled = list(joined)
        random.Random(3).shuffle(shuffled)  # noqa: S311 - a reproducible order, not a secret

        first = consolidate(joined, tmp_path / "one" / CONSOLIDATED_NAME).read_bytes()
        second = consolidate(joined, tmp_path / "two" / CONSOLIDATED_NAME).read_bytes()
        third = consolidate(other, tmp_path / "three" / CONSOLIDATED_NAME).read_bytes()

        assert first == second == third == consolidated_text(shuffled).encode()

    def test_lines_are_the_canonical_records(self, tmp_path: Path, capture: Path) -> None:
        """Each line is one record's canonical JSON, in telemetry order, mode 0600."""
        joined = _joined(tmp_path, capture, good_chain())

        out = consolidate(joined, tmp_path / CONSOLIDATED_NAME)

        assert [canonical_json(d) for d in good_chain()] == out.read_text().splitlines()
        assert 0o600 == out.stat().st_mode & 0o777
        assert [CONSOLIDATED_NAME] == [p.name for p in tmp_path.iterdir() if p.is_file()]

    def test_overwrite_refused(self, tmp_path: Path, capture: Path) -> None:
        """An existing file is never replaced, and no temporary file is left."""
        joined = _joined(tmp_path / "e", capture, good_chain())
        out = tmp_path / "out" / CONSOLIDATED_NAME
        out.parent.mkdir()
        out.write_text("kept\n")

        with pytest.raises(OverwriteError, match="already exists"):
            consolidate(joined, out)

        assert "kept\n" == out.read_text()
        assert [CONSOLIDATED_NAME] == [p.name for p in out.parent.iterdir()]


# ---------------------------------------------------------------------------- rows


class TestAggregate:
    def test_good_chain_rows(self, tmp_path: Path, capture: Path) -> None:
        """The rows of one chain recovered on its first correction, every number exact."""
        joined = _joined(tmp_path, capture, good_chain())

        rows = aggregate(joined, TelemetryTotals(successes=0, corrections=1, rejections=1))

        assert (
            ExactEvidenceRows(
                routed_calls=2,
                retained_records=2,
                routed_applied=1,
                retained_applied=1,
                routed_rejected=1,
                retained_rejected=1,
                initial_records=1,
                initial_payload_bytes=len(INITIAL.encode()),
                rejected_records=1,
                rejected_payload_bytes=len(INITIAL.encode()),
                correction_records=1,
                correction_payload_bytes=len(CORRECTION.encode()),
                diagnostic_bytes=len(DIAGNOSTIC.encode()),
                report_bytes=len(REPORT.encode()),
                chains=1,
                chains_applied_initially=0,
                chains_recovered_first_correction=1,
                chains_recovered_later=0,
                chains_not_recovered=0,
                chains_incomplete=0,
                corrections_checked=1,
                fragments_checked=4,
                fragments_found=2,
            )
            == rows
        )
        assert rows.complete

    def test_cancelled_attempt_keeps_both_numbers(self, tmp_path: Path) -> None:
        """Fewer records than routed calls: both numbers, labelled incomplete."""
        capture = write_capture(
            tmp_path / "capture", [*GOOD_TELEMETRY, applied(successes=1), rejected(2)]
        )

        write_records(tmp_path, good_chain())
        analysis = analyze(tmp_path, capture, tmp_path / "out" / CONSOLIDATED_NAME)

        assert analysis.ok
        assert analysis.rows is not None
        lines = dict(analysis.rows.lines())
        assert (5, 2, False) == (
            analysis.rows.routed_calls,
            analysis.rows.retained_records,
            analysis.rows.complete,
        )
        assert (
            "2 of 5 routed calls (incomplete: fewer records than routed calls)" == lines["retained"]
        )
        assert "1 of 2 routed calls" == lines["retained applied"]
        assert "1 of 3 routed calls" == lines["retained rejected"]
        assert {"complete": False, "routed_calls": 5, "retained_records": 2}.items() <= (
            analysis.rows.to_json().items()
        )

    def test_chain_classes(self, tmp_path: Path) -> None:
        """Applied initially, recovered later, not recovered, incomplete: each counted."""
        capture = write_capture(
            tmp_path / "capture",
            [NO_HPATCH, applied(successes=1), rejected(3), rejected(1), applied(corrections=1)],
        )
        chain = [
            record("a1", exchange=1, outcome="applied"),  # applied initially
            record("b1", exchange=2),  # rejected, rejected, applied: recovered later
            record("b2", exchange=3, chain="b1", attempt=2),
            record("b3", exchange=4, chain="b1", attempt=3, outcome="applied"),
            record("c1", exchange=2),  # rejected, nothing more: not recovered
            record("d2", exchange=2, chain="d0", attempt=2),  # attempt 1 not retained
        ]
        joined = _joined(tmp_path, capture, chain)

        rows = aggregate(joined, TelemetryTotals(successes=1, corrections=1, rejections=4))

        assert (4, 1, 0, 1, 1, 1) == (
            rows.chains,
            rows.chains_applied_initially,
            rows.chains_recovered_first_correction,
            rows.chains_recovered_later,
            rows.chains_not_recovered,
            rows.chains_incomplete,
        )
        # b2 and b3 each follow a retained rejected attempt; d2's predecessor is missing.
        assert 2 == rows.corrections_checked

    def test_fragments(self) -> None:
        """Diff lines lose their marker and surrounding space, headers give their path,
        each distinct fragment once, and other lines none."""
        payload = "A new/file.go\n@@ hunk\n+  x := 1  \n-y\n \n+  x := 1\nM moved/to.go\nplain\n"

        assert {"new/file.go", "x := 1", "y", "moved/to.go"} == correction_fragments(payload)

    def test_rows_never_hold_a_fragment(self, tmp_path: Path, capture: Path) -> None:
        """The rows' JSON and lines hold counts, not a payload line or an identity."""
        joined = _joined(tmp_path, capture, good_chain())

        rows = aggregate(joined, TelemetryTotals(corrections=1, rejections=1))

        shown = json.dumps(rows.to_json()) + repr(rows.lines())
        for secret in (DISTINCTIVE, "rangeStream", "src/kv", ROOT, "call_fix"):
            assert secret not in shown


# -------------------------------------------------------------------------- analyze


class TestAnalyze:
    def test_good_chain(self, tmp_path: Path, capture: Path) -> None:
        """A good chain gives rows and the consolidated file, and no finding."""
        write_records(tmp_path / "evidence", good_chain())
        out = tmp_path / CONSOLIDATED_NAME

        analysis = analyze(tmp_path / "evidence", capture, out)

        assert (True, out) == (analysis.ok, analysis.consolidated)
        assert analysis.rows is not None
        assert 1 == analysis.rows.chains_recovered_first_correction
        assert 2 == len(out.read_text().splitlines())

    def test_any_finding_fails_without_file_or_rows(self, tmp_path: Path, capture: Path) -> None:
        """An invalid record fails the analysis: no rows, no consolidated file."""
        initial, fix = good_chain()
        fix["payload"]["bytes"] += 1
        write_records(tmp_path / "evidence", [initial, fix])
        out = tmp_path / CONSOLIDATED_NAME

        analysis = analyze(tmp_path / "evidence", capture, out)

        assert (False, None, None) == (analysis.ok, analysis.rows, analysis.consolidated)
        assert ["exact_evidence.length"] == codes(analysis.findings)
        assert not out.exists()

    def test_overwrite_is_a_finding(self, tmp_path: Path, capture: Path) -> None:
        """A second analysis into the same file is refused, and the first file stays."""
        write_records(tmp_path / "evidence", good_chain())
        out = tmp_path / CONSOLIDATED_NAME
        assert analyze(tmp_path / "evidence", capture, out).ok
        before = out.read_bytes()

        again = analyze(tmp_path / "evidence", capture, out)

        assert ["exact_evidence.overwrite"] == codes(again.findings)
        assert before == out.read_bytes()

    def test_no_records_directory_although_calls_were_routed(self, tmp_path: Path) -> None:
        """Routed calls and no records directory: the enabled evidence is missing."""
        capture = write_capture(tmp_path / "capture", GOOD_TELEMETRY)
        (tmp_path / "evidence").mkdir(mode=0o700)

        analysis = analyze(tmp_path / "evidence", capture, tmp_path / CONSOLIDATED_NAME)

        assert ["exact_evidence.missing"] == codes(analysis.findings)
        assert "2 routed call(s)" in analysis.findings[0].message

    def test_nothing_routed_nothing_recorded(self, tmp_path: Path) -> None:
        """No routed call and no records directory: complete, zero rows."""
        capture = write_capture(tmp_path / "capture", [NO_HPATCH, NO_HPATCH])
        (tmp_path / "evidence").mkdir(mode=0o700)

        analysis = analyze(tmp_path / "evidence", capture, tmp_path / CONSOLIDATED_NAME)

        assert analysis.ok
        assert analysis.rows is not None
        assert (0, 0, True) == (
            analysis.rows.routed_calls,
            analysis.rows.retained_records,
            analysis.rows.complete,
        )
        assert "" == (tmp_path / CONSOLIDATED_NAME).read_text()


# ------------------------------------------------------------------------------ CLI


class TestCli:
    def _args(self, tmp_path: Path, capture: Path) -> list[str]:
        out = tmp_path / "out" / CONSOLIDATED_NAME
        evidence = tmp_path / "evidence"
        return [
            "exact-evidence",
            "analyze",
            "--records",
            str(evidence),
            "--capture",
            str(capture),
            "--out",
            str(out),
        ]

    def test_rows_without_evidence_text(
        self, tmp_path: Path, capture: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Text and JSON output give the rows and never a payload line, report, diagnostic,
        session or call."""
        write_records(tmp_path / "evidence", good_chain())
        args = self._args(tmp_path, capture)

        assert 0 == main(args)
        text = capsys.readouterr()
        (tmp_path / "out" / CONSOLIDATED_NAME).unlink()
        assert 0 == main([*args, "--json"])
        printed = capsys.readouterr()

        document = json.loads(printed.out)
        assert (True, 4, 2) == (
            document["ok"],
            document["rows"]["fragments_checked"],
            document["rows"]["fragments_found"],
        )
        assert "2 of 2 routed calls (complete)" in text.out
        for output in (text.out, text.err, printed.out, printed.err):
            for secret in (
                DISTINCTIVE,
                "rangeStream",
                "Success.",
                "hpatch rejected",
                ROOT,
                "call_fix",
            ):
                assert secret not in output

    def test_findings_exit_1(
        self, tmp_path: Path, capture: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Every finding is printed, by code and file, and the exit status is 1."""
        initial, fix = good_chain()
        initial["headers"] = {"authorization": "Bearer x"}
        fix["payload"]["sha256"] = hashlib.sha256(b"x").hexdigest()
        write_records(tmp_path / "evidence", [initial, fix])

        assert 1 == main([*self._args(tmp_path, capture), "--json"])
        printed = capsys.readouterr()

        document = json.loads(printed.out)
        assert (False, None) == (document["ok"], document["rows"])
        assert ["exact_evidence.digest", "exact_evidence.schema"] == sorted(
            f["code"] for f in document["findings"]
        )
        assert "[exact_evidence.digest]" in printed.err
        assert "unknown field(s): headers" in printed.err
        assert DISTINCTIVE not in printed.out + printed.err


def test_record_equipment_matches_the_published_name() -> None:
    """The test's records are named as the router names them (exchange, call digest)."""
    data = good_chain()[1]

    assert f"2-{hashlib.sha256(b'call_fix').hexdigest()[:16]}.json" == record_name(
        data["exchange"], data["call"]
    )


class TestSchemaFile:
    def _validator(self) -> jsonschema.Draft202012Validator:
        schema = json.loads((SCHEMA_DIR / f"{RECORD_SCHEMA}.schema.json").read_text())
        return jsonschema.Draft202012Validator(schema)

    def test_records_match_the_published_schema(self) -> None:
        """The records the equipment writes are what the generated schema describes."""
        validator = self._validator()

        assert [[], []] == [list(validator.iter_errors(d)) for d in good_chain()]

    def test_schema_refuses_extra_keys_and_bad_digests(self) -> None:
        """The schema, like the reader, refuses an unknown key and a non-hex digest."""
        data = good_chain()[0]
        data["headers"] = {}
        data["payload"]["sha256"] = "X" * 64

        errors = sorted(str(e.message) for e in self._validator().iter_errors(data))

        assert 2 == len(errors)
        assert any("headers" in e for e in errors)
