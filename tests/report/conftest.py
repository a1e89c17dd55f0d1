"""Fake run directories for the report tests: results, snapshots, records and deliveries.

The snapshots hold the parts of ``hpatch.capture.metrics.v4`` the report reads;
the records are schema-6 client and provider records consistent with them, so the
provider-response table reconciles unless a test breaks it on purpose. Capture
validity itself is decided by the check a test passes to ``build_report``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpbench.instructions.derive import delivered_digest
from hpbench.report import CaptureVerdict

THREAD_ID = "01a23693-d235-7e93-94ee-9a0cea7da8d5"
REQUEST_ID = "req_7f3c2a9e"
MODEL = "gpt-6-astra"


def snapshot(
    input_tokens: int,
    output_tokens: int,
    requests: int = 5,
    *,
    cached: dict[str, int] | None = None,
    without_usage: int = 0,
    invalid_usage: int = 0,
    reasoning_missing: int = 0,
) -> dict[str, Any]:
    """A snapshot whose every provider attempt reported usage unless told otherwise.

    ``cached`` counts usage-bearing attempts per cached-count state (default: all explicit).
    """
    comparison = {"client_bytes": 1000, "provider_bytes": 1200, "savings_bytes": -200}
    attempts = requests + without_usage + invalid_usage
    states = cached or {"explicit": requests}
    return {
        "schema": "hpatch.capture.metrics.v4",
        "requests": {
            "logical_requests": requests,
            "provider_attempts": attempts,
            "retries": attempts - requests,
            "attempts_with_usage": requests,
            "attempts_without_usage": without_usage,
            "attempts_invalid_usage": invalid_usage,
        },
        "usage": {
            "input_tokens": input_tokens,
            "cached_input_tokens": input_tokens // 2,
            "output_tokens": output_tokens,
            "reasoning_tokens": 10,
            "cached_input_explicit": states.get("explicit", 0),
            "cached_input_missing": states.get("missing", 0),
            "cached_input_null": states.get("null", 0),
            "cached_input_invalid": states.get("invalid", 0),
            "reasoning_missing": reasoning_missing,
        },
        "savings": {
            "request": comparison,
            "output": comparison,
            "output_text": comparison,
            "transport": {"provider_stream_bytes": 5000},
        },
        "models": [
            {
                "role": "root",
                "request_model": MODEL,
                "response_model": MODEL,
                "header_model": None,
                "attempts": attempts,
                "attempts_with_usage": requests,
            }
        ],
        "threads": [{"thread_id": THREAD_ID, "provider_request_id": REQUEST_ID}],
    }


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


def records_for(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Client and provider records that add up to ``document``'s counts, cached states,
    explicit cached sum and models. Attempts without usage come last, as retries."""
    usage = document["usage"]
    states = [
        state
        for state in ("explicit", "missing", "null", "invalid")
        for _ in range(usage.get(f"cached_input_{state}", 0))
    ]
    explicit_left = usage["cached_input_tokens"]
    attempts: list[tuple[str, dict[str, Any] | None]] = []
    for state in states:
        cached = explicit_left if state == "explicit" else 0
        explicit_left -= cached
        attempts.append(("reported", _usage(state, cached)))
    attempts += [("absent", None)] * document["requests"]["attempts_without_usage"]
    attempts += [("invalid", None)] * document["requests"].get("attempts_invalid_usage", 0)
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


def attempt(
    arm: str, repetition: int, order: int, passed: bool, failure: str = "none"
) -> dict[str, Any]:
    return {
        "schema": "hpbench.attempt.v1",
        "arm": arm,
        "repetition": repetition,
        "pair_order": order,
        "passed": passed,
        "failure_class": "none" if passed else failure,
        "elapsed": {"agent_seconds": 10.5},
        "workspace_root": "/workspace",
    }


def write_router(run: Path, key: str, document: dict[str, Any]) -> Path:
    """A router directory: the snapshot and records consistent with it."""
    directory = run / "routers" / key
    (directory / "capture").mkdir(parents=True)
    (directory / "metrics.json").write_text(json.dumps(document))
    (directory / "capture" / "records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records_for(document))
    )
    return directory


def make_run(
    tmp_path: Path,
    attempts: Sequence[dict[str, Any]],
    snapshots: dict[str, dict[str, Any]],
    *,
    repetitions: int = 1,
    offline: bool = True,
    arms: Sequence[str] = ("control", "hpatch"),
) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(
        json.dumps(
            {
                "mode": "paired" if len(arms) == 2 else "control-only",
                "task": "kv-rangestream",
                "fingerprint": "sha256:abc",
                "model": MODEL,
                "effort": "medium",
                "repetitions": repetitions,
                "arms": list(arms),
                "offline_demo": offline,
                "provider": "replay",
                "codex_version": "0.169.0",
            }
        )
    )
    if offline:
        for a in attempts:
            a.setdefault("instructions_artifact", f"instructions/{a['arm']}.md")
            deliver(run, a["repetition"], a["arm"], a["instructions_artifact"])
    (run / "results.jsonl").write_text("".join(json.dumps(a) + "\n" for a in attempts))
    for a in attempts:
        stream = run / "attempts" / f"{a['repetition']}-{a['arm']}" / "codex.jsonl"
        stream.parent.mkdir(parents=True, exist_ok=True)
        stream.write_text('{"type":"turn.started"}\n')
    for key, document in snapshots.items():
        write_router(run, key, document)
    (run / "phases.tsv").write_text(
        "images\t12.0\nqualification\t4.5\nattempt\t2.0\nattempt\t3.5\nbad line\n"
    )
    return run


def deliver(
    run: Path, repetition: int, arm: str, artifact: str, *, requests: int = 3, wrong: int = 0
) -> None:
    """Write the arm's instructions file and the scripted provider's records of its requests
    (``wrong`` of them carrying other instructions)."""
    instructions = run / artifact
    instructions.parent.mkdir(parents=True, exist_ok=True)
    instructions.write_text(f"instructions of {arm}\n")
    digest = delivered_digest(instructions)
    records = run / "reps" / str(repetition) / "provider.jsonl"
    records.parent.mkdir(parents=True, exist_ok=True)
    with records.open("a") as stream:
        for index in range(requests):
            sha = "0" * 64 if index < wrong else digest
            stream.write(
                json.dumps({"script": arm, "request": {"first_developer_sha256": sha}}) + "\n"
            )


def always_valid(_: Path, __: str, ___: Sequence[Path]) -> CaptureVerdict:
    return CaptureVerdict(True, ())


def invalid_for(arm: str) -> Any:
    def check(_: Path, checked_arm: str, __: Sequence[Path]) -> CaptureVerdict:
        if checked_arm == arm:
            return CaptureVerdict(False, ("capture.attempt_gap: exchange 3 has attempts 1 and 3",))
        return CaptureVerdict(True, ())

    return check


def paired_attempts(outcomes: Sequence[tuple[bool, bool]]) -> list[dict[str, Any]]:
    """(control passed, treatment passed) per repetition, order alternating."""
    attempts = []
    for repetition, (control, treatment) in enumerate(outcomes, start=1):
        first, second = ("control", "hpatch") if repetition % 2 else ("hpatch", "control")
        passed = {"control": control, "hpatch": treatment}
        attempts.append(attempt(first, repetition, 1, passed[first], "grader-failed"))
        attempts.append(attempt(second, repetition, 2, passed[second], "grader-failed"))
    return attempts
