"""What the statistics can and cannot show, said in summary.md (issue item 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from hpbench.report import build_report, render_summary

from .conftest import always_valid, attempt, make_run, paired_attempts, snapshot


def _report(tmp_path: Path, outcomes: list[tuple[bool, bool]], **extra: Any) -> dict[str, Any]:
    attempts = paired_attempts(outcomes)
    snapshots = {
        a.key: snapshot(1000 - (a.arm == "hpatch") * (50 + 7 * a.repetition**2), 300)
        for a in attempts
    }
    run = make_run(tmp_path, attempts, snapshots, repetitions=len(outcomes), **extra)
    return build_report(run, always_valid)


class TestStatisticsText:
    def test_one_repetition_says_why_in_one_line(self, tmp_path: Path) -> None:
        """The default run: one line why there are no statistics, and none are printed."""
        report = _report(tmp_path, [(True, True)])
        assert not report["statistics"]["shown"]
        summary = render_summary(report)
        (line,) = [line for line in summary.splitlines() if line.startswith("No statistics:")]
        assert "1 compared pair(s)" in line
        assert "REPETITIONS" in line
        assert "Exact McNemar" not in summary
        assert "Seeded paired bootstrap" not in summary

    def test_all_pairs_concordant(self, tmp_path: Path) -> None:
        """Every pair agrees: p = 1, and the summary says the test cannot show a difference."""
        report = _report(tmp_path, [(True, True), (False, False), (True, True)])
        test = report["correctness"]["mcnemar"]
        assert (0, 1.0, 1.0) == (test["discordant"], test["p_value"], test["min_p_value"])
        assert "every pair agrees, so the test cannot show a difference" in render_summary(report)

    def test_smallest_reachable_p(self, tmp_path: Path) -> None:
        """Three discordant pairs, all one way: p = 0.25 is also the floor, above 0.05."""
        report = _report(tmp_path, [(False, True)] * 3)
        test = report["correctness"]["mcnemar"]
        assert (0.25, 0.25) == (test["p_value"], test["min_p_value"])
        summary = render_summary(report)
        assert "the smallest p any outcome could give is 0.25" in summary
        assert "no outcome of so few pairs could reach p < 0.05" in summary

    def test_too_few_pairs_for_an_interval(self, tmp_path: Path) -> None:
        """Below six pairs the bootstrap states its rule and gives no interval."""
        report = _report(tmp_path, [(True, True)] * 5)
        entry = report["usage"]["bootstrap"]["figures"]["input_tokens"]
        assert ("too-few-pairs", None, None) == (entry["status"], entry["low"], entry["high"])
        summary = render_summary(report)
        assert "no interval from fewer than 6 pairs" in summary
        assert "too few pairs for an interval (5 < 6)" in summary

    def test_bca_interval_from_six_pairs(self, tmp_path: Path) -> None:
        """Six pairs reach the rule: a BCa interval around the mean delta."""
        report = _report(tmp_path, [(True, True)] * 6)
        entry = report["usage"]["bootstrap"]["figures"]["input_tokens"]
        assert "interval" == entry["status"]
        assert entry["low"] <= entry["mean"] <= entry["high"] < 0
        assert "bca" == report["usage"]["bootstrap"]["rule"]["method"]
        assert "BCa" in render_summary(report)

    def test_pass_rate_with_wilson_interval(self, tmp_path: Path) -> None:
        """Per arm: pass rate over the compared attempts with its Wilson interval."""
        report = _report(tmp_path, [(True, False), (True, True)])
        rate = report["correctness"]["arms"]["hpatch"]["pass_rate"]
        assert (1, 2, 0.5) == (rate["successes"], rate["trials"], rate["rate"])
        summary = render_summary(report)
        assert "| hpatch | 50.0 % (1 of 2) | [9.5 %, 90.5 %] | none |" in summary

    def test_attrition_says_why(self, tmp_path: Path) -> None:
        """A voided pair is attrition for both arms, each told why."""
        attempts = [
            *paired_attempts([(True, True)]),
            attempt("hpatch", 2, 1, False, "infrastructure"),
            attempt("control", 2, 2, True),
        ]
        attempts[2] = attrs.evolve(
            attempts[2], infrastructure_error="provider failure: high demand\nsecond line"
        )
        snapshots = {a.key: snapshot(1000, 300) for a in attempts}
        report = build_report(make_run(tmp_path, attempts, snapshots, repetitions=2), always_valid)
        arms = report["correctness"]["arms"]
        assert {
            "voided": 1,
            "reasons": {"infrastructure failure: provider failure: high demand": 1},
        } == arms["hpatch"]["attrition"]
        assert 1 == arms["control"]["attrition"]["voided"]
        summary = render_summary(report)
        assert "1 voided: 1 pair voided by hpatch: infrastructure failure" in summary
        assert "second line" not in summary

    def test_no_compared_attempt_has_no_rate(self, tmp_path: Path) -> None:
        """An arm with no compared attempt has no pass rate, not 0 %."""
        attempts = [
            attempt("control", 1, 1, False, "infrastructure"),
            attempt("hpatch", 1, 2, True),
        ]
        snapshots = {"1-control": snapshot(1, 1), "1-hpatch": snapshot(1, 1)}
        report = build_report(make_run(tmp_path, attempts, snapshots), always_valid)
        assert report["correctness"]["arms"]["hpatch"]["pass_rate"] is None
        assert "unavailable (no compared attempt)" in render_summary(report)

    def test_offline_note_sits_next_to_the_token_table(self, tmp_path: Path) -> None:
        """The replay-script note follows the usage table, not only the banner."""
        summary = render_summary(_report(tmp_path, [(True, True)]))
        usage = summary[summary.index("## Provider usage") : summary.index("## Provider responses")]
        assert "come from the scripted provider's replay scripts" in usage

    def test_no_offline_note_for_a_real_provider(self, tmp_path: Path) -> None:
        """A real provider's figures carry no replay note."""
        summary = render_summary(_report(tmp_path, [(True, True)], offline=False))
        assert "replay scripts" not in summary

    def test_one_arm_has_nothing_to_compare(self, tmp_path: Path) -> None:
        """control-only: pass rate and figures, no delta, no statistics, and why."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True)],
            {"1-control": snapshot(1000, 300)},
            arms=("control",),
        )
        report = build_report(run, always_valid)
        assert report["usage"]["deltas"] is None
        assert report["usage"]["both_passed"] is None
        assert 1000 == report["usage"]["arms"]["control"]["input_tokens"]
        assert "No statistics: one arm: there is nothing to compare." in render_summary(report)
