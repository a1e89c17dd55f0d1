"""JSON output that is canonical and written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO


def canonical_json(value: Any) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def readable_json(value: Any) -> str:
    """Indented, sorted keys and one trailing newline: a JSON file people read."""
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def write_atomic(path: Path, text: str, mode: int = 0o600) -> None:
    """Write ``text`` to ``path`` through a same-directory temporary file and rename.

    A reader never sees a half-written file, and the file is private (0600 by
    default) from the moment it exists.
    """
    write_atomic_stream(path, lambda stream: stream.write(text.encode("utf-8")), mode)


def write_atomic_stream(
    path: Path, write: Callable[[BinaryIO], object], mode: int = 0o600, *, replace: bool = True
) -> None:
    """Let ``write`` fill a private same-directory temporary file, then rename it to ``path``.

    A reader never sees half a stream, and a writer that fails leaves no file behind.
    With ``replace=False`` the file is linked into place instead, which never replaces
    one: an existing ``path`` stays untouched and :class:`FileExistsError` is raised.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temporary = Path(tmp_name)
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        if replace:
            temporary.replace(path)
        else:
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_new(path: Path, text: str, mode: int = 0o600) -> None:
    """Write ``text`` to a new file ``path`` atomically, never replacing one.

    Raises:
        FileExistsError: ``path`` exists (and is left as it was).
    """
    write_atomic_stream(
        path, lambda stream: stream.write(text.encode("utf-8")), mode, replace=False
    )


def append_line(path: Path, text: str) -> None:
    """Append one line (``text`` and a newline) to ``path`` in a single write, creating the
    file 0600 and its directory 0700: concurrent writers never interleave within a line."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (text + "\n").encode("utf-8"))
    finally:
        os.close(fd)
