"""The report's command analysis per arm, and the loop gate's evidence.

An arm's command figures cover the attempts whose Codex JSONL was analysed. When
none was, the figures are null (printed "unavailable"), never a row of zeros:
"no loop found" in nothing analysed is not "no loop".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpbench.commands import analyze_file, observations
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


def command_figures(
    run_dir: Path, results: Sequence[Attempt], arms: Sequence[str]
) -> dict[str, Any]:
    """Per arm: invocation counts, loops and observations over the analysed attempts."""
    per_arm: dict[str, Any] = {}
    for arm in arms:
        counts: Counter[str] = Counter()
        after: Counter[str] = Counter()
        loops = workspace_loops = analysed = attempts = 0
        notes: list[str] = []
        for result in results:
            if result.arm != arm:
                continue
            attempts += 1
            jsonl = RunLayout(run_dir).attempt(result.repetition, arm) / CODEX_JSONL
            analysis = _analyse(jsonl, result.workspace_root)
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
        }
    return per_arm


def loop_gate_reasons(commands: dict[str, Any]) -> list[str]:
    """Why the no-edit-loops gate does not pass: loops found, or attempts it could not see."""
    reasons = []
    loops = sum(a["same_path_loops"] or 0 for a in commands.values())
    if loops:
        reasons.append(f"{loops} same-path structural loop(s) (BENCHMARK_ENFORCE_NO_EDIT_LOOPS)")
    for arm, data in commands.items():
        if data["attempts_analysed"] == 0 or data["attempts_analysed"] < data["attempts"]:
            reasons.append(
                f"loop gate: Codex JSONL of {arm} analysed for {data['attempts_analysed']} of "
                f"{data['attempts']} attempt(s); the gate does not pass on missing evidence"
            )
    return reasons
