"""The reference router's Hpatch edit routing: test equipment, never Hpatch's real format.

In ``--mode hpatch`` the reference router offers the model two extra custom
tools, ``hpatch`` and ``hpatch_recover``, turns each call of them into the
``apply_patch`` call Codex knows how to run, and turns Codex's answer back into
something the model can act on. This module is that routing as pure functions
(no I/O, no clock, no state of its own), so the same history is always routed
to the same bytes and a paired run can be replayed.

**The reference edit format.** It is a deliberately simple, reversible
abbreviation of ``apply_patch``, chosen so that every byte it saves is a real,
measured difference and not a model of one. An ``hpatch`` input is an
``apply_patch`` body without its envelope, with the file headers abbreviated::

    A <path>    *** Add File: <path>
    U <path>    *** Update File: <path>
    D <path>    *** Delete File: <path>
    M <path>    *** Move to: <path>

Every other line (``@@ …``, ``+…``, ``-…``, `` …``) is copied verbatim, and the
result is wrapped in ``*** Begin Patch`` … ``*** End Patch``. An input that
ends with a newline keeps it after ``*** End Patch`` (where Codex's parser
ignores it) rather than as an empty line inside the last hunk, where Codex
would read it as context. :func:`from_apply_patch_text` is the exact inverse:
``from_apply_patch_text(to_apply_patch_text(x)) == x`` for every translatable
``x``.

An input is untranslatable when it is empty after stripping, when its first
line is not an ``A``, ``U`` or ``D`` header, when a header's path is empty,
absolute, carries a ``..`` component, or has surrounding whitespace or a
control character (Codex trims a header path, so `` /etc/x`` would become
absolute on its side), or when a line starts, after any leading whitespace,
with ``*** `` (Codex trims a line before reading it as an envelope line, so such
a line could smuggle a header or an end past these rules). ``*** End of File``
has no abbreviation and is therefore refused too.

**Delivery** (:func:`deliver_item`): a translatable ``hpatch`` or
``hpatch_recover`` custom tool call reaches Codex as an ``apply_patch`` call
whose ``id`` is a marker, :data:`HPATCH_MARKER` or :data:`RECOVER_MARKER`
followed by the provider's own id, so the router can tell statelessly which
calls it translated, from which tool, and what the provider's id was. An
untranslatable call reaches Codex unchanged; Codex answers it with
"unsupported call" and the router counts it as unmatched.

**The way back** (:func:`upstream_input`): before a request goes upstream,
every marked call in its ``input`` becomes the provider's original call again,
and the ``custom_tool_call_output`` Codex reported for it is kept when the
patch applied and replaced by a short diagnostic when it did not. Rewriting is
applied to every occurrence every time; only the first sighting of each
(thread, call_id) yields an :class:`Outcome`, because Codex resends the whole
history with every request and a retry resends the same request.

The marker prefixes are reserved: a provider's own ``apply_patch`` call whose id
began with one would be read as translated. Responses item ids (``ctc_…``)
never do.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, Literal

import attrs

from hpbench.reference._ctp2 import output_text
from hpbench.reference._usage import short_hash

HPATCH_TOOL: Final = "hpatch"
RECOVER_TOOL: Final = "hpatch_recover"
APPLY_PATCH_TOOL = "apply_patch"

HpatchTool = Literal["hpatch", "hpatch_recover"]
Cause = Literal["context_mismatch", "missing_file", "invalid_patch", "other"]

# Neither marker is a prefix of the other ("hpatch_" against "hpatchr"), so the
# tool and the provider's id are read back without ambiguity.
HPATCH_MARKER = "hpatch_"
RECOVER_MARKER = "hpatchr_"
_MARKERS: dict[HpatchTool, str] = {HPATCH_TOOL: HPATCH_MARKER, RECOVER_TOOL: RECOVER_MARKER}

BEGIN_PATCH = "*** Begin Patch\n"
END_PATCH = "\n*** End Patch"

# Abbreviation -> apply_patch header, and the operation a signature names.
_HEADERS = {
    "A": ("*** Add File: ", "add"),
    "U": ("*** Update File: ", "update"),
    "D": ("*** Delete File: ", "delete"),
    "M": ("*** Move to: ", "move"),
}
_FIRST_HEADERS = frozenset({"A", "U", "D"})
_ENVELOPE = "*** "

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"[A-Za-z]:")

# Cause, and the phrases of Codex's apply_patch failures that name it, checked in
# this order: "Failed to read file to update x: No such file" is a missing file.
_CAUSES: tuple[tuple[Cause, tuple[str, ...]], ...] = (
    ("context_mismatch", ("failed to find expected lines", "failed to find context")),
    ("missing_file", ("no such file", "does not exist", "failed to read")),
    ("invalid_patch", ("invalid patch", "invalid hunk", "parse")),
)

_EXIT_CODE = re.compile(r"^Exit code: (-?[0-9]+)$", re.MULTILINE)
# Lines of Codex's exec output header that say nothing about the failure.
_OUTPUT_HEADERS = ("Exit code:", "Wall time:", "Total output lines:", "Output:")
_VERIFICATION_PREFIX = "apply_patch verification failed: "
# A failure line longer than this is cut: the model needs the start of it, not a dump.
MAX_DETAIL_CHARS = 400


def tool_definitions() -> list[dict[str, Any]]:
    """The two custom tool definitions the router adds to an upstream request."""
    text_format = {"type": "text"}
    return [
        {
            "type": "custom",
            "name": HPATCH_TOOL,
            "description": (
                "Edit files. The input is one or more file sections, each starting with a "
                "header line: 'A <path>' adds a file (its lines follow, each prefixed with '+'), "
                "'U <path>' updates one (optionally followed by 'M <new path>' to move it, then "
                "hunks: an '@@' line, then lines prefixed with ' ' for context, '-' to remove "
                "and '+' to add), 'D <path>' deletes one. Paths are relative."
            ),
            "format": dict(text_format),
        },
        {
            "type": "custom",
            "name": RECOVER_TOOL,
            "description": (
                "Resubmit a corrected edit after hpatch was rejected. The input has the same "
                "format as hpatch's."
            ),
            "format": dict(text_format),
        },
    ]


def with_tools(body: dict[str, Any]) -> dict[str, Any]:
    """A new request body whose ``tools`` end with the Hpatch definitions.

    ``tools`` is created when absent; a definition whose name is already there is
    not added twice. A ``tools`` that is not a list is left alone: the provider
    judges that request as it would without the router.
    """
    tools = body.get("tools")
    if tools is None:
        tools = []
    if not isinstance(tools, list):
        return dict(body)
    present = {tool.get("name") for tool in tools if isinstance(tool, dict)}
    added = [tool for tool in tool_definitions() if tool["name"] not in present]
    return {**body, "tools": [*tools, *added]}


def _valid_path(path: str) -> bool:
    if not path or path != path.strip() or _CONTROL.search(path):
        return False
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return False
    return ".." not in re.split(r"[/\\]", path)


def _header(line: str) -> tuple[str, str] | None:
    """(letter, path) when ``line`` has the shape of an abbreviated header."""
    if len(line) >= 2 and line[0] in _HEADERS and line[1] == " ":
        return line[0], line[2:]
    return None


def _headers(hpatch_input: str) -> list[tuple[str, str]] | None:
    """The (letter, path) headers of a translatable input, in order; None when untranslatable."""
    if not hpatch_input.strip():
        return None
    lines = hpatch_input.removesuffix("\n").split("\n")
    first = _header(lines[0])
    if first is None or first[0] not in _FIRST_HEADERS:
        return None
    headers: list[tuple[str, str]] = []
    for line in lines:
        if line.lstrip().startswith(_ENVELOPE):
            return None
        header = _header(line)
        if header is None:
            continue
        if not _valid_path(header[1]):
            return None
        headers.append(header)
    return headers


def to_apply_patch_text(hpatch_input: str) -> str | None:
    """The ``apply_patch`` text an ``hpatch`` input stands for, or None when untranslatable."""
    if _headers(hpatch_input) is None:
        return None
    terminated = hpatch_input.endswith("\n")
    lines: list[str] = []
    for line in hpatch_input.removesuffix("\n").split("\n"):
        header = _header(line)
        lines.append(line if header is None else _HEADERS[header[0]][0] + header[1])
    return BEGIN_PATCH + "\n".join(lines) + END_PATCH + ("\n" if terminated else "")


def from_apply_patch_text(text: str) -> str | None:
    """The ``hpatch`` input that :func:`to_apply_patch_text` turns into ``text``, or None.

    None when no input translates to exactly ``text``: a patch with
    ``*** End of File``, an absolute path, a line that would read as a header, …
    """
    terminated = text.endswith(END_PATCH + "\n")
    body = text.removesuffix("\n") if terminated else text
    if len(body) < len(BEGIN_PATCH) + len(END_PATCH):
        return None
    if not body.startswith(BEGIN_PATCH) or not body.endswith(END_PATCH):
        return None
    lines = body[len(BEGIN_PATCH) : -len(END_PATCH)].split("\n")
    candidate = "\n".join(_abbreviate(line) for line in lines) + ("\n" if terminated else "")
    # Exact by construction: whatever the line-by-line reading got wrong (a verbatim
    # "A x" line, an envelope line, a bad path) fails to translate back to ``text``.
    return candidate if to_apply_patch_text(candidate) == text else None


def _abbreviate(line: str) -> str:
    for letter, (long_form, _) in _HEADERS.items():
        if line.startswith(long_form):
            return f"{letter} {line.removeprefix(long_form)}"
    return line


def payload_bytes(text: str) -> int:
    """UTF-8 bytes of a tool call's payload."""
    return len(text.encode("utf-8"))


def marker_id(tool: HpatchTool, item_id: str) -> str:
    """The id a translated call carries to Codex: the tool's marker, then the provider's id."""
    return _MARKERS[tool] + item_id


def read_marker(item_id: Any) -> tuple[HpatchTool, str] | None:
    """(tool, provider's id) of a marker id; None for any other id."""
    if not isinstance(item_id, str):
        return None
    for tool, prefix in _MARKERS.items():
        if item_id.startswith(prefix):
            return tool, item_id.removeprefix(prefix)
    return None


def _hpatch_tool(item: Any) -> HpatchTool | None:
    if not isinstance(item, dict) or item.get("type") != "custom_tool_call":
        return None
    name = item.get("name")
    if name == HPATCH_TOOL:
        return HPATCH_TOOL
    if name == RECOVER_TOOL:
        return RECOVER_TOOL
    return None


@attrs.frozen
class Delivered:
    """One output item as the client receives it, and what routing did to it."""

    item: Any
    kind: HpatchTool | None = None
    translated: bool = False
    provider_payload_bytes: int = 0
    client_payload_bytes: int = 0


def deliver_item(item: Any) -> Delivered:
    """The item Codex is given for one provider output item.

    A translatable Hpatch call becomes an ``apply_patch`` call with a marker id
    (a new dict); any other item, an untranslatable Hpatch call included, is
    returned as it came. A call without a string ``id`` or ``call_id`` is not
    translated: without an id there is nothing to mark, and without a call_id
    nothing to correlate its outcome with.
    """
    kind = _hpatch_tool(item)
    if kind is None:
        return Delivered(item)
    hpatch_input = item.get("input")
    if not isinstance(hpatch_input, str):
        return Delivered(item, kind)
    provider_bytes = payload_bytes(hpatch_input)
    item_id = item.get("id")
    call_id = item.get("call_id")
    patch = to_apply_patch_text(hpatch_input)
    if patch is None or not isinstance(item_id, str) or not isinstance(call_id, str):
        return Delivered(item, kind, provider_payload_bytes=provider_bytes)
    translated: dict[str, Any] = {
        "type": "custom_tool_call",
        "id": marker_id(kind, item_id),
        "call_id": call_id,
        "name": APPLY_PATCH_TOOL,
        "input": patch,
    }
    if "status" in item:
        translated["status"] = item["status"]
    return Delivered(translated, kind, True, provider_bytes, payload_bytes(patch))


@attrs.frozen
class Outcome:
    """The correlated outcome of one routed Hpatch call; never a path or a line of text.

    ``signature`` hashes the cause with the operations and paths of the rejected
    patch, so that the same operation on the same path rejected again (by
    ``hpatch`` or ``hpatch_recover``) has the same signature whatever the failure
    text said.
    """

    tool: HpatchTool
    applied: bool
    cause: Cause | None = None
    signature: str | None = None
    diagnostic: bool = False


@attrs.frozen
class ExactAttempt:
    """One completed routed call's exact strings, for the exact-evidence recorder only
    (built only when it is on): the call, the model's hpatch input, and the text the
    model reads back (Codex's answer when the edit applied, else the diagnostic)."""

    call_id: str
    tool: HpatchTool
    applied: bool
    payload: str
    answer: str


@attrs.frozen
class UpstreamInput:
    """A request's ``input`` as the provider is sent it, and the outcomes first seen in it
    (with their exact strings when ``exact`` was asked for)."""

    items: list[Any]
    outcomes: list[Outcome] = attrs.field(factory=list)
    exact: list[ExactAttempt] = attrs.field(factory=list)


def applied(text: str) -> bool:
    """Whether Codex's answer to an ``apply_patch`` call says the patch applied.

    It did when the exit code, if the answer states one, is 0 and the first line
    of the output proper starts with "Success.". A failure can quote the patch's
    own lines, so "Success." anywhere else proves nothing.
    """
    code = _EXIT_CODE.search(text)
    if code is not None and code[1] != "0":
        return False
    first = next((line for line in _output_lines(text) if line.strip()), "")
    return first.lstrip().startswith("Success.")


def _output_lines(text: str) -> list[str]:
    """The lines after Codex's exec header (through its ``Output:`` line), or all of them."""
    lines = text.split("\n")
    if _EXIT_CODE.search(text) is not None and "Output:" in lines:
        return lines[lines.index("Output:") + 1 :]
    return lines


def failure_cause(text: str) -> Cause:
    """The cause a failed ``apply_patch`` answer names."""
    folded = text.casefold()
    for cause, phrases in _CAUSES:
        if any(phrase in folded for phrase in phrases):
            return cause
    return "other"


def failure_detail(text: str) -> str | None:
    """The first line of a failed answer that says something, or None when none does."""
    for line in _output_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith(_OUTPUT_HEADERS):
            continue
        return stripped.removeprefix(_VERIFICATION_PREFIX)[:MAX_DETAIL_CHARS]
    return None


def diagnostic(cause: Cause, text: str) -> str:
    """What the model reads instead of a failed answer: the cause, and the failure's own line."""
    detail = failure_detail(text)
    head = f"hpatch rejected ({cause})"
    if detail is not None:
        head = f"{head}: {detail}"
    return f"{head}\nCorrect it with {RECOVER_TOOL}."


def signature(cause: Cause, hpatch_input: str) -> str:
    """16 hex digits naming a rejection by its cause and the patch's operations and paths."""
    targets = [[_HEADERS[letter][1], path] for letter, path in _headers(hpatch_input) or []]
    return short_hash(json.dumps([cause, targets], separators=(",", ":"), ensure_ascii=False))


@attrs.frozen
class _Routed:
    """A marked call found in ``input``: its tool and the provider's hpatch input."""

    tool: HpatchTool
    hpatch_input: str


def _restore(item: Any) -> tuple[dict[str, Any], _Routed] | None:
    """The provider's original call behind a marked ``apply_patch`` call, or None."""
    if not isinstance(item, dict) or item.get("type") != "custom_tool_call":
        return None
    marked = read_marker(item.get("id"))
    patch = item.get("input")
    if marked is None or item.get("name") != APPLY_PATCH_TOOL or not isinstance(patch, str):
        return None
    hpatch_input = from_apply_patch_text(patch)
    if hpatch_input is None or not isinstance(item.get("call_id"), str):
        return None
    tool, item_id = marked
    # Key order kept as Codex sent it: the provider sees its own item, field for field.
    original = {**item, "id": item_id, "name": tool, "input": hpatch_input}
    return original, _Routed(tool, hpatch_input)


def upstream_input(
    items: list[Any], *, thread: str, correlated: set[tuple[str, str]], exact: bool = False
) -> UpstreamInput:
    """``input`` as the provider is sent it, with the outcomes not yet correlated.

    Every marked call becomes the provider's original call; the answer Codex
    reported for it (its ``custom_tool_call_output``) is kept when the patch
    applied and otherwise replaced by :func:`diagnostic`. The first answer for
    each (thread, call_id) not in ``correlated`` yields an :class:`Outcome` and is
    added to it (the set is the caller's, updated in place). Returns a new list;
    changed items are new dicts and every other item is the caller's own object.
    An answer whose marked call is not in ``items``, an answer that is not text,
    and anything malformed pass through uncounted.
    """
    routed: dict[str, _Routed] = {}
    restored: dict[int, dict[str, Any]] = {}
    for position, item in enumerate(items):
        found = _restore(item)
        if found is not None:
            restored[position] = found[0]
            routed[item["call_id"]] = found[1]
    result: list[Any] = []
    outcomes: list[Outcome] = []
    kept: list[ExactAttempt] = []
    for position, item in enumerate(items):
        if position in restored:
            result.append(restored[position])
            continue
        call = _routed_answer(item, routed)
        text = output_text(item.get("output")) if call is not None else None
        if call is None or text is None:
            result.append(item)
            continue
        answer, outcome = _answer(item, call, text)
        result.append(answer)
        key = (thread, item["call_id"])
        if key not in correlated:
            correlated.add(key)
            outcomes.append(outcome)
            if exact:
                answered = output_text(answer.get("output"))
                kept.append(
                    ExactAttempt(
                        item["call_id"],
                        call.tool,
                        outcome.applied,
                        call.hpatch_input,
                        text if answered is None else answered,
                    )
                )
    return UpstreamInput(result, outcomes, kept)


def _routed_answer(item: Any, routed: dict[str, _Routed]) -> _Routed | None:
    if not isinstance(item, dict) or item.get("type") != "custom_tool_call_output":
        return None
    call_id = item.get("call_id")
    return routed.get(call_id) if isinstance(call_id, str) else None


def _answer(item: dict[str, Any], call: _Routed, text: str) -> tuple[dict[str, Any], Outcome]:
    """The answer the provider is sent for a routed call, and the call's outcome."""
    if applied(text):
        return item, Outcome(call.tool, applied=True)
    cause = failure_cause(text)
    outcome = Outcome(
        call.tool,
        applied=False,
        cause=cause,
        signature=signature(cause, call.hpatch_input),
        diagnostic=True,
    )
    return {**item, "output": diagnostic(cause, text)}, outcome
