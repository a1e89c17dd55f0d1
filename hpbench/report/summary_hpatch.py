"""summary.md's "Hpatch" section: the treatment's routed outcomes and tool shapes, and a
plain statement wherever no request reached hpatch (spec 004: then its gain is no
editing-performance result)."""

from __future__ import annotations

from typing import Any

from hpbench.report.hpatch import OUTCOMES
from hpbench.report.markdown import UNAVAILABLE, cell, number, table


def _shapes(shapes: list[dict[str, Any]]) -> str:
    if not shapes:
        return "none"
    return ", ".join(f"{cell(s['item_type'])}:{cell(s['name'])} x{s['count']}" for s in shapes)


def hpatch_section(report: dict[str, Any]) -> list[str]:
    """One row per treatment attempt; nothing when the run has no treatment attempt."""
    attempts = report["hpatch"]["attempts"]
    if not attempts:
        return []
    header = ("attempt", *OUTCOMES, "carrier tokens", "provider emitted", "client received")
    rows = []
    unreached = []
    for key, figures in sorted(attempts.items()):
        if figures is None:
            rows.append((key, *([UNAVAILABLE] * (len(header) - 1))))
            continue
        if not figures["reached"]:
            unreached.append(key)
        rows.append(
            (
                key,
                *(number(figures[name]) for name in OUTCOMES),
                number(figures["carrier_tokens"]),
                _shapes(figures["provider_emitted"]),
                _shapes(figures["client_delivered"]),
            )
        )
    lines = ["## Hpatch", "", *table(header, rows), ""]
    if unreached:
        lines += [
            f"No request reached hpatch in {', '.join(unreached)}: a zero there is no "
            "editing-performance result.",
            "",
        ]
    return lines
