"""Markdown pieces summary.md is made of: numbers that print "unavailable" for unknown,
signed deltas, tables, and text from evidence made safe to show.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hpbench.modes import mode_of

UNAVAILABLE = "unavailable"
# Text a provider or router chose (a model name, say) is cut to this in a table cell.
CELL_CHARS = 60

# Identities that evidence messages may carry and summary.md must not: UUIDs
# (threads, sessions), provider and tool-call ids, turn-state tokens, long hex
# digests of captured content. report.json keeps the messages whole.
_IDENTITY = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|\b(?:req|resp|call|fc|fco|ctc|ws|rs|msg|ts|item|chatcmpl)_[A-Za-z0-9_-]+"
    r"|\b[0-9a-fA-F]{16,}\b"
)


def redact(text: str) -> str:
    """``text`` with every identity-shaped token replaced by ``<id>``."""
    return _IDENTITY.sub("<id>", text)


def cell(value: Any) -> str:
    """Evidence text for one table cell: one line, no column breaks, no identities, short."""
    if value is None:
        return UNAVAILABLE
    text = " ".join(str(value).split()).replace("|", "\\|").replace("`", "'")
    text = redact(text)
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"


def number(value: Any) -> str:
    """A count or measurement; unknown prints as unavailable, never 0."""
    if value is None:
        return UNAVAILABLE
    if isinstance(value, float):
        return f"{value:,.3f}"
    return f"{value:,}"


def signed(value: int | float | None) -> str:
    """A delta with its sign kept: negative stays negative."""
    if value is None:
        return UNAVAILABLE
    return f"{value:+,.1f}" if isinstance(value, float) else f"{value:+,}"


def percent(value: float) -> str:
    """A proportion as a percentage with one decimal."""
    return f"{100 * value:.1f} %"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def arm_title(report: dict[str, Any], arm: str) -> str:
    """An arm as the summary's tables name it: an imported control says so."""
    imported = mode_of(report["run"]["mode"]).imported
    if imported is not None and arm == imported.value:
        return f"{arm} (imported)"
    return arm
