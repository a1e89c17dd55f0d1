"""The fast paths agree with the contract's converter.

``_check`` (dict checks) must accept exactly what the strict cattrs converter accepts, and
``decode_line`` (the compiled fast route) must accept a line exactly when ``_check``
accepts its object, however it is spelled, and produce the same facts; a line with a
repeated key, which the general route refuses, must never take the fast route.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpbench._jsonio import canonical_json
from hpbench.capture._check import record_ok
from hpbench.capture._converter import CONVERTER
from hpbench.capture._decode import decode_line
from hpbench.capture._facts import facts_from_json
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


def _converter_accepts(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    kind = value.get("kind")
    cls = RECORD_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        return False
    try:
        CONVERTER.structure(value, cls)
    except Exception:
        return False
    return True


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


class TestDictCheck:
    @pytest.mark.parametrize("record", SAMPLES, ids=lambda r: f"{r['kind']}-{r['seq']}")
    def test_accepts_written_records(self, record):
        """Everything the writer writes passes both the fast check and the converter."""
        assert (True, True) == (record_ok(record), _converter_accepts(record))

    @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutated_records())
    def test_agrees_with_converter(self, record):
        """The dict check accepts a mutated record exactly when cattrs does."""
        assert _converter_accepts(record) == record_ok(record)


def _line(record: dict[str, Any], **dumps: Any) -> bytes:
    return json.dumps(record, ensure_ascii=False, **dumps).encode("utf-8")


class TestFastRoute:
    @pytest.mark.parametrize("record", SAMPLES, ids=lambda r: f"{r['kind']}-{r['seq']}")
    def test_same_facts(self, record):
        """A written line yields the facts of its decoded object."""
        assert facts_from_json(record) == decode_line(canonical_json(record).encode())

    @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutated_records())
    def test_agrees_with_dict_check(self, record):
        """A line takes the fast route exactly when its object passes the dict check (unless
        a string holds a colon), and then with equal facts."""
        line = canonical_json(record).encode()
        facts = decode_line(line)
        if facts is None and record_ok(record):
            assert line.count(b":") > _keys(record)  # only a colon in a string says no
        else:
            assert record_ok(record) == (facts is not None)
        if facts is not None:
            assert facts_from_json(record) == facts

    @settings(deadline=None)
    @given(
        st.sampled_from(SAMPLES),
        st.sampled_from([(",", ":"), (", ", ":"), (",", ": "), (" ,", " : ")]),
        st.booleans(),
    )
    def test_spelling_does_not_change_the_facts(self, record, separators, sort_keys):
        """Key order and whitespace never change the facts; a compact line takes the fast
        route in any key order (a spaced one may go to the general route)."""
        line = _line(record, separators=separators, sort_keys=sort_keys)
        facts = decode_line(line)
        if separators[1] == ":":
            assert facts is not None
        if facts is not None:
            assert facts_from_json(record) == facts

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(SAMPLES), st.data())
    def test_repeated_key_never_takes_the_fast_route(self, record, data):
        """A key written twice (which a plain decoder would let the last one win) goes to
        the general route, which refuses it; also when whitespace hides a colon."""
        paths = [p for p in _paths(record) if p]
        path = data.draw(st.sampled_from(paths))
        spacing = data.draw(st.sampled_from([":", " :", ": "]))
        text = canonical_json(record)
        key = json.dumps(path[-1]) if isinstance(path[-1], str) else None
        if key is None:
            return  # a list element has no key to repeat
        parent: Any = record
        for step in path[:-1]:
            parent = parent[step]
        # Insert the repeated key right after the opening brace of its parent object.
        repeated = f"{key}:{canonical_json(parent[path[-1]])},"
        body = canonical_json(parent)
        assert body in text
        spaced = body.replace(f"{key}:", f"{key}{spacing}", 1)
        line = text.replace(body, "{" + repeated + spaced[1:], 1).encode()
        assert decode_line(line) is None
        with pytest.raises(ValueError, match="duplicate key"):
            json.loads(line, object_pairs_hook=_refuse_duplicates)

    def test_escaped_strings(self):
        """Escapes in strings decode as json does."""
        record = copy.deepcopy(next(r for r in SAMPLES if r["kind"] == "client"))
        record["thread"]["thread_id"] = 'a"b\\c\u00e9\n\u2028'
        record["thread"]["root_thread_id"] = record["thread"]["thread_id"]
        facts = decode_line(canonical_json(record).encode())
        assert facts is not None
        assert 'a"b\\c\u00e9\n\u2028' == facts.thread_id

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
        """What the converter refuses, the fast route refuses: no float, bool or case
        coercion, no negative count."""
        record = next(r for r in SAMPLES if r["kind"] == "client" and r["request_bytes"])
        line = canonical_json(record).replace(old, new, 1)
        assert line != canonical_json(record)
        assert decode_line(line.encode()) is None

    def test_invalid_utf8_never_takes_the_fast_route(self):
        """An encoded surrogate (which json.loads would pass) is refused by the fast route."""
        record = copy.deepcopy(next(r for r in SAMPLES if r["kind"] == "client"))
        line = canonical_json(record).encode().replace(b'"root"', b'"ro\xed\xa0\x80ot"', 1)
        assert decode_line(line) is None


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        msg = "duplicate key"
        raise ValueError(msg)
    return dict(pairs)


def _keys(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_keys(v) for v in value.values())
    if isinstance(value, list):
        return sum(_keys(v) for v in value)
    return 0
