"""The report document (``hpbench.report.v1``): everything summary.md says, as data.

Correctness comes first; token figures come only from router captures that
validated, and are formatted from the snapshots' own values. Nothing here
carries a request, session, thread, tool-call or capture identity.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench._documents import document_json, read_document
from hpbench.capture.models import MetricsSnapshot
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.imported import Imported, load_imported
from hpbench.instructions.delivery import prove_delivery
from hpbench.instructions.derive import read_hashes
from hpbench.modes import ARM_ROUTERS, HPATCH, Mode, compared_arms, mode_of
from hpbench.plan import load_plan, plan_json
from hpbench.report.command_figures import command_figures, loop_gate_reasons
from hpbench.report.compression import compression_gate, gated_attempts
from hpbench.report.correctness import (
    MIN_PAIRS_FOR_TEST,
    Populations,
    baseline_and_treatment,
    correctness,
    populations,
)
from hpbench.report.document import REPORT_SCHEMA, ReportDocument
from hpbench.report.evidence import router_evidence
from hpbench.report.exact import exact_evidence_section
from hpbench.report.figures import (
    BOOTSTRAP_FIGURES,
    NOTHING_REPORTED,
    TOKEN_FIGURES,
    USAGE_FIGURES,
    Figures,
    attempt_figures,
    comparison,
)
from hpbench.report.hpatch import hpatch_results
from hpbench.report.issues import issue_reports_section
from hpbench.report.models import model_rows
from hpbench.report.provenance import provenance
from hpbench.report.verdict import CaptureCheck, CaptureVerdict
from hpbench.results.model import Attempt, attempt_from_json
from hpbench.resume import invocations
from hpbench.rundir import CAPTURE_DIR, CODEX_JSONL, INSTRUCTIONS_HASHES, Arm, RunLayout
from hpbench.stats import MIN_PAIRS_FOR_INTERVAL


def load_results(run_dir: Path) -> list[Attempt]:
    """``results.jsonl`` of a run, line by line, each read through the attempt model.

    Raises:
        ContractError: a line that is not JSON or not an attempt object of the contract.
    """
    path = RunLayout(run_dir).results
    if not path.is_file():
        return []
    attempts = []
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            source = f"{path}:{number}"
            try:
                document = json.loads(line)
            except json.JSONDecodeError as exc:
                finding = Finding("report.results", f"not JSON: {exc}", str(path), line=number)
                raise ContractError(f"{source}: not an attempt object", [finding]) from None
            try:
                attempts.append(attempt_from_json(document, source=str(path)))
            except ContractError as exc:
                located = [attrs.evolve(f, line=number) for f in exc.findings]
                raise ContractError(f"{source}: not an attempt object", located) from None
    return attempts


def _router_dirs(run_dir: Path, arm: str) -> list[tuple[int, Path]]:
    found = []
    for path in RunLayout(run_dir).routers_of(arm):
        prefix = path.name.removesuffix(f"-{arm}")
        if prefix.isdigit():
            found.append((int(prefix), path))
    return found


@attrs.frozen
class _Captured:
    """Each router's verdict, the figures and snapshots of the valid ones (by attempt key),
    every router's evidence rows, and every capture directory."""

    captures: dict[str, Any]
    per_attempt: dict[str, Figures]
    evidence: dict[str, Any]
    directories: list[Path]
    valid: dict[str, MetricsSnapshot]
    # Each capture's cache-prefix rows (spec 002's diagnostic table); null when invalid.
    cache_prefix: dict[str, list[dict[str, Any]] | None]


def _captures(run_dir: Path, arms: Sequence[str], check: CaptureCheck) -> _Captured:
    """Every router directory of ``arms``, checked once."""
    captures: dict[str, Any] = {}
    per_attempt: dict[str, Figures] = {}
    evidence: dict[str, Any] = {}
    directories: list[Path] = []
    valid: dict[str, MetricsSnapshot] = {}
    prefix: dict[str, list[dict[str, Any]] | None] = {}
    for arm in arms:
        for repetition, router_dir in _router_dirs(run_dir, arm):
            key = f"{repetition}-{arm}"
            jsonl = [RunLayout(run_dir).attempt(repetition, arm) / CODEX_JSONL]
            verdict = check(router_dir, arm, jsonl)
            captures[key] = {
                "valid": verdict.valid,
                "findings": [finding.to_json() for finding in verdict.findings],
            }
            evidence[key] = router_evidence(router_dir, verdict.snapshot)
            directories.append(router_dir / CAPTURE_DIR)
            prefix[key] = None
            if verdict.valid and verdict.snapshot is not None:
                per_attempt[key] = attempt_figures(verdict.snapshot)
                valid[key] = verdict.snapshot
                prefix[key] = [attrs.asdict(row) for row in verdict.cache_prefix]
    return _Captured(captures, per_attempt, evidence, directories, valid, prefix)


def _usage(
    per_attempt: dict[str, Figures],
    attempt_keys: Sequence[str],
    arms: Sequence[str],
    chosen: Populations,
) -> dict[str, Any]:
    usage = comparison(per_attempt, arms, chosen.compared)
    usage["both_passed"] = (
        comparison(per_attempt, arms, chosen.both_passed) if usage["deltas"] is not None else None
    )
    usage["attempts"] = {
        key: dict(per_attempt.get(key, NOTHING_REPORTED)) for key in sorted(attempt_keys)
    }
    return usage


def _statistics(arms: Sequence[str], chosen: Populations) -> dict[str, Any]:
    """Whether statistics are shown, and in one line why not."""
    pairs = len(chosen.compared)
    why = None
    if baseline_and_treatment(arms) is None:
        why = "one arm: there is nothing to compare"
    elif pairs < MIN_PAIRS_FOR_TEST:
        why = (
            f"{pairs} compared pair(s): McNemar needs at least {MIN_PAIRS_FOR_TEST} and a "
            f"bootstrap interval at least {MIN_PAIRS_FOR_INTERVAL}, so a difference between "
            "the arms cannot be shown (run more with REPETITIONS=N)"
        )
    return {
        "shown": why is None,
        "why": why,
        "compared_pairs": pairs,
        "min_pairs_for_test": MIN_PAIRS_FOR_TEST,
        "min_pairs_for_interval": MIN_PAIRS_FOR_INTERVAL,
    }


def _add_imported(imported: Imported | None, captured: _Captured) -> dict[str, MetricsSnapshot]:
    """Place the imported control in the comparison: its evidence row says where it came
    from, and its metrics count only when they are of the current capture contract.
    Returns the snapshots the models table reads (the valid captures and those metrics)."""
    snapshots = dict(captured.valid)
    if imported is None:
        return snapshots
    key = imported.control.key
    captured.evidence[key] = {
        "rows": None,
        "unavailable": f"{imported.label}: no records in this run",
        "reconciled": False,
        "problems": [],
    }
    if imported.metrics is not None:
        captured.per_attempt[key] = attempt_figures(imported.metrics)
        snapshots[key] = imported.metrics
    return snapshots


def _compression(
    run: dict[str, Any], mode: Mode, fresh: Sequence[Attempt], valid: dict[str, MetricsSnapshot]
) -> dict[str, Any]:
    """The task's CTP compression gate (spec 002) over the attempts the mode holds to it."""
    protocol = run["treatment_model_protocol"]
    gated = gated_attempts(mode, protocol, [(r.key, r.arm) for r in fresh])
    return compression_gate(run["require_compression"], gated, valid)


def _imported_section(imported: Imported | None) -> dict[str, Any] | None:
    if imported is None:
        return None
    source = imported.baseline
    return {
        "label": imported.label,
        "source_run_id": source.source_run_id,
        "source_mode": source.source_mode,
        "source_repetition": source.control.repetition,
        "passed": source.control.passed,
        "metrics": "current" if imported.metrics is not None else "context only",
    }


def _deliveries(run_dir: Path, run: dict[str, Any], results: list[Attempt]) -> dict[str, Any]:
    """Per attempt, the proof from the scripted provider's own records
    (``reps/<repetition>/provider.jsonl``) that the arm received exactly its instructions
    file (the attempt's ``instructions_artifact``). Only the offline demo has such records;
    there, records that are missing or unreadable leave the delivery unproven."""
    if not run.get("offline_demo"):
        return {}
    proofs: dict[str, Any] = {}
    for result in sorted(results, key=lambda r: (r.repetition, r.arm)):
        proofs[result.key] = {"ok": False, "requests": None, "matching": None}
        records = RunLayout(run_dir).provider_records(result.repetition)
        try:
            proof = prove_delivery(records, result.arm, run_dir / result.instructions_artifact)
        except (OSError, UnicodeDecodeError):
            continue
        proofs[result.key] = {
            "ok": proof.ok,
            "requests": proof.requests,
            "matching": proof.matching,
        }
    return proofs


def _instructions(run_dir: Path) -> dict[str, Any] | None:
    """The retained instructions' digests (hashes.json, read through its model), or None
    when none were derived.

    Raises:
        ContractError: a hashes.json that is not the contract.
    """
    path = RunLayout(run_dir).instructions_dir / INSTRUCTIONS_HASHES
    if not path.is_file():
        return None
    hashes = read_hashes(path)
    return {
        "codex_version": hashes.codex_version,
        "model": hashes.model,
        "stock_sha256": hashes.stock_sha256,
        "files": {name: info.sha256 for name, info in hashes.files.items()},
    }


def _credential_exposures(run_dir: Path) -> list[str]:
    """The files the credential was found in and replaced (``hpbench run finish``)."""
    path = RunLayout(run_dir).credential_exposures
    if not path.is_file():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def _exposure_reasons(run_dir: Path) -> list[str]:
    exposures = _credential_exposures(run_dir)
    if not exposures:
        return []
    return [
        f"the run's credential appeared in {len(exposures)} file(s) and was redacted "
        f"there: {', '.join(exposures)}"
    ]


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
    """The report document (its JSON form) for a run directory whose results are merged."""
    return document_json(build_report_document(run_dir, check))


def build_report_document(run_dir: Path, check: CaptureCheck) -> ReportDocument:
    """The report document for a run directory, read through its model.

    Raises:
        ContractError: the assembled document does not match the model (a defect here,
            named by field, rather than a report.json that drifts from its schema).
    """
    document = _assemble(run_dir, check)
    source = str(RunLayout(run_dir).report_json)
    return read_document(document, ReportDocument, source=source, code="report.document")


def _diagnostic_evidence(
    run_dir: Path, run: dict[str, Any]
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[str]]:
    """Spec 004's exact evidence and issue reports (each None when off), and the reasons
    either fails the run for."""
    exact, exact_reasons = exact_evidence_section(run_dir, run)
    issues, issue_reasons = issue_reports_section(run_dir, run)
    return exact, issues, exact_reasons + issue_reasons


def _assemble(run_dir: Path, check: CaptureCheck) -> dict[str, Any]:
    """Every section of the report, as the figures modules compute them."""
    # The plan, strictly: a run.json that does not fit RunPlan is refused by field.
    plan = load_plan(run_dir)
    run = plan_json(plan)
    mode = mode_of(run["mode"])
    arms = compared_arms(run)
    fresh = load_results(run_dir)
    # hpatch-only's control is imported, labelled, and never a new attempt: it is compared,
    # but it is not counted, captured, delivered or analysed as one of this run's.
    imported = load_imported(run_dir, plan)
    results = [*fresh, imported.control] if imported is not None else fresh
    correct = correctness(results, arms, int(run["repetitions"]))
    chosen = populations(correct["pairs"])
    captured = _captures(run_dir, arms, check)
    captures, per_attempt, evidence = captured.captures, captured.per_attempt, captured.evidence
    attempt_keys = {r.key for r in results} | set(captures)
    snapshots = _add_imported(imported, captured)
    for key in sorted(attempt_keys - set(evidence)):
        evidence[key] = {
            "rows": None,
            "unavailable": "no router evidence",
            "reconciled": False,
            "problems": ["no router evidence"],
        }
    usage = _usage(per_attempt, sorted(attempt_keys), arms, chosen)
    phases = read_phases(RunLayout(run_dir).phases)
    commands = command_figures(run_dir, fresh, [arm.value for arm in mode.fresh])
    deliveries = _deliveries(run_dir, run, fresh)
    reasons = []
    scheduled = run["repetitions"] * len(mode.fresh)
    if len(fresh) != scheduled:
        reasons.append(f"{len(fresh)} of {scheduled} scheduled attempts have results")
    failed = [r for r in results if not r.passed]
    if failed:
        reasons.append(f"{len(failed)} attempt(s) did not pass")
    invalid = sorted(key for key, verdict in captures.items() if not verdict["valid"])
    if invalid:
        reasons.append(f"capture validation failed for {', '.join(invalid)}")
    expected_captures = {r.key for r in fresh}
    missing = sorted(expected_captures - set(captures))
    if missing:
        reasons.append(f"no router evidence for {', '.join(missing)}")
    unreconciled = sorted(
        key for key in captures if not evidence[key]["reconciled"] and key not in invalid
    )
    if unreconciled:
        reasons.append(
            f"provider-response evidence does not reconcile for {', '.join(unreconciled)}"
        )
    undelivered = sorted(key for key, proof in deliveries.items() if not proof["ok"])
    if undelivered:
        reasons.append(f"instructions not proven delivered for {', '.join(undelivered)}")
    if run.get("enforce_no_edit_loops", True):
        reasons += loop_gate_reasons(commands)
    compression = _compression(run, mode, fresh, captured.valid)
    if compression["failures"]:
        reasons.append(f"required CTP compression failed: {'; '.join(compression['failures'])}")
    exact, issues, evidence_reasons = _diagnostic_evidence(run_dir, run)
    reasons += evidence_reasons
    reasons += _exposure_reasons(run_dir)
    ran = provenance(run, captured.valid, captured.directories)
    if ran["missing"]:
        reasons.append(f"provenance incomplete: {'; '.join(ran['missing'])}")
    return {
        "schema": REPORT_SCHEMA,
        "run": run,
        "correctness": correct,
        "statistics": _statistics(arms, chosen),
        "usage": usage,
        "captures": captures,
        "provider_responses": evidence,
        "commands": commands,
        "instructions": _instructions(run_dir),
        "deliveries": deliveries,
        "phases": phases,
        "agent_seconds": {
            arm: [r.elapsed.agent_seconds for r in results if r.arm == arm] for arm in arms
        },
        "provenance": ran,
        "compression": compression,
        "hpatch": hpatch_results(
            [r.key for r in results if ARM_ROUTERS[Arm(r.arm)].mode == HPATCH],
            captured.valid,
        ),
        "models": model_rows(
            sorted(attempt_keys), snapshots, main=run["model"], mentor=run["mentor_model"] or None
        ),
        "imported": _imported_section(imported),
        "cache_prefix": captured.cache_prefix,
        "exact_evidence": exact,
        "issue_reports": issues,
        "outcome": {"ok": not reasons, "reasons": reasons},
        "invocations": _invocations(run_dir),
    }


def _invocations(run_dir: Path) -> list[dict[str, Any]] | None:
    """Each invocation of a resumed run; None for a run that was never resumed."""
    if not RunLayout(run_dir).invocations.is_file():
        return None
    return [attrs.asdict(i) for i in invocations(run_dir)]


__all__ = [
    "BOOTSTRAP_FIGURES",
    "REPORT_SCHEMA",
    "TOKEN_FIGURES",
    "USAGE_FIGURES",
    "CaptureCheck",
    "CaptureVerdict",
    "build_report",
    "build_report_document",
    "load_results",
    "read_phases",
]
