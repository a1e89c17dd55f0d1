"""The notify-message-api task: a cross-file refactor with an API change.

Its manifest loads and is valid, its bundled sources build the declared revisions,
the oracle changes exactly the allowed paths across several packages, and the prompt
names no hidden test. The hidden grader, run on the host with a local Go toolchain,
fails on the base for the discriminator's reason, passes every named test on the
oracle, and fails the blind edit. Each arm's replay script, driven through the real
Codex CLI, solves the task.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.go_tests import declared_tests
from hpbench.task.history import BuiltHistory, build_history
from hpbench.task.manifest import GraderKind, OracleTier, SourceKind, Task, load_manifest

from .replay import changed_paths, replay

REPO_ROOT = Path(__file__).resolve().parents[2]
TASK_ID = "notify-message-api"
TASK_DIR = REPO_ROOT / "tasks" / TASK_ID
BASE = "a0885d460c946cd3402606c58b3dcdd1d91e75e4"
ORACLE = "f8d821da337a18b0f8f249babd1f4fbd04ba420b"
ALLOWED = (
    "alert/alert.go",
    "cmd/opsnotify/main.go",
    "digest/digest.go",
    "notify/message.go",
    "notify/notify.go",
    "notify/transport.go",
)
MODULE = "notify.example/ops"
GO_ENV = {
    "GOPROXY": "off",
    "GOSUMDB": "off",
    "GOTOOLCHAIN": "local",
    "GOVCS": "*:off",
    "GOFLAGS": "-mod=mod",
}


@pytest.fixture(scope="module")
def task() -> Task:
    return load_manifest(TASK_DIR)


@pytest.fixture(scope="module")
def built(task: Task, tmp_path_factory: pytest.TempPathFactory) -> BuiltHistory:
    return build_history(task, tmp_path_factory.mktemp("task") / "repo")


def git(repository: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repository, capture_output=True, text=True, check=True
    ).stdout


def checkout(built: BuiltHistory, revision: str, out: Path) -> Path:
    """A plain copy of ``revision``'s tree at ``out``, with no git metadata."""
    out.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(built.repository), "archive", "--format=tar", revision],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def overlay(source: Path, workspace: Path) -> None:
    for path in source.rglob("*"):
        if path.is_file():
            target = workspace / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


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
        env={**os.environ, **GO_ENV},
        timeout=task.manifest.grader.timeout_seconds,
        check=False,
    )


def verdicts(result: subprocess.CompletedProcess[str]) -> dict[tuple[str, str], str]:
    """Each top-level test's final action (pass, fail, skip) by (package, test)."""
    out: dict[tuple[str, str], str] = {}
    for line in result.stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        test = event.get("Test")
        if test and "/" not in test and event.get("Action") in {"pass", "fail", "skip"}:
            out[(event["Package"], test)] = event["Action"]
    return out


def required(task: Task) -> set[tuple[str, str]]:
    return {
        (package, name)
        for package, names in task.manifest.grader.required_tests.items()
        for name in names
    }


class TestManifest:
    def test_bundled_correctness_task(self, task: Task) -> None:
        manifest = task.manifest
        assert TASK_ID == manifest.id
        assert OracleTier.CORRECTNESS is manifest.oracle_tier
        assert SourceKind.BUNDLED is manifest.source.kind
        assert (BASE, ORACLE) == (manifest.source.base_revision, manifest.source.oracle_revision)
        assert "1.24.11" == manifest.runtime.go_version
        assert (MODULE,) == manifest.runtime.owned_module_prefixes
        assert task.prompt_path.is_file()

    def test_allowed_paths_are_production_files(self, task: Task) -> None:
        assert ALLOWED == task.manifest.paths.allowed
        assert not any(path.endswith("_test.go") for path in ALLOWED)

    def test_every_hidden_test_is_required(self, task: Task) -> None:
        """The grader names every hidden test, in three packages of the module."""
        grader = task.manifest.grader
        assert GraderKind.GO_TEST is grader.kind
        assert "undefined: notify.Message" == grader.base_discriminator
        declared = declared_tests(task.grader_file_paths())
        by_package = {f"{MODULE}/{directory}": names for directory, names in declared.items()}
        assert by_package == {
            package: set(names) for package, names in grader.required_tests.items()
        }
        assert {f"{MODULE}/notify", f"{MODULE}/alert", f"{MODULE}/digest"} == set(by_package)

    def test_module_has_no_dependencies(self) -> None:
        go_mod = (TASK_DIR / "source" / "base" / "go.mod").read_text()
        assert f"module {MODULE}\n" in go_mod
        assert re.search(r"^go 1\.19$", go_mod, re.MULTILINE)
        assert "require" not in go_mod

    def test_blind_edit_holds_allowed_paths_only(self, task: Task) -> None:
        gating = task.manifest.gating
        assert gating is not None
        root = TASK_DIR / gating.blind
        files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
        assert files
        assert files <= set(ALLOWED)


class TestPrompt:
    def test_names_no_hidden_test_or_file(self, task: Task) -> None:
        prompt = task.prompt_path.read_text()
        for _, name in required(task):
            assert name not in prompt
        for name in task.manifest.grader.files:
            assert Path(name).name not in prompt
        assert "hidden_test" not in prompt

    def test_states_the_new_api(self, task: Task) -> None:
        prompt = task.prompt_path.read_text()
        for text in (
            "func (n *Notifier) Send(ctx context.Context, msg Message) error",
            "func New(t Transport, opts ...Option) *Notifier",
            "func WithSubjectPrefix(prefix string) Option",
            "Deliver(ctx context.Context, msg Message) error",
            "func (m *Monitor) Observe(ctx context.Context, metric string, value float64) error",
            "func (d *Digest) Flush(ctx context.Context, n *notify.Notifier) error",
        ):
            assert text in prompt
        for path in ALLOWED:
            assert f"`{path}`" in prompt


class TestHistory:
    def test_builds_the_declared_revisions(self, task: Task, built: BuiltHistory) -> None:
        assert (BASE, ORACLE) == (built.base_revision, built.oracle_revision)
        assert ORACLE == git(built.repository, "rev-parse", "HEAD").strip()
        assert BASE == git(built.repository, "rev-parse", "HEAD~1").strip()

    def test_oracle_changes_exactly_the_allowed_paths(self, built: BuiltHistory) -> None:
        """A cross-file change: six files in four packages, one of them new."""
        changed = git(
            built.repository, "diff", "--name-status", built.base_revision, built.oracle_revision
        ).splitlines()
        status = {path: state for state, path in (line.split("\t") for line in changed)}
        assert set(ALLOWED) == set(status)
        assert "A" == status["notify/message.go"]
        assert {path.rsplit("/", 1)[0] for path in ALLOWED} >= {"notify", "alert", "digest"}


@pytest.mark.go
class TestGrading:
    def test_visible_checks_pass_on_base(self, built: BuiltHistory, tmp_path: Path) -> None:
        """The base is gofmt-clean, vets and passes its visible tests: it starts green."""
        self._green(checkout(built, built.base_revision, tmp_path / "base"))

    def test_visible_checks_pass_on_oracle(self, built: BuiltHistory, tmp_path: Path) -> None:
        """The oracle keeps the visible tests, unchanged, passing."""
        self._green(checkout(built, built.oracle_revision, tmp_path / "oracle"))

    @staticmethod
    def _green(workspace: Path) -> None:
        env = {**os.environ, **GO_ENV}
        unformatted = subprocess.run(
            ["gofmt", "-l", "."], cwd=workspace, capture_output=True, text=True, check=True
        )
        assert "" == unformatted.stdout
        for command in (["go", "vet", "./..."], ["go", "test", "-count=1", "./..."]):
            result = subprocess.run(
                command, cwd=workspace, capture_output=True, text=True, env=env, check=False
            )
            assert 0 == result.returncode, result.stdout + result.stderr

    def test_base_fails_with_the_discriminator(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """On base the hidden tests do not compile: the message type is missing."""
        result = grade(task, checkout(built, built.base_revision, tmp_path / "base"))
        assert 0 != result.returncode
        assert task.manifest.grader.base_discriminator in result.stdout + result.stderr
        assert not any(v == "pass" for k, v in verdicts(result).items() if k in required(task))

    def test_oracle_passes_every_required_test(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        result = grade(task, checkout(built, built.oracle_revision, tmp_path / "oracle"))
        assert 0 == result.returncode, result.stdout[-3000:] + result.stderr[-3000:]
        seen = verdicts(result)
        assert dict.fromkeys(required(task), "pass") == {
            key: seen.get(key) for key in required(task)
        }

    def test_blind_edit_compiles_and_fails(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """The blind edit has the whole new API, so the hidden tests build, but the
        prefix still lands on the body and alerts keep their old text and priority."""
        gating = task.manifest.gating
        assert gating is not None
        workspace = checkout(built, built.base_revision, tmp_path / "blind")
        overlay(TASK_DIR / gating.blind, workspace)
        result = grade(task, workspace)
        assert 0 != result.returncode
        assert task.manifest.grader.base_discriminator not in result.stdout + result.stderr
        seen = verdicts(result)
        failed = {key for key in required(task) if seen.get(key) == "fail"}
        assert {
            (f"{MODULE}/notify", "TestPrefixGoesOnSubjectOnly"),
            (f"{MODULE}/alert", "TestFiringIsUrgent"),
        } <= failed
        assert all(key in seen for key in required(task))

    def test_no_op_fails_with_the_discriminator(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """An attempt that only touches a comment fails for the discriminator's reason."""
        workspace = checkout(built, built.base_revision, tmp_path / "noop")
        notify_go = workspace / "notify" / "notify.go"
        notify_go.write_text(notify_go.read_text() + "\n// looked at it\n")
        result = grade(task, workspace)
        assert 0 != result.returncode
        assert task.manifest.grader.base_discriminator in result.stdout + result.stderr

    def test_old_signatures_kept_beside_new_ones_fail(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """Callers left on the old API cannot build: the oracle's notify package with the
        base's alert and digest fails to compile the callers' hidden tests."""
        workspace = checkout(built, built.base_revision, tmp_path / "half")
        overlay(TASK_DIR / "source" / "oracle" / "notify", workspace / "notify")
        result = grade(task, workspace)
        assert 0 != result.returncode
        seen = verdicts(result)
        for test in task.manifest.grader.required_tests[f"{MODULE}/alert"]:
            assert "pass" != seen.get((f"{MODULE}/alert", test))


@pytest.mark.codex
@pytest.mark.go
@pytest.mark.parametrize("arm", ["control", "hpatch"])
def test_replay_solves_task(arm: str, task: Task, tmp_path: Path) -> None:
    """The arm's replay script, driven through the real Codex CLI and the reference
    router in the arm's mode, changes exactly the allowed paths and passes the hidden
    grader, with no same-path loop and a valid capture."""
    workspace = replay(task, arm, tmp_path)

    assert sorted(ALLOWED) == changed_paths(workspace)
    for path in ALLOWED:
        oracle = TASK_DIR / "source" / "oracle" / path
        assert oracle.read_text() == (workspace / path).read_text(), path

    graded = tmp_path / "graded"
    shutil.copytree(workspace, graded, ignore=shutil.ignore_patterns(".git"))
    result = grade(task, graded)
    assert 0 == result.returncode, result.stdout[-2000:]
    seen = verdicts(result)
    assert all("pass" == seen.get(key) for key in required(task))
