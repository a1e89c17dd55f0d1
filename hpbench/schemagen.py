"""JSON Schemas and Markdown field tables, generated from the attrs contract models.

Every contract the project writes as JSON has one attrs model; this module turns the
model into a JSON Schema (2020-12) in ``contrib/schemas/`` and, where a page keeps a
field reference, into Markdown tables between two marker comments. ``hpbench schemas
--write`` regenerates every file and ``--check`` (and a test) fails when one is stale.

A contract is registered by one line in :data:`REGISTRY`: ``"module:NAME"`` naming a
:class:`Contract` constant. The names are imported only when the generator runs, so a
contract module never imports this registry's other contracts.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_DIR = Path("contrib/schemas")

# Every generated contract, as "module:CONSTANT" naming a Contract. Add one line per
# contract.
REGISTRY: tuple[str, ...] = (
    "hpbench.capture.schema:RECORD_CONTRACT",
    "hpbench.capture.schema:SNAPSHOT_CONTRACT",
    "hpbench.results.model:CONTRACT",
    "hpbench.report.document:CONTRACT",
    "hpbench.instructions.stock:CONTRACT",
    "hpbench.instructions.derive:CONTRACT",
    "hpbench.plan:CONTRACT",
    "hpbench.commands.document:CONTRACT",
    "hpbench.changes.model:CONTRACT",
    "hpbench.reference.script:CONTRACT",
    "hpbench.issuereports.model:CONTRACT",
    "hpbench.issuereports.model:COLLECTION_CONTRACT",
    "hpbench.baseline:CONTRACT",
    "hpbench.codecreplay.manifest:CONTRACT",
    "hpbench.exactevidence.model:CONTRACT",
    "hpbench.suite.document:CONTRACT",
)


def doc(text: str) -> dict[str, str]:
    """Field metadata holding a description (read by the schema and table generators)."""
    return {"doc": text}


@attrs.frozen
class DocsTables:
    """Where a page keeps the generated field tables: the file and its two markers."""

    path: Path
    begin: str
    end: str


@attrs.frozen
class NamedType:
    """How a ``NewType`` is written: its JSON Schema and the words in a field table."""

    schema: Mapping[str, Any]
    text: str


@attrs.frozen
class Contract:
    """One generated schema: the model (or several, told apart by a tag) and its file.

    With one root the schema is that object; with several it is ``oneOf`` them, and
    ``title`` and ``description`` say what a document of any of them is.
    """

    schema_file: str
    roots: tuple[type[Any], ...]
    title: str | None = None
    description: str | None = None
    docs: DocsTables | None = None
    named_types: Mapping[Any, NamedType] = attrs.field(factory=dict)
    # A hand-written input (a replay script) may leave out a field that has a default; a
    # document hpbench writes always holds every field, so its schema requires them all.
    defaults_optional: bool = False


def _summary(cls: type[Any]) -> str:
    text = inspect.getdoc(cls) or ""
    return " ".join(text.split("\n\n")[0].split())


def _field_doc(field: attrs.Attribute[Any]) -> str:
    return str(field.metadata.get("doc", ""))


def _optional_inner(tp: Any) -> Any | None:
    """``X`` for ``X | None``; None for anything else."""
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return None
    inner = [a for a in typing.get_args(tp) if a is not type(None)]
    if len(inner) != 1:
        msg = f"only X | None unions are supported, got {tp}"
        raise TypeError(msg)
    return inner[0]


def _element(tp: Any) -> Any | None:
    """The element type of ``tuple[X, ...]`` and ``list[X]``; None otherwise."""
    origin = typing.get_origin(tp)
    if origin is list or (origin is tuple and typing.get_args(tp)[-1] is Ellipsis):
        return typing.get_args(tp)[0]
    return None


def _enum_map(tp: Any) -> tuple[type[enum.Enum], Any] | None:
    """``(E, X)`` for ``dict[E, X]`` with ``E`` an enum; None otherwise.

    Such a map is a table with one entry for every member of ``E``, each present.
    """
    if typing.get_origin(tp) in (dict, Mapping):
        key, value = typing.get_args(tp)
        if isinstance(key, type) and issubclass(key, enum.Enum):
            return key, value
    return None


def _map_value(tp: Any) -> Any | None:
    """The value type of ``dict[str, X]`` and ``Mapping[str, X]``; None otherwise."""
    if typing.get_origin(tp) in (dict, Mapping) and _enum_map(tp) is None:
        key, value = typing.get_args(tp)
        if key is not str:
            msg = f"only string-keyed maps are supported, got {tp}"
            raise TypeError(msg)
        return value
    return None


_SIMPLE_SCHEMAS: dict[Any, dict[str, Any]] = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
}
_SIMPLE_TEXT: dict[Any, str] = {
    int: "integer (signed)",
    float: "number",
    str: "string",
    bool: "boolean",
}


class _Builder:
    def __init__(self, named_types: Mapping[Any, NamedType], defaults_optional: bool) -> None:
        self.defs: dict[str, Any] = {}
        self.named_types = named_types
        self.defaults_optional = defaults_optional

    def required(self, field: attrs.Attribute[Any]) -> bool:
        return not (self.defaults_optional and field.default is not attrs.NOTHING)

    def ref(self, cls: type[Any]) -> dict[str, Any]:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}  # reserve against recursion
            self.defs[name] = self.object(cls)
        return {"$ref": f"#/$defs/{name}"}

    def object(self, cls: type[Any]) -> dict[str, Any]:
        hints = typing.get_type_hints(cls)
        properties: dict[str, Any] = {}
        for field in attrs.fields(cls):
            schema = self.value(hints[field.name])
            text = _field_doc(field)
            if text and "$ref" in schema:
                schema = {"description": text, "allOf": [schema]}
            elif text:
                schema = {"description": text, **schema}
            properties[field.name] = schema
        return {
            "type": "object",
            "title": cls.__name__,
            "description": _summary(cls),
            "properties": properties,
            "required": [field.name for field in attrs.fields(cls) if self.required(field)],
            "additionalProperties": False,
        }

    def value(self, tp: Any) -> dict[str, Any]:
        if tp is Any:  # a document embedded verbatim under its own contract
            return {}
        inner = _optional_inner(tp)
        if inner is not None:
            schema = self.value(inner)
            if "type" in schema and isinstance(schema["type"], str):
                nullable = {**schema, "type": [schema["type"], "null"]}
                if "enum" in nullable:
                    nullable["enum"] = [*nullable["enum"], None]
                return nullable
            return {"anyOf": [schema, {"type": "null"}]}
        if typing.get_origin(tp) is typing.Literal:
            values = typing.get_args(tp)
            return {"const": values[0]} if len(values) == 1 else {"enum": list(values)}
        element = _element(tp)
        if element is not None:
            return {"type": "array", "items": self.value(element)}
        enum_map = _enum_map(tp)
        if enum_map is not None:
            members, item = enum_map
            names = [member.value for member in members]
            item_schema = self.value(item)
            return {
                "type": "object",
                "properties": dict.fromkeys(names, item_schema),
                "required": names,
                "additionalProperties": False,
            }
        value = _map_value(tp)
        if value is not None:
            return {"type": "object", "additionalProperties": self.value(value)}
        if attrs.has(tp):
            return self.ref(tp)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return {"type": "string", "enum": [member.value for member in tp]}
        if tp in self.named_types:
            return dict(self.named_types[tp].schema)
        return dict(_SIMPLE_SCHEMAS[tp])


def schema_of(contract: Contract) -> dict[str, Any]:
    """The JSON Schema document of ``contract``."""
    builder = _Builder(contract.named_types, contract.defaults_optional)
    head = {"$schema": JSON_SCHEMA_DIALECT, "$id": contract.schema_file}
    if len(contract.roots) == 1:
        root = builder.object(contract.roots[0])
        return {**head, **root, "$defs": dict(sorted(builder.defs.items()))}
    kinds = [builder.ref(cls) for cls in contract.roots]
    return {
        **head,
        "title": contract.title,
        "description": contract.description,
        "oneOf": kinds,
        "$defs": dict(sorted(builder.defs.items())),
    }


def render_schema(contract: Contract) -> str:
    """The schema file's text."""
    return json.dumps(schema_of(contract), indent=2, ensure_ascii=False) + "\n"


def _type_text(tp: Any, named_types: Mapping[Any, NamedType]) -> str:
    if tp is Any:
        return "any JSON value"
    inner = _optional_inner(tp)
    if inner is not None:
        return f"{_type_text(inner, named_types)} or null"
    if typing.get_origin(tp) is typing.Literal:
        return " or ".join(f"`{json.dumps(a)}`" for a in typing.get_args(tp))
    element = _element(tp)
    if element is not None:
        return f"list of {_type_text(element, named_types)}"
    enum_map = _enum_map(tp)
    if enum_map is not None:
        members, item = enum_map
        keys = ", ".join(f"`{member.value}`" for member in members)
        return f"table with every one of {keys} as a key, each {_type_text(item, named_types)}"
    value = _map_value(tp)
    if value is not None:
        return f"map of string to {_type_text(value, named_types)}"
    if attrs.has(tp):
        return f"[{tp.__name__}](#{tp.__name__.lower()})"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return " \\| ".join(f"`{m.value}`" for m in tp)
    if tp in named_types:
        return named_types[tp].text
    return _SIMPLE_TEXT[tp]


def _nested_types(tp: Any) -> list[Any]:
    """``tp`` and every type inside it (optional, list and map arguments)."""
    found = [tp]
    for arg in typing.get_args(tp):
        found += _nested_types(arg)
    return found


def _table_classes(roots: tuple[type[Any], ...]) -> list[type[Any]]:
    """The roots and every attrs class they reach, depth first, each once."""
    seen: list[type[Any]] = []

    def visit(cls: type[Any]) -> None:
        if cls in seen:
            return
        seen.append(cls)
        hints = typing.get_type_hints(cls)
        for field in attrs.fields(cls):
            for tp in _nested_types(hints[field.name]):
                if attrs.has(tp):
                    visit(tp)

    for cls in roots:
        visit(cls)
    return seen


def field_tables(roots: tuple[type[Any], ...], named_types: Mapping[Any, NamedType]) -> str:
    """The Markdown field tables of the roots and every class they reach."""
    parts: list[str] = []
    for cls in _table_classes(roots):
        hints = typing.get_type_hints(cls)
        parts.append(f"#### {cls.__name__}\n\n{_summary(cls)}\n")
        parts.append("| field | type | meaning |\n| --- | --- | --- |")
        for field in attrs.fields(cls):
            text = _field_doc(field).replace("|", "\\|")
            kind = _type_text(hints[field.name], named_types)
            parts.append(f"| `{field.name}` | {kind} | {text} |")
        parts.append("")
    return "\n".join(parts)


def docs_with_tables(text: str, docs: DocsTables, tables: str) -> str:
    """``text`` with the section between the markers replaced by ``tables``."""
    start = text.index(docs.begin) + len(docs.begin)
    end = text.index(docs.end)
    return text[:start] + "\n\n" + tables + "\n" + text[end:]


def _pages(contracts: tuple[Contract, ...], root: Path) -> dict[Path, list[Contract]]:
    """Each docs page (under ``root``) and the contracts whose tables it keeps."""
    pages: dict[Path, list[Contract]] = {}
    for contract in contracts:
        if contract.docs is not None:
            pages.setdefault(root / contract.docs.path, []).append(contract)
    return pages


def _page_text(current: str, contracts: list[Contract]) -> str:
    """A page with every contract's section regenerated (one section per marker pair)."""
    sections: dict[tuple[str, str], tuple[list[type[Any]], dict[Any, NamedType]]] = {}
    for contract in contracts:
        if contract.docs is None:
            continue
        roots, named = sections.setdefault((contract.docs.begin, contract.docs.end), ([], {}))
        roots.extend(contract.roots)
        named.update(contract.named_types)
    for (begin, end), (roots, named) in sections.items():
        docs = DocsTables(Path(), begin, end)
        current = docs_with_tables(current, docs, field_tables(tuple(roots), named))
    return current


def stale_files(
    contracts: tuple[Contract, ...], schema_dir: Path, docs_root: Path | None = None
) -> list[Path]:
    """Generated files that differ from what the models produce now.

    ``docs_root`` is where the pages live (the checkout); None leaves pages unchecked.
    """
    stale: list[Path] = []
    for contract in contracts:
        path = schema_dir / contract.schema_file
        if not path.is_file() or path.read_text(encoding="utf-8") != render_schema(contract):
            stale.append(path)
    if docs_root is not None:
        for page, on_page in _pages(contracts, docs_root).items():
            current = page.read_text(encoding="utf-8") if page.is_file() else ""
            markers = all(c.docs is not None and c.docs.begin in current for c in on_page)
            if not markers or _page_text(current, on_page) != current:
                stale.append(page)
    return stale


def write_generated(
    contracts: tuple[Contract, ...], schema_dir: Path, docs_root: Path | None = None
) -> list[Path]:
    """Regenerate the schemas (and the pages' tables); return the files that changed."""
    changed = stale_files(contracts, schema_dir, docs_root)
    schema_dir.mkdir(parents=True, exist_ok=True)
    for contract in contracts:
        (schema_dir / contract.schema_file).write_text(render_schema(contract), encoding="utf-8")
    if docs_root is not None:
        for page, on_page in _pages(contracts, docs_root).items():
            if page in changed:
                current = page.read_text(encoding="utf-8")
                page.write_text(_page_text(current, on_page), encoding="utf-8")
    return changed


def registered() -> tuple[Contract, ...]:
    """Every contract named in :data:`REGISTRY`, in its order."""
    contracts = []
    for entry in REGISTRY:
        module, _, name = entry.partition(":")
        contract = getattr(importlib.import_module(module), name)
        if not isinstance(contract, Contract):
            msg = f"{entry} is not a Contract"
            raise TypeError(msg)
        contracts.append(contract)
    files = [c.schema_file for c in contracts]
    if len(set(files)) != len(files):
        msg = "two registered contracts write the same schema file"
        raise ValueError(msg)
    return tuple(contracts)


__all__ = [
    "JSON_SCHEMA_DIALECT",
    "REGISTRY",
    "SCHEMA_DIR",
    "Contract",
    "DocsTables",
    "NamedType",
    "doc",
    "docs_with_tables",
    "field_tables",
    "registered",
    "render_schema",
    "schema_of",
    "stale_files",
    "write_generated",
]
