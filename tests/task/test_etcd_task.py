"""The etcd RangeStream task: its manifest, fingerprint, allowed paths and refusal.

Its source is etcd's own repository, and qualifying it needs etcd's Go modules, which
only a machine that reaches the Go module proxy has. Everything else is proven here:
the manifest, what its fingerprint covers, that a run without a mirror is refused in
one line that says how to make one and, given a local mirror of etcd
(``HPBENCH_ETCD_MIRROR``), that the base snapshot is history-free and the allowed paths
are exactly the production files of the oracle change."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.fingerprint import fingerprint_inputs, task_fingerprint
from hpbench.task.gitsource import MIRRORS_VARIABLE, SourceUnreachableError, fetch_history
from hpbench.task.go_tests import declared_tests
from hpbench.task.manifest import GraderKind, SourceKind, Task, load_manifest
from hpbench.task.workspace import verify_workspace

from ..conftest import HPBENCH

REPO_ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = REPO_ROOT / "tasks" / "etcd-rangestream"
SNAPSHOT = REPO_ROOT / "benchmarks" / "libexec" / "bench-snapshot"
BASE = "84e612f39b82d1c8ee3f884a59e3f973209d8fbc"
ORACLE = "fd2cc937c9d4413a410d36eb340d83981535b00f"
ALLOWED = (
    "client/v3/mock/mockserver/mockserver.go",
    "client/v3/retry.go",
    "server/etcdserver/api/v3rpc/header.go",
    "server/etcdserver/api/v3rpc/key.go",
    "server/etcdserver/txn/range.go",
    "server/etcdserver/v3_server.go",
    "server/proxy/grpcproxy/adapter/kv_client_adapter.go",
    "server/proxy/grpcproxy/kv.go",
)
HIDDEN = "tests/integration/rangestream_hidden_test.go"


@pytest.fixture(scope="module")
def task() -> Task:
    return load_manifest(TASK_DIR)


class TestManifest:
    def test_the_source_is_etcds_at_the_two_revisions(self, task: Task) -> None:
        source = task.manifest.source
        assert SourceKind.GIT is source.kind
        assert "https://github.com/etcd-io/etcd" == source.url
        assert (BASE, ORACLE) == (source.base_revision, source.oracle_revision)

    def test_the_eight_production_paths_are_allowed(self, task: Task) -> None:
        assert ALLOWED == task.manifest.paths.allowed
        assert not any(path.endswith("_test.go") for path in task.manifest.paths.allowed)

    def test_the_grader_runs_each_named_hidden_test_in_the_tests_module(self, task: Task) -> None:
        grader = task.manifest.grader
        assert GraderKind.GO_TEST is grader.kind
        assert (HIDDEN,) == grader.files
        assert ["go", "test", "-C", "tests", "-json"] == list(grader.command[:5])
        assert "has no field or method RangeStream" == grader.base_discriminator
        (package,) = grader.required_tests
        assert "go.etcd.io/etcd/tests/v3/integration" == package
        declared = declared_tests([(HIDDEN, TASK_DIR / "hidden" / HIDDEN)])
        assert declared == {"tests/integration": set(grader.required_tests[package])}
        # Every required test is one the -run pattern selects.
        assert all(
            name.startswith("TestHiddenRangeStream") for name in declared["tests/integration"]
        )

    def test_the_hidden_tests_call_the_server_method_the_base_lacks(self) -> None:
        """The base discriminator is the compiler's: the grader calls
        EtcdServer.RangeStream itself, not the gRPC stub the base already has."""
        text = (TASK_DIR / "hidden" / HIDDEN).read_text()
        assert ".Server.RangeStream(" in text
        for behaviour in ("initialBudget = 10", "MaxRequestBytes", "Revision", "CountOnly"):
            assert behaviour in text

    def test_the_prompt_does_not_leak_the_hidden_tests(self, task: Task) -> None:
        prompt = task.prompt_path.read_text()
        assert "TestHidden" not in prompt and "rangestream_hidden" not in prompt
        assert "MaxRequestBytes" in prompt and "at most 10 keys" in prompt


class TestFingerprint:
    def test_covers_the_manifest_prompt_and_hidden_test(self, task: Task) -> None:
        assert ["hidden/" + HIDDEN, "prompt.md", "task.toml"] == [
            name for name, _ in fingerprint_inputs(task)
        ]

    def test_changes_with_any_input(self, task: Task, tmp_path: Path) -> None:
        copy = tmp_path / "etcd-rangestream"
        shutil.copytree(TASK_DIR, copy)
        assert task_fingerprint(task) == task_fingerprint(load_manifest(copy))
        hidden = copy / "hidden" / HIDDEN
        hidden.write_text(hidden.read_text() + "\n")
        assert task_fingerprint(task) != task_fingerprint(load_manifest(copy))


class TestWithoutAMirror:
    def test_preparation_refuses_in_one_line_saying_how(self, task: Task, tmp_path: Path) -> None:
        with pytest.raises(SourceUnreachableError) as caught:
            fetch_history(task, tmp_path / "repo", {})
        assert (
            "task etcd-rangestream: its git source https://github.com/etcd-io/etcd is not "
            "fetched over the network and has no mirror; make one with `git clone --mirror "
            "https://github.com/etcd-io/etcd DIR/etcd-rangestream.git` and set "
            f"{MIRRORS_VARIABLE}=DIR"
        ) == str(caught.value)

    def test_a_run_is_refused_before_it_makes_anything(self, tmp_path: Path) -> None:
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        env = {k: v for k, v in os.environ.items() if k != MIRRORS_VARIABLE}
        result = subprocess.run(
            [str(HPBENCH), "run", "plan", "paired", str(run_dir)],
            env={**env, "TASK": "etcd-rangestream"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 != result.returncode
        assert "task etcd-rangestream: its git source" in result.stderr
        assert [] == list(run_dir.iterdir())


MIRROR = os.environ.get("HPBENCH_ETCD_MIRROR")


@pytest.mark.skipif(MIRROR is None, reason="HPBENCH_ETCD_MIRROR names no local etcd mirror")
class TestWithAMirror:
    """Run with HPBENCH_ETCD_MIRROR=<a clone or mirror of etcd-io/etcd>."""

    def test_the_allowed_paths_are_the_oracle_changes_production_files(self) -> None:
        assert MIRROR is not None
        # Trees only: a partial clone without blobs answers this too.
        changed = subprocess.run(
            ["git", "diff", "--name-only", BASE, ORACLE],
            cwd=MIRROR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert ALLOWED == tuple(sorted(p for p in changed if not p.endswith("_test.go")))

    def test_the_base_snapshot_is_history_free(self, task: Task, tmp_path: Path) -> None:
        """Needs a full mirror (every blob of both revisions)."""
        assert MIRROR is not None
        mirrors = tmp_path / "mirrors"
        mirrors.mkdir()
        (mirrors / "etcd.git").symlink_to(Path(MIRROR).resolve())
        repository = tmp_path / "repo"
        fetch_history(task, repository, {MIRRORS_VARIABLE: str(mirrors)})
        workspace = tmp_path / "ws"
        subprocess.run([str(SNAPSHOT), str(repository), BASE, str(workspace)], check=True)
        assert [] == verify_workspace(workspace, task, repository)
        assert not (workspace / HIDDEN).exists()
