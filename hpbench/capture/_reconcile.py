"""The snapshot held against what the records add up to.

Every figure of a ``hpatch.capture.metrics.v4`` snapshot is a plain sum over the records,
so each one is recomputed (:class:`~hpbench.capture._totals.Totals`) and compared; a
difference names the snapshot field, what the snapshot says and what the records give.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hpbench.capture import codes
from hpbench.capture._sink import FindingSink
from hpbench.capture._stream import RecordStream
from hpbench.capture._totals import model_order, shape_order

SECTION_CODES = {
    "requests": codes.RECONCILE_ATTEMPTS,
    "usage": codes.RECONCILE_USAGE,
    "savings": codes.RECONCILE_SAVINGS,
    "tools": codes.RECONCILE_TOOLS,
    "hpatch": codes.RECONCILE_HPATCH,
    "models": codes.RECONCILE_MODELS,
    "threads": codes.RECONCILE_THREADS,
}
"""The finding code of a difference in each snapshot section."""

_HEALTH_FAILURES = (
    ("write_failures", codes.WRITE_FAILURE, "record writes failed"),
    ("skipped_requests", codes.SKIPPED, "client requests were not captured"),
    ("dropped_exchange_detail", codes.DROPPED_DETAIL, "exchanges lost detail"),
    ("capture_errors", codes.ERROR, "capture errors occurred"),
)


def _list_key(path: str, item: Mapping[str, Any]) -> tuple[Any, ...]:
    if path.endswith("rejection_causes"):
        return (item.get("cause"),)
    if path.endswith("rejection_signatures"):
        return (item.get("signature"),)
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
    if path.endswith(("threads", "rejection_causes", "rejection_signatures")):
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
        _compare_list(said, derived, path, code, sink=sink, file=file)
        return
    if said != derived or type(said) is not type(derived):
        sink.add(
            code,
            f"the snapshot says {json.dumps(said)}; the records add up to {json.dumps(derived)}",
            file=file,
            field=path,
        )


def _compare_list(
    said: list[Any], derived: list[Any], path: str, code: str, *, sink: FindingSink, file: str
) -> None:
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
        sink.add(code, "entries are repeated or not in contract order", file=file, field=path)


def reconcile_snapshot(
    data: Mapping[str, Any], stream: RecordStream, sink: FindingSink, file: str
) -> dict[str, Any]:
    """Check the snapshot ``data`` (already read as the contract) against the records;
    return the sections the records add up to."""
    totals = stream.totals
    health = data["capture"]
    for key, code, what in _HEALTH_FAILURES:
        if health[key]:
            sink.add(code, f"{health[key]} {what}", file=file, field=f"$.capture.{key}")
    counted = {
        "records_written": stream.raw_records,
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
    for section, code in SECTION_CODES.items():
        _compare(data[section], derived[section], f"$.{section}", code, sink=sink, file=file)
    return derived
