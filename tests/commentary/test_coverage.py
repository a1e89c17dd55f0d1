"""Commentary coverage (spec 002, acceptance 5): every configured operation and
collaboration profile is accepted when met; missing messages, missing successful command
markers, missing completed item types, malformed events and unsupported modes are refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hpbench.codex.testing import StreamBuilder
from hpbench.commentary import coverage
from hpbench.errors import ContractError
from hpbench.task.manifest import CommentaryProfile, MarkerRule, MessageRule, load_manifest

OPERATION = CommentaryProfile(
    id="operation",
    version=1,
    modes=("hpatch-diagnostic", "paired"),
    arms=("hpatch",),
    messages=(MessageRule(r"^Plan:", 1), MessageRule(r"(?i)verified", 1)),
    command_markers=(MarkerRule("hpbench-note", 1),),
    item_types=("command_execution", "file_change"),
)
COLLABORATION = CommentaryProfile(
    id="collaboration",
    version=2,
    modes=("mentor-handoff",),
    arms=("mentor",),
    messages=(MessageRule(r"handed", 1),),
    item_types=("collab_tool_call",),
)


def _collab(builder: StreamBuilder) -> StreamBuilder:
    item = {"id": "c1", "type": "collab_tool_call", "tool": "spawn", "status": "completed"}
    return builder.raw(json.dumps({"type": "item.completed", "item": item}))


def _operation_stream() -> StreamBuilder:
    builder = StreamBuilder(workspace_root="/workspace").start().message("Plan: add the method")
    builder.patch(["kv/rangestream.go"]).command("echo hpbench-note: edited")
    return builder.message("Tests verified.").complete()


def _write(tmp_path: Path, builder: StreamBuilder) -> Path:
    path = tmp_path / "codex.jsonl"
    path.write_text(builder.text())
    return path


def _requirements(result: Any) -> dict[tuple[str, str], tuple[int, int]]:
    return {(r.kind, r.name): (r.minimum, r.found) for p in result.profiles for r in p.requirements}


class TestAccepted:
    def test_the_operation_profile(self, tmp_path):
        result = coverage([OPERATION], "paired", "hpatch", _write(tmp_path, _operation_stream()))
        assert result is not None
        assert (True, "read", ("operation@1",)) == (
            result.covered,
            result.stream,
            tuple(p.profile for p in result.profiles),
        )

    def test_the_collaboration_profile(self, tmp_path):
        builder = StreamBuilder().start().message("handed over to the mentor")
        result = coverage(
            [OPERATION, COLLABORATION],
            "mentor-handoff",
            "mentor",
            _write(tmp_path, _collab(builder).complete()),
        )
        assert result is not None
        assert result.covered
        assert ("collaboration@2",) == tuple(p.profile for p in result.profiles)

    def test_an_arm_or_mode_without_a_profile_has_no_coverage(self, tmp_path):
        path = _write(tmp_path, _operation_stream())
        assert coverage([OPERATION], "paired", "control", path) is None
        assert coverage([OPERATION], "ctp-only", "hpatch", path) is None


class TestRefused:
    def test_a_missing_message(self, tmp_path):
        builder = StreamBuilder().start().message("Plan: x").patch(["a.go"])
        builder.command("echo hpbench-note").complete()
        result = coverage([OPERATION], "paired", "hpatch", _write(tmp_path, builder))
        assert result is not None and not result.covered
        assert (1, 0) == _requirements(result)[("message", "(?i)verified")]

    def test_a_marker_in_a_failed_command_does_not_count(self, tmp_path):
        builder = StreamBuilder().start().message("Plan: x").message("verified").patch(["a.go"])
        builder.command("echo hpbench-note; false", exit_code=1).complete()
        result = coverage([OPERATION], "paired", "hpatch", _write(tmp_path, builder))
        assert result is not None and not result.covered
        assert (1, 0) == _requirements(result)[("command-marker", "hpbench-note")]

    def test_a_missing_completed_item_type(self, tmp_path):
        """A message claiming the work is no completed file_change."""
        builder = StreamBuilder().start().message("Plan: x").message("verified")
        builder.command("echo hpbench-note").complete()
        result = coverage([OPERATION], "paired", "hpatch", _write(tmp_path, builder))
        assert result is not None and not result.covered
        assert (1, 0) == _requirements(result)[("item-type", "file_change")]

    def test_malformed_events(self, tmp_path):
        """Every requirement met, but a line is not an event: nothing in it is trusted."""
        builder = _operation_stream().raw("{not json")
        result = coverage([OPERATION], "paired", "hpatch", _write(tmp_path, builder))
        assert result is not None
        assert (False, "malformed", 1) == (result.covered, result.stream, result.malformed_lines)
        assert not any(p.covered for p in result.profiles)

    def test_a_missing_stream(self, tmp_path):
        result = coverage([OPERATION], "paired", "hpatch", tmp_path / "codex.jsonl")
        assert result is not None
        assert (False, "missing") == (result.covered, result.stream)


PROFILE = {
    "id": "operation",
    "version": 1,
    "modes": ["paired"],
    "arms": ["hpatch"],
    "messages": [{"pattern": "^Plan:"}],
}


def _toml(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


@pytest.mark.parametrize(
    ("change", "text"),
    [
        ({"modes": ["paired", "sideways"]}, "unsupported mode(s) sideways"),
        ({"modes": ["preparation-only"]}, "unsupported mode(s) preparation-only"),
        ({"arms": ["treatment"]}, "unsupported arm(s) treatment"),
        ({"messages": [{"pattern": "(unclosed"}]}, "not a regular expression"),
        ({"messages": [{"pattern": "x", "minimum": 0}]}, "minimum"),
        ({"messages": [], "item_types": ["hologram"]}, "item_types"),
        ({"messages": []}, "requires nothing"),
        ({"version": 0}, "version"),
        ({"colour": "blue"}, "unknown field(s): colour"),
    ],
)
def test_a_malformed_profile_is_refused_by_the_manifest(
    task_copy: Path, change: dict[str, Any], text: str
) -> None:
    manifest = task_copy / "task.toml"
    profile = {**PROFILE, **change}
    body = "\n".join(f"{k} = {_toml(v)}" for k, v in profile.items())
    manifest.write_text(manifest.read_text() + f"\n[[commentary.profiles]]\n{body}\n")
    with pytest.raises(ContractError) as caught:
        load_manifest(task_copy)
    messages = " ".join(f"{f.field} {f.message}" for f in caught.value.findings)
    assert text in messages
    assert all(f.field and f.field.startswith("$.commentary") for f in caught.value.findings)


def test_a_profile_declared_twice_is_refused(task_copy: Path) -> None:
    manifest = task_copy / "task.toml"
    body = "\n".join(f"{k} = {_toml(v)}" for k, v in PROFILE.items())
    twice = f"\n[[commentary.profiles]]\n{body}\n" * 2
    manifest.write_text(manifest.read_text() + twice)
    with pytest.raises(ContractError, match="declared twice: operation@1"):
        load_manifest(task_copy)


def test_a_good_profile_loads(task_copy: Path) -> None:
    manifest = task_copy / "task.toml"
    body = "\n".join(f"{k} = {_toml(v)}" for k, v in PROFILE.items())
    manifest.write_text(manifest.read_text() + f"\n[[commentary.profiles]]\n{body}\n")
    (profile,) = load_manifest(task_copy).manifest.commentary.profiles
    assert ("operation", ("paired",), 1) == (profile.id, profile.modes, profile.messages[0].minimum)
