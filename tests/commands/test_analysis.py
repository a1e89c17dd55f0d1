"""Structural loops, terminal validation, workspace-wide diffs and the before/after split."""

from __future__ import annotations

from structlog.testing import capture_logs

from hpbench.codex import iter_events
from hpbench.codex.testing import StreamBuilder
from hpbench.commands import Category, CommandAnalysis, PathLoop, analyze_events, analyze_file

ROOT = "/workspace"


def analyze(builder: StreamBuilder) -> CommandAnalysis:
    return analyze_events(iter_events(builder.lines), workspace_root=ROOT)


def stream() -> StreamBuilder:
    return StreamBuilder(workspace_root=ROOT).start()


def loop_keys(analysis: CommandAnalysis) -> list[tuple[str, str, int]]:
    return [(loop.kind.value, loop.path, loop.seq) for loop in analysis.loops]


class TestSamePathLoops:
    def test_read_between_two_changes(self):
        """edit a, read a, edit a: a file-read loop on a."""
        analysis = analyze(stream().patch(["a.go"]).command("cat a.go").patch(["a.go"]))
        assert [PathLoop(Category.FILE_READ, "a.go", "a.go", 0)] == list(analysis.loops)
        assert () == analysis.terminal_validation

    def test_each_loop_kind(self):
        """file-read, search and content-diff each form loops."""
        builder = stream().patch(["a.go"])
        builder.command("sed -n 1,20p a.go").command("rg -n x a.go").command("git diff -- a.go")
        analysis = analyze(builder.patch(["a.go"]))
        assert [
            ("file-read", "a.go", 0),
            ("search", "a.go", 1),
            ("content-diff", "a.go", 2),
        ] == loop_keys(analysis)

    def test_directory_operand(self):
        """A search of a directory covers the changed file beneath it."""
        builder = stream().patch(["src/pkg/a.go"]).command("grep -rn x src")
        analysis = analyze(builder.patch(["src/pkg/a.go"]))
        assert [PathLoop(Category.SEARCH, "src/pkg/a.go", "src", 0)] == list(analysis.loops)

    def test_glob_narrowing(self):
        """rg -g '*.md' src does not cover src/a.go; -g '*.go' does."""
        builder = stream().patch(["src/a.go"])
        builder.command("rg -n x -g '*.md' src").command("hgrep -n x --glob '*.go' src")
        analysis = analyze(builder.patch(["src/a.go"]))
        assert [("search", "src/a.go", 1)] == loop_keys(analysis)

    def test_unsupported_glob_is_conservative(self):
        """A negated glob does not narrow: the directory covers everything."""
        builder = stream().patch(["src/a.go"]).command("rg -n x -g '!*.go' src")
        assert [("search", "src/a.go", 0)] == loop_keys(analyze(builder.patch(["src/a.go"])))

    def test_different_path_is_no_loop(self):
        """Reading b between two changes of a is not a loop."""
        builder = stream().patch(["a.go", "b.go"]).command("cat b.go").patch(["a.go"])
        analysis = analyze(builder)
        assert () == analysis.loops
        assert [("b.go", 0)] == [(e.path, e.seq) for e in analysis.terminal_validation]

    def test_read_before_first_change_is_nothing(self):
        """A read before any change is neither loop nor terminal validation."""
        analysis = analyze(stream().command("cat a.go").patch(["a.go"]).patch(["a.go"]))
        assert () == analysis.loops
        assert () == analysis.terminal_validation

    def test_ambiguous_operand_never_loops(self):
        """``cat $F`` might be a.go, but it is never inferred to be."""
        analysis = analyze(stream().patch(["a.go"]).command('cat "$F"').patch(["a.go"]))
        assert () == analysis.loops
        assert analysis.invocations[0].ambiguous

    def test_failed_file_change_is_not_a_change(self):
        """Only completed file changes count."""
        builder = stream().patch(["a.go"]).command("cat a.go").patch(["a.go"], status="failed")
        analysis = analyze(builder)
        assert () == analysis.loops
        assert 1 == len(analysis.terminal_validation)

    def test_compound_command_contributes_each(self):
        """Each invocation of a compound command is checked on its own."""
        builder = stream().patch(["a.go", "b.go"]).command("cat a.go && rg -n x b.go | head")
        analysis = analyze(builder.patch(["a.go", "b.go"]))
        assert [("file-read", "a.go", 0), ("search", "b.go", 1)] == loop_keys(analysis)

    def test_one_entry_per_path_per_invocation(self):
        """Two operands covering the same path yield one loop entry."""
        builder = stream().patch(["src/a.go"]).command("rg x src src/a.go")
        analysis = analyze(builder.patch(["src/a.go"]))
        assert [PathLoop(Category.SEARCH, "src/a.go", "src", 0)] == list(analysis.loops)

    def test_absolute_operand(self):
        """An absolute operand inside the workspace matches the relative change."""
        builder = stream().patch(["a.go"]).command("cat /workspace/a.go").patch(["a.go"])
        assert [("file-read", "a.go", 0)] == loop_keys(analyze(builder))


class TestTerminalValidation:
    def test_read_after_last_change(self):
        """A read after the last change is terminal validation, not a loop."""
        analysis = analyze(stream().patch(["a.go"]).patch(["a.go"]).command("cat a.go"))
        assert () == analysis.loops
        assert [PathLoop(Category.FILE_READ, "a.go", "a.go", 0)] == list(
            analysis.terminal_validation
        )
        assert not analysis.has_loops


class TestWorkspaceDiff:
    def test_bare_diff_between_changes(self):
        """A bare git diff between two changes of any path is a workspace loop."""
        builder = stream().patch(["a.go"]).command("git diff").patch(["a.go"])
        analysis = analyze(builder)
        assert () == analysis.loops
        assert [(0, ("a.go",))] == [(w.seq, w.paths) for w in analysis.workspace_diff_loops]
        assert analysis.has_loops

    def test_bare_diff_at_the_end(self):
        """A bare git diff after the last change is no loop."""
        analysis = analyze(stream().patch(["a.go"]).patch(["a.go"]).command("git diff"))
        assert () == analysis.workspace_diff_loops

    def test_bare_diff_against_head(self):
        """``git diff HEAD`` compares the worktree too."""
        analysis = analyze(stream().patch(["a.go"]).command("git diff HEAD").patch(["a.go"]))
        assert 1 == len(analysis.workspace_diff_loops)

    def test_not_worktree_diffs(self):
        """--stat, --cached and commit ranges are not worktree content diffs."""
        builder = stream().patch(["a.go"])
        builder.command("git diff --stat").command("git diff --cached")
        builder.command("git diff HEAD~2 HEAD").command("git diff HEAD~1..HEAD")
        analysis = analyze(builder.patch(["a.go"]))
        assert () == analysis.workspace_diff_loops

    def test_reported_apart_from_paths(self):
        """A diff with an explicit path is a same-path loop, not a workspace one."""
        analysis = analyze(stream().patch(["a.go"]).command("git diff a.go").patch(["a.go"]))
        assert [("content-diff", "a.go", 0)] == loop_keys(analysis)
        assert () == analysis.workspace_diff_loops


class TestBeforeAfterEdit:
    def test_counts_split_at_first_edit(self):
        """Counts after the first edit are kept separately."""
        builder = stream().command("cat a.go").command("rg x").patch(["a.go"])
        analysis = analyze(builder.command("cat a.go"))
        counts = analysis.counts
        assert (2, 1) == (counts[Category.FILE_READ].total, counts[Category.FILE_READ].after_edit)
        assert (1, 0) == (counts[Category.SEARCH].total, counts[Category.SEARCH].after_edit)
        assert [False, False, True] == [i.after_edit for i in analysis.invocations]

    def test_shell_edit_counts_as_edit(self):
        """``sed -i`` earlier in the same command makes later invocations after-edit."""
        analysis = analyze(stream().command("sed -i s/a/b/ a.go && cat a.go"))
        assert [False, True] == [i.after_edit for i in analysis.invocations]

    def test_every_category_counted(self):
        """All categories appear in the counts, zero or not."""
        assert set(Category) == set(analyze(stream()).counts)


class TestInvocations:
    def test_seq_and_command_positions(self):
        """seq numbers invocations across the attempt; command numbers executions."""
        analysis = analyze(stream().command("ls && pwd").command("cat a"))
        assert [(0, 0), (1, 0), (2, 1)] == [(i.seq, i.command) for i in analysis.invocations]

    def test_exit_code_kept(self):
        """The command's exit code is carried onto its invocations."""
        analysis = analyze(stream().command("grep x a.go", exit_code=1))
        assert 1 == analysis.invocations[0].exit_code

    def test_input_findings_carried(self):
        """Unreadable lines are carried into the analysis."""
        analysis = analyze(stream().raw("{oops").command("ls"))
        assert 1 == len(analysis.input_findings)
        assert 1 == len(analysis.invocations)


class TestLogging:
    def test_one_line_per_file(self, tmp_path):
        """analyze_file logs one summary event per file, with counts only."""
        path = tmp_path / "codex.jsonl"
        path.write_text(stream().patch(["a.go"]).command("cat a.go").patch(["a.go"]).text())
        with capture_logs() as logs:
            analyze_file(path, workspace_root=ROOT)
        assert [("commands analysed", 1, 1)] == [
            (entry["event"], entry["commands"], entry["loops"]) for entry in logs
        ]
