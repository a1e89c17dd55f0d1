"""Folding a Codex stream into what the report needs."""

from __future__ import annotations

from pathlib import Path

from hpbench.codex import (
    ChangedPath,
    CompletedCommand,
    CompletedFileChange,
    Outcome,
    Usage,
    iter_events,
    summarize,
    summarize_file,
    workspace_relative,
)
from hpbench.codex.testing import StreamBuilder

DATA = Path(__file__).resolve().parents[1] / "data" / "codex"


class TestRealStreams:
    def test_edit_loop(self):
        """A real 0.169 stream: commands, relative file changes, message and usage."""
        summary = summarize_file(
            DATA / "real-edit-loop.jsonl", workspace_root="/tmp/corpus/run-edit-loop/ws"
        )
        assert Outcome.COMPLETED is summary.outcome
        assert {
            "agent_message": 1,
            "command_execution": 5,
            "file_change": 3,
            "reasoning": 1,
        } == summary.item_counts
        assert (
            CompletedCommand(7, "/bin/bash -lc 'cat src/app.go'", 0, "completed")
            == (summary.commands[0])
        )
        assert (
            CompletedFileChange(
                5, (ChangedPath("README.md", "add"), ChangedPath("src/app.go", "add"))
            )
            == summary.file_changes[0]
        )
        assert "Changed Hello to say hello and documented it." == summary.final_message
        assert summary.terminal_error is None
        assert Usage(1260, 360, 0, 180, 45) == summary.usage
        assert () == summary.findings

    def test_failure(self):
        """turn.failed gives the terminal error; the error event before it is a warning."""
        summary = summarize_file(DATA / "real-failure.jsonl")
        assert Outcome.FAILED is summary.outcome
        assert summary.terminal_error is not None
        assert "context window" in summary.terminal_error
        assert 1 == len(summary.warnings)
        assert summary.usage is None
        assert summary.final_message is None

    def test_failed_patch_emits_nothing(self):
        """A patch that failed verification left no item: three changes, not four."""
        summary = summarize_file(
            DATA / "real-mixed.jsonl", workspace_root="/tmp/corpus/run-mixed/ws"
        )
        assert 3 == len(summary.file_changes)
        assert {"docs/guide.md"} == {c.path for fc in summary.file_changes for c in fc.changes}


class TestHandStreams:
    def test_all_items(self):
        """Counts, unknowns, unfinished items, warnings and the thread-total usage."""
        summary = summarize_file(DATA / "hand-all-items.jsonl", workspace_root="/workspace")
        assert 1 == summary.item_counts["web_search"]
        assert {"event:session.paused": 1, "item:hologram": 1} == summary.unknown_types
        # The command started but never completed (still running after its yield time).
        assert {"command_execution": 1} == summary.unfinished_items
        assert 1 == len(summary.commands)
        assert 1 == summary.failed_file_changes
        assert () == summary.file_changes
        # turn.completed usage is the thread total: the last one, never a sum.
        assert Usage(800, 80, 0, 160, 40) == summary.usage
        assert "All done." == summary.final_message
        assert 2 == len(summary.warnings)
        assert 1 == summary.event_counts["item.plan.delta"]

    def test_malformed(self):
        """Malformed lines are findings; the rest is still summarised."""
        summary = summarize_file(DATA / "hand-malformed.jsonl", workspace_root="/workspace")
        assert 9 == len(summary.findings)
        assert 2 == len(summary.commands)
        assert 2 == len(summary.file_changes)
        assert Outcome.COMPLETED is summary.outcome


class TestFinalMessage:
    def test_last_substantive_message(self):
        """Blank messages do not replace an earlier substantive one; the last one wins."""
        stream = StreamBuilder().start().message("first").message("second").message(" \n")
        summary = summarize(iter_events(stream.lines))
        assert "second" == summary.final_message

    def test_router_telemetry_is_not_the_response(self):
        """A message that is only a router's ``Tokens: …`` telemetry never replaces the
        response before it (spec 002)."""
        stream = StreamBuilder().start().message("Added RangeStream.")
        stream.message("Tokens: i=1200, ci=800, o=40, r=0")
        assert "Added RangeStream." == summarize(iter_events(stream.lines)).final_message

    def test_a_trailing_telemetry_line_is_taken_out(self):
        stream = StreamBuilder().start().message("Done.\nTokens: i=1, ci=0, o=2, r=3\n")
        assert "Done." == summarize(iter_events(stream.lines)).final_message

    def test_a_later_ordinary_message_stays_the_final_response(self):
        """Telemetry, then an ordinary message: the ordinary one is the response, even if
        it only looks like telemetry in part."""
        stream = StreamBuilder().start().message("first").message("Tokens: i=1, ci=0, o=2, r=3")
        stream.message("Tokens: i=1, ci=0, o=2, r=3 and then some")
        summary = summarize(iter_events(stream.lines))
        assert "Tokens: i=1, ci=0, o=2, r=3 and then some" == summary.final_message

    def test_incomplete_stream(self):
        """A stream that stops mid-turn is incomplete, with no terminal error."""
        summary = summarize(iter_events(StreamBuilder().start().command("ls").lines))
        assert Outcome.INCOMPLETE is summary.outcome
        assert summary.terminal_error is None

    def test_later_success_clears_failure(self):
        """A resumed turn that completes clears the earlier failure."""
        lines = [
            '{"type":"turn.started"}',
            '{"type":"turn.failed","error":{"message":"boom"}}',
            '{"type":"turn.started"}',
            '{"type":"turn.completed","usage":{"input_tokens":1}}',
        ]
        summary = summarize(iter_events(lines))
        assert Outcome.COMPLETED is summary.outcome
        assert summary.terminal_error is None


class TestWorkspaceRelative:
    def test_inside(self):
        """Absolute paths inside the root become relative."""
        assert "src/a.go" == workspace_relative("/w/src/a.go", "/w")
        assert "src/a.go" == workspace_relative("/w/./src/../src/a.go", "/w/")

    def test_root_and_outside(self):
        """The root is ``.``; paths outside stay absolute; relative paths stay."""
        assert "." == workspace_relative("/w", "/w")
        assert "/wx/a" == workspace_relative("/wx/a", "/w")
        assert "/etc/passwd" == workspace_relative("/etc/passwd", "/w")
        assert "a/b" == workspace_relative("a//b", "/w")

    def test_without_root(self):
        """Without a root only normalisation happens."""
        assert "/w/a" == workspace_relative("/w/./a", None)
