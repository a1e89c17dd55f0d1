"""Findings: what a check found wrong, with where it found it."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class Finding:
    """One thing a check refused.

    ``code`` is stable and machine-readable (``manifest.path.absolute``);
    ``field`` is a JSON-path-like location (``$.paths.allowed[2]``); ``file``
    and ``line`` say where the input lives when that is known.
    """

    code: str
    message: str
    file: str | None = None
    field: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.field is not None:
            where = f"{where}: {self.field}" if where else self.field
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.message} [{self.code}]"

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON object with every key present."""
        return attrs.asdict(self)
