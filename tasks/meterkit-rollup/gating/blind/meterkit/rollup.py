"""Usage in fixed time windows: the rows a usage invoice is built from.

A plausible but wrong rollup, kept for the task's gating tests: it groups events by
window but leaves out the windows that had none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from meterkit.usage import UsageEvent


@dataclass(frozen=True)
class Bucket:
    """The usage of one tenant's metric in the window [window_start, window_start + width)."""

    tenant: str
    metric: str
    window_start: int
    total: int
    count: int


def rollup(
    events: Iterable[UsageEvent], *, window_seconds: int, start: int, end: int
) -> list[Bucket]:
    """Windows of ``window_seconds`` from ``start``; events outside [start, end) ignored."""
    if window_seconds <= 0:
        raise ValueError(f"window_seconds must be positive, got {window_seconds}")
    if end < start:
        raise ValueError(f"end ({end}) is before start ({start})")
    sums: dict[tuple[str, str, int], list[int]] = {}
    for event in events:
        if not start <= event.at < end:
            continue
        window = start + (event.at - start) // window_seconds * window_seconds
        row = sums.setdefault((event.tenant, event.metric, window), [0, 0])
        row[0] += event.amount
        row[1] += 1
    return [Bucket(t, m, w, row[0], row[1]) for (t, m, w), row in sorted(sums.items())]
