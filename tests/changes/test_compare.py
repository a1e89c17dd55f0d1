"""hpbench.changes.compare: what counts as a change, and what is never followed or opened."""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

import pytest

from hpbench.changes import (
    Change,
    Kind,
    Status,
    compare,
    git_can_hold_path,
    quote_path,
    write_fast_import,
)
from hpbench.errors import ContractError

from .conftest import GitRunner


def summary(changes: list[Change]) -> list[tuple[bytes, str]]:
    return [(change.path, change.status.value) for change in changes]


def by_path(changes: list[Change]) -> dict[bytes, Change]:
    return {change.path: change for change in changes}


def plain_edit(work: Path) -> None:
    (work / "README.md").write_bytes(b"# demo\n\nEdited.\n")


PLAIN_EDIT = [(b"README.md", "modified")]


class TestWhatIsAChange:
    def test_identical_trees_have_no_changes(self, base: Path, work: Path) -> None:
        assert [] == compare(base, work)

    def test_an_edit_is_modified(self, base: Path, work: Path) -> None:
        plain_edit(work)
        [change] = compare(base, work)
        assert (b"README.md", Status.MODIFIED) == (change.path, change.status)
        assert (Kind.FILE, Kind.FILE) == (change.before_kind, change.after_kind)
        assert ("100644", "100644") == (change.before_mode, change.after_mode)
        assert change.in_diff

    def test_same_size_different_bytes_is_a_change(self, base: Path, work: Path) -> None:
        blob = bytearray((base / "data/blob.bin").read_bytes())
        blob[-1] ^= 0xFF
        (work / "data/blob.bin").write_bytes(bytes(blob))
        assert [(b"data/blob.bin", "modified")] == summary(compare(base, work))

    def test_rewriting_the_same_bytes_is_no_change(self, base: Path, work: Path) -> None:
        (work / "README.md").write_bytes((base / "README.md").read_bytes())
        os.utime(work / "README.md", (0, 0))
        assert [] == compare(base, work)

    def test_a_rename_lists_both_paths(self, base: Path, work: Path) -> None:
        (work / "old_name.txt").rename(work / "new_name.txt")
        assert [(b"new_name.txt", "added"), (b"old_name.txt", "deleted")] == summary(
            compare(base, work)
        )

    def test_deletion_and_addition(self, base: Path, work: Path) -> None:
        (work / "doomed.txt").unlink()
        (work / "src/extra.go").write_bytes(b"package main\n")
        changes = by_path(compare(base, work))
        assert Status.DELETED is changes[b"doomed.txt"].status
        assert (Kind.FILE, None) == (
            changes[b"doomed.txt"].before_kind,
            changes[b"doomed.txt"].after_kind,
        )
        assert Status.ADDED is changes[b"src/extra.go"].status

    def test_chmod_x_is_a_change(self, base: Path, work: Path) -> None:
        (work / "README.md").chmod(0o755)
        [change] = compare(base, work)
        assert (Status.MODIFIED, "100644", "100755") == (
            change.status,
            change.before_mode,
            change.after_mode,
        )

    def test_chmod_minus_x_is_a_change(self, base: Path, work: Path) -> None:
        (work / "run.sh").chmod(0o644)
        [change] = compare(base, work)
        assert ("100755", "100644") == (change.before_mode, change.after_mode)

    def test_file_to_symlink_is_a_change(self, base: Path, work: Path) -> None:
        (work / "README.md").unlink()
        (work / "README.md").symlink_to("src/main.go")
        [change] = compare(base, work)
        assert (Kind.FILE, Kind.SYMLINK, "120000") == (
            change.before_kind,
            change.after_kind,
            change.after_mode,
        )

    def test_a_new_symlink_target_is_a_change(self, base: Path, work: Path) -> None:
        (work / "link").unlink()
        (work / "link").symlink_to("src/main.go")
        assert [(b"link", "modified")] == summary(compare(base, work))

    def test_file_to_directory_is_a_deletion_and_an_addition(self, base: Path, work: Path) -> None:
        (work / "doomed.txt").unlink()
        (work / "doomed.txt").mkdir()
        (work / "doomed.txt" / "inner").write_bytes(b"x")
        assert [(b"doomed.txt", "deleted"), (b"doomed.txt/inner", "added")] == summary(
            compare(base, work)
        )

    def test_empty_directories_are_not_content(self, base: Path, work: Path) -> None:
        (work / "empty" / "deeper").mkdir(parents=True)
        assert [] == compare(base, work)

    def test_changes_are_sorted_by_bytes(self, base: Path, work: Path) -> None:
        for name in ("b", "a/z", "A", "a.b", "a-"):
            path = work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")
        paths = [change.path for change in compare(base, work)]
        assert sorted(paths) == paths


class TestSymlinksAreNeverFollowed:
    def test_link_to_a_host_file_is_recorded_as_its_target(
        self, base: Path, work: Path, outside: Path
    ) -> None:
        before = (outside.read_bytes(), outside.stat().st_mtime_ns)
        (work / "leak").symlink_to(outside)
        (work / "README.md").unlink()
        (work / "README.md").symlink_to(outside)
        changes = by_path(compare(base, work))
        assert Kind.SYMLINK is changes[b"leak"].after_kind
        assert Kind.SYMLINK is changes[b"README.md"].after_kind
        stream = io.BytesIO()
        write_fast_import(list(changes.values()), base, work, stream)
        assert os.fsencode(outside) in stream.getvalue()
        assert b"HOST-SECRET-CONTENT" not in stream.getvalue()
        assert before == (outside.read_bytes(), outside.stat().st_mtime_ns)

    def test_symlink_loops_are_recorded_not_followed(self, base: Path, work: Path) -> None:
        (work / "self").symlink_to("self")
        (work / "ping").symlink_to("pong")
        (work / "pong").symlink_to("ping")
        changes = by_path(compare(base, work))
        assert {b"self", b"ping", b"pong"} == set(changes)
        assert all(change.after_kind is Kind.SYMLINK for change in changes.values())

    def test_a_directory_symlink_is_not_walked(self, base: Path, work: Path, outside: Path) -> None:
        (work / "hostdir").symlink_to(outside.parent, target_is_directory=True)
        (work / "innerdir").symlink_to("src", target_is_directory=True)
        assert [(b"hostdir", "added"), (b"innerdir", "added")] == summary(compare(base, work))

    def test_a_symlinked_intermediate_directory_is_refused_when_reading(
        self, base: Path, work: Path, outside: Path
    ) -> None:
        """Files are reopened one component at a time: a directory swapped for a
        symlink after the walk is refused, not followed."""
        plain_edit(work)
        changes = compare(base, work)
        shutil.rmtree(work / "src")
        (work / "src").symlink_to(outside.parent, target_is_directory=True)
        (outside.parent / "main.go").write_bytes(b"host file\n")
        write_fast_import(changes, base, work, io.BytesIO())  # README.md only: fine
        swapped = Change(
            path=b"src/main.go",
            status=Status.MODIFIED,
            before_kind=Kind.FILE,
            after_kind=Kind.FILE,
            before_mode="100644",
            after_mode="100644",
        )
        with pytest.raises(ContractError) as caught:
            write_fast_import([swapped], base, work, io.BytesIO())
        assert "src/main.go" in str(caught.value)


class TestSpecialFiles:
    def test_a_fifo_never_hangs_and_is_listed_as_special(self, base: Path, work: Path) -> None:
        os.mkfifo(work / "pipe")
        started = time.monotonic()
        [change] = compare(base, work)
        assert time.monotonic() - started < 10
        assert (b"pipe", Status.ADDED, Kind.FIFO, None) == (
            change.path,
            change.status,
            change.after_kind,
            change.after_mode,
        )
        assert not change.in_diff

    def test_a_file_replaced_by_a_fifo_is_modified_and_shows_as_a_deletion(
        self, base: Path, work: Path
    ) -> None:
        (work / "doomed.txt").unlink()
        os.mkfifo(work / "doomed.txt")
        [change] = compare(base, work)
        assert (Status.MODIFIED, Kind.FILE, Kind.FIFO) == (
            change.status,
            change.before_kind,
            change.after_kind,
        )
        assert change.in_diff
        stream = io.BytesIO()
        write_fast_import([change], base, work, stream)
        base_side, work_side = stream.getvalue().split(b"commit refs/heads/work\n")
        assert b'"doomed.txt"' in base_side
        assert b'"doomed.txt"' not in work_side

    def test_fifos_on_both_sides_are_no_change(self, base: Path, work: Path) -> None:
        os.mkfifo(base / "pipe")
        os.mkfifo(work / "pipe")
        assert [] == compare(base, work)


class TestGitMetadata:
    """The top-level .git is metadata and skipped; whatever the agent did to it, the
    change list is that of the tree alone."""

    def test_deleting_dot_git_hides_nothing(self, base: Path, work: Path) -> None:
        plain_edit(work)
        shutil.rmtree(work / ".git")
        assert PLAIN_EDIT == summary(compare(base, work))

    def test_dot_git_replaced_by_a_file_hides_nothing(self, base: Path, work: Path) -> None:
        plain_edit(work)
        shutil.rmtree(work / ".git")
        (work / ".git").write_bytes(b"gitdir: /elsewhere\n")
        assert PLAIN_EDIT == summary(compare(base, work))

    def test_dot_git_replaced_by_a_symlink_hides_nothing(
        self, base: Path, work: Path, outside: Path
    ) -> None:
        plain_edit(work)
        shutil.rmtree(work / ".git")
        (work / ".git").symlink_to(outside.parent)
        assert PLAIN_EDIT == summary(compare(base, work))

    def test_committing_the_edit_hides_nothing(
        self, base: Path, work: Path, git: GitRunner
    ) -> None:
        plain_edit(work)
        git(work, "commit", "-q", "-a", "--no-verify", "-m", "hide it")
        git(work, "commit", "-q", "--allow-empty", "--no-verify", "-m", "and more")
        assert PLAIN_EDIT == summary(compare(base, work))

    def test_rewritten_history_hides_nothing(self, base: Path, work: Path, git: GitRunner) -> None:
        plain_edit(work)
        git(work, "checkout", "-q", "--orphan", "fresh")
        git(work, "add", "-A")
        git(work, "commit", "-q", "--no-verify", "-m", "a new root")
        git(work, "branch", "-q", "-D", "main")
        git(work, "branch", "-q", "-m", "main")
        assert PLAIN_EDIT == summary(compare(base, work))

    def test_a_stash_hides_nothing(self, base: Path, work: Path, git: GitRunner) -> None:
        plain_edit(work)
        (work / "src/main.go").write_bytes(b"package main // stashed away\n")
        git(work, "stash", "push", "-q", "--", "src/main.go")
        assert git(work, "stash", "list").stdout
        assert PLAIN_EDIT == summary(compare(base, work))

    def test_base_dot_git_is_skipped_too(self, base: Path, tmp_path: Path) -> None:
        bare = tmp_path / "bare"
        bare.mkdir()
        for name in ("README.md", "crlf.txt"):
            shutil.copy2(base / name, bare / name)
        changes = summary(compare(base, bare))
        assert all(not path.startswith(b".git") for path, _ in changes)

    def test_a_nested_dot_git_is_content_but_not_in_the_diff(self, base: Path, work: Path) -> None:
        (work / "sub" / ".git").mkdir(parents=True)
        (work / "sub" / ".git" / "config").write_bytes(b"[core]\n\tfsmonitor = evil\n")
        (work / "sub" / ".GIT").mkdir()
        (work / "sub" / ".GIT" / "HEAD").write_bytes(b"ref: refs/heads/main\n")
        changes = by_path(compare(base, work))
        assert {b"sub/.git/config", b"sub/.GIT/HEAD"} == set(changes)
        assert not any(change.in_diff for change in changes.values())
        stream = io.BytesIO()
        write_fast_import(list(changes.values()), base, work, stream)
        assert b"fsmonitor" not in stream.getvalue()
        assert b".git" not in stream.getvalue().lower()


class TestPaths:
    def test_paths_are_bytes_exact(self, base: Path, work: Path) -> None:
        odd = [b"caf\xe9.txt", b"new\nline.txt", b'quote"back\\slash', b"tab\there"]
        for name in odd:
            (work / os.fsdecode(name)).write_bytes(b"odd\n")
        assert sorted(odd) == [change.path for change in compare(base, work)]

    @pytest.mark.parametrize(
        ("path", "holdable"),
        [
            (b"a/b", True),
            (b".gitignore", True),
            (b"x.git/y", True),
            (b".git", False),
            (b"sub/.git/config", False),
            (b"sub/.Git/config", False),
            (b"a//b", False),
            (b"/a", False),
            (b"a/", False),
        ],
    )
    def test_paths_git_can_hold(self, path: bytes, holdable: bool) -> None:
        assert holdable is git_can_hold_path(path)

    def test_quote_path(self) -> None:
        assert b'"plain/name.go"' == quote_path(b"plain/name.go")
        assert b'"a\\"b\\\\c"' == quote_path(b'a"b\\c')
        assert b'"new\\012line caf\\351"' == quote_path(b"new\nline caf\xe9")


class TestErrorsNameThePath:
    def test_missing_base(self, tmp_path: Path, work: Path) -> None:
        missing = tmp_path / "no-such-base"
        with pytest.raises(ContractError) as caught:
            compare(missing, work)
        assert str(missing) in str(caught.value)
        assert "changes.tree.missing" == caught.value.findings[0].code

    def test_missing_work(self, tmp_path: Path, base: Path) -> None:
        missing = tmp_path / "no-such-work"
        with pytest.raises(ContractError) as caught:
            compare(base, missing)
        assert str(missing) in str(caught.value)

    def test_work_that_is_a_file(self, tmp_path: Path, base: Path) -> None:
        file = tmp_path / "a-file"
        file.write_bytes(b"x")
        with pytest.raises(ContractError) as caught:
            compare(base, file)
        assert str(file) in str(caught.value)
        assert "changes.tree.not-directory" == caught.value.findings[0].code

    def test_work_that_is_a_symlink_is_refused(self, tmp_path: Path, base: Path) -> None:
        link = tmp_path / "linked-work"
        link.symlink_to(base, target_is_directory=True)
        with pytest.raises(ContractError) as caught:
            compare(base, link)
        assert str(link) in str(caught.value)

    def test_unreadable_file(self, base: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A file that cannot be opened is an error naming it (simulated: root reads all)."""
        real_open = os.open

        def refusing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
            if path == b"README.md":
                raise PermissionError(13, "Permission denied")
            return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

        plain_edit(work)
        (work / "README.md").write_bytes((base / "README.md").read_bytes())
        monkeypatch.setattr("hpbench.changes.tree.os.open", refusing_open)
        with pytest.raises(ContractError) as caught:
            compare(base, work)
        assert f"{base}/README.md" in str(caught.value)
        assert "changes.unreadable" == caught.value.findings[0].code

    def test_too_deep(self, base: Path, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr("hpbench.changes.tree.MAX_DEPTH", 3)
        (work / "a" / "b" / "c" / "d").mkdir(parents=True)
        with pytest.raises(ContractError) as caught:
            compare(base, work)
        assert "a/b/c" in str(caught.value)
