"""The real Codex CLI through the reference router to the scripted provider, on loopback.

Each test writes the arm's config with :mod:`hpbench.codexconfig` (tight retry
limits, unbounded connection retries off), so nothing can wait for a network.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from hpbench._jsonio import canonical_json
from hpbench.capture.validator import CaptureReport, validate_capture
from hpbench.codexconfig import CodexConfig, write_config
from hpbench.reference.harness import (
    CodexRun,
    Running,
    codex_exec,
    read_jsonl,
    running_provider,
    running_router,
)
from hpbench.rundir import Arm

pytestmark = pytest.mark.codex

MODEL = "gpt-5.5"
ARMS = {
    Arm.CONTROL: ("passthrough", "native"),
    Arm.HPATCH: ("hpatch", "ctp2"),
}


@attrs.frozen
class Arena:
    provider: Running
    router: Running
    capture: Path
    codex_home: Path
    workspace: Path

    def provider_records(self) -> list[dict[str, Any]]:
        value: list[dict[str, Any]] = self.provider.get_json("/requests")
        return value

    def metrics(self) -> dict[str, Any]:
        value: dict[str, Any] = self.router.get_json("/api/metrics")
        return value

    def run(self, prompt: str, *, resume: str | None = None) -> CodexRun:
        return codex_exec(self.codex_home, self.workspace, prompt, resume=resume, timeout=90)

    def validate(self, arm: Arm, codex: list[Path]) -> CaptureReport:
        """``hpbench capture validate`` on this router's capture and live snapshot."""
        snapshot = self.capture.parent / f"{arm.value}-metrics.json"
        snapshot.write_text(canonical_json(self.metrics()))
        _, protocol = ARMS[arm]
        return validate_capture(
            self.capture,
            snapshot,
            arm=arm.value,
            expect_protocol=protocol if arm is Arm.HPATCH else None,
            codex_jsonl=codex,
        )


@contextlib.contextmanager
def arena(
    tmp_path: Path,
    script: Path,
    arm: Arm,
    *,
    request_retries: int = 0,
    stream_retries: int = 0,
    idle_ms: int = 10_000,
    model: str = MODEL,
    router_extra: tuple[str, ...] = (),
) -> Iterator[Arena]:
    mode, protocol = ARMS[arm]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello\n")
    with running_provider({arm.value: script}, tmp_path) as provider:
        capture = tmp_path / "capture"
        with running_router(
            f"{provider.url}/{arm.value}/v1",
            capture,
            mode=mode,
            protocol=protocol,
            log=tmp_path / "router.log",
            extra=router_extra,
        ) as router:
            codex_home = tmp_path / "codex-home"
            config = CodexConfig(
                arm=arm,
                router_url=f"{router.url}/v1",
                model=model,
                request_max_retries=request_retries,
                stream_max_retries=stream_retries,
                stream_idle_timeout_ms=idle_ms,
            )
            write_config(config, codex_home / "config.toml")
            yield Arena(provider, router, capture, codex_home, workspace)


def usage_of(thread: dict[str, Any]) -> dict[str, Any]:
    """A capture thread's delivered usage in the names of Codex's turn.completed."""
    usage = thread["delivered_usage"]
    return {
        "input_tokens": usage["input_tokens"],
        "cached_input_tokens": usage["cached_input_tokens"],
        "cache_write_input_tokens": usage["cache_write_input_tokens"],
        "output_tokens": usage["output_tokens"],
        "reasoning_output_tokens": usage["reasoning_tokens"],
    }


class TestOneExecPerArm:
    @pytest.mark.parametrize(
        ("arm", "model"),
        [
            (Arm.CONTROL, "gpt-6-astra"),
            (Arm.HPATCH, "gpt-6-astra"),
            (Arm.CONTROL, "gpt-5.5"),
        ],
        ids=["control-astra", "hpatch-astra", "control-gpt-5.5"],
    )
    def test_router_captures_the_exec(self, tmp_path: Path, replay_dir: Path, arm: Arm, model: str):
        """A short codex exec edits through the router; the router captured every request.

        gpt-6-astra (the default preset, code mode) and gpt-5.5 (top-level tools) send
        differently shaped requests; both are answered from the same script.
        """
        script = replay_dir / "edit-and-check.json"
        with arena(tmp_path, script, arm, model=model) as bench:
            run = bench.run("Greet the world in hello.txt.")
            metrics = bench.metrics()
            provider = bench.provider_records()
            report = bench.validate(arm, [run.save(tmp_path / "codex.jsonl")])
        assert report.ok, [str(f) for f in report.findings]
        assert report.label is not None
        assert 0 == run.returncode, run.stderr[-2000:]
        assert "hello, world\n" == (bench.workspace / "hello.txt").read_text()
        mode, protocol = ARMS[arm]
        assert {"mode": mode, "protocol": protocol, "mentor": False} == metrics["router"]
        assert 4 == metrics["requests"]["logical_requests"]
        assert 4 == metrics["requests"]["provider_attempts"]
        assert 0 == metrics["capture"]["capture_errors"]
        assert 0 == metrics["capture"]["skipped_requests"]
        (thread,) = metrics["threads"]
        assert run.thread_id == thread["thread_id"]
        assert run.usage == usage_of(thread)
        records = read_jsonl(bench.capture / "records.jsonl")
        assert 12 == len(records)
        assert ["absent", "unchanged", "unchanged", "unchanged"] == [
            r["turn_state"]["status"] for r in provider
        ]
        assert {"bearer"} == {r["headers"]["authorization"] for r in provider}
        assert {model} == {r["request"]["model"] for r in provider}
        delivered = metrics["tools"]["client_delivered"]
        assert {("function_call", "exec_command"), ("custom_tool_call", "apply_patch")} == {
            (shape["item_type"], shape["name"]) for shape in delivered
        }


class TestTurnStateAcrossRetries:
    def test_retries_carry_it_and_a_new_turn_starts_without(self, tmp_path: Path, replay_dir: Path):
        """Codex and router retries resend the turn's value unchanged; resume starts fresh.

        The provider's own records are the evidence: it knows what it issued per turn.
        """
        with arena(
            tmp_path,
            replay_dir / "retry-turn-state.json",
            Arm.CONTROL,
            request_retries=1,
            stream_retries=1,
        ) as bench:
            first = bench.run("Say hello again in hello.txt.")
            assert 0 == first.returncode, first.stderr[-2000:]
            assert first.thread_id is not None
            second = bench.run("Check it once more.", resume=first.thread_id)
            assert 0 == second.returncode, second.stderr[-2000:]
            provider = bench.provider_records()
            metrics = bench.metrics()
            report = bench.validate(Arm.CONTROL, [second.save(tmp_path / "codex.jsonl")])
        assert report.ok, [str(f) for f in report.findings]
        seen = [
            (r["turn"], r["step"], r["attempt"], r["fault"], r["turn_state"]["status"])
            for r in provider
        ]
        turn_one, turn_two = sorted({r["turn"] for r in provider})
        assert [
            (turn_one, 0, 0, None, "absent"),
            (turn_one, 1, 0, "http_500", "unchanged"),
            (turn_one, 1, 1, None, "unchanged"),
            (turn_one, 2, 0, "drop", "unchanged"),
            (turn_one, 2, 1, None, "unchanged"),
            (turn_two, 3, 0, "http_429", "absent"),
            (turn_two, 3, 1, None, "absent"),
            (turn_two, 4, 0, "http_503", "unchanged"),
            (turn_two, 4, 1, None, "unchanged"),
        ] == seen
        assert "unsolicited" not in {r["turn_state"]["status"] for r in provider}
        requests = metrics["requests"]
        assert 8 == requests["logical_requests"]  # Codex sent 8; the router retried one
        assert 9 == requests["provider_attempts"]
        assert second.usage == usage_of(metrics["threads"][0])


class TestStall:
    def test_stalled_stream_is_retried_not_waited_for(self, tmp_path: Path, replay_dir: Path):
        """Codex's idle timeout ends a stall; the router records the disconnect; no hang."""
        started = time.monotonic()
        with arena(
            tmp_path,
            replay_dir / "stall-then-answer.json",
            Arm.CONTROL,
            stream_retries=1,
            idle_ms=2_000,
        ) as bench:
            run = bench.run("Answer.")
            provider = bench.provider_records()
            report = bench.validate(Arm.CONTROL, [run.save(tmp_path / "codex.jsonl")])
            exchanges = [
                r["outcome"]
                for r in read_jsonl(bench.capture / "records.jsonl")
                if r["kind"] == "exchange"
            ]
        assert 0 == run.returncode, run.stderr[-2000:]
        assert time.monotonic() - started < 40
        assert ["stalled", "completed"] == [r["response"]["outcome"] for r in provider]
        assert ["client_disconnected", "completed"] == exchanges
        assert report.ok, [str(f) for f in report.findings]
        assert "Answered after a stall." == run.of_type("item.completed")[-1]["item"]["text"]
