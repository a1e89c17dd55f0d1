"""A hostile tree walked by descriptor: nothing under it is ever followed.

The agent wrote every byte of its workspace, including its ``.git``, so a tree
is opened once as a directory descriptor and every path under it is reached
one component at a time with ``O_NOFOLLOW``. A symlink is read as its target
text and never followed; only regular files are opened (non-blocking, so a FIFO
that slipped in cannot hang the walk, and proven regular after opening); the
depth is bounded so that nesting cannot exhaust descriptors. Every failure is a
:class:`~hpbench.errors.ContractError` naming the path.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from hpbench.changes.model import Entry, Kind, display_path
from hpbench.errors import ContractError
from hpbench.findings import Finding

# Big enough to keep system calls few, small enough that two buffers of it are nothing.
CHUNK_SIZE = 1 << 20
# Each directory level holds one descriptor while it is walked. No task tree comes
# near this; an agent that nests deeper gets an error, not an exhausted process.
MAX_DEPTH = 256

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
# O_NOCTTY: a terminal device must never become this process's controlling terminal.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


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


class Tree:
    """A tree opened once by descriptor; every path under it is reached without following."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd = -1

    def __enter__(self) -> Tree:
        try:
            self._fd = os.open(self.root, _DIRECTORY_FLAGS)
        except FileNotFoundError:
            raise self.error("changes.tree.missing", b"", "does not exist") from None
        except OSError as exc:
            if self.root.is_symlink() or not self.root.is_dir():
                raise self.error(
                    "changes.tree.not-directory", b"", "is not a directory (symlinks are refused)"
                ) from None
            raise self.error("changes.tree.unreadable", b"", exc.strerror or str(exc)) from None
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
                    raise self.error(
                        "changes.tree.too-deep", path, f"nests deeper than {MAX_DEPTH} directories"
                    )
                try:
                    child = os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise self.error("changes.unreadable", path, _reason(exc)) from None
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
            raise self.error("changes.unreadable", path, _reason(exc)) from None
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
            raise self.error("changes.unreadable", path, _reason(exc)) from None
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
            raise self.error("changes.unstable", path, "is no longer a regular file")

    def read_link(self, path: bytes) -> bytes:
        """The target text of the symlink ``path``; never followed."""
        parent, name = self._open_parent(path)
        try:
            return os.readlink(name, dir_fd=parent)
        except OSError as exc:
            raise self.error("changes.unreadable", path, _reason(exc)) from None
        finally:
            if parent != self._fd:
                os.close(parent)

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
            raise self.error("changes.unreadable", path, _reason(exc)) from None
        return fd, name

    def _list(self, fd: int, path: bytes) -> list[bytes]:
        try:
            with os.scandir(fd) as listing:
                return sorted(os.fsencode(entry.name) for entry in listing)
        except OSError as exc:
            raise self.error("changes.unreadable", path, _reason(exc)) from None

    def error(self, code: str, path: bytes, message: str) -> ContractError:
        """A refusal to compare, naming the tree and the path (empty: the tree itself)."""
        where = str(self.root) if not path else f"{self.root}/{display_path(path)}"
        finding = Finding(code=code, message=message, file=where)
        return ContractError(f"cannot compare {self.root}", [finding])


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
