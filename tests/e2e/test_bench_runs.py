"""benchmarks/bench.sh end to end: the offline demo, and scripted failures that keep their evidence.

Every run uses the real pinned Codex CLI in the agent containers, the
reference routers and the scripted provider, and must leave nothing of its
Compose projects behind.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hpbench.reference.starts import counting_venv, python_starts

from .conftest import (
    BENCH,
    REPO_ROOT,
    RUN_TIMEOUT,
    SCENARIOS,
    bench,
    bench_env,
    leftovers,
    results,
    run_dir_of,
)

pytestmark = [pytest.mark.docker, pytest.mark.e2e]


class TestOfflineDemo:
    def test_paired_two_repetitions(self, runs_dir: Path, tmp_path: Path) -> None:
        """The offline paired demo with two repetitions: both arms pass in both, the order
        alternates, captures validate, statistics are printed, nothing is left in Docker,
        and the harness starts Python at most 8 + 3 x 2 times (the run plan's target)."""
        venv = counting_venv(tmp_path / "venv", REPO_ROOT / ".venv")
        env = bench_env(runs_dir, REPETITIONS="2", HPBENCH_VENV=str(venv))
        env.pop("HPBENCH_SKIP_BUILD")  # the first run of the session builds the images
        result = subprocess.run(
            [str(BENCH)], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT, check=False
        )
        run_dir = run_dir_of(result.stderr)
        assert 0 == result.returncode, result.stderr[-4000:]
        assert "OFFLINE DEMO" in result.stderr
        attempts = results(run_dir)
        assert [(1, "control"), (1, "hpatch"), (2, "hpatch"), (2, "control")] == [
            (a["repetition"], a["arm"]) for a in attempts
        ]
        assert all(a["passed"] for a in attempts)
        summary = (run_dir / "summary.md").read_text()
        assert "Offline demo" in summary
        assert "Exact McNemar" in summary
        assert "Seeded paired bootstrap" in summary
        report = json.loads((run_dir / "report.json").read_text())
        assert report["outcome"]["ok"]
        assert all(proof["ok"] for proof in report["deliveries"].values())
        assert (run_dir / "log.jsonl").is_file()
        assert 0o700 == run_dir.stat().st_mode & 0o777
        assert [] == leftovers(run_dir)
        starts = python_starts(venv)
        assert len(starts) <= 8 + 3 * 2, starts
        assert 2 == starts.count("topology proofs") + starts.count("topology verify"), starts


class TestScriptedFailures:
    def _failed_control(
        self, runs_dir: Path, scenario: str, **extra: str
    ) -> tuple[Path, dict[str, object]]:
        result, run_dir = bench(
            "control-only", runs_dir, HPBENCH_REPLAY_DIR=str(SCENARIOS / scenario), **extra
        )
        assert 0 != result.returncode, result.stderr[-3000:]
        assert [] == leftovers(run_dir)
        (attempt,) = results(run_dir)
        directory = run_dir / "attempts" / "1-control"
        for kept in ("codex.jsonl", "codex.exit", "diff.patch", "result.json"):
            assert (directory / kept).is_file(), kept
        assert (run_dir / "summary.md").is_file()
        return run_dir, attempt

    def test_wrong_edit(self, runs_dir: Path) -> None:
        """A wrong implementation fails the hidden grader; its diff and grader output are kept."""
        run_dir, attempt = self._failed_control(runs_dir, "wrong-edit")
        assert "hidden-tests-failed" == attempt["failure_class"]
        assert "kv/rangestream.go" in (run_dir / "attempts/1-control/diff.patch").read_text()
        assert (run_dir / "attempts/1-control/grader/grader.stdout").is_file()

    def test_edit_outside_allowed_paths(self, runs_dir: Path) -> None:
        """A change outside the allowed paths fails the attempt, naming the path."""
        _, attempt = self._failed_control(runs_dir, "outside-allowed")
        assert "unauthorized-path" == attempt["failure_class"]
        assert ["NOTES.md"] == attempt["unauthorized_paths"]

    def test_agent_timeout(self, runs_dir: Path) -> None:
        """An agent that outlives AGENT_TIMEOUT is stopped and fails as agent-timeout."""
        _, attempt = self._failed_control(runs_dir, "agent-timeout", AGENT_TIMEOUT="30")
        assert "agent-timeout" == attempt["failure_class"]

    def test_provider_500s(self, runs_dir: Path) -> None:
        """A provider answering 500 is an infrastructure failure, never a model loss."""
        run_dir, attempt = self._failed_control(runs_dir, "provider-500")
        assert "infrastructure" == attempt["failure_class"]
        assert str(attempt["infrastructure_error"]).startswith("provider failure")
        assert "infrastructure" in (run_dir / "summary.md").read_text()


class TestCancellation:
    def test_sigint_mid_run(self, runs_dir: Path) -> None:
        """SIGINT during an attempt: exit 130, evidence merged and reported, nothing left."""
        process = subprocess.Popen(
            [str(BENCH), "paired"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=bench_env(runs_dir, HPBENCH_REPLAY_DIR=str(SCENARIOS / "slow-control")),
        )
        assert process.stderr is not None
        seen = []
        deadline = time.monotonic() + RUN_TIMEOUT
        for line in process.stderr:
            seen.append(line)
            if "attempt (order 1) started" in line:
                break
            assert time.monotonic() < deadline
        time.sleep(5)
        process.send_signal(signal.SIGINT)
        rest = process.stderr.read()
        status = process.wait(timeout=300)
        stderr = "".join(seen) + rest
        assert 130 == status, stderr[-3000:]
        run_dir = run_dir_of(stderr)
        assert [] == leftovers(run_dir)
        assert (run_dir / "results.jsonl").is_file()
        assert (run_dir / "summary.md").is_file()
        assert (run_dir / "attempts" / "1-control" / "codex.jsonl").is_file()
