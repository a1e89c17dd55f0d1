"""The hpbench command line: exit codes, JSON output, plain text when piped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hpbench._cli.main import main

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m hpbench`` as a person would, with stdout piped."""
    return subprocess.run(
        [sys.executable, "-m", "hpbench", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=REPO_ROOT,
    )


class TestExitCodes:
    def test_help_lists_commands(self) -> None:
        """--help names the command groups and exits 0."""
        result = run_cli("--help")
        assert 0 == result.returncode
        for command in ("task", "workspace"):
            assert command in result.stdout

    def test_usage_error_is_2(self) -> None:
        """An unknown sub-command is a usage error."""
        result = run_cli("task", "frobnicate")
        assert 2 == result.returncode
        assert "invalid choice" in result.stderr

    def test_missing_argument_is_2(self) -> None:
        """A missing required argument is a usage error."""
        assert 2 == run_cli("task", "show").returncode

    def test_unknown_task_is_1(self) -> None:
        """A finding (no such task) exits 1 with a message naming what is known."""
        result = run_cli("task", "show", "no-such-task")
        assert 1 == result.returncode
        assert "no task 'no-such-task'" in result.stderr
        assert "kv-rangestream" in result.stderr
        assert "Traceback" not in result.stderr

    def test_invalid_manifest_is_1_with_findings(self, task_copy: Path) -> None:
        """An invalid manifest exits 1 and lists each finding, as text and as JSON."""
        manifest = task_copy / "task.toml"
        manifest.write_text(
            manifest.read_text().replace('go_version = "1.24.11"', 'go_version = "x"')
        )
        tasks = str(task_copy.parent)
        text = run_cli("task", "--tasks-dir", tasks, "validate", "kv-rangestream")
        assert 1 == text.returncode
        assert "$.runtime.go_version" in text.stderr
        as_json = run_cli("task", "--tasks-dir", tasks, "validate", "kv-rangestream", "--json")
        assert 1 == as_json.returncode
        document = json.loads(as_json.stdout)
        assert document["ok"] is False
        assert ["$.runtime.go_version"] == [f["field"] for f in document["findings"]]

    def test_main_returns_code(self, capsys: pytest.CaptureFixture[str]) -> None:
        """main() returns the code instead of exiting, for embedding."""
        assert 0 == main(["task", "fingerprint", "kv-rangestream"])
        assert capsys.readouterr().out.startswith("sha256:")


class TestStartup:
    def test_imports_only_the_named_command(self) -> None:
        """A task query does not import the Docker, capture or shell-parsing stacks."""
        probe = (
            "import sys; from hpbench._cli.main import main; "
            "main(['--log-level', 'error', 'task', 'fingerprint', 'kv-rangestream']); "
            "heavy = [m for m in ('python_on_whales', 'hpbench.capture', 'tree_sitter') "
            "if m in sys.modules]; print('HEAVY', heavy)"
        )
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO_ROOT
        )
        assert "HEAVY []" in result.stdout

    def test_help_still_lists_every_command(self) -> None:
        """Without a command, every command module is loaded for --help."""
        result = run_cli("--help")
        for command in ("capture", "commands", "report", "run", "topology"):
            assert command in result.stdout


class TestOutput:
    def test_piped_output_is_plain(self) -> None:
        """Piped output has no ANSI escapes and tables become tab-separated lines."""
        result = run_cli("task", "list")
        assert 0 == result.returncode
        assert "\x1b[" not in result.stdout
        header, *rows = result.stdout.splitlines()
        assert ["id", "tier", "fingerprint", "title"] == header.split("\t")
        assert any(row.split("\t")[0] == "kv-rangestream" for row in rows)

    def test_every_query_has_json(self) -> None:
        """list, show, fingerprint and validate all print one JSON document with --json."""
        for args in (
            ("task", "list"),
            ("task", "show", "kv-rangestream"),
            ("task", "fingerprint", "kv-rangestream"),
            ("task", "validate", "kv-rangestream"),
        ):
            result = run_cli(*args, "--json")
            assert 0 == result.returncode, args
            json.loads(result.stdout)

    def test_fingerprint_matches_json_forms(self) -> None:
        """The bare fingerprint equals the one in show --json and list --json."""
        bare = run_cli("task", "fingerprint", "kv-rangestream").stdout.strip()
        shown = json.loads(run_cli("task", "show", "kv-rangestream", "--json").stdout)
        listed = json.loads(run_cli("task", "list", "--json").stdout)
        assert bare == shown["fingerprint"]
        assert [bare] == [t["fingerprint"] for t in listed["tasks"] if t["id"] == "kv-rangestream"]

    def test_field_for_shell_use(self) -> None:
        """task field prints list items one a line and scalars alone."""
        command = run_cli("task", "field", "kv-rangestream", "grader.command").stdout.splitlines()
        assert ["go", "test", "-json"] == command[:3]
        timeout = run_cli("task", "field", "kv-rangestream", "grader.timeout_seconds").stdout
        assert "300\n" == timeout
        preload = run_cli(
            "task", "field", "kv-rangestream", "runtime.preload_go_qualification_grader"
        ).stdout
        assert "false\n" == preload

    def test_fingerprint_inputs_recheck_with_sha256sum(
        self, task_copy: Path, tmp_path: Path
    ) -> None:
        """--inputs lists every fingerprint input so `sha256sum -c` notices any changed byte."""
        tasks = str(task_copy.parent)
        listing = run_cli("task", "--tasks-dir", tasks, "fingerprint", "kv-rangestream", "--inputs")
        sums = tmp_path / "inputs.sha256"
        sums.write_text(listing.stdout)
        assert 3 == len(listing.stdout.splitlines())

        def recheck() -> int:
            return subprocess.run(
                ["sha256sum", "--quiet", "-c", str(sums)], capture_output=True, check=False
            ).returncode

        assert 0 == recheck()
        hidden = task_copy / "hidden" / "kv" / "rangestream_hidden_test.go"
        hidden.write_bytes(hidden.read_bytes().replace(b"10", b"11", 1))
        assert 0 != recheck()

    def test_field_unknown_is_1(self) -> None:
        """An unknown field name is a finding, not an empty line."""
        result = run_cli("task", "field", "kv-rangestream", "grader.nope")
        assert 1 == result.returncode
        assert "no field 'grader.nope'" in result.stderr

    def test_hidden_files_are_tab_separated(self) -> None:
        """hidden-files prints 'workspace path<TAB>absolute path' with a real tab."""
        line = run_cli("task", "hidden-files", "kv-rangestream").stdout.rstrip("\n")
        relative, absolute = line.split("\t")
        assert "kv/rangestream_hidden_test.go" == relative
        assert Path(absolute).is_file()

    def test_log_file_gets_json_lines(self, tmp_path: Path) -> None:
        """--log-file receives structlog events as JSON lines."""
        log = tmp_path / "log.jsonl"
        result = run_cli(
            "--log-file", str(log), "task", "build", "kv-rangestream", "--out", str(tmp_path / "r")
        )
        assert 0 == result.returncode, result.stderr
        for line in log.read_text().splitlines():
            json.loads(line)

    def test_build_and_verify_round_trip(self, tmp_path: Path) -> None:
        """task build then workspace verify of the built repository is refused (it has history)."""
        repo = tmp_path / "repo"
        built = json.loads(
            run_cli("task", "build", "kv-rangestream", "--out", str(repo), "--json").stdout
        )
        assert "41ee2551ed96ac427e0639e109df93532989d6fe" == built["oracle_revision"]
        verdict = run_cli("workspace", "verify", str(repo), "--task", "kv-rangestream", "--json")
        assert 1 == verdict.returncode
        assert "workspace.commits" in {f["code"] for f in json.loads(verdict.stdout)["findings"]}
