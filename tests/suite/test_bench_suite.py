"""benchmarks/libexec/bench-suite: TASK lists refused before anything exists, the preset run
directory, and the flow (one task after another, a failed task not stopping the others,
INT and TERM) driven with a stand-in for the mode's single-task script; no Docker."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from hpbench.modes import MODES
from hpbench.rundir import SUITE_SKIPPED, RunLayout, SuiteLayout

from ..conftest import REPO_ROOT

BENCH = REPO_ROOT / "benchmarks" / "bench.sh"
LIBEXEC = REPO_ROOT / "benchmarks" / "libexec"
VENV = REPO_ROOT / ".venv"
TIMEOUT = 120


def _env(runs: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"MODE", "TASK", "BASELINE"}}
    return {**clean, "RUNS_DIR": str(runs), "HPBENCH_VENV": str(VENV), **extra}


def bench(mode: str, runs: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BENCH), mode],
        capture_output=True,
        text=True,
        check=False,
        env=_env(runs, **extra),
        timeout=TIMEOUT,
    )


def _refusal(done: subprocess.CompletedProcess[str]) -> str:
    assert 1 == done.returncode, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("bench:")]
    assert 1 == len(lines), done.stderr
    return lines[0]


class TestRefusedTaskLists:
    @pytest.mark.parametrize(
        ("task", "message"),
        [
            ("kv-rangestream,,etcd-rangestream", "an empty task id"),
            ("kv-rangestream,", "an empty task id"),
            (",kv-rangestream", "an empty task id"),
            ("kv-rangestream, ,etcd-rangestream", "an empty task id"),
            (
                "kv-rangestream,etcd-rangestream,kv-rangestream",
                "task kv-rangestream is listed twice",
            ),
            ("kv-rangestream,no-such-task", "'no-such-task' is not a task hpbench knows"),
        ],
    )
    def test_refused_in_one_line_and_nothing_created(
        self, tmp_path: Path, task: str, message: str
    ) -> None:
        runs = tmp_path / "runs"
        line = _refusal(bench("paired", runs, TASK=task))
        assert f"bench: TASK={task}: " in line
        assert message in line
        assert not runs.exists()

    def test_unknown_id_says_why(self, tmp_path: Path) -> None:
        """The refusal carries what hpbench task show said about the id."""
        line = _refusal(bench("paired", tmp_path / "runs", TASK="kv-rangestream,nope"))
        assert "no task 'nope'" in line

    @pytest.mark.parametrize("mode", sorted(MODES))
    def test_every_measuring_mode_hands_over(self, tmp_path: Path, mode: str) -> None:
        """Each measuring mode's script hands a comma list to bench-suite."""
        line = _refusal(bench(mode, tmp_path / "runs", TASK="a,,b"))
        assert "TASK=a,,b: an empty task id" in line

    def test_bad_settings_refused_before_the_suite_exists(self, tmp_path: Path) -> None:
        runs = tmp_path / "runs"
        done = bench("paired", runs, TASK="kv-rangestream,etcd-rangestream", REPETITIONS="0")
        assert 1 == done.returncode
        assert "REPETITIONS" in done.stderr
        assert "refusing to start the suite: bad settings" in done.stderr
        assert not runs.exists()

    def test_preparation_only_takes_one_task(self, tmp_path: Path) -> None:
        runs = tmp_path / "runs"
        line = _refusal(bench("preparation-only", runs, TASK="kv-rangestream,etcd-rangestream"))
        assert "preparation-only prepares one task" in line
        assert not runs.exists()

    def test_hpatch_only_baseline_must_be_a_suite(self, tmp_path: Path) -> None:
        runs = tmp_path / "runs"
        baseline = tmp_path / "a-run"
        baseline.mkdir()
        line = _refusal(
            bench(
                "hpatch-only",
                runs,
                TASK="kv-rangestream,etcd-rangestream",
                BASELINE=str(baseline),
            )
        )
        assert f"BASELINE={baseline} must be a suite directory" in line
        assert not runs.exists()


def make_run_dir(preset: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f'source "{LIBEXEC}/bench-lib.sh"; make_run_dir paired'],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "BENCH_ROOT": str(REPO_ROOT), "BENCH_RUN_DIR": str(preset)},
        timeout=30,
    )


class TestPresetRunDirectory:
    def test_new_directory_is_made_private(self, tmp_path: Path) -> None:
        """Made 0700, and printed as the absolute path it resolves to."""
        (tmp_path / "tasks").mkdir()
        done = make_run_dir(tmp_path / "tasks" / ".." / "kv")
        assert 0 == done.returncode, done.stderr
        assert str(tmp_path / "kv") == done.stdout.strip()
        assert 0o700 == stat.S_IMODE((tmp_path / "kv").stat().st_mode)

    def test_empty_directory_is_taken(self, tmp_path: Path) -> None:
        (tmp_path / "kv").mkdir(mode=0o755)
        done = make_run_dir(tmp_path / "kv")
        assert 0 == done.returncode, done.stderr
        assert 0o700 == stat.S_IMODE((tmp_path / "kv").stat().st_mode)

    def test_directory_with_anything_in_it_is_refused(self, tmp_path: Path) -> None:
        (tmp_path / "kv").mkdir()
        (tmp_path / "kv" / ".hidden").write_text("")
        done = make_run_dir(tmp_path / "kv")
        assert 1 == done.returncode
        assert "exists and is not an empty directory" in done.stderr
        assert [".hidden"] == [p.name for p in (tmp_path / "kv").iterdir()]

    @pytest.mark.parametrize("kind", ["file", "symlink"])
    def test_other_things_are_refused(self, tmp_path: Path, kind: str) -> None:
        target = tmp_path / "kv"
        if kind == "file":
            target.write_text("")
        else:
            (tmp_path / "elsewhere").mkdir()
            target.symlink_to(tmp_path / "elsewhere")
        done = make_run_dir(target)
        assert 1 == done.returncode
        assert "exists and is not an empty directory" in done.stderr

    def test_missing_parent_is_refused(self, tmp_path: Path) -> None:
        done = make_run_dir(tmp_path / "no" / "kv")
        assert 1 == done.returncode
        assert "cannot create the run directory" in done.stderr


# Stands in for a mode's single-task script: makes its preset run directory, says it
# started, then ends as STANDIN_<TASK> says (an exit status, or "wait": until TERM, which
# it answers as a run's handler does, keeping a mark and exiting 143).
STAND_IN = r"""#!/usr/bin/env bash
set -euo pipefail
mkdir -m 0700 "${BENCH_RUN_DIR}"
trap 'echo stopped >"${BENCH_RUN_DIR}/stopped"; exit 143' TERM
echo "${TASK} ${BASELINE:-}" >"${BENCH_RUN_DIR}/started"
echo "stand-in started ${TASK}" >&2
behaviour="STANDIN_${TASK//-/_}"
if [[ "${!behaviour:-0}" == wait ]]; then
  while :; do sleep 0.2; done
fi
exit "${!behaviour:-0}"
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout whose paired mode is the stand-in, with two tasks (copies of the bundled
    one under other ids: `hpbench task show` reads them, nothing builds them)."""
    root = tmp_path / "checkout"
    libexec = root / "benchmarks" / "libexec"
    libexec.mkdir(parents=True)
    for name in ("bench-lib.sh", "bench-suite"):
        shutil.copy2(LIBEXEC / name, libexec / name)
    (libexec / "bench-paired").write_text(STAND_IN)
    (libexec / "bench-paired").chmod(0o755)
    for task in ("task-one", "task-two"):
        shutil.copytree(REPO_ROOT / "tasks" / "kv-rangestream", root / "tasks" / task)
        manifest = root / "tasks" / task / "task.toml"
        manifest.write_text(manifest.read_text().replace('"kv-rangestream"', f'"{task}"', 1))
    return root


def _suite_env(checkout: Path, runs: Path, **extra: str) -> dict[str, str]:
    settings = {
        "BENCH_ROOT": str(checkout),
        "HPBENCH_TASKS_DIR": str(checkout / "tasks"),
        "MODE": "paired",
        "TASK": "task-one,task-two",
    }
    return _env(runs, **{**settings, **extra})


def _suite_dir(runs: Path) -> SuiteLayout:
    [suite] = list(runs.iterdir())
    assert "-paired-suite-" in suite.name
    return SuiteLayout(suite)


class TestFlow:
    def test_tasks_run_one_after_another_and_failures_do_not_stop_the_others(
        self, checkout: Path, tmp_path: Path
    ) -> None:
        runs = tmp_path / "runs"
        done = subprocess.run(
            [str(checkout / "benchmarks" / "libexec" / "bench-suite")],
            capture_output=True,
            text=True,
            check=False,
            env=_suite_env(checkout, runs, STANDIN_task_one="3"),
            timeout=TIMEOUT,
        )
        assert 1 == done.returncode, done.stderr
        layout = _suite_dir(runs)
        assert 0o700 == stat.S_IMODE(layout.root.stat().st_mode)
        assert "paired\n" == layout.mode.read_text()
        assert "task-one\ntask-two\n" == layout.tasks_list.read_text()
        assert "task-one\t3\ntask-two\t0\n" == layout.exits.read_text()
        for task in ("task-one", "task-two"):
            assert f"{task} \n" == (layout.task_run(task) / "started").read_text()
        assert done.stderr.index("started task-one") < done.stderr.index("started task-two")
        # The pooling ran over what exists: neither stand-in wrote a report.
        assert layout.suite_json.is_file()
        summary = layout.summary.read_text()
        assert "| task-one | exit 3 | no report |" in summary
        assert "| task-two | exit 0 | no report |" in summary
        assert f"suite directory: {layout.root}" in done.stderr

    def test_every_run_exited_zero_still_needs_ok_reports(
        self, checkout: Path, tmp_path: Path
    ) -> None:
        """Exit 0 needs the pooling's outcome too: runs that exit 0 without a report fail."""
        runs = tmp_path / "runs"
        done = subprocess.run(
            [str(checkout / "benchmarks" / "libexec" / "bench-suite")],
            capture_output=True,
            text=True,
            check=False,
            env=_suite_env(checkout, runs),
            timeout=TIMEOUT,
        )
        assert 1 == done.returncode
        assert "task-one\t0\ntask-two\t0\n" == _suite_dir(runs).exits.read_text()

    def test_hpatch_only_imports_each_task_from_the_baseline_suite(
        self, checkout: Path, tmp_path: Path
    ) -> None:
        libexec = checkout / "benchmarks" / "libexec"
        (libexec / "bench-hpatch-only").symlink_to("bench-paired")
        baseline = tmp_path / "baseline-suite"
        for task in ("task-one", "task-two"):
            (baseline / "tasks" / task).mkdir(parents=True)
        (baseline / "tasks.txt").write_text("task-one\ntask-two\n")
        runs = tmp_path / "runs"
        subprocess.run(
            [str(libexec / "bench-suite")],
            capture_output=True,
            text=True,
            check=False,
            env=_suite_env(checkout, runs, MODE="hpatch-only", BASELINE=f"{baseline}/"),
            timeout=TIMEOUT,
        )
        [suite] = list(runs.iterdir())
        layout = SuiteLayout(suite)
        for task in ("task-one", "task-two"):
            started = (layout.task_run(task) / "started").read_text()
            assert f"{task} {baseline}/tasks/{task}\n" == started

    @pytest.mark.parametrize(("sent", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
    def test_interrupt_stops_the_running_task_and_skips_the_rest(
        self, checkout: Path, tmp_path: Path, sent: signal.Signals, status: int
    ) -> None:
        runs = tmp_path / "runs"
        process = subprocess.Popen(
            [str(checkout / "benchmarks" / "libexec" / "bench-suite")],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env=_suite_env(checkout, runs, STANDIN_task_one="wait"),
        )
        assert process.stderr is not None
        deadline = time.monotonic() + TIMEOUT
        seen = []
        for line in process.stderr:
            seen.append(line)
            if "stand-in started task-one" in line:
                break
            assert time.monotonic() < deadline, seen
        process.send_signal(sent)
        rest = process.stderr.read()
        assert status == process.wait(timeout=TIMEOUT), "".join(seen) + rest
        layout = _suite_dir(runs)
        # The running task's own handler ran; the next task never started.
        assert "stopped\n" == (layout.task_run("task-one") / "stopped").read_text()
        assert not layout.task_run("task-two").exists()
        assert f"task-one\t143\ntask-two\t{SUITE_SKIPPED}\n" == layout.exits.read_text()
        # What exists is still pooled.
        summary = layout.summary.read_text()
        assert "interrupted | yes" in summary
        assert "| task-two | did not run | no report |" in summary
        assert not RunLayout(layout.task_run("task-one")).report_json.exists()


def test_bench_suite_writes_the_names_the_layout_reads() -> None:
    """The suite's file names in bench-suite are SuiteLayout's."""
    script = (LIBEXEC / "bench-suite").read_text()
    layout = SuiteLayout(Path("/s"))
    for path in (layout.mode, layout.tasks_list, layout.exits):
        assert f'"${{SUITE_DIR}}/{path.name}"' in script
    assert f'BENCH_RUN_DIR="${{SUITE_DIR}}/{layout.tasks.name}/${{id}}"' in script
    assert "${BASELINE%/}/tasks.txt" in script
    assert f"\\t{SUITE_SKIPPED}\\n" in script
