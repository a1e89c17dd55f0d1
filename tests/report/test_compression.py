"""The CTP compression gate: a task that requires compression refuses a treatment attempt
whose matching signed token savings are zero, negative or unknown, keeping the measured
value in summary.md; the control arm is never gated."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hpbench.capture.models import Comparison, Count, MetricsSnapshot
from hpbench.modes import MODES
from hpbench.plan import load_plan, write_run_json
from hpbench.report import build_report, render_summary
from hpbench.report.compression import compression_gate, gated_attempts
from hpbench.rundir import RunLayout

from ..evidence import attempt
from .conftest import always_valid, invalid_for, make_run, snapshot


def _with_savings(
    document: MetricsSnapshot, request: int | None, text: int | None
) -> MetricsSnapshot:
    def comparison(tokens: int | None) -> Comparison:
        if tokens is None:
            return Comparison(Count(100), Count(100), 0, None, None, None)
        return Comparison(
            Count(1000),
            Count(1000 - tokens * 4),
            tokens * 4,
            Count(250),
            Count(250 - tokens),
            tokens,
        )

    savings = attrs.evolve(
        document.savings, request=comparison(request), output_text=comparison(text)
    )
    return attrs.evolve(document, savings=savings)


def _run(tmp_path: Path, required: tuple[str, ...], request: int | None, text: int | None) -> Path:
    run = make_run(
        tmp_path,
        [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
        {
            # The control saves nothing, and is never gated.
            "1-control": _with_savings(snapshot(1000, 300), 0, 0),
            "1-hpatch": _with_savings(snapshot(800, 350), request, text),
        },
    )
    plan = load_plan(run)
    write_run_json(RunLayout(run), attrs.evolve(plan, require_compression=required))
    return run


def test_no_requirement_no_gate(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path, (), -5, -5), always_valid)
    assert {"required": [], "attempts": {}, "failures": []} == report["compression"]
    assert report["outcome"]["ok"]
    assert "## CTP compression" not in render_summary(report)


def test_positive_savings_pass(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path, ("input", "output"), 120, 7), always_valid)
    assert {"1-hpatch": {"input": 120, "output": 7}} == report["compression"]["attempts"]
    assert report["outcome"]["ok"]
    summary = render_summary(report)
    assert "| 1-hpatch | +120 | +7 |" in summary


@pytest.mark.parametrize(
    ("request_tokens", "text_tokens", "failed", "shown"),
    [
        (0, 5, "input compression required, measured +0 tokens", "+0"),
        (-40, 5, "input compression required, measured -40 tokens", "-40"),
        (30, -1, "output compression required, measured -1 tokens", "-1"),
        (None, 5, "input compression required, savings unavailable", "unavailable"),
    ],
)
def test_zero_negative_or_unknown_fails_with_the_measured_value(
    tmp_path: Path, request_tokens: int | None, text_tokens: int, failed: str, shown: str
) -> None:
    report = build_report(
        _run(tmp_path, ("input", "output"), request_tokens, text_tokens), always_valid
    )
    assert not report["outcome"]["ok"]
    (failure,) = report["compression"]["failures"]
    assert failure.startswith(f"1-hpatch: {failed}")
    assert any(
        r.startswith("required CTP compression failed: 1-hpatch")
        for r in report["outcome"]["reasons"]
    )
    summary = render_summary(report)
    assert f"- FAILED: 1-hpatch: {failed}" in summary
    assert shown in summary.split("## CTP compression")[1]


def test_an_invalid_capture_is_no_evidence_of_compression(tmp_path: Path) -> None:
    """Savings from a capture that did not validate are not taken: unavailable, failed."""
    report = build_report(_run(tmp_path, ("input",), 500, 500), invalid_for("hpatch"))
    assert {"1-hpatch": {"input": None}} == report["compression"]["attempts"]
    assert report["compression"]["failures"]


ATTEMPTS = [("1-control", "control"), ("1-hpatch", "hpatch"), ("1-native", "native")]
ATTEMPTS += [("1-ctp", "ctp"), ("1-mentor", "mentor")]


@pytest.mark.parametrize(
    ("mode", "protocol", "gated"),
    [
        ("paired", "ctp2", ["1-hpatch"]),
        ("hpatch-diagnostic", "ctp2", ["1-hpatch"]),
        ("ctp-only", "ctp2", ["1-ctp"]),
        ("mentor-handoff", "native", ["1-mentor"]),
        ("mentor-handoff", "ctp2", [key for key, _ in ATTEMPTS]),
        ("control-only", "native", []),
    ],
)
def test_the_gate_holds_each_mode_to_its_arms(mode: str, protocol: str, gated: list[str]) -> None:
    """ctp-only gates its CTP/2 arm; mentor-handoff on CTP/2 gates both arms (spec 002)."""
    assert gated == gated_attempts(MODES[mode], protocol, ATTEMPTS)


def test_a_mentor_baseline_that_fails_the_requirement_fails_the_gate() -> None:
    """With CTP/2 in mentor-handoff, a baseline arm without savings fails the gate even
    when the treatment meets it; on native, only the treatment is held to it."""
    snapshots = {
        "1-hpatch": _with_savings(snapshot(800, 350), -3, 0),
        "1-mentor": _with_savings(snapshot(800, 350), 5, 0),
    }
    pairs = [("1-hpatch", "hpatch"), ("1-mentor", "mentor")]
    on_ctp2 = compression_gate(
        ["input"], gated_attempts(MODES["mentor-handoff"], "ctp2", pairs), snapshots
    )
    assert [
        "1-hpatch: input compression required, measured -3 tokens (it must be positive)"
    ] == on_ctp2["failures"]
    native = gated_attempts(MODES["mentor-handoff"], "native", pairs)
    assert [] == compression_gate(["input"], native, snapshots)["failures"]
