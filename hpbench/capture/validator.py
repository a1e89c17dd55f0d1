"""Validate one arm's capture: its records, its snapshot, and what Codex reported.

:func:`validate_capture` is the library form of ``hpbench capture validate``. It never
raises for bad evidence; every problem becomes a :class:`~hpbench.findings.Finding` in the
returned :class:`CaptureReport`. It raises :class:`ValueError` only for a contradictory
request (for example ``--arm control`` with ``--expect-mode hpatch``).

Order of work: the snapshot is read and the arm is bound to its configuration; the record
files are streamed (in chunks, optionally in worker processes); then the snapshot is
reconciled with what the records add up to, and each measured root thread with its Codex
stream. A report is labelled only when the binding holds.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import structlog

from hpbench._convert import structure
from hpbench.capture import codes
from hpbench.capture._converter import CONVERTER
from hpbench.capture._scan import (
    CHUNK_BYTES,
    FINDING_CAP,
    ChunkResult,
    FindingSink,
    Merger,
    chunk_specs,
    scan_chunk,
)
from hpbench.capture._totals import model_order, shape_order
from hpbench.capture.models import (
    RECORD_CLASSES,
    RECORD_SCHEMA_VERSION,
    SNAPSHOT_SCHEMA,
    MetricsSnapshot,
    Protocol,
    Record,
    RouterMode,
)
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.rundir import Arm

RECORD_GLOB = "*.jsonl"
"""Record files inside a ``--capture-output`` directory, read in name order."""


@attrs.frozen
class Binding:
    """The router configuration an arm must have been captured with."""

    arm: Arm
    mode: RouterMode
    protocol: Protocol

    @property
    def label(self) -> str:
        """How reports name the arm once the binding is proven."""
        if self.arm is Arm.CONTROL:
            return "control (passthrough/native)"
        return f"hpatch ({self.mode.value}/{self.protocol.value})"


def expected_binding(
    arm: Arm | str,
    *,
    expect_mode: RouterMode | str | None = None,
    expect_protocol: Protocol | str | None = None,
) -> Binding:
    """The configuration ``arm`` must show.

    ``control`` is always passthrough/native. ``hpatch`` is Hpatch mode with
    ``expect_protocol`` (native when not given).

    Raises:
        ValueError: when the expectation contradicts the arm.
    """
    arm = Arm(arm)
    mode = RouterMode(expect_mode) if expect_mode is not None else None
    protocol = Protocol(expect_protocol) if expect_protocol is not None else None
    if arm is Arm.CONTROL:
        if mode not in (None, RouterMode.PASSTHROUGH) or protocol not in (None, Protocol.NATIVE):
            msg = "the control arm is passthrough/native; drop --expect-mode/--expect-protocol"
            raise ValueError(msg)
        return Binding(arm, RouterMode.PASSTHROUGH, Protocol.NATIVE)
    if mode not in (None, RouterMode.HPATCH):
        msg = "the hpatch arm runs the router in hpatch mode; --expect-mode must be hpatch"
        raise ValueError(msg)
    return Binding(arm, RouterMode.HPATCH, protocol or Protocol.NATIVE)


@attrs.frozen
class CodexThread:
    """What one ``codex exec --json`` stream reported for its thread."""

    file: str
    thread_id: str | None
    usage: Mapping[str, int] | None


@attrs.frozen
class CaptureReport:
    """The outcome of validating one arm's capture.

    ``ok`` is true exactly when there is no finding. ``label`` is set only when the capture
    is bound to the arm's configuration. ``snapshot`` is the structured snapshot when it
    could be read; the summary's figures are the snapshot's own values.
    """

    arm: Arm
    expected: Binding
    label: str | None
    records_dir: str
    snapshot_path: str
    files: tuple[str, ...]
    raw_records: int
    findings: tuple[Finding, ...]
    suppressed: Mapping[str, int]
    snapshot: MetricsSnapshot | None
    codex: tuple[CodexThread, ...]

    @property
    def ok(self) -> bool:
        """No finding at all."""
        return not self.findings

    def codes(self) -> set[str]:
        """The distinct finding codes."""
        return {finding.code for finding in self.findings}

    def summary(self) -> dict[str, Any] | None:
        """The snapshot's totals (its own values, not recomputed), or None without one."""
        if self.snapshot is None:
            return None
        data: dict[str, Any] = CONVERTER.unstructure(self.snapshot)
        return {
            "router": data["router"],
            "requests": data["requests"],
            "usage": data["usage"],
            "savings": data["savings"],
            "tools": data["tools"],
            "hpatch": data["hpatch"],
            "models": data["models"],
        }

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object."""
        return {
            "ok": self.ok,
            "arm": self.arm.value,
            "expected": {
                "mode": self.expected.mode.value,
                "protocol": self.expected.protocol.value,
            },
            "label": self.label,
            "records": self.records_dir,
            "snapshot": self.snapshot_path,
            "files": list(self.files),
            "raw_records": self.raw_records,
            "findings": [finding.to_json() for finding in self.findings],
            "suppressed": dict(self.suppressed),
            "summary": self.summary(),
        }


# ------------------------------------------------------------------------ loading


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        msg = "duplicate key in object"
        raise ValueError(msg)
    return result


def _read_snapshot(path: Path, sink: FindingSink) -> tuple[dict[str, Any], MetricsSnapshot] | None:
    name = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        sink.add(codes.SNAPSHOT_MISSING, "no metrics snapshot here", file=name)
        return None
    except OSError as exc:
        sink.add(codes.SNAPSHOT_MISSING, f"cannot read the snapshot: {exc}", file=name)
        return None
    try:
        data = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
    except (ValueError, RecursionError) as exc:
        sink.add(codes.SNAPSHOT_SYNTAX, f"not JSON: {exc}", file=name)
        return None
    if not isinstance(data, dict):
        sink.add(codes.SNAPSHOT_SYNTAX, "the snapshot must be a JSON object", file=name, field="$")
        return None
    schema = data.get("schema")
    if schema != SNAPSHOT_SCHEMA or type(schema) is not str:
        shown = "missing" if "schema" not in data else json.dumps(schema)
        sink.add(
            codes.SCHEMA_VERSION,
            f"schema is {shown}; this validator reads {SNAPSHOT_SCHEMA} only",
            file=name,
            field="$.schema",
        )
        return None
    capture = data.get("capture")
    version = capture.get("record_schema_version") if isinstance(capture, dict) else None
    if type(version) is not int or version != RECORD_SCHEMA_VERSION:
        sink.add(
            codes.SCHEMA_VERSION,
            f"capture.record_schema_version is {json.dumps(version)}; records must be "
            f"schema-{RECORD_SCHEMA_VERSION}",
            file=name,
            field="$.capture.record_schema_version",
        )
        return None
    try:
        snapshot = structure(
            CONVERTER, data, MetricsSnapshot, source=name, code=codes.SNAPSHOT_SCHEMA
        )
    except ContractError as exc:
        for finding in exc.findings:
            sink.add_finding(finding)
        return None
    return data, snapshot


def load_snapshot(path: Path | str) -> MetricsSnapshot:
    """Read a ``/api/metrics`` snapshot file.

    Raises:
        ContractError: when the file is missing, not JSON, of another schema, or does not
            match :class:`~hpbench.capture.models.MetricsSnapshot`.
    """
    sink = FindingSink(cap=1000)
    loaded = _read_snapshot(Path(path), sink)
    if loaded is None:
        raise ContractError(f"{path}: not a usable metrics snapshot", sink.findings)
    return loaded[1]


def record_files(directory: Path | str) -> list[Path]:
    """The record files of a capture directory, in the order they are read."""
    return sorted(Path(directory).glob(RECORD_GLOB))


def iter_records(directory: Path | str) -> Iterator[tuple[Path, int, Record]]:
    """Yield ``(file, line, record)`` for every record, structured as attrs classes.

    Streams one line at a time. Meant for notebooks and tests; it checks each record
    against the contract but none of the cross-record rules (use :func:`validate_capture`).

    Raises:
        ContractError: at the first line that is not a record of the contract.
    """
    for path in record_files(directory):
        with path.open("rb") as stream:
            for line_no, raw in enumerate(stream, start=1):
                try:
                    value = json.loads(raw)
                except (ValueError, RecursionError) as exc:
                    finding = Finding(
                        code=codes.RECORD_SYNTAX, message=str(exc), file=str(path), line=line_no
                    )
                    raise ContractError(f"{path}:{line_no}: not JSON", [finding]) from None
                kind = value.get("kind") if isinstance(value, dict) else None
                cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
                if cls is None:
                    finding = Finding(
                        code=codes.RECORD_SCHEMA,
                        message="not a record of a known kind",
                        file=str(path),
                        line=line_no,
                        field="$.kind",
                    )
                    raise ContractError(f"{path}:{line_no}: not a record", [finding])
                try:
                    record = structure(
                        CONVERTER, value, cls, source=str(path), code=codes.RECORD_SCHEMA
                    )
                except ContractError as exc:
                    findings = [attrs.evolve(f, line=line_no) for f in exc.findings]
                    raise ContractError(exc.summary, findings) from None
                yield path, line_no, record


# ---------------------------------------------------------------------- Codex JSONL


_CODEX_TO_CAPTURE = (
    ("input_tokens", "input_tokens"),
    ("cached_input_tokens", "cached_input_tokens"),
    ("cache_write_input_tokens", "cache_write_input_tokens"),
    ("output_tokens", "output_tokens"),
    ("reasoning_output_tokens", "reasoning_tokens"),
)


def read_codex_thread(path: Path | str, sink: FindingSink | None = None) -> CodexThread:
    """The thread id and thread-total usage of one ``codex exec --json`` stream.

    The thread id comes from ``thread.started``; the usage is that of the last
    ``turn.completed`` (Codex reports the thread total there, not the turn's).
    """
    sink = sink if sink is not None else FindingSink()
    name = str(path)
    thread_id: str | None = None
    usage: dict[str, int] | None = None
    try:
        stream = Path(path).open("rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        sink.add(codes.CODEX_SYNTAX, f"cannot read the Codex stream: {exc}", file=name)
        return CodexThread(name, None, None)
    with stream:
        for line_no, raw in enumerate(stream, start=1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except (ValueError, RecursionError):
                sink.add(codes.CODEX_SYNTAX, "not a JSON event", file=name, line=line_no)
                continue
            if not isinstance(event, dict):
                continue
            kind = event.get("type")
            if kind == "thread.started" and thread_id is None:
                value = event.get("thread_id")
                if isinstance(value, str) and value:
                    thread_id = value
            elif kind == "turn.completed":
                reported = event.get("usage")
                known = (
                    {k: reported[k] for k, _ in _CODEX_TO_CAPTURE if k in reported}
                    if isinstance(reported, dict)
                    else None
                )
                if known is not None and all(type(v) is int and v >= 0 for v in known.values()):
                    usage = known
                else:
                    sink.add(
                        codes.CODEX_SYNTAX,
                        "turn.completed usage is not an object of non-negative token counts",
                        file=name,
                        line=line_no,
                        field="$.usage",
                    )
    if thread_id is None:
        sink.add(codes.CODEX_SYNTAX, "no thread.started event names the thread", file=name)
    return CodexThread(name, thread_id, usage)


def _reconcile_codex(
    threads: Sequence[CodexThread], totals: Mapping[str, Any], sink: FindingSink
) -> None:
    by_thread: dict[str, CodexThread] = {}
    for thread in threads:
        if thread.thread_id is not None:
            by_thread[thread.thread_id] = thread  # a later stream (a resume) wins
    captured = {t["thread_id"]: t for t in totals["threads"]}
    for thread_id, thread in by_thread.items():
        mine = captured.get(thread_id)
        if mine is None:
            sink.add(
                codes.RECONCILE_CODEX,
                f"Codex thread {thread_id} has no traffic in the capture",
                file=thread.file,
            )
            continue
        if mine["role"] != "root":
            sink.add(
                codes.RECONCILE_CODEX,
                f"Codex thread {thread_id} is a child thread in the capture, not a root",
                file=thread.file,
            )
            continue
        if thread.usage is None:
            sink.add(
                codes.CODEX_UNREPORTED,
                f"Codex reported no turn.completed usage for thread {thread_id}; its captured "
                "usage cannot be proven",
                file=thread.file,
            )
            continue
        delivered = mine["delivered_usage"]
        for codex_key, capture_key in _CODEX_TO_CAPTURE:
            if codex_key not in thread.usage:
                continue
            if thread.usage[codex_key] != delivered[capture_key]:
                sink.add(
                    codes.RECONCILE_CODEX,
                    f"Codex reported {codex_key}={thread.usage[codex_key]} for thread "
                    f"{thread_id}; the provider usage delivered to it sums to "
                    f"{delivered[capture_key]}",
                    file=thread.file,
                    field=f"$.usage.{codex_key}",
                )
    for thread_id, mine in captured.items():
        if mine["role"] == "root" and thread_id not in by_thread:
            sink.add(
                codes.RECONCILE_CODEX,
                f"root thread {thread_id} of the capture matches none of the Codex streams",
            )


# -------------------------------------------------------------- snapshot vs records

_SECTION_CODES = {
    "requests": codes.RECONCILE_ATTEMPTS,
    "usage": codes.RECONCILE_USAGE,
    "savings": codes.RECONCILE_SAVINGS,
    "tools": codes.RECONCILE_TOOLS,
    "hpatch": codes.RECONCILE_HPATCH,
    "models": codes.RECONCILE_MODELS,
    "threads": codes.RECONCILE_THREADS,
}


def _list_key(path: str, item: Mapping[str, Any]) -> tuple[Any, ...]:
    if path.endswith("threads"):
        return (item.get("thread_id"),)
    if path.endswith("models"):
        return (
            item.get("role"),
            item.get("request_model"),
            item.get("response_model"),
            item.get("header_model"),
        )
    return (item.get("item_type"), item.get("namespace"), item.get("name"))


def _order_key(path: str, key: tuple[Any, ...]) -> tuple[Any, ...]:
    if path.endswith("threads"):
        return key
    if path.endswith("models"):
        return model_order(key)
    return shape_order(key)


def _compare(
    said: Any, derived: Any, path: str, code: str, *, sink: FindingSink, file: str
) -> None:
    if isinstance(derived, dict):
        for key, value in derived.items():
            leaf_code = code
            if code == codes.RECONCILE_THREADS and key in ("usage", "delivered_usage"):
                leaf_code = codes.RECONCILE_USAGE
            _compare(said[key], value, f"{path}.{key}", leaf_code, sink=sink, file=file)
        return
    if isinstance(derived, list):
        mine = {_list_key(path, item): item for item in derived}
        theirs = {_list_key(path, item): item for item in said}
        for key, item in mine.items():
            if key not in theirs:
                sink.add(
                    code,
                    f"the records have an entry {list(key)} the snapshot lacks",
                    file=file,
                    field=path,
                )
                continue
            index = list(theirs).index(key)
            _compare(theirs[key], item, f"{path}[{index}]", code, sink=sink, file=file)
        for key in theirs:
            if key not in mine:
                sink.add(
                    code,
                    f"the snapshot has an entry {list(key)} no record supports",
                    file=file,
                    field=path,
                )
        order = [_order_key(path, key) for key in theirs]
        if len(theirs) != len(said) or order != sorted(order):
            sink.add(
                code,
                "entries are repeated or not in contract order",
                file=file,
                field=path,
            )
        return
    if said != derived or type(said) is not type(derived):
        sink.add(
            code,
            f"the snapshot says {json.dumps(said)}; the records add up to {json.dumps(derived)}",
            file=file,
            field=path,
        )


def _reconcile_snapshot(
    data: Mapping[str, Any], merger: Merger, sink: FindingSink, file: str
) -> dict[str, Any]:
    totals = merger.totals
    health = data["capture"]
    for key, code, what in (
        ("write_failures", codes.WRITE_FAILURE, "record writes failed"),
        ("skipped_requests", codes.SKIPPED, "client requests were not captured"),
        ("dropped_exchange_detail", codes.DROPPED_DETAIL, "exchanges lost detail"),
        ("capture_errors", codes.ERROR, "capture errors occurred"),
    ):
        if health[key]:
            sink.add(code, f"{health[key]} {what}", file=file, field=f"$.capture.{key}")
    counted = {
        "records_written": merger.raw_records,
        "client_records": totals.kinds["client"],
        "provider_records": totals.kinds["provider"],
        "exchange_records": totals.kinds["exchange"],
        "error_records": totals.kinds["error"],
    }
    for key, value in counted.items():
        if health[key] != value:
            sink.add(
                codes.RECONCILE_RECORD_COUNT,
                f"capture health says {key}={health[key]}, the record files hold {value}",
                file=file,
                field=f"$.capture.{key}",
            )
    if totals.dropped_detail > health["dropped_exchange_detail"]:
        sink.add(
            codes.RECONCILE_RECORD_COUNT,
            f"{totals.dropped_detail} exchange records dropped detail, capture health counts "
            f"{health['dropped_exchange_detail']}",
            file=file,
            field="$.capture.dropped_exchange_detail",
        )
    derived = totals.aggregates_json()
    for section, code in _SECTION_CODES.items():
        _compare(data[section], derived[section], f"$.{section}", code, sink=sink, file=file)
    return derived


# ------------------------------------------------------------------------ validate


def _scan(
    files: list[tuple[str, str]],
    *,
    mode: str | None,
    protocol: str | None,
    jobs: int,
    chunk_bytes: int,
) -> Merger:
    merger = Merger(mode=mode, protocol=protocol)
    specs = chunk_specs(files, mode=mode, protocol=protocol, chunk_bytes=chunk_bytes)
    results: Iterable[ChunkResult]
    if jobs <= 1 or len(specs) <= 1:
        results = (scan_chunk(spec) for spec in specs)
        for result in results:
            merger.merge(result)
    else:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        with context.Pool(processes=jobs) as pool:
            for result in pool.imap(scan_chunk, specs, chunksize=1):
                merger.merge(result)
    merger.finish()
    return merger


def default_jobs() -> int:
    """Worker processes used by default: one per CPU, at most 2."""
    return max(1, min(2, os.cpu_count() or 1))


def validate_capture(
    records: Path | str,
    snapshot: Path | str,
    *,
    arm: Arm | str,
    expect_mode: RouterMode | str | None = None,
    expect_protocol: Protocol | str | None = None,
    codex_jsonl: Sequence[Path | str] = (),
    jobs: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> CaptureReport:
    """Validate one arm's capture and return a :class:`CaptureReport`.

    Args:
        records: the ``--capture-output`` directory (``*.jsonl`` record files).
        snapshot: the ``/api/metrics`` snapshot file.
        arm: ``control`` or ``hpatch``.
        expect_mode: the router mode the arm must show (hpatch only; default hpatch).
        expect_protocol: the protocol the arm must show (hpatch only; default native).
        codex_jsonl: the ``codex exec --json`` streams of the measured root threads;
            when given, each root thread's delivered provider usage must equal Codex's
            last ``turn.completed`` usage, and every root thread must have a stream.
        jobs: worker processes for the record scan (default :func:`default_jobs`).
        chunk_bytes: chunk size of the record scan.

    Raises:
        ValueError: when the expectation contradicts the arm.
    """
    binding = expected_binding(arm, expect_mode=expect_mode, expect_protocol=expect_protocol)
    sink = FindingSink(cap=FINDING_CAP)
    snapshot_path = Path(snapshot)
    snapshot_name = str(snapshot_path)
    loaded = _read_snapshot(snapshot_path, sink)
    data, structured = loaded if loaded is not None else (None, None)

    # Binding first: self-consistent evidence from the wrong configuration is never labelled.
    if structured is not None:
        router = structured.router
        if router.mode is not binding.mode:
            sink.add(
                codes.BINDING,
                f"the {binding.arm.value} arm must run {binding.mode.value}; the snapshot says "
                f"{router.mode.value}",
                file=snapshot_name,
                field="$.router.mode",
            )
        if router.protocol is not binding.protocol:
            sink.add(
                codes.BINDING,
                f"the {binding.arm.value} arm must use {binding.protocol.value}; the snapshot "
                f"says {router.protocol.value}",
                file=snapshot_name,
                field="$.router.protocol",
            )
        if binding.arm is Arm.CONTROL and router.mentor:
            sink.add(
                codes.BINDING,
                "the control router must disable Mentor Handoff",
                file=snapshot_name,
                field="$.router.mentor",
            )
    bound_mode = structured.router.mode if structured is not None else binding.mode
    bound_protocol = structured.router.protocol if structured is not None else binding.protocol

    directory = Path(records)
    paths = record_files(directory) if directory.is_dir() else []
    files = [(str(path), str(path)) for path in paths]
    merger = _scan(
        files,
        mode=bound_mode.value,
        protocol=bound_protocol.value,
        jobs=jobs if jobs is not None else default_jobs(),
        chunk_bytes=chunk_bytes,
    )
    if not directory.is_dir():
        sink.add(codes.EMPTY, "no capture directory here", file=str(directory))
    elif not paths:
        sink.add(codes.EMPTY, f"no {RECORD_GLOB} record files", file=str(directory))
    elif merger.raw_records == 0:
        sink.add(codes.EMPTY, "the record files are empty", file=str(directory))
    elif merger.totals.kinds["client"] == 0:
        sink.add(codes.EMPTY, "the capture holds no client request", file=str(directory))
    sink.merge(merger.sink)

    derived: dict[str, Any] | None = None
    if data is not None:
        derived = _reconcile_snapshot(data, merger, sink, snapshot_name)
    codex_threads: list[CodexThread] = []
    if codex_jsonl:
        codex_threads = [read_codex_thread(path, sink) for path in codex_jsonl]
        _reconcile_codex(codex_threads, derived or merger.totals.aggregates_json(), sink)

    label = None if codes.BINDING in sink.counts else binding.label
    # A logger per call, so a configuration made later (or by a test) applies to it.
    structlog.get_logger("hpbench.capture").info(
        "capture validated",
        records=str(directory),
        arm=binding.arm.value,
        raw_records=merger.raw_records,
        findings=sum(sink.counts.values()),
        label=label,
    )
    return CaptureReport(
        arm=binding.arm,
        expected=binding,
        label=label,
        records_dir=str(directory),
        snapshot_path=snapshot_name,
        files=tuple(name for _, name in files),
        raw_records=merger.raw_records,
        findings=tuple(sink.findings),
        suppressed=sink.suppressed(),
        snapshot=structured,
        codex=tuple(codex_threads),
    )
