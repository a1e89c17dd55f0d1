"""Comparing two trees: every path whose entry differs between base and work.

Both trees are walked by :class:`~hpbench.changes.tree.Tree` (never by git,
which would read the agent's configuration, attributes and hooks); files of the
same kind, executable bit and size are compared byte for byte in chunks.
"""

from __future__ import annotations

from pathlib import Path

from hpbench.changes.model import Change, Entry, Kind, Status
from hpbench.changes.tree import CHUNK_SIZE, Tree


def compare(base: Path, work: Path) -> list[Change]:
    """Every path that differs between ``base`` and ``work``, sorted by its bytes."""
    with Tree(base) as base_tree, Tree(work) as work_tree:
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


def _differs(path: bytes, old: Entry, new: Entry, base: Tree, work: Tree) -> bool:
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


def _same_bytes(path: bytes, base: Tree, work: Tree) -> bool:
    with base.open_file(path) as old, work.open_file(path) as new:
        while True:
            old_chunk = old.read(CHUNK_SIZE)
            new_chunk = new.read(CHUNK_SIZE)
            if old_chunk != new_chunk:
                return False
            if not old_chunk:
                return True
