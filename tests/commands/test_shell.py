"""Splitting Codex command strings into simple commands with tree-sitter-bash."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hpbench.commands import SimpleCommand, Word, split_command

DATA = Path(__file__).resolve().parents[1] / "data" / "codex"


def argvs(command: str) -> list[list[str]]:
    return [[word.text for word in simple.words] for simple in split_command(command)]


def only(command: str) -> SimpleCommand:
    (simple,) = split_command(command)
    return simple


class TestUnwrapping:
    @pytest.mark.parametrize(
        "command",
        [
            "/bin/bash -lc 'rg -n foo src/'",
            "bash -lc 'rg -n foo src/'",
            '/bin/bash -lc "rg -n foo src/"',
            "sh -c 'rg -n foo src/'",
            "/usr/bin/zsh -lc 'rg -n foo src/'",
            "bash -l -c 'rg -n foo src/'",
            "env FOO=1 sh -c 'rg -n foo src/'",
            "eval 'rg -n foo src/'",
            "bash -lc \"bash -lc 'rg -n foo src/'\"",
        ],
    )
    def test_inner_script_replaces_the_shell(self, command: str):
        """The shell wrapper disappears; the script's own commands remain."""
        assert [["rg", "-n", "foo", "src/"]] == argvs(command)

    def test_codex_quoting_of_single_quotes(self):
        """Codex escapes inner single quotes as '"'"'; the script is recovered."""
        command = "/bin/bash -lc 'sed -n '\"'\"'1,80p'\"'\"' a.go'"
        assert [["sed", "-n", "1,80p", "a.go"]] == argvs(command)

    def test_double_quoted_script(self):
        """Codex double-quotes a script holding single quotes; escapes are resolved."""
        command = '/bin/bash -lc "echo \\"a b\\" \'c d\'"'
        assert [["echo", "a b", "c d"]] == argvs(command)

    def test_outer_expansion_is_not_the_script(self):
        """In ``bash -lc "cat $HOME/a"`` the outer shell would expand: not literal."""
        (simple,) = split_command('/bin/bash -lc "cat $HOME/a.go"')
        assert simple.ambiguous

    def test_real_codex_mixed_quoting(self):
        """Codex mixes double- and single-quoted runs; the exact script is recovered."""
        line = (DATA / "real-quoting.jsonl").read_text(encoding="utf-8").splitlines()[3]
        command = json.loads(line)["item"]["command"]
        printf, echo = split_command(command)
        assert [
            Word("printf", True),
            Word("%s\\n", True),
            Word('"$HOME"', False),
            Word("a b", True),
            Word('x"y', True),
            Word("`echo hi`", False),
            Word("$PWD", True),
            Word("!x", True),
        ] == list(printf.words)
        assert ["echo", "hi"] == [word.text for word in echo.words]

    def test_non_literal_script_is_ambiguous(self):
        """``bash -c "$CMD"`` cannot be looked into."""
        simple = only('bash -c "$CMD"')
        assert simple.ambiguous

    def test_script_redirect_goes_to_last_inner_command(self):
        """``bash -c 'a; b' > f``: the output of the script is b's output."""
        first, last = split_command("bash -c 'ls; cat a' > out.txt")
        assert () == first.writes
        assert (Word("out.txt", True),) == last.writes


class TestCompoundCommands:
    def test_lists_pipelines_subshells(self):
        """Each simple command of lists, pipelines and subshells is its own invocation."""
        assert [
            ["cd", "src"],
            ["cat", "a.go"],
            ["head", "-n", "5"],
            ["ls"],
            ["echo", "x"],
        ] == argvs("cd src && cat a.go | head -n 5; (ls) || echo x")

    def test_command_substitution(self):
        """Commands inside $(…) and backticks are invocations too."""
        assert [["echo", "$(cat a)"], ["cat", "a"], ["echo", "`ls`"], ["ls"]] == argvs(
            "echo $(cat a); echo `ls`"
        )

    def test_loops_and_conditionals(self):
        """Bodies of for/if/while contribute their commands."""
        assert [["cat", "$f"], ["test", "-f", "a"], ["cat", "a"]] == argvs(
            "for f in *.go; do cat $f; done; if test -f a; then cat a; fi"
        )

    def test_pipe_position(self):
        """Only commands after the first of a pipeline read a pipe."""
        assert [False, True, True] == [
            s.stdin_is_pipe for s in split_command("cat a | grep x | wc -l")
        ]


class TestHeredocs:
    def test_heredoc_body_is_data(self):
        """A heredoc's lines are not commands; the redirect makes it a write."""
        simple = only("cat > notes.txt <<'EOF'\nrm -rf /\ngit diff\nEOF")
        assert ["cat"] == [w.text for w in simple.words]
        assert (Word("notes.txt", True),) == simple.writes
        assert simple.stdin_is_pipe

    def test_heredoc_then_more_commands(self):
        """Commands after the heredoc terminator are parsed."""
        assert [["python3"], ["echo", "done"]] == argvs(
            "python3 - <<'EOF'\nprint(1)\nEOF\necho done"
        )

    def test_substitution_in_unquoted_heredoc_runs(self):
        """``$(…)`` in an unquoted heredoc is executed by the shell, so it counts."""
        assert [["cat"], ["date"]] == argvs("cat <<EOF\nnow: $(date)\nEOF")


class TestRedirections:
    def test_write_redirect_to_last_command_of_list(self):
        """``a && b > f`` redirects b only."""
        first, second = split_command("cd src && cat a.go > b.go 2>&1")
        assert () == first.writes
        assert (Word("b.go", True),) == second.writes

    def test_devices_and_fd_copies_are_not_writes(self):
        """/dev/null and 2>&1 write no file."""
        assert () == only("go test ./... > /dev/null 2>&1").writes

    def test_input_redirect(self):
        """``< file`` is remembered as the stdin file."""
        assert Word("a.go", True) == only("wc -l < a.go").stdin_file


class TestWorkingDirectory:
    def test_cd_moves_later_commands(self):
        """A literal cd moves the commands after it."""
        assert [".", "src", "src/pkg"] == [
            s.cwd for s in split_command("cd src && cd pkg && cat a.go")
        ]

    def test_subshell_restores(self):
        """A cd inside a subshell does not leak out."""
        assert [".", "a", "."] == [s.cwd for s in split_command("(cd a && ls); cat b")]

    @pytest.mark.parametrize("command", ["cd $D; cat a", "cd; cat a", "cd -; cat a"])
    def test_unknown_cd(self, command: str):
        """cd to a variable, home or the previous directory leaves the directory unknown."""
        assert split_command(command)[-1].cwd is None

    def test_conditional_cd(self):
        """A cd that may or may not run leaves the directory unknown."""
        assert split_command("if true; then cd a; fi; cat b")[-1].cwd is None


class TestWords:
    @pytest.mark.parametrize(
        ("source", "expected"),
        [
            ("'a b'", Word("a b", True)),
            ('"a b"', Word("a b", True)),
            ('"a\\"b"', Word('a"b', True)),
            ("a\\ b", Word("a b", True)),
            ("'x'\"y\"z", Word("xyz", True)),
            ("$'a\\tb'", Word("a\tb", True)),
            ("\\*.go", Word("*.go", True)),
            ("$X", Word("$X", False)),
            ('"$X/a"', Word('"$X/a"', False)),
            ("~/a", Word("~/a", False)),
            ("*.go", Word("*.go", False)),
            ("src/[ab].go", Word("src/[ab].go", False)),
            ("{a,b}.go", Word("{a,b}.go", False)),
            ("$(pwd)/src", Word("$(pwd)/src", False)),
        ],
    )
    def test_literal_and_not(self, source: str, expected: Word):
        """Quotes and escapes are removed; anything the shell would expand is not literal."""
        assert expected == split_command(f"cat {source}")[0].words[1]


class TestParseErrors:
    @pytest.mark.parametrize(
        "command",
        ["cat 'unterminated", "echo 'a' | (cd x && cat $(echo y", "if then fi", "))((", "<<"],
    )
    def test_never_raises(self, command: str):
        """Broken scripts parse to something, marked ambiguous where broken."""
        result = split_command(command)
        assert all(simple.ambiguous for simple in result)

    def test_parsed_part_kept(self):
        """Commands before the broken part are kept and not ambiguous."""
        first, *rest = split_command("ls src; cat 'unterminated")
        assert ["ls", "src"] == [w.text for w in first.words]
        assert not first.ambiguous
        assert rest
        assert all(simple.ambiguous for simple in rest)

    def test_orphan_command_name(self):
        """A command name stranded in an ERROR node still counts, as ambiguous."""
        assert any(
            [w.text for w in s.words] == ["cat"] and s.ambiguous
            for s in split_command("echo 'a' | (cd x && cat $(echo y")
        )


class TestParserCrash:
    def test_upper_plane_characters_never_reach_the_parser(self):
        """tree-sitter-bash 0.25.1 segfaults at random on ``{`` + U+E0001; the guard holds.

        Runs in child processes, since a crash would otherwise end the test run.
        """
        code = (
            "from hpbench.commands import split_command\n"
            "for _ in range(30):\n"
            "    for s in ['{\\U000e0001', '{\\U000ccd1fx', '{\\U000f0000', '{\\U0010fffd']:\n"
            "        split_command(s)\n"
        )
        # Unguarded, about half of such processes crash; eight make a miss unlikely.
        for _ in range(8):
            result = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, timeout=120, check=False
            )
            assert 0 == result.returncode, result.stderr

    def test_words_keep_their_characters(self):
        """The replaced characters are only hidden from the parser, not from the words."""
        (simple,) = split_command("cat {\U000e0001}.go \U0001f600")
        assert ["cat", "{\U000e0001}.go", "\U0001f600"] == [w.text for w in simple.words]
