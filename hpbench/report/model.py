"""The report document (``hpbench.report.v1``): everything summary.md says, as data.

Correctness comes first; token figures come only from router captures that
validated, and are formatted from the snapshots' own values. Nothing here
carries a request, session, thread, tool-call or capture identity.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench.commands import analyze_file, observations
from hpbench.instructions.delivery import prove_delivery
from hpbench.stats import mcnemar_exact, paired_bootstrap

REPORT_SCHEMA = "hpbench.report.v1"
TREATMENT_ARM = "hpatch"
CONTROL_ARM = "control"

# Snapshot figures the report carries per arm, as (label, path into the snapshot).
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
BOOTSTRAP_FIGURES = ("input_tokens", "output_tokens", "cached_input_tokens", "reasoning_tokens")


@attrs.frozen
class CaptureVerdict:
    """The validator's word on one router's evidence."""

    valid: bool
    findings: tuple[str, ...]


CaptureCheck = Callable[[Path, str, Sequence[Path]], CaptureVerdict]


def _dig(document: dict[str, Any], path: tuple[str, ...]) -> int | None:
    value: Any = document
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as stream:
        return json.load(stream)


def load_results(run_dir: Path) -> list[dict[str, Any]]:
    """``results.jsonl`` of a run, line by line."""
    path = run_dir / "results.jsonl"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def _correctness(results: list[dict[str, Any]], arms: Sequence[str]) -> dict[str, Any]:
    per_arm: dict[str, Any] = {}
    for arm in arms:
        mine = [r for r in results if r["arm"] == arm]
        per_arm[arm] = {
            "attempts": len(mine),
            "passed": sum(1 for r in mine if r["passed"]),
            "failed": sum(
                1 for r in mine if not r["passed"] and r["failure_class"] != "infrastructure"
            ),
            "infrastructure": sum(1 for r in mine if r["failure_class"] == "infrastructure"),
            "failure_classes": dict(
                sorted(Counter(r["failure_class"] for r in mine if not r["passed"]).items())
            ),
        }
    pairs = []
    for repetition in sorted({r["repetition"] for r in results}):
        members = {r["arm"]: r for r in results if r["repetition"] == repetition}
        first = min(members.values(), key=lambda r: r["pair_order"])["arm"]
        voided = any(r["failure_class"] == "infrastructure" for r in members.values()) or len(
            members
        ) < len(arms)
        pairs.append(
            {
                "repetition": repetition,
                "first_arm": first,
                "voided": voided,
                "arms": {
                    arm: (
                        {"passed": r["passed"], "failure_class": r["failure_class"]}
                        if (r := members.get(arm)) is not None
                        else None
                    )
                    for arm in arms
                },
            }
        )
    mcnemar = None
    if len(arms) == 2:
        outcomes = [
            (p["arms"][CONTROL_ARM]["passed"], p["arms"][TREATMENT_ARM]["passed"])
            for p in pairs
            if not p["voided"]
        ]
        if len(pairs) >= 2:
            test = mcnemar_exact(outcomes)
            mcnemar = {
                "pairs": len(outcomes),
                "control_only": test.control_only,
                "treatment_only": test.treatment_only,
                "p_value": test.p_value,
            }
    return {"arms": per_arm, "pairs": pairs, "mcnemar": mcnemar}


def _router_dirs(run_dir: Path, arm: str) -> list[tuple[int, Path]]:
    found = []
    for path in sorted((run_dir / "routers").glob(f"*-{arm}")):
        prefix = path.name.removesuffix(f"-{arm}")
        if prefix.isdigit():
            found.append((int(prefix), path))
    return found


def _usage(
    run_dir: Path, arms: Sequence[str], check: CaptureCheck, voided: set[int]
) -> tuple[dict[str, Any], dict[str, Any]]:
    captures: dict[str, Any] = {}
    per_rep: dict[str, dict[int, dict[str, int | None]]] = {arm: {} for arm in arms}
    for arm in arms:
        for repetition, router_dir in _router_dirs(run_dir, arm):
            jsonl = [run_dir / "attempts" / f"{repetition}-{arm}" / "codex.jsonl"]
            verdict = check(router_dir, arm, jsonl)
            captures[f"{repetition}-{arm}"] = {
                "valid": verdict.valid,
                "findings": list(verdict.findings),
            }
            if verdict.valid:
                snapshot = _read_json(router_dir / "metrics.json")
                per_rep[arm][repetition] = {
                    label: _dig(snapshot, path) for label, path in USAGE_FIGURES
                }
    arms_usage: dict[str, Any] = {}
    for arm in arms:
        reps = per_rep[arm]
        all_valid = bool(reps) and all(
            captures[key]["valid"] for key in captures if key.endswith(f"-{arm}")
        )
        if not all_valid:
            arms_usage[arm] = None
            continue
        arms_usage[arm] = {
            label: _sum([figures[label] for figures in reps.values()]) for label, _ in USAGE_FIGURES
        }
    usage: dict[str, Any] = {"arms": arms_usage, "deltas": None, "bootstrap": None}
    if len(arms) == 2 and all(arms_usage.get(arm) for arm in arms):
        control, treatment = arms_usage[CONTROL_ARM], arms_usage[TREATMENT_ARM]
        usage["deltas"] = {
            label: None
            if control[label] is None or treatment[label] is None
            else treatment[label] - control[label]
            for label, _ in USAGE_FIGURES
        }
        shared = sorted((set(per_rep[CONTROL_ARM]) & set(per_rep[TREATMENT_ARM])) - voided)
        intervals = {}
        for label in BOOTSTRAP_FIGURES:
            deltas = [
                per_rep[TREATMENT_ARM][rep][label] - per_rep[CONTROL_ARM][rep][label]  # type: ignore[operator]
                for rep in shared
                if per_rep[TREATMENT_ARM][rep][label] is not None
                and per_rep[CONTROL_ARM][rep][label] is not None
            ]
            interval = paired_bootstrap([float(d) for d in deltas])
            if interval is not None:
                intervals[label] = attrs.asdict(interval)
        usage["bootstrap"] = intervals or None
    return usage, captures


def _sum(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def _commands(run_dir: Path, results: list[dict[str, Any]], arms: Sequence[str]) -> dict[str, Any]:
    per_arm: dict[str, Any] = {}
    for arm in arms:
        counts: Counter[str] = Counter()
        after: Counter[str] = Counter()
        loops = workspace_loops = analysed = 0
        notes: list[str] = []
        for result in results:
            if result["arm"] != arm:
                continue
            jsonl = run_dir / "attempts" / f"{result['repetition']}-{arm}" / "codex.jsonl"
            if not jsonl.is_file():
                continue
            analysis = analyze_file(jsonl, workspace_root=result["workspace_root"])
            analysed += 1
            for category, count in analysis.counts.items():
                counts[category.value] += count.total
                after[category.value] += count.after_edit
            loops += len(analysis.loops)
            workspace_loops += len(analysis.workspace_diff_loops)
            notes.extend(o.message for o in observations(analysis))
        per_arm[arm] = {
            "attempts_analysed": analysed,
            "counts": {k: {"total": counts[k], "after_edit": after[k]} for k in sorted(counts)},
            "same_path_loops": loops,
            "workspace_diff_loops": workspace_loops,
            "observations": notes,
        }
    return per_arm


def _deliveries(
    run_dir: Path, run: dict[str, Any], results: list[dict[str, Any]]
) -> dict[str, Any]:
    """Per attempt, the proof from the scripted provider's own records
    (``reps/<repetition>/provider.jsonl``) that the arm received exactly its instructions
    file (the attempt's ``instructions_artifact``). Only the offline demo has such records;
    there, records that are missing or unreadable leave the delivery unproven."""
    if not run.get("offline_demo"):
        return {}
    proofs: dict[str, Any] = {}
    for result in sorted(results, key=lambda r: (r["repetition"], r["arm"])):
        key = f"{result['repetition']}-{result['arm']}"
        proofs[key] = {"ok": False, "requests": None, "matching": None}
        records = run_dir / "reps" / str(result["repetition"]) / "provider.jsonl"
        artifact = result.get("instructions_artifact")
        if not isinstance(artifact, str):
            continue
        try:
            proof = prove_delivery(records, result["arm"], run_dir / artifact)
        except (OSError, UnicodeDecodeError):
            continue
        proofs[key] = {"ok": proof.ok, "requests": proof.requests, "matching": proof.matching}
    return proofs


def _instructions(run_dir: Path) -> dict[str, Any] | None:
    """The retained instructions' digests (hashes.json), or None when none were derived."""
    path = run_dir / "instructions" / "hashes.json"
    if not path.is_file():
        return None
    hashes = _read_json(path)
    return {
        "codex_version": hashes.get("codex_version"),
        "model": hashes.get("model"),
        "stock_sha256": hashes.get("stock_sha256"),
        "files": {name: info.get("sha256") for name, info in hashes.get("files", {}).items()},
    }


def read_phases(path: Path) -> dict[str, float]:
    """Phase elapsed times the shell recorded as ``<phase>\t<seconds>`` lines.

    A phase recorded several times (one per repetition, say) is summed.
    Malformed lines are skipped: phase times are context, not measurements.
    """
    phases: dict[str, float] = {}
    if not path.is_file():
        return phases
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, seconds = line.partition("\t")
        try:
            value = float(seconds)
        except ValueError:
            continue
        phases[name] = round(phases.get(name, 0.0) + value, 3)
    return phases


def build_report(run_dir: Path, check: CaptureCheck) -> dict[str, Any]:
    """The report document for a run directory whose results are merged."""
    run = _read_json(run_dir / "run.json")
    arms: list[str] = list(run["arms"])
    results = load_results(run_dir)
    correctness = _correctness(results, arms)
    voided = {p["repetition"] for p in correctness["pairs"] if p["voided"]}
    usage, captures = _usage(run_dir, arms, check, voided)
    phases = read_phases(run_dir / "phases.tsv")
    commands = _commands(run_dir, results, arms)
    deliveries = _deliveries(run_dir, run, results)
    reasons = []
    if len(results) != run["repetitions"] * len(arms):
        reasons.append(
            f"{len(results)} of {run['repetitions'] * len(arms)} scheduled attempts have results"
        )
    failed = [r for r in results if not r["passed"]]
    if failed:
        reasons.append(f"{len(failed)} attempt(s) did not pass")
    invalid = sorted(key for key, verdict in captures.items() if not verdict["valid"])
    if invalid:
        reasons.append(f"capture validation failed for {', '.join(invalid)}")
    expected_captures = {f"{r['repetition']}-{r['arm']}" for r in results}
    missing = sorted(expected_captures - set(captures))
    if missing:
        reasons.append(f"no router evidence for {', '.join(missing)}")
    undelivered = sorted(key for key, proof in deliveries.items() if not proof["ok"])
    if undelivered:
        reasons.append(f"instructions not proven delivered for {', '.join(undelivered)}")
    loops = sum(a["same_path_loops"] for a in commands.values())
    if loops and run.get("enforce_no_edit_loops", True):
        reasons.append(f"{loops} same-path structural loop(s) (BENCHMARK_ENFORCE_NO_EDIT_LOOPS)")
    return {
        "schema": REPORT_SCHEMA,
        "run": run,
        "correctness": correctness,
        "usage": usage,
        "captures": captures,
        "commands": commands,
        "instructions": _instructions(run_dir),
        "deliveries": deliveries,
        "phases": phases,
        "agent_seconds": {
            arm: [r["elapsed"]["agent_seconds"] for r in results if r["arm"] == arm] for arm in arms
        },
        "outcome": {"ok": not reasons, "reasons": reasons},
    }
