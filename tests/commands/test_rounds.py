"""Edit rounds: runs of file_change items with no command between them, from the stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpbench.codex import iter_events, read_events, summarize
from hpbench.codex.testing import StreamBuilder
from hpbench.commands import (
    Category,
    CommandAnalysis,
    analyze_events,
    analyze_file,
    analyze_steps,
    from_json,
    to_json,
)
from hpbench.commands.rounds import EditRounds, RoundTracker, inconsistency
from hpbench.errors import ContractError

ROOT = "/workspace"
DATA = Path(__file__).resolve().parents[1] / "data" / "codex"


def build_or_test_commands(analysis: CommandAnalysis) -> set[int]:
    """The positions of the commands the analysis found a test or build in."""
    return {i.command for i in analysis.invocations if i.category is Category.TEST_BUILD}


def rounds_of(builder: StreamBuilder) -> EditRounds:
    """The rounds the analysis of ``builder``'s stream records."""
    rounds = analyze_events(iter_events(builder.lines), workspace_root=ROOT).edit_rounds
    assert rounds is not None
    return rounds


def stream() -> StreamBuilder:
    return StreamBuilder(workspace_root=ROOT).start()


class TestRounds:
    def test_two_rounds_each_followed_by_a_test(self):
        """edit, test, edit, test: two rounds of one change, both followed by a test."""
        builder = stream().patch(["a.go"]).command("go test ./...")
        builder.patch(["b.go"]).command("go test ./...").message("done").complete()
        assert EditRounds(
            rounds=2,
            file_changes=2,
            failed_file_changes=0,
            changes_per_round=(1, 1),
            commands_between_rounds=1,
            commands_after_last_round=1,
            rounds_followed_by_test=2,
        ) == rounds_of(builder)

    def test_reasoning_and_messages_do_not_end_a_round(self):
        """Edits with reasoning and a message between them are one round."""
        builder = stream().reasoning("first a").patch(["a.go"]).reasoning("now b")
        builder.message("editing b").patch(["b.go"]).reasoning("and c").patch(["a.go", "c.go"])
        assert EditRounds(1, 3, 0, (3,), 0, 0, 0) == rounds_of(builder)

    def test_failed_change_counts_as_failed_and_stays_in_its_round(self):
        """A failed file_change is failed, not completed, and does not split the round."""
        builder = stream().patch(["a.go"]).patch(["a.go"], status="failed").patch(["a.go"])
        builder.command("cat a.go")
        assert EditRounds(1, 2, 1, (2,), 0, 1, 0) == rounds_of(builder)

    def test_round_of_failed_changes_only(self):
        """A round whose only change failed is still a round, with 0 completed changes."""
        builder = stream().patch(["a.go"], status="failed").command("go build ./...")
        builder.patch(["a.go"])
        assert EditRounds(2, 1, 1, (0, 1), 1, 0, 1) == rounds_of(builder)

    def test_no_edits(self):
        """No file change at all: zero rounds and an empty list, never null."""
        rounds = rounds_of(stream().command("ls").command("go test ./...").complete())
        assert EditRounds(0, 0, 0, (), 0, 0, 0) == rounds

    def test_test_must_come_before_the_next_round(self):
        """Only a test between a round and the next counts; a read does not."""
        builder = stream().command("go test ./...").patch(["a.go"]).command("cat a.go")
        builder.patch(["a.go"]).command("rg -n x .").command("go vet ./...").patch(["b.go"])
        builder.command("git status")
        assert EditRounds(3, 3, 0, (1, 1, 1), 3, 1, 1) == rounds_of(builder)

    def test_compound_command_with_a_test(self):
        """A compound command that runs a test counts as a test after the round."""
        builder = stream().patch(["a.go"]).command("gofmt -w a.go && go test ./pkg")
        assert 1 == rounds_of(builder).rounds_followed_by_test

    def test_commands_before_the_first_round_are_nowhere(self):
        """Commands before the first round are neither between rounds nor after the last."""
        builder = stream().command("ls").command("cat a.go").patch(["a.go"]).command("true")
        assert EditRounds(1, 1, 0, (1,), 0, 1, 0) == rounds_of(builder)

    def test_unfinished_items_are_not_seen(self):
        """A command that never completed is not a command: it does not end the round."""
        builder = stream().patch(["a.go"])
        builder.raw(
            '{"type":"item.started","item":{"id":"item_9","type":"command_execution",'
            '"command":"go test ./...","aggregated_output":"","exit_code":null,'
            '"status":"in_progress"}}'
        )
        builder.patch(["b.go"])
        assert EditRounds(1, 2, 0, (2,), 0, 0, 0) == rounds_of(builder)

    @pytest.mark.parametrize("path", sorted(DATA.glob("*.jsonl")), ids=lambda p: p.stem)
    def test_agrees_with_the_analysis(self, path: Path):
        """On every corpus stream the rounds' completed changes are the analysis's file
        changes, and the commands they place are among the commands it counted."""
        analysis = analyze_file(path, workspace_root=ROOT)
        assert analysis.edit_rounds is not None
        assert None is inconsistency(
            analysis.edit_rounds, commands=analysis.commands, file_changes=analysis.file_changes
        )

    def test_steps_alone_have_no_rounds(self):
        """Without the stream the failed changes are unknown: the rounds are None, not 0."""
        summary = summarize(iter_events(stream().patch(["a.go"]).lines), workspace_root=ROOT)
        assert None is analyze_steps(summary.steps, workspace_root=ROOT).edit_rounds


class TestTracker:
    def test_watch_passes_every_event_on(self):
        """Watching the stream hands every event on, unchanged and in order."""
        events = list(iter_events(stream().patch(["a.go"]).raw("not json").lines))
        tracker = RoundTracker()
        assert events == list(tracker.watch(events))
        assert EditRounds(1, 1, 0, (1,), 0, 0, 0) == tracker.result(())

    def test_same_stream_as_the_file(self):
        """Watching a file's events gives what watching its lines does."""
        tracker = RoundTracker()
        list(tracker.watch(read_events(DATA / "real-edit-loop.jsonl")))
        analysis = analyze_file(DATA / "real-edit-loop.jsonl", workspace_root=ROOT)
        assert EditRounds(3, 3, 0, (1, 1, 1), 4, 1, 0) == tracker.result(
            build_or_test_commands(analysis)
        )


class TestInconsistency:
    @pytest.mark.parametrize(
        ("rounds", "message"),
        [
            (EditRounds(2, 2, 0, (2,), 1, 1, 0), "one count per round"),
            (EditRounds(2, 3, 0, (1, 2), 1, 1, 0), "do not add up"),
            (EditRounds(2, 2, 0, (1, 1), 1, 5, 0), "more commands"),
            (EditRounds(2, 2, 0, (1, 1), 1, 1, 3), "more rounds followed by a test"),
            (EditRounds(0, 0, 1, (), 0, 0, 0), "with no round"),
        ],
    )
    def test_names_what_does_not_fit(self, rounds: EditRounds, message: str):
        """Rounds that cannot belong to an attempt of 2 commands and 2 changes say why."""
        problem = inconsistency(rounds, commands=2, file_changes=2 if rounds.rounds else 0)
        assert problem is not None
        assert message in problem

    def test_consistent_rounds(self):
        """Rounds that fit their totals have no inconsistency."""
        assert None is inconsistency(
            EditRounds(2, 2, 1, (1, 1), 1, 1, 2), commands=2, file_changes=2
        )


class TestDocument:
    def test_document_holds_the_rounds(self):
        """The hpbench.commands.v2 document carries the rounds and reads them back."""
        builder = stream().patch(["a.go"]).command("go test ./...")
        builder.patch(["b.go"], status="failed").patch(["b.go"]).command("go test ./...")
        analysis = analyze_events(iter_events(builder.lines), workspace_root=ROOT)
        data = to_json(analysis)
        assert {
            "rounds": 2,
            "file_changes": 2,
            "failed_file_changes": 1,
            "changes_per_round": [1, 1],
            "commands_between_rounds": 1,
            "commands_after_last_round": 1,
            "rounds_followed_by_test": 2,
        } == data["edit_rounds"]
        assert analysis == from_json(data)

    @pytest.mark.parametrize(
        ("key", "value"),
        [
            ("file_changes", 3),
            ("changes_per_round", [1]),
            ("commands_after_last_round", 5),
            ("rounds_followed_by_test", 3),
        ],
    )
    def test_refuses_rounds_that_disagree(self, key: str, value: object):
        """Rounds that do not fit the document's own totals are refused, at $.edit_rounds."""
        builder = stream().patch(["a.go"]).command("go test ./...").patch(["b.go"])
        builder.command("go test ./...")
        data = to_json(analyze_events(iter_events(builder.lines), workspace_root=ROOT))
        data["edit_rounds"][key] = value
        with pytest.raises(ContractError) as exc:
            from_json(data, source="x.json")
        assert "$.edit_rounds" == exc.value.findings[0].field

    def test_key_is_required(self):
        """A document without the key is refused; null is how it says unknown."""
        builder = stream().patch(["a.go"])
        data = to_json(analyze_events(iter_events(builder.lines), workspace_root=ROOT))
        del data["edit_rounds"]
        with pytest.raises(ContractError) as exc:
            from_json(data, source="x.json")
        assert "$.edit_rounds" == exc.value.findings[0].field
