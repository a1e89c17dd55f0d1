"""The fast paths agree with the contract's converter.

``_check`` (dict checks) must accept exactly what the strict cattrs converter accepts, and
``parse_canonical`` (the regular-expression route) must accept a canonical line exactly
when ``_check`` accepts its object, and produce the same facts.
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
from hpbench.capture._facts import facts_from_json, parse_canonical
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


class TestCanonicalRoute:
    @pytest.mark.parametrize("record", SAMPLES, ids=lambda r: f"{r['kind']}-{r['seq']}")
    def test_same_facts(self, record):
        """A canonical line yields the facts of its decoded object."""
        assert facts_from_json(record) == parse_canonical(canonical_json(record))

    @settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutated_records())
    def test_agrees_with_dict_check(self, record):
        """A canonical line takes the fast route exactly when its object passes the dict
        check, and then with equal facts."""
        facts = parse_canonical(canonical_json(record))
        assert record_ok(record) == (facts is not None)
        if facts is not None:
            assert facts_from_json(record) == facts

    @settings(deadline=None)
    @given(st.sampled_from(SAMPLES), st.sampled_from([" ", "\t"]))
    def test_non_canonical_spelling_takes_the_general_route(self, record, space):
        """Whitespace sends a valid line to the general route, which still accepts it."""
        line = json.dumps(record, sort_keys=True, separators=(",", ":" + space))
        assert parse_canonical(line) is None
        assert record_ok(json.loads(line))

    def test_escaped_strings(self):
        """Escapes in strings decode as json does."""
        record = copy.deepcopy(next(r for r in SAMPLES if r["kind"] == "client"))
        record["thread"]["thread_id"] = 'a"b\\c\u00e9\n\u2028'
        record["thread"]["root_thread_id"] = record["thread"]["thread_id"]
        facts = parse_canonical(canonical_json(record))
        assert facts is not None
        assert 'a"b\\c\u00e9\n\u2028' == facts.thread_id
