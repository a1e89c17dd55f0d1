"""An attempt's edit rounds: how its file changes were grouped between commands.

An *edit round* is a maximal run of consecutive ``file_change`` items, applied or not,
with no ``command_execution`` between them; reasoning and agent messages do not end a
round, only a command does. These are the client-side items as Codex executed them,
so a routed edit that never reached Codex as a file change is not in them.

The rounds need every completed ``file_change`` item in stream order, failed ones
included, and :class:`~hpbench.codex.summary.CodexSummary` keeps only the applied ones
among its steps. :class:`RoundTracker` therefore watches the same events on their way
into the fold (:meth:`RoundTracker.watch`), judging an item exactly as the fold does:
only ``item.completed`` counts, and a file change whose status is not ``completed``
failed. Commands are numbered in the order they completed, the numbering of
:attr:`hpbench.commands.analysis.Invocation.command`, so which commands were tests or
builds comes from the analysis's own categories.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

import attrs

from hpbench.codex.events import Event, ItemEvent, ItemPhase
from hpbench.codex.items import CommandExecution, FileChange, Item


@attrs.frozen
class EditRounds:
    """The edit-round structure of one attempt.

    Attributes:
        rounds: how many rounds.
        file_changes: completed (applied) file changes, over all rounds.
        failed_file_changes: file changes Codex reported as not applied.
        changes_per_round: completed file changes in each round, in order (a round of
            failed changes only holds 0).
        commands_between_rounds: commands that ran after the first round began and
            before the last one ended (0 with fewer than two rounds).
        commands_after_last_round: commands that ran after the last round (0 without one).
        rounds_followed_by_test: rounds after which a ``test-build`` command ran before
            the next round began (or the stream ended, for the last one).
    """

    rounds: int
    file_changes: int
    failed_file_changes: int
    changes_per_round: tuple[int, ...]
    commands_between_rounds: int
    commands_after_last_round: int
    rounds_followed_by_test: int


@attrs.define
class _Round:
    """One round while it is open: where it began among the commands, and its changes."""

    commands_before: int
    completed: int = 0
    failed: int = 0


@attrs.define
class RoundTracker:
    """Rounds of one stream, built item by item; see :meth:`result`."""

    commands: int = attrs.field(default=0, init=False)
    _rounds: list[_Round] = attrs.field(factory=list, init=False)
    _open: bool = attrs.field(default=False, init=False)

    def watch(self, events: Iterable[Event]) -> Iterator[Event]:
        """Pass ``events`` on unchanged, recording each completed command and file change."""
        for event in events:
            if isinstance(event, ItemEvent) and event.phase is ItemPhase.COMPLETED:
                self.item(event.item)
            yield event

    def item(self, item: Item) -> None:
        """Record one completed item; anything but a command or a file change is ignored."""
        if isinstance(item, CommandExecution):
            self.commands += 1
            self._open = False
        elif isinstance(item, FileChange):
            if not self._open:
                self._rounds.append(_Round(commands_before=self.commands))
                self._open = True
            current = self._rounds[-1]
            if item.status == "completed":
                current.completed += 1
            else:
                current.failed += 1

    def result(self, test_commands: Collection[int]) -> EditRounds:
        """The rounds, given the positions of the commands that were tests or builds."""
        rounds = self._rounds
        if not rounds:
            return EditRounds(0, 0, 0, (), 0, 0, 0)
        # No command runs inside a round, so the commands after round i are exactly
        # those numbered from where it began up to where the next one began.
        starts = [r.commands_before for r in rounds]
        ends = [*starts[1:], self.commands]
        followed = sum(
            any(command in test_commands for command in range(start, end))
            for start, end in zip(starts, ends, strict=True)
        )
        return EditRounds(
            rounds=len(rounds),
            file_changes=sum(r.completed for r in rounds),
            failed_file_changes=sum(r.failed for r in rounds),
            changes_per_round=tuple(r.completed for r in rounds),
            commands_between_rounds=starts[-1] - starts[0],
            commands_after_last_round=self.commands - starts[-1],
            rounds_followed_by_test=followed,
        )


def inconsistency(rounds: EditRounds, *, commands: int, file_changes: int) -> str | None:
    """Why ``rounds`` cannot be the rounds of an attempt with these totals, or None.

    A document read back is held to this: its rounds must agree with its own counts.
    """
    if len(rounds.changes_per_round) != rounds.rounds:
        return "changes_per_round does not list one count per round"
    if rounds.file_changes != file_changes or sum(rounds.changes_per_round) != file_changes:
        return "the rounds' file changes do not add up to the completed file changes"
    if rounds.commands_between_rounds + rounds.commands_after_last_round > commands:
        return "the rounds place more commands than the attempt ran"
    if rounds.rounds_followed_by_test > rounds.rounds:
        return "more rounds followed by a test than rounds"
    if rounds.rounds == 0 and (rounds.failed_file_changes or rounds.commands_after_last_round):
        return "file changes or commands after a round, with no round"
    return None
