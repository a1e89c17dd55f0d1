"""summary.md: what a person reads first, rendered from the report document.

Correctness first, then provider usage from validated captures with signed
deltas (treatment minus control; negative stays negative), then command
analysis and phase times. Unknown values print as "unavailable", never 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hpbench.modes import EXACT_EVIDENCE_MODES, REPORT_ISSUE_DEFAULTS, compared_arms, mode_of
from hpbench.report.markdown import (
    UNAVAILABLE,
    arm_title,
    number,
    percent,
    redact,
    signed,
    table,
)
from hpbench.report.summary_hpatch import hpatch_section
from hpbench.report.summary_models import models_section
from hpbench.report.summary_prefix import cache_prefix_section
from hpbench.report.summary_usage import evidence_section, usage_section
from hpbench.report.summary_what_ran import what_ran_section

# The threshold a reader most often brings; McNemar's floor is compared with it
# only to say in words when no outcome of these pairs could get there.
CONVENTIONAL_ALPHA = 0.05


def _mode_rows(report: dict[str, Any]) -> list[tuple[str, str]]:
    """What the mode adds to the settings: the arms' protocols, the mentor model, the
    imported control's source, the exact-evidence and issue-report toggles, the loop gate."""
    run = report["run"]
    mode = mode_of(run["mode"])
    fresh = ", ".join(run["arms"])
    imported = f"; {mode.imported.value} (imported)" if mode.imported is not None else ""
    rows = [("arms", f"{fresh} (fresh){imported}" if imported else fresh)]
    if mode.protocol is not None:
        rows.append((mode.protocol.variable, run["treatment_model_protocol"]))
    if run["mentor_model"]:
        rows.append(("mentor model", f"{run['mentor_model']} (mentor arm only)"))
    if mode.imported is not None and (source := report.get("imported")) is not None:
        rows.append((mode.imported.value, f"{source['label']}; metrics: {source['metrics']}"))
    if mode.name in EXACT_EVIDENCE_MODES:
        # Spec 004's toggle: its state here, its rows in their own section.
        rows.append(("exact evidence", "on" if run["exact_evidence"] else "off"))
    if mode.name in REPORT_ISSUE_DEFAULTS:
        # Spec 004: the toggle and the count; the reports stay in issue-reports.jsonl.
        rows.append(("issue reports (report_issue)", _issue_reports(report)))
    # Spec 004's gate: its state, whatever the loops turned out to be.
    gate = (
        "on: a same-path or workspace-wide loop fails the run after the report"
        if run.get("enforce_no_edit_loops", True)
        else "off (BENCHMARK_ENFORCE_NO_EDIT_LOOPS=false): loops are reported, never gated"
    )
    rows.append(("loop gate", gate))
    return rows


def _issue_reports(report: dict[str, Any]) -> str:
    section = report.get("issue_reports")
    if section is None:
        return "off"
    collected, calls = section["collected"], section["calls"]
    if collected is None:
        return "on; refused (see the outcome), none counted"
    # Both numbers, as for any retained fraction: a failed hook or a call that was no
    # report shows as fewer collected than called.
    called = UNAVAILABLE if calls is None else str(calls)
    return (
        f"on; {collected} collected of {called} report_issue call(s) the model made "
        "(bodies in each attempt's issue-reports.jsonl)"
    )


def _banner(report: dict[str, Any]) -> list[str]:
    run = report["run"]
    lines = [f"# hpbench: {run['task']} ({run['mode']})", ""]
    if run.get("offline_demo"):
        images = {run["control_router_image"], run["hpatch_router_image"]}
        if images == {run["reference_router_image"]}:
            routers = (
                "the routers are the reference router: this run measures the harness, "
                "not a model or a router."
            )
        else:
            routers = (
                f"the routers are {run['control_router_image']} (control) and "
                f"{run['hpatch_router_image']} (hpatch): this run measures the harness, "
                "not a model."
            )
        lines += ["> **Offline demo.** The model is the scripted provider and " + routers, ""]
    lines += table(
        ("setting", "value"),
        [
            ("task", f"{run['task']} (`{run['fingerprint']}`)"),
            ("model / effort", f"{run['model']} / {run['effort']}"),
            ("repetitions", str(run["repetitions"])),
            *_mode_rows(report),
        ],
    )
    mode = mode_of(run["mode"])
    # The arm a one-arm mode lacks, by the name its paired counterpart has.
    missing = [
        name
        for name, arm in (("control", mode.baseline), ("hpatch", mode.treatment))
        if arm is None
    ]
    if missing:
        # A one-arm mode (control-only, hpatch-diagnostic) compares nothing: it says so
        # instead of showing an empty column or a delta against nothing.
        lines += [
            "",
            f"No {' or '.join(missing)} arm ran in this mode (none was scheduled or "
            "imported): no value of it and no delta is shown.",
        ]
    return [*lines, ""]


def _pass_rate(stats: dict[str, Any]) -> tuple[str, str]:
    rate = stats["pass_rate"]
    if rate is None:
        return f"{UNAVAILABLE} (no compared attempt)", UNAVAILABLE
    return (
        f"{percent(rate['rate'])} ({rate['successes']} of {rate['trials']})",
        f"[{percent(rate['low'])}, {percent(rate['high'])}]",
    )


def _attrition(stats: dict[str, Any]) -> str:
    attrition = stats["attrition"]
    if not attrition["voided"]:
        return "none"
    reasons = "; ".join(f"{n} {why}" for why, n in attrition["reasons"].items())
    # The reasons may quote a harness failure's text: one line, no column breaks.
    text = " ".join(f"{attrition['voided']} voided: {reasons}".split())
    return redact(text).replace("|", "\\|")


def _mcnemar(test: dict[str, Any]) -> str:
    line = (
        f"Exact McNemar over the {test['pairs']} compared pairs: control-only passes "
        f"{test['control_only']}, treatment-only passes {test['treatment_only']}, "
        f"p = {test['p_value']:.4g}. With {test['discordant']} discordant pair(s) the smallest "
        f"p any outcome could give is {test['min_p_value']:.4g}"
    )
    if test["discordant"] == 0:
        return line + "; every pair agrees, so the test cannot show a difference."
    if test["min_p_value"] > CONVENTIONAL_ALPHA:
        return line + f"; no outcome of so few pairs could reach p < {CONVENTIONAL_ALPHA}."
    return line + "."


def _pair_rows(pairs: list[dict[str, Any]], arms: list[str]) -> list[tuple[str, ...]]:
    rows = []
    for pair in pairs:
        cells = []
        for arm in arms:
            outcome = pair["arms"].get(arm)
            if outcome is None:
                cells.append("no result")
            else:
                cells.append("pass" if outcome["passed"] else outcome["failure_class"])
        voided = "yes" if pair["voided"] else "no"
        rows.append((str(pair["repetition"]), pair["first_arm"] or "none", *cells, voided))
    return rows


def _hidden_tests(counts: dict[str, int] | None) -> str:
    """ "14 of 14 named (2 attempts)", or unavailable when no attempt was judged by name."""
    if counts is None:
        return "unavailable"
    return f"{counts['passed']} of {counts['required']} named ({counts['attempts']} attempts)"


def _arm_tallies(report: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
    """Each arm's ``key`` tally of the correctness section, by the arm's title; arms
    without one (null) are left out."""
    return [
        (arm_title(report, arm), tally)
        for arm, stats in report["correctness"]["arms"].items()
        if (tally := stats.get(key)) is not None
    ]


def _final_response_lines(report: dict[str, Any]) -> list[str]:
    """One line per arm when the task requires an exact final response: counts only, the
    agent's text never (it is the agent's, and may carry anything)."""
    tallies = _arm_tallies(report, "final_responses")
    if not tallies:
        return []
    lines = [
        "",
        "The task requires an exact final response (the final substantive agent message, "
        "router `Tokens: …` telemetry taken out):",
        "",
    ]
    for arm, tally in tallies:
        lines.append(
            f"- {arm}: {tally['matched']} of {tally['attempts']} attempt(s) gave it"
            f"{f'; {n} had no final message' if (n := tally['missing']) else ''}."
        )
    return lines


def _commentary_lines(report: dict[str, Any]) -> list[str]:
    """One line per arm a commentary-coverage profile holds: counts and profile names."""
    tallies = _arm_tallies(report, "commentary")
    if not tallies:
        return []
    lines = [
        "",
        "Commentary coverage (the task's profiles, checked in each attempt's Codex JSONL; "
        "apart from the hidden grader and from capture metrics):",
        "",
    ]
    lines += [
        f"- {arm}: {t['covered']} of {t['attempts']} attempt(s) covered "
        f"({', '.join(t['profiles'])})."
        for arm, t in tallies
    ]
    return lines


def _correctness(report: dict[str, Any]) -> list[str]:
    correctness = report["correctness"]
    arms = compared_arms(report["run"])
    lines = ["## Correctness", ""]
    if correctness.get("oracle_tier") == "latency-only":
        lines += [
            "Latency-only task: no correctness claim is made; a pass means only that the "
            "attempt ran within its bounds and allowed paths.",
            "",
        ]
    lines += table(
        (
            "arm",
            "attempts",
            "passed",
            "failed",
            "infrastructure",
            "hidden tests passed",
            "failure classes",
        ),
        [
            (
                arm_title(report, arm),
                str(stats["attempts"]),
                str(stats["passed"]),
                str(stats["failed"]),
                str(stats["infrastructure"]),
                _hidden_tests(stats.get("hidden_tests")),
                ", ".join(f"{name} {n}" for name, n in stats["failure_classes"].items()) or "none",
            )
            for arm, stats in correctness["arms"].items()
        ],
    )
    lines += _final_response_lines(report)
    lines += _commentary_lines(report)
    lines += [
        "",
        "Pass rate per arm over its attempts in compared (non-voided) pairs, with a Wilson "
        "95 % interval; attrition is what the comparison lost, and why:",
        "",
    ]
    lines += table(
        ("arm", "pass rate", "Wilson 95 % interval", "attrition"),
        [
            (arm_title(report, arm), *_pass_rate(stats), _attrition(stats))
            for arm, stats in correctness["arms"].items()
        ],
    )
    lines += [
        "",
        "Pairs (first arm ran first; a voided pair lacks a result or had an infrastructure "
        "failure):",
        "",
    ]
    lines += table(("repetition", "first", *arms, "voided"), _pair_rows(correctness["pairs"], arms))
    statistics = report["statistics"]
    lines.append("")
    if not statistics["shown"]:
        lines.append(f"No statistics: {statistics['why']}.")
    elif (test := correctness.get("mcnemar")) is not None:
        lines.append(_mcnemar(test))
    return [*lines, ""]


def _captures(report: dict[str, Any]) -> list[str]:
    lines = ["## Capture validation", ""]
    if not report["captures"]:
        return [*lines, "No router evidence was collected.", ""]
    for key, verdict in sorted(report["captures"].items()):
        repetition, _, arm = key.partition("-")
        state = "valid" if verdict["valid"] else "INVALID"
        lines.append(f"- repetition {repetition}, {arm}: {state}")
        lines += [f"  - {redact(finding_line(finding))}" for finding in verdict["findings"]]
    return [*lines, ""]


def finding_line(finding: dict[str, Any]) -> str:
    """One validator finding in a line: its code, where (file name, line, field), and what.

    The file is shown by name: the section already says which router it belongs to.
    """
    where = ""
    if finding.get("file") is not None:
        where = Path(str(finding["file"])).name
        if finding.get("line") is not None:
            where += f":{finding['line']}"
    if finding.get("field") is not None:
        where = f"{where} {finding['field']}".strip()
    place = f" ({where})" if where else ""
    return f"`{finding['code']}`{place}: {finding['message']}"


def _command_cells(data: dict[str, Any], arms: list[str], category: str) -> list[str]:
    cells = []
    for arm in arms:
        counts = data[arm]["counts"]
        if counts is None:
            cells.append(UNAVAILABLE)
            continue
        count = counts.get(category, {"total": 0, "after_edit": 0})
        cells.append(f"{count['total']} ({count['after_edit']})")
    return cells


def _commands(report: dict[str, Any]) -> list[str]:
    lines = ["## Commands the agent ran", ""]
    data = report["commands"]
    # Only this run's own attempts have Codex streams (an imported control has none here).
    arms = [arm for arm in compared_arms(report["run"]) if arm in data]
    categories = sorted({c for arm in arms for c in (data[arm]["counts"] or {})})
    rows = [(category, *_command_cells(data, arms, category)) for category in categories]
    if not rows:
        rows = [("(any)", *_command_cells(data, arms, "(any)"))]
    header = [
        f"{arm} ({data[arm]['attempts_analysed']} of {data[arm]['attempts']} analysed)"
        for arm in arms
    ]
    lines += [
        "Invocations per category over the attempts whose Codex JSONL was analysed "
        "(after the first edit in brackets):",
        "",
    ]
    lines += table(("category", *header), rows)
    for arm in arms:
        arm_data = data[arm]
        if arm_data["counts"] is None:
            lines += ["", f"{arm}: loops {UNAVAILABLE} (no Codex JSONL analysed)."]
            continue
        lines += [
            "",
            f"{arm}: {arm_data['same_path_loops']} same-path structural loop(s), "
            f"{arm_data['workspace_diff_loops']} workspace-wide git diff loop(s).",
        ]
        lines += [f"- {redact(text)}" for text in arm_data["observations"]]
    return [*lines, "", *_edit_rounds(data, arms)]


_EDIT_ROUND_HEADER = (
    "attempt",
    "rounds",
    "completed file changes",
    "failed file changes",
    "changes per round",
    "commands between rounds",
    "rounds followed by a test/build",
)


def _edit_round_row(key: str, rounds: dict[str, Any] | None) -> tuple[str, ...]:
    if rounds is None:
        # Not analysed: no count is known, so none is printed as 0.
        return (key, *[UNAVAILABLE] * (len(_EDIT_ROUND_HEADER) - 1))
    per_round = ", ".join(number(n) for n in rounds["changes_per_round"]) or "none"
    return (
        key,
        number(rounds["rounds"]),
        number(rounds["file_changes"]),
        number(rounds["failed_file_changes"]),
        per_round,
        number(rounds["commands_between_rounds"]),
        number(rounds["rounds_followed_by_test"]),
    )


def _edit_rounds(data: dict[str, Any], arms: list[str]) -> list[str]:
    lines = [
        "### Edit rounds",
        "",
        "An edit round is a run of file changes with no command between them. These are the "
        "client-side `file_change` items as Codex executed them (failed ones included), which "
        "are not the same as routed Hpatch calls: those are in the Hpatch section.",
    ]
    for arm in arms:
        rows = [_edit_round_row(key, rounds) for key, rounds in data[arm]["edit_rounds"].items()]
        lines += ["", f"{arm}:", ""]
        lines += table(_EDIT_ROUND_HEADER, rows or [_edit_round_row("(no attempt)", None)])
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
        lines += table(
            ("file", "SHA-256"),
            [(name, f"`{digest}`") for name, digest in sorted(hashes["files"].items())],
        )
    deliveries = report.get("deliveries") or {}
    if deliveries:
        lines += ["", "Delivery, from the scripted provider's own request records:", ""]
        lines += table(
            ("attempt", "requests", "carrying the arm's file", "proven"),
            [
                (
                    key,
                    number(proof["requests"]),
                    number(proof["matching"]),
                    "yes" if proof["ok"] else "NO",
                )
                for key, proof in sorted(deliveries.items())
            ],
        )
    return [*lines, ""]


def _phases(report: dict[str, Any]) -> list[str]:
    lines = ["## Time", ""]
    rows = [(name, number(seconds)) for name, seconds in report["phases"].items()]
    lines += table(("phase", "seconds"), rows or [("(none recorded)", UNAVAILABLE)])
    lines += ["", "Measured agent wall time (seconds, per attempt):", ""]
    lines += table(
        ("arm", "seconds"),
        [
            (arm, ", ".join(number(s) for s in seconds) or UNAVAILABLE)
            for arm, seconds in report["agent_seconds"].items()
        ],
    )
    return [*lines, ""]


def _exact_evidence(report: dict[str, Any]) -> list[str]:
    """Spec 004's rows per treatment attempt: retained fractions with both numbers, bytes,
    chains and fragment counts; never a payload, report, diagnostic or identity."""
    section = report["exact_evidence"]
    if section is None:
        return []
    lines = ["## Exact evidence", ""]
    if not section:
        return [*lines, "No analysis: the run stopped before its evidence was read.", ""]
    for key, analysis in sorted(section.items()):
        if not analysis["ok"]:
            lines += [f"- {key}: refused ({len(analysis['findings'])} finding(s)); no rows", ""]
            continue
        rows = [(line["label"], line["value"]) for line in analysis["lines"]]
        lines += [f"{key}:", "", *table(("row", "value"), rows), ""]
    lines += [
        "Fragment counts are textual overlap between a correction and the diagnostic "
        "before it, not evidence of what the model understood.",
        "",
    ]
    return lines


def _compression(report: dict[str, Any]) -> list[str]:
    """The CTP compression gate, when the task requires compression: measured values kept."""
    gate = report["compression"]
    if not gate["required"]:
        return []
    lines = [
        "## CTP compression",
        "",
        f"The task requires positive token savings ({', '.join(gate['required'])}; "
        "client minus provider, signed) in every attempt its mode holds to it: the "
        "treatment's, and with CTP/2 in mentor-handoff both arms'.",
        "",
    ]
    rows = [
        (key, *(signed(measured[d]) for d in gate["required"]))
        for key, measured in sorted(gate["attempts"].items())
    ]
    lines += table(("attempt", *gate["required"]), rows)
    lines.append("")
    if gate["failures"]:
        lines += [f"- FAILED: {failure}" for failure in gate["failures"]] + [""]
    return lines


def invocation_lines(rows: list[dict[str, Any]] | None) -> list[str]:
    """Which invocation ran which repetition, for a resumed run."""
    if not rows:
        return []
    lines = ["", "Resumed run (`benchmarks/bench.sh resume`):"]
    for row in rows:
        ran = ", ".join(str(r) for r in row["repetitions"]) or "none"
        if row["invocation"] == 1:
            lines.append(f"- invocation 1 ran repetition(s) {ran};")
        else:
            lines.append(
                f"- invocation {row['invocation']} ran repetition(s) {ran} again (the evidence "
                f"it replaced is in superseded/{row['invocation']}/);"
            )
    lines[-1] = lines[-1].rstrip(";") + "."
    lines.append(
        "Kept repetitions ran under the same settings, task, images and instructions, checked "
        "before the resume ran anything."
    )
    return lines


def render_summary(report: dict[str, Any]) -> str:
    """summary.md for a report document."""
    outcome = report["outcome"]
    verdict = ["## Outcome", ""]
    if outcome["ok"]:
        verdict.append("Every scheduled attempt ran and passed, and all evidence validated.")
    else:
        verdict += [f"- {redact(reason)}" for reason in outcome["reasons"]]
    verdict += invocation_lines(report.get("invocations"))
    sections = [
        _banner(report),
        what_ran_section(report),
        [*verdict, ""],
        _correctness(report),
        usage_section(report),
        models_section(report),
        evidence_section(report),
        _captures(report),
        _commands(report),
        _instructions(report),
        hpatch_section(report),
        _compression(report),
        cache_prefix_section(report),
        _exact_evidence(report),
        _phases(report),
    ]
    return "\n".join(line for section in sections for line in section).rstrip("\n") + "\n"


__all__ = ["render_summary"]
