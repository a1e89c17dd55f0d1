"""Snapshot totals as plain sums over records.

:class:`Totals` takes records one at a time and renders the aggregate sections of a
snapshot. The writer feeds it the records it appends, to serve ``/api/metrics``; the
validator feeds it the records it reads, to recompute what a snapshot must say. Memory is
bounded by the number of threads, models and tool shapes, not by the number of records.
"""

from __future__ import annotations

from typing import Any

from hpbench.capture.models import (
    AttemptOutcome,
    CachedInputState,
    ClientRecord,
    Comparison,
    ExchangeRecord,
    HpatchTelemetry,
    ProviderRecord,
    ToolShape,
    Usage,
    UsageState,
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


def hpatch_counts(hpatch: HpatchTelemetry) -> tuple[int, int, int, int, int, int]:
    """An exchange's Hpatch telemetry as counts in :data:`HPATCH_KEYS` order."""
    return (
        hpatch.successes,
        hpatch.rejections,
        hpatch.corrections,
        hpatch.unmatched,
        hpatch.diagnostics,
        hpatch.carrier_tokens,
    )


def hpatch_idle(hpatch: HpatchTelemetry) -> bool:
    """Whether an exchange's Hpatch telemetry says Hpatch did nothing at all."""
    payload = hpatch.edit_payload
    return (
        not any(hpatch_counts(hpatch))
        and not hpatch.rejection_causes
        and not hpatch.rejection_signatures
        and not (payload.client_bytes or payload.provider_bytes or payload.savings_bytes)
        and not (payload.client_tokens or payload.provider_tokens or payload.savings_tokens)
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
# Enum members as module constants, compared by identity: reading one off its class, or
# hashing one, costs a Python-level call (CPython 3.11), and these are read per record.
_EXPLICIT = CachedInputState.EXPLICIT
_MISSING = CachedInputState.MISSING
_NULL = CachedInputState.NULL
_REPORTED = UsageState.REPORTED
_ABSENT = UsageState.ABSENT
_COMPLETED = AttemptOutcome.COMPLETED


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

    def add(self, usage: Usage) -> None:
        """Add one attempt's reported usage."""
        values = self.values
        values[0] += usage.input_tokens
        values[3] += usage.output_tokens
        state = usage.cached_input_state
        values[
            5 if state is _EXPLICIT else 6 if state is _MISSING else 7 if state is _NULL else 8
        ] += 1
        if usage.cached_input_tokens is not None:
            values[1] += usage.cached_input_tokens
        if usage.cache_write_input_tokens is None:
            values[9] += 1
        else:
            values[2] += usage.cache_write_input_tokens
        if usage.reasoning_tokens is None:
            values[10] += 1
        else:
            values[4] += usage.reasoning_tokens

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

    def add(self, comparison: Comparison) -> None:
        """Add one exchange's comparison."""
        values = self.values
        values[0] += comparison.client_bytes
        values[1] += comparison.provider_bytes
        values[2] += comparison.savings_bytes
        if not self.tokens_known:
            return
        client, provider = comparison.client_tokens, comparison.provider_tokens
        savings = comparison.savings_tokens
        if client is None or provider is None or savings is None:
            self.tokens_known = False
            return
        values[3] += client
        values[4] += provider
        values[5] += savings

    def to_json(self) -> JSON:
        """The comparison as a JSON object."""
        values: list[int | None] = list(self.values)
        if not self.tokens_known:
            values[3:] = [None, None, None]
        return dict(zip(COMPARISON_KEYS, values, strict=True))


class HpatchSum:
    """A running :class:`~hpbench.capture.models.HpatchTelemetry` over exchanges."""

    __slots__ = ("causes", "counts", "edit_payload", "signatures")

    def __init__(self) -> None:
        self.counts = [0] * len(HPATCH_KEYS)
        self.edit_payload = ComparisonSum()
        self.causes: dict[str, int] = {}
        self.signatures: dict[str, int] = {}

    def add(self, hpatch: HpatchTelemetry) -> None:
        """Add one exchange's telemetry."""
        counts = hpatch_counts(hpatch)
        if any(counts):
            self.counts = [a + b for a, b in zip(self.counts, counts, strict=True)]
        self.edit_payload.add(hpatch.edit_payload)
        for cause in hpatch.rejection_causes:
            self.causes[cause.cause] = self.causes.get(cause.cause, 0) + cause.count
        for signature in hpatch.rejection_signatures:
            key = signature.signature
            self.signatures[key] = self.signatures.get(key, 0) + signature.count

    def to_json(self) -> JSON:
        """The telemetry as a JSON object, lists in contract order."""
        return {
            **dict(zip(HPATCH_KEYS, self.counts, strict=True)),
            "edit_payload": self.edit_payload.to_json(),
            "rejection_causes": [
                {"cause": cause, "count": count} for cause, count in sorted(self.causes.items())
            ],
            "rejection_signatures": [
                {"signature": signature, "count": count}
                for signature, count in sorted(self.signatures.items())
            ],
        }


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

    def to_json(self) -> JSON:
        """The thread's totals as a JSON object."""
        thread_id, root, parent, role = self.ident
        usage = UsageSum()
        usage.merge(self.delivered)
        usage.merge(self.other)
        return {
            "thread_id": thread_id,
            "root_thread_id": root,
            "parent_thread_id": parent,
            "role": role,
            "logical_requests": self.requests,
            "provider_attempts": self.attempts,
            "usage": usage.to_json(),
            "delivered_usage": self.delivered.to_json(),
        }


def _add_shapes(into: dict[ShapeKey, int], shapes: tuple[ToolShape, ...]) -> None:
    for shape in shapes:
        key = (shape.item_type, shape.namespace, shape.name)
        into[key] = into.get(key, 0) + shape.count


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
        self.delivered_attempts = 0
        self.with_usage = self.without_usage = self.invalid_usage = 0
        # Usage is summed per thread; attempts of no known thread are summed here. The
        # capture's total is the sum of both, which saves one addition per attempt.
        self.unattributed = UsageSum()
        self.threads: dict[str, ThreadSum] = {}
        self.models: dict[ModelKey, list[int]] = {}
        self.comparisons = (ComparisonSum(), ComparisonSum(), ComparisonSum())
        self.transport = [0, 0, 0]
        self.emitted: dict[ShapeKey, int] = {}
        self.delivered_tools: dict[ShapeKey, int] = {}
        self.hpatch = HpatchSum()
        self.dropped_detail = 0

    def add_client(self, record: ClientRecord) -> ThreadSum:
        """Count a client record; return the sums of its thread, for its provider records."""
        self.kinds["client"] += 1
        ref = record.thread
        thread = self.threads.get(ref.thread_id)
        if thread is None:
            # _value_ is the enum's documented value attribute, read without a descriptor call.
            ident = (ref.thread_id, ref.root_thread_id, ref.parent_thread_id, ref.role._value_)
            thread = self.threads[ref.thread_id] = ThreadSum(ident)
        thread.requests += 1
        return thread

    def add_provider(self, record: ProviderRecord, thread: ThreadSum | None) -> None:
        """Count a provider record of an exchange of ``thread`` (None when unknown)."""
        self.kinds["provider"] += 1
        delivered = record.delivered
        if delivered:
            self.delivered_attempts += 1
        state = record.usage_state
        if state is _REPORTED:
            self.with_usage += 1
        elif state is _ABSENT:
            self.without_usage += 1
        else:
            self.invalid_usage += 1
        usage = record.usage
        if thread is None:
            if usage is not None:
                self.unattributed.add(usage)
        else:
            thread.attempts += 1
            if usage is not None:
                if delivered and record.outcome is _COMPLETED:
                    thread.delivered.add(usage)
                else:
                    thread.other.add(usage)
            self._count_model(thread.ident[3], record)
        if record.emitted_tools:
            _add_shapes(self.emitted, record.emitted_tools)

    def _count_model(self, role: str, record: ProviderRecord) -> None:
        key = (role, record.request_model, record.response_model, record.header_model)
        counts = self.models.get(key)
        if counts is None:
            counts = self.models[key] = [0, 0]
        counts[0] += 1
        if record.usage is not None:
            counts[1] += 1

    def add_exchange(self, record: ExchangeRecord) -> None:
        """Count an exchange record."""
        self.kinds["exchange"] += 1
        request, output, output_text = self.comparisons
        request.add(record.request)
        output.add(record.output)
        output_text.add(record.output_text)
        transport, sums = record.transport, self.transport
        sums[0] += transport.provider_stream_bytes
        sums[1] += transport.client_stream_bytes
        sums[2] += transport.router_commentary_bytes
        if record.delivered_tools:
            _add_shapes(self.delivered_tools, record.delivered_tools)
        self.hpatch.add(record.hpatch)
        if record.detail_dropped:
            self.dropped_detail += 1

    def add_error(self) -> None:
        """Count an error record."""
        self.kinds["error"] += 1

    def usage_total(self) -> UsageSum:
        """Usage over every attempt: the threads' sums plus the unattributed one."""
        total = UsageSum()
        total.merge(self.unattributed)
        for thread in self.threads.values():
            total.merge(thread.delivered)
            total.merge(thread.other)
        return total

    def aggregates_json(self) -> JSON:
        """Every snapshot section except ``schema``, ``router`` and ``capture``."""
        logical = self.kinds["client"]
        request, output, output_text = self.comparisons
        return {
            "requests": {
                "logical_requests": logical,
                "provider_attempts": self.kinds["provider"],
                "retries": max(self.kinds["provider"] - logical, 0),
                "delivered_attempts": self.delivered_attempts,
                "attempts_with_usage": self.with_usage,
                "attempts_without_usage": self.without_usage,
                "attempts_invalid_usage": self.invalid_usage,
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
            "hpatch": self.hpatch.to_json(),
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
