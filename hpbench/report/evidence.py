"""The provider-response evidence table: every retained provider attempt, row by row.

Each row comes from one schema-6 provider record: how the attempt ended, whether it
carried usage, the cached count kept apart from a cached count that was missing,
null or invalid (or unavailable because the attempt had no usage at all), and the
models the provider reported. The provider's request id is never copied.

The rows are then reconciled with the router's own snapshot: the attempt count,
the cached-count states, the explicit cached sum and the per-model attempt counts
must agree. Nothing is filled in from the snapshot's counters when the records
cannot be read: the table says so instead.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from hpbench.capture.models import ClientRecord, ProviderRecord, UsageState
from hpbench.capture.validator import iter_records
from hpbench.errors import ContractError
from hpbench.report.figures import dig_count
from hpbench.rundir import METRICS_JSON

SNAPSHOT_NAME = METRICS_JSON
RECORDS_DIR = "capture"
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


def _model_name(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    msg = "a model name is neither a string nor null"
    raise ValueError(msg)


def _snapshot_models(snapshot: Any) -> ModelCounts | None:
    models = snapshot.get("models") if isinstance(snapshot, dict) else None
    if not isinstance(models, list):
        return None
    counts: ModelCounts = {}
    for entry in models:
        if not isinstance(entry, dict):
            return None
        try:
            key = (
                str(entry.get("role")),
                _model_name(entry.get("request_model")),
                _model_name(entry.get("response_model")),
                _model_name(entry.get("header_model")),
            )
        except ValueError:
            return None
        counts[key] = (dig_count(entry, ("attempts",)), dig_count(entry, ("attempts_with_usage",)))
    return counts


def reconcile(rows: list[dict[str, Any]], snapshot: Any) -> list[str]:
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
        said = dig_count(snapshot, path)
        if said != from_rows:
            shown = "nothing" if said is None else said
            problems.append(f"$.{'.'.join(path)}: snapshot says {shown}, records {from_rows}")
    models = _snapshot_models(snapshot)
    if models is None:
        problems.append("$.models: snapshot has no readable models table")
    elif models != _model_counts(rows):
        problems.append("$.models: provider-reported models differ from the records")
    return problems


def _read_snapshot(path: Path) -> tuple[Any, str | None]:
    try:
        with path.open(encoding="utf-8") as stream:
            return json.load(stream), None
    except FileNotFoundError:
        return None, "no snapshot"
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"snapshot unreadable: {exc}"


def router_evidence(router_dir: Path) -> dict[str, Any]:
    """One router's provider rows and their reconciliation with its snapshot."""
    rows, why = read_rows(router_dir / RECORDS_DIR)
    snapshot, snapshot_problem = _read_snapshot(router_dir / SNAPSHOT_NAME)
    problems: list[str] = []
    if rows is None:
        problems.append(f"no rows: {why}")
    if snapshot_problem is not None:
        problems.append(snapshot_problem)
    elif rows is not None:
        problems += reconcile(rows, snapshot)
    return {
        "rows": rows,
        "unavailable": why,
        "reconciled": not problems,
        "problems": problems,
    }
