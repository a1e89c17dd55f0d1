"""The hpbench.commands.v1 contract: golden outputs of the corpus and its JSON Schema.

The schema check is written here (a small subset of JSON Schema: type, const,
enum, required, properties, additionalProperties, items, minimum, pattern) so
the project needs no validator dependency. Set HPBENCH_UPDATE_GOLDEN=1 to
rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from hpbench._jsonio import canonical_json
from hpbench.commands import SCHEMA, Category, analyze_file, from_json, to_json
from hpbench.errors import ContractError

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "codex"
SCHEMA_FILE = REPO / "contrib" / "schemas" / "hpbench.commands.v1.schema.json"

ROOTS = {
    "real-edit-loop": "/tmp/corpus/run-edit-loop/ws",
    "real-compound": "/tmp/corpus/run-compound/ws",
    "real-mixed": "/tmp/corpus/run-mixed/ws",
    "real-failure": "/tmp/corpus/run-failure/ws",
    "real-quoting": "/tmp/corpus/run-quoting/ws",
    "hand-rules": "/workspace",
    "hand-all-items": "/workspace",
    "hand-malformed": "/workspace",
}

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _type_matches(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (subset of JSON Schema 2020-12)."""
    errors: list[str] = []
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in enum")
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_type_matches(value, name) for name in names):
            return [*errors, f"{path}: expected type {names}"]
    if "minimum" in schema and isinstance(value, int) and value < schema["minimum"]:
        errors.append(f"{path}: below minimum")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        errors.append(f"{path}: does not match {schema['pattern']}")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        errors += [
            f"{path}: missing {key}" for key in schema.get("required", []) if key not in value
        ]
        for key, item in value.items():
            if key in properties:
                errors += schema_errors(item, properties[key], f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected key {key}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{path}[{index}]")
    return errors


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


class TestGolden:
    @pytest.mark.parametrize("name", sorted(ROOTS))
    def test_corpus_output_is_stable(self, name: str):
        """Each corpus stream analyses to exactly its golden hpbench.commands.v1 document."""
        output = to_json(analyze_file(DATA / f"{name}.jsonl", workspace_root=ROOTS[name]))
        golden = DATA / f"{name}.commands.json"
        text = json.dumps(output, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        # Findings name the stream's file; the checkout may live anywhere (CI clones elsewhere).
        text = text.replace(str(DATA), "<tests/data/codex>")
        if os.environ.get("HPBENCH_UPDATE_GOLDEN") == "1":
            golden.write_text(text, encoding="utf-8")
        assert golden.read_text(encoding="utf-8") == text

    def test_corpus_covers_every_category(self):
        """Together the corpus exercises all twelve categories."""
        seen = set()
        for name, root in ROOTS.items():
            analysis = analyze_file(DATA / f"{name}.jsonl", workspace_root=root)
            seen |= {invocation.category for invocation in analysis.invocations}
        assert set(Category) == seen


class TestSchema:
    @pytest.mark.parametrize("name", sorted(ROOTS))
    def test_outputs_validate(self, name: str, schema: dict[str, Any]):
        """Every corpus output is valid against the published schema."""
        output = to_json(analyze_file(DATA / f"{name}.jsonl", workspace_root=ROOTS[name]))
        assert [] == schema_errors(output, schema)

    def test_schema_names_the_version(self, schema: dict[str, Any]):
        """The schema's const is the version the code writes."""
        assert SCHEMA == schema["properties"]["schema"]["const"]
        assert SCHEMA == schema["title"]

    def test_schema_lists_every_category(self, schema: dict[str, Any]):
        """Counts and categories in the schema match the Category enum exactly."""
        values = [category.value for category in Category]
        assert values == schema["properties"]["counts"]["required"]
        invocation = schema["properties"]["invocations"]["items"]
        assert values == invocation["properties"]["category"]["enum"]

    def test_schema_is_strict(self, schema: dict[str, Any]):
        """An extra or missing key is caught, so the schema cannot silently go stale."""
        output = to_json(analyze_file(DATA / "hand-rules.jsonl", workspace_root="/workspace"))
        output["surprise"] = 1
        del output["invocations"][0]["argv"]
        errors = schema_errors(output, schema)
        assert "$: unexpected key surprise" in errors
        assert "$.invocations[0]: missing argv" in errors

    def test_key_order_is_canonical(self):
        """The CLI prints sorted keys, so the same analysis prints the same bytes."""
        output = to_json(analyze_file(DATA / "real-edit-loop.jsonl", workspace_root="/w"))
        assert canonical_json(output) == canonical_json(json.loads(canonical_json(output)))
        assert list(output) == [
            "schema",
            "invocations",
            "loops",
            "workspace_diff_loops",
            "terminal_validation",
            "counts",
            "totals",
            "findings",
            "input_findings",
        ]


class TestReadBack:
    @pytest.mark.parametrize("name", sorted(ROOTS))
    def test_round_trip(self, name: str):
        """from_json(to_json(a)) is a again, for every corpus stream."""
        analysis = analyze_file(DATA / f"{name}.jsonl", workspace_root=ROOTS[name])
        assert analysis == from_json(to_json(analysis))

    @pytest.mark.parametrize("schema", ["hpbench.commands.v2", "hpbench.commands.v0", None])
    def test_refuses_other_versions(self, schema: str | None):
        """A document of another (or no) schema version is refused."""
        data = to_json(analyze_file(DATA / "real-edit-loop.jsonl", workspace_root="/w"))
        data["schema"] = schema
        with pytest.raises(ContractError) as exc:
            from_json(data, source="x.json")
        assert "$.schema" == exc.value.findings[0].field

    def test_refuses_inconsistent_counts(self):
        """Counts that do not match the invocations are refused."""
        data = to_json(analyze_file(DATA / "real-edit-loop.jsonl", workspace_root="/w"))
        data["counts"]["search"]["total"] += 1
        with pytest.raises(ContractError, match="inconsistent"):
            from_json(data)

    def test_names_the_bad_field(self):
        """A mistyped field is reported with its path."""
        data = to_json(analyze_file(DATA / "real-edit-loop.jsonl", workspace_root="/w"))
        data["invocations"][1]["category"] = "reading"
        with pytest.raises(ContractError) as exc:
            from_json(data)
        assert "$.invocations[1].category" == exc.value.findings[0].field
