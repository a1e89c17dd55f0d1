"""The strict converter of the JSON documents hpbench writes (attempt, report, instructions).

It is :func:`hpbench._convert.make_converter` (unknown keys and type coercions are
refused, each finding naming its field) plus what a written document needs: string-keyed
maps that refuse a non-object, and tuples written as JSON lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import cattrs
from cattrs.errors import IterableValidationNote

from hpbench._convert import make_converter, structure
from hpbench._jsonio import readable_json, write_atomic

T = TypeVar("T")


def _is_map(cls: Any) -> bool:
    return getattr(cls, "__origin__", None) in (dict, Mapping)


def _is_tuple(cls: Any) -> bool:
    return cls is tuple or getattr(cls, "__origin__", None) is tuple


def make_document_converter() -> cattrs.Converter:
    """A strict converter whose maps check their values and whose tuples unstructure to lists."""
    converter = make_converter()

    def structure_map(value: Any, cls: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            msg = f"expected a table, got {type(value).__name__}"
            raise TypeError(msg)
        element = cls.__args__[1]
        result: dict[str, Any] = {}
        errors: list[Exception] = []
        for key, item in value.items():
            try:
                result[converter.structure(key, str)] = converter.structure(item, element)
            except Exception as exc:
                note = IterableValidationNote(f"Structuring item @ index {key!r}", key, element)
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                errors.append(exc)
        if errors:
            raise cattrs.IterableValidationError("While structuring a table", errors, cls)
        return result

    converter.register_structure_hook_func(_is_map, structure_map)
    converter.register_unstructure_hook_func(
        _is_tuple, lambda value: [converter.unstructure(item) for item in value]
    )
    return converter


CONVERTER = make_document_converter()


def read_document(data: Any, cls: type[T], *, source: str, code: str) -> T:
    """``data`` structured into ``cls``, or a ContractError naming each wrong field."""
    return structure(CONVERTER, data, cls, source=source, code=code)


def document_json(document: Any) -> dict[str, Any]:
    """An attrs document as its JSON object."""
    data: dict[str, Any] = CONVERTER.unstructure(document)
    return data


def write_document(path: Path, document: Any) -> None:
    """An attrs document written as readable JSON (atomic, mode 0600)."""
    write_atomic(path, readable_json(document_json(document)))
