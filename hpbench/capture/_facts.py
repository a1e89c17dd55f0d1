"""Records reduced to the facts the validator and the totals use.

A record line reaches the validator's state machine as a small named tuple, by one of two
routes that must agree:

* :func:`hpbench.capture._decode.decode_line`: the fast route, compiled decoders generated
  from the attrs models.
* :func:`facts_from_json`: the general route, for a decoded JSON object that
  :mod:`hpbench.capture._check` accepted.

The fast route is never more lenient than the general one and yields equal facts;
``tests/capture/test_check.py`` holds it to that on generated and mutated records.
"""

from __future__ import annotations

from typing import Any, NamedTuple

# A tool shape as (item_type, namespace, name, count).
Shape = tuple[str, str | None, str, int]
# Usage as (input, cached, cached_state, cache_write, output, reasoning).
UsageFacts = tuple[int, int | None, str, int | None, int, int | None]
# A comparison as (client_bytes, provider_bytes, savings_bytes, client_tokens,
# provider_tokens, savings_tokens).
ComparisonFacts = tuple[int, int, int, int | None, int | None, int | None]


class ClientFacts(NamedTuple):
    """What the validator uses of a client record."""

    seq: int
    exchange: int
    mode: str
    protocol: str
    complete: bool
    thread_id: str
    root_thread_id: str
    parent_thread_id: str | None
    role: str
    request_bytes: int
    request_tokens: int | None
    turn_state_sent: bool


class ProviderFacts(NamedTuple):
    """What the validator uses of a provider record."""

    seq: int
    exchange: int
    attempt: int
    mode: str
    protocol: str
    complete: bool
    request_model: str | None
    request_bytes: int
    request_tokens: int | None
    turn_state_forwarded: bool
    http_status: int | None
    outcome: str
    usage_state: str
    usage: UsageFacts | None
    response_model: str | None
    header_model: str | None
    emitted_tools: tuple[Shape, ...]
    output_bytes: int
    output_text_bytes: int
    stream_bytes: int
    delivered: bool


class ExchangeFacts(NamedTuple):
    """What the validator uses of an exchange record."""

    seq: int
    exchange: int
    mode: str
    protocol: str
    complete: bool
    thread_id: str
    attempts: int
    delivered_attempt: int | None
    outcome: str
    client_status: int | None
    request: ComparisonFacts
    output: ComparisonFacts
    output_text: ComparisonFacts
    transport: tuple[int, int, int]
    delivered_tools: tuple[Shape, ...]
    hpatch: tuple[int, int, int, int, int, int]
    detail_dropped: bool


class ErrorFacts(NamedTuple):
    """What the validator uses of an error record."""

    seq: int
    exchange: int | None
    mode: str
    protocol: str
    category: str


Facts = ClientFacts | ProviderFacts | ExchangeFacts | ErrorFacts

# ----------------------------------------------------------------- general route


def _shapes(items: list[dict[str, Any]]) -> tuple[Shape, ...]:
    return tuple((s["item_type"], s["namespace"], s["name"], s["count"]) for s in items)


def _usage(usage: dict[str, Any] | None) -> UsageFacts | None:
    if usage is None:
        return None
    return (
        usage["input_tokens"],
        usage["cached_input_tokens"],
        usage["cached_input_state"],
        usage["cache_write_input_tokens"],
        usage["output_tokens"],
        usage["reasoning_tokens"],
    )


def _comparison(value: dict[str, Any]) -> ComparisonFacts:
    return (
        value["client_bytes"],
        value["provider_bytes"],
        value["savings_bytes"],
        value["client_tokens"],
        value["provider_tokens"],
        value["savings_tokens"],
    )


def facts_from_json(record: dict[str, Any]) -> Facts:
    """The facts of a record object that :func:`hpbench.capture._check.record_ok` accepted."""
    kind = record["kind"]
    if kind == "client":
        thread = record["thread"]
        return ClientFacts(
            record["seq"],
            record["exchange"],
            record["mode"],
            record["protocol"],
            record["complete"],
            thread["thread_id"],
            thread["root_thread_id"],
            thread["parent_thread_id"],
            thread["role"],
            record["request_bytes"],
            record["request_tokens"],
            record["turn_state_sent"],
        )
    if kind == "provider":
        return ProviderFacts(
            record["seq"],
            record["exchange"],
            record["attempt"],
            record["mode"],
            record["protocol"],
            record["complete"],
            record["request_model"],
            record["request_bytes"],
            record["request_tokens"],
            record["turn_state_forwarded"],
            record["http_status"],
            record["outcome"],
            record["usage_state"],
            _usage(record["usage"]),
            record["response_model"],
            record["header_model"],
            _shapes(record["emitted_tools"]),
            record["output_bytes"],
            record["output_text_bytes"],
            record["stream_bytes"],
            record["delivered"],
        )
    if kind == "exchange":
        transport = record["transport"]
        hpatch = record["hpatch"]
        return ExchangeFacts(
            record["seq"],
            record["exchange"],
            record["mode"],
            record["protocol"],
            record["complete"],
            record["thread_id"],
            record["attempts"],
            record["delivered_attempt"],
            record["outcome"],
            record["client_status"],
            _comparison(record["request"]),
            _comparison(record["output"]),
            _comparison(record["output_text"]),
            (
                transport["provider_stream_bytes"],
                transport["client_stream_bytes"],
                transport["router_commentary_bytes"],
            ),
            _shapes(record["delivered_tools"]),
            (
                hpatch["successes"],
                hpatch["rejections"],
                hpatch["corrections"],
                hpatch["unmatched"],
                hpatch["diagnostics"],
                hpatch["carrier_tokens"],
            ),
            record["detail_dropped"],
        )
    return ErrorFacts(
        record["seq"], record["exchange"], record["mode"], record["protocol"], record["category"]
    )
