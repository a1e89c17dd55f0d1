"""``benchmarks/bench.sh resume RUN_DIR`` end to end: a 4-repetition offline run is
interrupted mid-attempt, a resume with other settings is refused by name with nothing
moved, the resume with the run's settings runs what did not stand and ends in one merged
report, and a second resume finds every repetition standing and runs nothing."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hpbench.plan import load_plan
from hpbench.resume import repetitions_to_run

from .conftest import BENCH, RUN_TIMEOUT, bench_env, leftovers, results, run_dir_of

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]

SETTINGS = {"REPETITIONS": "4"}


def _interrupted_run(runs_dir: Path) -> tuple[Path, str]:
    """A paired run, SIGINT once some repetition's second attempt has started (so every
    repetition has evidence and none has ended)."""
    process = subprocess.Popen(
        [str(BENCH), "paired"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=bench_env(runs_dir, **SETTINGS),
    )
    assert process.stderr is not None
    seen = []
    deadline = time.monotonic() + RUN_TIMEOUT
    for line in process.stderr:
        seen.append(line)
        if "attempt (order 2) started" in line:
            break
        assert time.monotonic() < deadline, "".join(seen)[-3000:]
    process.send_signal(signal.SIGINT)
    stderr = "".join(seen) + process.stderr.read()
    assert 130 == process.wait(timeout=300), stderr[-3000:]
    return run_dir_of(stderr), stderr


def _resume(runs_dir: Path, run_dir: Path, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), "resume", str(run_dir)],
        capture_output=True,
        text=True,
        env=bench_env(runs_dir, **settings),
        timeout=RUN_TIMEOUT,
        check=False,
    )


def test_an_interrupted_run_resumes_into_one_report(runs_dir: Path) -> None:
    run_dir, stderr = _interrupted_run(runs_dir)
    assert f"benchmarks/bench.sh resume {run_dir}" in stderr
    assert [] == leftovers(run_dir)
    stopped = repetitions_to_run(run_dir, load_plan(run_dir))
    assert [1, 2, 3, 4] == stopped

    refused = _resume(runs_dir, run_dir, REPETITIONS="3")
    assert 1 == refused.returncode
    assert "setting repetitions (REPETITIONS): the run has 4, this invocation 3" in refused.stderr
    assert "nothing was moved or run" in refused.stderr
    assert not (run_dir / "superseded").exists()
    assert not (run_dir / "invocations.jsonl").exists()

    resumed = _resume(runs_dir, run_dir, **SETTINGS)
    assert 0 == resumed.returncode, resumed.stderr[-4000:]
    assert "every attempt passed and all evidence validated" in resumed.stderr
    assert [] == leftovers(run_dir)
    attempts = results(run_dir)
    assert 8 == len(attempts)
    assert all(a["passed"] for a in attempts)
    lines = (run_dir / "invocations.jsonl").read_text().splitlines()
    assert [
        {"invocation": 1, "repetitions": [1, 2, 3, 4], "superseded": []},
        {"invocation": 2, "repetitions": [1, 2, 3, 4], "superseded": [1, 2, 3, 4]},
    ] == [json.loads(line) for line in lines]
    # The interrupted invocation's evidence is kept, whole, beside the new.
    assert (run_dir / "superseded" / "2" / "attempts" / "1-control" / "codex.jsonl").is_file()
    report = json.loads((run_dir / "report.json").read_text())
    assert report["outcome"]["ok"] and 2 == len(report["invocations"])
    summary = (run_dir / "summary.md").read_text()
    assert "- invocation 2 ran repetition(s) 1, 2, 3, 4 again" in summary
    kept = (run_dir / "attempts" / "1-control" / "codex.jsonl").read_bytes()

    again = _resume(runs_dir, run_dir, **SETTINGS)
    assert 0 == again.returncode, again.stderr[-4000:]
    assert "every repetition of" in again.stderr and "nothing runs again" in again.stderr
    assert kept == (run_dir / "attempts" / "1-control" / "codex.jsonl").read_bytes()
    assert 8 == len(results(run_dir))
    assert 3 == len((run_dir / "invocations.jsonl").read_text().splitlines())
    assert [] == leftovers(run_dir)
