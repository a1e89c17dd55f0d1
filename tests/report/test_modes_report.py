"""The report of the two-Hpatch-arm modes: each arm named, compared baseline first, and
each mode's required evidence enforced."""

from __future__ import annotations

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
    """Spec 004's toggle shows in the summary of the two modes that take it, and says
    plainly that no record is collected; elsewhere it is not mentioned."""

    def _summary(self, tmp_path: Path, arms: tuple[str, ...], **plan: object) -> str:
        run = make_run(tmp_path, [attempt(arms[0], 1, 1, True)], {}, arms=arms)
        if plan:
            layout = RunLayout(run)
            write_run_json(layout, attrs.evolve(load_plan(run), **plan))
        return render_summary(build_report(run, always_valid))

    def test_on_in_hpatch_diagnostic(self, tmp_path):
        summary = self._summary(tmp_path, ("hpatch",), exact_evidence=True)
        assert (
            "| exact evidence | on (this version collects no exact-evidence record yet) |"
            in summary
        )

    def test_off_by_default(self, tmp_path):
        assert "| exact evidence | off |" in self._summary(tmp_path, ("hpatch",))

    def test_not_shown_where_it_does_not_apply(self, tmp_path):
        assert "exact evidence" not in self._summary(tmp_path, ("control",))


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
