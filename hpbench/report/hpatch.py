"""The treatment's Hpatch results, per attempt, from its router's validated snapshot.

Spec 004: a gain of zero is not an editing-performance result when no treatment
request reached hpatch. So each treatment attempt's routed Hpatch outcomes (successes,
rejections, corrections, unmatched, diagnostics, carrier tokens) and its tool shapes,
as the provider emitted them and as the client received them, are shown together with
whether any request reached hpatch at all; an attempt without a valid capture has no
figures (unavailable, never zero).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hpbench.capture.models import MetricsSnapshot, ToolShape

OUTCOMES = ("successes", "rejections", "corrections", "unmatched", "diagnostics")


def _shapes(shapes: Sequence[ToolShape]) -> list[dict[str, Any]]:
    # The report document holds the capture's own ToolShape (report/document.py).
    return [attrs.asdict(shape) for shape in shapes]


def hpatch_results(
    treatment_keys: Sequence[str], snapshots: Mapping[str, MetricsSnapshot]
) -> dict[str, Any]:
    """Each treatment attempt's Hpatch figures (null without a valid capture)."""
    attempts: dict[str, Any] = {}
    for key in sorted(treatment_keys):
        snapshot = snapshots.get(key)
        if snapshot is None:
            attempts[key] = None
            continue
        telemetry = snapshot.hpatch
        counts = {name: int(getattr(telemetry, name)) for name in OUTCOMES}
        repeats = [int(entry.count) for entry in telemetry.rejection_signatures]
        attempts[key] = {
            **counts,
            "carrier_tokens": int(telemetry.carrier_tokens),
            "reached": any(counts[name] for name in OUTCOMES[:4]),
            "provider_emitted": _shapes(snapshot.tools.provider_emitted),
            "client_delivered": _shapes(snapshot.tools.client_delivered),
            "edit_payload": attrs.asdict(telemetry.edit_payload),
            "rejection_causes": [attrs.asdict(cause) for cause in telemetry.rejection_causes],
            # Signatures are opaque digests; only how often they repeat leaves the snapshot.
            "repeated_rejections": sum(count - 1 for count in repeats if count > 1),
            "repeated_signatures": sum(1 for count in repeats if count > 1),
        }
    return {"attempts": attempts}
