"""One record line to one record: a compiled decoder first, the strict converter otherwise.

The record contract is written once, as the attrs classes of :mod:`hpbench.capture.models`.
At import each of them is compiled into a :mod:`msgspec` struct with the converter's
rules (every field required, unknown fields refused, ``Count`` a non-negative integer,
``Ident`` a non-empty string, enums and literals exact, no coercion of booleans, floats or
case), and the four record structs form one union tagged by ``kind``.

A line takes the **fast route** when that decoder accepts it *and* re-encoding the record
reproduces the line byte for byte. Re-encoding is the proof that the record is all the
line says: a decoder keeps the last of two equal keys, which the contract refuses, and a
repeated key can never re-encode to the same bytes. Lines the writer writes (canonical
JSON: sorted keys, no insignificant whitespace) take this route.

Any other line takes the **general route**: :func:`json.loads` refusing repeated keys, the
version and kind checks, and the strict cattrs converter, which decides and names the
field of a refused record. Both routes give the same record; ``tests/capture/test_decode.py``
proves on generated and mutated records that the fast route never accepts what the
converter refuses.

The structs mirror the attrs classes field for field: the same names and the same Python
value types (enum members, ints, strings, nested structs for nested classes, tuples for
lists), and a class attribute ``kind`` on each record struct. Code typed against the attrs
classes therefore reads them unchanged; :func:`decode_record` is typed to return
:data:`~hpbench.capture.models.Record` on that basis. Never test them with ``isinstance``
against the attrs classes: dispatch on ``kind``.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import Annotated, Any

import attrs
import msgspec

from hpbench._convert import structure
from hpbench.capture import codes
from hpbench.capture._converter import CONVERTER
from hpbench.capture._sink import FindingSink
from hpbench.capture.models import (
    RECORD_CLASSES,
    RECORD_SCHEMA_VERSION,
    Count,
    Ident,
    Record,
)
from hpbench.errors import ContractError

_SIMPLE: dict[Any, Any] = {
    Count: Annotated[int, msgspec.Meta(ge=0)],
    Ident: Annotated[str, msgspec.Meta(min_length=1)],
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
            msg = f"no struct type for {tp!r}"
            raise TypeError(msg)
        return _decoded_type(inner[0]) | None
    if origin is typing.Literal or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        return tp
    if origin is tuple:
        return tuple[_decoded_type(args[0]), ...]  # type: ignore[misc]
    if attrs.has(tp):
        return struct_for(tp)
    return _SIMPLE[tp]


def struct_for(cls: type[Any], *, kind: str | None = None) -> type[msgspec.Struct]:
    """The msgspec struct generated from the attrs class ``cls``.

    Fields are declared in sorted order, so that a sorted encoding is canonical JSON. A
    record class (``kind`` given) is tagged by ``kind`` instead of holding it as a field.
    """
    struct = _STRUCTS.get(cls)
    if struct is None:
        hints = typing.get_type_hints(cls)
        names = sorted(field.name for field in attrs.fields(cls) if field.name != "kind")
        tag: dict[str, Any] = {} if kind is None else {"tag_field": "kind", "tag": kind}
        struct = msgspec.defstruct(
            f"Decoded{cls.__name__}",
            [(name, _decoded_type(hints[name])) for name in names],
            forbid_unknown_fields=True,
            kw_only=True,
            # Records hold scalars, enums, tuples and other records, never a cycle, so the
            # garbage collector need not track the hundreds of thousands a capture decodes.
            gc=False,
            module=__name__,
            **tag,
        )
        if kind is not None:
            struct.kind = kind  # type: ignore[attr-defined]  # read like the attrs field
        _STRUCTS[cls] = struct
    return struct


RECORD_STRUCTS: dict[str, type[msgspec.Struct]] = {
    kind: struct_for(cls, kind=kind) for kind, cls in RECORD_CLASSES.items()
}
"""The struct of each record ``kind``."""

_DECODE = msgspec.json.Decoder(typing.Union[tuple(RECORD_STRUCTS.values())]).decode  # noqa: UP007
_ENCODE = msgspec.json.Encoder(order="sorted").encode
_CONVERT_TYPE: Any = typing.Union[tuple(RECORD_STRUCTS.values())]  # noqa: UP007


def decode_canonical(line: bytes) -> Record | None:
    """The record of a canonical line (without its newline), or None for the general route."""
    try:
        record = _DECODE(line)
    except msgspec.DecodeError:  # validation errors included
        return None
    if _ENCODE(record) != line:
        return None
    return record  # type: ignore[no-any-return]


def encode_record(record: Record) -> bytes:
    """The canonical JSON of a record (a decoded struct), without newline."""
    return _ENCODE(record)


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        msg = f"duplicate key {repeated!r}"
        raise ValueError(msg)
    return result


def loads_unique(raw: bytes | str) -> Any:
    """:func:`json.loads` refusing an object with a repeated key (the contract's JSON).

    Raises:
        ValueError: not JSON, or a repeated key.
        RecursionError: nesting deeper than the interpreter allows.
    """
    return json.loads(raw, object_pairs_hook=_refuse_repeated_keys)


def decode_record(raw: bytes, sink: FindingSink, *, file: str, line: int) -> Record | None:
    """The record of one line (without its newline), or None after adding why to ``sink``."""
    record = decode_canonical(raw)
    if record is not None:
        return record
    return decode_general(raw, sink, file=file, line=line)


def decode_general(raw: bytes, sink: FindingSink, *, file: str, line: int) -> Record | None:
    """The general route alone: for a line the fast route did not take."""
    if not raw.strip():
        sink.add(codes.RECORD_SYNTAX, "empty line", file=file, line=line)
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        # json.loads would let encoded surrogates through; a record is UTF-8 text.
        sink.add(codes.RECORD_SYNTAX, f"not UTF-8: {exc}", file=file, line=line)
        return None
    try:
        value = loads_unique(raw)
    except (ValueError, RecursionError) as exc:
        sink.add(codes.RECORD_SYNTAX, f"not a JSON object: {exc}", file=file, line=line)
        return None
    if not isinstance(value, dict):
        sink.add(codes.RECORD_SYNTAX, "a record must be a JSON object", file=file, line=line)
        return None
    version = value.get("schema_version")
    if type(version) is not int or version != RECORD_SCHEMA_VERSION:
        shown = "missing" if "schema_version" not in value else json.dumps(version)
        sink.add(
            codes.SCHEMA_VERSION,
            f"schema_version is {shown}; this validator reads schema-{RECORD_SCHEMA_VERSION} "
            "records only",
            file=file,
            line=line,
            field="$.schema_version",
        )
        return None
    kind = value.get("kind")
    cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        allowed = ", ".join(repr(k) for k in RECORD_CLASSES)
        sink.add(
            codes.RECORD_SCHEMA,
            f"kind must be one of {allowed}, got {json.dumps(kind)}",
            file=file,
            line=line,
            field="$.kind",
        )
        return None
    try:
        structure(CONVERTER, value, cls, source=file, code=codes.RECORD_SCHEMA)
    except ContractError as exc:
        for finding in exc.findings:
            sink.add_finding(attrs.evolve(finding, line=line))
        return None
    try:
        return msgspec.convert(value, _CONVERT_TYPE)  # type: ignore[no-any-return]
    except msgspec.ValidationError:  # pragma: no cover - the two agree (test_decode.py)
        sink.add(
            codes.RECORD_SCHEMA, f"does not match the {cls.__name__} contract", file=file, line=line
        )
        return None


def to_attrs(record: Record) -> Record:
    """The attrs object of a decoded record (for callers that want the models' classes)."""
    data = msgspec.to_builtins(record)
    return CONVERTER.structure(data, RECORD_CLASSES[record.kind])  # type: ignore[no-any-return]
