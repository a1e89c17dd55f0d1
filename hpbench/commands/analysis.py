"""Walking an attempt's commands and file changes in order: invocations and loops.

The walk sees the completed command executions and completed file changes in
the order Codex reported them. Every command contributes each simple command
it ran as one invocation, numbered by ``seq`` across the attempt.

A *same-path structural loop* is a file-read, search or content-diff
invocation whose concrete operand covers a path that has completed file
changes both before and after it: the agent went back to look at something it
was still changing. A covered path changed before but never after is
*terminal validation* and is kept apart. A bare worktree ``git diff`` covers
the whole workspace and is a loop when any path changes before and after it;
those loops are reported apart from explicit operands.

The same pass records the attempt's edit rounds (:mod:`hpbench.commands.rounds`),
which also need the file changes Codex did not apply.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs
import structlog

from hpbench.codex.events import Event
from hpbench.codex.reader import read_events
from hpbench.codex.summary import CompletedFileChange, Step, summarize
from hpbench.commands.categories import LOOP_CATEGORIES, Category
from hpbench.commands.classify import classify
from hpbench.commands.operands import covers
from hpbench.commands.rounds import EditRounds, RoundTracker
from hpbench.commands.shell import split_command
from hpbench.findings import Finding

log = structlog.get_logger("hpbench.commands")


@attrs.frozen
class Invocation:
    """One simple command the agent ran.

    Attributes:
        seq: position among all invocations of the attempt.
        command: position of the command execution it came from.
        argv: its words as the shell passes them (raw text where not literal).
        category: exactly one :class:`Category`.
        paths: concrete path operands (file-read, search, content-diff only).
        globs: basename globs narrowing directory operands (``rg``/``hgrep``).
        ambiguous: some operand or syntax could not be resolved.
        workspace_wide: a bare worktree ``git diff``.
        after_edit: a file change or an edit invocation came before it.
        exit_code: of the whole command execution, as Codex reported it.
    """

    seq: int
    command: int
    argv: tuple[str, ...]
    category: Category
    paths: tuple[str, ...]
    globs: tuple[str, ...]
    ambiguous: bool
    workspace_wide: bool
    after_edit: bool
    exit_code: int | None


@attrs.frozen
class PathLoop:
    """A loop-category invocation (``seq``) whose ``operand`` covered a changed ``path``."""

    kind: Category
    path: str
    operand: str
    seq: int


@attrs.frozen
class WorkspaceDiffLoop:
    """A bare ``git diff`` between two changes of each of ``paths``."""

    seq: int
    paths: tuple[str, ...]


@attrs.frozen
class CategoryCount:
    """Invocations of one category, and how many came after the first edit."""

    total: int
    after_edit: int


@attrs.frozen
class CommandAnalysis:
    """The structural analysis of one attempt's commands."""

    invocations: tuple[Invocation, ...]
    loops: tuple[PathLoop, ...]
    workspace_diff_loops: tuple[WorkspaceDiffLoop, ...]
    terminal_validation: tuple[PathLoop, ...]
    commands: int
    file_changes: int
    changed_paths: int
    input_findings: tuple[Finding, ...] = ()
    # None when only the steps were analysed: they leave out the file changes that
    # failed, and a round of failed changes is still a round.
    edit_rounds: EditRounds | None = None

    @property
    def counts(self) -> dict[Category, CategoryCount]:
        """Totals per category, every category present, in report order."""
        totals = dict.fromkeys(Category, 0)
        after = dict.fromkeys(Category, 0)
        for invocation in self.invocations:
            totals[invocation.category] += 1
            after[invocation.category] += invocation.after_edit
        return {category: CategoryCount(totals[category], after[category]) for category in Category}

    @property
    def has_loops(self) -> bool:
        """Whether any same-path or workspace-wide loop was found."""
        return bool(self.loops or self.workspace_diff_loops)


@attrs.define
class _ChangeHistory:
    """Where each changed path was changed, as step positions."""

    first: dict[str, int] = attrs.field(factory=dict)
    last: dict[str, int] = attrs.field(factory=dict)
    sorted_paths: list[str] = attrs.field(factory=list)

    def record(self, path: str, position: int) -> None:
        if path not in self.first:
            self.first[path] = position
            bisect.insort(self.sorted_paths, path)
        self.last[path] = position

    def covered(self, operand: str, globs: tuple[str, ...]) -> Iterator[str]:
        base = operand.rstrip("/") or "/"
        if base in (".", "/"):
            candidates: Iterable[str] = self.sorted_paths
        else:
            start = bisect.bisect_left(self.sorted_paths, base)
            # The exact path and everything under ``base/`` sort right after ``base``;
            # siblings such as ``base-x`` or ``base.go`` sort between them, so filter.
            end = bisect.bisect_left(self.sorted_paths, base + "/\U0010ffff")
            candidates = self.sorted_paths[start:end]
        return (path for path in candidates if covers(operand, globs, path))


@attrs.define
class _Walk:
    workspace_root: str | None
    invocations: list[Invocation] = attrs.field(factory=list)
    positions: list[int] = attrs.field(factory=list)
    history: _ChangeHistory = attrs.field(factory=_ChangeHistory)
    edited: bool = False
    commands: int = 0
    file_changes: int = 0

    def step(self, position: int, step: Step) -> None:
        if isinstance(step, CompletedFileChange):
            self.file_changes += 1
            for change in step.changes:
                self.history.record(change.path, position)
            self.edited = self.edited or bool(step.changes)
            return
        command = self.commands
        self.commands += 1
        for simple in split_command(step.command):
            classified = classify(simple, self.workspace_root)
            self.invocations.append(
                Invocation(
                    seq=len(self.invocations),
                    command=command,
                    argv=tuple(word.text for word in simple.words),
                    category=classified.category,
                    paths=classified.operands.paths,
                    globs=classified.operands.globs,
                    ambiguous=classified.ambiguous,
                    workspace_wide=classified.operands.workspace_wide,
                    after_edit=self.edited,
                    exit_code=step.exit_code,
                )
            )
            self.positions.append(position)
            if classified.category is Category.EDIT:
                self.edited = True

    def result(
        self, findings: tuple[Finding, ...], edit_rounds: EditRounds | None
    ) -> CommandAnalysis:
        loops: list[PathLoop] = []
        terminal: list[PathLoop] = []
        workspace: list[WorkspaceDiffLoop] = []
        first, last = self.history.first, self.history.last
        for invocation, position in zip(self.invocations, self.positions, strict=True):
            if invocation.category not in LOOP_CATEGORIES:
                continue
            if invocation.workspace_wide:
                between = tuple(
                    path
                    for path in self.history.sorted_paths
                    if first[path] < position < last[path]
                )
                if between:
                    workspace.append(WorkspaceDiffLoop(seq=invocation.seq, paths=between))
                continue
            seen: set[str] = set()
            for operand in invocation.paths:
                for path in self.history.covered(operand, invocation.globs):
                    if path in seen or first[path] > position:
                        continue
                    seen.add(path)
                    entry = PathLoop(invocation.category, path, operand, invocation.seq)
                    (loops if last[path] > position else terminal).append(entry)
        return CommandAnalysis(
            invocations=tuple(self.invocations),
            loops=tuple(loops),
            workspace_diff_loops=tuple(workspace),
            terminal_validation=tuple(terminal),
            commands=self.commands,
            file_changes=self.file_changes,
            changed_paths=len(self.history.sorted_paths),
            input_findings=findings,
            edit_rounds=edit_rounds,
        )


def analyze_steps(
    steps: Iterable[Step],
    *,
    workspace_root: str | None,
    input_findings: Iterable[Finding] = (),
    rounds: RoundTracker | None = None,
) -> CommandAnalysis:
    """Analyse commands and file changes given in stream order.

    Args:
        steps: completed commands and completed file changes, as
            :class:`~hpbench.codex.summary.CodexSummary` keeps them.
        workspace_root: where Codex ran; operands become relative to it.
        input_findings: problems found while reading the stream, carried along.
        rounds: the same stream's items as a :class:`RoundTracker` recorded them; without
            it the analysis has no edit rounds (``None``).
    """
    walk = _Walk(workspace_root=workspace_root)
    for position, step in enumerate(steps):
        walk.step(position, step)
    edit_rounds = None
    if rounds is not None:
        tests = {i.command for i in walk.invocations if i.category is Category.TEST_BUILD}
        edit_rounds = rounds.result(tests)
    return walk.result(tuple(input_findings), edit_rounds)


def analyze_events(events: Iterable[Event], *, workspace_root: str | None) -> CommandAnalysis:
    """Analyse a stream of Codex events (see :func:`hpbench.codex.iter_events`)."""
    rounds = RoundTracker()
    summary = summarize(rounds.watch(events), workspace_root=workspace_root)
    return analyze_steps(
        summary.steps,
        workspace_root=workspace_root,
        input_findings=summary.findings,
        rounds=rounds,
    )


def analyze_file(path: Path, *, workspace_root: str | None) -> CommandAnalysis:
    """Analyse a ``codex exec --json`` file, read line by line (one log line per file)."""
    analysis = analyze_events(read_events(path), workspace_root=workspace_root)
    log.info(
        "commands analysed",
        file=str(path),
        commands=analysis.commands,
        invocations=len(analysis.invocations),
        loops=len(analysis.loops),
        workspace_diff_loops=len(analysis.workspace_diff_loops),
        edit_rounds=None if analysis.edit_rounds is None else analysis.edit_rounds.rounds,
        unreadable_lines=len(analysis.input_findings),
    )
    return analysis
