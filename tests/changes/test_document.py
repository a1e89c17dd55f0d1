"""The ``hpbench.changes.v1`` document: its model, its generated schema, its JSON form."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hpbench import schemagen
from hpbench._documents import document_json, read_document
from hpbench.changes import changes_document, compare
from hpbench.changes.model import CONTRACT, ChangesDocument
from hpbench.errors import ContractError

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "contrib" / "schemas" / "hpbench.changes.v1.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


@pytest.fixture
def document(base: Path, work: Path) -> dict[str, Any]:
    """A document with every kind of change: added, deleted, modified, odd names, special files."""
    (work / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"odd\n")
    (work / "new\nline.txt").write_bytes(b"two\nlines\n")
    (work / "README.md").chmod(0o755)
    (work / "doomed.txt").unlink()
    (work / "src" / "main.go").write_bytes(b"package main\n")
    (work / "old_name.txt").rename(work / "new_name.txt")
    (work / "link").unlink()
    (work / "link").symlink_to("src")
    (work / "sub" / ".git").mkdir(parents=True)
    (work / "sub" / ".git" / "config").write_bytes(b"[core]\n")
    os.mkfifo(work / "pipe")
    return changes_document(compare(base, work))


def schema_errors(validator: jsonschema.Draft202012Validator, value: Any) -> list[str]:
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(value)]


class TestSchema:
    def test_schema_is_generated_from_the_model(self):
        """The file is exactly what the model generates (hpbench schemas --write)."""
        assert schemagen.schema_of(CONTRACT) == json.loads(SCHEMA_FILE.read_text("utf-8"))

    def test_every_kind_of_change_validates(
        self, document: dict[str, Any], validator: jsonschema.Draft202012Validator
    ):
        """A document holding every status, kind and mode is valid against the schema."""
        assert [] == schema_errors(validator, document)
        records = document["changes"]
        assert {"added", "deleted", "modified"} == {record["status"] for record in records}
        assert {"fifo", "symlink", "file"} <= {record["after_kind"] for record in records}
        assert any(record["path_base64"] is not None for record in records)

    def test_nothing_changed_validates(self, validator: jsonschema.Draft202012Validator):
        assert [] == schema_errors(validator, changes_document([]))

    @pytest.mark.parametrize(
        ("field", "value", "where"),
        [
            ("status", "renamed", "$.changes[0].status"),
            ("after_kind", "directory", "$.changes[0].after_kind"),
            ("after_mode", "100600", "$.changes[0].after_mode"),
            ("after_mode", 100644, "$.changes[0].after_mode"),
            ("path_base64", 12, "$.changes[0].path_base64"),
            ("in_diff", "yes", "$.changes[0].in_diff"),
            ("surprise", True, "$.changes[0]"),
        ],
    )
    def test_schema_refuses(
        self,
        document: dict[str, Any],
        validator: jsonschema.Draft202012Validator,
        field: str,
        value: Any,
        where: str,
    ):
        """A wrong value or an unknown key of a record is refused at its place."""
        damaged = copy.deepcopy(document)
        damaged["changes"][0][field] = value
        assert any(error.startswith(f"{where}: ") for error in schema_errors(validator, damaged))

    def test_schema_refuses_a_missing_field_or_another_version(
        self, document: dict[str, Any], validator: jsonschema.Draft202012Validator
    ):
        missing = copy.deepcopy(document)
        del missing["changes"][0]["in_diff"]
        assert ["$.changes[0]: 'in_diff' is a required property"] == schema_errors(
            validator, missing
        )
        other = {**document, "schema": "hpbench.changes.v2"}
        assert schema_errors(validator, other)[0].startswith("$.schema: ")


class TestModel:
    def test_json_form_is_the_models(self, document: dict[str, Any]):
        """The written document reads back through the model into the same JSON."""
        model = read_document(document, ChangesDocument, source="changes.json", code="changes")
        assert document == document_json(model)
        assert ["schema", "changes"] == list(document)
        assert [
            "path",
            "path_base64",
            "status",
            "before_kind",
            "after_kind",
            "before_mode",
            "after_mode",
            "in_diff",
        ] == list(document["changes"][0])

    def test_strict_reading_names_the_field(self, document: dict[str, Any]):
        damaged = copy.deepcopy(document)
        damaged["changes"][1]["after_mode"] = "100600"
        with pytest.raises(ContractError) as caught:
            read_document(damaged, ChangesDocument, source="changes.json", code="changes")
        assert ["$.changes[1].after_mode"] == [f.field for f in caught.value.findings]
