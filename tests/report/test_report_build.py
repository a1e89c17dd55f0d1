"""hpbench report build over a run directory with real captures from the capture writer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from hpbench.capture.models import Protocol, RouterMode
from hpbench.capture.synthetic import codex_streams, write_snapshot, write_synthetic_capture
from hpbench.errors import ContractError
from hpbench.plan import load_plan, plan_json, write_run_json
from hpbench.report import build_report
from hpbench.report.captures import capture_check, check_router_capture
from hpbench.results import build_attempt, merge_results, write_result
from hpbench.rundir import RunLayout

from ..conftest import REPO_ROOT
from ..evidence import deliver, identity, write_evidence, write_plan


def _attempt(run: Path, repetition: int, arm: str, order: int, mode: RouterMode) -> None:
    router = run / "routers" / f"{repetition}-{arm}"
    snapshot = write_synthetic_capture(
        router / "capture", mode=mode, protocol=Protocol.NATIVE, exchanges=12, seed=repetition
    )
    write_snapshot(snapshot, router / "metrics.json")
    attempt = run / "attempts" / f"{repetition}-{arm}"
    streams = codex_streams(snapshot, attempt / "streams")
    events = [json.loads(line) for line in streams[0].read_text().splitlines()]
    for event in events:  # a real agent message carries its text
        if event.get("item", {}).get("type") == "agent_message":
            event["item"]["text"] = "Done."
    shutil.rmtree(attempt / "streams")
    write_evidence(
        attempt,
        jsonl=events,
        changed=("kv/rangestream.go",),
        grader=[{"Action": "pass", "Package": "p", "Test": "TestA"}],
    )
    write_result(
        attempt,
        build_attempt(
            attempt,
            identity(arm, repetition, order),
            ("kv/rangestream.go",),
            "/workspace",
            required_tests={"p": ("TestA",)},
        ),
    )
    # The scripted provider's records: every request carried the arm's instructions.
    deliver(run, repetition, arm, identity(arm).instructions_artifact, requests=1)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    write_plan(run, repetitions=2)
    _attempt(run, 1, "control", 1, RouterMode.PASSTHROUGH)
    _attempt(run, 1, "hpatch", 2, RouterMode.HPATCH)
    _attempt(run, 2, "hpatch", 1, RouterMode.HPATCH)
    _attempt(run, 2, "control", 2, RouterMode.PASSTHROUGH)
    merge_results(run)
    return run


def build(run: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hpbench", "report", "build", str(run)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
    )


class TestReportBuild:
    def test_valid_run(self, run_dir: Path) -> None:
        """Valid captures and passing attempts: exit 0, both files written with statistics."""
        result = build(run_dir)
        assert 0 == result.returncode, result.stdout + result.stderr
        report = json.loads((run_dir / "report.json").read_text())
        assert all(verdict["valid"] for verdict in report["captures"].values())
        assert report["usage"]["deltas"] is not None
        summary = (run_dir / "summary.md").read_text()
        assert "Exact McNemar" in summary
        assert "Seeded paired bootstrap" in summary
        for stream in run_dir.glob("attempts/*/codex.jsonl"):
            thread = json.loads(stream.read_text().splitlines()[0])["thread_id"]
            assert thread not in summary

    def test_hidden_tests_are_counted_by_name(self, run_dir: Path) -> None:
        """summary.md shows, per arm, how many named hidden tests passed over how many were
        required; report.json keeps the counts and the task's oracle tier."""
        assert 0 == build(run_dir).returncode
        report = json.loads((run_dir / "report.json").read_text())
        attempts = report["correctness"]["arms"]["control"]["attempts"]
        assert {"attempts": attempts, "passed": attempts, "required": attempts} == report[
            "correctness"
        ]["arms"]["control"]["hidden_tests"]
        assert "correctness" == report["correctness"]["oracle_tier"]
        summary = (run_dir / "summary.md").read_text()
        assert "hidden tests passed" in summary
        assert f"{attempts} of {attempts} named ({attempts} attempts)" in summary

    def test_latency_only_makes_no_correctness_claim(self, run_dir: Path) -> None:
        """Attempts of a latency-only task: the summary says no correctness claim is made."""
        for path in run_dir.glob("attempts/*/result.json"):
            result = json.loads(path.read_text())
            result.update(oracle_tier="latency-only", correctness=None)
            path.write_text(json.dumps(result))
        merge_results(run_dir)
        assert 0 == build(run_dir).returncode
        assert "Latency-only task: no correctness claim" in (run_dir / "summary.md").read_text()

    def test_altered_snapshot_usage_fails(self, run_dir: Path) -> None:
        """Changing an aggregate usage integer in a snapshot fails the report, findings kept."""
        path = run_dir / "routers" / "2-hpatch" / "metrics.json"
        snapshot = json.loads(path.read_text())
        snapshot["usage"]["input_tokens"] += 1
        path.write_text(json.dumps(snapshot))
        result = build(run_dir)
        assert 1 == result.returncode
        report = json.loads((run_dir / "report.json").read_text())
        assert not report["captures"]["2-hpatch"]["valid"]
        assert all(value is None for value in report["usage"]["arms"]["hpatch"].values())
        assert {"reported": 1, "attempts": 2} == report["usage"]["reported"]["hpatch"][
            "provider_attempts"
        ]
        assert "INVALID" in (run_dir / "summary.md").read_text()

    def test_wrong_mode_fails(self, run_dir: Path) -> None:
        """A control router that ran in hpatch mode is refused before it gets a label."""
        control = run_dir / "routers" / "1-control"
        shutil.rmtree(control)
        snapshot = write_synthetic_capture(
            control / "capture", mode=RouterMode.HPATCH, exchanges=12, seed=1
        )
        write_snapshot(snapshot, control / "metrics.json")
        result = build(run_dir)
        assert 1 == result.returncode
        report = json.loads((run_dir / "report.json").read_text())
        assert not report["captures"]["1-control"]["valid"]

    def test_wrong_provider_models_fail(self, run_dir: Path) -> None:
        """A self-consistent capture whose requests asked for another model than the run
        configured is refused by name, not reported as this run's usage."""
        router = run_dir / "routers" / "1-hpatch"
        for path in (router / "capture" / "records.jsonl", router / "metrics.json"):
            text = path.read_text()
            path.write_text(text.replace('"gpt-6-astra"', '"gpt-5.5"'))
        result = build(run_dir)
        assert 1 == result.returncode
        verdict = json.loads((run_dir / "report.json").read_text())["captures"]["1-hpatch"]
        assert not verdict["valid"]
        found = {f["code"] for f in verdict["findings"]}
        assert {"capture.models.parent", "capture.models.child"} == found

    def test_an_unproved_child_thread_fails(self, run_dir: Path) -> None:
        """Without the spawn in Codex's stream, the capture's child thread is unproved."""
        stream = run_dir / "attempts" / "2-control" / "codex.jsonl"
        lines = [line for line in stream.read_text().splitlines() if "collab_tool_call" not in line]
        stream.write_text("\n".join(lines) + "\n")
        result = build(run_dir)
        assert 1 == result.returncode
        verdict = json.loads((run_dir / "report.json").read_text())["captures"]["2-control"]
        assert {"capture.models.unproved"} == {f["code"] for f in verdict["findings"]}

    def test_incomplete_evidence_fails(self, run_dir: Path) -> None:
        """A record the router marked incomplete makes the whole capture unusable."""
        records = run_dir / "routers" / "1-control" / "capture" / "records.jsonl"
        lines = records.read_text().splitlines()
        lines[3] = lines[3].replace('"complete":true', '"complete":false')
        records.write_text("\n".join(lines) + "\n")
        result = build(run_dir)
        assert 1 == result.returncode
        verdict = json.loads((run_dir / "report.json").read_text())["captures"]["1-control"]
        assert ["capture.incomplete"] == [f["code"] for f in verdict["findings"]]

    def test_absent_baseline_evidence_fails(self, run_dir: Path) -> None:
        """A paired run whose control router left no evidence has no baseline: it fails,
        and no delta is computed from the treatment alone."""
        shutil.rmtree(run_dir / "routers" / "1-control")
        result = build(run_dir)
        assert 1 == result.returncode
        report = json.loads((run_dir / "report.json").read_text())
        assert ["no router evidence for 1-control"] == report["outcome"]["reasons"]
        assert all(value is None for value in report["usage"]["deltas"].values())
        assert all(value is None for value in report["usage"]["arms"]["control"].values())

    def test_missing_router_evidence(self, run_dir: Path) -> None:
        """A router directory without its snapshot fails validation by name."""
        (run_dir / "routers" / "1-hpatch" / "metrics.json").unlink()
        result = build(run_dir)
        assert 1 == result.returncode
        findings = json.loads((run_dir / "report.json").read_text())["captures"]["1-hpatch"][
            "findings"
        ]
        missing = [f for f in findings if f["code"] == "report.evidence.missing"]
        assert [str(run_dir / "routers" / "1-hpatch" / "metrics.json")] == [
            f["file"] for f in missing
        ]

    def test_missing_codex_jsonl_fails_the_arm(self, run_dir: Path) -> None:
        """A valid capture whose attempt lost codex.jsonl cannot be reconciled with Codex's
        turn.completed: the capture fails instead of the reconciliation being skipped."""
        (run_dir / "attempts" / "1-hpatch" / "codex.jsonl").unlink()
        result = build(run_dir)
        assert 1 == result.returncode
        report = json.loads((run_dir / "report.json").read_text())
        verdict = report["captures"]["1-hpatch"]
        assert not verdict["valid"]
        (finding,) = verdict["findings"]
        assert "report.codex_jsonl.missing" == finding["code"]
        assert finding["file"].endswith("attempts/1-hpatch/codex.jsonl")
        assert all(value is None for value in report["usage"]["attempts"]["1-hpatch"].values())
        assert report["captures"]["1-control"]["valid"]

    def test_provider_responses_cover_every_attempt(self, run_dir: Path) -> None:
        """Every provider record of every router is a row; the rows reconcile with the
        snapshots; no request id reaches either file's table."""
        assert 0 == build(run_dir).returncode
        report = json.loads((run_dir / "report.json").read_text())
        evidence = report["provider_responses"]
        assert {"1-control", "1-hpatch", "2-control", "2-hpatch"} == set(evidence)
        for key, entry in evidence.items():
            snapshot = json.loads((run_dir / "routers" / key / "metrics.json").read_text())
            assert entry["reconciled"], entry["problems"]
            assert snapshot["requests"]["provider_attempts"] == len(entry["rows"])
            assert all("provider_request_id" not in row for row in entry["rows"])
        summary = (run_dir / "summary.md").read_text()
        assert "response model (provider-reported)" in summary
        records = (run_dir / "routers" / "1-control" / "capture").glob("*.jsonl")
        ids = {
            record["provider_request_id"]
            for path in records
            for record in map(json.loads, path.read_text().splitlines())
            if record.get("provider_request_id")
        }
        assert ids
        assert not any(request_id in summary for request_id in ids)


class TestProtocolBinding:
    def test_the_treatment_must_show_the_retained_protocol(self, run_dir: Path) -> None:
        """A run that retained ctp2 for its treatment refuses native treatment captures
        (self-consistent, but from the wrong configuration); the control is unaffected."""
        plan = load_plan(run_dir)
        assert "native" == plan.treatment_model_protocol
        assert build_report(run_dir, capture_check(plan_json(plan)))["outcome"]["ok"]
        ctp2 = attrs.evolve(plan, treatment_model_protocol="ctp2")
        write_run_json(RunLayout(run_dir), ctp2)
        report = build_report(run_dir, capture_check(plan_json(ctp2)))
        assert not report["outcome"]["ok"]
        for key, verdict in report["captures"].items():
            codes = {finding["code"] for finding in verdict["findings"]}
            assert ("capture.binding" in codes) == key.endswith("hpatch"), (key, codes)


class TestRunPlanIsRead:
    def test_a_run_json_off_contract_is_refused_by_field(self, run_dir: Path) -> None:
        """The report reads run.json through the plan model: a plan with a field it does not
        know, or a wrong type, stops the report naming the field, never a guess."""
        document = json.loads((run_dir / "run.json").read_text())
        (run_dir / "run.json").write_text(json.dumps({**document, "repetitions": "2"}))
        with pytest.raises(ContractError) as caught:
            build_report(run_dir, check_router_capture)
        assert ["$.repetitions"] == [finding.field for finding in caught.value.findings]

    def test_an_old_run_json_is_refused(self, run_dir: Path) -> None:
        document = json.loads((run_dir / "run.json").read_text())
        (run_dir / "run.json").write_text(json.dumps({**document, "schema": "hpbench.run.v1"}))
        with pytest.raises(ContractError, match="not a run plan"):
            build_report(run_dir, check_router_capture)
