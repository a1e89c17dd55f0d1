"""Concrete path operands, separated from patterns and option values."""

from __future__ import annotations

import pytest

from hpbench.commands import Operands, classify, covers, split_command

ROOT = "/workspace"


def operands(command: str, index: int = 0) -> Operands:
    return classify(split_command(command)[index], ROOT).operands


class TestPatternsAndOptionValues:
    @pytest.mark.parametrize(
        ("command", "paths"),
        [
            ("rg -n -e PAT --glob G path", ("path",)),
            ("rg -n PAT src/ docs", ("src/", "docs")),
            ("rg -nA3 PAT src", ("src",)),
            ("rg -n -C 2 --max-count=3 -t go PAT src", ("src",)),
            ("rg --regexp PAT --regexp OTHER a.go b.go", ("a.go", "b.go")),
            ("rg -- -PAT src", ("src",)),
            ("grep -rn PAT dir", ("dir",)),
            ("grep -n -e PAT -e OTHER a.go", ("a.go",)),
            ("grep -rn --include=*.go PAT src", ("src",)),
            ("grep -A 3 -m1 PAT a.go", ("a.go",)),
            ("sed -n 1,80p file", ("file",)),
            ("sed -n -e 1p -e 5p file", ("file",)),
            ("head -n 40 a.go b.go", ("a.go", "b.go")),
            ("tail -n +10 a.go", ("a.go",)),
            ("awk -F, -v x=1 '{print $2}' y=2 data.csv", ("data.csv",)),
            ("git diff -- path", ("path",)),
            ("git diff HEAD~1 src/a.go", ("src/a.go",)),
            ("git diff HEAD~1 HEAD -- src/a.go", ("src/a.go",)),
            ("git diff main src/a.go", ("src/a.go",)),
            ("git diff a1b2c3d..HEAD src/", ("src/",)),
            ("git diff --no-index a.go b.go", ("a.go", "b.go")),
            ("git show HEAD:src/a.go", ("src/a.go",)),
            ("git log -p -S needle -- src/a.go", ("src/a.go",)),
            ("git grep -n PAT -- src", ("src",)),
            ("git grep -e PAT HEAD src/a.go", ("src/a.go",)),
            ("jq --arg k v .x cfg.json", ("cfg.json",)),
        ],
    )
    def test_paths(self, command: str, paths: tuple[str, ...]):
        """Only the concrete path operands are paths."""
        assert paths == operands(command).paths

    def test_stdin_file_is_the_operand(self):
        """``sed -n 1p < a.go`` reads a.go."""
        assert ("a.go",) == operands("sed -n 1p < a.go").paths


class TestResolution:
    def test_absolute_inside_becomes_relative(self):
        """Codex often passes absolute paths; they are made workspace-relative."""
        assert ("src/a.go",) == operands("cat /workspace/src/a.go").paths

    def test_outside_stays_absolute(self):
        """Paths outside the workspace keep their absolute form."""
        assert ("/etc/hosts", "/other") == operands("cat /etc/hosts ../other").paths

    def test_cd_is_followed(self):
        """Relative operands resolve from where ``cd`` moved the command."""
        assert ("src/pkg/a.go",) == operands("cd src/pkg && cat a.go", 1).paths

    def test_git_dash_c(self):
        """``git -C dir diff -- a.go`` names dir/a.go."""
        assert ("src/a.go",) == operands("git -C src diff -- a.go").paths

    def test_blob_path_is_from_repository_root(self):
        """``REV:path`` is relative to the repository root, not the cwd."""
        assert ("a.go",) == operands("cd src && git show HEAD:a.go", 1).paths

    def test_implicit_directory(self):
        """rg without a path searches where it runs; after a pipe it searches stdin."""
        assert (".",) == operands("rg foo").paths
        assert ("src",) == operands("cd src && rg foo", 1).paths
        assert () == operands("grep foo a.go | grep bar", 1).paths

    def test_trailing_slash_kept(self):
        """A directory written with a slash keeps it, as the contract example shows."""
        assert ("src/",) == operands("rg -n X src/").paths


class TestAmbiguous:
    @pytest.mark.parametrize(
        ("command", "ambiguous"),
        [
            ('cat "$FILE"', ('"$FILE"',)),
            ("cat $DIR/a.go", ("$DIR/a.go",)),
            ("cat $(git ls-files)", ("$(git ls-files)",)),
            ("cat src/*.go", ("src/*.go",)),
            ("cat ~/a.go", ("~/a.go",)),
            ("cd $D && cat a.go", ("a.go",)),
            ("git diff foo", ("foo",)),
        ],
    )
    def test_never_inferred(self, command: str, ambiguous: tuple[str, ...]):
        """Unresolvable operands are ambiguous, never paths."""
        simple = split_command(command)[-1] if command.startswith("cd") else None
        result = classify(simple, ROOT).operands if simple is not None else operands(command)
        assert () == result.paths
        assert ambiguous == result.ambiguous

    def test_mixed(self):
        """Concrete operands beside ambiguous ones are still kept."""
        result = operands("cat a.go $B")
        assert ("a.go",) == result.paths
        assert ("$B",) == result.ambiguous


class TestGlobs:
    @pytest.mark.parametrize("tool", ["rg", "hgrep"])
    @pytest.mark.parametrize(
        ("flags", "globs"),
        [
            ("-g '*.go'", ("*.go",)),
            ("--glob '*_test.go'", ("*_test.go",)),
            ("--glob=*.md", ("*.md",)),
            ("-g '*.go' -g '*.mod'", ("*.go", "*.mod")),
            ("-g '!*.go'", ()),
            ("-g 'src/*.go'", ()),
            ("-g '**/*.go'", ()),
            ("-g '*.{go,mod}'", ()),
            ("-g '*.go' -g '!vendor'", ()),
            ("--iglob '*.go'", ()),
            ("-t go", ()),
        ],
    )
    def test_supported_globs_narrow(self, tool: str, flags: str, globs: tuple[str, ...]):
        """Positive basename globs narrow equally for rg and hgrep; others do not."""
        assert globs == operands(f"{tool} -n PAT {flags} src").globs

    def test_grep_include_does_not_narrow(self):
        """Only rg and hgrep globs are supported."""
        assert () == operands("grep -rn --include='*.go' PAT src").globs


class TestCoverage:
    def test_directory_covers_descendants(self):
        """A directory operand covers every path beneath it, not its siblings."""
        assert covers("src", (), "src/a.go")
        assert covers("src/", (), "src/pkg/b.go")
        assert not covers("src", (), "srcx/a.go")
        assert not covers("src", (), "src.go")

    def test_file_covers_itself(self):
        """A file operand covers that file."""
        assert covers("src/a.go", (), "src/a.go")
        assert not covers("src/a.go", (), "src/a.go.orig")

    def test_dot_covers_workspace(self):
        """``.`` covers every path inside the workspace, none outside."""
        assert covers(".", (), "deep/er/a.go")
        assert not covers(".", (), "/etc/hosts")

    def test_globs_narrow_descendants(self):
        """Globs filter descendants by basename; an explicit file is not filtered."""
        assert covers("src", ("*.go",), "src/pkg/a.go")
        assert not covers("src", ("*.go",), "src/README.md")
        assert covers("src/README.md", ("*.go",), "src/README.md")
