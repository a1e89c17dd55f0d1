"""The provider-response evidence table (issue item 8) and the loop gate's evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hpbench.codex.testing import StreamBuilder
from hpbench.report import build_report, render_summary

from ..evidence import write_plan
from .conftest import (
    REQUEST_ID,
    always_valid,
    make_run,
    paired_attempts,
    snapshot,
)


def _run(tmp_path: Path, hpatch: dict[str, Any] | None = None) -> Path:
    return make_run(
        tmp_path,
        paired_attempts([(True, True)]),
        {"1-control": snapshot(1000, 300), "1-hpatch": hpatch or snapshot(800, 300)},
    )


class TestProviderResponses:
    def test_every_attempt_with_cached_states_apart(self, tmp_path: Path) -> None:
        """Explicit cached counts, a null one, a missing one and an attempt without usage
        are four different cells; every provider attempt is a row."""
        states = {"explicit": 2, "null": 1, "missing": 1}
        hpatch = snapshot(800, 300, requests=4, cached=states, without_usage=1)
        report = build_report(_run(tmp_path, hpatch), always_valid)
        entry = report["provider_responses"]["1-hpatch"]
        assert entry["reconciled"], entry["problems"]
        states = [row["cached_input_state"] for row in entry["rows"]]
        assert ["explicit", "explicit", "missing", "null", "unavailable"] == states
        assert [400, 0, None, None, None] == [row["cached_input_tokens"] for row in entry["rows"]]
        summary = render_summary(report)
        assert "not reported (null)" in summary
        assert "not reported (missing)" in summary
        assert "unavailable (no usage)" in summary
        assert "header model (provider-reported)" in summary

    def test_no_request_ids(self, tmp_path: Path) -> None:
        """The provider's request id is in the records and in neither table."""
        report = build_report(_run(tmp_path), always_valid)
        rows = report["provider_responses"]["1-control"]["rows"]
        assert rows
        assert all("provider_request_id" not in row for row in rows)
        assert REQUEST_ID not in json.dumps(report["provider_responses"])
        assert REQUEST_ID not in render_summary(report)

    def test_cached_sum_that_does_not_reconcile(self, tmp_path: Path) -> None:
        """A snapshot whose explicit cached sum differs from its records fails the report."""
        run = _run(tmp_path)
        path = run / "routers" / "1-hpatch" / "metrics.json"
        document = json.loads(path.read_text())
        document["usage"]["cached_input_tokens"] += 1
        path.write_text(json.dumps(document))
        report = build_report(run, always_valid)
        entry = report["provider_responses"]["1-hpatch"]
        assert not entry["reconciled"]
        assert any("$.usage.cached_input_tokens" in p for p in entry["problems"])
        assert (
            "provider-response evidence does not reconcile for 1-hpatch"
            in report["outcome"]["reasons"]
        )
        assert "NOT RECONCILED" in render_summary(report)

    def test_models_that_do_not_reconcile(self, tmp_path: Path) -> None:
        """A snapshot naming another provider-reported model than its records fails."""
        run = _run(tmp_path)
        path = run / "routers" / "1-control" / "metrics.json"
        document = json.loads(path.read_text())
        document["models"][0]["response_model"] = "gpt-other"
        path.write_text(json.dumps(document))
        report = build_report(run, always_valid)
        assert not report["provider_responses"]["1-control"]["reconciled"]
        assert not report["outcome"]["ok"]

    def test_unreadable_records_are_not_fabricated(self, tmp_path: Path) -> None:
        """Records that cannot be read give no rows, never rows made from the counters."""
        run = _run(tmp_path)
        records = run / "routers" / "1-hpatch" / "capture" / "records.jsonl"
        records.write_text(records.read_text() + "{not json\n")
        report = build_report(run, always_valid)
        entry = report["provider_responses"]["1-hpatch"]
        assert entry["rows"] is None
        assert "records unreadable" in entry["unavailable"]
        assert "- 1-hpatch: rows unavailable (records unreadable" in render_summary(report)

    def test_hostile_model_names_stay_in_their_cell(self, tmp_path: Path) -> None:
        """A provider-reported model with a column break, a newline and an id is tamed."""
        run = _run(tmp_path)
        records = run / "routers" / "1-control" / "capture" / "records.jsonl"
        lines = [json.loads(line) for line in records.read_text().splitlines()]
        hostile = "evil | model\nreq_abcdef123"
        for record in lines:
            if record["kind"] == "provider":
                record["response_model"] = hostile
        records.write_text("".join(json.dumps(r) + "\n" for r in lines))
        summary = render_summary(build_report(run, always_valid))
        assert "evil \\| model <id>" in summary
        assert "req_abcdef123" not in summary

    def test_attempt_without_router_evidence(self, tmp_path: Path) -> None:
        """An attempt with no router directory is listed as unavailable, not left out."""
        run = make_run(tmp_path, paired_attempts([(True, True)]), {"1-control": snapshot(1, 1)})
        report = build_report(run, always_valid)
        assert "no router evidence" == report["provider_responses"]["1-hpatch"]["unavailable"]
        assert "- 1-hpatch: rows unavailable (no router evidence)" in render_summary(report)


class TestLoopGateEvidence:
    def test_arm_without_jsonl(self, tmp_path: Path) -> None:
        """No analysed JSONL: commands print unavailable and the loop gate does not pass."""
        run = _run(tmp_path)
        (run / "attempts" / "1-hpatch" / "codex.jsonl").unlink()
        report = build_report(run, always_valid)
        hpatch = report["commands"]["hpatch"]
        assert (0, 1, None, None) == (
            hpatch["attempts_analysed"],
            hpatch["attempts"],
            hpatch["counts"],
            hpatch["same_path_loops"],
        )
        assert any(
            reason.startswith("loop gate: Codex JSONL of hpatch analysed for 0 of 1")
            for reason in report["outcome"]["reasons"]
        )
        summary = render_summary(report)
        assert "hpatch (0 of 1 analysed)" in summary
        assert "hpatch: loops unavailable (no Codex JSONL analysed)." in summary

    def test_gate_not_enforced(self, tmp_path: Path) -> None:
        """With BENCHMARK_ENFORCE_NO_EDIT_LOOPS off, missing JSONL is shown but not a reason."""
        run = _run(tmp_path)
        write_plan(run, enforce_no_edit_loops=False)
        (run / "attempts" / "1-hpatch" / "codex.jsonl").unlink()
        report = build_report(run, always_valid)
        assert not any("loop gate" in reason for reason in report["outcome"]["reasons"])
        assert report["commands"]["hpatch"]["counts"] is None

    def test_no_attempt_at_all(self, tmp_path: Path) -> None:
        """An arm with no result has nothing analysed: the gate refuses to pass on nothing."""
        run = make_run(tmp_path, paired_attempts([(True, True)])[:1], {})
        report = build_report(run, always_valid)
        assert any("analysed for 0 of 0" in reason for reason in report["outcome"]["reasons"])

    def _looping(self, tmp_path: Path, *, enforce: bool) -> dict[str, Any]:
        """A run whose hpatch attempt ran a bare ``git diff`` between two changes of a.go."""
        run = _run(tmp_path)
        if not enforce:
            write_plan(run, enforce_no_edit_loops=False)
        builder = StreamBuilder(workspace_root="/workspace").start()
        builder.patch(["a.go"]).command("git diff").patch(["a.go"])
        (run / "attempts" / "1-hpatch" / "codex.jsonl").write_text(builder.text())
        return build_report(run, always_valid)

    def test_a_workspace_diff_loop_fails_the_gate(self, tmp_path: Path) -> None:
        """A bare worktree git diff between completed changes is a structural loop, counted
        apart from same-path loops, and fails the run (spec 002)."""
        report = self._looping(tmp_path, enforce=True)
        hpatch = report["commands"]["hpatch"]
        assert (0, 1) == (hpatch["same_path_loops"], hpatch["workspace_diff_loops"])
        assert (
            "1 workspace-wide git diff loop(s) between completed changes "
            "(BENCHMARK_ENFORCE_NO_EDIT_LOOPS)"
        ) in report["outcome"]["reasons"]
        assert not report["outcome"]["ok"]

    def test_a_workspace_diff_loop_with_the_gate_off(self, tmp_path: Path) -> None:
        """With the toggle off the loop is still reported, and the run is not failed for it."""
        report = self._looping(tmp_path, enforce=False)
        assert 1 == report["commands"]["hpatch"]["workspace_diff_loops"]
        assert not any("loop" in reason for reason in report["outcome"]["reasons"])
        assert "1 workspace-wide git diff loop(s)" in render_summary(report)
