"""The models each attempt's traffic used, from its router's validated snapshot.

Spec 002: the report shows the provider models actually reported from exchanges, parent
and child traffic alike, with attempts that carried no usage included, and the summary
distinguishes main, child and mentor models. A snapshot's model rows are (thread role,
requested model, provider-reported response and header models); a child row whose
requested model is the run's mentor model is mentor traffic. The validator has already
held every row to the configured models (``hpbench.capture.children``); this module only
labels and shows them. An attempt without a valid capture has no rows (unavailable).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hpbench.capture.models import MetricsSnapshot, ThreadRole

MAIN, CHILD, MENTOR = "main", "child", "mentor"


def _traffic(role: ThreadRole, requested: str | None, mentor: str | None) -> str:
    if role is ThreadRole.ROOT:
        return MAIN
    return MENTOR if mentor is not None and requested == mentor else CHILD


def model_rows(
    keys: Sequence[str],
    snapshots: Mapping[str, MetricsSnapshot],
    *,
    main: str,
    mentor: str | None = None,
) -> dict[str, Any]:
    """Each attempt's model rows (null without a valid capture) and the configuration."""
    attempts: dict[str, list[dict[str, Any]] | None] = {}
    for key in sorted(keys):
        snapshot = snapshots.get(key)
        if snapshot is None:
            attempts[key] = None
            continue
        attempts[key] = [
            {
                "traffic": _traffic(row.role, row.request_model, mentor),
                "request_model": row.request_model,
                "response_model": row.response_model,
                "header_model": row.header_model,
                "attempts": int(row.attempts),
                "attempts_with_usage": int(row.attempts_with_usage),
            }
            for row in snapshot.models
        ]
    return {"configured": {MAIN: main, CHILD: main, MENTOR: mentor}, "attempts": attempts}
