"""Replay scripts for the scripted provider: the model turns it answers with.

A script is a JSON document (``hpbench.replay.v1``)::

    {"schema_version": 1, "name": "demo",
     "steps": [
       {"output": [{"type": "reasoning", "text": "Look first."},
                   {"type": "exec_command", "cmd": "cat hello.txt"}],
        "faults": [{"kind": "http_500"}]},
       {"output": [{"type": "message", "text": "Done."}]}]}

Each step is one model response. The provider picks the step from the request
history (how many model responses the request already carries), never from
its own memory, so a retried request is answered with the same step. A step
holds at most one tool call, because Codex runs several calls from one response
concurrently. ``faults`` are spent one per attempt at that step: the first
attempt gets the first fault, and attempts past the list are answered normally.
The full format is in ``docs/reference-equipment.md``; the JSON Schema in
``contrib/schemas/`` and that page's field tables are generated from these classes
(``hpbench schemas --write``). A field with a default may be left out of a script.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any, NewType

import attrs

from hpbench import schemagen
from hpbench._convert import make_converter, structure
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.schemagen import doc

SCHEMA_VERSION = 1
SCHEMA_FILE = "hpbench.replay.v1.schema.json"
CODE = "replay.script"

# The constrained numbers of a script; the checks below refuse what their schemas refuse.
ScriptVersion = NewType("ScriptVersion", int)
ExitStatus = NewType("ExitStatus", int)
EventCount = NewType("EventCount", int)
Seconds = NewType("Seconds", float)


class ItemType(enum.Enum):
    """What one item of a step's output is."""

    REASONING = "reasoning"
    MESSAGE = "message"
    EXEC_COMMAND = "exec_command"
    APPLY_PATCH = "apply_patch"
    FUNCTION_CALL = "function_call"
    CUSTOM_TOOL_CALL = "custom_tool_call"
    HPATCH = "hpatch"
    HPATCH_RECOVER = "hpatch_recover"
    REPORT_ISSUE = "report_issue"


# A report_issue call is the router's, never Codex's (the router keeps it from the
# client), so it is not one of the tool calls a step may hold only one of.
TOOL_CALLS = frozenset(
    {
        ItemType.EXEC_COMMAND,
        ItemType.APPLY_PATCH,
        ItemType.FUNCTION_CALL,
        ItemType.CUSTOM_TOOL_CALL,
        ItemType.HPATCH,
        ItemType.HPATCH_RECOVER,
    }
)
HPATCH_CALLS = frozenset({ItemType.HPATCH, ItemType.HPATCH_RECOVER})


class FaultKind(enum.Enum):
    """A fault the provider produces instead of (or in the middle of) an answer."""

    HTTP_429 = "http_429"
    HTTP_500 = "http_500"
    HTTP_503 = "http_503"
    DROP = "drop"
    STALL = "stall"
    RESPONSE_FAILED = "response_failed"


@attrs.frozen
class ScriptItem:
    """One output item.

    ``reasoning`` and ``message`` use ``text``; ``exec_command`` uses ``cmd`` and
    optionally ``workdir``, ``yield_time_ms`` and ``expect_exit_code`` (the
    provider then refuses to go on unless the command's output, sent back with
    the next request, says it exited with that code); ``apply_patch`` uses ``patch``;
    ``function_call`` uses ``name`` and ``arguments`` (JSON text);
    ``custom_tool_call`` uses ``name`` and ``input``; ``report_issue`` uses ``title`` and
    ``markdown``, and is sent only when the request offers the ``report_issue`` tool (a
    model cannot call a tool it was not given).
    """

    type: ItemType = attrs.field(metadata=doc("What the item is; it decides the other fields."))
    text: str | None = attrs.field(
        default=None, metadata=doc("`reasoning` and `message` (required there).")
    )
    cmd: str | None = attrs.field(
        default=None, metadata=doc("`exec_command`: the command (required there).")
    )
    workdir: str | None = attrs.field(
        default=None, metadata=doc("`exec_command`: the directory to run it in.")
    )
    yield_time_ms: int | None = attrs.field(
        default=None, metadata=doc("`exec_command`: how long Codex waits for its output.")
    )
    expect_exit_code: ExitStatus | None = attrs.field(
        default=None,
        metadata=doc(
            "`exec_command`: the exit status the next request must report, or the turn fails."
        ),
    )
    patch: str | None = attrs.field(
        default=None,
        metadata=doc(
            "`apply_patch`: the patch text; `hpatch`, `hpatch_recover`: the call's input "
            "(required there)."
        ),
    )
    expect_applied: bool | None = attrs.field(
        default=None,
        metadata=doc(
            "`hpatch`, `hpatch_recover`: whether the answer the next request carries must "
            "say the edit applied (true) or be the router's rejection diagnostic (false)."
        ),
    )
    name: str | None = attrs.field(
        default=None, metadata=doc("`function_call` and `custom_tool_call`: the tool (required).")
    )
    arguments: str | None = attrs.field(
        default=None, metadata=doc("`function_call`: its arguments as JSON text (required).")
    )
    input: str | None = attrs.field(
        default=None, metadata=doc("`custom_tool_call`: its input text (required).")
    )
    title: str | None = attrs.field(
        default=None, metadata=doc("`report_issue`: the report's title (required there).")
    )
    markdown: str | None = attrs.field(
        default=None, metadata=doc("`report_issue`: the report's Markdown (required there).")
    )

    def required_fields(self) -> tuple[str, ...]:
        """The fields this item type needs."""
        return {
            ItemType.REASONING: ("text",),
            ItemType.MESSAGE: ("text",),
            ItemType.EXEC_COMMAND: ("cmd",),
            ItemType.APPLY_PATCH: ("patch",),
            ItemType.FUNCTION_CALL: ("name", "arguments"),
            ItemType.CUSTOM_TOOL_CALL: ("name", "input"),
            ItemType.HPATCH: ("patch",),
            ItemType.HPATCH_RECOVER: ("patch",),
            ItemType.REPORT_ISSUE: ("title", "markdown"),
        }[self.type]

    def allowed_fields(self) -> frozenset[str]:
        """The fields this item type may carry."""
        extra = {
            ItemType.EXEC_COMMAND: ("workdir", "yield_time_ms", "expect_exit_code"),
            ItemType.HPATCH: ("expect_applied",),
            ItemType.HPATCH_RECOVER: ("expect_applied",),
        }.get(self.type, ())
        return frozenset(("type", *self.required_fields(), *extra))


@attrs.frozen
class Fault:
    """A fault for one attempt.

    ``http_429``/``http_503`` send ``retry-after`` when ``retry_after_seconds``
    is set; ``drop`` and ``stall`` send ``after_events`` events first; ``stall``
    then stays silent for ``seconds`` (or until the client leaves) and closes
    without finishing; ``response_failed`` ends the stream with a
    ``response.failed`` event carrying ``code`` and ``message``.
    """

    kind: FaultKind = attrs.field(metadata=doc("What goes wrong."))
    retry_after_seconds: Seconds | None = attrs.field(
        default=None, metadata=doc("`http_429`, `http_503`: the `retry-after` header sent.")
    )
    after_events: EventCount = attrs.field(
        default=EventCount(1), metadata=doc("`drop`, `stall`: SSE events sent first (default 1).")
    )
    seconds: Seconds = attrs.field(
        default=Seconds(30.0), metadata=doc("`stall`: how long it stays silent (default 30).")
    )
    code: str = attrs.field(
        default="server_error",
        metadata=doc("`response_failed`: the error code (default `server_error`)."),
    )
    message: str = attrs.field(
        default="scripted failure",
        metadata=doc(
            "The error message of `response_failed` and of the HTTP faults "
            "(default `scripted failure`)."
        ),
    )


@attrs.frozen
class Step:
    """One model response and the faults its attempts meet first."""

    output: tuple[ScriptItem, ...] = attrs.field(
        metadata=doc("The response's items, in order; at least one, at most one tool call.")
    )
    faults: tuple[Fault, ...] = attrs.field(
        default=(), metadata=doc("One per attempt at this step, first attempt first.")
    )
    note: str | None = attrs.field(default=None, metadata=doc("For the reader; never sent."))


@attrs.frozen
class Script:
    """A replay script (``hpbench.replay.v1``)."""

    schema_version: ScriptVersion = attrs.field(metadata=doc("Always 1."))
    name: str = attrs.field(metadata=doc("The script's name (the arm's, for a task)."))
    steps: tuple[Step, ...] = attrs.field(
        metadata=doc("One per model response, in the order a run asks for them; at least one.")
    )
    description: str | None = attrs.field(default=None, metadata=doc("For the reader."))
    turn_state: bool = attrs.field(
        default=True,
        metadata=doc(
            "Whether the provider's 200 responses carry the turn's `x-codex-turn-state` "
            "header (default true)."
        ),
    )


CONTRACT = schemagen.Contract(
    schema_file=SCHEMA_FILE,
    roots=(Script,),
    docs=schemagen.DocsTables(
        Path("docs/reference-equipment.md"),
        "<!-- replay-fields:begin (generated by `hpbench schemas --write`) -->",
        "<!-- replay-fields:end -->",
    ),
    named_types={
        ScriptVersion: schemagen.NamedType({"const": SCHEMA_VERSION}, f"`{SCHEMA_VERSION}`"),
        ExitStatus: schemagen.NamedType(
            {"type": "integer", "minimum": 0, "maximum": 255}, "integer from 0 to 255"
        ),
        EventCount: schemagen.NamedType({"type": "integer", "minimum": 0}, "integer ≥ 0"),
        Seconds: schemagen.NamedType({"type": "number", "minimum": 0}, "number ≥ 0"),
    },
    defaults_optional=True,
)


_CONVERTER = make_converter()


def _check(script: Script, raw: dict[str, Any], source: str) -> list[Finding]:
    findings: list[Finding] = []

    def add(field: str, message: str) -> None:
        findings.append(Finding(code=CODE, message=message, file=source, field=field))

    if script.schema_version != SCHEMA_VERSION:
        add("$.schema_version", f"expected {SCHEMA_VERSION}, got {script.schema_version}")
    if not script.steps:
        add("$.steps", "a script needs at least one step")
    for index, step in enumerate(script.steps):
        where = f"$.steps[{index}]"
        if not step.output:
            add(f"{where}.output", "a step needs at least one output item")
        calls = [item for item in step.output if item.type in TOOL_CALLS]
        if len(calls) > 1:
            add(f"{where}.output", "at most one tool call per step (Codex runs them concurrently)")
        raw_items = raw["steps"][index]["output"]
        expecting = [
            item
            for item in step.output
            if item.expect_exit_code is not None or item.expect_applied is not None
        ]
        if expecting and index == len(script.steps) - 1:
            add(
                f"{where}.output",
                "expect_exit_code and expect_applied need a later step: the answer arrives "
                "with the next request",
            )
        for position, item in enumerate(step.output):
            for message in _item_problems(item, raw_items[position]):
                add(f"{where}.output[{position}]", message)
        for position, fault in enumerate(step.faults):
            if fault.after_events < 0 or fault.seconds < 0:
                add(f"{where}.faults[{position}]", "after_events and seconds must be >= 0")
            if fault.retry_after_seconds is not None and fault.retry_after_seconds < 0:
                add(f"{where}.faults[{position}].retry_after_seconds", "must be >= 0")
    return findings


def _item_problems(item: ScriptItem, raw: dict[str, Any]) -> list[str]:
    present = {key for key, value in raw.items() if value is not None}
    problems: list[str] = []
    missing = [name for name in item.required_fields() if name not in present]
    unexpected = sorted(present - item.allowed_fields())
    if missing:
        problems.append(f"{item.type.value} needs {', '.join(missing)}")
    if unexpected:
        problems.append(f"{item.type.value} does not take {', '.join(unexpected)}")
    if item.expect_exit_code is not None and not 0 <= item.expect_exit_code <= 255:
        problems.append("expect_exit_code must be an exit status from 0 to 255")
    if item.type is ItemType.FUNCTION_CALL and item.arguments is not None:
        try:
            json.loads(item.arguments)
        except ValueError:
            problems.append("function_call arguments must be JSON text")
    return problems


def parse_script(data: Any, *, source: str = "<script>") -> Script:
    """A checked script from decoded JSON; raises :class:`ContractError`."""
    script = structure(_CONVERTER, data, Script, source=source, code=CODE)
    findings = _check(script, data, source)
    if findings:
        raise ContractError(f"{source}: not a valid replay script", findings)
    return script


def load_script(path: Path) -> Script:
    """Read and check a script file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        finding = Finding(code=CODE, message=f"not JSON: {exc}", file=str(path))
        raise ContractError(f"{path}: not a valid replay script", [finding]) from exc
    return parse_script(data, source=str(path))
