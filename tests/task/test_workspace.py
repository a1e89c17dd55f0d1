"""History-free workspaces: bench-snapshot makes them, verify_workspace proves them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.history import BuiltHistory, build_history
from hpbench.task.manifest import Task, load_manifest
from hpbench.task.workspace import verify_workspace

REPO_ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO_ROOT / "benchmarks" / "libexec" / "bench-snapshot"


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    identity = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    return subprocess.run(
        ["git", *identity, *args], cwd=repo, capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


@pytest.fixture(scope="module")
def task() -> Task:
    return load_manifest(REPO_ROOT / "tasks" / "kv-rangestream")


@pytest.fixture(scope="module")
def built(task: Task, tmp_path_factory: pytest.TempPathFactory) -> BuiltHistory:
    return build_history(task, tmp_path_factory.mktemp("task") / "repo")


def snapshot(built: BuiltHistory, revision: str, out: Path) -> Path:
    subprocess.run([str(SNAPSHOT), str(built.repository), revision, str(out)], check=True)
    return out


@pytest.fixture
def workspace(built: BuiltHistory, tmp_path: Path) -> Path:
    return snapshot(built, built.base_revision, tmp_path / "ws")


def codes(workspace: Path, task: Task, built: BuiltHistory) -> set[str]:
    return {f.code for f in verify_workspace(workspace, task, built.repository)}


class TestSnapshot:
    def test_snapshot_is_history_free(
        self, workspace: Path, task: Task, built: BuiltHistory
    ) -> None:
        """A fresh base snapshot passes every proof."""
        assert [] == verify_workspace(workspace, task, built.repository)

    def test_proof_builds_bundled_history_itself(self, workspace: Path, task: Task) -> None:
        """Without --task-repo a bundled task's history is built on the fly."""
        assert [] == verify_workspace(workspace, task)

    def test_snapshots_are_byte_equivalent(self, built: BuiltHistory, tmp_path: Path) -> None:
        """Two snapshots of one revision have the same commit id (same tree, identity, date)."""
        first = snapshot(built, built.base_revision, tmp_path / "a")
        second = snapshot(built, built.base_revision, tmp_path / "b")
        assert _git(first, "rev-parse", "HEAD") == _git(second, "rev-parse", "HEAD")

    def test_refuses_existing_destination(self, built: BuiltHistory, tmp_path: Path) -> None:
        """A snapshot is always made fresh."""
        (tmp_path / "ws").mkdir()
        result = subprocess.run(
            [str(SNAPSHOT), str(built.repository), built.base_revision, str(tmp_path / "ws")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 != result.returncode
        assert "already exists" in result.stderr


class TestRefusals:
    def test_clone_of_task_repository(
        self, task: Task, built: BuiltHistory, tmp_path: Path
    ) -> None:
        """A clone carries history, a remote and the oracle: every one is named."""
        clone = tmp_path / "clone"
        subprocess.run(
            ["git", "clone", "-q", str(built.repository), str(clone)],
            check=True,
            capture_output=True,
        )
        _git(clone, "checkout", "-q", built.base_revision)
        found = codes(clone, task, built)
        assert {
            "workspace.commits",
            "workspace.remote",
            "workspace.refs",
            "workspace.oracle_commit",
            "workspace.oracle_objects",
        } <= found

    def test_oracle_snapshot(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """A snapshot of the oracle is not a base snapshot: oracle content and tree."""
        oracle = snapshot(built, built.oracle_revision, tmp_path / "oracle")
        found = codes(oracle, task, built)
        assert {
            "workspace.base_tree",
            "workspace.oracle_objects",
            "workspace.oracle_content",
        } <= found

    def test_second_commit(self, workspace: Path, task: Task, built: BuiltHistory) -> None:
        """More than one commit is history."""
        (workspace / "NOTE").write_text("x")
        _git(workspace, "add", "NOTE")
        _git(workspace, "commit", "-qm", "more")
        assert "workspace.commits" in codes(workspace, task, built)

    def test_remote(self, workspace: Path, task: Task, built: BuiltHistory) -> None:
        """A remote could fetch the oracle."""
        _git(workspace, "remote", "add", "origin", str(built.repository))
        assert {"workspace.remote"} == codes(workspace, task, built)

    def test_tag(self, workspace: Path, task: Task, built: BuiltHistory) -> None:
        """Tags are refs beyond the single branch."""
        _git(workspace, "tag", "v1")
        assert {"workspace.refs"} == codes(workspace, task, built)

    def test_second_branch(self, workspace: Path, task: Task, built: BuiltHistory) -> None:
        """One branch only."""
        _git(workspace, "branch", "other")
        assert {"workspace.refs"} == codes(workspace, task, built)

    def test_reflog_of_another_commit(
        self, workspace: Path, task: Task, built: BuiltHistory
    ) -> None:
        """A reflog naming a commit that was amended away is history."""
        _git(workspace, "commit", "-q", "--amend", "-m", "amended")
        found = codes(workspace, task, built)
        assert {"workspace.reflog", "workspace.commits"} <= found

    def test_hidden_file_present(self, workspace: Path, task: Task, built: BuiltHistory) -> None:
        """The hidden grader file in the tree is refused by path and by content."""
        for name, path in task.grader_file_paths():
            target = workspace / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        assert {"workspace.hidden_file", "workspace.hidden_content"} <= codes(
            workspace, task, built
        )

    def test_hidden_content_elsewhere(
        self, workspace: Path, task: Task, built: BuiltHistory
    ) -> None:
        """Hidden grader content under another name is still found."""
        (_, path) = task.grader_file_paths()[0]
        shutil.copyfile(path, workspace / "notes.txt")
        assert {"workspace.hidden_content"} == codes(workspace, task, built)

    def test_hidden_object_in_database(
        self, workspace: Path, task: Task, built: BuiltHistory
    ) -> None:
        """A hidden file's blob written into the object database is found (and is unreachable)."""
        (_, path) = task.grader_file_paths()[0]
        _git(workspace, "hash-object", "-w", str(path))
        found = codes(workspace, task, built)
        assert {"workspace.hidden_object", "workspace.unreachable_objects"} <= found

    def test_oracle_object_in_database(
        self, workspace: Path, task: Task, built: BuiltHistory
    ) -> None:
        """An oracle-only blob in the object database is found."""
        overlay = (
            REPO_ROOT / "tasks" / "kv-rangestream" / "source" / "oracle" / "kv" / "rangestream.go"
        )
        _git(workspace, "hash-object", "-w", str(overlay))
        assert {"workspace.oracle_objects", "workspace.unreachable_objects"} <= codes(
            workspace, task, built
        )

    def test_alternates(self, workspace: Path, task: Task, built: BuiltHistory) -> None:
        """Borrowing objects from the task repository is refused."""
        alternates = workspace / ".git" / "objects" / "info" / "alternates"
        alternates.write_text(str(built.repository / ".git" / "objects") + "\n")
        assert "workspace.borrowed_objects" in codes(workspace, task, built)

    def test_not_a_repository(self, task: Task, built: BuiltHistory, tmp_path: Path) -> None:
        """A plain directory is not a workspace."""
        assert {"workspace.not_git"} == codes(tmp_path, task, built)
