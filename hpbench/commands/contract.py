"""The ``hpbench.commands.v1`` JSON form of a command analysis.

This is a contract: the report, the workflow's gate and people's notebooks
read it. Keys are only ever added in a new schema version; the JSON Schema is
``contrib/schemas/hpbench.commands.v1.schema.json`` and docs/commands.md
explains every field.
"""

from __future__ import annotations

from typing import Any

from hpbench._convert import make_converter, structure
from hpbench.commands.analysis import CommandAnalysis, Invocation, PathLoop
from hpbench.commands.findings import observations
from hpbench.errors import ContractError
from hpbench.findings import Finding

SCHEMA = "hpbench.commands.v1"
_CODE = "commands.json"


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


def from_json(data: Any, *, source: str = "<commands.json>") -> CommandAnalysis:
    """Read an ``hpbench.commands.v1`` object back into a :class:`CommandAnalysis`.

    The derived parts (``counts``, ``totals``, ``findings``) must agree with the
    invocations and loops they summarise: a document edited by hand, or
    written by a different analysis, is refused rather than trusted.

    Raises:
        ContractError: another schema, a field of the wrong shape, or
            derived parts that do not match.
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
    converter = make_converter()
    totals = data.get("totals")
    if not isinstance(totals, dict):
        totals = {}
    raw = {
        "invocations": data.get("invocations"),
        "loops": data.get("loops"),
        "workspace_diff_loops": data.get("workspace_diff_loops"),
        "terminal_validation": data.get("terminal_validation"),
        "commands": totals.get("commands"),
        "file_changes": totals.get("file_changes"),
        "changed_paths": totals.get("changed_paths"),
        "input_findings": data.get("input_findings"),
    }
    analysis = structure(converter, raw, CommandAnalysis, source=source, code=_CODE)
    if to_json(analysis) != data:
        finding = Finding(
            code=_CODE,
            message="counts, totals or findings do not match the invocations and loops",
            file=source,
            field="$",
        )
        raise ContractError(f"{source}: inconsistent {SCHEMA} document", [finding])
    return analysis
