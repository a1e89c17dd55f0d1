"""Snapshot totals as plain sums over records.

:class:`Totals` takes records in their JSON form (dicts, already checked against the
contract) one at a time and renders the aggregate parts of a snapshot. The writer uses it
to serve ``/api/metrics``; the validator uses it to recompute what a snapshot must say.
Memory stays bounded by the number of open exchanges, threads, models and tool shapes,
not by the number of records.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

_USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cached_input_explicit",
    "cached_input_missing",
    "cached_input_null",
    "cached_input_invalid",
    "cache_write_missing",
    "reasoning_missing",
)
_HPATCH_KEYS = (
    "successes",
    "rejections",
    "corrections",
    "unmatched",
    "diagnostics",
    "carrier_tokens",
)
_TRANSPORT_KEYS = ("provider_stream_bytes", "client_stream_bytes", "router_commentary_bytes")
_COMPARISONS = ("request", "output", "output_text")


def _null_first_key(value: str | None) -> tuple[int, str]:
    return (0, "") if value is None else (1, value)


class UsageSum:
    """Running :class:`~hpbench.capture.models.UsageTotals`."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values = dict.fromkeys(_USAGE_KEYS, 0)

    def add(self, usage: JSON) -> None:
        """Add one attempt's reported usage."""
        values = self.values
        values["input_tokens"] += usage["input_tokens"]
        values["output_tokens"] += usage["output_tokens"]
        cached = usage["cached_input_tokens"]
        state = usage["cached_input_state"]
        values["cached_input_" + state] += 1
        if cached is not None:
            values["cached_input_tokens"] += cached
        write = usage["cache_write_input_tokens"]
        if write is None:
            values["cache_write_missing"] += 1
        else:
            values["cache_write_input_tokens"] += write
        reasoning = usage["reasoning_tokens"]
        if reasoning is None:
            values["reasoning_missing"] += 1
        else:
            values["reasoning_tokens"] += reasoning

    def to_json(self) -> JSON:
        """The totals as a JSON object."""
        return dict(self.values)


class _ComparisonSum:
    __slots__ = ("bytes", "tokens", "tokens_known")

    def __init__(self) -> None:
        self.bytes = [0, 0, 0]
        self.tokens = [0, 0, 0]
        self.tokens_known = True

    def add(self, comparison: JSON) -> None:
        self.bytes[0] += comparison["client_bytes"]
        self.bytes[1] += comparison["provider_bytes"]
        self.bytes[2] += comparison["savings_bytes"]
        client = comparison["client_tokens"]
        provider = comparison["provider_tokens"]
        savings = comparison["savings_tokens"]
        if client is None or provider is None or savings is None:
            self.tokens_known = False
            return
        self.tokens[0] += client
        self.tokens[1] += provider
        self.tokens[2] += savings

    def to_json(self) -> JSON:
        known = self.tokens_known
        return {
            "client_bytes": self.bytes[0],
            "provider_bytes": self.bytes[1],
            "savings_bytes": self.bytes[2],
            "client_tokens": self.tokens[0] if known else None,
            "provider_tokens": self.tokens[1] if known else None,
            "savings_tokens": self.tokens[2] if known else None,
        }


class _ThreadSum:
    __slots__ = ("attempts", "delivered", "ident", "requests", "usage")

    def __init__(self, thread: JSON) -> None:
        self.ident = (
            thread["thread_id"],
            thread["root_thread_id"],
            thread["parent_thread_id"],
            thread["role"],
        )
        self.requests = 0
        self.attempts = 0
        self.usage = UsageSum()
        self.delivered = UsageSum()

    def to_json(self) -> JSON:
        thread_id, root, parent, role = self.ident
        return {
            "thread_id": thread_id,
            "root_thread_id": root,
            "parent_thread_id": parent,
            "role": role,
            "logical_requests": self.requests,
            "provider_attempts": self.attempts,
            "usage": self.usage.to_json(),
            "delivered_usage": self.delivered.to_json(),
        }


def _add_shapes(into: dict[tuple[str, str | None, str], int], shapes: list[JSON]) -> None:
    for shape in shapes:
        key = (shape["item_type"], shape["namespace"], shape["name"])
        into[key] = into.get(key, 0) + shape["count"]


def shapes_json(shapes: dict[tuple[str, str | None, str], int]) -> list[JSON]:
    """Tool shapes in contract order: (item_type, namespace or "", name)."""
    ordered = sorted(shapes.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2]))
    return [
        {"item_type": item_type, "name": name, "namespace": namespace, "count": count}
        for (item_type, namespace, name), count in ordered
    ]


class Totals:
    """Everything a snapshot sums, fed one record (JSON form) at a time."""

    def __init__(self) -> None:
        self.kinds = {"client": 0, "provider": 0, "exchange": 0, "error": 0}
        self.attempts = 0
        self.delivered_attempts = 0
        self.usage_states = {"reported": 0, "absent": 0, "invalid": 0}
        self.usage = UsageSum()
        self.threads: dict[str, _ThreadSum] = {}
        self.models: dict[tuple[str, str | None, str | None, str | None], list[int]] = {}
        self.comparisons = {name: _ComparisonSum() for name in _COMPARISONS}
        self.transport = dict.fromkeys(_TRANSPORT_KEYS, 0)
        self.emitted: dict[tuple[str, str | None, str], int] = {}
        self.delivered_tools: dict[tuple[str, str | None, str], int] = {}
        self.hpatch = dict.fromkeys(_HPATCH_KEYS, 0)
        self.dropped_detail = 0
        self._open: dict[int, _ThreadSum] = {}

    def add(self, record: JSON) -> None:
        """Count one record."""
        kind = record["kind"]
        self.kinds[kind] += 1
        if kind == "provider":
            self._add_provider(record)
        elif kind == "client":
            thread = record["thread"]
            thread_sum = self.threads.get(thread["thread_id"])
            if thread_sum is None:
                thread_sum = self.threads[thread["thread_id"]] = _ThreadSum(thread)
            thread_sum.requests += 1
            self._open[record["exchange"]] = thread_sum
        elif kind == "exchange":
            self._add_exchange(record)

    def _add_provider(self, record: JSON) -> None:
        self.attempts += 1
        delivered = record["delivered"]
        if delivered:
            self.delivered_attempts += 1
        state = record["usage_state"]
        self.usage_states[state] += 1
        usage = record["usage"]
        thread_sum = self._open.get(record["exchange"])
        if usage is not None:
            self.usage.add(usage)
            if thread_sum is not None:
                thread_sum.usage.add(usage)
                if delivered and record["outcome"] == "completed":
                    thread_sum.delivered.add(usage)
        if thread_sum is not None:
            thread_sum.attempts += 1
            role = thread_sum.ident[3]
            key = (role, record["request_model"], record["response_model"], record["header_model"])
            counts = self.models.get(key)
            if counts is None:
                counts = self.models[key] = [0, 0]
            counts[0] += 1
            if usage is not None:
                counts[1] += 1
        _add_shapes(self.emitted, record["emitted_tools"])

    def _add_exchange(self, record: JSON) -> None:
        self._open.pop(record["exchange"], None)
        for name in _COMPARISONS:
            self.comparisons[name].add(record[name])
        transport = record["transport"]
        for key in _TRANSPORT_KEYS:
            self.transport[key] += transport[key]
        _add_shapes(self.delivered_tools, record["delivered_tools"])
        hpatch = record["hpatch"]
        for key in _HPATCH_KEYS:
            self.hpatch[key] += hpatch[key]
        if record["detail_dropped"]:
            self.dropped_detail += 1

    def open_exchanges(self) -> int:
        """Exchanges with a client record and no exchange record yet."""
        return len(self._open)

    def aggregates_json(self) -> JSON:
        """Every snapshot section except ``schema``, ``router`` and ``capture``."""
        logical = self.kinds["client"]
        models = sorted(
            self.models.items(),
            key=lambda kv: (kv[0][0], *(_null_first_key(v) for v in kv[0][1:])),
        )
        return {
            "requests": {
                "logical_requests": logical,
                "provider_attempts": self.attempts,
                "retries": max(self.attempts - logical, 0),
                "delivered_attempts": self.delivered_attempts,
                "attempts_with_usage": self.usage_states["reported"],
                "attempts_without_usage": self.usage_states["absent"],
                "attempts_invalid_usage": self.usage_states["invalid"],
            },
            "usage": self.usage.to_json(),
            "savings": {
                **{name: self.comparisons[name].to_json() for name in _COMPARISONS},
                "transport": dict(self.transport),
            },
            "tools": {
                "provider_emitted": shapes_json(self.emitted),
                "client_delivered": shapes_json(self.delivered_tools),
            },
            "hpatch": dict(self.hpatch),
            "models": [
                {
                    "role": role,
                    "request_model": request_model,
                    "response_model": response_model,
                    "header_model": header_model,
                    "attempts": counts[0],
                    "attempts_with_usage": counts[1],
                }
                for (role, request_model, response_model, header_model), counts in models
            ],
            "threads": [self.threads[key].to_json() for key in sorted(self.threads)],
        }
