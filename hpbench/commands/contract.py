"""The ``hpbench.commands.v1`` JSON form of a command analysis.

This is a contract: the report, the workflow's gate and people's notebooks
read it. Keys are only ever added in a new schema version; the JSON Schema is
``contrib/schemas/hpbench.commands.v1.schema.json`` and docs/commands.md
explains every field.
"""

from __future__ import annotations

from typing import Any

from hpbench.commands.analysis import CommandAnalysis, Invocation, PathLoop
from hpbench.commands.findings import observations

SCHEMA = "hpbench.commands.v1"


def _invocation(invocation: Invocation) -> dict[str, Any]:
    return {
        "seq": invocation.seq,
        "command": invocation.command,
        "argv": list(invocation.argv),
        "category": invocation.category.value,
        "paths": list(invocation.paths),
        "globs": list(invocation.globs),
        "ambiguous": invocation.ambiguous,
        "workspace_wide": invocation.workspace_wide,
        "after_edit": invocation.after_edit,
        "exit_code": invocation.exit_code,
    }


def _path_loop(loop: PathLoop) -> dict[str, Any]:
    return {"kind": loop.kind.value, "path": loop.path, "operand": loop.operand, "seq": loop.seq}


def to_json(analysis: CommandAnalysis) -> dict[str, Any]:
    """The analysis as an ``hpbench.commands.v1`` object."""
    invocations = analysis.invocations
    return {
        "schema": SCHEMA,
        "invocations": [_invocation(invocation) for invocation in invocations],
        "loops": [_path_loop(loop) for loop in analysis.loops],
        "workspace_diff_loops": [
            {"seq": loop.seq, "paths": list(loop.paths)} for loop in analysis.workspace_diff_loops
        ],
        "terminal_validation": [_path_loop(entry) for entry in analysis.terminal_validation],
        "counts": {
            category.value: {"total": count.total, "after_edit": count.after_edit}
            for category, count in analysis.counts.items()
        },
        "totals": {
            "commands": analysis.commands,
            "invocations": len(invocations),
            "after_edit": sum(invocation.after_edit for invocation in invocations),
            "ambiguous": sum(invocation.ambiguous for invocation in invocations),
            "file_changes": analysis.file_changes,
            "changed_paths": analysis.changed_paths,
        },
        "findings": [
            {"code": observation.code, "message": observation.message}
            for observation in observations(analysis)
        ],
        "input_findings": [finding.to_json() for finding in analysis.input_findings],
    }
