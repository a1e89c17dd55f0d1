"""summary.md's "Hpatch" section: the treatment's routed outcomes and tool shapes, and a
plain statement wherever no request reached hpatch (spec 004: then its gain is no
editing-performance result)."""

from __future__ import annotations

from typing import Any

from hpbench.report.hpatch import OUTCOMES
from hpbench.report.markdown import UNAVAILABLE, cell, number, signed, table


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
    lines = ["## Hpatch", "", *table(header, rows), "", *_payload_and_rejections(attempts)]
    if unreached:
        lines += [
            f"No request reached hpatch in {', '.join(unreached)}: a zero there is no "
            "editing-performance result.",
            "",
        ]
    return lines


def _causes(causes: list[dict[str, Any]]) -> str:
    if not causes:
        return "none"
    return ", ".join(f"{cell(c['cause'])} x{c['count']}" for c in causes)


def _payload_and_rejections(attempts: dict[str, Any]) -> list[str]:
    """Semantic edit payload (kept apart from end-to-end output usage) and rejections."""
    header = (
        "attempt",
        "edit payload emitted (bytes)",
        "delivered to client (bytes)",
        "edit-payload reduction (bytes)",
        "reduction (est. tokens)",
        "rejection causes",
        "repeated rejections",
    )
    rows = []
    for key, figures in sorted(attempts.items()):
        if figures is None:
            rows.append((key, *([UNAVAILABLE] * (len(header) - 1))))
            continue
        payload = figures["edit_payload"]
        rows.append(
            (
                key,
                number(payload["provider_bytes"]),
                number(payload["client_bytes"]),
                signed(payload["savings_bytes"]),
                signed(payload["savings_tokens"]),
                _causes(figures["rejection_causes"]),
                f"{figures['repeated_rejections']} over {figures['repeated_signatures']} "
                "signatures",
            )
        )
    return [
        "Semantic edit payload: the Hpatch payloads the model emitted against the edits the "
        "client was given to execute (positive: the model emitted less). It is not end-to-end "
        "output usage, which the usage tables give.",
        "",
        *table(header, rows),
        "",
    ]
