"""Generated artefacts stay current: the JSON Schemas and the docs field reference."""

from __future__ import annotations

import json
import shutil
from typing import Literal

import attrs
import jsonschema
import pytest

from hpbench import schemagen
from hpbench._cli.main import main
from hpbench.capture import models
from hpbench.capture.schema import (
    CONTRACTS,
    DOCS_BEGIN,
    RECORD_SCHEMA_FILE,
    SNAPSHOT_SCHEMA_FILE,
    record_schema,
    snapshot_schema,
)


@attrs.frozen
class Inner:
    """An inner object."""

    seconds: float


@attrs.frozen
class Outer:
    """An outer object."""

    counts: dict[str, int] = attrs.field(metadata=schemagen.doc("Counts by name."))
    names: tuple[str, ...]
    inner: Inner | None
    tier: Literal["a", "b"]


class TestGeneratedFiles:
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
        rendered = {c.schema_file: schemagen.render_schema(c) for c in CONTRACTS}

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


class TestEveryContract:
    """``hpbench schemas`` covers every registered contract, and stale files fail."""

    def test_every_generated_schema_is_current(self, repo_root):
        """contrib/schemas and the pages match every registered model (hpbench schemas --write)."""
        stale = schemagen.stale_files(
            schemagen.registered(), repo_root / schemagen.SCHEMA_DIR, repo_root
        )

        assert [] == stale

    def test_every_schema_is_a_valid_2020_12_schema(self):
        """Each generated schema is itself a valid JSON Schema and names its own file."""
        for contract in schemagen.registered():
            schema = schemagen.schema_of(contract)
            jsonschema.Draft202012Validator.check_schema(schema)
            assert contract.schema_file == schema["$id"]

    def test_a_stale_file_is_found_and_rewritten(self, repo_root, tmp_path, capsys):
        """--check fails on a changed schema or page, --write restores both."""
        shutil.copytree(repo_root / "docs", tmp_path / "docs")
        shutil.copytree(repo_root / "contrib" / "schemas", tmp_path / "contrib" / "schemas")
        base = ["schemas", "--root", str(tmp_path)]
        assert 0 == main([*base, "--check"])
        victim = tmp_path / schemagen.SCHEMA_DIR / schemagen.registered()[-1].schema_file
        victim.write_text("{}\n")
        page = tmp_path / "docs" / "capture.md"
        page.write_text(page.read_text().replace("| `seq` |", "| `sequence` |", 1))

        assert 1 == main([*base, "--check", "--json"])
        stale = json.loads(capsys.readouterr().out.splitlines()[-1])["stale"]
        assert {str(victim), str(page)} == set(stale)
        assert 0 == main([*base, "--write"])
        assert 0 == main([*base, "--check"])

    def test_registry_refuses_what_is_not_a_contract(self, monkeypatch):
        """A registry line naming something else is refused, not skipped."""
        monkeypatch.setattr(schemagen, "REGISTRY", ("hpbench.capture.schema:DOCS_BEGIN",))

        with pytest.raises(TypeError, match="not a Contract"):
            schemagen.registered()

    def test_maps_lists_and_optional_models(self):
        """The generic builder writes maps, lists, floats and optional objects strictly."""

        contract = schemagen.Contract(schema_file="outer.schema.json", roots=(Outer,))
        validator = jsonschema.Draft202012Validator(schemagen.schema_of(contract))
        good = {"counts": {"x": 1}, "names": ["a"], "inner": None, "tier": "a"}

        assert validator.is_valid(good)
        assert validator.is_valid({**good, "inner": {"seconds": 1.5}})
        for bad in (
            {**good, "counts": {"x": "1"}},
            {**good, "names": "a"},
            {**good, "inner": {"seconds": 1, "extra": 0}},
            {**good, "tier": "c"},
            {k: v for k, v in good.items() if k != "names"},
        ):
            assert not validator.is_valid(bad), bad
        tables = schemagen.field_tables((Outer,), {})
        assert "| `counts` | map of string to integer (signed) | Counts by name. |" in tables
        assert "#### Inner" in tables
