"""The report of the two-Hpatch-arm modes: each arm named, compared baseline first, and
each mode's required evidence enforced."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from hpbench.plan import load_plan, write_run_json
from hpbench.report import build_report, render_summary
from hpbench.results.model import FinalResponseCheck
from hpbench.rundir import RunLayout

from ..evidence import attempt
from .conftest import always_valid, make_run, snapshot


def _run(tmp_path: Path, arms: tuple[str, str], snapshots: dict[str, object]) -> Path:
    baseline, treatment = arms
    attempts = [attempt(baseline, 1, 1, True), attempt(treatment, 1, 2, True)]
    return make_run(tmp_path, attempts, snapshots, arms=arms)  # type: ignore[arg-type]


class TestCtpOnly:
    ARMS = ("native", "ctp")

    def test_the_protocols_are_compared_by_name(self, tmp_path):
        run = _run(
            tmp_path,
            self.ARMS,
            {"1-native": snapshot(1000, 300), "1-ctp": snapshot(800, 300)},
        )
        report = build_report(run, always_valid)
        assert report["outcome"]["ok"], report["outcome"]
        assert "ctp-only" == report["run"]["mode"]
        assert ["ctp", "native"] == sorted(report["correctness"]["arms"])
        assert -200 == report["usage"]["deltas"]["input_tokens"]
        summary = render_summary(report)
        assert "delta (ctp - native)" in summary
        assert "No control" not in summary

    def test_both_arms_fresh_capture_is_required(self, tmp_path):
        """A ctp-only run without the native arm's router evidence fails (spec 002: both
        arms' fresh capture), and its figures are unavailable, never zero."""
        run = _run(tmp_path, self.ARMS, {"1-ctp": snapshot(800, 300)})
        report = build_report(run, always_valid)
        assert not report["outcome"]["ok"]
        assert "no router evidence for 1-native" in report["outcome"]["reasons"]
        assert report["usage"]["deltas"]["input_tokens"] is None


class TestMentorHandoff:
    ARMS = ("hpatch", "mentor")

    def test_both_arms_fresh_capture_is_required(self, tmp_path):
        run = _run(tmp_path, self.ARMS, {"1-hpatch": snapshot(1000, 300)})
        report = build_report(run, always_valid)
        assert "no router evidence for 1-mentor" in report["outcome"]["reasons"]
        assert "delta (mentor - hpatch)" in render_summary(report)


class TestExactEvidenceToggle:
    """Spec 004's toggle and its rows in the summary of the two modes that take it;
    elsewhere it is not mentioned. Missing or refused evidence fails the run."""

    def _run(self, tmp_path: Path, arms: tuple[str, ...], **plan: object) -> Path:
        run = make_run(tmp_path, [attempt(arms[0], 1, 1, True)], {}, arms=arms)
        if plan:
            layout = RunLayout(run)
            write_run_json(layout, attrs.evolve(load_plan(run), **plan))
        return run

    def _summary(self, tmp_path: Path, arms: tuple[str, ...], **plan: object) -> str:
        return render_summary(build_report(self._run(tmp_path, arms, **plan), always_valid))

    def test_off_by_default(self, tmp_path):
        summary = self._summary(tmp_path, ("hpatch",))
        assert "| exact evidence | off |" in summary
        assert "## Exact evidence" not in summary

    def test_not_shown_where_it_does_not_apply(self, tmp_path):
        assert "exact evidence" not in self._summary(tmp_path, ("control",))

    def test_on_without_an_analysis_fails_the_run(self, tmp_path):
        report = build_report(self._run(tmp_path, ("hpatch",), exact_evidence=True), always_valid)
        assert (
            "exact evidence is on, but no readable analysis of it exists"
            in (report["outcome"]["reasons"])
        )
        summary = render_summary(report)
        assert "| exact evidence | on |" in summary
        assert "No analysis: the run stopped before its evidence was read." in summary

    def test_refused_records_fail_the_run_by_code(self, tmp_path):
        run = self._run(tmp_path, ("hpatch",), exact_evidence=True)
        finding = {"code": "exact_evidence.digest", "message": "m", "file": "f"}
        analysis = {"ok": False, "rows": None, "lines": [], "consolidated": None}
        RunLayout(run).exact_evidence.write_text(
            json.dumps({"1-hpatch": {**analysis, "findings": [finding]}})
        )
        report = build_report(run, always_valid)
        assert (
            "exact evidence of 1-hpatch refused: 1 finding(s) (exact_evidence.digest)"
            in (report["outcome"]["reasons"])
        )
        assert "- 1-hpatch: refused (1 finding(s)); no rows" in render_summary(report)

    def test_rows_are_printed_with_both_numbers(self, tmp_path):
        run = self._run(tmp_path, ("hpatch",), exact_evidence=True)
        lines = [
            {"label": "retained", "value": "2 of 3 (incomplete: fewer records than routed calls)"}
        ]
        analysis = {"ok": True, "rows": {"routed_calls": 3}, "lines": lines, "findings": []}
        RunLayout(run).exact_evidence.write_text(
            json.dumps({"1-hpatch": {**analysis, "consolidated": "x.jsonl"}})
        )
        report = build_report(run, always_valid)
        assert not any("exact evidence" in r for r in report["outcome"]["reasons"])
        summary = render_summary(report)
        assert "| retained | 2 of 3 (incomplete: fewer records than routed calls) |" in summary
        assert "not evidence of what the model understood" in summary


class TestFinalResponseLine:
    def test_counts_only(self, tmp_path):
        """The summary counts the attempts that gave the required response, never quoting
        the required text or the agent's."""
        check = FinalResponseCheck(
            matched=False, found=True, required_sha256="a" * 64, response_sha256="b" * 64
        )
        failed = attrs.evolve(
            attempt("control", 1, 1, False, "final-response"), final_response=check
        )
        run = make_run(tmp_path, [failed], {}, arms=("control",))
        report = build_report(run, always_valid)
        tally = report["correctness"]["arms"]["control"]["final_responses"]
        assert {"attempts": 1, "matched": 0, "missing": 0} == tally
        summary = render_summary(report)
        assert "- control: 0 of 1 attempt(s) gave it." in summary
        assert "a" * 64 not in summary

    def test_absent_when_the_task_requires_none(self, tmp_path):
        run = make_run(tmp_path, [attempt("control", 1, 1, True)], {}, arms=("control",))
        report = build_report(run, always_valid)
        assert report["correctness"]["arms"]["control"]["final_responses"] is None
        assert "exact final response" not in render_summary(report)
