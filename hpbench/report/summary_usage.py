"""summary.md's provider-usage and provider-response sections.

Every figure says which pairs it covers; a figure that any of them did not report
prints "unavailable (k of n ... reported)" instead of a partial sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hpbench.modes import compared_arms
from hpbench.report.figures import BOOTSTRAP_FIGURES, LABELS, TOKEN_FIGURES
from hpbench.report.markdown import UNAVAILABLE, arm_title, cell, number, redact, signed, table

FIGURE_NAMES = {
    "logical_requests": "model requests (logical)",
    "provider_attempts": "provider attempts (retries included)",
    "retries": "retries",
    "attempts_with_usage": "attempts with usage",
    "attempts_without_usage": "attempts without usage",
    "input_tokens": "input tokens",
    "cached_input_tokens": "cached input tokens",
    "output_tokens": "output tokens",
    "reasoning_tokens": "reasoning tokens",
    "request_savings_bytes": "client - provider request bytes (signed savings)",
    "output_savings_bytes": "model-origin output savings, bytes (signed)",
    "output_text_savings_bytes": "assistant output_text savings, bytes (signed)",
    "provider_stream_bytes": "response-stream transport, bytes",
}
METHOD_NAMES = {"bca": "bias-corrected and accelerated, BCa"}
OFFLINE_NOTE = (
    "> Offline demo: these token figures come from the scripted provider's replay scripts, "
    "not from a model. They show that the harness counts; they say nothing about what "
    "either arm costs."
)


def _repetitions(population: dict[str, Any]) -> str:
    reps = population["repetitions"]
    return f"repetitions {', '.join(str(r) for r in reps)}" if reps else "no repetition"


def _arm_cell(comparison: dict[str, Any], arm: str, label: str) -> str:
    value = comparison["arms"][arm][label]
    if value is not None:
        return number(value)
    seen = comparison["reported"][arm][label]
    return f"{UNAVAILABLE} ({seen['reported']} of {seen['attempts']} attempts reported)"


def _delta_cell(comparison: dict[str, Any], label: str) -> str:
    value = comparison["deltas"][label]
    if value is not None:
        return signed(value)
    seen = comparison["deltas_reported"][label]
    return f"{UNAVAILABLE} ({seen['reported']} of {seen['pairs']} pairs reported)"


def _figure_table(
    comparison: dict[str, Any], arms: Sequence[str], labels: Sequence[str], titles: Sequence[str]
) -> list[str]:
    paired = comparison["deltas"] is not None
    # ``arms`` come baseline first (hpbench.modes): the delta is treatment - baseline.
    delta = f"delta ({arms[-1]} - {arms[0]})"
    header = ["figure", *titles, *([delta] if paired else [])]
    rows = []
    for label in labels:
        cells = [_arm_cell(comparison, arm, label) for arm in arms]
        if paired:
            cells.append(_delta_cell(comparison, label))
        rows.append((FIGURE_NAMES[label], *cells))
    return table(header, rows)


def _interval_rows(bootstrap: dict[str, Any]) -> list[tuple[str, ...]]:
    rule = bootstrap["rule"]
    rows: list[tuple[str, ...]] = []
    for label in BOOTSTRAP_FIGURES:
        entry = bootstrap["figures"][label]
        if entry["status"] == "unavailable":
            interval = f"{UNAVAILABLE} ({entry['reported']} of {entry['pairs']} pairs reported)"
        elif entry["status"] == "too-few-pairs":
            interval = f"too few pairs for an interval ({entry['pairs']} < {rule['min_pairs']})"
        else:
            interval = f"[{signed(entry['low'])}, {signed(entry['high'])}]"
            if entry["degenerate"]:
                interval += " (every pair has the same delta)"
        rows.append((FIGURE_NAMES[label], signed(entry["mean"]), interval, str(entry["pairs"])))
    return rows


def _intervals(usage: dict[str, Any]) -> list[str]:
    populations = [("all compared pairs", usage)]
    if usage["both_passed"] is not None:
        populations.append(("pairs where both arms passed", usage["both_passed"]))
    rules = [c["bootstrap"]["rule"] for _, c in populations if c["bootstrap"] is not None]
    if not rules:
        return []
    rule = rules[0]
    lines = [
        "",
        f"Seeded paired bootstrap ({METHOD_NAMES.get(rule['method'], rule['method'])}, "
        f"{rule['resamples']:,} resamples, "
        f"seed {rule['seed']}) of the mean per-pair delta, {round(100 * rule['confidence'])} % "
        f"interval. Rule: no interval from fewer than {rule['min_pairs']} pairs, where "
        "resampling so few values gives an interval that only looks precise.",
    ]
    for name, compared in populations:
        lines += ["", f"{name.capitalize()} ({compared['population']['pairs']}):", ""]
        if compared["bootstrap"] is None:
            lines.append("Fewer than two pairs: no interval.")
        else:
            header = ("figure", "mean delta", "interval", "pairs")
            lines += table(header, _interval_rows(compared["bootstrap"]))
    return lines


def usage_section(report: dict[str, Any]) -> list[str]:
    """Provider usage over the compared pairs and over the pairs where both arms passed."""
    usage = report["usage"]
    arms = compared_arms(report["run"])
    offline = bool(report["run"].get("offline_demo"))
    population = usage["population"]
    lines = [
        "## Provider usage (validated router captures)",
        "",
        f"Over {population['pairs']} compared pair(s) (non-voided repetitions with results "
        f"from every arm: {_repetitions(population)}). An arm's figure sums its attempts in "
        "these pairs; a figure that any of them did not fully report is unavailable, never a "
        "partial sum. Deltas are summed per pair.",
        "",
    ]
    titles = [arm_title(report, arm) for arm in arms]
    lines += _figure_table(usage, arms, LABELS, titles)
    if offline:
        lines += ["", OFFLINE_NOTE]
    both = usage.get("both_passed")
    if both is not None:
        lines += [
            "",
            f"Token figures over the {both['population']['pairs']} pair(s) where both arms "
            f"passed ({_repetitions(both['population'])}); an arm that fails early spends "
            "less, and that is not a saving:",
            "",
        ]
        if both["population"]["pairs"]:
            lines += _figure_table(both, arms, TOKEN_FIGURES, titles)
            if offline:
                lines += ["", OFFLINE_NOTE]
        else:
            lines.append("No pair where both arms passed: no figure.")
    if report["statistics"]["shown"]:
        lines += _intervals(usage)
    return [*lines, ""]


_EVIDENCE_HEADER = (
    "exchange",
    "attempt",
    "role",
    "outcome",
    "HTTP",
    "usage",
    "input",
    "cached input",
    "output",
    "reasoning",
    "response model (provider-reported)",
    "header model (provider-reported)",
)


def _cached(row: dict[str, Any]) -> str:
    state = row["cached_input_state"]
    if state == "explicit":
        return number(row["cached_input_tokens"])
    if state == "unavailable":
        return f"{UNAVAILABLE} (no usage)"
    return f"not reported ({cell(state)})"


def _evidence_rows(rows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    return [
        (
            str(row["exchange"]),
            str(row["attempt"]),
            cell(row["role"]),
            cell(row["outcome"]),
            number(row["http_status"]),
            cell(row["usage_state"]),
            number(row["input_tokens"]),
            _cached(row),
            number(row["output_tokens"]),
            number(row["reasoning_tokens"]),
            cell(row["response_model"]),
            cell(row["header_model"]),
        )
        for row in rows
    ]


def evidence_section(report: dict[str, Any]) -> list[str]:
    """Every retained provider attempt, with the cached count's state and provider models."""
    lines = [
        "## Provider responses (every retained attempt)",
        "",
        "One row per provider attempt, from the router's records. Cached input is an "
        "explicit count, or says how it was not reported (missing, null, invalid), or is "
        "unavailable when the attempt carried no usage at all. Models are as the provider "
        "reported them. Provider request ids are not shown.",
        "",
    ]
    evidence = report.get("provider_responses") or {}
    if not evidence:
        return [*lines, "No router evidence was collected.", ""]
    for key, entry in sorted(evidence.items()):
        rows = entry["rows"]
        state = "reconciled with the snapshot" if entry["reconciled"] else "NOT RECONCILED"
        if rows is None:
            lines.append(f"- {key}: rows {UNAVAILABLE} ({cell(entry['unavailable'])})")
        else:
            lines += [
                "<details>",
                f"<summary>{key}: {len(rows)} provider attempt(s), {state}</summary>",
                "",
                *table(_EVIDENCE_HEADER, _evidence_rows(rows)),
                "",
                "</details>",
            ]
        if rows is not None:
            lines += [f"- {redact(' '.join(problem.split()))}" for problem in entry["problems"]]
        lines.append("")
    return lines
