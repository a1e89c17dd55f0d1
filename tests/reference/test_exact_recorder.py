"""The reference router's exact-evidence recorder (spec 004): what it keeps, how it
publishes it, and that nothing is built or written when it is off."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from hpbench.capture import Protocol, RouterMode
from hpbench.exactevidence import read_records
from hpbench.reference import router as router_cli
from hpbench.reference._exact import ExactRecorder
from hpbench.reference._transform import Transform

from .test_transform import APPLIED, FAILED, HPATCH_CALL, _body


def _routed(call_id: str, tool: str, patch_lines: str) -> dict[str, Any]:
    return {
        **HPATCH_CALL,
        "id": f"{'hpatchr_' if tool == 'hpatch_recover' else 'hpatch_'}ctc_{call_id}",
        "call_id": call_id,
        "name": "apply_patch",
        "input": f"*** Begin Patch\n*** Update File: a.txt\n{patch_lines}\n*** End Patch",
    }


def _answer(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": text}


USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
# A rejected hpatch call, then its applied correction, as Codex resends the history.
FIRST = [USER, _routed("c1", "hpatch", "@@\n-a\n+b"), _answer("c1", FAILED)]
SECOND = [*FIRST, _routed("c2", "hpatch_recover", "@@\n-x\n+b"), _answer("c2", APPLIED)]


def _records(directory: Path) -> list[dict[str, Any]]:
    files = sorted((directory / "records").iterdir())
    return [json.loads(path.read_text()) for path in files]


def _run(directory: Path) -> ExactRecorder:
    transform = Transform(RouterMode.HPATCH, Protocol.CTP2, exact=True)
    recorder = ExactRecorder(directory)
    for exchange, items in ((1, FIRST), (2, SECOND), (3, SECOND)):
        routing = transform.prepare(_body(items), "thread-1")
        recorder.record(
            exchange=exchange,
            session="root-1",
            thread="thread-1",
            model="m",
            attempts=routing.exact,
        )
    return recorder


def test_a_chain_is_recorded_once_per_completed_call(tmp_path: Path) -> None:
    _run(tmp_path)
    first, second = _records(tmp_path)
    assert (1, "c1", "c1", 1, "hpatch", False, "rejected") == (
        first["exchange"],
        first["call"],
        first["chain"],
        first["attempt"],
        first["tool"],
        first["correction"],
        first["outcome"],
    )
    assert (2, "c2", "c1", 2, "hpatch_recover", True, "applied") == (
        second["exchange"],
        second["call"],
        second["chain"],
        second["attempt"],
        second["tool"],
        second["correction"],
        second["outcome"],
    )
    # Exact strings: the model's own hpatch input, the diagnostic it read, Codex's report.
    assert "U a.txt\n@@\n-a\n+b" == first["payload"]["text"]
    assert first["diagnostic"]["text"].startswith("hpatch rejected (context_mismatch)")
    assert first["report"] is None
    assert APPLIED == second["report"]["text"]
    assert second["diagnostic"] is None
    for record in (first, second):
        for name in ("payload", "report", "diagnostic"):
            exact = record[name]
            if exact is not None:
                data = exact["text"].encode()
                assert (len(data), hashlib.sha256(data).hexdigest()) == (
                    exact["bytes"],
                    exact["sha256"],
                )
        # Never the apply_patch text Codex ran, never a header.
        assert "*** Begin Patch" not in json.dumps(record)
        assert {"session", "thread", "model"} <= set(record)


def test_records_are_private_and_published_atomically(tmp_path: Path) -> None:
    _run(tmp_path)
    directory = tmp_path / "records"
    assert 0o700 == stat.S_IMODE(directory.stat().st_mode)
    names = sorted(path.name for path in directory.iterdir())
    assert 2 == len(names)
    assert all(not name.startswith(".") and name.endswith(".json") for name in names)
    assert all(0o600 == stat.S_IMODE((directory / n).stat().st_mode) for n in names)


def test_off_builds_and_writes_nothing(tmp_path: Path) -> None:
    transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
    assert [] == transform.prepare(_body(SECOND), "thread-1").exact
    assert not any(tmp_path.iterdir())


def test_a_correction_without_a_chain_is_not_made_up(tmp_path: Path) -> None:
    transform = Transform(RouterMode.HPATCH, Protocol.NATIVE, exact=True)
    orphan = [USER, _routed("c9", "hpatch_recover", "@@\n-a\n+b"), _answer("c9", APPLIED)]
    routing = transform.prepare(_body(orphan), "thread-2")
    ExactRecorder(tmp_path).record(
        exchange=1, session="r", thread="thread-2", model=None, attempts=routing.exact
    )
    assert [] == list((tmp_path / "records").iterdir())


def test_a_failed_write_never_changes_routing(tmp_path: Path) -> None:
    """The recorder's failure is auxiliary (spec 004): record() returns, the exchange's
    upstream request is the one it would have been, and nothing half-written is left."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    transform = Transform(RouterMode.HPATCH, Protocol.NATIVE, exact=True)
    routing = transform.prepare(_body(FIRST), "t")
    before = routing.upstream_body
    ExactRecorder(blocker).record(
        exchange=1, session="r", thread="t", model=None, attempts=routing.exact
    )
    assert before == routing.upstream_body
    assert "not a directory" == blocker.read_text()
    assert ["file"] == [path.name for path in tmp_path.iterdir()]


def test_the_flag_needs_hpatch_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "--listen", "127.0.0.1:0", "--capture-output", str(tmp_path / "c"), "--mode",
        "passthrough", "--protocol", "native", "--upstream", "http://127.0.0.1:9/v1",
        "--exact-evidence", str(tmp_path / "e"),
    ]  # fmt: skip
    assert 2 == router_cli.main(argv)
    assert "--exact-evidence needs --mode hpatch" in capsys.readouterr().err


def test_what_it_writes_is_what_the_runner_accepts(tmp_path: Path) -> None:
    """The recorder and the runner's reader (hpbench.exactevidence) share one contract."""
    _run(tmp_path)
    records, findings = read_records(tmp_path)
    assert [] == findings
    assert [("c1", 1), ("c2", 2)] == sorted((r.record.call, r.record.attempt) for r in records)


def test_a_string_that_is_not_utf8_is_left_out_not_mangled(tmp_path: Path) -> None:
    """Codex's answer may carry a lone surrogate (JSON allows it; UTF-8 does not): that
    record is left out (the runner reports the fraction), and routing goes on."""
    transform = Transform(RouterMode.HPATCH, Protocol.NATIVE, exact=True)
    broken = [USER, _routed("c1", "hpatch", "@@\n-a\n+b"), _answer("c1", APPLIED + "\ud800")]
    routing = transform.prepare(_body(broken), "t")
    assert 1 == len(routing.exact)
    ExactRecorder(tmp_path).record(
        exchange=1, session="r", thread="t", model=None, attempts=routing.exact
    )
    assert [] == list((tmp_path / "records").iterdir())


def test_the_directory_exists_before_any_call(tmp_path: Path) -> None:
    """A run that routed no call still shows the router honoured the flag."""
    ExactRecorder(tmp_path)
    assert [] == list((tmp_path / "records").iterdir())
    assert 0o700 == stat.S_IMODE((tmp_path / "records").stat().st_mode)
    assert ([], []) == read_records(tmp_path)
