"""Git-backed tasks: revisions fetched from a local mirror (never the network), and the
same snapshots and workspace proof as a bundled task's.

The git task here is the bundled kv-rangestream task published as a repository: its
history is built, mirrored with ``git clone --mirror``, and a copy of the task names it
as ``kind = "git"`` with the same revisions, under a URL nothing ever contacts."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench._cli import task_cmd
from hpbench._cli.main import main
from hpbench.errors import HpbenchError
from hpbench.task.gitsource import (
    MIRRORS_VARIABLE,
    SourceUnreachableError,
    candidates,
    fetch_history,
    find_source,
    repository_name,
)
from hpbench.task.history import BuiltHistory, build_history
from hpbench.task.manifest import SourceKind, Task, load_manifest
from hpbench.task.workspace import verify_workspace

from ..conftest import HPBENCH

REPO_ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO_ROOT / "benchmarks" / "libexec" / "bench-snapshot"
URL = "https://example.invalid/kvstore.git"
ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    return subprocess.run(
        ["git", *identity, *args], cwd=cwd, capture_output=True, text=True, check=True, env=ENV
    ).stdout.strip()


def git_task(tasks: Path, url: str = URL) -> Task:
    """kv-rangestream as a git-backed task named ``url``."""
    directory = tasks / "kv-rangestream"
    shutil.copytree(REPO_ROOT / "tasks" / "kv-rangestream", directory)
    shutil.rmtree(directory / "source")
    manifest = directory / "task.toml"
    text = manifest.read_text()
    text = re.sub(
        r'kind = "bundled"\nbase = "source/base"\noracle = "source/oracle"\n',
        f'kind = "git"\nurl = "{url}"\n',
        text,
    )
    manifest.write_text(text)
    task = load_manifest(directory)
    assert task.manifest.source.kind is SourceKind.GIT
    return task


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> BuiltHistory:
    bundled = load_manifest(REPO_ROOT / "tasks" / "kv-rangestream")
    return build_history(bundled, tmp_path_factory.mktemp("history") / "repo")


@pytest.fixture(scope="module")
def mirrors(built: BuiltHistory, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mirrors directory holding the task's repository as ``kvstore.git``."""
    directory = tmp_path_factory.mktemp("mirrors")
    _git(directory, "clone", "-q", "--mirror", str(built.repository), "kvstore.git")
    return directory


class TestFinding:
    def test_repository_names(self) -> None:
        assert "etcd" == repository_name("https://github.com/etcd-io/etcd")
        assert "etcd" == repository_name("https://github.com/etcd-io/etcd.git/")
        assert "repo" == repository_name("git@example.invalid:team/repo.git")

    def test_looks_for_the_task_then_the_repository_in_each_directory(self, tmp_path: Path) -> None:
        task = git_task(tmp_path / "tasks")
        looked = candidates(task, {MIRRORS_VARIABLE: "/a:/b"})
        assert [
            "/a/kv-rangestream.git",
            "/a/kv-rangestream",
            "/a/kvstore.git",
            "/a/kvstore",
            "/b/kv-rangestream.git",
            "/b/kv-rangestream",
            "/b/kvstore.git",
            "/b/kvstore",
        ] == [str(path) for path in looked]

    def test_a_mirror_is_found(self, tmp_path: Path, mirrors: Path) -> None:
        task = git_task(tmp_path / "tasks")
        env = {MIRRORS_VARIABLE: f"{tmp_path / 'empty'}:{mirrors}"}
        assert mirrors / "kvstore.git" == find_source(task, env)

    def test_without_a_mirror_it_refuses_in_one_line_saying_how(self, tmp_path: Path) -> None:
        task = git_task(tmp_path / "tasks")
        with pytest.raises(SourceUnreachableError) as caught:
            find_source(task, {})
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(f"task kv-rangestream: its git source {URL} ")
        assert f"git clone --mirror {URL} DIR/kv-rangestream.git" in message
        assert f"{MIRRORS_VARIABLE}=DIR" in message

    def test_a_directory_that_is_no_repository_is_no_mirror(self, tmp_path: Path) -> None:
        task = git_task(tmp_path / "tasks")
        (tmp_path / "mirrors" / "kvstore.git").mkdir(parents=True)
        with pytest.raises(SourceUnreachableError, match="found no mirror in"):
            find_source(task, {MIRRORS_VARIABLE: str(tmp_path / "mirrors")})


class TestFetching:
    def test_the_repository_holds_the_two_revisions_and_nothing_of_its_origin(
        self, tmp_path: Path, mirrors: Path, built: BuiltHistory
    ) -> None:
        task = git_task(tmp_path / "tasks")
        out = tmp_path / "task-repo"
        origin = fetch_history(task, out, {MIRRORS_VARIABLE: str(mirrors)})
        assert mirrors / "kvstore.git" == origin
        assert built.oracle_revision == _git(out, "rev-parse", "HEAD")
        assert ["refs/heads/main"] == _git(out, "for-each-ref", "--format=%(refname)").split()
        assert "" == _git(out, "remote")
        assert not (out / ".git" / "FETCH_HEAD").exists()
        assert "" == _git(out, "status", "--porcelain")

    def test_snapshots_and_the_workspace_proof_work_as_for_a_bundled_task(
        self, tmp_path: Path, mirrors: Path
    ) -> None:
        task = git_task(tmp_path / "tasks")
        repository = tmp_path / "task-repo"
        fetch_history(task, repository, {MIRRORS_VARIABLE: str(mirrors)})
        workspace = tmp_path / "ws"
        base = task.manifest.source.base_revision
        subprocess.run([str(SNAPSHOT), str(repository), base, str(workspace)], check=True)
        assert [] == verify_workspace(workspace, task, repository)
        # Without the task repository, a git task's proof cannot know the oracle's objects.
        assert ["workspace.repository"] == [f.code for f in verify_workspace(workspace, task)]

    def test_a_local_url_is_its_own_source(self, tmp_path: Path, built: BuiltHistory) -> None:
        for url in (str(built.repository), f"file://{built.repository}"):
            task = git_task(tmp_path / url.replace("/", "_"), url=url)
            fetch_history(task, tmp_path / url.replace("/", "_") / "repo", {})

    def test_a_source_without_the_revisions_is_refused_by_name(self, tmp_path: Path) -> None:
        other = tmp_path / "other"
        other.mkdir()
        _git(other, "init", "-q")
        _git(other, "commit", "-q", "--allow-empty", "-m", "unrelated")
        task = git_task(tmp_path / "tasks", url=str(other))
        with pytest.raises(HpbenchError, match="does not have revisions"):
            fetch_history(task, tmp_path / "repo", {})

    def test_an_oracle_that_does_not_descend_from_the_base_is_refused(
        self, tmp_path: Path, built: BuiltHistory
    ) -> None:
        task = git_task(tmp_path / "tasks", url=str(built.repository))
        source = task.manifest.source
        manifest = task.manifest_path
        swapped = manifest.read_text().replace(source.base_revision, "BASE")
        swapped = swapped.replace(source.oracle_revision, source.base_revision)
        manifest.write_text(swapped.replace("BASE", source.oracle_revision))
        with pytest.raises(HpbenchError, match="does not descend from the base revision"):
            fetch_history(load_manifest(task.directory), tmp_path / "repo", {})

    def test_refuses_a_non_empty_destination(self, tmp_path: Path, mirrors: Path) -> None:
        task = git_task(tmp_path / "tasks")
        (tmp_path / "repo").mkdir()
        (tmp_path / "repo" / "x").write_text("")
        with pytest.raises(HpbenchError, match="non-empty"):
            fetch_history(task, tmp_path / "repo", {MIRRORS_VARIABLE: str(mirrors)})


class TestCommandLine:
    def test_task_build_fetches_a_git_task(self, tmp_path: Path, mirrors: Path) -> None:
        git_task(tmp_path / "tasks")
        result = subprocess.run(
            [str(HPBENCH), "task", "build", "kv-rangestream", "--out", str(tmp_path / "repo")],
            env={
                **ENV,
                "HPBENCH_TASKS_DIR": str(tmp_path / "tasks"),
                MIRRORS_VARIABLE: str(mirrors),
            },
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == result.returncode, result.stderr
        assert (tmp_path / "repo" / "kv" / "rangestream.go").is_file()

    def test_task_build_without_a_mirror_says_how(self, tmp_path: Path) -> None:
        git_task(tmp_path / "tasks")
        result = subprocess.run(
            [str(HPBENCH), "task", "build", "kv-rangestream", "--out", str(tmp_path / "repo")],
            env={**ENV, "HPBENCH_TASKS_DIR": str(tmp_path / "tasks")},
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 != result.returncode
        assert f"git clone --mirror {URL}" in result.stderr

    def test_a_run_is_refused_at_planning(self, tmp_path: Path) -> None:
        """Before anything is made: the plan names the task, the source and how."""
        git_task(tmp_path / "tasks")
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        result = subprocess.run(
            [str(HPBENCH), "run", "plan", "paired", str(run_dir)],
            env={**ENV, "HPBENCH_TASKS_DIR": str(tmp_path / "tasks")},
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 != result.returncode
        assert "task kv-rangestream: its git source" in result.stderr
        assert not (run_dir / "plan.env").exists()


class TestQualify:
    """``hpbench task qualify ID`` hands the whole flow to the shell (preparation-only)."""

    def test_hands_over_to_bench_sh_preparation_only(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls: list[tuple[Path, list[str], dict[str, str]]] = []
        monkeypatch.setattr(
            task_cmd.os, "execve", lambda path, argv, env: calls.append((path, argv, env))
        )
        monkeypatch.setenv("MODE", "paired")
        main(["task", "qualify", "kv-rangestream"])
        ((path, argv, env),) = calls
        assert REPO_ROOT / "benchmarks" / "bench.sh" == path and path.is_file()
        assert [str(path), "preparation-only"] == argv
        assert "kv-rangestream" == env["TASK"] and "MODE" not in env

    def test_a_task_that_does_not_load_is_refused_first(self, tmp_path: Path) -> None:
        result = subprocess.run(
            [str(HPBENCH), "task", "qualify", "no-such-task"],
            env={**ENV, "HPBENCH_TASKS_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 != result.returncode
        assert "no-such-task" in result.stderr
