"""The ``hpbench.changes.v1`` contract: what a path is, how it changed, and the document.

A path is an entry that is not a directory: a regular file (bytes and
executable bit), a symlink (target text) or a special file (FIFO, socket,
device: only its kind). A path changed when it was added, deleted, or its kind,
executable bit, bytes or link target differ. Paths are bytes, exactly as the
file system holds them; the document writes them as text plus, when they are
not UTF-8, their exact bytes.

``changes.json`` is a :class:`ChangesDocument`; its JSON Schema in ``contrib/schemas/``
and the field tables of ``docs/changes.md`` are generated from it (``hpbench schemas
--write``).
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from hpbench import schemagen
from hpbench._documents import document_json
from hpbench.schemagen import doc


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


GIT_MODE_FILE: Final = "100644"
GIT_MODE_EXECUTABLE: Final = "100755"
GIT_MODE_SYMLINK: Final = "120000"
GitMode = Literal["100644", "100755", "120000"]


@attrs.frozen
class Entry:
    """One side of a path: its kind; a regular file's executable bit and size; a link's target."""

    kind: Kind
    executable: bool = False
    size: int = 0
    target: bytes | None = None

    @property
    def git_mode(self) -> GitMode | None:
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
    before_mode: GitMode | None
    after_mode: GitMode | None

    @property
    def in_diff(self) -> bool:
        """Whether the path appears in the fast-import stream and so in the diff.

        A path git cannot hold is left out; a special file has no git form, so
        a side that is one shows as absent (a file replaced by a FIFO is a deletion
        in the diff), and a path that is special on both sides is not in it at all.
        """
        sides = (self.before_kind, self.after_kind)
        return git_can_hold_path(self.path) and any(k is not None and k.git_can_hold for k in sides)


CHANGES_SCHEMA: Final = "hpbench.changes.v1"
SCHEMA_FILE = f"{CHANGES_SCHEMA}.schema.json"


@attrs.frozen
class ChangeRecord:
    """One changed path; kinds and modes are null on the absent side."""

    path: str = attrs.field(
        metadata=doc("The path as text: UTF-8, with any byte that is not UTF-8 written as `\\xNN`.")
    )
    path_base64: str | None = attrs.field(
        metadata=doc(
            "The path's exact bytes in base64 when they are not UTF-8 (then `path` alone "
            "could be ambiguous), else null."
        )
    )
    status: Status = attrs.field(metadata=doc("How the path differs between base and work."))
    before_kind: Kind | None = attrs.field(metadata=doc("What the path was; null when added."))
    after_kind: Kind | None = attrs.field(metadata=doc("What the path is; null when deleted."))
    before_mode: GitMode | None = attrs.field(
        metadata=doc("Git's mode on the base side; null for a special file or an absent side.")
    )
    after_mode: GitMode | None = attrs.field(
        metadata=doc("Git's mode on the work side; null for a special file or an absent side.")
    )
    in_diff: bool = attrs.field(
        metadata=doc("Whether the path appears in `changes.fi` and so in `diff.patch`.")
    )


@attrs.frozen
class ChangesDocument:
    """What an attempt changed (`changes.json`): one record per changed path, in path order."""

    schema: Literal["hpbench.changes.v1"] = attrs.field(
        metadata=doc("Always `hpbench.changes.v1`.")
    )
    changes: tuple[ChangeRecord, ...] = attrs.field(
        metadata=doc("Every changed path, sorted by its bytes (as in `changed-paths.z`).")
    )


CONTRACT = schemagen.Contract(
    schema_file=SCHEMA_FILE,
    roots=(ChangesDocument,),
    docs=schemagen.DocsTables(
        Path("docs/changes.md"),
        "<!-- changes-fields:begin (generated by `hpbench schemas --write`) -->",
        "<!-- changes-fields:end -->",
    ),
)


def change_record(change: Change) -> ChangeRecord:
    """One change as its record.

    ``path`` is text: the path decoded as UTF-8, with any byte that is not UTF-8
    written as ``\\xNN``. That text alone can be ambiguous, so ``path_base64``
    holds the exact bytes whenever they are not valid UTF-8 (null otherwise).
    """
    try:
        change.path.decode("utf-8")
        exact = None
    except UnicodeDecodeError:
        exact = base64.b64encode(change.path).decode("ascii")
    return ChangeRecord(
        path=display_path(change.path),
        path_base64=exact,
        status=change.status,
        before_kind=change.before_kind,
        after_kind=change.after_kind,
        before_mode=change.before_mode,
        after_mode=change.after_mode,
        in_diff=change.in_diff,
    )


def changes_document(changes: Iterable[Change]) -> dict[str, Any]:
    """The ``changes.json`` document (JSON form of a :class:`ChangesDocument`)."""
    document = ChangesDocument(
        schema="hpbench.changes.v1", changes=tuple(change_record(c) for c in changes)
    )
    return document_json(document)


def change_to_json(change: Change) -> dict[str, Any]:
    """One change as a JSON object; kinds and modes are null on the absent side."""
    return document_json(change_record(change))


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


def display_path(path: bytes) -> str:
    """``path`` as printable text; bytes that are not UTF-8 appear as ``\\xNN``."""
    return path.decode("utf-8", "backslashreplace")
