"""Fake run directories for the report tests: results, snapshots, records and deliveries.

The snapshots are whole ``hpatch.capture.metrics.v4`` documents built through the
snapshot model; the records are schema-6 client and provider records consistent with
them, so the provider-response table reconciles unless a test breaks it on purpose.
Attempts are attempt objects built through the attempt model (``tests/evidence.py``).
Capture validity itself is decided by the check a test passes to ``build_report``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from hpbench._documents import document_json
from hpbench.capture.models import (
    Comparison,
    Count,
    MetricsSnapshot,
    ModelTotals,
    SavingsTotals,
    ThreadRole,
)
from hpbench.capture.validator import load_snapshot
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.report import CaptureVerdict
from hpbench.results import Attempt, attempt_to_json

from ..conftest import REPO_ROOT
from ..evidence import MODEL, attempt, deliver, write_plan

THREAD_ID = "01a23693-d235-7e93-94ee-9a0cea7da8d5"
REQUEST_ID = "req_7f3c2a9e"


# A whole snapshot of the contract, read through its model; each test sets the figures
# it is about with attrs.evolve.
BASE_SNAPSHOT = load_snapshot(
    REPO_ROOT / "tests" / "data" / "capture" / "v6-control" / "metrics.json"
)


def snapshot(
    input_tokens: int,
    output_tokens: int,
    requests: int = 5,
    *,
    cached: dict[str, int] | None = None,
    without_usage: int = 0,
    invalid_usage: int = 0,
    reasoning_missing: int = 0,
) -> MetricsSnapshot:
    """A snapshot whose every provider attempt reported usage unless told otherwise.

    ``cached`` counts usage-bearing attempts per cached-count state (default: all explicit).
    """
    comparison = Comparison(
        client_bytes=Count(1000),
        provider_bytes=Count(1200),
        savings_bytes=-200,
        client_tokens=None,
        provider_tokens=None,
        savings_tokens=None,
    )
    attempts = requests + without_usage + invalid_usage
    states = cached or {"explicit": requests}
    usage = attrs.evolve(
        BASE_SNAPSHOT.usage,
        input_tokens=input_tokens,
        cached_input_tokens=input_tokens // 2,
        output_tokens=output_tokens,
        reasoning_tokens=10,
        cached_input_explicit=states.get("explicit", 0),
        cached_input_missing=states.get("missing", 0),
        cached_input_null=states.get("null", 0),
        cached_input_invalid=states.get("invalid", 0),
        reasoning_missing=reasoning_missing,
    )
    return attrs.evolve(
        BASE_SNAPSHOT,
        requests=attrs.evolve(
            BASE_SNAPSHOT.requests,
            logical_requests=requests,
            provider_attempts=attempts,
            retries=attempts - requests,
            delivered_attempts=requests,
            attempts_with_usage=requests,
            attempts_without_usage=without_usage,
            attempts_invalid_usage=invalid_usage,
        ),
        usage=usage,
        savings=SavingsTotals(
            request=comparison,
            output=comparison,
            output_text=comparison,
            transport=attrs.evolve(BASE_SNAPSHOT.savings.transport, provider_stream_bytes=5000),
        ),
        models=(
            ModelTotals(
                role=ThreadRole.ROOT,
                request_model=MODEL,
                response_model=MODEL,
                header_model=None,
                attempts=Count(attempts),
                attempts_with_usage=Count(requests),
            ),
        ),
        threads=(
            attrs.evolve(
                BASE_SNAPSHOT.threads[0],
                thread_id=THREAD_ID,
                root_thread_id=THREAD_ID,
                logical_requests=requests,
                provider_attempts=attempts,
                usage=usage,
                delivered_usage=usage,
            ),
        ),
    )


def edit_snapshot(run: Path, key: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Change a router's metrics.json as a file (to break what the model would refuse)."""
    path = run / "routers" / key / "metrics.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))


def _thread() -> dict[str, Any]:
    return {
        "thread_id": THREAD_ID,
        "root_thread_id": THREAD_ID,
        "parent_thread_id": None,
        "role": "root",
        "subagent": None,
    }


def _usage(state: str, cached: int) -> dict[str, Any]:
    return {
        "input_tokens": 100,
        "cached_input_tokens": cached if state == "explicit" else None,
        "cached_input_state": state,
        "cache_write_input_tokens": 0,
        "output_tokens": 10,
        "reasoning_tokens": 2,
    }


def records_for(document: MetricsSnapshot) -> list[dict[str, Any]]:
    """Client and provider records that add up to ``document``'s counts, cached states,
    explicit cached sum and models. Attempts without usage come last, as retries."""
    usage = document.usage
    states = [
        state
        for state in ("explicit", "missing", "null", "invalid")
        for _ in range(getattr(usage, f"cached_input_{state}"))
    ]
    explicit_left = usage.cached_input_tokens
    attempts: list[tuple[str, dict[str, Any] | None]] = []
    for state in states:
        cached = explicit_left if state == "explicit" else 0
        explicit_left -= cached
        attempts.append(("reported", _usage(state, cached)))
    attempts += [("absent", None)] * document.requests.attempts_without_usage
    attempts += [("invalid", None)] * document.requests.attempts_invalid_usage
    common = {"schema_version": 6, "mode": "passthrough", "protocol": "native", "complete": True}
    records: list[dict[str, Any]] = []
    for exchange, (usage_state, reported) in enumerate(attempts):
        records.append(
            {
                **common,
                "kind": "client",
                "seq": len(records),
                "exchange": exchange,
                "thread": _thread(),
                "requested_model": MODEL,
                "request_bytes": 100,
                "request_tokens": 25,
                "turn_state_sent": False,
            }
        )
        records.append(
            {
                **common,
                "kind": "provider",
                "seq": len(records),
                "exchange": exchange,
                "attempt": 0,
                "request_model": MODEL,
                "request_bytes": 100,
                "request_tokens": 25,
                "turn_state_forwarded": False,
                "turn_state_returned": False,
                "http_status": 200 if reported is not None else 500,
                "outcome": "completed" if reported is not None else "http_error",
                "usage_state": usage_state,
                "usage": reported,
                "response_model": MODEL,
                "header_model": None,
                "provider_request_id": REQUEST_ID,
                "emitted_tools": [],
                "output_bytes": 10,
                "output_text_bytes": 0,
                "stream_bytes": 50,
                "delivered": reported is not None,
            }
        )
    return records


def write_router(run: Path, key: str, document: MetricsSnapshot) -> Path:
    """A router directory: the snapshot and records consistent with it."""
    directory = run / "routers" / key
    (directory / "capture").mkdir(parents=True)
    (directory / "metrics.json").write_text(json.dumps(document_json(document)))
    (directory / "capture" / "records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records_for(document))
    )
    return directory


def make_run(
    tmp_path: Path,
    attempts: Sequence[Attempt],
    snapshots: dict[str, MetricsSnapshot],
    *,
    repetitions: int = 1,
    offline: bool = True,
    arms: Sequence[str] = ("control", "hpatch"),
) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    write_plan(run, arms=arms, repetitions=repetitions, offline=offline)
    if offline:
        for a in attempts:
            deliver(run, a.repetition, a.arm, a.instructions_artifact)
    (run / "results.jsonl").write_text(
        "".join(json.dumps(attempt_to_json(a)) + "\n" for a in attempts)
    )
    for a in attempts:
        stream = run / "attempts" / a.key / "codex.jsonl"
        stream.parent.mkdir(parents=True, exist_ok=True)
        stream.write_text('{"type":"turn.started"}\n')
    for key, document in snapshots.items():
        write_router(run, key, document)
    (run / "phases.tsv").write_text(
        "images\t12.0\nqualification\t4.5\nattempt\t2.0\nattempt\t3.5\nbad line\n"
    )
    return run


def always_valid(router_dir: Path, __: str, ___: Sequence[Path]) -> CaptureVerdict:
    """A check that finds nothing wrong with the records: the snapshot is read through its
    model, so a snapshot the contract refuses still makes the capture invalid."""
    try:
        return CaptureVerdict((), load_snapshot(router_dir / "metrics.json"))
    except ContractError as exc:
        return CaptureVerdict(tuple(exc.findings), None)


GAP = Finding(
    "capture.attempt_gap", "exchange 3 has attempts 1 and 3", "records.jsonl", "$.attempt", 7
)


def invalid_for(arm: str) -> Any:
    """A check that finds an attempt gap in ``arm``'s records (the snapshot reads fine)."""

    def check(router_dir: Path, checked_arm: str, jsonl: Sequence[Path]) -> CaptureVerdict:
        verdict = always_valid(router_dir, checked_arm, jsonl)
        if checked_arm == arm:
            return CaptureVerdict((GAP,), verdict.snapshot)
        return verdict

    return check


def paired_attempts(outcomes: Sequence[tuple[bool, bool]]) -> list[Attempt]:
    """(control passed, treatment passed) per repetition, order alternating."""
    attempts = []
    for repetition, (control, treatment) in enumerate(outcomes, start=1):
        first, second = ("control", "hpatch") if repetition % 2 else ("hpatch", "control")
        passed = {"control": control, "hpatch": treatment}
        attempts.append(attempt(first, repetition, 1, passed[first], "grader-failed"))
        attempts.append(attempt(second, repetition, 2, passed[second], "grader-failed"))
    return attempts


__all__ = [
    "GAP",
    "MODEL",
    "REQUEST_ID",
    "THREAD_ID",
    "always_valid",
    "attempt",
    "deliver",
    "edit_snapshot",
    "invalid_for",
    "make_run",
    "paired_attempts",
    "records_for",
    "snapshot",
    "write_router",
]
