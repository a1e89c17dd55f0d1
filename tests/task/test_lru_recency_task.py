"""The lru-recency task: a bug fix in a small LRU cache, bundled and offline.

Proven here: the manifest loads and says what the task means; the bundled sources build
the declared revisions; the allowed paths are exactly the files the oracle fix changes;
the prompt names no hidden test and not the discriminator; and, with a local Go
toolchain, the hidden grader's verdicts: the base fails for the manifest's reason, the
oracle passes every named test, and the blind edit and the partial fixes fail. Last, each
arm's replay script fixes the bug through the real Codex CLI (the host-side twin of the
offline demo).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.go_tests import declared_tests
from hpbench.task.history import BuiltHistory, build_history
from hpbench.task.manifest import GraderKind, OracleTier, SourceKind, Task, load_manifest

from ..conftest import HPBENCH, run
from .replay import changed_paths, replay

REPO_ROOT = Path(__file__).resolve().parents[2]
TASK_ID = "lru-recency"
TASK_DIR = REPO_ROOT / "tasks" / TASK_ID
SNAPSHOT = REPO_ROOT / "benchmarks" / "libexec" / "bench-snapshot"
BASE = "d49253f14b6998e5787edd509c2aed30e0434949"
ORACLE = "7c00a8c69a176a447bfde9cc0a49ea4755240ffe"
ALLOWED = ("lru/cache.go", "lru/list.go")
HIDDEN = "lru/recency_hidden_test.go"
PACKAGE = "lrucache.example/cache/lru"
REQUIRED = (
    "TestGetOfLeastRecentlyUsedEntryKeepsIt",
    "TestPutOfCachedKeyRefreshesIt",
    "TestPeekLeavesOrderAlone",
    "TestRandomOperationsMatchModel",
)
DISCRIMINATOR = "which Get had just read"
ALL_PASS = dict.fromkeys(REQUIRED, "pass")


@pytest.fixture(scope="module")
def task() -> Task:
    return load_manifest(TASK_DIR)


@pytest.fixture(scope="module")
def built(task: Task, tmp_path_factory: pytest.TempPathFactory) -> BuiltHistory:
    return build_history(task, tmp_path_factory.mktemp("task") / "repo")


class TestManifest:
    def test_validates(self) -> None:
        """``hpbench task validate`` accepts the task."""
        checked = run([str(HPBENCH), "task", "validate", TASK_ID])
        assert 0 == checked.returncode, checked.stdout + checked.stderr
        assert "valid" in checked.stdout

    def test_declares_a_bundled_correctness_task(self, task: Task) -> None:
        manifest = task.manifest
        assert TASK_ID == manifest.id
        assert OracleTier.CORRECTNESS is manifest.oracle_tier
        assert SourceKind.BUNDLED is manifest.source.kind
        assert (BASE, ORACLE) == (manifest.source.base_revision, manifest.source.oracle_revision)
        assert ALLOWED == manifest.paths.allowed
        assert "1.24.11" == manifest.runtime.go_version
        assert ("lrucache.example/cache",) == manifest.runtime.owned_module_prefixes

    def test_the_grader_names_every_hidden_test(self, task: Task) -> None:
        grader = task.manifest.grader
        assert GraderKind.GO_TEST is grader.kind
        assert (HIDDEN,) == grader.files
        assert DISCRIMINATOR == grader.base_discriminator
        assert {PACKAGE: REQUIRED} == {k: tuple(v) for k, v in grader.required_tests.items()}
        declared = declared_tests([(HIDDEN, TASK_DIR / "hidden" / HIDDEN)])
        assert {"lru": set(REQUIRED)} == declared

    def test_the_module_needs_nothing_from_outside(self) -> None:
        """No require lines: grading needs no module cache, and Go 1.19 semantics."""
        go_mod = (TASK_DIR / "source" / "base" / "go.mod").read_text()
        assert "require" not in go_mod
        assert "module lrucache.example/cache\n\ngo 1.19\n" == go_mod

    def test_the_blind_edit_is_allowed_paths_only(self, task: Task) -> None:
        assert task.manifest.gating is not None
        blind = TASK_DIR / task.manifest.gating.blind
        files = sorted(p.relative_to(blind).as_posix() for p in blind.rglob("*") if p.is_file())
        assert ["lru/cache.go"] == files
        assert set(files) <= set(ALLOWED)


class TestPrompt:
    def test_hides_the_grader(self, task: Task) -> None:
        """The prompt names no hidden test or file, and not the base's failure message."""
        prompt = task.prompt_path.read_text()
        for secret in (*REQUIRED, DISCRIMINATOR, Path(HIDDEN).name, "recency_hidden"):
            assert secret not in prompt, secret

    def test_states_where_the_fix_goes(self, task: Task) -> None:
        """An attempt may change only the allowed paths, so the prompt says which they are."""
        prompt = task.prompt_path.read_text()
        for path in ALLOWED:
            assert f"`{path}`" in prompt


class TestHistory:
    def test_builds_the_declared_revisions(self, built: BuiltHistory) -> None:
        assert (BASE, ORACLE) == (built.base_revision, built.oracle_revision)

    def test_the_oracle_changes_exactly_the_allowed_paths(self, built: BuiltHistory) -> None:
        changed = subprocess.run(
            ["git", "-C", str(built.repository), "diff", "--name-only", BASE, ORACLE],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert list(ALLOWED) == sorted(changed)


def checkout(built: BuiltHistory, revision: str, out: Path) -> Path:
    """A history-free work tree of ``revision``."""
    made = subprocess.run(
        [str(SNAPSHOT), str(built.repository), revision, str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert 0 == made.returncode, made.stderr
    return out


def go_env() -> dict[str, str]:
    return {
        **os.environ,
        "GOPROXY": "off",
        "GOSUMDB": "off",
        "GOTOOLCHAIN": "local",
        "GOVCS": "*:off",
        "GOFLAGS": "-mod=mod",
    }


def grade(task: Task, workspace: Path) -> subprocess.CompletedProcess[str]:
    """Inject the hidden files into ``workspace`` and run the grader command offline."""
    for name, path in task.grader_file_paths():
        target = workspace / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return subprocess.run(
        list(task.manifest.grader.command),
        cwd=workspace,
        capture_output=True,
        text=True,
        env=go_env(),
        timeout=task.manifest.grader.timeout_seconds,
        check=False,
    )


def outcomes(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """Each top-level test's final action (pass, fail, skip) in the ``go test -json`` stream."""
    seen: dict[str, str] = {}
    for line in result.stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        test = event.get("Test")
        if test and "/" not in test and event.get("Action") in ("pass", "fail", "skip"):
            assert PACKAGE == event["Package"]
            seen[test] = event["Action"]
    return seen


def required(result: subprocess.CompletedProcess[str]) -> dict[str, str | None]:
    """The required tests' outcomes (None: the test never reported one)."""
    seen = outcomes(result)
    return {test: seen.get(test) for test in REQUIRED}


def overlay(workspace: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (workspace / name).write_text(text)
    return workspace


def source(kind: str, name: str) -> str:
    return (TASK_DIR / "source" / kind / name).read_text()


@pytest.mark.go
class TestGrader:
    def test_visible_tests_pass_on_base(self, built: BuiltHistory, tmp_path: Path) -> None:
        """The base compiles, vets and passes its visible tests: the bug is untested."""
        workspace = checkout(built, BASE, tmp_path / "base")
        for command in (["go", "vet", "./..."], ["go", "test", "-count=1", "./..."]):
            result = subprocess.run(
                command, cwd=workspace, capture_output=True, text=True, env=go_env(), check=False
            )
            assert 0 == result.returncode, result.stdout + result.stderr

    def test_oracle_passes_every_required_test(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        result = grade(task, checkout(built, ORACLE, tmp_path / "oracle"))
        assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
        assert ALL_PASS == required(result)
        assert DISCRIMINATOR not in result.stdout + result.stderr

    def test_base_fails_with_the_discriminator(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """The base compiles against the hidden tests and fails them on behaviour."""
        result = grade(task, checkout(built, BASE, tmp_path / "base"))
        assert 0 != result.returncode
        assert DISCRIMINATOR in result.stdout
        seen = required(result)
        assert "fail" == seen["TestGetOfLeastRecentlyUsedEntryKeepsIt"]
        assert "fail" == seen["TestPutOfCachedKeyRefreshesIt"]

    def test_blind_edit_fails(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """Get re-linking its entry by hand passes the reproduction and fails the rest, on a
        test of its own (not with the base's message)."""
        assert task.manifest.gating is not None
        workspace = checkout(built, BASE, tmp_path / "blind")
        shutil.copytree(TASK_DIR / task.manifest.gating.blind, workspace, dirs_exist_ok=True)
        result = grade(task, workspace)
        assert 0 != result.returncode
        assert DISCRIMINATOR not in result.stdout
        seen = outcomes(result)
        assert "pass" == seen["TestGetOfLeastRecentlyUsedEntryKeepsIt"]
        assert "fail" == seen["TestPutOfCachedKeyRefreshesIt"]

    def test_list_fix_alone_fails(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """Fixing the list's tail but not Put leaves refreshed entries to be evicted."""
        workspace = overlay(
            checkout(built, BASE, tmp_path / "list"),
            {"lru/list.go": source("oracle", "lru/list.go")},
        )
        seen = outcomes(grade(task, workspace))
        assert "pass" == seen["TestGetOfLeastRecentlyUsedEntryKeepsIt"]
        assert "fail" == seen["TestPutOfCachedKeyRefreshesIt"]
        assert "fail" == seen["TestRandomOperationsMatchModel"]

    def test_put_fix_alone_fails(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """Refreshing on Put through the broken list still evicts the entry just used."""
        workspace = overlay(
            checkout(built, BASE, tmp_path / "put"),
            {"lru/cache.go": source("oracle", "lru/cache.go")},
        )
        result = grade(task, workspace)
        seen = outcomes(result)
        assert "fail" == seen["TestGetOfLeastRecentlyUsedEntryKeepsIt"]
        assert "fail" == seen["TestRandomOperationsMatchModel"]

    def test_a_different_correct_fix_passes(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """The grader checks behaviour, not the oracle's code: re-linking entries in the cache
        (the list untouched) fixes both causes and passes."""
        cache = source("base", "lru/cache.go")
        fixed = cache.replace(
            "\tc.order.moveToFront(e)\n\treturn e.value, true",
            "\tc.order.remove(e)\n\tc.order.pushFront(e)\n\treturn e.value, true",
        ).replace(
            "\t\te.value = value\n\t\treturn",
            "\t\te.value = value\n\t\tc.order.remove(e)\n\t\tc.order.pushFront(e)\n\t\treturn",
        )
        assert fixed.count("c.order.pushFront(e)") == 3
        workspace = overlay(checkout(built, BASE, tmp_path / "relink"), {"lru/cache.go": fixed})
        result = grade(task, workspace)
        assert 0 == result.returncode, result.stdout[-3000:]
        assert ALL_PASS == required(result)


@pytest.mark.codex
@pytest.mark.go
@pytest.mark.parametrize("arm", ["control", "hpatch"])
def test_replay_solves_task(task: Task, arm: str, tmp_path: Path) -> None:
    """The arm's replay, driving the real Codex through the reference router, changes exactly
    the allowed paths and passes the hidden grader, with no loop and a valid capture."""
    workspace = replay(task, arm, tmp_path)

    assert list(ALLOWED) == changed_paths(workspace)
    for path in ALLOWED:
        assert source("oracle", path) == (workspace / path).read_text(), path

    graded = tmp_path / "graded"
    shutil.copytree(workspace, graded, ignore=shutil.ignore_patterns(".git"))
    result = grade(task, graded)
    assert 0 == result.returncode, result.stdout[-2000:]
    assert ALL_PASS == required(result)
