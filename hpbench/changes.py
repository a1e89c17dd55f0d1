"""What an attempt changed, found by comparing its workspace with a pristine base tree.

The workspace is hostile: the agent wrote every byte of it, including its
``.git``. So no git (or any other tool that reads configuration, attributes or
hooks) ever looks at it. Instead both trees are walked here with directory
file descriptors and ``O_NOFOLLOW``: a symlink is recorded as its target text
and never followed, only regular files are ever opened (non-blocking, so a
FIFO that slipped in cannot hang the walk), and the top-level ``.git`` of each
tree is skipped because it is repository metadata, not task content. A
``.git`` anywhere deeper is content like any other file.

A path is an entry that is not a directory: a regular file (bytes and
executable bit), a symlink (target text) or a special file (FIFO, socket,
device: only its kind). Directories are containers, so an empty directory is
not content. A path changed when it was added, deleted, or its kind,
executable bit, bytes or link target differ. A rename is a deletion plus an
addition. Paths are bytes, exactly as the file system holds them.

:func:`write_fast_import` turns the changed paths into a ``git fast-import``
stream of two commits (the base side and the work side of just those paths),
which ``benchmarks/libexec/bench-changes`` imports into a private repository
to produce the literal, binary-capable diff.
"""

from __future__ import annotations

import base64
import enum
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from hpbench.errors import ContractError
from hpbench.findings import Finding

# Big enough to keep system calls few, small enough that two buffers of it are nothing.
CHUNK_SIZE = 1 << 20
# Each directory level holds one descriptor while it is walked. No task tree comes
# near this; an agent that nests deeper gets an error, not an exhausted process.
MAX_DEPTH = 256

BASE_REF = b"refs/heads/base"
WORK_REF = b"refs/heads/work"
# A fixed identity and date: the same changes always give the same commits.
_COMMITTER = b"committer hpbench <changes@hpbench.invalid> 0 +0000\n"

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
# O_NOCTTY: a terminal device must never become this process's controlling terminal.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class Kind(enum.Enum):
    """What a path is, without following it."""

    FILE = "file"
    SYMLINK = "symlink"
    FIFO = "fifo"
    SOCKET = "socket"
    CHAR_DEVICE = "char-device"
    BLOCK_DEVICE = "block-device"
    UNKNOWN = "unknown"

    @property
    def git_can_hold(self) -> bool:
        """Regular files and symlinks have a git mode; special files have none."""
        return self in (Kind.FILE, Kind.SYMLINK)


class Status(enum.Enum):
    """How a path differs between base and work."""

    ADDED = "added"
    DELETED = "deleted"
    MODIFIED = "modified"


GIT_MODE_FILE = "100644"
GIT_MODE_EXECUTABLE = "100755"
GIT_MODE_SYMLINK = "120000"


@attrs.frozen
class Entry:
    """One side of a path: its kind; a regular file's executable bit and size; a link's target."""

    kind: Kind
    executable: bool = False
    size: int = 0
    target: bytes | None = None

    @property
    def git_mode(self) -> str | None:
        """The mode git would record, or None for a special file git cannot hold."""
        if self.kind is Kind.FILE:
            return GIT_MODE_EXECUTABLE if self.executable else GIT_MODE_FILE
        if self.kind is Kind.SYMLINK:
            return GIT_MODE_SYMLINK
        return None


@attrs.frozen
class Change:
    """One changed path.

    The ``before_*`` fields are None for an addition and the ``after_*`` fields for a
    deletion; a mode is also None on a side that is a special file.
    """

    path: bytes
    status: Status
    before_kind: Kind | None
    after_kind: Kind | None
    before_mode: str | None
    after_mode: str | None

    @property
    def in_diff(self) -> bool:
        """Whether the path appears in the fast-import stream and so in the diff.

        A path git cannot hold is left out; a special file has no git form, so
        a side that is one shows as absent (a file replaced by a FIFO is a deletion
        in the diff), and a path that is special on both sides is not in it at all.
        """
        sides = (self.before_kind, self.after_kind)
        return git_can_hold_path(self.path) and any(k is not None and k.git_can_hold for k in sides)


CHANGES_SCHEMA = "hpbench.changes.v1"


def changes_document(changes: Iterable[Change]) -> dict[str, Any]:
    """The ``changes.json`` document: one object per change, in path order.

    ``path`` is text: the path decoded as UTF-8, with any byte that is not UTF-8
    written as ``\\xNN``. That text alone can be ambiguous, so ``path_base64``
    holds the exact bytes whenever they are not valid UTF-8 (null otherwise).
    """
    return {"schema": CHANGES_SCHEMA, "changes": [change_to_json(c) for c in changes]}


def change_to_json(change: Change) -> dict[str, Any]:
    """One change as a JSON object; kinds and modes are null on the absent side."""
    try:
        change.path.decode("utf-8")
        exact = None
    except UnicodeDecodeError:
        exact = base64.b64encode(change.path).decode("ascii")
    return {
        "path": display_path(change.path),
        "path_base64": exact,
        "status": change.status.value,
        "before_kind": None if change.before_kind is None else change.before_kind.value,
        "after_kind": None if change.after_kind is None else change.after_kind.value,
        "before_mode": change.before_mode,
        "after_mode": change.after_mode,
        "in_diff": change.in_diff,
    }


def changed_paths_z(changes: Iterable[Change]) -> bytes:
    """Every changed path, sorted by its bytes, each followed by a NUL."""
    return b"".join(path + b"\0" for path in sorted(change.path for change in changes))


def git_can_hold_path(path: bytes) -> bool:
    """False for a path a git tree must not hold: an empty component or any ``.git``.

    ``.git`` is compared case-insensitively because git refuses ``.GIT`` too on
    case-insensitive file systems, and a patch carrying one could write into a
    repository's metadata wherever it is applied.
    """
    components = path.split(b"/")
    return all(component and component.lower() != b".git" for component in components)


def compare(base: Path, work: Path) -> list[Change]:
    """Every path that differs between ``base`` and ``work``, sorted by its bytes."""
    with _Tree(base) as base_tree, _Tree(work) as work_tree:
        before = base_tree.inventory()
        after = work_tree.inventory()
        changes: list[Change] = []
        for path in sorted(before.keys() | after.keys()):
            old, new = before.get(path), after.get(path)
            if old is None or new is None:
                status = Status.ADDED if old is None else Status.DELETED
            elif _differs(path, old, new, base_tree, work_tree):
                status = Status.MODIFIED
            else:
                continue
            changes.append(
                Change(
                    path=path,
                    status=status,
                    before_kind=None if old is None else old.kind,
                    after_kind=None if new is None else new.kind,
                    before_mode=None if old is None else old.git_mode,
                    after_mode=None if new is None else new.git_mode,
                )
            )
        return changes


def write_fast_import(changes: Iterable[Change], base: Path, work: Path, out: BinaryIO) -> None:
    """Write a ``git fast-import`` stream of the changed paths' two sides to ``out``.

    ``refs/heads/base`` holds the base side of every path that is in the diff,
    ``refs/heads/work`` the work side; both are root commits, so
    ``git diff-tree -r`` between them is exactly the change. The stream ends with
    ``done``: ``git fast-import --done`` refuses a stream that was cut short.
    """
    wanted = [change for change in changes if change.in_diff]
    sides = ((BASE_REF, base, True), (WORK_REF, work, False))
    for ref, root, is_before in sides:
        with _Tree(root) as tree:
            out.write(b"commit " + ref + b"\n" + _COMMITTER)
            message = ref.rsplit(b"/", 1)[-1] + b"\n"
            out.write(b"data %d\n%s" % (len(message), message))
            for change in wanted:
                kind = change.before_kind if is_before else change.after_kind
                mode = change.before_mode if is_before else change.after_mode
                if kind is None or mode is None:
                    continue
                header = b"M " + mode.encode("ascii") + b" inline " + quote_path(change.path)
                out.write(header + b"\n")
                if kind is Kind.SYMLINK:
                    target = tree.read_link(change.path)
                    out.write(b"data %d\n%s\n" % (len(target), target))
                else:
                    tree.copy_file(change.path, out)
            out.write(b"\n")
    out.write(b"done\n")


def quote_path(path: bytes) -> bytes:
    """``path`` in C-style quotes, as fast-import reads it whatever bytes it holds.

    Quoting is always allowed and required for a leading quote or a newline;
    quoting every path keeps one rule. Backslash and quote are escaped, every byte
    outside printable ASCII becomes a three-digit octal escape.
    """
    quoted = bytearray(b'"')
    for byte in path:
        if byte in (0x22, 0x5C):
            quoted += b"\\" + bytes([byte])
        elif 0x20 <= byte < 0x7F:
            quoted.append(byte)
        else:
            quoted += b"\\%03o" % byte
    quoted += b'"'
    return bytes(quoted)


def display_path(path: bytes) -> str:
    """``path`` as printable text; bytes that are not UTF-8 appear as ``\\xNN``."""
    return path.decode("utf-8", "backslashreplace")


def _differs(path: bytes, old: Entry, new: Entry, base: _Tree, work: _Tree) -> bool:
    if old.kind is not new.kind:
        return True
    if old.kind is Kind.SYMLINK:
        return old.target != new.target
    if old.kind is not Kind.FILE:
        # Special files are recorded by kind alone; the same kind is no change.
        return False
    if old.executable != new.executable or old.size != new.size:
        return True
    return not _same_bytes(path, base, work)


def _same_bytes(path: bytes, base: _Tree, work: _Tree) -> bool:
    with base.open_file(path) as old, work.open_file(path) as new:
        while True:
            old_chunk = old.read(CHUNK_SIZE)
            new_chunk = new.read(CHUNK_SIZE)
            if old_chunk != new_chunk:
                return False
            if not old_chunk:
                return True


def _kind_of(mode: int) -> Kind:
    kinds = (
        (stat.S_ISREG, Kind.FILE),
        (stat.S_ISLNK, Kind.SYMLINK),
        (stat.S_ISFIFO, Kind.FIFO),
        (stat.S_ISSOCK, Kind.SOCKET),
        (stat.S_ISCHR, Kind.CHAR_DEVICE),
        (stat.S_ISBLK, Kind.BLOCK_DEVICE),
    )
    for test, kind in kinds:
        if test(mode):
            return kind
    return Kind.UNKNOWN


class _Tree:
    """A tree opened once by descriptor; every path under it is reached without following."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd = -1

    def __enter__(self) -> _Tree:
        try:
            self._fd = os.open(self.root, _DIRECTORY_FLAGS)
        except FileNotFoundError:
            raise self._error("changes.tree.missing", b"", "does not exist") from None
        except OSError as exc:
            if self.root.is_symlink() or not self.root.is_dir():
                raise self._error(
                    "changes.tree.not-directory", b"", "is not a directory (symlinks are refused)"
                ) from None
            raise self._error("changes.tree.unreadable", b"", exc.strerror or str(exc)) from None
        return self

    def __exit__(self, *_: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def inventory(self) -> dict[bytes, Entry]:
        """Every path that is not a directory, walked depth first without following links."""
        entries: dict[bytes, Entry] = {}
        # One frame per open directory: its descriptor, its path prefix, its remaining names.
        stack: list[tuple[int, bytes, Iterator[bytes]]] = []
        stack.append((self._fd, b"", iter(self._list(self._fd, b""))))
        try:
            while stack:
                fd, prefix, names = stack[-1]
                name = next(names, None)
                if name is None:
                    stack.pop()
                    if fd != self._fd:
                        os.close(fd)
                    continue
                if not prefix and name == b".git":
                    continue
                path = prefix + name
                entry = self._entry(fd, name, path)
                if entry is not None:
                    entries[path] = entry
                    continue
                if len(stack) >= MAX_DEPTH:
                    raise self._error(
                        "changes.tree.too-deep", path, f"nests deeper than {MAX_DEPTH} directories"
                    )
                try:
                    child = os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise self._error("changes.unreadable", path, _reason(exc)) from None
                # On the stack before it is listed, so a failed listing still closes it.
                stack.append((child, path + b"/", iter(())))
                stack[-1] = (child, path + b"/", iter(self._list(child, path)))
        finally:
            for fd, _, _ in stack:
                if fd != self._fd:
                    os.close(fd)
        return entries

    def _entry(self, fd: int, name: bytes, path: bytes) -> Entry | None:
        """What ``name`` in directory ``fd`` is, or None when it is a directory."""
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                return None
            kind = _kind_of(info.st_mode)
            if kind is Kind.SYMLINK:
                return Entry(kind=kind, target=os.readlink(name, dir_fd=fd))
        except OSError as exc:
            raise self._error("changes.unreadable", path, _reason(exc)) from None
        if kind is Kind.FILE:
            executable = bool(info.st_mode & stat.S_IXUSR)
            return Entry(kind=kind, executable=executable, size=info.st_size)
        return Entry(kind=kind)

    def open_file(self, path: bytes) -> BinaryIO:
        """``path`` opened for reading, proven to be a regular file after opening."""
        parent, name = self._open_parent(path)
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise self._error("changes.unreadable", path, _reason(exc)) from None
        finally:
            if parent != self._fd:
                os.close(parent)
        try:
            self._require_regular(fd, path)
            # Back to blocking reads: a regular file never blocks, and buffered reads
            # then return whole chunks.
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "rb")

    def _require_regular(self, fd: int, path: bytes) -> None:
        # The walk saw a regular file; whatever was opened must still be one.
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise self._error("changes.unstable", path, "is no longer a regular file")

    def read_link(self, path: bytes) -> bytes:
        """The target text of the symlink ``path``; never followed."""
        parent, name = self._open_parent(path)
        try:
            return os.readlink(name, dir_fd=parent)
        except OSError as exc:
            raise self._error("changes.unreadable", path, _reason(exc)) from None
        finally:
            if parent != self._fd:
                os.close(parent)

    def copy_file(self, path: bytes, out: BinaryIO) -> None:
        """A fast-import ``data`` block holding the regular file ``path``, copied in chunks."""
        with self.open_file(path) as source:
            size = os.fstat(source.fileno()).st_size
            out.write(b"data %d\n" % size)
            remaining = size
            while remaining:
                chunk = source.read(min(CHUNK_SIZE, remaining))
                if not chunk:
                    raise self._error("changes.unstable", path, "shrank while it was read")
                out.write(chunk)
                remaining -= len(chunk)
            out.write(b"\n")

    def _open_parent(self, path: bytes) -> tuple[int, bytes]:
        """A descriptor of ``path``'s directory, reached one component at a time."""
        *directories, name = path.split(b"/")
        fd = self._fd
        try:
            for directory in directories:
                child = os.open(directory, _DIRECTORY_FLAGS, dir_fd=fd)
                if fd != self._fd:
                    os.close(fd)
                fd = child
        except OSError as exc:
            if fd != self._fd:
                os.close(fd)
            raise self._error("changes.unreadable", path, _reason(exc)) from None
        return fd, name

    def _list(self, fd: int, path: bytes) -> list[bytes]:
        try:
            with os.scandir(fd) as listing:
                return sorted(os.fsencode(entry.name) for entry in listing)
        except OSError as exc:
            raise self._error("changes.unreadable", path, _reason(exc)) from None

    def _error(self, code: str, path: bytes, message: str) -> ContractError:
        where = str(self.root) if not path else f"{self.root}/{display_path(path)}"
        finding = Finding(code=code, message=message, file=where)
        return ContractError(f"cannot compare {self.root}", [finding])


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
