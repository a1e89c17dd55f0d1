"""Records reduced to the facts the validator and the totals use.

A record line reaches the validator's state machine as a small named tuple, by one of two
routes that must agree:

* :func:`parse_canonical`: the fast route. A record written in canonical form (sorted
  keys, no insignificant whitespace, as :func:`hpbench._jsonio.canonical_json` writes it)
  is matched by one regular expression per kind, generated from the attrs models, and the
  captured leaves become the facts. It returns None for anything else.
* :func:`facts_from_json`: the general route, for a decoded JSON object that
  :mod:`hpbench.capture._check` accepted.

The fast route is stricter than the general one (it refuses every non-canonical spelling),
never more lenient, and yields equal facts; ``tests/capture/test_facts.py`` holds it to
that on generated and mutated records.
"""

from __future__ import annotations

import enum
import functools
import json
import operator
import re
import types
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

import attrs

from hpbench.capture import models

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


# -------------------------------------------------------------------- fast route

_STRING_BODY = r'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
_STRING = f'"{_STRING_BODY}"'
_IDENT = f'"(?!"){_STRING_BODY}"'
_COUNT = "(?:0|[1-9][0-9]*)"
_INT = "-?(?:0|[1-9][0-9]*)"


def _nested_pattern(cls: type[Any]) -> str:
    """A non-capturing pattern for the canonical form of an attrs class."""
    return _object_pattern(cls, [], capture=False, prefix="")


def _value_pattern(tp: Any, paths: list[str], path: str, *, capture: bool) -> str:
    def group(body: str) -> str:
        if not capture:
            return f"(?:{body})"
        paths.append(path)
        return f"({body})"

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = next(a for a in args if a is not type(None))
        if attrs.has(inner):
            if not capture:
                return f"(?:null|{_nested_pattern(inner)})"
            paths.append(path)
            body = _object_pattern(inner, paths, capture=True, prefix=path + ".")
            return f"(null|{body})"
        return group(f"null|{_value_pattern(inner, [], path, capture=False)}")
    if origin is typing.Literal:
        return group("|".join(re.escape(json.dumps(a)) for a in args))
    if origin is tuple:
        element = _nested_pattern(args[0])
        return group(rf"\[(?:{element}(?:,{element})*)?\]")
    if attrs.has(tp):
        return _object_pattern(tp, paths, capture=capture, prefix=path + ".")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return '"' + group("|".join(re.escape(m.value) for m in tp)) + '"'
    simple = {
        models.Count: _COUNT,
        int: _INT,
        models.Ident: _IDENT,
        str: _STRING,
        bool: "true|false",
    }
    return group(simple[tp])


def _object_pattern(cls: type[Any], paths: list[str], *, capture: bool, prefix: str) -> str:
    hints = typing.get_type_hints(cls)
    names = sorted(field.name for field in attrs.fields(cls))
    parts = [
        f'"{name}":' + _value_pattern(hints[name], paths, prefix + name, capture=capture)
        for name in names
    ]
    return r"\{" + ",".join(parts) + r"\}"


def canonical_pattern(cls: type[Any]) -> tuple[re.Pattern[str], dict[str, int]]:
    """The regular expression of ``cls``'s canonical form and its group index per leaf path."""
    paths: list[str] = []
    pattern = _object_pattern(cls, paths, capture=True, prefix="")
    return re.compile(pattern), {path: index for index, path in enumerate(paths)}


def _text(raw: str) -> str:
    if "\\" in raw:
        value: str = json.loads(raw)
        return value
    return raw[1:-1]


def _opt_text(raw: str) -> str | None:
    return None if raw == "null" else _text(raw)


def _opt_int(raw: str | None) -> int | None:
    return None if raw is None or raw == "null" else int(raw)


@functools.lru_cache(maxsize=4096)
def _shape_list(raw: str) -> tuple[Shape, ...]:
    # Shape lists repeat across records; the cache keeps this route cheap and bounded.
    if raw == "[]":
        return ()
    return _shapes(json.loads(raw))


_CLIENT_RE, _CLIENT = canonical_pattern(models.ClientRecord)
_PROVIDER_RE, _PROVIDER = canonical_pattern(models.ProviderRecord)
_EXCHANGE_RE, _EXCHANGE = canonical_pattern(models.ExchangeRecord)
_ERROR_RE, _ERROR = canonical_pattern(models.ErrorRecord)


def _getter(index: dict[str, int], *paths: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    # One C-level call picks the groups a builder needs, in the order it needs them.
    return operator.itemgetter(*(index[path] for path in paths))


_new = tuple.__new__  # builds a named tuple without its Python-level __new__

_C_INT = _getter(_CLIENT, "seq", "exchange", "request_bytes")
_C_RAW = _getter(
    _CLIENT,
    "mode",
    "protocol",
    "complete",
    "thread.thread_id",
    "thread.root_thread_id",
    "thread.parent_thread_id",
    "thread.role",
    "request_tokens",
    "turn_state_sent",
)


def _client(g: tuple[Any, ...]) -> ClientFacts:
    seq, exchange, request_bytes = map(int, _C_INT(g))
    mode, protocol, complete, thread, root, parent, role, tokens, turn_state = _C_RAW(g)
    return _new(
        ClientFacts,
        (
            seq,
            exchange,
            mode,
            protocol,
            complete == "true",
            _text(thread),
            _text(root),
            None if parent == "null" else _text(parent),
            role,
            request_bytes,
            None if tokens == "null" else int(tokens),
            turn_state == "true",
        ),
    )


_P_INT = _getter(
    _PROVIDER,
    "seq",
    "exchange",
    "attempt",
    "request_bytes",
    "output_bytes",
    "output_text_bytes",
    "stream_bytes",
)
_P_RAW = _getter(
    _PROVIDER,
    "mode",
    "protocol",
    "complete",
    "request_model",
    "request_tokens",
    "turn_state_forwarded",
    "http_status",
    "outcome",
    "usage_state",
    "usage",
    "response_model",
    "header_model",
    "emitted_tools",
    "delivered",
)
_P_USAGE = _getter(
    _PROVIDER,
    "usage.input_tokens",
    "usage.cached_input_tokens",
    "usage.cached_input_state",
    "usage.cache_write_input_tokens",
    "usage.output_tokens",
    "usage.reasoning_tokens",
)


def _provider(g: tuple[Any, ...]) -> ProviderFacts:
    seq, exchange, attempt, request_bytes, output_bytes, text_bytes, stream_bytes = map(
        int, _P_INT(g)
    )
    (
        mode,
        protocol,
        complete,
        request_model,
        tokens,
        forwarded,
        status,
        outcome,
        usage_state,
        usage_raw,
        response_model,
        header_model,
        tools,
        delivered,
    ) = _P_RAW(g)
    usage: UsageFacts | None = None
    if usage_raw != "null":
        input_tokens, cached, state, write, output, reasoning = _P_USAGE(g)
        usage = (
            int(input_tokens),
            None if cached == "null" else int(cached),
            state,
            None if write == "null" else int(write),
            int(output),
            None if reasoning == "null" else int(reasoning),
        )
    return _new(
        ProviderFacts,
        (
            seq,
            exchange,
            attempt,
            mode,
            protocol,
            complete == "true",
            None if request_model == "null" else _text(request_model),
            request_bytes,
            None if tokens == "null" else int(tokens),
            forwarded == "true",
            None if status == "null" else int(status),
            outcome,
            usage_state,
            usage,
            None if response_model == "null" else _text(response_model),
            None if header_model == "null" else _text(header_model),
            _shape_list(tools),
            output_bytes,
            text_bytes,
            stream_bytes,
            delivered == "true",
        ),
    )


_X_INT = _getter(
    _EXCHANGE,
    "seq",
    "exchange",
    "attempts",
    "request.client_bytes",
    "request.provider_bytes",
    "request.savings_bytes",
    "output.client_bytes",
    "output.provider_bytes",
    "output.savings_bytes",
    "output_text.client_bytes",
    "output_text.provider_bytes",
    "output_text.savings_bytes",
    "transport.provider_stream_bytes",
    "transport.client_stream_bytes",
    "transport.router_commentary_bytes",
    "hpatch.successes",
    "hpatch.rejections",
    "hpatch.corrections",
    "hpatch.unmatched",
    "hpatch.diagnostics",
    "hpatch.carrier_tokens",
)
_X_TOKENS = _getter(
    _EXCHANGE,
    "request.client_tokens",
    "request.provider_tokens",
    "request.savings_tokens",
    "output.client_tokens",
    "output.provider_tokens",
    "output.savings_tokens",
    "output_text.client_tokens",
    "output_text.provider_tokens",
    "output_text.savings_tokens",
)
_X_RAW = _getter(
    _EXCHANGE,
    "mode",
    "protocol",
    "complete",
    "thread_id",
    "delivered_attempt",
    "outcome",
    "client_status",
    "delivered_tools",
    "detail_dropped",
)
_NO_TOKENS = ("null",) * 9


def _exchange(g: tuple[Any, ...]) -> ExchangeFacts:
    ints = tuple(map(int, _X_INT(g)))
    raw_tokens = _X_TOKENS(g)
    if raw_tokens == _NO_TOKENS:
        tokens: tuple[int | None, ...] = (None,) * 9
    else:
        tokens = tuple(None if t == "null" else int(t) for t in raw_tokens)
    mode, protocol, complete, thread, delivered, outcome, status, tools, dropped = _X_RAW(g)
    return _new(
        ExchangeFacts,
        (
            ints[0],
            ints[1],
            mode,
            protocol,
            complete == "true",
            _text(thread),
            ints[2],
            None if delivered == "null" else int(delivered),
            outcome,
            None if status == "null" else int(status),
            (*ints[3:6], *tokens[0:3]),
            (*ints[6:9], *tokens[3:6]),
            (*ints[9:12], *tokens[6:9]),
            ints[12:15],
            _shape_list(tools),
            ints[15:21],
            dropped == "true",
        ),
    )


def _error(g: tuple[Any, ...], i: dict[str, int] = _ERROR) -> ErrorFacts:
    return ErrorFacts(
        int(g[i["seq"]]),
        _opt_int(g[i["exchange"]]),
        g[i["mode"]],
        g[i["protocol"]],
        g[i["category"]],
    )


KIND_MARKER = '"kind":"'
"""Every canonical record line holds this once; the two letters after it name the kind."""

ROUTES: dict[str, tuple[re.Pattern[str], Callable[[tuple[Any, ...]], Facts], int]] = {
    "cl": (_CLIENT_RE, _client, 2),
    "pr": (_PROVIDER_RE, _provider, 3),
    "ex": (_EXCHANGE_RE, _exchange, 2),
    "er": (_ERROR_RE, _error, 2),
}
"""Per kind (first two letters): its pattern, its fact builder and where ``mode`` sits in
its facts (``protocol`` follows)."""


def parse_canonical(line: str) -> Facts | None:
    """The facts of a canonical record line (without its newline), or None."""
    at = line.find(KIND_MARKER)
    if at < 0:
        return None
    route = ROUTES.get(line[at + 8 : at + 10])
    if route is None:
        return None
    match = route[0].fullmatch(line)
    return route[1](match.groups()) if match is not None else None
