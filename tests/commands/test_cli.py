"""``hpbench commands analyze|gate`` and ``hpbench codex summarize``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench._cli.main import main
from hpbench.codex.testing import StreamBuilder

DATA = Path(__file__).resolve().parents[1] / "data" / "codex"
LOOP = str(DATA / "real-edit-loop.jsonl")
LOOP_ROOT = "/tmp/corpus/run-edit-loop/ws"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def write(tmp_path: Path, builder: StreamBuilder) -> str:
    path = tmp_path / "codex.jsonl"
    path.write_text(builder.text(), encoding="utf-8")
    return str(path)


class TestAnalyze:
    def test_json(self, capsys: pytest.CaptureFixture[str]):
        """--json prints one hpbench.commands.v2 document."""
        code, out = run(
            capsys, "commands", "analyze", LOOP, "--workspace-root", LOOP_ROOT, "--json"
        )
        document = json.loads(out)
        assert 0 == code
        assert "hpbench.commands.v2" == document["schema"]
        assert {"kind": "file-read", "path": "src/app.go", "operand": "src/app.go", "seq": 0} == (
            document["loops"][0]
        )

    def test_text(self, capsys: pytest.CaptureFixture[str]):
        """Without --json: category table, loops and findings."""
        code, out = run(capsys, "commands", "analyze", LOOP, "--workspace-root", LOOP_ROOT)
        assert 0 == code
        assert "same-path file-read loop" in out
        assert "search\t1\t1" in out

    def test_malformed_lines_exit_1(self, capsys: pytest.CaptureFixture[str]):
        """Unreadable lines: the analysis is printed and the exit code is 1."""
        malformed = str(DATA / "hand-malformed.jsonl")
        code, out = run(
            capsys, "commands", "analyze", malformed, "--workspace-root", "/workspace", "--json"
        )
        assert 1 == code
        assert 9 == len(json.loads(out)["input_findings"])

    def test_missing_file(self, capsys: pytest.CaptureFixture[str], tmp_path: Path):
        """A missing file is an error, not a traceback."""
        code, _ = run(capsys, "commands", "analyze", str(tmp_path / "x"), "--workspace-root", "/")
        assert 1 == code

    def test_root_is_required(self):
        """--workspace-root is required: usage error."""
        with pytest.raises(SystemExit) as exc:
            main(["commands", "analyze", LOOP])
        assert 2 == exc.value.code


class TestGate:
    def test_loops_fail(self, capsys: pytest.CaptureFixture[str]):
        """Any same-path loop exits 1."""
        code, out = run(capsys, "commands", "gate", LOOP, "--workspace-root", LOOP_ROOT, "--json")
        assert 1 == code
        assert {
            "ok": False,
            "attempts": [{"file": LOOP, "loop_invocations": 3, "unreadable_lines": 0}],
        } == json.loads(out)

    def test_clean_passes(self, capsys: pytest.CaptureFixture[str], tmp_path: Path):
        """No loops (terminal validation only) exits 0."""
        builder = StreamBuilder().start().patch(["a.go"]).command("cat a.go").complete()
        code, out = run(
            capsys, "commands", "gate", write(tmp_path, builder), "--workspace-root", "/workspace"
        )
        assert 0 == code
        assert "\nok\t" in out

    def test_workspace_diff_loop_fails_unless_excluded(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ):
        """A bare git diff loop fails the gate; --explicit-paths-only ignores it."""
        builder = StreamBuilder().start().patch(["a.go"]).command("git diff").patch(["a.go"])
        path = write(tmp_path, builder)
        assert 1 == run(capsys, "commands", "gate", path, "--workspace-root", "/workspace")[0]
        assert (
            0
            == run(
                capsys,
                "commands",
                "gate",
                path,
                "--workspace-root",
                "/workspace",
                "--explicit-paths-only",
            )[0]
        )

    def test_unreadable_fails(self, capsys: pytest.CaptureFixture[str], tmp_path: Path):
        """A stream with unreadable lines cannot prove the absence of loops."""
        builder = StreamBuilder().start().raw("{broken").command("ls")
        code, _ = run(
            capsys, "commands", "gate", write(tmp_path, builder), "--workspace-root", "/w"
        )
        assert 1 == code


class TestCodexSummarize:
    def test_json(self, capsys: pytest.CaptureFixture[str]):
        """The summary as JSON: outcome, usage, relative changes, final message."""
        code, out = run(capsys, "codex", "summarize", LOOP, "--workspace-root", LOOP_ROOT, "--json")
        document = json.loads(out)
        assert 0 == code
        assert "completed" == document["outcome"]
        assert 1260 == document["usage"]["input_tokens"]
        assert {"path": "src/app.go", "kind": "update"} == document["file_changes"][1]["changes"][0]

    def test_text_failure(self, capsys: pytest.CaptureFixture[str]):
        """The text form shows the terminal error; unknown usage says unavailable."""
        code, out = run(capsys, "codex", "summarize", str(DATA / "real-failure.jsonl"))
        assert 0 == code
        assert "context window" in out
        assert "unavailable" in out
