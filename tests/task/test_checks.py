"""``hpbench task validate`` beyond the manifest: each rule a task author must follow,
fed the task that breaks it (a copy of kv-rangestream), and refused by name."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hpbench.task.checks import task_findings
from hpbench.task.manifest import load_manifest

from ..conftest import HPBENCH, TASKS_DIR, run

RULE = (TASKS_DIR.parent / "contrib" / "codex" / "offline-isolation-rule.md").read_text()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _no_rule(task: Path) -> None:
    _edit(task / "prompt.md", RULE.strip(), "Work as you see fit.")


def _names_a_hidden_test(task: Path) -> None:
    _edit(
        task / "prompt.md", "It must behave as follows.", "TestRangeStreamPinsRevision checks it."
    )


def _names_the_hidden_file(task: Path) -> None:
    _edit(task / "prompt.md", "It must behave as follows.", "See kv/rangestream_hidden_test.go.")


def _allows_more(task: Path) -> None:
    _edit(task / "task.toml", '"kv/store.go"]', '"kv/store.go", "kv/other.go"]')


def _allows_less(task: Path) -> None:
    _edit(task / "task.toml", ', "kv/store.go"]', "]")
    shutil.rmtree(task / "gating")  # its store-less blind edit is no longer the question
    _edit(task / "task.toml", "[gating]\n", "")
    _edit(task / "task.toml", 'blind = "gating/blind"\n', "")


def _hidden_on_a_visible_file(task: Path) -> None:
    (task / "hidden" / "README.md").write_text("planted\n")
    _edit(
        task / "task.toml",
        'files = ["kv/rangestream_hidden_test.go"]',
        'files = ["kv/rangestream_hidden_test.go", "README.md"]',
    )


def _no_blind_edit(task: Path) -> None:
    _edit(task / "task.toml", "[gating]\n", "")
    _edit(task / "task.toml", 'blind = "gating/blind"\n', "")


def _one_replay_script(task: Path) -> None:
    (task / "replay" / "hpatch.json").unlink()


def _a_broken_replay_script(task: Path) -> None:
    document = json.loads((task / "replay" / "control.json").read_text())
    document["steps"][0]["output"][1]["type"] = "teleport"
    (task / "replay" / "control.json").write_text(json.dumps(document))


CASES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "a prompt without the isolation rule": (_no_rule, "task.prompt.isolation_rule", "verbatim"),
    "a prompt naming a hidden test": (
        _names_a_hidden_test,
        "task.prompt.leak",
        "'TestRangeStreamPinsRevision'",
    ),
    "a prompt naming the hidden file": (
        _names_the_hidden_file,
        "task.prompt.leak",
        "'kv/rangestream_hidden_test.go'",
    ),
    "an allowed path the oracle leaves alone": (
        _allows_more,
        "task.paths.allowed",
        "kv/other.go is allowed but the oracle does not change it",
    ),
    "an oracle path that is not allowed": (
        _allows_less,
        "task.paths.allowed",
        "kv/store.go is changed by the oracle but not allowed",
    ),
    "a hidden file over a visible one": (
        _hidden_on_a_visible_file,
        "task.grader.files",
        "hidden file README.md would replace the base's visible file",
    ),
    "a correctness task without its blind edit": (
        _no_blind_edit,
        "task.gating.missing",
        "[gating] blind",
    ),
    "one replay script of two": (_one_replay_script, "task.replay.missing", "replay/hpatch.json"),
    "a replay script that does not load": (_a_broken_replay_script, "replay", "teleport"),
}


@pytest.mark.parametrize(("plant", "code", "text"), list(CASES.values()), ids=list(CASES))
def test_refused_by_name(
    tmp_path: Path, plant: Callable[[Path], None], code: str, text: str
) -> None:
    task_dir = tmp_path / "tasks" / "kv-rangestream"
    shutil.copytree(TASKS_DIR / "kv-rangestream", task_dir)
    plant(task_dir)
    findings = task_findings(load_manifest(task_dir))
    matching = [f for f in findings if code in f.code and text in f.message]
    assert matching, [str(f) for f in findings]


def test_every_shipped_task_is_sound() -> None:
    for task_dir in sorted(p for p in TASKS_DIR.iterdir() if p.is_dir()):
        assert [] == task_findings(load_manifest(task_dir)), task_dir.name


def test_the_command_refuses_with_every_finding(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS_DIR / "kv-rangestream", tasks / "kv-rangestream")
    _no_rule(tasks / "kv-rangestream")
    _no_blind_edit(tasks / "kv-rangestream")
    done = run([str(HPBENCH), "task", "--tasks-dir", str(tasks), "validate", "kv-rangestream"])
    assert 1 == done.returncode
    assert "offline-isolation rule" in done.stderr
    assert "[gating] blind" in done.stderr
    good = run([str(HPBENCH), "task", "validate", "kv-rangestream"])
    assert 0 == good.returncode, good.stderr
