"""Provider-usage figures per attempt, per arm and per pair, where unknown is never zero.

A snapshot's usage totals sum only what the provider reported: an attempt without
usage, or a usage without a cached or reasoning count, is counted beside the sum,
not in it. Such a sum is a lower bound, and a lower bound on one arm reads as a
saving on the other. So a figure of an attempt is taken only when every provider
attempt reported it; otherwise it is null, and every arm total or pair delta it
would enter is null too, reported as "k of n".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hpbench.capture.models import MetricsSnapshot
from hpbench.report.correctness import MIN_PAIRS_FOR_TEST, baseline_and_treatment
from hpbench.stats import (
    BOOTSTRAP_METHOD,
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_PAIRS_FOR_INTERVAL,
    paired_bootstrap,
)

# Snapshot figures the report carries per attempt, as (label, path into the snapshot).
USAGE_FIGURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("logical_requests", ("requests", "logical_requests")),
    ("provider_attempts", ("requests", "provider_attempts")),
    ("retries", ("requests", "retries")),
    ("attempts_with_usage", ("requests", "attempts_with_usage")),
    ("attempts_without_usage", ("requests", "attempts_without_usage")),
    ("input_tokens", ("usage", "input_tokens")),
    ("cached_input_tokens", ("usage", "cached_input_tokens")),
    ("output_tokens", ("usage", "output_tokens")),
    ("reasoning_tokens", ("usage", "reasoning_tokens")),
    ("request_savings_bytes", ("savings", "request", "savings_bytes")),
    ("output_savings_bytes", ("savings", "output", "savings_bytes")),
    ("output_text_savings_bytes", ("savings", "output_text", "savings_bytes")),
    ("provider_stream_bytes", ("savings", "transport", "provider_stream_bytes")),
)
LABELS = tuple(label for label, _ in USAGE_FIGURES)
TOKEN_FIGURES = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")
BOOTSTRAP_FIGURES = TOKEN_FIGURES

# The counters that say a usage sum is incomplete; each must be present and 0.
_USAGE_GAPS = (("requests", "attempts_without_usage"), ("requests", "attempts_invalid_usage"))
_CACHED_GAPS = (
    ("usage", "cached_input_missing"),
    ("usage", "cached_input_null"),
    ("usage", "cached_input_invalid"),
)
_REASONING_GAPS = (("usage", "reasoning_missing"),)

Figures = dict[str, int | None]
NOTHING_REPORTED: Mapping[str, int | None] = dict.fromkeys(LABELS)


def snapshot_count(snapshot: MetricsSnapshot, path: tuple[str, ...]) -> int:
    """The count at ``path`` (field names, outermost first) of a typed snapshot."""
    value: Any = snapshot
    for name in path:
        value = getattr(value, name)
    if not isinstance(value, int) or isinstance(value, bool):
        msg = f"{'.'.join(path)} is not a count of the snapshot"
        raise TypeError(msg)
    return value


def _none_missing(snapshot: MetricsSnapshot, gaps: Sequence[tuple[str, ...]]) -> bool:
    return all(snapshot_count(snapshot, path) == 0 for path in gaps)


def attempt_figures(snapshot: MetricsSnapshot) -> Figures:
    """One attempt's figures from its validated snapshot, null where any part was unreported."""
    figures: Figures = {label: snapshot_count(snapshot, path) for label, path in USAGE_FIGURES}
    every_attempt_reported = _none_missing(snapshot, _USAGE_GAPS)
    if not every_attempt_reported:
        figures["input_tokens"] = figures["output_tokens"] = None
    if not (every_attempt_reported and _none_missing(snapshot, _CACHED_GAPS)):
        figures["cached_input_tokens"] = None
    if not (every_attempt_reported and _none_missing(snapshot, _REASONING_GAPS)):
        figures["reasoning_tokens"] = None
    return figures


def _total(values: Sequence[int | None]) -> int | None:
    """The sum when every value is known and there is at least one; otherwise null."""
    if not values or any(v is None for v in values):
        return None
    return sum(v for v in values if v is not None)


def _bootstrap(pair_deltas: Mapping[str, list[int | None]], pairs: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for label in BOOTSTRAP_FIGURES:
        deltas = pair_deltas[label]
        known = [float(d) for d in deltas if d is not None]
        entry: dict[str, Any] = {
            "reported": len(known),
            "pairs": pairs,
            "mean": None,
            "low": None,
            "high": None,
            "degenerate": None,
        }
        if len(known) < pairs:
            entry["status"] = "unavailable"
        else:
            entry["mean"] = sum(known) / pairs
            interval = paired_bootstrap(known)
            if interval is None:
                entry["status"] = "too-few-pairs"
            else:
                entry.update(
                    status="interval",
                    low=interval.low,
                    high=interval.high,
                    degenerate=interval.degenerate,
                )
        figures[label] = entry
    return {
        "rule": {
            "min_pairs": MIN_PAIRS_FOR_INTERVAL,
            "method": BOOTSTRAP_METHOD,
            "confidence": DEFAULT_CONFIDENCE,
            "resamples": DEFAULT_RESAMPLES,
            "seed": DEFAULT_SEED,
        },
        "pairs": pairs,
        "figures": figures,
    }


def comparison(
    per_attempt: Mapping[str, Figures], arms: Sequence[str], repetitions: Sequence[int]
) -> dict[str, Any]:
    """Arm totals, pair deltas (treatment - baseline; ``arms`` come baseline first) and the
    bootstrap over ``repetitions``.

    Every figure covers exactly these repetitions; one that any of them lacks is null,
    with how many of them reported it.
    """

    def figures_of(repetition: int, arm: str) -> Mapping[str, int | None]:
        return per_attempt.get(f"{repetition}-{arm}", NOTHING_REPORTED)

    result: dict[str, Any] = {
        "population": {"pairs": len(repetitions), "repetitions": list(repetitions)},
        "arms": {},
        "reported": {},
        "deltas": None,
        "deltas_reported": None,
        "bootstrap": None,
    }
    for arm in arms:
        values = {label: [figures_of(rep, arm)[label] for rep in repetitions] for label in LABELS}
        result["arms"][arm] = {label: _total(values[label]) for label in LABELS}
        result["reported"][arm] = {
            label: {
                "reported": sum(1 for v in values[label] if v is not None),
                "attempts": len(repetitions),
            }
            for label in LABELS
        }
    compared = baseline_and_treatment(arms)
    if compared is None:
        return result
    baseline_arm, treatment_arm = compared
    pair_deltas: dict[str, list[int | None]] = {}
    for label in LABELS:
        deltas: list[int | None] = []
        for rep in repetitions:
            baseline = figures_of(rep, baseline_arm)[label]
            treatment = figures_of(rep, treatment_arm)[label]
            deltas.append(None if baseline is None or treatment is None else treatment - baseline)
        pair_deltas[label] = deltas
    result["deltas"] = {label: _total(pair_deltas[label]) for label in LABELS}
    result["deltas_reported"] = {
        label: {
            "reported": sum(1 for d in pair_deltas[label] if d is not None),
            "pairs": len(repetitions),
        }
        for label in LABELS
    }
    if len(repetitions) >= MIN_PAIRS_FOR_TEST:
        result["bootstrap"] = _bootstrap(pair_deltas, len(repetitions))
    return result
