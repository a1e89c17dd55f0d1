"""The provider-response evidence table: every retained provider attempt, row by row.

Each row comes from one schema-6 provider record: how the attempt ended, whether it
carried usage, the cached count kept apart from a cached count that was missing,
null or invalid (or unavailable because the attempt had no usage at all), and the
models the provider reported. The provider's request id is never copied.

The rows are then reconciled with the router's snapshot as the capture validator
read it (typed; this module never reads ``metrics.json`` itself): the attempt count,
the cached-count states, the explicit cached sum and the per-model attempt counts
must agree. Nothing is filled in from the snapshot's counters when the records
cannot be read: the table says so instead.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from hpbench.capture.models import ClientRecord, MetricsSnapshot, ProviderRecord, UsageState
from hpbench.capture.validator import iter_records
from hpbench.errors import ContractError
from hpbench.report.figures import snapshot_count
from hpbench.rundir import CAPTURE_DIR

RECORDS_DIR = CAPTURE_DIR
# The cached column of an attempt without usage: there is no count to be explicit about.
NO_USAGE = "unavailable"

ModelKey = tuple[str, str | None, str | None, str | None]


def _row(record: ProviderRecord, roles: dict[int, str]) -> dict[str, Any]:
    usage = record.usage if record.usage_state is UsageState.REPORTED else None
    return {
        "exchange": record.exchange,
        "attempt": record.attempt,
        "role": roles.get(record.exchange),
        "outcome": record.outcome.value,
        "http_status": record.http_status,
        "delivered": record.delivered,
        "usage_state": record.usage_state.value,
        "input_tokens": None if usage is None else usage.input_tokens,
        "cached_input_tokens": None if usage is None else usage.cached_input_tokens,
        "cached_input_state": NO_USAGE if usage is None else usage.cached_input_state.value,
        "cache_write_input_tokens": None if usage is None else usage.cache_write_input_tokens,
        "output_tokens": None if usage is None else usage.output_tokens,
        "reasoning_tokens": None if usage is None else usage.reasoning_tokens,
        "request_model": record.request_model,
        "response_model": record.response_model,
        "header_model": record.header_model,
    }


def read_rows(records_dir: Path) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The provider rows of a capture directory, or None and why they cannot be shown."""
    if not records_dir.is_dir():
        return None, "no capture directory"
    roles: dict[int, str] = {}
    rows: list[dict[str, Any]] = []
    try:
        for _, _, record in iter_records(records_dir):
            if isinstance(record, ClientRecord):
                roles[record.exchange] = record.thread.role.value
            elif isinstance(record, ProviderRecord):
                rows.append(_row(record, roles))
    except ContractError as exc:
        return None, f"records unreadable: {exc.summary}"
    except OSError as exc:
        return None, f"records unreadable: {exc.strerror or exc}"
    return rows, None


ModelCounts = dict[ModelKey, tuple[int | None, int | None]]


def _model_counts(rows: list[dict[str, Any]]) -> ModelCounts:
    attempts: Counter[ModelKey] = Counter()
    with_usage: Counter[ModelKey] = Counter()
    for row in rows:
        key = (str(row["role"]), row["request_model"], row["response_model"], row["header_model"])
        attempts[key] += 1
        with_usage[key] += row["usage_state"] == UsageState.REPORTED.value
    return {key: (attempts[key], with_usage[key]) for key in attempts}


def _snapshot_models(snapshot: MetricsSnapshot) -> ModelCounts:
    return {
        (entry.role.value, entry.request_model, entry.response_model, entry.header_model): (
            entry.attempts,
            entry.attempts_with_usage,
        )
        for entry in snapshot.models
    }


def reconcile(rows: list[dict[str, Any]], snapshot: MetricsSnapshot) -> list[str]:
    """Where the rows and the snapshot disagree; empty when they reconcile."""
    problems = []
    states = Counter(row["cached_input_state"] for row in rows)
    explicit_sum = sum(
        row["cached_input_tokens"] for row in rows if row["cached_input_state"] == "explicit"
    )
    expected = (
        (("requests", "provider_attempts"), len(rows)),
        (("usage", "cached_input_tokens"), explicit_sum),
        (("usage", "cached_input_explicit"), states["explicit"]),
        (("usage", "cached_input_missing"), states["missing"]),
        (("usage", "cached_input_null"), states["null"]),
        (("usage", "cached_input_invalid"), states["invalid"]),
    )
    for path, from_rows in expected:
        said = snapshot_count(snapshot, path)
        if said != from_rows:
            problems.append(f"$.{'.'.join(path)}: snapshot says {said}, records {from_rows}")
    if _snapshot_models(snapshot) != _model_counts(rows):
        problems.append("$.models: provider-reported models differ from the records")
    return problems


def router_evidence(router_dir: Path, snapshot: MetricsSnapshot | None) -> dict[str, Any]:
    """One router's provider rows and their reconciliation with its snapshot.

    ``snapshot`` is the one the capture validator read; None when it could not read it
    (the capture's findings say why), and then nothing is reconciled.
    """
    rows, why = read_rows(router_dir / RECORDS_DIR)
    problems: list[str] = []
    if rows is None:
        problems.append(f"no rows: {why}")
    if snapshot is None:
        problems.append("no usable snapshot (the capture findings say why)")
    elif rows is not None:
        problems += reconcile(rows, snapshot)
    return {
        "rows": rows,
        "unavailable": why,
        "reconciled": not problems,
        "problems": problems,
    }
