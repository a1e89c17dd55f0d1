"""A fixed corpus of broken captures, each refused with exactly the findings on record.

Each case is a small synthetic capture broken one way (a record deleted, duplicated,
moved, truncated, re-spelled, given a repeated key or a wrong field; a snapshot figure
changed; junk lines), made reproducibly from its seed. ``data/mutation_corpus.json``
holds the findings on the record files (code, line, field) of every case as the
validator reported them before its single-pass rewrite; any change to a rejection shows
up here, line for line. (What the snapshot reconciliation makes of a broken capture is
held by ``test_properties.py`` and ``test_validator.py``.)
Regenerate it (``python tests/capture/test_mutation_corpus.py``) only for a deliberate
change in what the validator reports.
"""

from __future__ import annotations

import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from hpbench._jsonio import canonical_json
from hpbench.capture.models import Protocol, RouterMode
from hpbench.capture.synthetic import codex_streams, write_snapshot, write_synthetic_capture
from hpbench.capture.validator import validate_capture

CORPUS = Path(__file__).parent / "data" / "mutation_corpus.json"
CASES = 160

_SCALARS: list[Any] = [
    None, True, False, 0, 1, -1, 6, 200, 2**70, 1.0, "", "x", "root", "child", "hpatch",
    "passthrough", "ctp2", "explicit", "missing", "reported", "absent", "connect_error",
    "provider", "exchange", [], {}, "a:b",
]  # fmt: skip
_JUNK = ["[1]\n", "nope\n", '{"schema_version":6}\n', '{"schema_version":6,"kind":"zzz"}\n',
         '{"schema_version":5}\n', '"x"\n', "\n"]  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _parent(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        value = value[step]
    return value


def _break_record(rng: random.Random, record: dict[str, Any]) -> dict[str, Any]:
    record = copy.deepcopy(record)
    path = rng.choice([p for p in _paths(record) if p])
    parent = _parent(record, path)
    action = rng.choice(["replace", "delete", "add", "bump"])
    if action == "replace":
        parent[path[-1]] = copy.deepcopy(rng.choice(_SCALARS))
    elif action == "delete":
        del parent[path[-1]]
    elif action == "bump" and type(parent[path[-1]]) is int:
        parent[path[-1]] += rng.choice([-1, 1, 7])
    elif isinstance(parent, dict):
        parent[rng.choice(["x", "seq", "kind", "usage"])] = rng.choice(_SCALARS)
    return record


def _break_line(rng: random.Random, how: str, line: str, count: int) -> str:
    record = json.loads(line)
    if how == "field":
        return canonical_json(_break_record(rng, record)) + "\n"
    if how == "repeat":
        key = json.dumps(rng.choice(sorted(record)))
        return "{" + key + ":" + json.dumps(rng.choice(_SCALARS)) + "," + line[1:]
    if how == "spelling":
        if rng.random() < 0.5:
            record = _break_record(rng, record)
        return json.dumps(record, sort_keys=rng.random() < 0.5) + "\n"
    if how == "seq":
        record["seq"] = rng.randrange(count + 2)
    else:
        record["protocol"] = "native" if record["protocol"] == "ctp2" else "ctp2"
    return canonical_json(record) + "\n"


def _break(rng: random.Random, lines: list[str], snapshot: dict[str, Any]) -> str:
    """Break the capture one way; return the record file's new text (``snapshot`` in place)."""
    index = rng.randrange(len(lines))
    how = rng.choice(
        ["delete", "duplicate", "move", "truncate", "field", "field", "snapshot", "repeat",
         "spelling", "seq", "junk", "no newline", "binding"]
    )  # fmt: skip
    if how == "delete":
        del lines[index]
    elif how == "duplicate":
        lines.insert(rng.randrange(len(lines) + 1), lines[index])
    elif how == "move":
        lines.insert(rng.randrange(len(lines)), lines.pop(index))
    elif how == "truncate":
        text = "".join(lines)
        return text[: rng.randrange(len(text))]
    elif how in ("field", "repeat", "spelling", "seq", "binding"):
        lines[index] = _break_line(rng, how, lines[index], len(lines))
    elif how == "snapshot":
        ints = [p for p in _paths(snapshot) if p and type(_parent(snapshot, p)[p[-1]]) is int]
        path = rng.choice(ints)
        _parent(snapshot, path)[path[-1]] += rng.choice([-3, -1, 1, 5])
    elif how == "junk":
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(_JUNK))
    else:
        lines[-1] = lines[-1].rstrip("\n")
    return "".join(lines)


def findings_of_case(seed: int, root: Path) -> list[str]:
    """Write case ``seed`` under ``root``, validate it, and return its findings as
    ``code|file name|line|field``, sorted."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data
    mode = rng.choice(list(RouterMode))
    protocol = Protocol.NATIVE if mode is RouterMode.PASSTHROUGH else rng.choice(list(Protocol))
    snapshot = write_synthetic_capture(
        root / "capture",
        mode=mode,
        protocol=protocol,
        exchanges=rng.randint(1, 12),
        seed=rng.randrange(1000),
        retry_every=rng.choice([0, 2, 3]),
        child_every=rng.choice([0, 2, 4]),
        root_threads=rng.randint(1, 2),
    )
    streams = codex_streams(snapshot, root / "codex")
    record_file = root / "capture" / "records.jsonl"
    lines = record_file.read_text().splitlines(keepends=True)
    record_file.write_text(_break(rng, lines, snapshot))
    write_snapshot(snapshot, root / "metrics.json")
    arm = "control" if mode is RouterMode.PASSTHROUGH else "hpatch"
    report = validate_capture(
        root / "capture",
        root / "metrics.json",
        arm=arm,
        expect_protocol=None if arm == "control" else protocol.value,
        codex_jsonl=streams if rng.random() < 0.5 else [],
    )
    return sorted(
        f"{f.code}|{Path(f.file).name}|{f.line or ''}|{f.field or ''}"
        for f in report.findings
        if f.file is not None and f.file != str(root / "metrics.json")
    )


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads(CORPUS.read_text())
    return data


@pytest.mark.parametrize("seed", range(CASES))
def test_case_gets_the_findings_on_record(seed, corpus, tmp_path):
    """The case's findings are exactly those on record (code, file, line, field); the few
    breaks that leave a capture valid (a harmless re-spelling) stay valid."""
    assert corpus[str(seed)] == findings_of_case(seed, tmp_path)


def test_corpus_covers_every_record_rejection(corpus):
    """The corpus exercises the record-level rejections, and nearly every case has some."""
    seen = {finding.split("|")[0] for findings in corpus.values() for finding in findings}
    refused = sum(1 for findings in corpus.values() if findings)

    assert refused >= CASES * 9 // 10
    assert {
        "capture.record.syntax",
        "capture.record.schema",
        "capture.record.invariant",
        "capture.record.sequence",
        "capture.boundary",
        "capture.client.duplicate",
        "capture.incomplete",
        "capture.provider.missing",
        "capture.binding",
    } <= seen


def main(directory: str) -> None:
    """Write the corpus from the validator as it is now."""
    root = Path(directory)
    cases = [
        f"{json.dumps(str(seed))}: {json.dumps(findings_of_case(seed, root / str(seed)))}"
        for seed in range(CASES)
    ]
    CORPUS.write_text("{\n" + ",\n".join(cases) + "\n}\n")


if __name__ == "__main__":
    main(sys.argv[1])
