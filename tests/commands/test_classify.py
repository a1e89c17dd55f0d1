"""Every invocation gets exactly one category."""

from __future__ import annotations

import pytest

from hpbench.commands import Category, classify, split_command

ROOT = "/workspace"

CASES = {
    Category.FILE_READ: [
        "cat src/a.go",
        "head -n 40 a.go",
        "tail -20 a.go",
        "sed -n 1,80p a.go",
        "sed -n '1,80p' a.go",
        "nl -ba a.go",
        "wc -l a.go",
        "awk '{print $1}' a.txt",
        "less a.go",
        "bat --line-range 1:20 a.go",
        "git cat-file -p HEAD:a.go",
        "git blame -L 1,20 a.go",
        "jq .name package.json",
        "diff -u a.go b.go",
        "wc -l < a.go",
    ],
    Category.SEARCH: [
        "rg -n foo src/",
        "rg foo",
        "grep -rn foo .",
        "grep -n foo a.go",
        "egrep 'a|b' a.go",
        "git grep -n foo",
        "hgrep -n foo src",
        "ag foo src",
    ],
    Category.DISCOVERY: [
        "ls -la",
        "find . -name '*.go'",
        "tree -L 2",
        "rg --files",
        "rg --files src | head",
        "fd go",
        "git ls-files",
        "du -sh .",
        "stat a.go",
    ],
    Category.CONTENT_DIFF: [
        "git diff",
        "git diff -- a.go",
        "git diff HEAD~1 a.go",
        "git diff --cached",
        "git show HEAD",
        "git show HEAD:a.go",
        "git log -p -- a.go",
        "git --no-pager diff",
        "git -C src diff",
        "git stash show -p",
        "git diff --stat -p",
    ],
    Category.DIFF_CHECK: ["git diff --check", "git diff --cached --check", "git show --check"],
    Category.DIFF_METADATA: [
        "git diff --stat",
        "git diff --name-only",
        "git diff --name-status HEAD",
        "git diff --shortstat",
        "git diff --numstat",
        "git show --stat HEAD",
        "git log --stat",
        "git diff --quiet",
    ],
    Category.GIT_STATUS: ["git status", "git status --short", "git -C src status -sb"],
    Category.TEST_BUILD: [
        "go test ./...",
        "go build ./...",
        "go vet ./...",
        "make test",
        "pytest -q",
        "python -m pytest",
        "cargo test",
        "npm test",
        "timeout 300 go test -run TestX ./pkg/...",
        "env CGO_ENABLED=0 go build",
    ],
    Category.FORMATTER: [
        "gofmt -w a.go",
        "gofmt -l .",
        "goimports -w a.go",
        "go fmt ./...",
        "black .",
        "ruff format .",
        "cargo fmt",
    ],
    Category.UPSTREAM_FETCH: [
        "git fetch origin",
        "git pull",
        "git clone https://example.invalid/x.git",
        "curl -sSL https://example.invalid",
        "wget https://example.invalid",
        "go get example.com/x@v1.2.3",
        "go mod download",
        "go install example.com/x@latest",
        "pip install requests",
    ],
    Category.EDIT: [
        "sed -i 's/a/b/' a.go",
        "sed -i.bak -e 's/a/b/' a.go",
        "sed -ni 's/a/b/p' a.go",
        "perl -pi -e 's/a/b/' a.go",
        "tee a.go < in.txt",
        "echo x > a.go",
        "echo x >> notes.md",
        "cat > a.go <<'EOF'\nx\nEOF",
        "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
        "patch -p1 < fix.diff",
        "git apply fix.diff",
        "git checkout -- a.go",
        "git restore a.go",
        "rm a.go",
        "mv a.go b.go",
        "find . -name '*.orig' -delete",
        "cat a.go > $OUT",
        "sort a.txt > sorted.txt",
    ],
    Category.OTHER: [
        "echo hi",
        "cd src",
        "pwd",
        "python3 -c 'print(1)'",
        "true",
        "git log --oneline -5",
        "git add -A",
        "$EDITOR a.go",
        "tee /tmp/log < in.txt",
        "echo x > /tmp/log",
        "export A=1",
        "command -v rg",
        "which rg",
        "",
    ],
}


@pytest.mark.parametrize(
    ("category", "command"),
    [(category, command) for category, commands in CASES.items() for command in commands],
)
def test_category(category: Category, command: str):
    """The first simple command of each example has the expected category."""
    simples = split_command(command)
    if not simples:
        assert category is Category.OTHER
        return
    assert category is classify(simples[0], ROOT).category


def test_every_category_has_examples():
    """The table covers every category."""
    assert set(Category) == set(CASES)


class TestRules:
    def test_pipe_filters_are_other(self):
        """``… | head`` and ``… | grep x`` filter a stream: they read no file."""
        categories = [classify(s, ROOT).category for s in split_command("cat a | grep x | head")]
        assert [Category.FILE_READ, Category.OTHER, Category.OTHER] == categories

    def test_xargs_keeps_its_category_but_is_ambiguous(self):
        """``… | xargs grep x``: a search over operands read from stdin."""
        _, xargs = split_command("rg -l foo | xargs grep -n bar")
        classified = classify(xargs, ROOT)
        assert Category.SEARCH is classified.category
        assert classified.ambiguous

    def test_write_outside_workspace_keeps_category(self):
        """Output into /tmp is not an edit of the workspace."""
        (simple,) = split_command("go test ./... > /tmp/test.log 2>&1")
        assert Category.TEST_BUILD is classify(simple, ROOT).category

    def test_write_inside_workspace_by_absolute_path(self):
        """An absolute redirect target inside the workspace is an edit."""
        (simple,) = split_command("echo x > /workspace/a.go")
        assert Category.EDIT is classify(simple, ROOT).category

    def test_non_literal_command_name_is_ambiguous(self):
        """``$EDITOR a.go`` cannot be categorised beyond other."""
        (simple,) = split_command("$EDITOR a.go")
        assert classify(simple, ROOT).ambiguous
