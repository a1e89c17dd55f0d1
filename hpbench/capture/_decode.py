"""The fast route: record lines decoded by compiled decoders generated from the models.

Checking a gigabyte of records one JSON object at a time through :func:`json.loads` and
dict checks costs more than the whole validation may. Here each record kind gets a
:mod:`msgspec` decoder whose types are generated, at import, from the attrs models in
:mod:`hpbench.capture.models` (the models stay the one definition of the contract):
``Count`` is a non-negative integer, ``Ident`` a non-empty string, enums and literals
their exact values, every field required, unknown fields refused, and no coercion (a
boolean is not an integer, ``1.0`` is not an integer). A decoded line becomes the same
facts as the general route (:func:`hpbench.capture._facts.facts_from_json`).

The decoders accept one thing the general route refuses: a key written twice (the last
one wins). :func:`decode_line` therefore also proves that the line holds no more keys
than its facts imply, by counting colons: every key is followed by exactly one colon
outside strings, so a line with no more colons than keys has no repeated key. A line
whose strings hold colons goes to the general route, which is slower but exact.

The fast route is never more lenient than the general one and yields equal facts;
``tests/capture/test_check.py`` holds it to that on generated and mutated records.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal

import attrs
import msgspec

from hpbench.capture import models
from hpbench.capture._facts import (
    ClientFacts,
    ComparisonFacts,
    ErrorFacts,
    ExchangeFacts,
    Facts,
    ProviderFacts,
    Shape,
)

_SIMPLE: dict[Any, Any] = {
    models.Count: Annotated[int, msgspec.Meta(ge=0)],
    models.Ident: Annotated[str, msgspec.Meta(min_length=1)],
    int: int,
    str: str,
    bool: bool,
}
_STRUCTS: dict[type[Any], type[msgspec.Struct]] = {}


def _decoded_type(tp: Any) -> Any:
    """The msgspec type that accepts exactly the JSON values the converter accepts for ``tp``."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:  # pragma: no cover - the models have no such field
            msg = f"no fast decoding for {tp!r}"
            raise TypeError(msg)
        return _decoded_type(inner[0]) | None
    if origin is typing.Literal:
        return tp
    if origin is tuple:
        return tuple[_decoded_type(args[0]), ...]  # type: ignore[misc]
    if attrs.has(tp):
        return struct_for(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return Literal[tuple(member.value for member in tp)]
    return _SIMPLE[tp]


def struct_for(cls: type[Any]) -> type[msgspec.Struct]:
    """The msgspec struct generated from the attrs class ``cls`` (fields in sorted order)."""
    struct = _STRUCTS.get(cls)
    if struct is None:
        hints = typing.get_type_hints(cls)
        names = sorted(field.name for field in attrs.fields(cls))
        struct = msgspec.defstruct(
            f"Decoded{cls.__name__}",
            [(name, _decoded_type(hints[name])) for name in names],
            forbid_unknown_fields=True,
            kw_only=True,
            module=__name__,
        )
        _STRUCTS[cls] = struct
    return struct


def fixed_keys(cls: type[Any]) -> int:
    """How many keys a record of ``cls`` always has: its fields and those of every nested
    object that is never null (nullable objects and lists are counted by their builders)."""
    hints = typing.get_type_hints(cls)
    return sum(
        1 + (fixed_keys(hints[field.name]) if attrs.has(hints[field.name]) else 0)
        for field in attrs.fields(cls)
    )


_USAGE_KEYS = fixed_keys(models.Usage)
_SHAPE_KEYS = fixed_keys(models.ToolShape)

_new = tuple.__new__  # builds a named tuple without its Python-level __new__


def _shapes(items: tuple[Any, ...]) -> tuple[Shape, ...]:
    return tuple((s.item_type, s.namespace, s.name, s.count) for s in items)


def _comparison(c: Any) -> ComparisonFacts:
    return (
        c.client_bytes,
        c.provider_bytes,
        c.savings_bytes,
        c.client_tokens,
        c.provider_tokens,
        c.savings_tokens,
    )


_CLIENT_KEYS = fixed_keys(models.ClientRecord)


def _client(s: Any) -> tuple[Facts, int]:
    t = s.thread
    facts = _new(
        ClientFacts,
        (
            s.seq,
            s.exchange,
            s.mode,
            s.protocol,
            s.complete,
            t.thread_id,
            t.root_thread_id,
            t.parent_thread_id,
            t.role,
            s.request_bytes,
            s.request_tokens,
            s.turn_state_sent,
        ),
    )
    return facts, _CLIENT_KEYS


_PROVIDER_KEYS = fixed_keys(models.ProviderRecord)


def _provider(s: Any) -> tuple[Facts, int]:
    keys = _PROVIDER_KEYS
    u = s.usage
    usage = None
    if u is not None:
        keys += _USAGE_KEYS
        usage = (
            u.input_tokens,
            u.cached_input_tokens,
            u.cached_input_state,
            u.cache_write_input_tokens,
            u.output_tokens,
            u.reasoning_tokens,
        )
    emitted = s.emitted_tools
    if emitted:
        keys += _SHAPE_KEYS * len(emitted)
        emitted = _shapes(emitted)
    facts = _new(
        ProviderFacts,
        (
            s.seq,
            s.exchange,
            s.attempt,
            s.mode,
            s.protocol,
            s.complete,
            s.request_model,
            s.request_bytes,
            s.request_tokens,
            s.turn_state_forwarded,
            s.http_status,
            s.outcome,
            s.usage_state,
            usage,
            s.response_model,
            s.header_model,
            emitted,
            s.output_bytes,
            s.output_text_bytes,
            s.stream_bytes,
            s.delivered,
        ),
    )
    return facts, keys


_EXCHANGE_KEYS = fixed_keys(models.ExchangeRecord)


def _exchange(s: Any) -> tuple[Facts, int]:
    keys = _EXCHANGE_KEYS
    tools = s.delivered_tools
    if tools:
        keys += _SHAPE_KEYS * len(tools)
        tools = _shapes(tools)
    transport = s.transport
    h = s.hpatch
    facts = _new(
        ExchangeFacts,
        (
            s.seq,
            s.exchange,
            s.mode,
            s.protocol,
            s.complete,
            s.thread_id,
            s.attempts,
            s.delivered_attempt,
            s.outcome,
            s.client_status,
            _comparison(s.request),
            _comparison(s.output),
            _comparison(s.output_text),
            (
                transport.provider_stream_bytes,
                transport.client_stream_bytes,
                transport.router_commentary_bytes,
            ),
            tools,
            (
                h.successes,
                h.rejections,
                h.corrections,
                h.unmatched,
                h.diagnostics,
                h.carrier_tokens,
            ),
            s.detail_dropped,
        ),
    )
    return facts, keys


_ERROR_KEYS = fixed_keys(models.ErrorRecord)


def _error(s: Any) -> tuple[Facts, int]:
    return ErrorFacts(s.seq, s.exchange, s.mode, s.protocol, s.category), _ERROR_KEYS


KIND_MARKER = b'"kind":"'
"""Every compact record line holds this; the two letters after it name the kind."""

DecodeRoute = tuple[Callable[[bytes], Any], Callable[[Any], tuple[Facts, int]]]

ROUTES: dict[bytes, DecodeRoute] = {
    b"cl": (msgspec.json.Decoder(struct_for(models.ClientRecord)).decode, _client),
    b"pr": (msgspec.json.Decoder(struct_for(models.ProviderRecord)).decode, _provider),
    b"ex": (msgspec.json.Decoder(struct_for(models.ExchangeRecord)).decode, _exchange),
    b"er": (msgspec.json.Decoder(struct_for(models.ErrorRecord)).decode, _error),
}
"""Per kind (first two letters after :data:`KIND_MARKER`): its decoder and its facts
builder (facts and key count)."""


def decode_counted(line: bytes) -> tuple[Facts, int] | None:
    """The facts of a record line (without its newline) and how many keys they imply, or
    None when the decoder refuses it. The caller still owes the colon count."""
    at = line.find(KIND_MARKER)
    route = ROUTES.get(line[at + 8 : at + 10]) if at >= 0 else None
    if route is None:
        return None
    try:
        return route[1](route[0](line))
    except msgspec.DecodeError:  # validation errors included
        return None


def decode_line(line: bytes) -> Facts | None:
    """The facts of a record line (without its newline), or None for the general route."""
    counted = decode_counted(line)
    if counted is None or line.count(b":") != counted[1]:
        return None
    return counted[0]
