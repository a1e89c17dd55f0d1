"""hpbench suite finish: per-task rows from each task's report, pooled statistics by hand,
tasks without a report, and summary.md."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hpbench.rundir import RunLayout, SuiteLayout
from hpbench.stats import wilson_interval
from hpbench.suite import build_suite, finish_suite

from ..conftest import HPBENCH
from ..report.conftest import REQUEST_ID, THREAD_ID, snapshot
from .conftest import task_report, tokens, write_request

# Task a: (control, hpatch) outcomes per repetition: one pair each way and one concordant.
A_OUTCOMES = [(True, False), (False, True), (True, True)]
# Task b: two pairs where only hpatch passed, one where both did, one where neither did.
B_OUTCOMES = [(False, True), (False, True), (True, True), (False, False)]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """Tasks a and b ran and reported; c's run stopped before its report; d was skipped."""
    root = tmp_path / "suite"
    write_request(root, ["a", "b", "c", "d"], ["a\t0", "b\t1", "c\t1", "d\tskipped"])
    # a: input 1000 -> 900 in each of 3 pairs; b: 200 -> 250 in each of 4, output 10 -> 20.
    task_report(root, "a", A_OUTCOMES, [tokens(1000, 900)] * 3, tmp_path / "scratch-a")
    task_report(
        root, "b", B_OUTCOMES, [tokens(200, 250, output=(10, 20))] * 4, tmp_path / "scratch-b"
    )
    (SuiteLayout(root).task_run("c") / "attempts").mkdir(parents=True)
    return root


class TestRows:
    def test_rows_copy_each_report(self, suite: Path) -> None:
        """Counts, pairs, McNemar and token figures come from each task's report.json."""
        document = build_suite(suite)
        rows = {row.task: row for row in document.tasks}
        for task in ("a", "b"):
            report = json.loads(
                RunLayout(SuiteLayout(suite).task_run(task)).report_json.read_text()
            )
            figures = rows[task].figures
            assert figures is not None
            correctness = report["correctness"]
            for arm in ("control", "hpatch"):
                tally = figures.arms[arm]
                stats = correctness["arms"][arm]
                assert (stats["attempts"], stats["passed"]) == (tally.attempts, tally.passed)
                rate = stats["pass_rate"]
                assert (rate["trials"], rate["successes"]) == (
                    tally.compared,
                    tally.compared_passed,
                )
            test = correctness["mcnemar"]
            assert figures.mcnemar is not None
            assert test["p_value"] == figures.mcnemar.p_value
            assert figures.discordance is not None
            assert (test["control_only"], test["treatment_only"]) == (
                figures.discordance.baseline_only,
                figures.discordance.treatment_only,
            )
            assert figures.tokens is not None
            usage = report["usage"]
            for label, figure in figures.tokens.items():
                assert usage["deltas"][label] == figure.delta
                assert usage["bootstrap"]["figures"][label]["mean"] == figure.mean
                assert usage["bootstrap"]["figures"][label]["status"] == figure.interval

    def test_hand_computed_task_figures(self, suite: Path) -> None:
        rows = {row.task: row for row in build_suite(suite).tasks}
        a, b = rows["a"].figures, rows["b"].figures
        assert a is not None and b is not None
        assert a.discordance is not None and b.discordance is not None
        assert (3, 1, 1) == (
            a.discordance.pairs,
            a.discordance.baseline_only,
            a.discordance.treatment_only,
        )
        assert (4, 0, 2) == (
            b.discordance.pairs,
            b.discordance.baseline_only,
            b.discordance.treatment_only,
        )
        assert a.tokens is not None and b.tokens is not None
        # a: 3 pairs of 900 - 1000; relative to the control's 3000.
        assert (3000, 2700, -300) == (
            a.tokens["input_tokens"].baseline,
            a.tokens["input_tokens"].treatment,
            a.tokens["input_tokens"].delta,
        )
        assert -0.1 == pytest.approx(a.tokens["input_tokens"].relative)
        assert -100.0 == a.tokens["input_tokens"].mean
        # Fewer than 6 pairs: the report drew no interval, and the row says so.
        assert "too-few-pairs" == a.tokens["input_tokens"].interval
        assert 0.25 == pytest.approx(b.tokens["input_tokens"].relative)
        assert 1.0 == pytest.approx(b.tokens["output_tokens"].relative)
        assert (0, 1) == (rows["a"].exit_status, rows["b"].exit_status)

    def test_task_without_a_report_is_listed_never_zero(self, suite: Path) -> None:
        """c stopped before its report, d never started: rows with reasons, no figures."""
        document = build_suite(suite)
        rows = {row.task: row for row in document.tasks}
        c, d = rows["c"], rows["d"]
        assert ("no report", None, 1) == (c.status, c.figures, c.exit_status)
        assert "no report.json: the run stopped before its report (exit 1)" == c.reason
        assert ("no report", None, None) == (d.status, d.figures, d.exit_status)
        assert c.reason is not None and d.reason is not None
        assert d.reason.startswith("skipped")
        assert ("c", "d") == document.pooled.left_out
        assert document.interrupted
        assert not document.outcome.ok

    def test_report_of_another_task_is_refused(self, suite: Path) -> None:
        """A report.json whose run is another task's is no report of this one."""
        layout = RunLayout(SuiteLayout(suite).task_run("b"))
        report = json.loads(layout.report_json.read_text())
        report["run"]["task"] = "a"
        layout.report_json.write_text(json.dumps(report))
        row = {row.task: row for row in build_suite(suite).tasks}["b"]
        assert row.figures is None
        assert row.reason is not None
        assert "task a's report, not b's" in row.reason

    def test_report_off_its_contract_is_refused_by_field(self, suite: Path) -> None:
        layout = RunLayout(SuiteLayout(suite).task_run("b"))
        report = json.loads(layout.report_json.read_text())
        report["correctness"]["surplus"] = 1
        layout.report_json.write_text(json.dumps(report))
        row = {row.task: row for row in build_suite(suite).tasks}["b"]
        assert row.figures is None
        assert row.reason is not None
        assert "surplus" in row.reason
        assert "$.correctness" in row.reason

    def test_report_with_inconsistent_mcnemar_is_refused(self, suite: Path) -> None:
        layout = RunLayout(SuiteLayout(suite).task_run("a"))
        report = json.loads(layout.report_json.read_text())
        report["correctness"]["mcnemar"]["control_only"] = 0
        layout.report_json.write_text(json.dumps(report))
        row = {row.task: row for row in build_suite(suite).tasks}["a"]
        assert row.reason is not None
        assert "McNemar counts disagree" in row.reason


class TestPooled:
    def test_hand_computed_pooling(self, suite: Path) -> None:
        """Over a (3 pairs) and b (4 pairs): b = 1 + 0, c = 1 + 2, n = 4, so
        p = 2 * (C(4,0) + C(4,1)) / 2^4 = 0.625 and the floor 2 / 16; control passed 2 + 1
        of 7, hpatch 2 + 3 of 7."""
        pooled = build_suite(suite).pooled
        assert ("a", "b") == pooled.tasks
        assert 7 == pooled.compared_pairs
        assert pooled.mcnemar is not None
        test = pooled.mcnemar
        assert (7, 1, 3, 4) == (
            test.pairs,
            test.baseline_only,
            test.treatment_only,
            test.discordant,
        )
        assert 0.625 == pytest.approx(test.p_value)
        assert 0.125 == pytest.approx(test.min_p_value)
        # The strata are the tasks' own counts, and the pooled counts their sums.
        assert [("a", 3, 1, 1), ("b", 4, 0, 2)] == [
            (s.task, s.pairs, s.baseline_only, s.treatment_only) for s in pooled.strata
        ]
        control, hpatch = pooled.arms["control"], pooled.arms["hpatch"]
        assert (7, 3, 7, 5) == (control.compared, control.passed, hpatch.compared, hpatch.passed)
        assert wilson_interval(3, 7) == control.pass_rate
        assert 2 / 7 == pytest.approx(pooled.pass_rate_delta)

    def test_latency_only_task_makes_no_correctness_claim(self, suite: Path) -> None:
        """b as a latency-only task: out of the pass rates and McNemar (only a's pair each
        way remains: b = c = 1, p = 1), named, and still in the token median."""
        layout = RunLayout(SuiteLayout(suite).task_run("b"))
        report = json.loads(layout.report_json.read_text())
        report["correctness"]["oracle_tier"] = "latency-only"
        layout.report_json.write_text(json.dumps(report))
        document = finish_suite(suite)
        pooled = document.pooled
        assert (("a",), ("b",)) == (pooled.tasks, pooled.no_claim)
        assert 3 == pooled.compared_pairs
        assert pooled.mcnemar is not None
        assert (1, 1, 1.0) == (
            pooled.mcnemar.baseline_only,
            pooled.mcnemar.treatment_only,
            pooled.mcnemar.p_value,
        )
        assert (3, 2) == (pooled.arms["hpatch"].compared, pooled.arms["hpatch"].passed)
        assert pooled.tokens is not None
        assert 0.075 == pytest.approx(pooled.tokens["input_tokens"].median_relative)
        summary = SuiteLayout(suite).summary.read_text()
        assert "Latency-only task(s), which make no correctness claim" in summary
        assert "left out, latency-only: b" in summary

    def test_tokens_are_a_median_of_relative_deltas_never_a_sum(self, suite: Path) -> None:
        """input: a -10 %, b +25 % -> median +7.5 %; output: a 0 %, b +100 % -> +50 %."""
        tokens = build_suite(suite).pooled.tokens
        assert tokens is not None
        assert 0.075 == pytest.approx(tokens["input_tokens"].median_relative)
        assert 0.5 == pytest.approx(tokens["output_tokens"].median_relative)
        assert (2, 2) == (tokens["input_tokens"].reported, tokens["input_tokens"].tasks)

    def test_unknown_token_figure_stays_unknown(self, tmp_path: Path) -> None:
        """A task whose capture lacks usage has no delta: the cross-task median is null,
        with 1 of 2 tasks reported, never computed from the rest or from a zero."""
        root = tmp_path / "suite"
        write_request(root, ["a", "b"], ["a\t0", "b\t0"])
        task_report(root, "a", [(True, True)], [tokens(1000, 900)], tmp_path / "s-a")
        gap = (snapshot(200, 10), snapshot(250, 10, without_usage=1))
        task_report(root, "b", [(True, True)], [gap], tmp_path / "s-b")
        document = build_suite(root)
        b = document.tasks[1].figures
        assert b is not None and b.tokens is not None
        assert (None, None) == (b.tokens["input_tokens"].delta, b.tokens["input_tokens"].relative)
        assert "no-bootstrap" == b.tokens["input_tokens"].interval
        assert document.pooled.tokens is not None
        median = document.pooled.tokens["input_tokens"]
        assert (None, 1, 2) == (median.median_relative, median.reported, median.tasks)
        # One pair per task: no per-task test, but two pairs pooled give McNemar.
        assert b.mcnemar is not None and b.mcnemar.p_value is None
        assert document.pooled.mcnemar is not None
        assert 1.0 == document.pooled.mcnemar.p_value

    def test_nothing_reported_pools_nothing(self, tmp_path: Path) -> None:
        root = tmp_path / "suite"
        write_request(root, ["a", "b"], ["a\t1"])
        document = build_suite(root)
        assert () == document.pooled.tasks
        assert document.pooled.mcnemar is None
        assert document.pooled.arms["control"].pass_rate is None
        assert (None, None) == (document.offline_demo, document.reference_routers)
        b = document.tasks[1]
        assert (
            None,
            "no run directory: the run stopped before it was planned (exit status not recorded)",
        ) == (b.exit_status, b.reason)


class TestSummary:
    def test_summary_has_the_table_pooled_line_and_links(self, suite: Path) -> None:
        finish_suite(suite)
        layout = SuiteLayout(suite)
        summary = layout.summary.read_text()
        assert summary.startswith("# hpbench suite: paired, 4 task(s)")
        assert "**Offline demo.**" in summary
        assert "| a | exit 0 | 3 | 3 / 3 | 2 / 2 | 0 of 3 | 1 / 1 of 3 |" in summary
        assert "[tasks/a/summary.md](tasks/a/summary.md)" in summary
        assert "| c | exit 1 | no report |" in summary
        assert "| d | did not run | no report |" in summary
        assert "control-only passes 1, hpatch-only passes 3, over 7 compared pairs, p = 0.625" in (
            summary.replace("\n", " ")
        )
        assert "Pooled pass-rate difference (hpatch - control): +28.6 percentage points." in summary
        assert "| a | input tokens | 3,000 | 2,700 | -300 | -10.0 % | -100.0 |" in summary
        assert "| input tokens | +7.5 % | 2 of 2 |" in summary
        # The per-task token counts are never added up across tasks.
        assert "3,800" not in summary
        # No identities: the tasks' captures carry a thread id and a request id.
        capture = layout.task_run("a") / "routers" / "1-control" / "capture"
        assert THREAD_ID in "".join(path.read_text() for path in capture.iterdir())
        assert THREAD_ID not in summary
        assert REQUEST_ID not in summary
        document = json.loads(layout.suite_json.read_text())
        assert "hpbench.suite.v1" == document["schema"]

    def test_cli_exit_status_follows_the_outcome(self, suite: Path, tmp_path: Path) -> None:
        """Not ok (b exited 1, c has no report): exit 1, each reason printed."""
        done = subprocess.run(
            [str(HPBENCH), "suite", "finish", str(suite)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 1 == done.returncode, done.stderr
        assert "b: its run exited 1" in done.stdout
        assert "c: no report" in done.stdout
        ok = tmp_path / "ok"
        write_request(ok, ["a", "b"], ["a\t0", "b\t0"])
        task_report(ok, "a", [(True, True)], [tokens(1000, 900)], tmp_path / "ok-a")
        task_report(ok, "b", [(True, True)], [tokens(100, 90)], tmp_path / "ok-b")
        done = subprocess.run(
            [str(HPBENCH), "suite", "finish", "--json", str(ok)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == done.returncode, done.stderr
        assert {"ok": True, "reasons": []} == json.loads(done.stdout)
