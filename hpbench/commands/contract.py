"""The ``hpbench.commands.v2`` JSON form of a command analysis, both ways.

This is a contract: the report, the workflow's gate and people's notebooks read it.
Keys are only ever added in a new schema version. The document's classes are in
:mod:`hpbench.commands.document` (its JSON Schema, ``contrib/schemas/`` and the field
tables of docs/commands.md are generated from them); this module turns a
:class:`CommandAnalysis` into that document and reads one back strictly.
"""

from __future__ import annotations

import typing
from typing import Any

import cattrs

from hpbench._convert import structure
from hpbench._documents import document_json, make_document_converter
from hpbench.commands.analysis import CommandAnalysis, Invocation, PathLoop, WorkspaceDiffLoop
from hpbench.commands.categories import Category
from hpbench.commands.document import (
    COMMANDS_SCHEMA,
    CategoryTally,
    CommandsDocument,
    CommandTotals,
    Count,
    EditRoundsEntry,
    InputFinding,
    InvocationEntry,
    LineNumber,
    LoopEntry,
    LoopKind,
    ObservationCode,
    ObservationEntry,
    WorkspaceDiffLoopEntry,
)
from hpbench.commands.findings import observations
from hpbench.commands.rounds import EditRounds, inconsistency
from hpbench.errors import ContractError
from hpbench.findings import Finding

SCHEMA = COMMANDS_SCHEMA
_CODE = "commands.json"
_COUNTS = dict[Category, CategoryTally]


def _structure_counts(value: Any, _: type) -> dict[Category, CategoryTally]:
    """``counts``: a table holding every category once, nothing else."""
    tallies = _CONVERTER.structure(value, dict[str, CategoryTally])
    names = [category.value for category in Category]
    unknown = set(tallies) - set(names)
    if unknown:
        raise cattrs.ForbiddenExtraKeysError("", dict, unknown)
    missing = [name for name in names if name not in tallies]
    if missing:
        msg = f"every category needs a count; missing {', '.join(missing)}"
        raise ValueError(msg)
    return {Category(name): tallies[name] for name in names}


_CONVERTER = make_document_converter()
_CONVERTER.register_structure_hook_func(lambda cls: cls == _COUNTS, _structure_counts)


def _invocation(invocation: Invocation) -> InvocationEntry:
    return InvocationEntry(
        seq=Count(invocation.seq),
        command=Count(invocation.command),
        argv=invocation.argv,
        category=invocation.category,
        paths=invocation.paths,
        globs=invocation.globs,
        ambiguous=invocation.ambiguous,
        workspace_wide=invocation.workspace_wide,
        after_edit=invocation.after_edit,
        exit_code=invocation.exit_code,
    )


def _loop(loop: PathLoop) -> LoopEntry:
    # The walk makes loops of LOOP_CATEGORIES only, which a test holds equal to LoopKind.
    if loop.kind.value not in typing.get_args(LoopKind):
        msg = f"a loop of category {loop.kind.value!r}, which cannot loop"
        raise ValueError(msg)
    kind = typing.cast(LoopKind, loop.kind.value)
    return LoopEntry(kind=kind, path=loop.path, operand=loop.operand, seq=Count(loop.seq))


def _input_finding(finding: Finding) -> InputFinding:
    line = None if finding.line is None else LineNumber(finding.line)
    return InputFinding(finding.code, finding.message, finding.file, finding.field, line)


def _edit_rounds(rounds: EditRounds | None) -> EditRoundsEntry | None:
    if rounds is None:
        return None
    return EditRoundsEntry(
        rounds=Count(rounds.rounds),
        file_changes=Count(rounds.file_changes),
        failed_file_changes=Count(rounds.failed_file_changes),
        changes_per_round=tuple(Count(n) for n in rounds.changes_per_round),
        commands_between_rounds=Count(rounds.commands_between_rounds),
        commands_after_last_round=Count(rounds.commands_after_last_round),
        rounds_followed_by_test=Count(rounds.rounds_followed_by_test),
    )


def _read_edit_rounds(entry: EditRoundsEntry | None) -> EditRounds | None:
    if entry is None:
        return None
    return EditRounds(
        rounds=entry.rounds,
        file_changes=entry.file_changes,
        failed_file_changes=entry.failed_file_changes,
        changes_per_round=tuple(entry.changes_per_round),
        commands_between_rounds=entry.commands_between_rounds,
        commands_after_last_round=entry.commands_after_last_round,
        rounds_followed_by_test=entry.rounds_followed_by_test,
    )


def to_document(analysis: CommandAnalysis) -> CommandsDocument:
    """The analysis as its ``hpbench.commands.v2`` document."""
    invocations = analysis.invocations
    return CommandsDocument(
        schema="hpbench.commands.v2",
        invocations=tuple(_invocation(invocation) for invocation in invocations),
        loops=tuple(_loop(loop) for loop in analysis.loops),
        workspace_diff_loops=tuple(
            WorkspaceDiffLoopEntry(seq=Count(loop.seq), paths=loop.paths)
            for loop in analysis.workspace_diff_loops
        ),
        terminal_validation=tuple(_loop(entry) for entry in analysis.terminal_validation),
        counts={
            category: CategoryTally(Count(count.total), Count(count.after_edit))
            for category, count in analysis.counts.items()
        },
        totals=CommandTotals(
            commands=Count(analysis.commands),
            invocations=Count(len(invocations)),
            after_edit=Count(sum(invocation.after_edit for invocation in invocations)),
            ambiguous=Count(sum(invocation.ambiguous for invocation in invocations)),
            file_changes=Count(analysis.file_changes),
            changed_paths=Count(analysis.changed_paths),
        ),
        findings=tuple(
            ObservationEntry(ObservationCode(observation.code), observation.message)
            for observation in observations(analysis)
        ),
        input_findings=tuple(_input_finding(finding) for finding in analysis.input_findings),
        edit_rounds=_edit_rounds(analysis.edit_rounds),
    )


def to_json(analysis: CommandAnalysis) -> dict[str, Any]:
    """The analysis as an ``hpbench.commands.v2`` object."""
    return document_json(to_document(analysis))


def _read_invocation(entry: InvocationEntry) -> Invocation:
    return Invocation(
        seq=entry.seq,
        command=entry.command,
        argv=entry.argv,
        category=entry.category,
        paths=entry.paths,
        globs=entry.globs,
        ambiguous=entry.ambiguous,
        workspace_wide=entry.workspace_wide,
        after_edit=entry.after_edit,
        exit_code=entry.exit_code,
    )


def _path_loop(entry: LoopEntry) -> PathLoop:
    return PathLoop(Category(entry.kind), entry.path, entry.operand, entry.seq)


def _analysis(document: CommandsDocument) -> CommandAnalysis:
    """The analysis a document records (its derived parts are recomputed, not read)."""
    return CommandAnalysis(
        invocations=tuple(_read_invocation(entry) for entry in document.invocations),
        loops=tuple(_path_loop(entry) for entry in document.loops),
        workspace_diff_loops=tuple(
            WorkspaceDiffLoop(entry.seq, entry.paths) for entry in document.workspace_diff_loops
        ),
        terminal_validation=tuple(_path_loop(entry) for entry in document.terminal_validation),
        commands=document.totals.commands,
        file_changes=document.totals.file_changes,
        changed_paths=document.totals.changed_paths,
        input_findings=tuple(
            Finding(entry.code, entry.message, entry.file, entry.field, entry.line)
            for entry in document.input_findings
        ),
        edit_rounds=_read_edit_rounds(document.edit_rounds),
    )


def from_json(data: Any, *, source: str = "<commands.json>") -> CommandAnalysis:
    """Read an ``hpbench.commands.v2`` object back into a :class:`CommandAnalysis`.

    The derived parts (``counts``, ``totals``, ``findings``) must agree with the
    invocations and loops they summarise, and ``edit_rounds`` with the totals: a
    document edited by hand, or written by a different analysis, is refused rather
    than trusted.

    Raises:
        ContractError: another schema, a field of the wrong shape (named by its path),
            or derived parts that do not match.
    """
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else None
        finding = Finding(
            code=_CODE,
            message=f"expected schema {SCHEMA!r}, got {found!r}",
            file=source,
            field="$.schema",
        )
        raise ContractError(f"{source}: not an {SCHEMA} document", [finding])
    document = structure(_CONVERTER, data, CommandsDocument, source=source, code=_CODE)
    analysis = _analysis(document)
    rounds = analysis.edit_rounds
    problem = None
    if rounds is not None:
        totals = document.totals
        problem = inconsistency(rounds, commands=totals.commands, file_changes=totals.file_changes)
    if problem is not None:
        finding = Finding(code=_CODE, message=problem, file=source, field="$.edit_rounds")
        raise ContractError(f"{source}: inconsistent {SCHEMA} document", [finding])
    if to_json(analysis) != data:
        finding = Finding(
            code=_CODE,
            message="counts, totals or findings do not match the invocations and loops",
            file=source,
            field="$",
        )
        raise ContractError(f"{source}: inconsistent {SCHEMA} document", [finding])
    return analysis
