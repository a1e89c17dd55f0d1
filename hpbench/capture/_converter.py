"""The capture contract's converter: the project's strict converter plus the contract's types.

``Count`` must be a non-negative integer, ``Ident`` a non-empty string, and a ``Literal``
must match exactly (``6.0`` or ``true`` is not ``6``).
"""

from __future__ import annotations

import typing
from typing import Any

import cattrs

from hpbench._convert import make_converter
from hpbench.capture.models import Count, Ident


def _count(value: Any, _: Any) -> Count:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"expected a non-negative integer, got {_json_type(value)}"
        raise TypeError(msg)
    if value < 0:
        msg = f"expected a non-negative integer, got {value}"
        raise ValueError(msg)
    return Count(value)


def _ident(value: Any, _: Any) -> Ident:
    if not isinstance(value, str):
        msg = f"expected a string, got {_json_type(value)}"
        raise TypeError(msg)
    if not value:
        msg = "expected a non-empty string"
        raise ValueError(msg)
    return Ident(value)


def _is_literal(cls: Any) -> bool:
    return typing.get_origin(cls) is typing.Literal


def _literal(value: Any, cls: Any) -> Any:
    for allowed in typing.get_args(cls):
        if type(value) is type(allowed) and value == allowed:
            return value
    expected = " or ".join(repr(a) for a in typing.get_args(cls))
    msg = f"expected {expected}, got {value!r}"
    raise ValueError(msg)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), type(value).__name__)


def make_capture_converter() -> cattrs.Converter:
    """The strict converter with the contract's ``Count``, ``Ident`` and ``Literal`` rules."""
    converter = make_converter()
    converter.register_structure_hook(Count, _count)
    converter.register_structure_hook(Ident, _ident)
    converter.register_structure_hook_func(_is_literal, _literal)
    return converter


CONVERTER = make_capture_converter()
"""The shared capture converter."""
