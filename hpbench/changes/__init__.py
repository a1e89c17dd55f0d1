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

The package keeps one concern a module: :mod:`~hpbench.changes.model` (the
``hpbench.changes.v1`` contract), :mod:`~hpbench.changes.tree` (the walk by
descriptor), :mod:`~hpbench.changes.comparison` and
:mod:`~hpbench.changes.fastimport`. Callers import from here.
"""

from hpbench.changes.comparison import compare
from hpbench.changes.fastimport import BASE_REF, WORK_REF, quote_path, write_fast_import
from hpbench.changes.model import (
    CHANGES_SCHEMA,
    GIT_MODE_EXECUTABLE,
    GIT_MODE_FILE,
    GIT_MODE_SYMLINK,
    Change,
    Entry,
    Kind,
    Status,
    change_to_json,
    changed_paths_z,
    changes_document,
    display_path,
    git_can_hold_path,
)
from hpbench.changes.tree import CHUNK_SIZE, MAX_DEPTH

__all__ = [
    "BASE_REF",
    "CHANGES_SCHEMA",
    "CHUNK_SIZE",
    "GIT_MODE_EXECUTABLE",
    "GIT_MODE_FILE",
    "GIT_MODE_SYMLINK",
    "MAX_DEPTH",
    "WORK_REF",
    "Change",
    "Entry",
    "Kind",
    "Status",
    "change_to_json",
    "changed_paths_z",
    "changes_document",
    "compare",
    "display_path",
    "git_can_hold_path",
    "quote_path",
    "write_fast_import",
]
