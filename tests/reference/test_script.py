"""Replay scripts: the format is strict, and every shipped script loads."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hpbench import schemagen
from hpbench.errors import ContractError
from hpbench.reference._render import render_step
from hpbench.reference.script import CONTRACT, FaultKind, ItemType, load_script, parse_script

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(
    [
        *(ROOT / "tests" / "data" / "replay").glob("*.json"),
        *(ROOT / "tests" / "data" / "e2e").glob("*/*.json"),
        *ROOT.glob("tasks/*/replay/*.json"),
    ]
)
SCHEMA_FILE = ROOT / "contrib" / "schemas" / "hpbench.replay.v1.schema.json"

VALID: dict[str, Any] = {
    "schema_version": 1,
    "name": "t",
    "steps": [
        {"output": [{"type": "exec_command", "cmd": "ls", "workdir": "/w"}]},
        {"output": [{"type": "message", "text": "done"}], "faults": [{"kind": "drop"}]},
    ],
}


def fields(error: ContractError) -> set[str | None]:
    return {finding.field for finding in error.findings}


def changed(path: list[str | int], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(VALID)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


class TestParse:
    def test_valid(self):
        """A valid script structures into typed steps with default fault fields."""
        script = parse_script(VALID)
        assert ItemType.EXEC_COMMAND == script.steps[0].output[0].type
        fault = script.steps[1].faults[0]
        assert (FaultKind.DROP, 1) == (fault.kind, fault.after_events)
        assert script.turn_state

    @pytest.mark.parametrize(
        ("path", "value", "field"),
        [
            (["schema_version"], 2, "$.schema_version"),
            (["steps"], [], "$.steps"),
            (["steps", 0, "output"], [], "$.steps[0].output"),
            (["steps", 0, "output", 0, "type"], "shell", "$.steps[0].output[0].type"),
            (["steps", 0, "output", 0, "patch"], "x", "$.steps[0].output[0]"),
            (["steps", 1, "faults", 0, "kind"], "http_418", "$.steps[1].faults[0].kind"),
            (["steps", 1, "faults", 0, "seconds"], -1, "$.steps[1].faults[0]"),
            (["steps", 1, "surprise"], True, "$.steps[1]"),
        ],
    )
    def test_refused(self, path: list[str | int], value: Any, field: str):
        """Each mistake is a finding at its field."""
        with pytest.raises(ContractError) as caught:
            parse_script(changed(path, value))
        assert any(f is not None and f.startswith(field) for f in fields(caught.value))

    def test_two_tool_calls_in_one_step_refused(self):
        """Codex would run them concurrently; a script may not ask for that."""
        data = changed(
            ["steps", 0, "output"],
            [{"type": "exec_command", "cmd": "a"}, {"type": "apply_patch", "patch": "p"}],
        )
        with pytest.raises(ContractError, match="at most one tool call"):
            parse_script(data)

    def test_missing_required_field(self):
        """An item without its required field names it."""
        with pytest.raises(ContractError, match="apply_patch needs patch"):
            parse_script(changed(["steps", 0, "output"], [{"type": "apply_patch"}]))

    def test_function_call_arguments_must_be_json(self):
        """function_call arguments are JSON text, as on the wire."""
        bad = [{"type": "function_call", "name": "f", "arguments": "{nope"}]
        with pytest.raises(ContractError, match="JSON text"):
            parse_script(changed(["steps", 0, "output"], bad))

    @pytest.mark.parametrize(
        ("item", "last", "text"),
        [
            (
                {"type": "exec_command", "cmd": "go test", "expect_exit_code": 256},
                False,
                "0 to 255",
            ),
            ({"type": "exec_command", "cmd": "go test", "expect_exit_code": -1}, False, "0 to 255"),
            ({"type": "apply_patch", "patch": "p", "expect_exit_code": 0}, False, "does not take"),
            ({"type": "exec_command", "cmd": "go test", "expect_exit_code": 0}, True, "later step"),
        ],
    )
    def test_expect_exit_code_refused(self, item: dict[str, Any], last: bool, text: str):
        """expect_exit_code is an exit status, on exec_command only, and needs a next step
        (the exit code arrives with the next request)."""
        data = changed(["steps", 1 if last else 0, "output"], [item])
        with pytest.raises(ContractError, match=text):
            parse_script(data)

    def test_expect_exit_code_must_be_an_integer(self):
        """true is not an exit status."""
        with pytest.raises(ContractError):
            parse_script(changed(["steps", 0, "output", 0, "expect_exit_code"], True))

    def test_not_json(self, tmp_path: Path):
        """A file that is not JSON is a finding, not a traceback."""
        path = tmp_path / "s.json"
        path.write_text("{")
        with pytest.raises(ContractError, match="not JSON"):
            load_script(path)


class TestRender:
    def test_wire_items(self):
        """exec_command is a function_call; apply_patch a custom_tool_call; ids name the step."""
        script = parse_script(
            changed(
                ["steps", 0, "output"],
                [
                    {"type": "reasoning", "text": "r"},
                    {"type": "apply_patch", "patch": "*** Begin Patch\n*** End Patch"},
                ],
            )
        )
        reasoning, patch = render_step(script.steps[0], 0)
        assert {"type": "summary_text", "text": "r"} == reasoning["summary"][0]
        assert ("custom_tool_call", "apply_patch", "call_0_1") == (
            patch["type"],
            patch["name"],
            patch["call_id"],
        )
        (call,) = render_step(parse_script(VALID).steps[0], 3)
        assert "function_call" == call["type"]
        assert {"cmd": "ls", "workdir": "/w"} == json.loads(call["arguments"])
        assert "fc_3_0" == call["id"]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def schema_errors(validator: jsonschema.Draft202012Validator, value: Any) -> list[str]:
    return [f"{error.json_path}: {error.message}" for error in validator.iter_errors(value)]


def test_shipped_scripts_are_found():
    """The list below covers the suite's scripts, the e2e scenarios' and each task's."""
    names = {path.relative_to(ROOT).parts[:3] for path in SHIPPED}
    assert ("tests", "data", "replay") in names
    assert ("tests", "data", "e2e") in names
    assert any(path.parts[-2] == "replay" and "tasks" in path.parts for path in SHIPPED)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_scripts_load(path: Path, validator: jsonschema.Draft202012Validator):
    """Every script in tests/data/replay, tests/data/e2e and tasks/*/replay is valid: it loads,
    and it is valid against the published schema."""
    assert load_script(path).steps
    assert [] == schema_errors(validator, json.loads(path.read_text(encoding="utf-8")))


class TestSchema:
    def test_schema_is_generated_from_the_model(self):
        """The file is exactly what the model generates (hpbench schemas --write)."""
        assert schemagen.schema_of(CONTRACT) == json.loads(SCHEMA_FILE.read_text("utf-8"))

    def test_defaulted_fields_may_be_left_out(self, validator: jsonschema.Draft202012Validator):
        """A script names only what it needs: defaults are optional, the rest required."""
        assert [] == schema_errors(validator, VALID)
        for key in ("schema_version", "name", "steps"):
            missing = {k: v for k, v in VALID.items() if k != key}
            assert [f"$: '{key}' is a required property"] == schema_errors(validator, missing)
        step = changed(["steps", 0], {"faults": []})
        assert ["$.steps[0]: 'output' is a required property"] == schema_errors(validator, step)

    @pytest.mark.parametrize(
        ("path", "value", "where"),
        [
            (["schema_version"], 2, "$.schema_version"),
            (["name"], None, "$.name"),
            (["turn_state"], "yes", "$.turn_state"),
            (["surprise"], 1, "$"),
            (["steps", 1, "surprise"], True, "$.steps[1]"),
            (["steps", 0, "output", 0, "type"], "shell", "$.steps[0].output[0].type"),
            (["steps", 0, "output", 0, "expect_exit_code"], 256, "$.steps[0].output[0]"),
            (["steps", 0, "output", 0, "expect_exit_code"], -1, "$.steps[0].output[0]"),
            (["steps", 0, "output", 0, "expect_exit_code"], True, "$.steps[0].output[0]"),
            (["steps", 0, "output", 0, "yield_time_ms"], 1.5, "$.steps[0].output[0]"),
            (["steps", 1, "faults", 0, "kind"], "http_418", "$.steps[1].faults[0].kind"),
            (["steps", 1, "faults", 0, "seconds"], -1, "$.steps[1].faults[0].seconds"),
            (["steps", 1, "faults", 0, "after_events"], -1, "$.steps[1].faults[0].after_events"),
            (["steps", 1, "faults", 0, "retry_after_seconds"], -0.5, "$.steps[1].faults[0]"),
        ],
    )
    def test_schema_refuses_what_loading_refuses(
        self,
        validator: jsonschema.Draft202012Validator,
        path: list[str | int],
        value: Any,
        where: str,
    ):
        """Each damage the schema refuses at its place, loading refuses too."""
        data = changed(path, value)
        assert any(error.startswith(where) for error in schema_errors(validator, data))
        with pytest.raises(ContractError):
            parse_script(data)
