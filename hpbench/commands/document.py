"""The ``hpbench.commands.v2`` document as attrs models: one class per JSON object.

The analysis itself (:mod:`hpbench.commands.analysis`) is what the walk computes; these
classes are its JSON form, key for key, with the constraints a reader may rely on (counts
and positions are never negative, a finding's code starts with ``commands.``, a loop's kind
is one of the loop categories). :mod:`hpbench.commands.contract` converts between the two,
and the JSON Schema in ``contrib/schemas/`` and the field tables of ``docs/commands.md``
are generated from these classes (``hpbench schemas --write``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal, NewType

import attrs

from hpbench import schemagen
from hpbench.commands.categories import Category
from hpbench.schemagen import doc

COMMANDS_SCHEMA: Final = "hpbench.commands.v2"
SCHEMA_FILE = f"{COMMANDS_SCHEMA}.schema.json"

# A position or a count: an integer from 0.
Count = NewType("Count", int)
# A line of the Codex stream, from 1.
LineNumber = NewType("LineNumber", int)
# A plain-words finding's code: always under ``commands.``.
ObservationCode = NewType("ObservationCode", str)
# The categories whose invocations can loop (hpbench.commands.categories.LOOP_CATEGORIES).
LoopKind = Literal["file-read", "search", "content-diff"]


@attrs.frozen
class InvocationEntry:
    """One simple command the agent ran."""

    seq: Count = attrs.field(metadata=doc("Position of the invocation in the attempt, from 0."))
    command: Count = attrs.field(
        metadata=doc(
            "Position (from 0) of the completed command execution it came from; several "
            "invocations share one when the command was compound."
        )
    )
    argv: tuple[str, ...] = attrs.field(
        metadata=doc("The words as the shell passes them; raw source for words it would expand.")
    )
    category: Category = attrs.field(metadata=doc("One of the twelve categories."))
    paths: tuple[str, ...] = attrs.field(
        metadata=doc("Concrete path operands (only for `file-read`, `search`, `content-diff`).")
    )
    globs: tuple[str, ...] = attrs.field(
        metadata=doc(
            "Basename globs that narrow the directory operands (`rg`/`hgrep`); empty when "
            "none apply."
        )
    )
    ambiguous: bool = attrs.field(metadata=doc("An operand or the syntax could not be resolved."))
    workspace_wide: bool = attrs.field(metadata=doc("A bare worktree `git diff`."))
    after_edit: bool = attrs.field(
        metadata=doc("A completed file change or an `edit` invocation came before it.")
    )
    exit_code: int | None = attrs.field(
        metadata=doc("Exit code of the whole command execution, as Codex reported it.")
    )


@attrs.frozen
class LoopEntry:
    """An invocation whose operand covered a changed path (a loop, or terminal validation)."""

    kind: LoopKind = attrs.field(metadata=doc("The invocation's category."))
    path: str = attrs.field(
        metadata=doc("The changed path (workspace-relative, absolute when outside).")
    )
    operand: str = attrs.field(metadata=doc("The concrete operand that covered it."))
    seq: Count = attrs.field(metadata=doc("The invocation's `seq`."))


@attrs.frozen
class WorkspaceDiffLoopEntry:
    """A bare worktree `git diff` that ran between two changes of the same paths."""

    seq: Count = attrs.field(metadata=doc("The invocation's `seq`."))
    paths: tuple[str, ...] = attrs.field(
        metadata=doc("The paths changed both before and after it.")
    )


@attrs.frozen
class CategoryTally:
    """Invocations of one category."""

    total: Count = attrs.field(metadata=doc("How many."))
    after_edit: Count = attrs.field(metadata=doc("How many of them came after an edit."))


@attrs.frozen
class CommandTotals:
    """The attempt's totals."""

    commands: Count = attrs.field(metadata=doc("Completed command executions."))
    invocations: Count = attrs.field(metadata=doc("Simple commands parsed from them."))
    after_edit: Count = attrs.field(metadata=doc("Invocations after an edit."))
    ambiguous: Count = attrs.field(metadata=doc("Ambiguous invocations."))
    file_changes: Count = attrs.field(metadata=doc("Completed file changes."))
    changed_paths: Count = attrs.field(metadata=doc("Distinct paths they changed."))


@attrs.frozen
class EditRoundsEntry:
    """The attempt's edit rounds: runs of `file_change` items with no command between them.

    These are the client's file-change items as Codex executed them, applied or not;
    reasoning and messages do not end a round, a command does.
    """

    rounds: Count = attrs.field(metadata=doc("How many rounds."))
    file_changes: Count = attrs.field(
        metadata=doc("Completed file changes over all rounds (equals `totals.file_changes`).")
    )
    failed_file_changes: Count = attrs.field(
        metadata=doc("File changes Codex reported as not applied; each still belongs to a round.")
    )
    changes_per_round: tuple[Count, ...] = attrs.field(
        metadata=doc("Completed file changes in each round, in order; empty when no round.")
    )
    commands_between_rounds: Count = attrs.field(
        metadata=doc("Commands after the first round began and before the last one ended.")
    )
    commands_after_last_round: Count = attrs.field(
        metadata=doc("Commands after the last round (0 when there is no round).")
    )
    rounds_followed_by_test: Count = attrs.field(
        metadata=doc(
            "Rounds after which a `test-build` invocation ran before the next round began "
            "(or the stream ended)."
        )
    )


@attrs.frozen
class ObservationEntry:
    """The analysis in plain words, one sentence, as the summary prints it."""

    code: ObservationCode = attrs.field(metadata=doc("Stable code (see the table below)."))
    message: str = attrs.field(metadata=doc("The sentence: counts only, no paths."))


@attrs.frozen
class InputFinding:
    """A line of the Codex stream that could not be read."""

    code: str = attrs.field(metadata=doc("Stable code (`codex.line.not-json`, …)."))
    message: str = attrs.field(metadata=doc("What is wrong with the line."))
    file: str | None = attrs.field(metadata=doc("The stream's file."))
    field: str | None = attrs.field(metadata=doc("The field at fault (`$.item.command`)."))
    line: LineNumber | None = attrs.field(metadata=doc("The line number, from 1."))


@attrs.frozen
class CommandsDocument:
    """Structural command analysis of one Codex attempt (`hpbench commands analyze --json`)."""

    schema: Literal["hpbench.commands.v2"] = attrs.field(
        metadata=doc("Always `hpbench.commands.v2`.")
    )
    invocations: tuple[InvocationEntry, ...] = attrs.field(
        metadata=doc("Every simple command, in the order they ran.")
    )
    loops: tuple[LoopEntry, ...] = attrs.field(
        metadata=doc(
            "Same-path loops: one entry per (invocation, path) where the path changed both "
            "before and after the invocation."
        )
    )
    workspace_diff_loops: tuple[WorkspaceDiffLoopEntry, ...] = attrs.field(
        metadata=doc("Bare worktree `git diff` loops, reported apart from explicit operands.")
    )
    terminal_validation: tuple[LoopEntry, ...] = attrs.field(
        metadata=doc("Like `loops`, for paths with no later change (never a loop).")
    )
    counts: dict[Category, CategoryTally] = attrs.field(
        metadata=doc("Every category, always all twelve (zero or not), in report order.")
    )
    totals: CommandTotals = attrs.field(metadata=doc("The attempt's totals."))
    findings: tuple[ObservationEntry, ...] = attrs.field(
        metadata=doc("The analysis in plain words for the summary, in a fixed order.")
    )
    input_findings: tuple[InputFinding, ...] = attrs.field(
        metadata=doc("Lines of the stream that could not be read.")
    )
    edit_rounds: EditRoundsEntry | None = attrs.field(
        metadata=doc(
            "The edit-round structure; null only for an analysis made from completed steps "
            "alone, which do not show the file changes that failed."
        )
    )


DOCS = schemagen.DocsTables(
    Path("docs/commands.md"),
    "<!-- commands-fields:begin (generated by `hpbench schemas --write`) -->",
    "<!-- commands-fields:end -->",
)
CONTRACT = schemagen.Contract(
    schema_file=SCHEMA_FILE,
    roots=(CommandsDocument,),
    docs=DOCS,
    named_types={
        Count: schemagen.NamedType({"type": "integer", "minimum": 0}, "integer ≥ 0"),
        LineNumber: schemagen.NamedType({"type": "integer", "minimum": 1}, "integer ≥ 1"),
        ObservationCode: schemagen.NamedType(
            {"type": "string", "pattern": "^commands\\."}, "string starting `commands.`"
        ),
    },
)
