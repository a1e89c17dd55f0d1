"""Snapshot totals as plain sums over records.

:class:`Totals` takes record facts (:mod:`hpbench.capture._facts`) one at a time and
renders the aggregate sections of a snapshot. The writer uses it to serve
``/api/metrics``; the validator uses it to recompute what a snapshot must say. Totals of
two parts of a capture merge by addition. Memory is bounded by the number of threads,
models and tool shapes, not by the number of records.
"""

from __future__ import annotations

from typing import Any

from hpbench.capture._facts import (
    ClientFacts,
    ComparisonFacts,
    ExchangeFacts,
    ProviderFacts,
    Shape,
    UsageFacts,
)

JSON = dict[str, Any]
ShapeKey = tuple[str, str | None, str]
ModelKey = tuple[str, str | None, str | None, str | None]

USAGE_KEYS = (
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
HPATCH_KEYS = (
    "successes",
    "rejections",
    "corrections",
    "unmatched",
    "diagnostics",
    "carrier_tokens",
)
TRANSPORT_KEYS = ("provider_stream_bytes", "client_stream_bytes", "router_commentary_bytes")
COMPARISON_KEYS = (
    "client_bytes",
    "provider_bytes",
    "savings_bytes",
    "client_tokens",
    "provider_tokens",
    "savings_tokens",
)
_CACHED_INDEX = {"explicit": 5, "missing": 6, "null": 7, "invalid": 8}


def _null_first(value: str | None) -> tuple[int, str]:
    return (0, "") if value is None else (1, value)


def shape_order(key: ShapeKey) -> tuple[str, str, str]:
    """Contract order of tool shapes: (item_type, namespace or "", name)."""
    return (key[0], key[1] or "", key[2])


def model_order(key: ModelKey) -> tuple[Any, ...]:
    """Contract order of model rows: role, then the three models with null first."""
    return (key[0], _null_first(key[1]), _null_first(key[2]), _null_first(key[3]))


class UsageSum:
    """A running :class:`~hpbench.capture.models.UsageTotals`, as a list in key order."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values = [0] * len(USAGE_KEYS)

    def add(self, usage: UsageFacts) -> None:
        """Add one attempt's reported usage."""
        values = self.values
        input_tokens, cached, state, write, output, reasoning = usage
        values[0] += input_tokens
        values[3] += output
        values[_CACHED_INDEX[state]] += 1
        if cached is not None:
            values[1] += cached
        if write is None:
            values[9] += 1
        else:
            values[2] += write
        if reasoning is None:
            values[10] += 1
        else:
            values[4] += reasoning

    def merge(self, other: UsageSum) -> None:
        """Add another sum."""
        self.values = [a + b for a, b in zip(self.values, other.values, strict=True)]

    def to_json(self) -> JSON:
        """The totals as a JSON object."""
        return dict(zip(USAGE_KEYS, self.values, strict=True))


class ComparisonSum:
    """A running :class:`~hpbench.capture.models.Comparison`; tokens turn null once unknown."""

    __slots__ = ("tokens_known", "values")

    def __init__(self) -> None:
        self.values = [0] * 6
        self.tokens_known = True

    def add(self, comparison: ComparisonFacts) -> None:
        """Add one exchange's comparison."""
        values = self.values
        values[0] += comparison[0]
        values[1] += comparison[1]
        values[2] += comparison[2]
        client, provider, savings = comparison[3], comparison[4], comparison[5]
        if client is None or provider is None or savings is None:
            self.tokens_known = False
            return
        values[3] += client
        values[4] += provider
        values[5] += savings

    def merge(self, other: ComparisonSum) -> None:
        """Add another sum."""
        self.values = [a + b for a, b in zip(self.values, other.values, strict=True)]
        self.tokens_known = self.tokens_known and other.tokens_known

    def to_json(self) -> JSON:
        """The comparison as a JSON object."""
        values: list[int | None] = list(self.values)
        if not self.tokens_known:
            values[3:] = [None, None, None]
        return dict(zip(COMPARISON_KEYS, values, strict=True))


class ThreadSum:
    """Per-thread totals.

    Usage is kept in two parts, attempts delivered to the client and completed (what Codex
    counts) and all others, so each attempt is added once; ``usage`` is their sum.
    """

    __slots__ = ("attempts", "delivered", "ident", "other", "requests")

    def __init__(self, ident: tuple[str, str, str | None, str]) -> None:
        self.ident = ident
        self.requests = 0
        self.attempts = 0
        self.delivered = UsageSum()
        self.other = UsageSum()

    @property
    def usage(self) -> UsageSum:
        """Usage over all the thread's attempts."""
        total = UsageSum()
        total.merge(self.delivered)
        total.merge(self.other)
        return total

    def merge(self, other: ThreadSum) -> None:
        """Add another part of the same thread."""
        self.requests += other.requests
        self.attempts += other.attempts
        self.delivered.merge(other.delivered)
        self.other.merge(other.other)

    def to_json(self) -> JSON:
        """The thread's totals as a JSON object."""
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


def _add_shapes(into: dict[ShapeKey, int], shapes: tuple[Shape, ...]) -> None:
    for item_type, namespace, name, count in shapes:
        key = (item_type, namespace, name)
        into[key] = into.get(key, 0) + count


def shapes_json(shapes: dict[ShapeKey, int]) -> list[JSON]:
    """Tool shapes as JSON, in contract order."""
    return [
        {"item_type": key[0], "name": key[2], "namespace": key[1], "count": count}
        for key, count in sorted(shapes.items(), key=lambda kv: shape_order(kv[0]))
    ]


class Totals:
    """Everything a snapshot sums."""

    def __init__(self) -> None:
        self.kinds = {"client": 0, "provider": 0, "exchange": 0, "error": 0}
        self.attempts = 0
        self.delivered_attempts = 0
        self.usage_states = {"reported": 0, "absent": 0, "invalid": 0}
        # Usage is summed per thread; attempts of no known thread are summed here. The
        # capture's total is the sum of both (see usage_total), which saves one addition
        # per attempt.
        self.unattributed = UsageSum()
        self.threads: dict[str, ThreadSum] = {}
        self.models: dict[ModelKey, list[int]] = {}
        self.comparisons = (ComparisonSum(), ComparisonSum(), ComparisonSum())
        self.transport = [0, 0, 0]
        self.emitted: dict[ShapeKey, int] = {}
        self.delivered_tools: dict[ShapeKey, int] = {}
        self.hpatch = [0] * len(HPATCH_KEYS)
        self.dropped_detail = 0

    def add_client(self, record: ClientFacts) -> None:
        """Count a client record."""
        self.kinds["client"] += 1
        thread = self.threads.get(record.thread_id)
        if thread is None:
            ident = (record.thread_id, record.root_thread_id, record.parent_thread_id, record.role)
            thread = self.threads[record.thread_id] = ThreadSum(ident)
        thread.requests += 1

    def add_provider(self, record: ProviderFacts, thread_id: str | None, role: str | None) -> None:
        """Count a provider record of an exchange of ``thread_id`` (None when unknown)."""
        (
            _,
            _,
            _,
            _,
            _,
            _,
            request_model,
            _,
            _,
            _,
            _,
            outcome,
            usage_state,
            usage,
            response_model,
            header_model,
            emitted,
            _,
            _,
            _,
            delivered,
        ) = record
        self.kinds["provider"] += 1
        self.attempts += 1
        if delivered:
            self.delivered_attempts += 1
        self.usage_states[usage_state] += 1
        thread = self.threads.get(thread_id) if thread_id is not None else None
        if thread is not None:
            thread.attempts += 1
            if usage is not None:
                if delivered and outcome == "completed":
                    thread.delivered.add(usage)
                else:
                    thread.other.add(usage)
        elif usage is not None:
            self.unattributed.add(usage)
        if role is not None:
            key = (role, request_model, response_model, header_model)
            counts = self.models.get(key)
            if counts is None:
                counts = self.models[key] = [0, 0]
            counts[0] += 1
            if usage is not None:
                counts[1] += 1
        if emitted:
            _add_shapes(self.emitted, emitted)

    def usage_total(self) -> UsageSum:
        """Usage over every attempt: the threads' sums plus the unattributed one."""
        total = UsageSum()
        total.merge(self.unattributed)
        for thread in self.threads.values():
            total.merge(thread.delivered)
            total.merge(thread.other)
        return total

    def add_exchange(self, record: ExchangeFacts) -> None:
        """Count an exchange record."""
        (
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            _,
            request,
            output,
            output_text,
            (provider_stream, client_stream, commentary),
            delivered_tools,
            hpatch,
            dropped,
        ) = record
        self.kinds["exchange"] += 1
        for sums, comparison in zip(self.comparisons, (request, output, output_text), strict=True):
            values = sums.values
            values[0] += comparison[0]
            values[1] += comparison[1]
            values[2] += comparison[2]
            if sums.tokens_known:
                client, provider, savings = comparison[3], comparison[4], comparison[5]
                if client is None or provider is None or savings is None:
                    sums.tokens_known = False
                else:
                    values[3] += client
                    values[4] += provider
                    values[5] += savings
        transport = self.transport
        transport[0] += provider_stream
        transport[1] += client_stream
        transport[2] += commentary
        if delivered_tools:
            _add_shapes(self.delivered_tools, delivered_tools)
        if any(hpatch):
            self.hpatch = [a + b for a, b in zip(self.hpatch, hpatch, strict=True)]
        if dropped:
            self.dropped_detail += 1

    def add_error(self) -> None:
        """Count an error record."""
        self.kinds["error"] += 1

    def merge(self, other: Totals) -> None:
        """Add the totals of a later part of the same capture."""
        for kind, count in other.kinds.items():
            self.kinds[kind] += count
        self.attempts += other.attempts
        self.delivered_attempts += other.delivered_attempts
        for state, count in other.usage_states.items():
            self.usage_states[state] += count
        self.unattributed.merge(other.unattributed)
        for thread_id, thread in other.threads.items():
            mine = self.threads.get(thread_id)
            if mine is None:
                self.threads[thread_id] = thread
            else:
                mine.merge(thread)
        for key, counts in other.models.items():
            mine_counts = self.models.setdefault(key, [0, 0])
            mine_counts[0] += counts[0]
            mine_counts[1] += counts[1]
        for mine_sum, other_sum in zip(self.comparisons, other.comparisons, strict=True):
            mine_sum.merge(other_sum)
        self.transport = [a + b for a, b in zip(self.transport, other.transport, strict=True)]
        for into, shapes in (
            (self.emitted, other.emitted),
            (self.delivered_tools, other.delivered_tools),
        ):
            for shape, count in shapes.items():
                into[shape] = into.get(shape, 0) + count
        self.hpatch = [a + b for a, b in zip(self.hpatch, other.hpatch, strict=True)]
        self.dropped_detail += other.dropped_detail

    def aggregates_json(self) -> JSON:
        """Every snapshot section except ``schema``, ``router`` and ``capture``."""
        logical = self.kinds["client"]
        request, output, output_text = self.comparisons
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
            "usage": self.usage_total().to_json(),
            "savings": {
                "request": request.to_json(),
                "output": output.to_json(),
                "output_text": output_text.to_json(),
                "transport": dict(zip(TRANSPORT_KEYS, self.transport, strict=True)),
            },
            "tools": {
                "provider_emitted": shapes_json(self.emitted),
                "client_delivered": shapes_json(self.delivered_tools),
            },
            "hpatch": dict(zip(HPATCH_KEYS, self.hpatch, strict=True)),
            "models": [
                {
                    "role": key[0],
                    "request_model": key[1],
                    "response_model": key[2],
                    "header_model": key[3],
                    "attempts": counts[0],
                    "attempts_with_usage": counts[1],
                }
                for key, counts in sorted(self.models.items(), key=lambda kv: model_order(kv[0]))
            ],
            "threads": [self.threads[key].to_json() for key in sorted(self.threads)],
        }
