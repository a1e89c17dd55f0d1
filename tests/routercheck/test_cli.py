"""``hpbench router check RUN_DIR``: one line per item, verdicts.json, exit 0 only when all
items are ok."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench._cli.main import main
from hpbench.routercheck import evidence
from hpbench.routercheck.judge import ITEMS


def test_all_ok(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert 0 == main(["router", "check", str(run_dir)])
    lines = capsys.readouterr().out.splitlines()
    assert list(ITEMS) == [line.split()[1] for line in lines]
    assert all(line.startswith("ok ") for line in lines)
    document = json.loads((run_dir / "verdicts.json").read_text())
    assert document["ok"] is True
    assert list(ITEMS) == [item["item"] for item in document["items"]]


def test_one_failure_exits_1(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (run_dir / evidence.IDENTITY_OUT).write_text("not json\n")
    assert 1 == main(["router", "check", "--json", str(run_dir)])
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is False
    failed = [item for item in document["items"] if not item["ok"]]
    assert ["identity"] == [item["item"] for item in failed]
    assert "identity.out" == failed[0]["findings"][0]["file"]
    assert "$" == failed[0]["findings"][0]["field"]


def test_not_a_directory(tmp_path: Path) -> None:
    assert 2 == main(["router", "check", str(tmp_path / "nothing")])
