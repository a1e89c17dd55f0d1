"""``hpbench changes compare``: the files it writes and its exit codes."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from .conftest import run_cli


def read_z(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data == b"" or data.endswith(b"\0")
    return data.split(b"\0")[:-1]


class TestOutputs:
    def test_nothing_changed_exits_0_with_empty_outputs(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        out = tmp_path / "out"
        result = run_cli("changes", "compare", str(base), str(work), "--out", str(out))
        assert 0 == result.returncode, result.stderr
        assert b"" == (out / "changed-paths.z").read_bytes()
        assert {"schema": "hpbench.changes.v1", "changes": []} == json.loads(
            (out / "changes.json").read_text()
        )
        stream = (out / "changes.fi").read_bytes()
        assert stream.startswith(b"commit refs/heads/base\n")
        assert stream.endswith(b"done\n")

    def test_odd_names_round_trip_through_changed_paths_z(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        odd = [b"caf\xe9.txt", b"new\nline.txt", b"sp ace.txt"]
        for name in odd:
            (work / os.fsdecode(name)).write_bytes(b"odd\n")
        (work / "doomed.txt").unlink()
        out = tmp_path / "out"
        result = run_cli("changes", "compare", str(base), str(work), "--out", str(out))
        assert 0 == result.returncode, result.stderr
        assert sorted([*odd, b"doomed.txt"]) == read_z(out / "changed-paths.z")

    def test_changes_json_names_every_change(self, base: Path, work: Path, tmp_path: Path) -> None:
        (work / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"odd\n")
        (work / "README.md").chmod(0o755)
        (work / "sub" / ".git").mkdir(parents=True)
        (work / "sub" / ".git" / "config").write_bytes(b"[core]\n")
        os.mkfifo(work / "pipe")
        out = tmp_path / "out"
        result = run_cli("changes", "compare", str(base), str(work), "--out", str(out), "--json")
        assert 0 == result.returncode, result.stderr
        assert {"changes": 4, "in_diff": 2, "out": str(out)} == json.loads(result.stdout)
        document = json.loads((out / "changes.json").read_text(encoding="utf-8"))
        changes = {change["path"]: change for change in document["changes"]}
        assert {
            "path": "README.md",
            "path_base64": None,
            "status": "modified",
            "before_kind": "file",
            "after_kind": "file",
            "before_mode": "100644",
            "after_mode": "100755",
            "in_diff": True,
        } == changes["README.md"]
        odd = changes["caf\\xe9.txt"]
        assert b"caf\xe9.txt" == base64.b64decode(odd["path_base64"])
        assert odd["in_diff"]
        assert not changes["sub/.git/config"]["in_diff"]
        assert ("fifo", None, False) == (
            changes["pipe"]["after_kind"],
            changes["pipe"]["after_mode"],
            changes["pipe"]["in_diff"],
        )

    def test_crlf_bytes_are_recorded_literally(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        (work / "crlf.txt").write_bytes(b"one\r\nTWO\r\n")
        out = tmp_path / "out"
        assert (
            0 == run_cli("changes", "compare", str(base), str(work), "--out", str(out)).returncode
        )
        stream = (out / "changes.fi").read_bytes()
        assert b"data 10\none\r\ntwo\r\n" in stream
        assert b"data 10\none\r\nTWO\r\n" in stream


class TestErrors:
    def test_missing_work_is_1_and_names_it(self, base: Path, tmp_path: Path) -> None:
        missing = tmp_path / "gone"
        out = tmp_path / "out"
        result = run_cli("changes", "compare", str(base), str(missing), "--out", str(out))
        assert 1 == result.returncode
        assert str(missing).encode() in result.stderr
        assert not (out / "changed-paths.z").exists()

    def test_missing_base_is_1_and_names_it(self, work: Path, tmp_path: Path) -> None:
        missing = tmp_path / "gone"
        result = run_cli(
            "changes", "compare", str(missing), str(work), "--out", str(tmp_path / "out"), "--json"
        )
        assert 1 == result.returncode
        [finding] = json.loads(result.stdout)["findings"]
        assert (str(missing), "changes.tree.missing") == (finding["file"], finding["code"])
