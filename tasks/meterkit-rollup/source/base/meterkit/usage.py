"""Usage events and their totals."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class UsageEvent:
    """One measurement: ``amount`` units of ``metric`` used by ``tenant`` at ``at``
    (whole seconds since the epoch)."""

    tenant: str
    metric: str
    amount: int
    at: int

    def __post_init__(self) -> None:
        if not self.tenant or not self.metric:
            raise ValueError("tenant and metric must not be empty")
        if self.amount < 0:
            raise ValueError(f"amount must not be negative, got {self.amount}")


def total(events: Iterable[UsageEvent], tenant: str, metric: str) -> int:
    """The sum of ``metric`` for ``tenant`` over ``events``."""
    return sum(e.amount for e in events if e.tenant == tenant and e.metric == metric)
