"""Validate one arm's capture: its records, its snapshot, and what Codex reported.

:func:`validate_capture` is the library form of ``hpbench capture validate``. It never
raises for bad evidence; every problem becomes a :class:`~hpbench.findings.Finding` in the
returned :class:`CaptureReport`. It raises :class:`ValueError` only for a contradictory
request (for example ``--arm control`` with ``--expect-mode hpatch``).

Order of work: the snapshot is read and the arm is bound to its configuration; the record
files are streamed once, in one process (:mod:`hpbench.capture._stream`); then the
snapshot is reconciled with what the records add up to (:mod:`hpbench.capture._reconcile`),
and each measured root thread with its Codex stream (:mod:`hpbench.capture._codex`). A
report is labelled only when the binding holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import structlog

from hpbench._convert import structure
from hpbench.capture import codes
from hpbench.capture._codex import CodexThread, read_codex_thread, reconcile_codex
from hpbench.capture._converter import CONVERTER
from hpbench.capture._decode import decode_record, loads_unique, to_attrs
from hpbench.capture._reconcile import reconcile_snapshot
from hpbench.capture._sink import FindingSink
from hpbench.capture._stream import RecordStream
from hpbench.capture.children import ModelCheck, ModelExpectation, read_proofs
from hpbench.capture.models import (
    RECORD_SCHEMA_VERSION,
    SNAPSHOT_SCHEMA,
    MetricsSnapshot,
    Protocol,
    Record,
    RouterMode,
)
from hpbench.capture.prefix import PrefixCheck, PrefixRow, observations_path, read_observations
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
        return f"{self.arm.value} ({self.mode.value}/{self.protocol.value})"


def expected_binding(
    arm: Arm | str,
    *,
    expect_mode: RouterMode | str | None = None,
    expect_protocol: Protocol | str | None = None,
) -> Binding:
    """The configuration ``arm`` must show (spec 002, hpbench.modes.ARM_ROUTERS).

    ``control`` is always passthrough/native, ``native`` Hpatch/native and ``ctp``
    Hpatch/CTP2; ``hpatch`` and ``mentor`` are Hpatch mode with ``expect_protocol``
    (native when not given, as for records that predate the protocol setting).

    Raises:
        ValueError: when the expectation contradicts the arm.
    """
    from hpbench.modes import ARM_ROUTERS  # noqa: PLC0415 - modes imports the capture models

    arm = Arm(arm)
    mode = RouterMode(expect_mode) if expect_mode is not None else None
    protocol = Protocol(expect_protocol) if expect_protocol is not None else None
    router = ARM_ROUTERS[arm]
    fixed_mode = RouterMode(router.mode)
    if mode not in (None, fixed_mode):
        msg = f"the {arm.value} arm runs the router in {router.mode} mode; drop --expect-mode"
        raise ValueError(msg)
    if router.protocol is not None:
        fixed = Protocol(router.protocol)
        if protocol not in (None, fixed):
            msg = f"the {arm.value} arm is {router.mode}/{router.protocol}; drop --expect-protocol"
            raise ValueError(msg)
        return Binding(arm, fixed_mode, fixed)
    return Binding(arm, fixed_mode, protocol or Protocol.NATIVE)


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
    # The cache-prefix table's rows (hpbench.capture.prefix); every status is
    # "unavailable" when the router retained no observation.
    cache_prefix: tuple[PrefixRow, ...] = ()

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
        data = loads_unique(raw)
    except (ValueError, RecursionError) as exc:
        sink.add(codes.SNAPSHOT_SYNTAX, f"not JSON: {exc}", file=name)
        return None
    snapshot = _snapshot_of(data, name, sink)
    return None if snapshot is None else (data, snapshot)


def _snapshot_of(data: Any, name: str, sink: FindingSink) -> MetricsSnapshot | None:
    """The snapshot a decoded document is, or None with the findings in ``sink``."""
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
        return structure(CONVERTER, data, MetricsSnapshot, source=name, code=codes.SNAPSHOT_SCHEMA)
    except ContractError as exc:
        for finding in exc.findings:
            sink.add_finding(finding)
        return None


def snapshot_from_json(data: Any, *, source: str) -> MetricsSnapshot:
    """A snapshot document already decoded (e.g. kept inside another file), checked as
    :func:`load_snapshot` checks a file.

    Raises:
        ContractError: naming every problem, as for a file.
    """
    sink = FindingSink(cap=1000)
    snapshot = _snapshot_of(data, source, sink)
    if snapshot is None:
        raise ContractError(f"{source}: not a usable metrics snapshot", sink.findings)
    return snapshot


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

    Streams one line at a time, each decoded as :func:`validate_capture` decodes it. Meant
    for notebooks and tests; it checks each record against the contract but none of the
    rules that span records (use :func:`validate_capture`).

    Raises:
        ContractError: at the first line that is not a record of the contract.
    """
    for path in record_files(directory):
        with path.open("rb") as stream:
            for line_no, raw in enumerate(stream, start=1):
                sink = FindingSink()
                body = raw[:-1] if raw.endswith(b"\n") else raw
                record = decode_record(body, sink, file=str(path), line=line_no)
                if record is None:
                    raise ContractError(f"{path}:{line_no}: not a record", sink.findings)
                yield path, line_no, to_attrs(record)


# ------------------------------------------------------------------------ validate


def _bind(structured: MetricsSnapshot, binding: Binding, sink: FindingSink, file: str) -> None:
    """Hold the snapshot's router configuration to the arm's."""
    router = structured.router
    arm = binding.arm.value
    if router.mode is not binding.mode:
        sink.add(
            codes.BINDING,
            f"the {arm} arm must run {binding.mode.value}; the snapshot says {router.mode.value}",
            file=file,
            field="$.router.mode",
        )
    if router.protocol is not binding.protocol:
        sink.add(
            codes.BINDING,
            f"the {arm} arm must use {binding.protocol.value}; the snapshot says "
            f"{router.protocol.value}",
            file=file,
            field="$.router.protocol",
        )
    if binding.arm is not Arm.MENTOR and router.mentor:
        # Spec 002: only the Mentor treatment enables Mentor Handoff.
        sink.add(
            codes.BINDING,
            f"the {arm} router must disable Mentor Handoff (only the mentor arm enables it)",
            file=file,
            field="$.router.mentor",
        )


def validate_capture(
    records: Path | str,
    snapshot: Path | str,
    *,
    arm: Arm | str,
    expect_mode: RouterMode | str | None = None,
    expect_protocol: Protocol | str | None = None,
    codex_jsonl: Sequence[Path | str] = (),
    models: ModelExpectation | None = None,
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
        models: the models the run configured for the arm; when given, every attempt is
            held to them and every child thread to a retained proof
            (:mod:`hpbench.capture.children`).

    Raises:
        ValueError: when the expectation contradicts the arm.
    """
    binding = expected_binding(arm, expect_mode=expect_mode, expect_protocol=expect_protocol)
    sink = FindingSink()
    snapshot_name = str(snapshot)
    loaded = _read_snapshot(Path(snapshot), sink)
    data, structured = loaded if loaded is not None else (None, None)
    # Binding first: self-consistent evidence from the wrong configuration is never labelled.
    if structured is not None:
        _bind(structured, binding, sink, snapshot_name)
        if models is not None and structured.router.mentor != (models.mentor is not None):
            sink.add(
                codes.BINDING,
                "the router's Mentor Handoff setting is not the run's "
                f"(the snapshot says mentor {str(structured.router.mentor).lower()})",
                file=snapshot_name,
                field="$.router.mentor",
            )
    router = structured.router if structured is not None else binding

    directory = Path(records)
    paths = record_files(directory) if directory.is_dir() else []
    watch = ModelCheck(models, sink) if models is not None else None
    prefix = PrefixCheck(sink, passthrough=router.mode is RouterMode.PASSTHROUGH)

    def see(record: Record, file: str, line: int) -> None:
        prefix.see(record, file, line)
        if watch is not None:
            watch.see(record, file, line)

    stream = RecordStream(sink, mode=router.mode, protocol=router.protocol, watch=see)
    for path in paths:
        stream.read(path)
    stream.finish()
    if not directory.is_dir():
        sink.add(codes.EMPTY, "no capture directory here", file=str(directory))
    elif not paths:
        sink.add(codes.EMPTY, f"no {RECORD_GLOB} record files", file=str(directory))
    elif stream.raw_records == 0:
        sink.add(codes.EMPTY, "the record files are empty", file=str(directory))
    elif stream.totals.kinds["client"] == 0:
        sink.add(codes.EMPTY, "the capture holds no client request", file=str(directory))

    derived = (
        reconcile_snapshot(data, stream, sink, snapshot_name)
        if data is not None
        else stream.totals.aggregates_json()
    )
    codex_threads = [read_codex_thread(path, sink) for path in codex_jsonl]
    if codex_threads:
        reconcile_codex(codex_threads, derived, sink)
    if watch is not None and paths:
        spawned = [child for thread in codex_threads for child in thread.spawned]
        watch.finish(read_proofs(directory, sink), spawned)

    prefix_rows = prefix.finish(
        read_observations(directory, sink) if paths else None, str(observations_path(directory))
    )

    label = None if codes.BINDING in sink.counts else binding.label
    # A logger per call, so a configuration made later (or by a test) applies to it.
    structlog.get_logger("hpbench.capture").info(
        "capture validated",
        records=str(directory),
        arm=binding.arm.value,
        raw_records=stream.raw_records,
        findings=sum(sink.counts.values()),
        label=label,
    )
    return CaptureReport(
        arm=binding.arm,
        expected=binding,
        label=label,
        records_dir=str(directory),
        snapshot_path=snapshot_name,
        files=tuple(str(path) for path in paths),
        raw_records=stream.raw_records,
        findings=tuple(sink.findings),
        suppressed=sink.suppressed(),
        snapshot=structured,
        codex=tuple(codex_threads),
        cache_prefix=prefix_rows,
    )


__all__ = [
    "RECORD_GLOB",
    "Binding",
    "CaptureReport",
    "CodexThread",
    "expected_binding",
    "iter_records",
    "load_snapshot",
    "read_codex_thread",
    "record_files",
    "validate_capture",
]
