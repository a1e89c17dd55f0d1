"""The report document and summary.md: correctness first, honest signed deltas, no identities."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hpbench.instructions.derive import delivered_digest
from hpbench.report import CaptureVerdict, build_report, render_summary

THREAD_ID = "01a23693-d235-7e93-94ee-9a0cea7da8d5"
REQUEST_ID = "req_7f3c2a9e"


def snapshot(input_tokens: int, output_tokens: int, requests: int = 5) -> dict[str, Any]:
    """The parts of an hpatch.capture.metrics.v4 snapshot the report formats, plus identities."""
    comparison = {"client_bytes": 1000, "provider_bytes": 1200, "savings_bytes": -200}
    return {
        "schema": "hpatch.capture.metrics.v4",
        "requests": {
            "logical_requests": requests,
            "provider_attempts": requests + 1,
            "retries": 1,
            "attempts_with_usage": requests,
            "attempts_without_usage": 1,
        },
        "usage": {
            "input_tokens": input_tokens,
            "cached_input_tokens": input_tokens // 2,
            "output_tokens": output_tokens,
            "reasoning_tokens": 10,
        },
        "savings": {
            "request": comparison,
            "output": comparison,
            "output_text": comparison,
            "transport": {"provider_stream_bytes": 5000},
        },
        "threads": [{"thread_id": THREAD_ID, "provider_request_id": REQUEST_ID}],
    }


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


def make_run(
    tmp_path: Path,
    attempts: Sequence[dict[str, Any]],
    snapshots: dict[str, dict[str, Any]],
    *,
    repetitions: int = 1,
    offline: bool = True,
) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(
        json.dumps(
            {
                "mode": "paired",
                "task": "kv-rangestream",
                "fingerprint": "sha256:abc",
                "model": "gpt-6-astra",
                "effort": "medium",
                "repetitions": repetitions,
                "arms": ["control", "hpatch"],
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
    for key, document in snapshots.items():
        directory = run / "routers" / key
        directory.mkdir(parents=True)
        (directory / "metrics.json").write_text(json.dumps(document))
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


@pytest.fixture
def one_pair(tmp_path: Path) -> Path:
    return make_run(
        tmp_path,
        [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
        {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
    )


class TestReport:
    def test_passing_pair(self, one_pair: Path) -> None:
        """Both arms pass, both captures validate: outcome ok, signed deltas."""
        report = build_report(one_pair, always_valid)
        assert report["outcome"] == {"ok": True, "reasons": []}
        assert 1 == report["correctness"]["arms"]["hpatch"]["passed"]
        assert -200 == report["usage"]["deltas"]["input_tokens"]
        assert 50 == report["usage"]["deltas"]["output_tokens"]
        assert report["correctness"]["mcnemar"] is None  # one repetition: no test
        assert report["usage"]["bootstrap"] is None
        assert {"images": 12.0, "qualification": 4.5, "attempt": 5.5} == report["phases"]

    def test_negative_savings_stay_negative(self, one_pair: Path) -> None:
        """A negative savings figure is reported as negative, in both forms."""
        report = build_report(one_pair, always_valid)
        assert -200 == report["usage"]["arms"]["hpatch"]["request_savings_bytes"]
        assert "-200" in render_summary(report)

    def test_invalid_capture(self, one_pair: Path) -> None:
        """An invalid capture makes its arm's figures unavailable and fails the report."""
        report = build_report(one_pair, invalid_for("hpatch"))
        assert report["usage"]["arms"]["hpatch"] is None
        assert report["usage"]["deltas"] is None
        assert not report["outcome"]["ok"]
        summary = render_summary(report)
        assert "INVALID" in summary
        assert "capture.attempt_gap" in summary
        assert "unavailable" in summary

    def test_missing_router_evidence(self, tmp_path: Path) -> None:
        """An attempt without router evidence fails the report."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": snapshot(1000, 300)},
        )
        report = build_report(run, always_valid)
        assert "no router evidence for 1-hpatch" in report["outcome"]["reasons"]

    def test_failed_attempt_and_missing_attempts(self, tmp_path: Path) -> None:
        """A failed attempt and an unscheduled gap are both reasons."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, False, "grader-failed")],
            {"1-control": snapshot(1000, 300)},
        )
        reasons = build_report(run, always_valid)["outcome"]["reasons"]
        assert "1 of 2 scheduled attempts have results" in reasons
        assert "1 attempt(s) did not pass" in reasons

    def test_undelivered_instructions_fail(self, tmp_path: Path) -> None:
        """A provider record proving an arm got other instructions fails the report."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True)],
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
        )
        hpatch = attempt("hpatch", 1, 2, True)
        hpatch["instructions_artifact"] = "instructions/hpatch.md"
        deliver(run, 1, "hpatch", hpatch["instructions_artifact"], requests=5, wrong=1)
        with (run / "results.jsonl").open("a") as stream:
            stream.write(json.dumps(hpatch) + "\n")
        report = build_report(run, always_valid)
        assert {"ok": True, "requests": 3, "matching": 3} == report["deliveries"]["1-control"]
        assert "instructions not proven delivered for 1-hpatch" in report["outcome"]["reasons"]
        assert "| 1-hpatch | 5 | 4 | NO |" in render_summary(report)

    def test_missing_provider_records_leave_delivery_unproven(self, one_pair: Path) -> None:
        """Offline, an attempt whose repetition has no provider records is not proven."""
        (one_pair / "reps" / "1" / "provider.jsonl").unlink()
        report = build_report(one_pair, always_valid)
        assert {"ok": False, "requests": None, "matching": None} == report["deliveries"]["1-hpatch"]
        assert (
            "instructions not proven delivered for 1-control, 1-hpatch"
            in report["outcome"]["reasons"]
        )

    def test_no_delivery_proof_with_a_real_provider(self, tmp_path: Path) -> None:
        """A real provider keeps no records: no delivery section, no reason."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 350)},
            offline=False,
        )
        report = build_report(run, always_valid)
        assert {} == report["deliveries"]
        assert report["outcome"]["ok"]

    def test_statistics_with_repetitions(self, tmp_path: Path) -> None:
        """Two or more repetitions give McNemar and bootstrap intervals; voided pairs drop out."""
        attempts = [
            attempt("control", 1, 1, True),
            attempt("hpatch", 1, 2, True),
            attempt("hpatch", 2, 1, True),
            attempt("control", 2, 2, False, "grader-failed"),
            attempt("control", 3, 1, True),
            attempt("hpatch", 3, 2, False, "infrastructure"),
        ]
        snapshots = {
            "1-control": snapshot(1000, 300),
            "1-hpatch": snapshot(900, 310),
            "2-control": snapshot(1100, 280),
            "2-hpatch": snapshot(950, 300),
            "3-control": snapshot(1050, 290),
            "3-hpatch": snapshot(10, 1),
        }
        report = build_report(make_run(tmp_path, attempts, snapshots, repetitions=3), always_valid)
        test = report["correctness"]["mcnemar"]
        assert (2, 0, 1) == (test["pairs"], test["control_only"], test["treatment_only"])
        pairs = report["correctness"]["pairs"]
        assert ["control", "hpatch", "control"] == [p["first_arm"] for p in pairs]
        assert [False, False, True] == [p["voided"] for p in pairs]
        interval = report["usage"]["bootstrap"]["input_tokens"]
        assert 2 == interval["pairs"]  # the voided third pair is not resampled
        assert -125.0 == interval["mean"]
        assert "Exact McNemar" in render_summary(report)


class TestSummary:
    def test_correctness_before_tokens(self, one_pair: Path) -> None:
        """Correctness comes before any token figure."""
        summary = render_summary(build_report(one_pair, always_valid))
        assert summary.index("## Correctness") < summary.index("## Provider usage")

    def test_offline_banner(self, one_pair: Path) -> None:
        """An offline demo says it measures the harness, not a model."""
        summary = render_summary(build_report(one_pair, always_valid))
        assert "Offline demo" in summary
        assert "measures the harness, not a model" in summary

    def test_real_run_has_no_banner(self, tmp_path: Path) -> None:
        """A run against a real provider carries no demo banner."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": snapshot(1, 1), "1-hpatch": snapshot(1, 1)},
            offline=False,
        )
        assert "Offline demo" not in render_summary(build_report(run, always_valid))

    def test_no_identities(self, one_pair: Path) -> None:
        """Thread and request identities in the evidence never reach summary.md."""
        summary = render_summary(build_report(one_pair, always_valid))
        assert THREAD_ID not in summary
        assert REQUEST_ID not in summary

    def test_findings_lose_their_identities(self, one_pair: Path) -> None:
        """A validator finding that names a thread or request shows in summary.md redacted."""

        def check(_: Path, arm: str, __: Sequence[Path]) -> CaptureVerdict:
            return CaptureVerdict(
                arm == "control",
                (f"capture.codex.unreported: no usage for thread {THREAD_ID} ({REQUEST_ID})",),
            )

        report = build_report(one_pair, check)
        summary = render_summary(report)
        assert THREAD_ID not in summary
        assert REQUEST_ID not in summary
        assert "no usage for thread <id> (<id>)" in summary
        assert THREAD_ID in json.dumps(report)  # the machine-readable report keeps it

    def test_unknown_is_unavailable_not_zero(self, tmp_path: Path) -> None:
        """A figure the snapshot lacks prints as unavailable."""
        partial = snapshot(1000, 300)
        del partial["usage"]["reasoning_tokens"]
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": partial, "1-hpatch": snapshot(800, 350)},
        )
        report = build_report(run, always_valid)
        assert report["usage"]["arms"]["control"]["reasoning_tokens"] is None
        assert report["usage"]["deltas"]["reasoning_tokens"] is None
        line = next(
            row
            for row in render_summary(report).splitlines()
            if row.startswith("| reasoning tokens")
        )
        assert "unavailable" in line
