"""benchmarks/bench.sh end to end: the offline demo, and scripted failures that keep their evidence.

Every run uses the real pinned Codex CLI in the agent containers, the
reference routers and the scripted provider, and must leave nothing of its
Compose projects behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hpbench.reference.starts import counting_venv, python_starts

from .conftest import (
    BENCH,
    REPO_ROOT,
    RUN_TIMEOUT,
    SCENARIOS,
    bench,
    bench_env,
    bench_inside,
    leftovers,
    results,
    run_bench,
    run_dir_of,
    task_with,
)

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]


class TestOfflineDemo:
    def test_paired_two_repetitions(self, runs_dir: Path, tmp_path: Path) -> None:
        """The offline paired demo with two repetitions: both arms pass in both, the order
        alternates, captures validate, statistics are printed, nothing is left in Docker,
        and the harness starts Python at most 8 + 3 x 2 times (the run plan's target)."""
        venv = counting_venv(tmp_path / "venv", REPO_ROOT / ".venv")
        env = bench_env(runs_dir, REPETITIONS="2", HPBENCH_VENV=str(venv))
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
        # What ran: every fact established, every stand-in named by what it said.
        ran = report["provenance"]
        assert [] == ran["missing"]
        assert ran["codex_version"] == f"codex-cli {report['run']['codex_version']}"
        assert ran["hpbench_revision"].startswith(
            subprocess.run(
                ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        assert [
            "control router: reference router (test equipment)",
            "hpatch router: reference router (test equipment)",
            "provider: scripted provider (test equipment)",
        ] == ran["stand_ins"]
        assert summary.index("## What ran") < summary.index("## Outcome")
        self._treatment_went_through_hpatch_and_ctp2(report, summary)
        assert (run_dir / "log.jsonl").is_file()
        services = (run_dir / "reps" / "1" / "services.txt").read_text().split()
        assert [
            "control-agent",
            "control-router",
            "hpatch-agent",
            "hpatch-router",
            "provider",
            "sentinel",
        ] == services
        assert 0o700 == run_dir.stat().st_mode & 0o777
        assert [] == leftovers(run_dir)
        starts = python_starts(venv)
        assert len(starts) <= 8 + 3 * 2, starts
        assert 2 == starts.count("topology proofs") + starts.count("topology verify"), starts

    @staticmethod
    def _treatment_went_through_hpatch_and_ctp2(report: dict, summary: str) -> None:
        """Each treatment attempt: an Hpatch success, a rejection (context mismatch) with
        its diagnostic and correction, a smaller edit payload from the model, and CTP/2
        request and output_text savings, all from validated captures and in summary.md
        with their signs."""
        for key in ("1-hpatch", "2-hpatch"):
            hpatch = report["hpatch"]["attempts"][key]
            assert (1, 1, 1, 1, 0) == (
                hpatch["successes"],
                hpatch["rejections"],
                hpatch["corrections"],
                hpatch["diagnostics"],
                hpatch["unmatched"],
            ), hpatch
            assert [{"cause": "context_mismatch", "count": 1}] == hpatch["rejection_causes"]
            assert hpatch["edit_payload"]["savings_bytes"] > 0
            usage = report["usage"]["attempts"][key]
            assert usage["request_savings_bytes"] > 0
            assert usage["output_text_savings_bytes"] > 0
            assert (
                0
                == report["usage"]["attempts"][key.replace("hpatch", "control")][
                    "request_savings_bytes"
                ]
            )
        assert "custom_tool_call:hpatch x2, custom_tool_call:hpatch_recover x1" in summary
        assert "custom_tool_call:apply_patch x3" in summary
        assert "| context_mismatch x1 | 0 over 0 signatures |" in summary
        assert "No request reached hpatch" not in summary
        savings = next(
            line for line in summary.splitlines() if line.startswith("| client - provider request")
        )
        assert "| +" in savings


class TestOneArmModes:
    def test_hpatch_diagnostic_from_inside_benchmarks(self, runs_dir: Path) -> None:
        """`cd benchmarks && MODE=hpatch-diagnostic ./bench.sh` with
        DIAGNOSTIC_MODEL_PROTOCOL=ctp2: one treatment attempt, no control scheduled or
        imported, its capture bound to Hpatch/CTP2, and a summary that says no control
        arm ran and shows no control value or delta."""
        result, run_dir = bench_inside(
            runs_dir, MODE="hpatch-diagnostic", DIAGNOSTIC_MODEL_PROTOCOL="ctp2"
        )
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        (attempt,) = results(run_dir)
        assert ("hpatch", True) == (attempt["arm"], attempt["passed"])
        services = (run_dir / "reps" / "1" / "services.txt").read_text().split()
        assert ["hpatch-agent", "hpatch-router", "provider", "sentinel"] == services
        report = json.loads((run_dir / "report.json").read_text())
        assert report["captures"]["1-hpatch"]["valid"]
        (router,) = report["provenance"]["routers"]
        assert ("hpatch", "hpatch", "ctp2") == (router["arm"], router["mode"], router["protocol"])
        assert ["hpatch"] == sorted(report["usage"]["arms"])
        assert report["usage"]["deltas"] is None
        assert report["hpatch"]["attempts"]["1-hpatch"]["corrections"] == 1
        summary = (run_dir / "summary.md").read_text()
        assert "No control arm ran in this mode" in summary
        assert "| control |" not in summary
        # The cache-prefix table (spec 002): Codex's own history keeps its prefix, while
        # CTP/2's elision of older outputs changes the provider's; statuses only.
        rows = report["cache_prefix"]["1-hpatch"]
        assert "first" == rows[0]["client"] == rows[0]["provider"]
        assert {"stable"} == {row["client"] for row in rows[1:]}
        assert any("provider:input_prefix" in row["changed"] for row in rows), rows
        assert "## Cache prefix" in summary
        assert "| 2 |" in summary.split("## Cache prefix")[1]
        # No identity of the capture reaches the summary.
        records = (run_dir / "routers/1-hpatch/capture/records.jsonl").read_text()
        threads = {
            json.loads(line)["thread"]["thread_id"]
            for line in records.splitlines()
            if json.loads(line)["kind"] == "client"
        }
        assert threads and not any(thread in summary for thread in threads)
        # Exact evidence off (the default): nothing of it allocated, written or analysed.
        assert not (run_dir / "routers/1-hpatch/capture/exact-evidence").exists()
        assert not (run_dir / "attempts/1-hpatch/hpatch-exact-evidence.jsonl").exists()
        assert not (run_dir / "exact-evidence.json").exists()
        assert report["exact_evidence"] is None

    def test_the_diagnostic_protocol_is_refused_elsewhere(self, runs_dir: Path) -> None:
        result = run_bench(runs_dir, "paired", DIAGNOSTIC_MODEL_PROTOCOL="ctp2")
        assert 0 != result.returncode
        assert "DIAGNOSTIC_MODEL_PROTOCOL does not apply to paired" in result.stderr


class TestScriptedFailures:
    def _failed_control(
        self, runs_dir: Path, scenario: str, **extra: str
    ) -> tuple[Path, dict[str, object]]:
        result, run_dir = bench(
            "control-only", runs_dir, HPBENCH_REPLAY_DIR=str(SCENARIOS / scenario), **extra
        )
        assert 0 != result.returncode, result.stderr[-3000:]
        assert [] == leftovers(run_dir)
        # control-only runs no treatment router or agent (spec 002: "without a treatment
        # router"): the topology has only what the mode needs.
        services = (run_dir / "reps" / "1" / "services.txt").read_text().split()
        assert ["control-agent", "control-router", "provider", "sentinel"] == services
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


@contextlib.contextmanager
def router_image(name: str, dockerfile: str) -> Iterator[str]:
    """``hpbench-e2e/NAME:<tag>`` built from ``dockerfile`` (FROM this tree's reference
    router image), removed on leaving."""
    tag = os.environ.get("HPBENCH_IMAGE_TAG", "local")
    image = f"hpbench-e2e/{name}:{tag}"
    built = subprocess.run(
        ["docker", "build", "--quiet", "--tag", image, "-"],
        input=dockerfile.format(tag=tag),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert 0 == built.returncode, built.stderr
    try:
        yield image
    finally:
        subprocess.run(
            ["docker", "image", "rm", "--force", image], capture_output=True, check=False
        )


# A router image of another make: its own entrypoint (a shell wrapper) leaves a mark in
# the capture directory it was given, then hands the contract's flags to a router.
# A router image of another make: its own entrypoint and identity, and no bash, so
# hpbench must never run anything inside it (readiness, metrics and listener counts come
# from outside).
OTHER_ROUTER_DOCKERFILE = """\
FROM hpbench-router:{tag}
USER root
RUN printf '%s\\n' '#!/bin/sh' \\
      'if [ "$*" = --version ]; then' \\
      '  echo "{{\\"name\\": \\"other-router\\", \\"version\\": \\"e2e-1\\"}}"; exit 0' \\
      'fi' \\
      'printf "other-router %s\\n" "$*" >/capture/entrypoint.txt' \\
      'exec python3 -m hpbench.reference.router "$@"' >/usr/local/bin/other-router \\
    && chmod 0755 /usr/local/bin/other-router \\
    && rm -f /bin/bash /usr/bin/bash
USER hpbench
ENTRYPOINT ["/usr/local/bin/other-router"]
"""


class TestRouterPlugIn:
    def test_a_named_router_image_runs_with_the_contract_flags(self, runs_dir: Path) -> None:
        """HPATCH_ROUTER_IMAGE names an image with another entrypoint: both arms run it (the
        control defaults to the treatment's image, in passthrough mode), each given exactly
        the contract's flags, and the summary names it instead of the reference router."""
        with router_image("other-router", OTHER_ROUTER_DOCKERFILE) as image:
            result, run_dir = bench("paired", runs_dir, HPATCH_ROUTER_IMAGE=image)
        assert 0 == result.returncode, result.stderr[-4000:]
        assert [] == leftovers(run_dir)
        for arm, mode, protocol in (
            ("control", "passthrough", "native"),
            ("hpatch", "hpatch", "ctp2"),
        ):
            mark = (run_dir / "routers" / f"1-{arm}" / "capture" / "entrypoint.txt").read_text()
            assert mark.startswith("other-router --listen 0.0.0.0:8080 --capture-output /capture")
            assert (
                f"--mode {mode} --protocol {protocol} --upstream http://provider:8080/{arm}/v1"
                in mark
            )
        summary = (run_dir / "summary.md").read_text()
        assert f"the routers are {image} (control) and {image} (hpatch)" in summary
        # The report names the image by what it said about itself: no stand-in router.
        report = json.loads((run_dir / "report.json").read_text())
        ran = report["provenance"]
        assert [] == ran["missing"]
        assert [("other-router", "e2e-1", None, image)] * 2 == [
            (r["name"], r["version"], r["stand_in"], r["image"]) for r in ran["routers"]
        ]
        assert [("passthrough", "native"), ("hpatch", "ctp2")] == [
            (r["mode"], r["protocol"]) for r in ran["routers"]
        ]
        assert ["provider: scripted provider (test equipment)"] == ran["stand_ins"]
        assert "other-router e2e-1" in summary
        assert f"control router: {image}" in result.stderr
        assert f"hpatch router: {image}" in result.stderr


# A router image that does not say who it is: `--version` prints no JSON.
NAMELESS_ROUTER_DOCKERFILE = """\
FROM hpbench-router:{tag}
USER root
RUN printf '%s\\n' '#!/bin/sh' \\
      'if [ "$*" = --version ]; then echo "router 1.0"; exit 0; fi' \\
      'exec python3 -m hpbench.reference.router "$@"' >/usr/local/bin/nameless \\
    && chmod 0755 /usr/local/bin/nameless
USER hpbench
ENTRYPOINT ["/usr/local/bin/nameless"]
"""


class TestIncompleteProvenance:
    def test_a_router_that_does_not_say_who_it_is_stops_the_run_before_any_model_call(
        self, runs_dir: Path
    ) -> None:
        """Its results would be refused, so the run stops once the images are known:
        no topology comes up, no model is called, and the facts stay in provenance/."""
        with router_image("nameless-router", NAMELESS_ROUTER_DOCKERFILE) as image:
            result, run_dir = bench("paired", runs_dir, HPATCH_ROUTER_IMAGE=image)
        assert 1 == result.returncode
        for arm in ("control", "hpatch"):
            line = f"provenance incomplete: {arm} router identity: --version did not print JSON"
            assert line in result.stderr
        assert "no model was called" in result.stderr
        assert not (run_dir / "compose-projects").exists()
        assert not (run_dir / "attempts").exists()
        assert "router 1.0\n" == (run_dir / "provenance" / "hpatch-router.identity").read_text()
        observed = json.loads((run_dir / "run.json").read_text())["observed"]
        assert 2 == len(observed["missing"])


class TestLoopGate:
    """The no-edit-loops gate as the bench flow runs it (spec 002): a bare worktree
    `git diff` between two completed changes is a structural loop that fails the run after
    the report, unless BENCHMARK_ENFORCE_NO_EDIT_LOOPS=false."""

    SCENARIO = str(SCENARIOS / "edit-loop")
    REASON = (
        "1 workspace-wide git diff loop(s) between completed changes "
        "(BENCHMARK_ENFORCE_NO_EDIT_LOOPS)"
    )

    def test_a_loop_fails_a_passing_attempt(self, runs_dir: Path) -> None:
        result, run_dir = bench("control-only", runs_dir, HPBENCH_REPLAY_DIR=self.SCENARIO)
        assert 0 != result.returncode, result.stderr[-3000:]
        assert [] == leftovers(run_dir)
        (attempt,) = results(run_dir)
        assert attempt["passed"], attempt
        report = json.loads((run_dir / "report.json").read_text())
        commands = report["commands"]["control"]
        assert (0, 1) == (commands["same_path_loops"], commands["workspace_diff_loops"])
        assert [self.REASON] == report["outcome"]["reasons"]
        assert f"- {self.REASON}" in (run_dir / "summary.md").read_text()

    def test_with_the_gate_off_the_loop_is_reported_only(self, runs_dir: Path) -> None:
        result, run_dir = bench(
            "control-only",
            runs_dir,
            HPBENCH_REPLAY_DIR=self.SCENARIO,
            BENCHMARK_ENFORCE_NO_EDIT_LOOPS="false",
        )
        assert 0 == result.returncode, result.stderr[-3000:]
        report = json.loads((run_dir / "report.json").read_text())
        assert 1 == report["commands"]["control"]["workspace_diff_loops"]
        assert "1 workspace-wide git diff loop(s)" in (run_dir / "summary.md").read_text()


DEMO_ANSWER = (
    "Added Store.RangeStream with a pinned revision, an initial batch of "
    "RangeStreamInitialBatch keys, later batches filled toward MaxRequestBytes, and "
    "Count/More on the final response. go vet and go test pass."
)


class TestExactFinalResponse:
    """A task that requires an exact final response (spec 002), through the whole flow:
    the demo's control ends with DEMO_ANSWER, then nothing but the turn's end."""

    def _run(self, runs_dir: Path, tmp_path: Path, exact: str) -> tuple[Path, dict[str, Any]]:
        tasks = task_with(tmp_path, f"\n[final_response]\nexact = {json.dumps(exact)}\n")
        result, run_dir = bench("control-only", runs_dir, HPBENCH_TASKS_DIR=str(tasks))
        assert [] == leftovers(run_dir)
        (attempt,) = results(run_dir)
        report = json.loads((run_dir / "report.json").read_text())
        return run_dir, {"returncode": result.returncode, "attempt": attempt, "report": report}

    def test_the_exact_response_passes(self, runs_dir: Path, tmp_path: Path) -> None:
        run_dir, ran = self._run(runs_dir, tmp_path, DEMO_ANSWER)
        assert 0 == ran["returncode"]
        assert ran["attempt"]["final_response"]["matched"] is True
        summary = (run_dir / "summary.md").read_text()
        assert "- control: 1 of 1 attempt(s) gave it." in summary

    def test_another_response_fails_the_attempt(self, runs_dir: Path, tmp_path: Path) -> None:
        """The hidden tests pass, but the task's required response was not given: the
        attempt fails as final-response, and the summary quotes neither text."""
        run_dir, ran = self._run(runs_dir, tmp_path, "RangeStream is done.")
        assert 0 != ran["returncode"]
        attempt = ran["attempt"]
        assert (False, "final-response", True) == (
            attempt["passed"],
            attempt["failure_class"],
            attempt["correctness"],
        )
        summary = (run_dir / "summary.md").read_text()
        assert "- control: 0 of 1 attempt(s) gave it." in summary
        assert "RangeStream is done." not in summary
        assert DEMO_ANSWER not in summary


class TestCommentaryCoverage:
    """A task's commentary-coverage profile through the whole flow (spec 002): checked in
    the attempt's Codex JSONL, kept in its own artifact, failing the attempt apart from the
    hidden grader when the evidence is absent."""

    PROFILE = (
        '\n[[commentary.profiles]]\nid = "operation"\nversion = 1\nmodes = ["control-only"]\n'
        'arms = ["control"]\nitem_types = ["command_execution", "file_change"]\n'
        "messages = [{{ pattern = {pattern} }}]\n"
    )

    def _run(self, runs_dir: Path, tmp_path: Path, pattern: str) -> tuple[Path, int]:
        tasks = task_with(tmp_path, self.PROFILE.format(pattern=json.dumps(pattern)))
        result, run_dir = bench("control-only", runs_dir, HPBENCH_TASKS_DIR=str(tasks))
        assert [] == leftovers(run_dir)
        return run_dir, result.returncode

    def test_a_met_profile(self, runs_dir: Path, tmp_path: Path) -> None:
        run_dir, status = self._run(runs_dir, tmp_path, r"^Added Store\.RangeStream")
        assert 0 == status
        (attempt,) = results(run_dir)
        assert attempt["commentary"]["covered"] is True
        artifact = json.loads((run_dir / "attempts/1-control/commentary-coverage.json").read_text())
        assert artifact == attempt["commentary"]
        summary = (run_dir / "summary.md").read_text()
        assert "- control: 1 of 1 attempt(s) covered (operation@1)." in summary

    def test_an_absent_message_fails_the_attempt(self, runs_dir: Path, tmp_path: Path) -> None:
        run_dir, status = self._run(runs_dir, tmp_path, r"^Plan:")
        assert 0 != status
        (attempt,) = results(run_dir)
        assert ("commentary-coverage", True) == (attempt["failure_class"], attempt["correctness"])
        summary = (run_dir / "summary.md").read_text()
        assert "- control: 0 of 1 attempt(s) covered (operation@1)." in summary
