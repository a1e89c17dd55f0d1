"""The capture validator's word on one router, as the report keeps it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from hpbench.capture.models import MetricsSnapshot
from hpbench.capture.prefix import PrefixRow
from hpbench.findings import Finding


@attrs.frozen
class CaptureVerdict:
    """The validator's findings and the snapshot it read (typed), or None if it could not.

    Valid means no finding and a snapshot: only then are the snapshot's figures reported.
    """

    findings: tuple[Finding, ...]
    snapshot: MetricsSnapshot | None
    # The cache-prefix table's rows (hpbench.capture.prefix).
    cache_prefix: tuple[PrefixRow, ...] = ()

    @property
    def valid(self) -> bool:
        """No finding, and a snapshot to take the figures from."""
        return not self.findings and self.snapshot is not None


CaptureCheck = Callable[[Path, str, Sequence[Path]], CaptureVerdict]
