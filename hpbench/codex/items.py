"""The item types Codex 0.169 reports inside ``item.started|updated|completed`` events.

Each type is one frozen attrs class that keeps what the analysis needs, not the
whole payload (a command's output can be megabytes; its length is enough).
An item type this module does not know becomes an :class:`UnknownItem`, kept
and counted, so a newer Codex never breaks reading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from hpbench.codex import _fields as f
from hpbench.codex._json import later_value


@attrs.frozen
class CommandExecution:
    """A shell command Codex ran (``exec_command``); ``command`` is the full string it ran."""

    TYPE: ClassVar[str] = "command_execution"
    id: str
    command: str
    exit_code: int | None
    status: str
    output_chars: int


@attrs.frozen
class PathChange:
    """One path in a ``file_change`` item; ``kind`` is ``add``, ``update`` or ``delete``."""

    path: str
    kind: str


@attrs.frozen
class FileChange:
    """A patch Codex applied; paths are absolute as Codex wrote them."""

    TYPE: ClassVar[str] = "file_change"
    id: str
    changes: tuple[PathChange, ...]
    status: str


@attrs.frozen
class AgentMessage:
    """Text the model addressed to the user."""

    TYPE: ClassVar[str] = "agent_message"
    id: str
    text: str


@attrs.frozen
class Reasoning:
    """A reasoning summary."""

    TYPE: ClassVar[str] = "reasoning"
    id: str
    text: str


@attrs.frozen
class McpToolCall:
    """A call to a tool of an MCP server."""

    TYPE: ClassVar[str] = "mcp_tool_call"
    id: str
    server: str
    tool: str
    status: str
    failed: bool


@attrs.frozen
class WebSearch:
    """A web search; ``search_id`` is the provider's call id from the repeated ``id`` key."""

    TYPE: ClassVar[str] = "web_search"
    id: str
    search_id: str | None
    query: str | None


@attrs.frozen
class TodoEntry:
    """One line of a todo list."""

    text: str
    completed: bool


@attrs.frozen
class TodoList:
    """The plan the model keeps (``update_plan``)."""

    TYPE: ClassVar[str] = "todo_list"
    id: str
    entries: tuple[TodoEntry, ...]


@attrs.frozen
class CollabToolCall:
    """A call between collaborating agents (spawn, send, wait…)."""

    TYPE: ClassVar[str] = "collab_tool_call"
    id: str
    tool: str
    status: str | None
    # The threads the call reached (a spawn's new children): the capture's proof that a
    # child thread's traffic was Codex's own.
    receiver_thread_ids: tuple[str, ...] = ()


@attrs.frozen
class ErrorItem:
    """A warning Codex shows as an item (the turn goes on)."""

    TYPE: ClassVar[str] = "error"
    id: str
    message: str


@attrs.frozen
class UnknownItem:
    """An item type this reader does not know; kept so it can be counted."""

    id: str | None
    type: str


Item = (
    CommandExecution
    | FileChange
    | AgentMessage
    | Reasoning
    | McpToolCall
    | WebSearch
    | TodoList
    | CollabToolCall
    | ErrorItem
    | UnknownItem
)


def item_type(item: Item) -> str:
    """The item's Codex type name."""
    if isinstance(item, UnknownItem):
        return item.type
    return item.TYPE


def _command_execution(raw: dict[str, Any], path: str) -> CommandExecution:
    # The most frequent item: check the well-formed case inline, and let the
    # field helpers word the finding only when something is off.
    item_id, command, status = raw.get("id"), raw.get("command"), raw.get("status")
    exit_code, output = raw.get("exit_code"), raw.get("aggregated_output")
    if (
        type(item_id) is str
        and type(command) is str
        and type(status) is str
        and (exit_code is None or type(exit_code) is int)
        and (output is None or type(output) is str)
    ):
        return CommandExecution(item_id, command, exit_code, status, len(output or ""))
    output = f.optional_str(raw, "aggregated_output", path) or ""
    return CommandExecution(
        id=f.required_str(raw, "id", path),
        command=f.required_str(raw, "command", path),
        exit_code=f.optional_int(raw, "exit_code", path),
        status=f.required_str(raw, "status", path),
        output_chars=len(output),
    )


def _file_change(raw: dict[str, Any], path: str) -> FileChange:
    changes = []
    for index, entry in enumerate(f.required_list(raw, "changes", path)):
        where = f"{path}.changes[{index}]"
        if not isinstance(entry, dict):
            raise f.FieldProblemError(where, "expected an object")
        changes.append(
            PathChange(
                path=f.required_str(entry, "path", where), kind=f.required_str(entry, "kind", where)
            )
        )
    return FileChange(
        id=f.required_str(raw, "id", path),
        changes=tuple(changes),
        status=f.required_str(raw, "status", path),
    )


def _agent_message(raw: dict[str, Any], path: str) -> AgentMessage:
    return AgentMessage(id=f.required_str(raw, "id", path), text=f.required_str(raw, "text", path))


def _reasoning(raw: dict[str, Any], path: str) -> Reasoning:
    return Reasoning(
        id=f.required_str(raw, "id", path), text=f.optional_str(raw, "text", path) or ""
    )


def _mcp_tool_call(raw: dict[str, Any], path: str) -> McpToolCall:
    return McpToolCall(
        id=f.required_str(raw, "id", path),
        server=f.required_str(raw, "server", path),
        tool=f.required_str(raw, "tool", path),
        status=f.required_str(raw, "status", path),
        failed=raw.get("error") is not None,
    )


def _web_search(raw: dict[str, Any], path: str) -> WebSearch:
    # The first ``id`` is Codex's item id (pairs started/completed); a repeated
    # ``id`` carries the provider's search call id. See hpbench.codex._json.
    search_id = later_value(raw, "id")
    return WebSearch(
        id=f.required_str(raw, "id", path),
        search_id=search_id if isinstance(search_id, str) else None,
        query=f.optional_str(raw, "query", path),
    )


def _todo_list(raw: dict[str, Any], path: str) -> TodoList:
    entries = []
    for index, entry in enumerate(f.required_list(raw, "items", path)):
        where = f"{path}.items[{index}]"
        if not isinstance(entry, dict):
            raise f.FieldProblemError(where, "expected an object")
        entries.append(
            TodoEntry(
                text=f.required_str(entry, "text", where),
                completed=f.optional_bool(entry, "completed", where),
            )
        )
    return TodoList(id=f.required_str(raw, "id", path), entries=tuple(entries))


def _collab_tool_call(raw: dict[str, Any], path: str) -> CollabToolCall:
    receivers = raw.get("receiver_thread_ids")
    if receivers is not None and (
        not isinstance(receivers, list) or not all(isinstance(r, str) and r for r in receivers)
    ):
        raise f.FieldProblemError(f"{path}.receiver_thread_ids", "expected a list of thread ids")
    return CollabToolCall(
        id=f.required_str(raw, "id", path),
        tool=f.required_str(raw, "tool", path),
        status=f.optional_str(raw, "status", path),
        receiver_thread_ids=tuple(receivers or ()),
    )


def _error_item(raw: dict[str, Any], path: str) -> ErrorItem:
    return ErrorItem(
        id=f.required_str(raw, "id", path), message=f.required_str(raw, "message", path)
    )


_PARSERS: dict[str, Callable[[dict[str, Any], str], Item]] = {
    CommandExecution.TYPE: _command_execution,
    FileChange.TYPE: _file_change,
    AgentMessage.TYPE: _agent_message,
    Reasoning.TYPE: _reasoning,
    McpToolCall.TYPE: _mcp_tool_call,
    WebSearch.TYPE: _web_search,
    TodoList.TYPE: _todo_list,
    CollabToolCall.TYPE: _collab_tool_call,
    ErrorItem.TYPE: _error_item,
}

KNOWN_ITEM_TYPES = frozenset(_PARSERS)


def parse_item(raw: dict[str, Any], path: str = "$.item") -> Item:
    """Turn a decoded ``item`` object into its class.

    Raises:
        FieldProblemError: a field the analysis relies on is missing or mistyped.
    """
    kind = f.required_str(raw, "type", path)
    parser = _PARSERS.get(kind)
    if parser is None:
        return UnknownItem(id=f.optional_str(raw, "id", path), type=kind)
    return parser(raw, path)
