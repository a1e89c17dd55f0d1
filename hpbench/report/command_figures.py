"""The report's command analysis per arm, and the loop gate's evidence.

An arm's command figures cover the attempts whose Codex JSONL was analysed. When
none was, the figures are null (printed "unavailable"), never a row of zeros:
"no loop found" in nothing analysed is not "no loop".

Edit rounds are listed per attempt (``<repetition>-<arm>``, in repetition order): an
attempt whose JSONL was not analysed has null rounds, never zero rounds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpbench.commands import analyze_file, observations
from hpbench.commands.rounds import EditRounds
from hpbench.results.model import Attempt
from hpbench.rundir import CODEX_JSONL, RunLayout


def _analyse(jsonl: Path, workspace_root: str) -> Any:
    """The analysis of one stream, or None when it cannot be read at all."""
    if not jsonl.is_file():
        return None
    try:
        return analyze_file(jsonl, workspace_root=workspace_root)
    except (OSError, UnicodeDecodeError):
        return None


def _rounds(rounds: EditRounds | None) -> dict[str, Any] | None:
    if rounds is None:
        return None
    return {
        "rounds": rounds.rounds,
        "file_changes": rounds.file_changes,
        "failed_file_changes": rounds.failed_file_changes,
        "changes_per_round": list(rounds.changes_per_round),
        "commands_between_rounds": rounds.commands_between_rounds,
        "commands_after_last_round": rounds.commands_after_last_round,
        "rounds_followed_by_test": rounds.rounds_followed_by_test,
    }


def command_figures(
    run_dir: Path, results: Sequence[Attempt], arms: Sequence[str]
) -> dict[str, Any]:
    """Per arm: invocation counts, loops and observations over the analysed attempts, and
    each attempt's edit rounds."""
    per_arm: dict[str, Any] = {}
    for arm in arms:
        counts: Counter[str] = Counter()
        after: Counter[str] = Counter()
        loops = workspace_loops = analysed = attempts = 0
        notes: list[str] = []
        edit_rounds: dict[str, Any] = {}
        for result in results:
            if result.arm != arm:
                continue
            attempts += 1
            jsonl = RunLayout(run_dir).attempt(result.repetition, arm) / CODEX_JSONL
            analysis = _analyse(jsonl, result.workspace_root)
            edit_rounds[result.key] = None if analysis is None else _rounds(analysis.edit_rounds)
            if analysis is None:
                continue
            analysed += 1
            for category, count in analysis.counts.items():
                counts[category.value] += count.total
                after[category.value] += count.after_edit
            loops += len(analysis.loops)
            workspace_loops += len(analysis.workspace_diff_loops)
            notes.extend(o.message for o in observations(analysis))
        nothing = analysed == 0
        per_arm[arm] = {
            "attempts": attempts,
            "attempts_analysed": analysed,
            "counts": None
            if nothing
            else {k: {"total": counts[k], "after_edit": after[k]} for k in sorted(counts)},
            "same_path_loops": None if nothing else loops,
            "workspace_diff_loops": None if nothing else workspace_loops,
            "observations": notes,
            "edit_rounds": edit_rounds,
        }
    return per_arm


def loop_gate_reasons(commands: dict[str, Any]) -> list[str]:
    """Why the no-edit-loops gate does not pass: loops found, or attempts it could not see.

    Both kinds of structural loop fail it (spec 002): a loop-category command whose operand
    covers a path changed before and after it, and a bare worktree ``git diff`` between
    completed changes, which covers the whole workspace and is counted apart."""
    reasons = []
    loops = sum(a["same_path_loops"] or 0 for a in commands.values())
    if loops:
        reasons.append(f"{loops} same-path structural loop(s) (BENCHMARK_ENFORCE_NO_EDIT_LOOPS)")
    workspace = sum(a["workspace_diff_loops"] or 0 for a in commands.values())
    if workspace:
        reasons.append(
            f"{workspace} workspace-wide git diff loop(s) between completed changes "
            "(BENCHMARK_ENFORCE_NO_EDIT_LOOPS)"
        )
    for arm, data in commands.items():
        if data["attempts_analysed"] == 0 or data["attempts_analysed"] < data["attempts"]:
            reasons.append(
                f"loop gate: Codex JSONL of {arm} analysed for {data['attempts_analysed']} of "
                f"{data['attempts']} attempt(s); the gate does not pass on missing evidence"
            )
    return reasons
