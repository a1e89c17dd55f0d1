"""Usage in fixed time windows: the rows a usage invoice is built from."""

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
    """Tumbling windows of ``window_seconds`` aligned to ``start``, covering [start, end).

    Events outside [start, end) are ignored. Every (tenant, metric) with an event in the
    range gets a bucket for every window, empty ones included (total 0, count 0); the last
    window may be cut short by ``end``. Buckets are sorted by tenant, metric and window.
    """
    if window_seconds <= 0:
        raise ValueError(f"window_seconds must be positive, got {window_seconds}")
    if end < start:
        raise ValueError(f"end ({end}) is before start ({start})")
    windows = -(-(end - start) // window_seconds)
    sums: dict[tuple[str, str], list[list[int]]] = {}
    for event in events:
        if not start <= event.at < end:
            continue
        rows = sums.setdefault((event.tenant, event.metric), [[0, 0] for _ in range(windows)])
        row = rows[(event.at - start) // window_seconds]
        row[0] += event.amount
        row[1] += 1
    return [
        Bucket(tenant, metric, start + index * window_seconds, row[0], row[1])
        for (tenant, metric), rows in sorted(sums.items())
        for index, row in enumerate(rows)
    ]
