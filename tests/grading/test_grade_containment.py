"""bench-grade refuses what a hostile workspace plants, and contains what its code does.

Each case plants something in a workspace (a symlink at the hidden test's path,
at one of its parents, to a host path; a fifo or a directory where the hidden
test goes), grades it, and checks that nothing outside the grading changed,
that the hidden file was graded where it belongs, and that grader.evidence
names what was removed. The grading's code runs as 1000 with no way to write
the workspace, another grading's build cache, or the host, and its memory,
processes and time are capped.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from ..conftest import planned_env
from .conftest import (
    HIDDEN_SOURCE,
    HIDDEN_TEST,
    LIBEXEC,
    fake_spec,
    grade,
    run,
    tree_digest,
)

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("images")]

HIDDEN_TEST_NAME = '"Test":"TestRangeStreamFirstResponse"'


@pytest.fixture
def oracle(snapshots: dict[str, Path], tmp_path: Path) -> Path:
    """A writable copy of the oracle snapshot (with its .git) as an agent would leave it."""
    target = tmp_path / "workspace"
    shutil.copytree(snapshots["oracle"], target, symlinks=True)
    return target


def _graded_in_place(out: Path) -> None:
    placed = out / "work" / HIDDEN_TEST
    assert not placed.is_symlink()
    assert stat.S_ISREG(placed.lstat().st_mode)
    assert HIDDEN_SOURCE.read_bytes() == placed.read_bytes()


def _kinds(evidence: list[list[str]]) -> dict[str, str]:
    """Each evidence line's path (as printf %q wrote it) mapped to its kind."""
    return {fields[1]: fields[0] for fields in evidence}


class TestHiddenPath:
    def test_symlink_at_the_hidden_path_to_a_victim(self, oracle: Path, tmp_path: Path) -> None:
        """The link is removed and the hidden test is graded in place; the victim is untouched."""
        victim = tmp_path / "victim.txt"
        victim.write_text("the other arm's file\n")
        (oracle / HIDDEN_TEST).symlink_to(victim)
        graded = grade(oracle, tmp_path / "out")
        assert 0 == graded.returncode, graded.stderr
        assert "the other arm's file\n" == victim.read_text()
        assert "0" == graded.exit, graded.stdout[-2000:]
        assert HIDDEN_TEST_NAME in graded.stdout
        _graded_in_place(graded.out)
        assert [["symlink-removed", HIDDEN_TEST, str(victim)]] == graded.evidence

    def test_relative_symlink_at_the_hidden_path(self, oracle: Path, tmp_path: Path) -> None:
        """A link that stays inside the copy is still never written through."""
        store = (oracle / "kv" / "store.go").read_bytes()
        (oracle / HIDDEN_TEST).symlink_to("store.go")
        graded = grade(oracle, tmp_path / "out")
        assert "0" == graded.exit, graded.stdout[-2000:]
        assert store == (graded.out / "work" / "kv" / "store.go").read_bytes()
        _graded_in_place(graded.out)
        assert [["hidden-path-replaced", HIDDEN_TEST, "symbolic\\ link"]] == graded.evidence

    @pytest.mark.parametrize("planted", ["fifo", "directory", "file"])
    def test_something_else_at_the_hidden_path(
        self, oracle: Path, tmp_path: Path, planted: str
    ) -> None:
        """A fifo is never opened, a directory is removed, a file is replaced."""
        path = oracle / HIDDEN_TEST
        if planted == "fifo":
            os.mkfifo(path)
        elif planted == "directory":
            path.mkdir()
            (path / "inside.go").write_text("package kv\n")
        else:
            path.write_text("package kv\n")
        graded = grade(oracle, tmp_path / "out")
        assert "0" == graded.exit, graded.stdout[-2000:]
        _graded_in_place(graded.out)
        kind = {"fifo": "fifo", "directory": "directory", "file": "regular\\ file"}[planted]
        assert [["hidden-path-replaced", HIDDEN_TEST, kind]] == graded.evidence


class TestHiddenParent:
    def test_parent_symlink_to_another_workspace(
        self, oracle: Path, snapshots: dict[str, Path], tmp_path: Path
    ) -> None:
        """kv -> the other arm's kv: that directory stays untouched; kv becomes a real one."""
        other = tmp_path / "other-arm"
        shutil.copytree(snapshots["oracle"], other, symlinks=True)
        before = tree_digest(other)
        shutil.rmtree(oracle / "kv")
        (oracle / "kv").symlink_to(other / "kv", target_is_directory=True)
        graded = grade(oracle, tmp_path / "out")
        assert 0 == graded.returncode, graded.stderr
        assert before == tree_digest(other)
        assert not (other / HIDDEN_TEST).exists()
        work_kv = graded.out / "work" / "kv"
        assert work_kv.is_dir()
        assert not work_kv.is_symlink()
        _graded_in_place(graded.out)
        assert ["symlink-removed", "kv", str(other / "kv")] in graded.evidence
        # Without its sources the package cannot pass: the agent's trick only failed it.
        assert "0" != graded.exit

    @pytest.mark.parametrize("planted", ["inside-link", "file", "fifo"])
    def test_parent_that_is_not_a_directory(self, tmp_path: Path, planted: str) -> None:
        """A parent that is a link inside the copy, a file or a fifo is replaced by a directory."""
        workspace = tmp_path / "workspace"
        (workspace / "real").mkdir(parents=True)
        (workspace / "real" / "keep.txt").write_text("keep\n")
        if planted == "inside-link":
            (workspace / "sub").symlink_to("real", target_is_directory=True)
        elif planted == "file":
            (workspace / "sub").write_text("a file\n")
        else:
            os.mkfifo(workspace / "sub")
        spec = fake_spec(tmp_path, ["cat", "sub/dir/hidden.txt"], {"sub/dir/hidden.txt": "hi\n"})
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert 0 == graded.returncode, graded.stderr
        assert "0" == graded.exit, graded.grader_stderr
        assert "hi\n" == graded.stdout
        work = graded.out / "work"
        assert (work / "sub").is_dir()
        assert not (work / "sub").is_symlink()
        assert ["keep.txt"] == [p.name for p in (work / "real").iterdir()]
        assert "hidden-parent-replaced" == _kinds(graded.evidence)["sub"]


class TestLinksInTheCopy:
    def test_escaping_links_are_kept_nowhere(self, tmp_path: Path) -> None:
        """Absolute, .. and chained escapes are removed and listed; inside links stay."""
        workspace = tmp_path / "workspace"
        (workspace / "deep" / "er").mkdir(parents=True)
        (workspace / "notes.txt").write_text("notes\n")
        links = {
            "passwd": "/etc/passwd",
            "deep/er/up": "../../../etc",
            "hop": "chain",
            "chain": "/root",
            "loop-a": "loop-b",
            "loop-b": "loop-a",
            "evil\nsymlink-removed\tforged": "/etc/shadow",
            "deep/alias": "../notes.txt",
            "dangling-inside": "missing",
        }
        for name, target in links.items():
            (workspace / name).symlink_to(target)
        (workspace / ".git").mkdir()
        (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        spec = fake_spec(tmp_path, ["true"], {"hidden.txt": "hidden\n"})
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert 0 == graded.returncode, graded.stderr
        work = graded.out / "work"
        kept = sorted(str(p.relative_to(work)) for p in work.rglob("*") if p.is_symlink())
        assert ["dangling-inside", "deep/alias"] == kept
        assert not (work / ".git").exists()
        removed = _kinds(graded.evidence)
        for name in ("passwd", "deep/er/up", "hop", "chain", "loop-a", "loop-b"):
            assert "symlink-removed" == removed[name]
        # A hostile name is quoted onto one line and never forges a finding of its own.
        assert 7 == len(graded.evidence)
        assert "$'evil\\nsymlink-removed\\tforged'" in removed
        # The workspace itself is never changed.
        assert "/etc/passwd" == str((workspace / "passwd").readlink())

    def test_unreadable_file_is_left_out_and_named(self, tmp_path: Path) -> None:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        (workspace / "secret.txt").write_text("x\n")
        (workspace / "secret.txt").chmod(0o600)
        (workspace / "plain.txt").write_text("y\n")
        spec = fake_spec(tmp_path, ["true"], {"hidden.txt": "hidden\n"})
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert (graded.out / "work" / "plain.txt").is_file()
        assert not (graded.out / "work" / "secret.txt").exists()
        assert ["not-copied"] == [fields[0] for fields in graded.evidence]
        assert "secret.txt" in graded.evidence[0][2]

    def test_the_agents_private_file_is_graded(self, tmp_path: Path) -> None:
        """A file the agent made mode 0600 (mktemp, then mv) is its own: the grading, which
        runs as the agent's uid, copies it like any other."""
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        private = workspace / "private.go"
        private.write_text("package p\n")
        private.chmod(0o600)
        os.chown(private, 1000, 1000)
        spec = fake_spec(tmp_path, ["true"], {"hidden.txt": "hidden\n"})
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert "package p\n" == (graded.out / "work" / "private.go").read_text()
        assert [] == graded.evidence

    def test_marker_printed_by_the_graded_code_forges_no_evidence(self, tmp_path: Path) -> None:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        (workspace / "w").symlink_to("/etc")
        marker = "hpbench-grade: the grader command starts"
        command = ["bash", "-c", f"echo '{marker}'; printf 'symlink-removed\\tfake\\tx\\n'"]
        spec = fake_spec(tmp_path, command, {"hidden.txt": "hidden\n"})
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert [["symlink-removed", "w", "/etc"]] == graded.evidence
        assert f"{marker}\nsymlink-removed\tfake\tx\n" == graded.stdout


# One line of findings from inside the grading: who it runs as and what it may write.
PROBE = (
    "echo uid=$(id -u) gid=$(id -g); grep CapEff /proc/self/status;"
    ' for p in /src/x /hidden/x /work/x /etc/x /usr/x /tmp/x "$GOCACHE/x"; do'
    " if (echo >$p) 2>/dev/null; then echo writable $p; else echo refused $p; fi; done;"
    " awk 'NR>2 {print \"iface\", $1}' /proc/net/dev"
)


def test_runs_unprivileged_and_cannot_write_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "file.txt").write_text("agent\n")
    spec = fake_spec(tmp_path, ["bash", "-c", PROBE], {"hidden.txt": "hidden\n"})
    graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
    assert "0" == graded.exit, graded.grader_stderr
    lines = graded.stdout.splitlines()
    assert "uid=1000 gid=1000" == lines[0]
    assert lines[1].endswith("0000000000000000")
    for path in ("/src/x", "/hidden/x", "/etc/x", "/usr/x"):
        assert f"refused {path}" in lines
    for path in ("/work/x", "/tmp/x", "/gocache/x"):
        assert f"writable {path}" in lines
    assert ["iface lo:"] == [line for line in lines if line.startswith("iface")]
    assert ["file.txt"] == [p.name for p in workspace.iterdir()]
    assert "agent\n" == (workspace / "file.txt").read_text()


def test_go_test_of_the_agent_runs_as_the_grader_user(oracle: Path, tmp_path: Path) -> None:
    """The agent's own Go test sees uid 1000, a read-only /src and a writable copy."""
    (oracle / "kv" / "probe_test.go").write_text(
        'package kv\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'
        "func TestProbe(t *testing.T) {\n"
        '\tif os.Getuid() != 1000 {\n\t\tt.Fatalf("uid %d", os.Getuid())\n\t}\n'
        '\tif os.WriteFile("/src/kv/planted.go", []byte("x"), 0o644) == nil {\n'
        '\t\tt.Fatal("wrote the workspace")\n\t}\n'
        '\tif err := os.WriteFile("scratch.txt", []byte("x"), 0o644); err != nil {\n'
        "\t\tt.Fatal(err)\n\t}\n}\n"
    )
    graded = grade(oracle, tmp_path / "out")
    assert "0" == graded.exit, graded.stdout[-2000:]
    assert '"Test":"TestProbe","Elapsed"' in graded.stdout.replace('"Action":"pass",', "")
    assert not (oracle / "kv" / "planted.go").exists()
    assert not (oracle / "kv" / "scratch.txt").exists()


class TestBuildCache:
    # The graded code's attempt at the cache: rewrite, add and delete entries.
    POISON = (
        'find "$GOCACHE" -type f | while read -r f; do echo hpbench-poison >>"$f" 2>/dev/null;'
        ' done; echo hpbench-poison >"$GOCACHE/poison"; mkdir -p "$GOCACHE/ff";'
        ' echo hpbench-poison >"$GOCACHE/ff/ff-a"; find "$GOCACHE" -name \'*-d\' -delete; true'
    )
    # What the next grading's cache holds: every file with its digest.
    REPORT = 'cd "$GOCACHE" && find . -type f -exec sha256sum {} + | LC_ALL=C sort'

    def _run_cache(self, tmp_path: Path, frozen: bool) -> Path:
        """A run cache filled by a trusted grading, frozen as bench-prepare leaves it (or not)."""
        cache = tmp_path / "gocache"
        cache.mkdir()
        os.chown(cache, 1000, 1000)
        workspace = tmp_path / "trusted"
        workspace.mkdir()
        (workspace / "go.mod").write_text("module fake.test/m\n\ngo 1.19\n")
        spec = fake_spec(tmp_path / "t", ["go", "vet", "./..."], {"m_test.go": "package m\n"})
        filled = grade(
            workspace,
            tmp_path / "fill",
            {
                "BENCH_GRADER_SPEC": str(spec),
                "BENCH_GOCACHE": str(cache),
                "BENCH_GOCACHE_WRITABLE": "1",
            },
            task="fake",
        )
        assert "0" == filled.exit, filled.grader_stderr
        assert any(cache.rglob("*-d"))
        if frozen:
            run(["chown", "-R", "0:0", str(cache)])
            run(["chmod", "-R", "a-w", str(cache)])
        return cache

    @pytest.mark.parametrize("frozen", [True, False], ids=["linked", "copied"])
    def test_one_grading_cannot_poison_the_next(self, tmp_path: Path, frozen: bool) -> None:
        cache = self._run_cache(tmp_path, frozen)
        before = tree_digest(cache)
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        env = {"BENCH_GOCACHE": str(cache)}
        spec = fake_spec(tmp_path / "a", ["bash", "-c", self.POISON], {"h.txt": "h\n"})
        first = grade(workspace, tmp_path / "first", {**env, "BENCH_GRADER_SPEC": str(spec)}, "x")
        assert "0" == first.exit, first.grader_stderr
        assert before == tree_digest(cache)
        assert not (tmp_path / "first" / "gocache").exists()
        spec = fake_spec(tmp_path / "b", ["bash", "-c", self.REPORT], {"h.txt": "h\n"})
        second = grade(workspace, tmp_path / "second", {**env, "BENCH_GRADER_SPEC": str(spec)}, "x")
        expected = sorted(
            f"{hashlib.sha256(path.read_bytes()).hexdigest()}  ./{path.relative_to(cache)}"
            for path in cache.rglob("*")
            if path.is_file()
        )
        assert expected == second.stdout.splitlines(), second.grader_stderr

    def test_prepare_fills_then_freezes_the_run_cache(self, tmp_path: Path) -> None:
        """Qualification (base fails with its discriminator, oracle passes) fills the cache."""
        run_dir = tmp_path / "run"
        mounts = tmp_path / "mounts"
        mounts.mkdir()
        done = run(
            [str(LIBEXEC / "bench-prepare"), "kv-rangestream", str(run_dir)],
            {**planned_env(run_dir), "HPBENCH_MOUNT_BASE": str(mounts)},
        )
        assert 0 == done.returncode, done.stderr
        # The module cache sits at a neutral path until the run releases it.
        assert (run_dir / "gomodcache").is_symlink()
        release = run(
            [
                "bash",
                "-c",
                'source "$1"; release_mounts "$2"',
                "release",
                str(LIBEXEC / "bench-lib.sh"),
                str(run_dir),
            ]
        )
        assert 0 == release.returncode, release.stderr
        assert (run_dir / "gomodcache").is_dir() and not (run_dir / "gomodcache").is_symlink()
        assert [] == list(mounts.iterdir())
        assert "base fails with 'has no field or method RangeStream', oracle passes" in done.stderr
        cache = run_dir / "gocache"
        entries = list(cache.rglob("*"))
        assert any(p.name.endswith("-d") for p in entries)
        for path in [cache, *entries]:
            info = path.lstat()
            assert (0, 0) == (info.st_uid, info.st_gid), path
            assert 0 == info.st_mode & 0o222, path
        for name in ("base", "oracle"):
            state = (run_dir / "qualification" / name / "grader.state").read_text()
            assert "outcome=exited\n" in state


class TestLimits:
    def test_memory_hog_is_killed(self, tmp_path: Path) -> None:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        spec = fake_spec(
            tmp_path, ["tail", "/dev/zero"], {"h.txt": "h\n"}, 120, caps={"memory": "96m"}
        )
        started = time.monotonic()
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert time.monotonic() - started < 60
        assert 0 == graded.returncode, graded.stderr
        state = graded.state
        assert "96m" == state["memory"]
        assert "true" == state["oom_killed"] or "137" == graded.exit, state
        assert "oom-killed" == state["outcome"], state

    def test_fork_bomb_is_contained(self, tmp_path: Path) -> None:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        bomb = ["bash", "-c", "f() { f | f & }; f; sleep 60"]
        spec = fake_spec(tmp_path, bomb, {"h.txt": "h\n"}, 5, caps={"pids": "64"})
        started = time.monotonic()
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, task="fake")
        assert time.monotonic() - started < 40
        assert 0 == graded.returncode, graded.stderr
        assert graded.exit in {"124", "137"}
        assert "timeout" == graded.state["outcome"]
        assert "64" == graded.state["pids"]
        leftover = run(["docker", "ps", "-aq", "--filter", "label=org.hpbench.grade=fake"])
        assert "" == leftover.stdout.strip()

    @pytest.mark.parametrize("cap", ["memory", "cpus", "pids"])
    def test_a_spec_without_a_cap_is_refused(self, tmp_path: Path, cap: str) -> None:
        """The caps come only from the checked grader spec: one missing stops the grading
        before any container, naming the spec (a bad GRADER_* value never gets that far:
        the run's settings refuse it by name, tests/settings)."""
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        spec = fake_spec(tmp_path, ["true"], {"h.txt": "h\n"})
        (spec / cap).unlink()
        graded = grade(workspace, tmp_path / "out", {"BENCH_GRADER_SPEC": str(spec)}, "fake")
        assert 1 == graded.returncode
        assert "names no memory, cpus and pids caps" in graded.stderr
        assert not (tmp_path / "out").exists()

    def test_the_environment_does_not_override_the_spec(self, tmp_path: Path) -> None:
        """A GRADER_*-like variable in the environment reaches nothing: the spec rules."""
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        spec = fake_spec(tmp_path, ["true"], {"h.txt": "h\n"}, caps={"pids": "128"})
        env = {"BENCH_GRADER_SPEC": str(spec), "BENCH_GRADER_PIDS": "70000"}
        graded = grade(workspace, tmp_path / "out", env, "fake")
        assert 0 == graded.returncode, graded.stderr
        assert "128" == graded.state["pids"]

    def test_docker_failure_is_recorded(self, tmp_path: Path) -> None:
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        spec = fake_spec(tmp_path, ["true"], {"h.txt": "h\n"})
        env = {"BENCH_GRADER_SPEC": str(spec), "HPBENCH_IMAGE_TAG": "no-such-tag"}
        graded = grade(workspace, tmp_path / "out", env, "fake")
        assert 1 == graded.returncode
        assert "125" == graded.exit
        assert "docker-failed" == graded.state["outcome"]
        assert "false" == graded.state["container_created"]
