"""The changed paths as a ``git fast-import`` stream of two commits.

``benchmarks/libexec/bench-changes`` imports the stream into a private
repository to produce the literal, binary-capable diff; the stream holds only
the paths in the diff, each side read from its tree by descriptor.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from hpbench.changes.model import Change, Kind
from hpbench.changes.tree import CHUNK_SIZE, Tree

BASE_REF = b"refs/heads/base"
WORK_REF = b"refs/heads/work"
# A fixed identity and date: the same changes always give the same commits.
_COMMITTER = b"committer hpbench <changes@hpbench.invalid> 0 +0000\n"


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
        with Tree(root) as tree:
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
                    _copy_file(tree, change.path, out)
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


def _copy_file(tree: Tree, path: bytes, out: BinaryIO) -> None:
    """A fast-import ``data`` block holding the regular file ``path``, copied in chunks."""
    with tree.open_file(path) as source:
        size = os.fstat(source.fileno()).st_size
        out.write(b"data %d\n" % size)
        remaining = size
        while remaining:
            chunk = source.read(min(CHUNK_SIZE, remaining))
            if not chunk:
                raise tree.error("changes.unstable", path, "shrank while it was read")
            out.write(chunk)
            remaining -= len(chunk)
        out.write(b"\n")
