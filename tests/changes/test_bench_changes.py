"""benchmarks/libexec/bench-changes: the literal diff, with nothing of the agent's ever run.

The hostile cases plant everything that would execute code if git ran in the
work tree (or read the machine's configuration) and prove the marker file each
one would write never appears; the round trip proves the diff is literal by
applying it onto a copy of the base and finding the work tree's bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from hpbench.changes import compare

from .conftest import BENCH_CHANGES, copy_without_git, isolated_git_env, run_bench_changes

HOSTILE_ATTRIBUTES = b"* filter=evil diff=evil text eol=crlf working-tree-encoding=UTF-16\n"
HOOKS = (
    "pre-commit",
    "post-commit",
    "post-checkout",
    "post-index-change",
    "pre-auto-gc",
    "fsmonitor-watchman",
    "reference-transaction",
    "post-rewrite",
)


def evil_script(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that records that it ran; returns it and the marker it writes."""
    marker = tmp_path / "marker"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >>'{marker}'\n")
    script.chmod(0o755)
    return script, marker


def plant_hostile_repository(work: Path, tmp_path: Path) -> Path:
    """Every code-running git setting an agent could write into its own .git; returns
    the marker path any of them would write."""
    script, marker = evil_script(tmp_path)
    included = tmp_path / "included.config"
    included.write_text(f"[core]\n\tfsmonitor = {script}\n[diff]\n\texternal = {script}\n")
    with (work / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {script}\n\tpager = {script}\n\teditor = {script}\n"
            f"\thooksPath = {work / '.git' / 'hooks'}\n"
            f'[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n\trequired = true\n'
            f'[diff "evil"]\n\ttextconv = {script}\n\tcommand = {script}\n'
            f"[diff]\n\texternal = {script}\n"
            f'[includeIf "gitdir:/"]\n\tpath = {included}\n'
        )
    hooks = work / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        shutil.copy2(script, hooks / hook)
    (work / ".git" / "info").mkdir(exist_ok=True)
    (work / ".git" / "info" / "attributes").write_bytes(HOSTILE_ATTRIBUTES)
    (work / ".gitattributes").write_bytes(HOSTILE_ATTRIBUTES)
    return marker


def apply_patch(patch: Path, target: Path, home: Path) -> subprocess.CompletedProcess[bytes]:
    """``git apply`` of ``patch`` in ``target``, a plain directory outside any repository."""
    env = {**isolated_git_env(home), "GIT_CEILING_DIRECTORIES": str(target.parent)}
    return subprocess.run(
        ["git", "apply", "--binary", "--whitespace=nowarn", str(patch)],
        cwd=target,
        env=env,
        capture_output=True,
        check=False,
        timeout=60,
    )


def tree_state(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry under ``root`` (its .git included) with mode, mtime and content."""
    state = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if stat.S_ISREG(info.st_mode):
            content = path.read_bytes()
        elif stat.S_ISLNK(info.st_mode):
            content = os.fsencode(path.readlink())
        else:
            content = b""
        state[str(path)] = (info.st_mode, info.st_mtime_ns, content)
    return state


def make_every_kind_of_edit(work: Path) -> None:
    (work / "README.md").write_bytes(b"# demo\n\nEdited text.\n")
    blob = bytearray((work / "data/blob.bin").read_bytes())
    blob[100:110] = b"\0\xff" * 5
    (work / "data/blob.bin").write_bytes(bytes(blob))
    (work / "data/new.bin").write_bytes(b"\0\1\2binary\0\n\xfe" * 50)
    (work / "doomed.txt").unlink()
    (work / "old_name.txt").rename(work / "new_name.txt")
    (work / "link").unlink()
    (work / "link").symlink_to("src/main.go")
    (work / "newlink").symlink_to("../somewhere/else")
    (work / "README.md").chmod(0o755)
    (work / "run.sh").chmod(0o644)
    (work / "deep" / "er").mkdir(parents=True)
    (work / "deep" / "er" / "file.txt").write_bytes(b"no newline at end")
    (work / "crlf.txt").write_bytes(b"one\r\nTWO\r\n")
    (work / os.fsdecode(b"caf\xe9 new\nline.txt")).write_bytes(b"odd name\n")
    (work / "src" / "main.go").unlink()
    (work / "src" / "main.go").symlink_to("../README.md")


class TestRoundTrip:
    def test_the_diff_applied_to_base_reproduces_work(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        make_every_kind_of_edit(work)
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out)
        assert 0 == result.returncode, result.stderr
        patch = out / "diff.patch"
        assert b"GIT binary patch" in patch.read_bytes()
        target = copy_without_git(base, tmp_path / "applied")
        applied = apply_patch(patch, target, tmp_path / "apply-home")
        assert 0 == applied.returncode, applied.stderr
        assert [] == compare(target, work)
        assert (work / "data/new.bin").read_bytes() == (target / "data/new.bin").read_bytes()
        assert Path("../somewhere/else") == (target / "newlink").readlink()
        assert os.access(target / "README.md", os.X_OK)

    def test_nothing_changed_gives_an_empty_diff(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out)
        assert 0 == result.returncode, result.stderr
        assert b"" == (out / "diff.patch").read_bytes()
        assert b"" == (out / "changed-paths.z").read_bytes()

    def test_a_rename_shows_as_deletion_and_addition(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        (work / "old_name.txt").rename(work / "new_name.txt")
        out = tmp_path / "out"
        assert 0 == run_bench_changes(base, work, out).returncode
        patch = (out / "diff.patch").read_bytes()
        assert b"deleted file mode 100644" in patch
        assert b"new file mode 100644" in patch
        assert b"rename" not in patch
        assert b"new_name.txt\0old_name.txt\0" == (out / "changed-paths.z").read_bytes()


class TestHostileWorkTree:
    def test_the_planted_repository_is_really_hostile(self, work: Path, tmp_path: Path) -> None:
        """Control: the old way (git add in the work tree) runs the agent's code."""
        marker = plant_hostile_repository(work, tmp_path)
        (work / "README.md").write_bytes(b"edited\n")
        subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", str(work), "add", "-A", "-f"],
            env=isolated_git_env(tmp_path / "control-home"),
            capture_output=True,
            check=False,
            timeout=60,
        )
        assert marker.exists()

    def test_nothing_planted_runs_and_bytes_stay_literal(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        marker = plant_hostile_repository(work, tmp_path)
        (work / "crlf.txt").write_bytes(b"one\r\nTWO\r\n")
        (work / "README.md").write_bytes(b"# demo\n\nlf only\n")
        before_work, before_base = tree_state(work), tree_state(base)
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out)
        assert 0 == result.returncode, result.stderr
        assert not marker.exists(), marker.read_text()
        assert before_work == tree_state(work)
        assert before_base == tree_state(base)
        patch = (out / "diff.patch").read_bytes()
        assert b"+TWO\r\n" in patch
        assert b"+lf only\n" in patch
        assert b"diff --git a/.gitattributes b/.gitattributes" in patch
        assert b"diff --git a/.git/" not in patch
        target = copy_without_git(base, tmp_path / "applied")
        applied = apply_patch(out / "diff.patch", target, tmp_path / "apply-home")
        assert 0 == applied.returncode, applied.stderr
        assert b"one\r\nTWO\r\n" == (target / "crlf.txt").read_bytes()
        assert HOSTILE_ATTRIBUTES == (target / ".gitattributes").read_bytes()
        assert not marker.exists()

    def test_work_is_never_passed_to_git(self, base: Path, work: Path, tmp_path: Path) -> None:
        """A git on PATH that logs its arguments and directory never sees WORK."""
        real_git = shutil.which("git")
        assert real_git is not None
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        log = tmp_path / "git.log"
        (bin_dir / "git").write_text(
            f'#!/bin/sh\nprintf \'%s\\n\' "$PWD" "$GIT_DIR" "$@" >>\'{log}\'\n'
            f'exec {real_git} "$@"\n'
        )
        (bin_dir / "git").chmod(0o755)
        plant_hostile_repository(work, tmp_path)
        (work / "README.md").write_bytes(b"edited\n")
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        result = run_bench_changes(base, work, tmp_path / "out", env=env)
        assert 0 == result.returncode, result.stderr
        calls = log.read_text()
        assert "fast-import" in calls
        assert "diff-tree" in calls
        assert str(work) not in calls
        assert str(base) not in calls

    def test_a_symlink_to_a_host_file_shows_only_its_target(
        self, base: Path, work: Path, tmp_path: Path, outside: Path
    ) -> None:
        before = (outside.read_bytes(), outside.stat().st_mtime_ns)
        (work / "leak").symlink_to(outside)
        (work / "loop").symlink_to("loop")
        (work / "hostdir").symlink_to(outside.parent, target_is_directory=True)
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out)
        assert 0 == result.returncode, result.stderr
        patch = (out / "diff.patch").read_bytes()
        assert b"new file mode 120000" in patch
        assert b"+" + os.fsencode(outside) + b"\n" in patch
        assert b"HOST-SECRET-CONTENT" not in patch
        assert b"HOST-SECRET-CONTENT" not in (out / "changes.fi").read_bytes()
        assert before == (outside.read_bytes(), outside.stat().st_mtime_ns)
        assert b"hostdir\0leak\0loop\0" == (out / "changed-paths.z").read_bytes()

    def test_a_fifo_does_not_hang_the_script(self, base: Path, work: Path, tmp_path: Path) -> None:
        os.mkfifo(work / "pipe")
        (work / "README.md").write_bytes(b"edited\n")
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out)
        assert 0 == result.returncode, result.stderr
        assert b"README.md\0pipe\0" == (out / "changed-paths.z").read_bytes()
        assert b"pipe" not in (out / "diff.patch").read_bytes()

    def test_a_nested_dot_git_is_listed_but_kept_out_of_the_diff(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        (work / "sub" / ".git").mkdir(parents=True)
        (work / "sub" / ".git" / "config").write_bytes(b"[core]\n\tfsmonitor = evil\n")
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out)
        assert 0 == result.returncode, result.stderr
        assert b"sub/.git/config\0" == (out / "changed-paths.z").read_bytes()
        [change] = json.loads((out / "changes.json").read_text())["changes"]
        assert ("sub/.git/config", False) == (change["path"], change["in_diff"])
        assert b"" == (out / "diff.patch").read_bytes()

    @pytest.mark.parametrize("damage", ["deleted", "file", "extra-commit"])
    def test_damaging_dot_git_changes_nothing_recorded(
        self, base: Path, work: Path, tmp_path: Path, damage: str
    ) -> None:
        (work / "README.md").write_bytes(b"edited\n")
        plain = tmp_path / "plain"
        assert 0 == run_bench_changes(base, work, plain).returncode
        if damage == "extra-commit":
            env = isolated_git_env(tmp_path / "agent-home")
            subprocess.run(
                ["git", "-C", str(work), "commit", "-qam", "hide", "--no-verify"],
                env=env,
                check=True,
                capture_output=True,
            )
        else:
            shutil.rmtree(work / ".git")
            if damage == "file":
                (work / ".git").write_bytes(b"gitdir: /nowhere\n")
        damaged = tmp_path / "damaged"
        assert 0 == run_bench_changes(base, work, damaged).returncode
        for name in ("changed-paths.z", "changes.json", "diff.patch"):
            assert (plain / name).read_bytes() == (damaged / name).read_bytes(), name


class TestHostileMachineConfiguration:
    def test_the_callers_git_configuration_is_never_read(
        self, base: Path, work: Path, tmp_path: Path
    ) -> None:
        script, marker = evil_script(tmp_path)
        home = tmp_path / "home"
        templates = tmp_path / "templates"
        (templates / "hooks").mkdir(parents=True)
        for hook in HOOKS:
            shutil.copy2(script, templates / "hooks" / hook)
        attributes = tmp_path / "attributes"
        attributes.write_bytes(HOSTILE_ATTRIBUTES)
        hostile_config = (
            f"[diff]\n\tnoprefix = true\n\texternal = {script}\n\tmnemonicPrefix = true\n"
            f"[alias]\n\tdiff-tree = !{script}\n\tfast-import = !{script}\n"
            f"[core]\n\tpager = {script}\n\tfsmonitor = {script}\n"
            f"\thooksPath = {templates / 'hooks'}\n\tattributesFile = {attributes}\n"
            f'[diff "evil"]\n\ttextconv = {script}\n\tcommand = {script}\n'
            f'[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n'
            f"[init]\n\ttemplateDir = {templates}\n"
            f"[color]\n\tui = always\n\tdiff = always\n"
        )
        home.mkdir()
        (home / ".gitconfig").write_text(hostile_config)
        (home / ".config" / "git").mkdir(parents=True)
        (home / ".config" / "git" / "config").write_text(hostile_config)
        (home / ".config" / "git" / "attributes").write_bytes(HOSTILE_ATTRIBUTES)
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "GIT_CONFIG_PARAMETERS": "'diff.noprefix'='true'",
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "diff.external",
            "GIT_CONFIG_VALUE_0": str(script),
            "GIT_EXTERNAL_DIFF": str(script),
            "GIT_PAGER": str(script),
            "TMPDIR": str(tmp_path / "tmp"),
        }
        (tmp_path / "tmp").mkdir()
        (work / "README.md").write_bytes(b"edited\r\n")
        out = tmp_path / "out"
        result = run_bench_changes(base, work, out, env=env)
        assert 0 == result.returncode, result.stderr
        assert not marker.exists(), marker.read_text()
        patch = (out / "diff.patch").read_bytes()
        assert patch.startswith(b"diff --git a/README.md b/README.md\n")
        assert b"+edited\r\n" in patch
        assert b"\x1b[" not in patch
        assert [] == list((tmp_path / "tmp").iterdir()), "the private repository was left behind"


class TestUsage:
    def test_missing_work_fails_and_names_it(self, base: Path, tmp_path: Path) -> None:
        missing = tmp_path / "gone"
        result = run_bench_changes(base, missing, tmp_path / "out")
        assert 0 != result.returncode
        assert str(missing).encode() in result.stderr
        assert not (tmp_path / "out" / "diff.patch").exists()

    def test_wrong_argument_count_is_refused(self, base: Path) -> None:
        usage = subprocess.run(
            [str(BENCH_CHANGES), str(base)], capture_output=True, check=False, timeout=60
        )
        assert 0 != usage.returncode
        assert b"usage: bench-changes BASE WORK OUT_DIR" in usage.stderr
