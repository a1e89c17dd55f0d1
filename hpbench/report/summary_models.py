"""summary.md's "Models" section: main, child and mentor traffic per attempt, with the
models the provider reported and the attempts that carried no usage counted."""

from __future__ import annotations

from typing import Any

from hpbench.report.markdown import UNAVAILABLE, cell, number, table


def models_section(report: dict[str, Any]) -> list[str]:
    """One row per attempt and model combination; nothing without attempts."""
    models = report["models"]
    if not models["attempts"]:
        return []
    configured = models["configured"]
    mentor = configured["mentor"]
    header = (
        "attempt",
        "traffic",
        "requested",
        "provider-reported (response)",
        "provider-reported (header)",
        "provider attempts",
        "with usage",
    )
    rows = []
    for key, entries in sorted(models["attempts"].items()):
        if entries is None:
            rows.append((key, *([UNAVAILABLE] * (len(header) - 1))))
            continue
        rows += [
            (
                key,
                entry["traffic"],
                cell(entry["request_model"]),
                cell(entry["response_model"]),
                cell(entry["header_model"]),
                number(entry["attempts"]),
                number(entry["attempts_with_usage"]),
            )
            for entry in entries
        ]
    return [
        "## Models",
        "",
        f"Configured: main {cell(configured['main'])}, child {cell(configured['child'])}, "
        f"mentor {cell(mentor) if mentor is not None else 'none (Mentor Handoff off)'}"
        f"{' (mentor arm only)' if mentor is not None else ''}. "
        "Every provider attempt is counted, with or without usage; the provider-reported "
        "columns are what the provider said, unavailable when it said nothing.",
        "",
        *table(header, rows),
        "",
    ]
