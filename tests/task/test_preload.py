"""preload_go_qualification_grader (spec 004) on a git-backed task whose hidden grader lives
in another Go module of the repository and needs a test-only dependency.

The repository, made here, is kv-rangestream's tree plus a second module ``itest/`` that
requires ``example.test/dep`` (from a file-based module proxy, never the network) and
reaches the store through a replace directive. The hidden test is in ``itest/`` and runs
as ``go test -C itest``. ``go mod download all`` at the root never sees that module, so
without the preload the cache lacks the dependency and the oracle cannot qualify offline;
with it, the grader's own command fetched exactly what grading needs, qualification
passes, and neither the base snapshot nor the cache holds a hidden test.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hpbench.task.manifest import load_manifest

from ..conftest import HPBENCH, LIBEXEC, REPO_ROOT, run
from ..platform.conftest import GoProxy
from .conftest import dump_toml

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("images")]

TASK = "kv-preload"
ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
KV = REPO_ROOT / "tasks" / "kv-rangestream"
ITEST_GO_MOD = """module kvstore.example/itest

go 1.19

require (
\texample.test/dep v1.0.0
\tkvstore.example/kv v0.0.0
)

replace kvstore.example/kv => ../
"""
HIDDEN_TEST = """package itest

import (
\t"context"
\t"testing"

\tm "example.test/dep"
\t"kvstore.example/kv/kv"
)

func TestHiddenStreamsWithDep(t *testing.T) {
\ts := kv.NewStore(kv.Config{})
\tif _, err := s.Put([]byte(m.Value), []byte("v")); err != nil {
\t\tt.Fatal(err)
\t}
\tvar got []string
\treq := &kv.RangeRequest{Key: []byte("a"), RangeEnd: []byte("z")}
\terr := s.RangeStream(context.Background(), req, func(r *kv.RangeResponse) error {
\t\tfor _, item := range r.Kvs {
\t\t\tgot = append(got, string(item.Key))
\t\t}
\t\treturn nil
\t})
\tif err != nil || len(got) != 1 || got[0] != m.Value {
\t\tt.Fatalf("RangeStream gave %v, %v", got, err)
\t}
}
"""


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=cwd, capture_output=True, text=True, check=True, env=ENV
    )
    return done.stdout.strip()


def _repository(root: Path) -> tuple[Path, str, str]:
    """The task's repository: base (kv base + itest/) and oracle (+ kv's oracle files)."""
    repo = root / "repo"
    shutil.copytree(KV / "source" / "base", repo)
    (repo / "itest").mkdir()
    (repo / "itest" / "go.mod").write_text(ITEST_GO_MOD)
    (repo / "itest" / "doc.go").write_text(
        "// Package itest holds integration tests.\npackage itest\n"
    )
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    shutil.copytree(KV / "source" / "oracle", repo, dirs_exist_ok=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "oracle")
    return repo, base, _git(repo, "rev-parse", "HEAD")


def _task(root: Path, repo: Path, base: str, oracle: str, preload: bool) -> Path:
    tasks = root / "tasks"
    task = tasks / TASK
    task.mkdir(parents=True)
    shutil.copy(KV / "prompt.md", task / "prompt.md")
    (task / "hidden" / "itest").mkdir(parents=True)
    (task / "hidden" / "itest" / "hidden_test.go").write_text(HIDDEN_TEST)
    manifest = {
        "schema_version": 1,
        "id": TASK,
        "title": "kv-rangestream with a grader in another module",
        "oracle_tier": "correctness",
        "prompt": "prompt.md",
        "source": {
            "kind": "git",
            "url": str(repo),
            "base_revision": base,
            "oracle_revision": oracle,
        },
        "paths": {"allowed": ["kv/kv.go", "kv/rangestream.go", "kv/store.go"]},
        "grader": {
            "kind": "go-test",
            "root": "hidden",
            "files": ["itest/hidden_test.go"],
            "command": [
                "go",
                "test",
                "-C",
                "itest",
                "-json",
                "-count=1",
                "-run",
                "^TestHidden",
                ".",
            ],
            "timeout_seconds": 300,
            "base_discriminator": "has no field or method RangeStream",
            "required_tests": {"kvstore.example/itest": ["TestHiddenStreamsWithDep"]},
        },
        "runtime": {
            "go_version": "1.24.11",
            "preload_go_qualification_grader": preload,
            "owned_module_prefixes": ["kvstore.example/kv"],
        },
    }
    (task / "task.toml").write_text(dump_toml(manifest))
    load_manifest(task)  # the manifest is valid before anything runs
    return tasks


def _prepare(
    root: Path, preload: bool, proxy: GoProxy
) -> tuple[Path, subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    repo, base, oracle = _repository(root)
    tasks = _task(root, repo, base, oracle, preload)
    env = {"HPBENCH_TASKS_DIR": str(tasks)}
    built = run([str(HPBENCH), "task", "build", TASK, "--out", str(root / "task-repo")], env)
    assert 0 == built.returncode, built.stderr
    for name, revision in (("base", base), ("oracle", oracle)):
        made = run(
            [str(LIBEXEC / "bench-snapshot"), str(root / "task-repo"), revision, str(root / name)]
        )
        assert 0 == made.returncode, made.stderr
    spec = root / "spec"
    done = run([str(HPBENCH), "task", "grader-spec", TASK, "--out", str(spec)], env)
    assert 0 == done.returncode, done.stderr
    env |= {"BENCH_GRADER_SPEC": str(spec), "BENCH_SETUP_GOPROXY_DIR": str(proxy.root)}
    cache = root / "gomodcache"
    filled = run(
        [
            str(LIBEXEC / "bench-gomodcache"),
            TASK,
            str(root / "base"),
            str(root / "oracle"),
            str(cache),
        ],
        env,
    )
    qualified = run(
        [
            str(LIBEXEC / "bench-qualify"),
            TASK,
            str(root / "base"),
            str(root / "oracle"),
            str(root / "q"),
        ],
        env | {"BENCH_GOMODCACHE": str(cache)},
    )
    return cache, filled, qualified


@pytest.fixture
def proxy(tmp_path: Path) -> GoProxy:
    served = GoProxy(tmp_path / "goproxy")
    served.root.mkdir()
    served.add(
        "example.test/dep", "v1.0.0", {"m.go": 'package m\n\nconst Value = "key-from-dep"\n'}
    )
    return served


def test_with_the_preload_the_grader_qualifies_offline(tmp_path: Path, proxy: GoProxy) -> None:
    cache, filled, qualified = _prepare(tmp_path, True, proxy)
    assert 0 == filled.returncode, filled.stderr
    assert "preloading the grader's dependencies" in filled.stderr
    assert (cache / "cache/download/example.test/dep/@v/v1.0.0.zip").is_file()
    assert 0 == qualified.returncode, qualified.stderr
    assert "base fails with 'has no field or method RangeStream', oracle passes" in qualified.stderr
    # Hidden tests reached only setup-only copies: never the base an agent gets, nor the cache.
    assert not (tmp_path / "base" / "itest" / "hidden_test.go").exists()
    assert [] == list(cache.rglob("hidden_test.go"))
    assert [] == list(tmp_path.glob("gomodcache-setup.*"))


def test_without_it_the_dependency_is_missing_offline(tmp_path: Path, proxy: GoProxy) -> None:
    """The contrast that makes the option necessary: the root's module graph lacks the
    other module's test-only dependency, so the oracle cannot qualify offline."""
    cache, filled, qualified = _prepare(tmp_path, False, proxy)
    assert 0 == filled.returncode, filled.stderr
    assert not (cache / "cache/download/example.test/dep").exists()
    assert 1 == qualified.returncode
    # Neither grading got to the tests: the dependency was not in the read-only cache.
    assert "without the discriminator" in qualified.stderr
    for name in ("base", "oracle"):
        grading = tmp_path / "q" / name
        assert "0" != (grading / "grader.exit").read_text().strip()
        assert "example.test/dep" in (grading / "grader.stdout").read_text()
