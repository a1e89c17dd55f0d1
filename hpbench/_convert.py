"""The one way contracts are turned from JSON/TOML data into attrs classes.

cattrs' default converter is lenient: it turns ``3`` into ``"3"`` and a string
into a tuple of characters. A benchmark's contracts must not guess, so this
converter refuses unknown keys and every type coercion, and reports each
problem with its ``$.path``.
"""

from __future__ import annotations

import enum
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs import transform_error
from cattrs.errors import ForbiddenExtraKeysError, IterableValidationNote

from hpbench.errors import ContractError
from hpbench.findings import Finding

T = TypeVar("T")


def _strict_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        msg = f"expected a string, got {_type_name(value)}"
        raise TypeError(msg)
    return value


def _strict_int(value: Any, _: type) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"expected an integer, got {_type_name(value)}"
        raise TypeError(msg)
    return value


def _strict_float(value: Any, _: type) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"expected a number, got {_type_name(value)}"
        raise TypeError(msg)
    return float(value)


def _strict_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        msg = f"expected true or false, got {_type_name(value)}"
        raise TypeError(msg)
    return value


def _strict_enum(value: Any, cls: type[enum.Enum]) -> enum.Enum:
    try:
        return cls(value)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in cls)
        msg = f"expected one of {allowed}, got {value!r}"
        raise ValueError(msg) from None


def _is_homogeneous_tuple(cls: Any) -> bool:
    args: Any = getattr(cls, "__args__", None)
    return getattr(cls, "__origin__", None) is tuple and bool(args) and args[-1] is Ellipsis


def _type_name(value: Any) -> str:
    names = {
        dict: "a table",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def make_converter() -> cattrs.Converter:
    """A converter that forbids extra keys and never coerces types."""
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(str, _strict_str)
    converter.register_structure_hook(int, _strict_int)
    converter.register_structure_hook(float, _strict_float)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook_func(
        lambda cls: isinstance(cls, type) and issubclass(cls, enum.Enum), _strict_enum
    )

    def _strict_sequence(value: Any, cls: Any) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple):
            msg = f"expected a list, got {_type_name(value)}"
            raise TypeError(msg)
        return _structure_items(value, cls)

    def _structure_items(value: list[Any] | tuple[Any, ...], cls: Any) -> tuple[Any, ...]:
        element = cls.__args__[0]
        errors: list[Exception] = []
        items: list[Any] = []
        for index, item in enumerate(value):
            try:
                items.append(converter.structure(item, element))
            except Exception as exc:
                note = IterableValidationNote(f"Structuring item @ index {index}", index, element)
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                errors.append(exc)
        if errors:
            raise cattrs.IterableValidationError("While structuring a list", errors, cls)
        return tuple(items)

    converter.register_structure_hook_func(_is_homogeneous_tuple, _strict_sequence)
    return converter


def structure(converter: cattrs.Converter, data: Any, cls: type[T], *, source: str, code: str) -> T:
    """Structure ``data`` into ``cls`` or raise a :class:`ContractError`.

    Every problem becomes one :class:`Finding` naming ``source`` and the field.
    """
    if attrs.has(cls) and not isinstance(data, dict):
        finding = Finding(
            code=code, message=f"expected a table, got {_type_name(data)}", file=source, field="$"
        )
        raise ContractError(f"{source}: does not match the {cls.__name__} contract", [finding])
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        findings = [
            _finding_from_message(message, source=source, code=code)
            for message in transform_error(exc, path="$", format_exception=_describe)
        ]
        raise ContractError(
            f"{source}: does not match the {cls.__name__} contract", findings
        ) from exc


def _describe(exc: BaseException, _type: type | None) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, ForbiddenExtraKeysError):
        return f"unknown field(s): {', '.join(sorted(exc.extra_fields))}"
    return str(exc)


def _finding_from_message(message: str, *, source: str, code: str) -> Finding:
    text, _, field = message.rpartition(" @ ")
    if not text:
        return Finding(code=code, message=message, file=source)
    return Finding(code=code, message=text, file=source, field=field)
