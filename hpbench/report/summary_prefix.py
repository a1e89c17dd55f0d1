"""summary.md's "Cache prefix" section (spec 002's cache-prefix diagnostic table).

Request ordinals, provider usage, each stage's comparison status, the fixed categories
that changed and the turn-state forwarding status: never a fingerprint, a prompt-cache
key or any other identity. A status the router did not observe reads *unavailable*,
never *stable*. The diagnostic mode gets every request's row; the other modes one line
per attempt with the counts (a real attempt makes hundreds of requests).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hpbench.report.markdown import UNAVAILABLE, number, table

_DIAGNOSTIC = "hpatch-diagnostic"
_STATUSES = ("first", "stable", "changed", UNAVAILABLE)


def _counts(rows: Sequence[dict[str, Any]], stage: str) -> str:
    tally = Counter(row[stage] for row in rows)
    return ", ".join(f"{tally[status]} {status}" for status in _STATUSES if tally[status])


def _changes(rows: Sequence[dict[str, Any]]) -> str:
    tally = Counter(change for row in rows for change in row["changed"])
    return ", ".join(f"{name} x{count}" for name, count in sorted(tally.items())) or "none"


def _table(rows: Sequence[dict[str, Any]]) -> list[str]:
    header = ("request", "input", "cached input", "client", "provider", "changed", "turn state")
    return table(
        header,
        [
            (
                number(row["ordinal"]),
                number(row["input_tokens"]),
                number(row["cached_input_tokens"]),
                row["client"],
                row["provider"],
                ", ".join(row["changed"]) or "-",
                row["turn_state"],
            )
            for row in rows
        ],
    )


def cache_prefix_section(report: dict[str, Any]) -> list[str]:
    """The section; nothing when no attempt has a capture."""
    section: dict[str, list[dict[str, Any]] | None] = report["cache_prefix"]
    if not section:
        return []
    lines = [
        "## Cache prefix",
        "",
        "Whether each root-thread request kept the previous request's prompt prefix, as "
        "Codex sent it (client) and as the router sent it upstream (provider), by the "
        "router's observations; statuses and changed-field categories only.",
        "",
    ]
    diagnostic = report["run"]["mode"] == _DIAGNOSTIC
    for key, rows in sorted(section.items()):
        if rows is None:
            lines.append(f"- {key}: {UNAVAILABLE} (no valid capture)")
        elif diagnostic:
            lines += [f"{key}:", "", *_table(rows), ""]
        else:
            lines.append(
                f"- {key}: client {_counts(rows, 'client') or 'no request'}; provider "
                f"{_counts(rows, 'provider') or 'no request'}; changed {_changes(rows)}"
            )
    if not diagnostic:
        lines.append("")
    return lines
