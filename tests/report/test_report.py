"""The report document and summary.md: correctness first, honest signed deltas, no identities."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hpbench._documents import document_json
from hpbench.errors import ContractError
from hpbench.findings import Finding
from hpbench.report import CaptureVerdict, build_report, render_summary
from hpbench.report import model as report_model
from hpbench.report.document import SCHEMA_FILE
from hpbench.report.model import build_report_document
from hpbench.results import attempt_to_json

from .conftest import (
    GAP,
    REQUEST_ID,
    THREAD_ID,
    always_valid,
    attempt,
    deliver,
    invalid_for,
    make_run,
    snapshot,
)


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
        assert all(v is None for v in report["usage"]["arms"]["hpatch"].values())
        assert all(v is None for v in report["usage"]["deltas"].values())
        assert not report["outcome"]["ok"]
        summary = render_summary(report)
        assert "INVALID" in summary
        assert "unavailable" in summary

    def test_findings_keep_code_field_and_line(self, one_pair: Path) -> None:
        """report.json keeps each validator finding whole; summary.md shows its code, file,
        line and field."""
        report = build_report(one_pair, invalid_for("hpatch"))
        assert [
            {
                "code": "capture.attempt_gap",
                "message": "exchange 3 has attempts 1 and 3",
                "file": "records.jsonl",
                "field": "$.attempt",
                "line": 7,
            }
        ] == report["captures"]["1-hpatch"]["findings"]
        assert [] == report["captures"]["1-control"]["findings"]
        summary = render_summary(report)
        line = "`capture.attempt_gap` (records.jsonl:7 $.attempt): exchange 3 has attempts 1 and 3"
        assert f"  - {line}" in summary.splitlines()

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
        deliver(run, 1, "hpatch", hpatch.instructions_artifact, requests=5, wrong=1)
        with (run / "results.jsonl").open("a") as stream:
            stream.write(json.dumps(attempt_to_json(hpatch)) + "\n")
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
        interval = report["usage"]["bootstrap"]["figures"]["input_tokens"]
        assert 2 == interval["pairs"]  # the voided third pair is not resampled
        assert -125.0 == interval["mean"]
        assert "too-few-pairs" == interval["status"]  # 2 pairs: no interval
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

        def check(router: Path, arm: str, jsonl: Sequence[Path]) -> CaptureVerdict:
            verdict = always_valid(router, arm, jsonl)
            if arm == "control":
                return verdict
            finding = Finding(
                "capture.codex.unreported", f"no usage for thread {THREAD_ID} ({REQUEST_ID})"
            )
            return CaptureVerdict((finding,), verdict.snapshot)

        report = build_report(one_pair, check)
        summary = render_summary(report)
        assert THREAD_ID not in summary
        assert REQUEST_ID not in summary
        assert "no usage for thread <id> (<id>)" in summary
        assert THREAD_ID in json.dumps(report)  # the machine-readable report keeps it

    def test_unknown_is_unavailable_not_zero(self, tmp_path: Path) -> None:
        """A figure an attempt's usage lacks prints as unavailable."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
            {"1-control": snapshot(1000, 300, reasoning_missing=1), "1-hpatch": snapshot(800, 350)},
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


class TestReportContract:
    """report.json is the report model's JSON form; what feeds it is read strictly."""

    def test_report_is_the_models_json_and_valid_under_the_schema(
        self, one_pair: Path, repo_root: Path
    ) -> None:
        """The document round-trips through the model and validates; a stray key does not."""
        document = build_report_document(one_pair, invalid_for("hpatch"))
        report = build_report(one_pair, invalid_for("hpatch"))
        assert document_json(document) == report
        assert "hpbench.report.v2" == document.schema
        assert GAP == document.captures["1-hpatch"].findings[0]
        schema = json.loads((repo_root / "contrib" / "schemas" / SCHEMA_FILE).read_text())
        validator = jsonschema.Draft202012Validator(schema)
        validator.validate(json.loads(json.dumps(report)))
        assert not validator.is_valid({**report, "router_usage": None})
        broken = json.loads(json.dumps(report))
        broken["captures"]["1-hpatch"]["findings"][0]["line"] = "7"
        assert not validator.is_valid(broken)

    def test_an_assembled_section_off_the_contract_is_refused(
        self, one_pair: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A section that drifts from the model fails the build, naming the field."""
        assemble = report_model._assemble

        def drifted(run_dir: Path, check: Any) -> dict[str, Any]:
            document = assemble(run_dir, check)
            document["statistics"]["shown"] = "no"
            return document

        monkeypatch.setattr(report_model, "_assemble", drifted)
        with pytest.raises(ContractError) as caught:
            build_report(one_pair, always_valid)
        assert ["$.statistics.shown"] == [f.field for f in caught.value.findings]

    def test_a_result_line_off_the_contract_is_refused(self, one_pair: Path) -> None:
        """results.jsonl is read through the attempt model: an unknown key is named."""
        path = one_pair / "results.jsonl"
        lines = path.read_text().splitlines()
        document = json.loads(lines[1])
        document["bonus"] = True
        path.write_text("\n".join([lines[0], json.dumps(document)]) + "\n")
        with pytest.raises(ContractError) as caught:
            build_report(one_pair, always_valid)
        (finding,) = caught.value.findings
        assert (str(path), 2, "$") == (finding.file, finding.line, finding.field)
        assert "results.attempt" == finding.code
        assert "bonus" in finding.message
