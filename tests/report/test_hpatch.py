"""The treatment's Hpatch results: routed outcomes and tool shapes per attempt, "no
request reached hpatch" stated instead of a zero gain, and unknown never zero."""

from __future__ import annotations

from pathlib import Path

import attrs

from hpbench.capture import hpatch_telemetry
from hpbench.capture.models import Count, MetricsSnapshot, ToolShape, ToolTotals
from hpbench.report import build_report, render_summary

from ..evidence import attempt
from .conftest import always_valid, invalid_for, make_run, snapshot


def _routed(document: MetricsSnapshot) -> MetricsSnapshot:
    telemetry = hpatch_telemetry(
        successes=2,
        corrections=1,
        diagnostics=1,
        carrier_tokens=40,
        client_payload=(500, 125),
        provider_payload=(620, 155),
        causes={"context_mismatch": 1},
        signatures={"00000000000000aa": 1},
    )
    tools = ToolTotals(
        provider_emitted=(ToolShape("function_call", "hpatch", None, Count(3)),),
        client_delivered=(ToolShape("custom_tool_call", "apply|patch", None, Count(3)),),
    )
    return attrs.evolve(document, hpatch=telemetry, tools=tools)


def _run(tmp_path: Path, treatment: MetricsSnapshot) -> Path:
    return make_run(
        tmp_path,
        [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
        {"1-control": snapshot(1000, 300), "1-hpatch": treatment},
    )


def test_routed_outcomes_and_tool_shapes(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path, _routed(snapshot(800, 350))), always_valid)
    (key,) = report["hpatch"]["attempts"]
    figures = report["hpatch"]["attempts"][key]
    assert "1-hpatch" == key
    assert (2, 1, 1, 0, 1, 40, True) == (
        figures["successes"],
        figures["rejections"],
        figures["corrections"],
        figures["unmatched"],
        figures["diagnostics"],
        figures["carrier_tokens"],
        figures["reached"],
    )
    assert [{"item_type": "function_call", "name": "hpatch", "namespace": None, "count": 3}] == (
        figures["provider_emitted"]
    )
    summary = render_summary(report)
    assert "| 1-hpatch | 2 | 1 | 1 | 0 | 1 | 40 | function_call:hpatch x3 |" in summary
    assert "custom_tool_call:apply\\|patch x3" in summary  # a tool's name cannot break the table
    assert "No request reached hpatch" not in summary
    # The edit payload grew here: the reduction stays negative, never shown as a gain.
    assert {
        "client_bytes": 500,
        "provider_bytes": 620,
        "savings_bytes": -120,
        "client_tokens": 125,
        "provider_tokens": 155,
        "savings_tokens": -30,
    } == figures["edit_payload"]
    assert "| 1-hpatch | 620 | 500 | -120 | -30 | context_mismatch x1 | 0 over 0 signatures |" in (
        summary
    )
    assert "00000000000000aa" not in summary


def test_repeated_rejection_signatures_are_counted(tmp_path: Path) -> None:
    """Three rejections of the same edit and one other: two repeats over one signature."""
    telemetry = hpatch_telemetry(
        corrections=1,
        diagnostics=4,
        causes={"context_mismatch": 3, "missing_file": 1},
        signatures={"00000000000000aa": 3, "00000000000000bb": 1},
    )
    treatment = attrs.evolve(snapshot(800, 350), hpatch=telemetry)
    report = build_report(_run(tmp_path, treatment), always_valid)
    figures = report["hpatch"]["attempts"]["1-hpatch"]
    assert (4, 2, 1) == (
        figures["rejections"],
        figures["repeated_rejections"],
        figures["repeated_signatures"],
    )
    assert [
        {"cause": "context_mismatch", "count": 3},
        {"cause": "missing_file", "count": 1},
    ] == figures["rejection_causes"]
    assert "context_mismatch x3, missing_file x1 | 2 over 1 signatures |" in render_summary(report)


def test_no_request_reached_hpatch_is_said(tmp_path: Path) -> None:
    """All-zero telemetry (the relay-only reference router): stated, not shown as a gain."""
    report = build_report(_run(tmp_path, snapshot(800, 350)), always_valid)
    assert report["hpatch"]["attempts"]["1-hpatch"]["reached"] is False
    summary = render_summary(report)
    assert "No request reached hpatch in 1-hpatch: a zero there is no editing-performance" in (
        " ".join(summary.split())
    )


def test_without_a_valid_capture_the_figures_are_unavailable(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path, _routed(snapshot(800, 350))), invalid_for("hpatch"))
    assert {"1-hpatch": None} == report["hpatch"]["attempts"]
    summary = render_summary(report)
    section = summary.split("## Hpatch")[1].split("##")[0]
    assert "| 1-hpatch | unavailable |" in section
    assert "| 1-hpatch | 0 |" not in section


def test_control_only_has_no_hpatch_section(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        [attempt("control", 1, 1, True)],
        {"1-control": snapshot(1000, 300)},
        arms=("control",),
    )
    report = build_report(run, always_valid)
    assert {} == report["hpatch"]["attempts"]
    assert "## Hpatch" not in render_summary(report)
