"""Helpers for task tests: manifest editing on a copy of a bundled task."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpbench.task.manifest import MANIFEST_NAME


def dump_toml(data: dict[str, Any]) -> str:
    """A tiny TOML writer for the value shapes manifests use."""

    def value(item: Any) -> str:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, int | float):
            return repr(item)
        if isinstance(item, str):
            return '"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(item, list):
            return "[" + ", ".join(value(element) for element in item) + "]"
        if isinstance(item, dict):
            return "{" + ", ".join(f"{value(k)} = {value(v)}" for k, v in item.items()) + "}"
        msg = f"cannot write {item!r}"
        raise TypeError(msg)

    lines = [f"{key} = {value(item)}" for key, item in data.items() if not isinstance(item, dict)]
    for key, table in data.items():
        if isinstance(table, dict):
            lines.append(f"\n[{key}]")
            lines.extend(f"{k} = {value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


@pytest.fixture
def edit_manifest(task_copy: Path) -> Callable[[Callable[[dict[str, Any]], None]], Path]:
    """Apply ``change`` to the copied manifest's data and write it back."""

    def edit(change: Callable[[dict[str, Any]], None]) -> Path:
        path = task_copy / MANIFEST_NAME
        data = tomllib.loads(path.read_text())
        change(data)
        path.write_text(dump_toml(data))
        return task_copy

    return edit
