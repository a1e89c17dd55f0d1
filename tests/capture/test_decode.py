"""One line, one record: the compiled fast route agrees with the contract's converter.

The structs are generated from the attrs models; a line takes the fast route only when
the decoder accepts it and re-encoding reproduces it, and then it must be exactly the
record the converter makes of the line. Every other line goes to the general route, which
accepts exactly what the converter accepts and refuses a repeated key.
"""

from __future__ import annotations

import copy
import json
import tempfile
import typing
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpbench._jsonio import canonical_json
from hpbench.capture import codes
from hpbench.capture._converter import CONVERTER
from hpbench.capture._decode import RECORD_STRUCTS, decode_canonical, decode_record, struct_for
from hpbench.capture._sink import FindingSink
from hpbench.capture.models import RECORD_CLASSES, CaptureErrorCategory, Protocol, RouterMode
from hpbench.capture.synthetic import write_synthetic_capture
from hpbench.capture.writer import CaptureWriter


def _samples() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        write_synthetic_capture(Path(tmp) / "a", exchanges=14, retry_every=3, child_every=4)
        write_synthetic_capture(
            Path(tmp) / "b", mode=RouterMode.PASSTHROUGH, protocol=Protocol.CTP2, exchanges=4
        )
        writer = CaptureWriter(Path(tmp) / "c", mode=RouterMode.HPATCH, protocol=Protocol.CTP2)
        writer.record_error(CaptureErrorCategory.USAGE_PARSE, exchange=3)
        writer.record_error(CaptureErrorCategory.INTERNAL)
        writer.close()
        lines: list[str] = []
        for name in ("a", "b", "c"):
            lines += (Path(tmp) / name / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


SAMPLES = _samples()

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(
        ["", "client", "hpatch", "native", "ctp2", "root", "explicit", "completed", "6", "x"]
    )
    | st.sampled_from([0, 1, 6, -1, 200, True, False, 6.0])
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _converted(value: Any) -> dict[str, Any] | None:
    """What the strict converter makes of a decoded line (as JSON data), or None."""
    if not isinstance(value, dict):
        return None
    kind = value.get("kind")
    cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        return None
    try:
        record = CONVERTER.structure(value, cls)
    except Exception:
        return None
    data: dict[str, Any] = json.loads(canonical_json(CONVERTER.unstructure(record)))
    return data


def _data(record: Any) -> dict[str, Any]:
    """A decoded record as JSON data, to compare with the converter's."""
    data: dict[str, Any] = json.loads(msgspec.json.encode(record))
    return data


@st.composite
def mutated_records(draw: st.DrawFn) -> dict[str, Any]:
    record = copy.deepcopy(draw(st.sampled_from(SAMPLES)))
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        path = draw(st.sampled_from(_paths(record)))
        if not path:
            continue
        parent = record
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=5))] = draw(json_values)
        else:
            parent.append(draw(json_values))
    return record


def _general(line: bytes) -> tuple[Any, FindingSink]:
    sink = FindingSink()
    return decode_record(line, sink, file="records.jsonl", line=7), sink


class TestStructs:
    @pytest.mark.parametrize("cls", sorted(RECORD_CLASSES.values(), key=lambda c: c.__name__))
    def test_mirror_the_models(self, cls):
        """Each struct has the fields of its attrs class (kind as the tag), nested alike."""

        def fields(model: type[Any], struct: type[msgspec.Struct]) -> None:
            names = [f.name for f in attrs.fields(model) if f.name != "kind"]
            assert sorted(names) == list(struct.__struct_fields__)
            hints = typing.get_type_hints(model)
            for name in names:
                nested = [a for a in typing.get_args(hints[name]) if attrs.has(a)]
                nested += [hints[name]] if attrs.has(hints[name]) else []
                for inner in nested:
                    fields(inner, struct_for(inner))

        struct = RECORD_STRUCTS[typing.get_args(typing.get_type_hints(cls)["kind"])[0]]
        fields(cls, struct)
        assert struct.__struct_config__.tag_field == "kind"
        assert struct.kind == struct.__struct_config__.tag


class TestFastRoute:
    @pytest.mark.parametrize("record", SAMPLES, ids=lambda r: f"{r['kind']}-{r['seq']}")
    def test_written_line_is_its_record(self, record):
        """A line the writer writes takes the fast route and is the converter's record."""
        decoded = decode_canonical(canonical_json(record).encode())

        assert decoded is not None
        assert _converted(record) == _data(decoded)

    @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutated_records())
    def test_never_more_lenient_than_the_converter(self, record):
        """A mutated record takes the fast route only when the converter accepts it, and
        then it is the same record."""
        decoded = decode_canonical(canonical_json(record).encode())

        if decoded is not None:
            assert _converted(record) == _data(decoded)

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(SAMPLES), st.data())
    def test_repeated_key_never_takes_the_fast_route(self, record, data):
        """A key written twice (a plain decoder lets the last one win) does not re-encode to
        its line; the general route refuses it, naming the key."""
        paths = [p for p in _paths(record) if p and isinstance(p[-1], str)]
        path = data.draw(st.sampled_from(paths))
        parent: Any = record
        for step in path[:-1]:
            parent = parent[step]
        text = canonical_json(record)
        body = canonical_json(parent)
        assert body in text
        key = json.dumps(path[-1])
        value = data.draw(st.sampled_from([parent[path[-1]], None, 0]))
        line = text.replace(body, "{" + f"{key}:{canonical_json(value)}," + body[1:], 1).encode()

        assert decode_canonical(line) is None
        decoded, sink = _general(line)
        assert decoded is None
        assert [(codes.RECORD_SYNTAX, 7)] == [(f.code, f.line) for f in sink.findings]
        assert f"duplicate key {path[-1]!r}" in sink.findings[0].message

    @pytest.mark.parametrize(
        ("old", "new"),
        [
            ('"seq":', '"seq":1.0,"x":'),
            ('"complete":true', '"complete":1'),
            ('"request_bytes":', '"request_bytes":-'),
            ('"schema_version":6', '"schema_version":6.0'),
            ('"schema_version":6', '"schema_version":true'),
            ('"role":"root"', '"role":"Root"'),
        ],
    )
    def test_no_coercion(self, old, new):
        """What the converter refuses, both routes refuse: no float, bool or case coercion,
        no negative count."""
        record = next(r for r in SAMPLES if r["kind"] == "client" and r["request_bytes"])
        line = canonical_json(record).replace(old, new, 1)
        assert line != canonical_json(record)

        assert decode_canonical(line.encode()) is None
        assert _general(line.encode())[0] is None

    def test_escaped_strings(self):
        """Escapes in strings decode as json does."""
        record = copy.deepcopy(next(r for r in SAMPLES if r["kind"] == "client"))
        record["thread"]["thread_id"] = 'a"b\\c\u00e9\n\u2028'
        record["thread"]["root_thread_id"] = record["thread"]["thread_id"]

        decoded = decode_canonical(canonical_json(record).encode())

        assert decoded is not None
        assert 'a"b\\c\u00e9\n\u2028' == decoded.thread.thread_id

    def test_invalid_utf8_is_refused(self):
        """An encoded surrogate (which json.loads would pass) is refused by both routes."""
        record = copy.deepcopy(next(r for r in SAMPLES if r["kind"] == "client"))
        line = canonical_json(record).encode().replace(b'"root"', b'"ro\xed\xa0\x80ot"', 1)

        assert decode_canonical(line) is None
        decoded, sink = _general(line)
        assert decoded is None
        assert "not UTF-8" in sink.findings[0].message


def _line(record: dict[str, Any], **dumps: Any) -> bytes:
    return json.dumps(record, ensure_ascii=False, **dumps).encode("utf-8")


class TestGeneralRoute:
    @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutated_records(), st.sampled_from([(",", ":"), (", ", ": ")]), st.booleans())
    def test_accepts_exactly_what_the_converter_accepts(self, record, separators, sort_keys):
        """In any spelling, a record is accepted exactly when the converter accepts it, as
        the converter's record; a refusal is a finding on the line."""
        line = _line(record, separators=separators, sort_keys=sort_keys)

        decoded, sink = _general(line)

        expected = _converted(record) if record.get("schema_version") == 6 else None
        if record.get("schema_version") == 6 and type(record["schema_version"]) is not int:
            expected = None
        assert expected == (None if decoded is None else _data(decoded))
        assert (decoded is None) == bool(sink.findings)
        assert all(f.line == 7 for f in sink.findings)

    @settings(deadline=None)
    @given(
        st.sampled_from(SAMPLES),
        st.sampled_from([(", ", ":"), (",", ": "), (" ,", " : ")]),
        st.booleans(),
    )
    def test_spelling_does_not_change_the_record(self, record, separators, sort_keys):
        """Key order and whitespace are not part of the contract; a non-canonical line goes
        to the general route and is the same record."""
        line = _line(record, separators=separators, sort_keys=sort_keys)

        assert decode_canonical(line) is None
        decoded, sink = _general(line)
        assert [] == sink.findings
        assert _converted(record) == _data(decoded)

    def test_unknown_kind_names_the_field(self):
        """A record of no known kind is refused on $.kind."""
        decoded, sink = _general(b'{"kind":"teapot","schema_version":6}')

        assert decoded is None
        assert [(codes.RECORD_SCHEMA, "$.kind")] == [(f.code, f.field) for f in sink.findings]
