"""The analysis in plain words, for the generated summary.

Sentences carry counts only: no session, thread, tool-call or item identity,
and no paths (those stay in the machine-readable ``hpbench.commands.v2`` form).
"""

from __future__ import annotations

import attrs

from hpbench.commands.analysis import CommandAnalysis
from hpbench.commands.categories import LOOP_CATEGORIES


@attrs.frozen
class Observation:
    """One finding of the command analysis: a stable ``code`` and a sentence."""

    code: str
    message: str


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _loop_observations(analysis: CommandAnalysis) -> list[Observation]:
    observations: list[Observation] = []
    for kind in LOOP_CATEGORIES:
        entries = [loop for loop in analysis.loops if loop.kind is kind]
        if not entries:
            continue
        invocations = len({loop.seq for loop in entries})
        paths = len({loop.path for loop in entries})
        observations.append(
            Observation(
                f"commands.loop.{kind.value}",
                f"{_plural(invocations, f'same-path {kind.value} loop')}: "
                f"{'it' if invocations == 1 else 'each'} covered a path changed both before "
                f"and after it ({_plural(paths, 'path')} involved).",
            )
        )
    if analysis.workspace_diff_loops:
        count = len(analysis.workspace_diff_loops)
        observations.append(
            Observation(
                "commands.loop.workspace-diff",
                f"{_plural(count, 'bare worktree git diff loop')}: a whole-workspace diff ran "
                "between two changes of the same path (reported apart from explicit paths).",
            )
        )
    if not observations:
        observations.append(
            Observation("commands.loop.none", "No same-path or workspace-wide loops.")
        )
    return observations


def observations(analysis: CommandAnalysis) -> tuple[Observation, ...]:
    """The findings a summary prints for one attempt, in a fixed order."""
    result = _loop_observations(analysis)
    if analysis.terminal_validation:
        count = len({entry.seq for entry in analysis.terminal_validation})
        result.append(
            Observation(
                "commands.terminal-validation",
                f"{_plural(count, 'invocation')} re-checked changed paths after their last "
                "change (terminal validation, not counted as loops).",
            )
        )
    total = len(analysis.invocations)
    after = sum(invocation.after_edit for invocation in analysis.invocations)
    result.append(
        Observation(
            "commands.totals",
            f"{_plural(total, 'invocation')} parsed from "
            f"{_plural(analysis.commands, 'command execution')}: {total - after} before the "
            f"first edit, {after} after it.",
        )
    )
    parts = [
        f"{category.value} {count.total} ({count.after_edit} after an edit)"
        for category, count in analysis.counts.items()
        if count.total
    ]
    if parts:
        result.append(Observation("commands.categories", "By category: " + "; ".join(parts) + "."))
    ambiguous = sum(invocation.ambiguous for invocation in analysis.invocations)
    if ambiguous:
        result.append(
            Observation(
                "commands.ambiguous",
                f"{_plural(ambiguous, 'invocation')} had operands or syntax that could not be "
                "resolved; they were not inferred.",
            )
        )
    if analysis.input_findings:
        result.append(
            Observation(
                "commands.input",
                f"{_plural(len(analysis.input_findings), 'line')} of the Codex JSONL could not "
                "be read; the analysis covers the rest.",
            )
        )
    return tuple(result)
