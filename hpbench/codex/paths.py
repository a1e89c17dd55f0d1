"""Making the absolute paths Codex writes relative to the attempt's workspace.

Only text is compared, never the file system: the workspace usually lived in a
container that no longer exists when the evidence is analysed.
"""

from __future__ import annotations

import posixpath


def normalize_root(root: str) -> str:
    """``root`` without ``.``/``..`` segments or a trailing slash."""
    return posixpath.normpath(root)


def workspace_relative(path: str, root: str | None) -> str:
    """``path`` relative to ``root`` when it lies inside it, else normalized as it is.

    A relative path is taken to be relative to the root already. The root
    itself becomes ``.``. A path outside the root keeps its absolute form, so
    it can still be compared with other paths outside the root.
    """
    normalized = posixpath.normpath(path) if path else "."
    if root is None or not normalized.startswith("/"):
        return normalized
    base = normalize_root(root)
    if normalized == base:
        return "."
    prefix = base if base.endswith("/") else base + "/"
    if normalized.startswith(prefix):
        return normalized[len(prefix) :]
    return normalized
