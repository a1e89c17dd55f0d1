"""The hpbench.commands.v2 contract: golden outputs of the corpus, its model and its schema.

The schema is generated from hpbench/commands/document.py; every golden document must be
valid against it, and each kind of damage the hand-written schema refused is still
refused. Set HPBENCH_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import copy
import json
import os
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hpbench import schemagen
from hpbench._jsonio import canonical_json
from hpbench.commands import (
    LOOP_CATEGORIES,
    SCHEMA,
    Category,
    analyze_file,
    from_json,
    to_json,
)
from hpbench.commands.document import CONTRACT, LoopKind
from hpbench.errors import ContractError

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "codex"
SCHEMA_FILE = REPO / "contrib" / "schemas" / "hpbench.commands.v2.schema.json"

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


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema)


def schema_errors(validator: jsonschema.Draft202012Validator, value: Any) -> list[str]:
    """Every way ``value`` breaks the schema, as ``$.path: message``."""
    return [
        f"{error.json_path}: {error.message}"
        for error in sorted(validator.iter_errors(value), key=lambda e: e.json_path)
    ]


def golden(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / f"{name}.commands.json").read_text("utf-8"))
    return document


def damaged(document: dict[str, Any], path: list[str | int], value: Any) -> dict[str, Any]:
    """A copy of ``document`` with ``path`` set to ``value`` (deleted for ``DELETE``)."""
    copied = copy.deepcopy(document)
    target: Any = copied
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return copied


DELETE = object()


class TestGolden:
    @pytest.mark.parametrize("name", sorted(ROOTS))
    def test_corpus_output_is_stable(self, name: str):
        """Each corpus stream analyses to exactly its golden hpbench.commands.v2 document."""
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
    def test_schema_is_generated_from_the_model(self, schema: dict[str, Any]):
        """The file is exactly what the model generates (hpbench schemas --write)."""
        assert schemagen.schema_of(CONTRACT) == schema

    @pytest.mark.parametrize("name", sorted(ROOTS))
    def test_outputs_validate(self, name: str, validator: jsonschema.Draft202012Validator):
        """Every corpus output and every golden file is valid against the published schema."""
        output = to_json(analyze_file(DATA / f"{name}.jsonl", workspace_root=ROOTS[name]))
        assert [] == schema_errors(validator, output)
        assert [] == schema_errors(validator, golden(name))

    def test_schema_names_the_version(self, schema: dict[str, Any]):
        """The schema's const and file name are the version the code writes."""
        assert SCHEMA == schema["properties"]["schema"]["const"]
        assert f"{SCHEMA}.schema.json" == schema["$id"]

    def test_schema_lists_every_category(self, schema: dict[str, Any]):
        """Counts and categories in the schema match the Category enum exactly."""
        values = [category.value for category in Category]
        assert values == schema["properties"]["counts"]["required"]
        assert values == list(schema["properties"]["counts"]["properties"])
        invocation = schema["$defs"]["InvocationEntry"]
        assert values == invocation["properties"]["category"]["enum"]

    def test_loop_kinds_are_the_loop_categories(self):
        """The document's loop kinds are exactly the categories that can loop."""
        assert [category.value for category in LOOP_CATEGORIES] == list(typing.get_args(LoopKind))

    def test_schema_is_strict(self, validator: jsonschema.Draft202012Validator):
        """An extra or missing key is caught, so the schema cannot silently go stale."""
        output = to_json(analyze_file(DATA / "hand-rules.jsonl", workspace_root="/workspace"))
        output["surprise"] = 1
        del output["invocations"][0]["argv"]
        errors = schema_errors(validator, output)
        assert any(e.startswith("$: Additional properties") and "surprise" in e for e in errors)
        assert "$.invocations[0]: 'argv' is a required property" in errors

    @pytest.mark.parametrize(
        ("path", "value", "where"),
        [
            (["schema"], "hpbench.commands.v1", "$.schema"),
            (["invocations", 0, "category"], "reading", "$.invocations[0].category"),
            (["invocations", 0, "seq"], -1, "$.invocations[0].seq"),
            (["invocations", 0, "exit_code"], "0", "$.invocations[0].exit_code"),
            (["invocations", 0, "ambiguous"], 0, "$.invocations[0].ambiguous"),
            (["invocations", 0, "argv"], "cat a", "$.invocations[0].argv"),
            (["loops", 0, "kind"], "edit", "$.loops[0].kind"),
            (["loops", 0, "seq"], -1, "$.loops[0].seq"),
            (["terminal_validation", 0, "operand"], None, "$.terminal_validation[0].operand"),
            (["workspace_diff_loops", 0, "paths"], [1], "$.workspace_diff_loops[0].paths[0]"),
            (["counts", "search"], DELETE, "$.counts"),
            (["counts", "reading"], {"total": 0, "after_edit": 0}, "$.counts"),
            (["counts", "edit", "after_edit"], -1, "$.counts.edit.after_edit"),
            (["totals", "changed_paths"], DELETE, "$.totals"),
            (["totals", "commands"], -1, "$.totals.commands"),
            (["findings", 0, "code"], "loop.search", "$.findings[0].code"),
            (["input_findings"], [{"code": "c", "message": "m"}], "$.input_findings[0]"),
        ],
    )
    def test_schema_refuses(
        self,
        validator: jsonschema.Draft202012Validator,
        path: list[str | int],
        value: Any,
        where: str,
    ):
        """Each kind of damage the hand-written schema refused is refused at its field."""
        document = golden("hand-rules")
        assert [] == schema_errors(validator, document)
        errors = schema_errors(validator, damaged(document, path, value))
        assert any(error.startswith(f"{where}: ") for error in errors), errors

    def test_schema_refuses_line_zero(self, validator: jsonschema.Draft202012Validator):
        """An input finding's line counts from 1; a file or field may be null."""
        document = golden("hand-malformed")
        assert [] == schema_errors(
            validator, damaged(document, ["input_findings", 0, "file"], None)
        )
        errors = schema_errors(validator, damaged(document, ["input_findings", 0, "line"], 0))
        assert ["$.input_findings[0].line: 0 is less than the minimum of 1"] == errors

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
            "edit_rounds",
        ]


class TestReadBack:
    @pytest.mark.parametrize("name", sorted(ROOTS))
    def test_round_trip(self, name: str):
        """from_json(to_json(a)) is a again, for every corpus stream."""
        analysis = analyze_file(DATA / f"{name}.jsonl", workspace_root=ROOTS[name])
        assert analysis == from_json(to_json(analysis))

    @pytest.mark.parametrize("schema", ["hpbench.commands.v3", "hpbench.commands.v1", None])
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

    @pytest.mark.parametrize(
        ("path", "value", "field", "message"),
        [
            (["counts", "search"], DELETE, "$.counts", "missing search"),
            (
                ["counts", "reading"],
                {"total": 0, "after_edit": 0},
                "$.counts",
                "unknown field(s): reading",
            ),
            (["counts", "edit", "total"], "3", "$.counts['edit'].total", "expected an integer"),
            (["totals", "commands"], "5", "$.totals.commands", "expected an integer"),
            (["surprise"], 1, "$", "unknown field(s): surprise"),
        ],
    )
    def test_names_the_bad_table(self, path: list[str | int], value: Any, field: str, message: str):
        """The strict reader names the field of a damaged table before any consistency check."""
        data = damaged(golden("hand-rules"), path, value)
        with pytest.raises(ContractError) as exc:
            from_json(data, source="x.json")
        [finding] = exc.value.findings
        assert (field, "x.json") == (finding.field, finding.file)
        assert message in finding.message
