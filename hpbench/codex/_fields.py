"""Typed access to fields of a decoded Codex JSON object.

Codex's JSONL is another program's output, not an hpbench contract: new Codex
versions add fields, so unknown keys are ignored rather than refused. What a
field that hpbench relies on must look like is still checked, and a mismatch
names its JSON path.
"""

from __future__ import annotations

from typing import Any


class FieldProblemError(Exception):
    """A field the reader relies on is missing or has the wrong type."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), type(value).__name__)


def required_str(obj: dict[str, Any], key: str, path: str) -> str:
    """``obj[key]`` as a string."""
    if key not in obj:
        raise FieldProblemError(f"{path}.{key}", "required field missing")
    value = obj[key]
    if not isinstance(value, str):
        raise FieldProblemError(f"{path}.{key}", f"expected a string, got {_kind(value)}")
    return value


def optional_str(obj: dict[str, Any], key: str, path: str) -> str | None:
    """``obj[key]`` as a string, or ``None`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldProblemError(f"{path}.{key}", f"expected a string or null, got {_kind(value)}")
    return value


def optional_int(obj: dict[str, Any], key: str, path: str) -> int | None:
    """``obj[key]`` as an integer, or ``None`` when absent or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldProblemError(f"{path}.{key}", f"expected an integer or null, got {_kind(value)}")
    return value


def optional_count(obj: dict[str, Any], key: str, path: str) -> int | None:
    """A token count, or ``None`` when Codex left it out or wrote null.

    An absent or null count is unknown telemetry: reading it as 0 would turn a
    gap in what Codex reported into a figure. A count of the wrong type or below
    zero is still a malformed event.
    """
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FieldProblemError(
            f"{path}.{key}", f"expected a non-negative integer, got {_kind(value)}"
        )
    return value


def required_object(obj: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    """``obj[key]`` as a JSON object."""
    if key not in obj:
        raise FieldProblemError(f"{path}.{key}", "required field missing")
    value = obj[key]
    if not isinstance(value, dict):
        raise FieldProblemError(f"{path}.{key}", f"expected an object, got {_kind(value)}")
    return value


def required_list(obj: dict[str, Any], key: str, path: str) -> list[Any]:
    """``obj[key]`` as a JSON list."""
    if key not in obj:
        raise FieldProblemError(f"{path}.{key}", "required field missing")
    value = obj[key]
    if not isinstance(value, list):
        raise FieldProblemError(f"{path}.{key}", f"expected a list, got {_kind(value)}")
    return value


def optional_bool(obj: dict[str, Any], key: str, path: str) -> bool:
    """``obj[key]`` as a boolean; absent means false."""
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise FieldProblemError(f"{path}.{key}", f"expected true or false, got {_kind(value)}")
    return value
