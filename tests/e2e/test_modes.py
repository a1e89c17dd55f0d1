"""The measuring modes beyond paired, end to end offline: ctp-only, mentor-handoff and
hpatch-only (hpatch-diagnostic and control-only: test_bench_runs.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import HPBENCH
from .conftest import bench, bench_inside, leftovers, results, run_bench, task_with

pytestmark = [pytest.mark.docker, pytest.mark.e2e]


def report_of(run_dir: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return report


def services(run_dir: Path, repetition: int = 1) -> list[str]:
    return (run_dir / "reps" / str(repetition) / "services.txt").read_text().split()


def routers(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {r["arm"]: (r["mode"], r["protocol"]) for r in report["provenance"]["routers"]}


Ran = tuple[subprocess.CompletedProcess[str], Path]


# A task that requires both directions of CTP compression (spec 002's gate).
COMPRESSION = '\n[ctp]\nrequire_compression = ["input", "output"]\n'


@pytest.fixture(scope="module")
def ctp_only(runs_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """`cd benchmarks && MODE=ctp-only ./bench.sh`, two repetitions (the order alternates
    and both pairs are compared), on a task that requires compression: the gate holds
    the ctp arm only."""
    tasks = task_with(tmp_path_factory.mktemp("ctp-task"), COMPRESSION)
    return bench_inside(runs_dir, MODE="ctp-only", REPETITIONS="2", HPBENCH_TASKS_DIR=str(tasks))


@pytest.fixture(scope="module")
def mentor_handoff(runs_dir: Path) -> Ran:
    return bench("mentor-handoff", runs_dir, MENTOR_MODEL="gpt-6-mentor")


@pytest.fixture(scope="module")
def control(runs_dir: Path) -> Path:
    """A finished control-only run: the published control."""
    result, run_dir = bench("control-only", runs_dir)
    assert 0 == result.returncode, result.stderr[-4000:]
    return run_dir


@pytest.fixture(scope="module")
def hpatch_only(runs_dir: Path, control: Path) -> Ran:
    return bench("hpatch-only", runs_dir, BASELINE=str(control))


class TestCtpOnly:
    @pytest.fixture
    def run(self, ctp_only: Ran) -> Ran:
        return ctp_only

    def test_both_protocols_run_and_pass(self, run) -> None:
        result, run_dir = run
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        assert [
            "ctp-agent",
            "ctp-router",
            "native-agent",
            "native-router",
            "provider",
            "sentinel",
        ] == services(run_dir)
        attempts = {(a["repetition"], a["arm"]): a for a in results(run_dir)}
        assert {(1, "native"), (1, "ctp"), (2, "native"), (2, "ctp")} == set(attempts)
        assert all(a["passed"] for a in attempts.values())
        # Alternating order (spec 002): baseline first in odd repetitions.
        assert (1, 2) == (attempts[(1, "native")]["pair_order"], attempts[(1, "ctp")]["pair_order"])
        assert (2, 1) == (attempts[(2, "native")]["pair_order"], attempts[(2, "ctp")]["pair_order"])

    def test_each_arm_is_bound_to_its_protocol(self, run) -> None:
        """native is Hpatch/native and ctp Hpatch/CTP2, both Mentor off, as the captures
        and the report say."""
        _, run_dir = run
        report = report_of(run_dir)
        assert all(verdict["valid"] for verdict in report["captures"].values())
        assert {"native": ("hpatch", "native"), "ctp": ("hpatch", "ctp2")} == routers(report)
        for key in ("1-native", "1-ctp"):
            metrics = json.loads((run_dir / "routers" / key / "metrics.json").read_text())
            assert metrics["router"]["mentor"] is False

    def test_the_report_compares_the_two_protocols(self, run) -> None:
        """The same statistics as paired: McNemar over the pairs, signed deltas ctp - native."""
        _, run_dir = run
        report = report_of(run_dir)
        assert ["ctp", "native"] == sorted(report["correctness"]["arms"])
        assert 2 == report["correctness"]["mcnemar"]["pairs"]
        assert report["usage"]["deltas"] is not None
        summary = (run_dir / "summary.md").read_text()
        assert "delta (ctp - native)" in summary
        assert "| control |" not in summary


class TestMentorHandoff:
    @pytest.fixture
    def run(self, mentor_handoff: Ran) -> Ran:
        return mentor_handoff

    def test_both_arms_pass_with_valid_captures(self, run) -> None:
        result, run_dir = run
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        assert [
            "hpatch-agent",
            "hpatch-router",
            "mentor-agent",
            "mentor-router",
            "provider",
            "sentinel",
        ] == services(run_dir)
        assert {"hpatch", "mentor"} == {a["arm"] for a in results(run_dir)}
        report = report_of(run_dir)
        assert all(verdict["valid"] for verdict in report["captures"].values())
        # Both arms share the protocol (native by default).
        assert {"hpatch": ("hpatch", "native"), "mentor": ("hpatch", "native")} == routers(report)

    def test_only_the_treatment_consults_its_mentor(self, run) -> None:
        """The mentor arm's router has Mentor on, proves its child and makes a request to
        the mentor model; the baseline's has Mentor off and no child; the report keeps
        main and mentor traffic apart."""
        _, run_dir = run
        mentor = json.loads((run_dir / "routers/1-mentor/metrics.json").read_text())
        baseline = json.loads((run_dir / "routers/1-hpatch/metrics.json").read_text())
        assert (True, False) == (mentor["router"]["mentor"], baseline["router"]["mentor"])
        proofs = (run_dir / "routers/1-mentor/capture/children/proofs.jsonl").read_text()
        assert [("gpt-6-mentor", "mentor")] == [
            (json.loads(line)["model"], json.loads(line)["kind"]) for line in proofs.splitlines()
        ]
        assert not (run_dir / "routers/1-hpatch/capture/children/proofs.jsonl").exists()
        models = report_of(run_dir)["models"]
        assert "gpt-6-mentor" == models["configured"]["mentor"]
        traffic = {
            (key, row["traffic"]) for key, rows in models["attempts"].items() for row in rows
        }
        assert {("1-hpatch", "main"), ("1-mentor", "main"), ("1-mentor", "mentor")} == traffic
        summary = (run_dir / "summary.md").read_text()
        assert "mentor gpt-6-mentor (mentor arm only)" in summary
        assert "delta (mentor - hpatch)" in summary


class TestHpatchOnly:
    @pytest.fixture
    def run(self, hpatch_only: Ran) -> Ran:
        return hpatch_only

    def test_one_fresh_treatment_attempt(self, run) -> None:
        result, run_dir = run
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        assert ["hpatch-agent", "hpatch-router", "provider", "sentinel"] == services(run_dir)
        # The imported control is never a new attempt: no attempt, result or router of it.
        (attempt,) = results(run_dir)
        assert ("hpatch", True) == (attempt["arm"], attempt["passed"])
        assert ["1-hpatch"] == sorted(p.name for p in (run_dir / "attempts").iterdir())
        assert ["1-hpatch"] == sorted(p.name for p in (run_dir / "routers").iterdir())
        report = report_of(run_dir)
        assert {"hpatch": ("hpatch", "native")} == routers(report)

    def test_the_control_is_imported_and_labelled(self, run, control: Path) -> None:
        _, run_dir = run
        report = report_of(run_dir)
        imported = report["imported"]
        assert (control.name, "control-only", 1, True, "current") == (
            imported["source_run_id"],
            imported["source_mode"],
            imported["source_repetition"],
            imported["passed"],
            imported["metrics"],
        )
        assert ["control", "hpatch"] == sorted(report["correctness"]["arms"])
        # Current metrics are compared, from the baseline's snapshot.
        baseline = json.loads((control / "routers/1-control/metrics.json").read_text())
        assert (
            report["usage"]["arms"]["control"]["input_tokens"] == baseline["usage"]["input_tokens"]
        )
        assert report["usage"]["deltas"] is not None
        summary = (run_dir / "summary.md").read_text()
        assert f"imported from run {control.name} (control-only), repetition 1" in summary
        assert "| control (imported) |" in summary
        assert "| exact evidence | off |" in summary

    def test_a_mismatching_baseline_is_refused_before_any_model_call(
        self, runs_dir: Path, control: Path, tmp_path: Path
    ) -> None:
        """An exported baseline whose effort is not the run's: refused, naming the field."""
        exported = tmp_path / "baseline.json"
        subprocess.run(
            [str(HPBENCH), "baseline", "export", str(control), "--out", str(exported)],
            check=True,
            capture_output=True,
        )
        document = json.loads(exported.read_text())
        document["effort"] = "high"
        exported.write_text(json.dumps(document))
        result, run_dir = bench_inside(runs_dir, MODE="hpatch-only", BASELINE=str(exported))
        assert 0 != result.returncode
        assert "$.effort" in result.stderr
        assert "no model was called" in result.stderr
        assert not (run_dir / "attempts").exists()

    def test_an_exported_baseline_file_from_inside_benchmarks(
        self, runs_dir: Path, control: Path, tmp_path: Path
    ) -> None:
        """`cd benchmarks && MODE=hpatch-only ./bench.sh` with BASELINE naming the file
        `hpbench baseline export` published (the fixture's run names a run directory)."""
        exported = tmp_path / "baseline.json"
        subprocess.run(
            [str(HPBENCH), "baseline", "export", str(control), "--out", str(exported)],
            check=True,
            capture_output=True,
        )
        result, run_dir = bench_inside(runs_dir, MODE="hpatch-only", BASELINE=str(exported))
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        assert [("hpatch", True)] == [(a["arm"], a["passed"]) for a in results(run_dir)]
        imported = report_of(run_dir)["imported"]
        assert (control.name, True) == (imported["source_run_id"], imported["passed"])
        kept = json.loads((run_dir / "imported" / "baseline.json").read_text())
        assert kept == json.loads(exported.read_text())


def test_ctp_only_named_as_an_argument(runs_dir: Path) -> None:
    """`benchmarks/bench.sh ctp-only` (its fixture runs `MODE=ctp-only ./bench.sh`;
    mentor-handoff runs both ways above, hpatch-only too, hpatch-diagnostic here and
    in test_bench_runs.py)."""
    result, run_dir = bench("ctp-only", runs_dir)
    assert 0 == result.returncode, result.stderr[-4000:]
    assert [] == leftovers(run_dir)
    assert "ctp-only" == json.loads((run_dir / "run.json").read_text())["mode"]
    assert {"native", "ctp"} == {a["arm"] for a in results(run_dir) if a["passed"]}
    # No requirement in the bundled task: no gate, and no section.
    assert [] == report_of(run_dir)["compression"]["required"]
    assert "## CTP compression" not in (run_dir / "summary.md").read_text()


def test_hpatch_diagnostic_named_as_an_argument_with_exact_evidence(runs_dir: Path) -> None:
    """`benchmarks/bench.sh hpatch-diagnostic` with HPATCH_EXACT_EVIDENCE=true (spec 004):
    the treatment router keeps each completed Hpatch call's record, the run checks and
    consolidates them, and the summary counts them without a string of theirs."""
    result, run_dir = bench("hpatch-diagnostic", runs_dir, HPATCH_EXACT_EVIDENCE="true")
    assert 0 == result.returncode, result.stderr[-4000:]
    assert [] == leftovers(run_dir)
    assert [("hpatch", True)] == [(a["arm"], a["passed"]) for a in results(run_dir)]
    report = report_of(run_dir)
    assert {"hpatch": ("hpatch", "native")} == routers(report)
    # The demo's treatment: one success, one rejection and its correction.
    analysis = report["exact_evidence"]["1-hpatch"]
    assert analysis["ok"], analysis["findings"]
    rows = analysis["rows"]
    assert (3, 3, 1) == (
        rows["routed_calls"],
        rows["retained_records"],
        rows["chains_recovered_first_correction"],
    )
    consolidated = run_dir / "attempts/1-hpatch/hpatch-exact-evidence.jsonl"
    assert 0o600 == consolidated.stat().st_mode & 0o777
    records = [json.loads(line) for line in consolidated.read_text().splitlines()]
    assert ["applied", "rejected", "applied"] == [r["outcome"] for r in records]
    summary = (run_dir / "summary.md").read_text()
    assert "| exact evidence | on |" in summary
    assert "| retained | 3 of 3 routed calls (complete) |" in summary
    # No payload, report, diagnostic or identity of a record reaches the summary.
    for record in records:
        assert record["call"] not in summary and record["session"] not in summary
        for name in ("payload", "report", "diagnostic"):
            if record[name] is not None:
                assert record[name]["text"] not in summary
                assert record[name]["sha256"] not in summary


@pytest.mark.parametrize(
    ("mode", "setting", "message"),
    [
        (
            "ctp-only",
            {"TREATMENT_MODEL_PROTOCOL": "native"},
            "TREATMENT_MODEL_PROTOCOL does not apply to ctp-only",
        ),
        ("mentor-handoff", {"MENTOR_MODEL": "gpt-6-astra"}, "must differ from MODEL"),
        ("hpatch-only", {}, "hpatch-only imports its control: set BASELINE"),
        (
            "paired",
            {"HPATCH_EXACT_EVIDENCE": "true"},
            "HPATCH_EXACT_EVIDENCE does not apply to paired",
        ),
    ],
)
def test_a_mode_setting_is_refused_before_anything_starts(
    runs_dir: Path, mode: str, setting: dict[str, str], message: str
) -> None:
    result = run_bench(runs_dir, mode, **setting)
    assert 0 != result.returncode
    assert message in result.stderr
    assert "run directory:" not in result.stderr


class TestCompressionGate:
    """The task's compression requirement through the whole flow, held to the attempts
    each mode names, with measured values; and a treatment that does not compress fails
    the run."""

    def _gate(self, run_dir: Path) -> dict[str, Any]:
        gate: dict[str, Any] = report_of(run_dir)["compression"]
        return gate

    def test_ctp_only_holds_the_ctp_arm(self, ctp_only: Ran) -> None:
        _, run_dir = ctp_only
        gate = self._gate(run_dir)
        assert (["1-ctp", "2-ctp"], []) == (sorted(gate["attempts"]), gate["failures"])
        assert all(v > 0 for row in gate["attempts"].values() for v in row.values()), gate
        assert "## CTP compression" in (run_dir / "summary.md").read_text()

    def test_mentor_handoff_on_ctp2_holds_both_arms_on_an_unchanged_schedule(
        self, runs_dir: Path, tmp_path: Path
    ) -> None:
        """Both arms share CTP/2 and both meet the requirement; the mentor's child
        schedule is the one the native run had (one consultation, one proof)."""
        tasks = task_with(tmp_path, COMPRESSION)
        result, run_dir = bench_inside(
            runs_dir,
            MODE="mentor-handoff",
            MENTOR_MODEL_PROTOCOL="ctp2",
            HPBENCH_TASKS_DIR=str(tasks),
        )
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        report = report_of(run_dir)
        assert {"hpatch": ("hpatch", "ctp2"), "mentor": ("hpatch", "ctp2")} == routers(report)
        gate = self._gate(run_dir)
        assert (["1-hpatch", "1-mentor"], []) == (sorted(gate["attempts"]), gate["failures"])
        proofs = (run_dir / "routers/1-mentor/capture/children/proofs.jsonl").read_text()
        assert ["scripted-mentor"] == [json.loads(line)["model"] for line in proofs.splitlines()]

    def test_a_treatment_that_does_not_compress_fails_the_run(
        self, runs_dir: Path, tmp_path: Path
    ) -> None:
        """Paired on the native protocol saves no output tokens: both attempts pass their
        hidden tests, the gate fails the run with the measured value, never a made-up one."""
        tasks = task_with(tmp_path, COMPRESSION)
        result, run_dir = bench(
            "paired",
            runs_dir,
            TREATMENT_MODEL_PROTOCOL="native",
            HPBENCH_TASKS_DIR=str(tasks),
        )
        assert 0 != result.returncode
        assert [] == leftovers(run_dir)
        assert all(attempt["passed"] for attempt in results(run_dir))
        gate = self._gate(run_dir)
        assert ["1-hpatch"] == sorted(gate["attempts"])
        assert any(
            failure.startswith("1-hpatch: output compression required, measured")
            for failure in gate["failures"]
        ), gate
        summary = (run_dir / "summary.md").read_text()
        assert "- FAILED: 1-hpatch: output compression required, measured" in summary
