"""Generated artefacts stay current: the JSON Schemas and the docs field reference."""

from __future__ import annotations

import json

import attrs
import jsonschema

from hpbench.capture import models
from hpbench.capture.schema import (
    DOCS_BEGIN,
    RECORD_SCHEMA_FILE,
    SNAPSHOT_SCHEMA_FILE,
    record_schema,
    render_schemas,
    snapshot_schema,
    stale_files,
)


class TestGeneratedFiles:
    def test_schemas_are_current(self, repo_root):
        """contrib/schemas matches the models (run `hpbench capture schemas --write`)."""
        stale = stale_files(repo_root / "contrib" / "schemas", repo_root / "docs" / "capture.md")

        assert [] == stale

    def test_docs_carry_the_reference(self, repo_root):
        """docs/capture.md has the generated field tables and names every finding code."""
        text = (repo_root / "docs" / "capture.md").read_text()

        assert DOCS_BEGIN in text
        for cls in (*models.RECORD_CLASSES.values(), models.MetricsSnapshot):
            assert f"#### {cls.__name__}" in text

    def test_docs_name_every_code(self, repo_root):
        """Every finding code the validator can emit is explained on the page."""
        from hpbench.capture import codes  # noqa: PLC0415

        text = (repo_root / "docs" / "capture.md").read_text()
        missing = [
            code
            for code in codes.ALL
            if f"`{code}`" not in text and not code.startswith("capture.reconcile.")
        ]
        assert [] == missing


class TestSchemaShape:
    def test_every_field_is_documented_and_required(self):
        """Each model field has a description and is required, with no extra keys allowed."""
        for schema in (snapshot_schema(), record_schema()):
            for name, definition in schema["$defs"].items():
                assert definition["additionalProperties"] is False, name
                assert sorted(definition["properties"]) == sorted(definition["required"]), name
                for field, spec in definition["properties"].items():
                    assert spec.get("description"), f"{name}.{field}"

    def test_versions_are_constants(self):
        """The schemas pin the versions."""
        snapshot = snapshot_schema()
        records = record_schema()

        assert {"const": "hpatch.capture.metrics.v4"} == {
            k: v for k, v in snapshot["properties"]["schema"].items() if k == "const"
        }
        for ref in records["oneOf"]:
            name = ref["$ref"].rsplit("/", 1)[-1]
            assert 6 == records["$defs"][name]["properties"]["schema_version"]["const"]

    def test_counts_are_non_negative_and_savings_signed(self):
        """Count fields carry minimum 0; savings do not."""
        comparison = snapshot_schema()["$defs"]["Comparison"]["properties"]

        assert 0 == comparison["client_bytes"]["minimum"]
        assert "minimum" not in comparison["savings_bytes"]
        assert ["integer", "null"] == comparison["savings_tokens"]["type"]

    def test_files_are_json(self):
        """Both files parse and name themselves."""
        rendered = render_schemas()

        assert {SNAPSHOT_SCHEMA_FILE, RECORD_SCHEMA_FILE} == set(rendered)
        for name, text in rendered.items():
            assert name == json.loads(text)["$id"]

    def test_record_schema_covers_all_fields(self):
        """The record schema lists exactly the attrs fields of each kind."""
        records = record_schema()
        for cls in models.RECORD_CLASSES.values():
            properties = records["$defs"][cls.__name__]["properties"]
            assert [f.name for f in attrs.fields(cls)] == list(properties)


class TestSchemasAgreeWithTheValidator:
    """The generated schemas accept what the validator accepts and refuse its schema faults."""

    @staticmethod
    def _validators():
        return (
            jsonschema.Draft202012Validator(record_schema()),
            jsonschema.Draft202012Validator(snapshot_schema()),
        )

    def test_fixtures_are_valid(self, repo_root):
        """Every kept schema-6 record and snapshot is valid under the schemas."""
        records, snapshot = self._validators()
        for arm in ("hpatch", "control"):
            root = repo_root / "tests" / "data" / "capture" / f"v6-{arm}"
            for line in (root / "capture" / "records.jsonl").read_text().splitlines():
                records.validate(json.loads(line))
            snapshot.validate(json.loads((root / "metrics.json").read_text()))

    def test_schema_faults_are_refused(self, repo_root):
        """Unknown keys, wrong versions, negative counts and missing fields are invalid."""
        records, snapshot = self._validators()
        root = repo_root / "tests" / "data" / "capture" / "v6-hpatch"
        record = json.loads((root / "capture" / "records.jsonl").read_text().splitlines()[1])
        metrics = json.loads((root / "metrics.json").read_text())
        broken_records = [
            {**record, "authorization": "Bearer x"},
            {**record, "schema_version": 5},
            {**record, "seq": -1},
            {k: v for k, v in record.items() if k != "usage"},
        ]
        for broken in broken_records:
            assert not records.is_valid(broken), broken
        assert not snapshot.is_valid({**metrics, "schema": "hpatch.capture.metrics.v3"})
        assert not snapshot.is_valid({**metrics, "extra": 1})
