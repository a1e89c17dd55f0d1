"""Building Codex 0.169-shaped JSONL for tests and notebooks.

The lines have exactly the shape ``codex exec --json`` writes (see the real
streams under tests/data/codex/), so code under test cannot tell them apart.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from typing import Any

import attrs


def _line(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@attrs.define
class StreamBuilder:
    """Accumulates the lines of one ``codex exec --json`` stream.

    Item ids are ``item_N`` in order, as Codex numbers them per process.
    """

    workspace_root: str = "/workspace"
    lines: list[str] = attrs.field(factory=list)
    _next_item: int = 0

    def _item_id(self) -> str:
        item_id = f"item_{self._next_item}"
        self._next_item += 1
        return item_id

    def start(self, thread_id: str = "01a23693-d235-7e93-94ee-9a0cea7da8d5") -> StreamBuilder:
        """``thread.started`` and ``turn.started``."""
        self.lines.append(_line({"type": "thread.started", "thread_id": thread_id}))
        self.lines.append(_line({"type": "turn.started"}))
        return self

    def command(self, script: str, exit_code: int = 0, output: str = "") -> StreamBuilder:
        """A command execution, started and completed, wrapped as Codex wraps it."""
        item_id = self._item_id()
        command = f"/bin/bash -lc {shlex.quote(script)}"
        started = {
            "id": item_id,
            "type": "command_execution",
            "command": command,
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        }
        completed = dict(
            started,
            aggregated_output=output,
            exit_code=exit_code,
            status="completed" if exit_code == 0 else "failed",
        )
        self.lines.append(_line({"type": "item.started", "item": started}))
        self.lines.append(_line({"type": "item.completed", "item": completed}))
        return self

    def patch(
        self, paths: Sequence[str], kind: str = "update", status: str = "completed"
    ) -> StreamBuilder:
        """A file change of workspace-relative ``paths`` (written absolute, as Codex does)."""
        item_id = self._item_id()
        changes = [{"path": f"{self.workspace_root}/{path}", "kind": kind} for path in paths]
        item = {"id": item_id, "type": "file_change", "changes": changes, "status": "in_progress"}
        self.lines.append(_line({"type": "item.started", "item": item}))
        self.lines.append(_line({"type": "item.completed", "item": dict(item, status=status)}))
        return self

    def message(self, text: str) -> StreamBuilder:
        """An agent message."""
        item = {"id": self._item_id(), "type": "agent_message", "text": text}
        self.lines.append(_line({"type": "item.completed", "item": item}))
        return self

    def reasoning(self, text: str) -> StreamBuilder:
        """A reasoning summary."""
        item = {"id": self._item_id(), "type": "reasoning", "text": text}
        self.lines.append(_line({"type": "item.completed", "item": item}))
        return self

    def raw(self, line: str) -> StreamBuilder:
        """A line as given (for malformed input)."""
        self.lines.append(line)
        return self

    def complete(self, input_tokens: int = 300, output_tokens: int = 60) -> StreamBuilder:
        """``turn.completed`` with usage."""
        usage = {
            "input_tokens": input_tokens,
            "cached_input_tokens": 30,
            "cache_write_input_tokens": 0,
            "output_tokens": output_tokens,
            "reasoning_output_tokens": 15,
        }
        self.lines.append(_line({"type": "turn.completed", "usage": usage}))
        return self

    def text(self) -> str:
        """The stream as JSONL text."""
        return "".join(f"{line}\n" for line in self.lines)


def jsonl(lines: Iterable[str]) -> list[bytes]:
    """Lines as a binary file would yield them."""
    return [f"{line}\n".encode() for line in lines]
