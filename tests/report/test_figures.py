"""Unknown is never zero, and one population per comparison (issue items 5 and 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hpbench.capture.models import MetricsSnapshot
from hpbench.report import build_report, render_summary

from .conftest import (
    always_valid,
    attempt,
    edit_snapshot,
    invalid_for,
    make_run,
    paired_attempts,
    snapshot,
)


def _row(summary: str, name: str) -> str:
    return next(line for line in summary.splitlines() if line.startswith(f"| {name} |"))


def _two_pairs(tmp_path: Path, hpatch_2: MetricsSnapshot) -> dict[str, Any]:
    run = make_run(
        tmp_path,
        paired_attempts([(True, True), (True, True)]),
        {
            "1-control": snapshot(1000, 300),
            "1-hpatch": snapshot(800, 300),
            "2-control": snapshot(1000, 300),
            "2-hpatch": hpatch_2,
        },
        repetitions=2,
    )
    return build_report(run, always_valid)


class TestUnknownIsNeverZero:
    @pytest.mark.parametrize("state", ["missing", "null", "invalid"])
    def test_a_cached_count_not_reported(self, tmp_path: Path, state: str) -> None:
        """One attempt's cached count missing, null or invalid: the arm's cached figure and
        its delta are null, reported as k of n, not the sum of what was there."""
        report = _two_pairs(tmp_path, snapshot(800, 300, cached={"explicit": 4, state: 1}))
        usage = report["usage"]
        assert usage["arms"]["hpatch"]["cached_input_tokens"] is None
        assert {"reported": 1, "attempts": 2} == usage["reported"]["hpatch"]["cached_input_tokens"]
        assert usage["deltas"]["cached_input_tokens"] is None
        assert {"reported": 1, "pairs": 2} == usage["deltas_reported"]["cached_input_tokens"]
        assert 1000 == usage["arms"]["control"]["cached_input_tokens"]  # the other arm is whole
        assert -400 == usage["deltas"]["input_tokens"]  # and so are the other figures
        line = _row(render_summary(report), "cached input tokens")
        assert "unavailable (1 of 2 attempts reported)" in line
        assert "unavailable (1 of 2 pairs reported)" in line

    def test_a_reasoning_count_not_reported(self, tmp_path: Path) -> None:
        """A usage without a reasoning count makes the reasoning figure unavailable."""
        report = _two_pairs(tmp_path, snapshot(800, 300, reasoning_missing=1))
        assert report["usage"]["arms"]["hpatch"]["reasoning_tokens"] is None
        assert report["usage"]["arms"]["hpatch"]["output_tokens"] == 600

    @pytest.mark.parametrize("gap", ["without_usage", "invalid_usage"])
    def test_a_provider_attempt_without_usage(self, tmp_path: Path, gap: str) -> None:
        """A provider attempt with no (or malformed) usage: every token sum is a lower bound,
        so every token figure of the arm is unavailable; counts stay."""
        report = _two_pairs(tmp_path, snapshot(800, 300, **{gap: 1}))  # type: ignore[arg-type]
        arm = report["usage"]["arms"]["hpatch"]
        for label in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens"):
            assert arm[label] is None, label
            assert report["usage"]["deltas"][label] is None, label
        assert 11 == arm["provider_attempts"]

    def test_an_attempt_without_valid_usage_at_all(self, tmp_path: Path) -> None:
        """A whole attempt whose capture did not validate reports nothing: k of n."""
        run = make_run(
            tmp_path,
            paired_attempts([(True, True)]),
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 300)},
        )
        report = build_report(run, invalid_for("hpatch"))
        usage = report["usage"]
        assert all(value is None for value in usage["arms"]["hpatch"].values())
        assert {"reported": 0, "attempts": 1} == usage["reported"]["hpatch"]["input_tokens"]
        assert all(value is None for value in usage["attempts"]["1-hpatch"].values())
        line = _row(render_summary(report), "input tokens")
        assert "unavailable (0 of 1 attempts reported)" in line
        assert "| 1,000 |" in line

    def test_a_snapshot_without_the_counters(self, tmp_path: Path) -> None:
        """A snapshot that does not say whether anything went unreported is not trusted:
        the snapshot model refuses it, naming the fields, and its figures are unavailable."""
        run = make_run(
            tmp_path,
            paired_attempts([(True, True)]),
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(800, 300)},
        )

        def drop_counters(document: dict[str, Any]) -> None:
            del document["usage"]["cached_input_null"]
            del document["requests"]["attempts_invalid_usage"]

        edit_snapshot(run, "1-hpatch", drop_counters)
        report = build_report(run, always_valid)
        assert report["usage"]["arms"]["hpatch"]["input_tokens"] is None
        assert report["usage"]["arms"]["hpatch"]["cached_input_tokens"] is None
        fields = {finding["field"] for finding in report["captures"]["1-hpatch"]["findings"]}
        assert {"$.usage.cached_input_null", "$.requests.attempts_invalid_usage"} <= fields

    def test_null_in_report_json(self, tmp_path: Path) -> None:
        """report.json carries null, not 0, for what was not reported."""
        report = _two_pairs(tmp_path, snapshot(800, 300, cached={"explicit": 4, "null": 1}))
        document = json.loads(json.dumps(report))
        assert document["usage"]["arms"]["hpatch"]["cached_input_tokens"] is None


class TestOnePopulation:
    def _run(self, tmp_path: Path) -> dict[str, Any]:
        attempts = [
            *paired_attempts([(True, True), (True, False), (False, True), (True, True)]),
            attempt("control", 5, 1, True),
            attempt("hpatch", 5, 2, False, "infrastructure"),
        ]
        snapshots = {
            a.key: snapshot(1000 - 100 * (a.arm == "hpatch") * a.repetition, 300) for a in attempts
        }
        return build_report(make_run(tmp_path, attempts, snapshots, repetitions=5), always_valid)

    def test_deltas_mcnemar_and_bootstrap_share_the_pairs(self, tmp_path: Path) -> None:
        """A voided pair is in none of them; the other four are in all of them."""
        report = self._run(tmp_path)
        usage = report["usage"]
        assert [1, 2, 3, 4] == usage["population"]["repetitions"]
        assert 4 == report["correctness"]["mcnemar"]["pairs"]
        assert 4 == usage["bootstrap"]["pairs"]
        assert -1000 == usage["deltas"]["input_tokens"]  # -100 - 200 - 300 - 400, not -1500
        assert {"reported": 4, "pairs": 4} == usage["deltas_reported"]["input_tokens"]
        assert 4000 == usage["arms"]["control"]["input_tokens"]

    def test_both_passed_pairs(self, tmp_path: Path) -> None:
        """Token deltas again over the pairs where both arms passed, with their count."""
        report = self._run(tmp_path)
        both = report["usage"]["both_passed"]
        assert [1, 4] == both["population"]["repetitions"]
        assert -500 == both["deltas"]["input_tokens"]
        summary = render_summary(report)
        assert "Over 4 compared pair(s)" in summary
        assert "over the 2 pair(s) where both arms passed (repetitions 1, 4)" in summary

    def test_no_pair_where_both_passed(self, tmp_path: Path) -> None:
        """When no pair passed on both sides there is no figure, not a zero delta."""
        run = make_run(
            tmp_path,
            paired_attempts([(True, False)]),
            {"1-control": snapshot(1000, 300), "1-hpatch": snapshot(10, 1)},
        )
        report = build_report(run, always_valid)
        assert 0 == report["usage"]["both_passed"]["population"]["pairs"]
        assert report["usage"]["both_passed"]["deltas"]["input_tokens"] is None
        assert "No pair where both arms passed: no figure." in render_summary(report)

    def test_voided_pair_keeps_its_figures_per_attempt(self, tmp_path: Path) -> None:
        """The voided pair's attempts are still in report.json, outside every comparison."""
        report = self._run(tmp_path)
        assert 1000 == report["usage"]["attempts"]["5-control"]["input_tokens"]
        assert 5 not in report["usage"]["population"]["repetitions"]

    def test_missing_arm_result_voids_the_pair(self, tmp_path: Path) -> None:
        """A repetition with one arm's result only is voided with that reason."""
        run = make_run(
            tmp_path,
            [attempt("control", 1, 1, True), *paired_attempts([(True, True)])[:0]],
            {"1-control": snapshot(1000, 300)},
        )
        report = build_report(run, always_valid)
        (pair,) = report["correctness"]["pairs"]
        assert {"hpatch": "no result"} == pair["void_reasons"]
        assert 0 == report["usage"]["population"]["pairs"]
        attrition = report["correctness"]["arms"]["control"]["attrition"]
        assert {"voided": 1, "reasons": {"pair voided by hpatch: no result": 1}} == attrition
