"""summary.md: what a person reads first, rendered from the report document.

Correctness first, then provider usage from validated captures with signed
deltas (treatment minus control; negative stays negative), then command
analysis and phase times. Unknown values print as "unavailable", never 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hpbench.report.model import BOOTSTRAP_FIGURES, CONTROL_ARM, TREATMENT_ARM, USAGE_FIGURES

UNAVAILABLE = "unavailable"
LABELS = {
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


# Identities that evidence messages may carry and summary.md must not: UUIDs
# (threads, sessions), provider and tool-call ids, turn-state tokens, long hex
# digests of captured content. report.json keeps the messages whole.
_IDENTITY = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|\b(?:req|resp|call|fc|fco|ctc|ws|rs|msg|ts|item|chatcmpl)_[A-Za-z0-9_-]+"
    r"|\b[0-9a-fA-F]{16,}\b"
)


def redact(text: str) -> str:
    """``text`` with every identity-shaped token replaced by ``<id>``."""
    return _IDENTITY.sub("<id>", text)


def _number(value: Any) -> str:
    if value is None:
        return UNAVAILABLE
    if isinstance(value, float):
        return f"{value:,.3f}"
    return f"{value:,}"


def _signed(value: int | float | None) -> str:
    if value is None:
        return UNAVAILABLE
    return f"{value:+,.1f}" if isinstance(value, float) else f"{value:+,}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _banner(run: dict[str, Any]) -> list[str]:
    lines = [f"# hpbench: {run['task']} ({run['mode']})", ""]
    if run.get("offline_demo"):
        lines += [
            "> **Offline demo.** The model is the scripted provider and the routers are the",
            "> reference router: this run measures the harness, not a model or a router.",
            "",
        ]
    lines += _table(
        ("setting", "value"),
        [
            ("task", f"{run['task']} (`{run['fingerprint']}`)"),
            ("model / effort", f"{run['model']} / {run['effort']}"),
            ("repetitions", str(run["repetitions"])),
            ("arms", ", ".join(run["arms"])),
            ("Codex CLI", run.get("codex_version", UNAVAILABLE)),
            ("provider", run.get("provider", UNAVAILABLE)),
        ],
    )
    return [*lines, ""]


def _correctness(report: dict[str, Any]) -> list[str]:
    correctness = report["correctness"]
    arms = list(report["run"]["arms"])
    lines = ["## Correctness", ""]
    lines += _table(
        ("arm", "attempts", "passed", "failed", "infrastructure", "failure classes"),
        [
            (
                arm,
                str(stats["attempts"]),
                str(stats["passed"]),
                str(stats["failed"]),
                str(stats["infrastructure"]),
                ", ".join(f"{name} {n}" for name, n in stats["failure_classes"].items()) or "none",
            )
            for arm, stats in correctness["arms"].items()
        ],
    )
    lines += ["", "Pairs (first arm ran first; a voided pair had an infrastructure failure):", ""]
    rows = []
    for pair in correctness["pairs"]:
        cells = []
        for arm in arms:
            outcome = pair["arms"].get(arm)
            cells.append(
                UNAVAILABLE
                if outcome is None
                else "pass"
                if outcome["passed"]
                else outcome["failure_class"]
            )
        rows.append(
            (str(pair["repetition"]), pair["first_arm"], *cells, "yes" if pair["voided"] else "no")
        )
    lines += _table(("repetition", "first", *arms, "voided"), rows)
    test = correctness.get("mcnemar")
    if test is not None:
        lines += [
            "",
            f"Exact McNemar over {test['pairs']} non-voided pairs: control-only passes "
            f"{test['control_only']}, treatment-only passes {test['treatment_only']}, "
            f"p = {test['p_value']:.4g}.",
        ]
    return [*lines, ""]


def _usage(report: dict[str, Any]) -> list[str]:
    usage = report["usage"]
    arms = list(report["run"]["arms"])
    lines = ["## Provider usage (validated router captures)", ""]
    paired = len(arms) == 2 and usage["deltas"] is not None
    header = [*arms, "delta (hpatch - control)"] if paired else arms
    rows = []
    for label, _ in USAGE_FIGURES:
        cells = [
            _number(usage["arms"][arm][label]) if usage["arms"].get(arm) else UNAVAILABLE
            for arm in arms
        ]
        if paired:
            cells.append(_signed(usage["deltas"][label]))
        rows.append((LABELS[label], *cells))
    lines += _table(("figure", *header), rows)
    missing = [arm for arm in arms if not usage["arms"].get(arm)]
    if missing:
        lines += [
            "",
            f"No validated capture for: {', '.join(missing)}; their figures are unavailable.",
        ]
    if usage.get("bootstrap"):
        lines += ["", "Seeded paired bootstrap, 95 % interval of the mean per-pair delta:", ""]
        lines += _table(
            ("figure", "mean delta", "interval", "pairs"),
            [
                (
                    LABELS[label],
                    _signed(interval["mean"]),
                    f"[{_signed(interval['low'])}, {_signed(interval['high'])}]",
                    str(interval["pairs"]),
                )
                for label in BOOTSTRAP_FIGURES
                if (interval := usage["bootstrap"].get(label)) is not None
            ],
        )
    return [*lines, ""]


def _captures(report: dict[str, Any]) -> list[str]:
    lines = ["## Capture validation", ""]
    if not report["captures"]:
        return [*lines, "No router evidence was collected.", ""]
    for key, verdict in sorted(report["captures"].items()):
        repetition, _, arm = key.partition("-")
        state = "valid" if verdict["valid"] else "INVALID"
        lines.append(f"- repetition {repetition}, {arm}: {state}")
        lines += [f"  - {redact(finding)}" for finding in verdict["findings"]]
    return [*lines, ""]


def _commands(report: dict[str, Any]) -> list[str]:
    lines = ["## Commands the agent ran", ""]
    arms = list(report["run"]["arms"])
    categories = sorted({c for arm in arms for c in report["commands"][arm]["counts"]})
    rows = []
    for category in categories:
        cells = []
        for arm in arms:
            count = report["commands"][arm]["counts"].get(category)
            cells.append("0 (0)" if count is None else f"{count['total']} ({count['after_edit']})")
        rows.append((category, *cells))
    lines += [
        "Invocations per category, all attempts of the arm (after the first edit in brackets):",
        "",
    ]
    lines += _table(("category", *arms), rows)
    for arm in arms:
        data = report["commands"][arm]
        lines += [
            "",
            f"{arm}: {data['same_path_loops']} same-path structural loop(s), "
            f"{data['workspace_diff_loops']} workspace-wide git diff loop(s).",
        ]
        lines += [f"- {redact(text)}" for text in data["observations"]]
    return [*lines, ""]


def _instructions(report: dict[str, Any]) -> list[str]:
    lines = ["## Instructions", ""]
    hashes = report.get("instructions")
    if hashes is None:
        lines.append("No instructions were derived.")
    else:
        lines.append(
            f"Stock base instructions of Codex {hashes['codex_version']} for {hashes['model']} "
            f"(SHA-256 `{hashes['stock_sha256']}`); treatment diff: `instructions/treatment.diff`."
        )
        lines.append("")
        lines += _table(
            ("file", "SHA-256"),
            [(name, f"`{digest}`") for name, digest in sorted(hashes["files"].items())],
        )
    deliveries = report.get("deliveries") or {}
    if deliveries:
        lines += ["", "Delivery, from the scripted provider's own request records:", ""]
        lines += _table(
            ("attempt", "requests", "carrying the arm's file", "proven"),
            [
                (
                    key,
                    _number(proof["requests"]),
                    _number(proof["matching"]),
                    "yes" if proof["ok"] else "NO",
                )
                for key, proof in sorted(deliveries.items())
            ],
        )
    return [*lines, ""]


def _phases(report: dict[str, Any]) -> list[str]:
    lines = ["## Time", ""]
    rows = [(name, _number(seconds)) for name, seconds in report["phases"].items()]
    lines += _table(("phase", "seconds"), rows or [("(none recorded)", UNAVAILABLE)])
    lines += ["", "Measured agent wall time (seconds, per attempt):", ""]
    lines += _table(
        ("arm", "seconds"),
        [
            (arm, ", ".join(_number(s) for s in seconds) or UNAVAILABLE)
            for arm, seconds in report["agent_seconds"].items()
        ],
    )
    return [*lines, ""]


def render_summary(report: dict[str, Any]) -> str:
    """summary.md for a report document."""
    outcome = report["outcome"]
    verdict = ["## Outcome", ""]
    if outcome["ok"]:
        verdict.append("Every scheduled attempt ran and passed, and all evidence validated.")
    else:
        verdict += [f"- {redact(reason)}" for reason in outcome["reasons"]]
    sections = [
        _banner(report["run"]),
        [*verdict, ""],
        _correctness(report),
        _usage(report),
        _captures(report),
        _commands(report),
        _instructions(report),
        _phases(report),
    ]
    return "\n".join(line for section in sections for line in section).rstrip("\n") + "\n"


__all__ = ["CONTROL_ARM", "TREATMENT_ARM", "render_summary"]
