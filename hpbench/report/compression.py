"""The CTP compression gate (spec 002): a task that requires compression gets it, or fails.

A task's ``[ctp] require_compression`` names directions: ``input`` (the request,
client versus provider) and ``output`` (the assistant's ``output_text``). For every
treatment attempt, the matching signed token savings from its router's validated
snapshot must be positive. Zero, negative and unknown (no valid snapshot, or a router
that estimated no tokens) all fail: the measured value, never a made-up one, is kept
for summary.md, and the run exits nonzero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hpbench.capture.models import MetricsSnapshot
from hpbench.modes import CTP2, Mode

INPUT, OUTPUT = "input", "output"


def _savings(snapshot: MetricsSnapshot | None, direction: str) -> int | None:
    if snapshot is None:
        return None
    savings = snapshot.savings
    comparison = savings.request if direction == INPUT else savings.output_text
    return comparison.savings_tokens


def compression_gate(
    required: Sequence[str],
    treatment_keys: Sequence[str],
    snapshots: Mapping[str, MetricsSnapshot],
) -> dict[str, Any]:
    """The gate's section: what is required, each treatment attempt's measured savings by
    direction (``snapshots`` holds the valid ones by attempt key), and every failure."""
    attempts: dict[str, dict[str, int | None]] = {}
    failures: list[str] = []
    for key in sorted(treatment_keys) if required else ():
        measured = {direction: _savings(snapshots.get(key), direction) for direction in required}
        attempts[key] = measured
        for direction, value in measured.items():
            if value is None:
                failures.append(
                    f"{key}: {direction} compression required, savings unavailable "
                    "(no valid capture, or no token estimate)"
                )
            elif value <= 0:
                failures.append(
                    f"{key}: {direction} compression required, measured {value:+,} tokens "
                    "(it must be positive)"
                )
    return {"required": list(required), "attempts": attempts, "failures": failures}


def gated_attempts(mode: Mode, protocol: str, attempts: Sequence[tuple[str, str]]) -> list[str]:
    """The attempt keys the compression gate holds to the task's requirement, from the
    run's ``(key, arm)`` pairs: the treatment's (ctp-only: the ctp arm; paired and
    hpatch-diagnostic: hpatch); with CTP/2 in mentor-handoff, both arms' (spec 002)."""
    if mode.name == "mentor-handoff" and protocol == CTP2:
        return [key for key, _ in attempts]
    treatment = mode.treatment.value if mode.treatment is not None else None
    return [key for key, arm in attempts if arm == treatment]
