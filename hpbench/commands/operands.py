"""Concrete path operands: resolving them and deciding what they cover.

A path operand is concrete only when the shell passes it literally and the
directory it is relative to is known. Concrete operands are made relative to
the workspace root (paths outside it stay absolute); everything else is
ambiguous and never guessed at.

An operand covers itself and, as a directory, its descendants. For ``rg`` and
``hgrep``, positive basename ``--glob`` filters (``*.go``, ``*_test.go``)
narrow a directory's descendants to the basenames they match; any other glob
form (negated, with a slash, ``**``, braces) leaves the coverage whole, which
is the conservative reading.
"""

from __future__ import annotations

import fnmatch
import posixpath

import attrs

from hpbench.codex.paths import workspace_relative
from hpbench.commands.words import Word

_UNSUPPORTED_GLOB_CHARS = ("/", "**", "{", "}", "\\")


@attrs.frozen
class Operands:
    """What an invocation's path operands resolved to.

    Attributes:
        paths: concrete operands, workspace-relative (a trailing ``/`` kept as written).
        ambiguous: operand texts that could not be resolved.
        globs: basename globs narrowing directory coverage; empty means none.
        workspace_wide: a bare worktree ``git diff``: its scope is the whole workspace.
    """

    paths: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()
    globs: tuple[str, ...] = ()
    workspace_wide: bool = False


NO_OPERANDS = Operands()
"""Shared empty operands (the class is frozen, so sharing is safe)."""


def resolve(word: Word, cwd: str | None, root: str | None) -> str | None:
    """The workspace-relative path ``word`` names, or ``None`` when it cannot be known."""
    text = word.text
    if not word.literal or not text:
        return None
    if text.startswith("/"):
        joined = text
    elif cwd is None:
        return None
    else:
        joined = posixpath.join(cwd, text)
    resolved = workspace_relative(joined, root)
    if resolved == ".." or resolved.startswith("../"):
        # Above the workspace root: name it absolutely, as Codex would.
        resolved = posixpath.normpath(posixpath.join(root or "/", resolved))
    if text.endswith("/") and resolved not in (".", "/"):
        resolved += "/"
    return resolved


def supported_globs(globs: tuple[Word, ...]) -> tuple[str, ...]:
    """The globs that narrow coverage, or ``()`` when any of them cannot be honoured.

    Only positive basename globs narrow; one unsupported glob among several
    leaves the whole set unapplied rather than half-applied.
    """
    texts: list[str] = []
    for glob in globs:
        text = glob.text
        if not glob.literal or not text or text.startswith("!"):
            return ()
        if any(char in text for char in _UNSUPPORTED_GLOB_CHARS):
            return ()
        texts.append(text)
    return tuple(texts)


def covers(operand: str, globs: tuple[str, ...], path: str) -> bool:
    """Whether a search/read of ``operand`` (narrowed by ``globs``) covers ``path``."""
    base = operand.rstrip("/") or "/"
    if base == ".":
        descendant = not path.startswith("/")
    elif path == base:
        return True
    else:
        descendant = path.startswith(base + "/") or base == "/"
    if not descendant:
        return False
    if not globs:
        return True
    name = posixpath.basename(path)
    return any(fnmatch.fnmatchcase(name, glob) for glob in globs)
