"""The report's cache-prefix table (spec 002): rows from the validator, statuses and
categories only, unavailable where nothing was observed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hpbench.capture.prefix import PrefixRow
from hpbench.capture.validator import load_snapshot
from hpbench.report import build_report, render_summary
from hpbench.report.verdict import CaptureVerdict

from ..evidence import attempt
from .conftest import invalid_for, make_run, snapshot

ROWS = (
    PrefixRow(1, 1000, None, "first", "first", (), "not sent"),
    PrefixRow(2, 1200, 800, "stable", "changed", ("provider:input_prefix",), "forwarded"),
    PrefixRow(3, None, None, "stable", "unavailable", (), "unavailable"),
)


def observed(router_dir: Path, _: str, __: Sequence[Path]) -> CaptureVerdict:
    return CaptureVerdict((), load_snapshot(router_dir / "metrics.json"), ROWS)


def test_the_diagnostic_run_shows_every_request(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        [attempt("hpatch", 1, 1, True)],
        {"1-hpatch": snapshot(900, 100)},
        arms=("hpatch",),
    )
    report = build_report(run, observed)
    assert "hpatch-diagnostic" == report["run"]["mode"]
    rows = report["cache_prefix"]["1-hpatch"]
    assert ["first", "changed", "unavailable"] == [row["provider"] for row in rows]
    summary = render_summary(report)
    assert "## Cache prefix" in summary
    assert "| 2 | 1,200 | 800 | stable | changed | provider:input_prefix | forwarded |" in summary
    # Unknown stays unknown: never zero, never stable.
    assert "| 3 | unavailable | unavailable | stable | unavailable | - | unavailable |" in summary


def test_other_modes_count_per_attempt(tmp_path: Path) -> None:
    attempts = [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)]
    snapshots = {"1-control": snapshot(1000, 100), "1-hpatch": snapshot(900, 100)}
    summary = render_summary(build_report(make_run(tmp_path, attempts, snapshots), observed))
    assert (
        "- 1-hpatch: client 1 first, 2 stable; provider 1 first, 1 changed, 1 unavailable; "
        "changed provider:input_prefix x1"
    ) in summary
    assert "| request |" not in summary


def test_an_invalid_capture_has_no_rows(tmp_path: Path) -> None:
    attempts = [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)]
    snapshots = {"1-control": snapshot(1000, 100), "1-hpatch": snapshot(900, 100)}
    report = build_report(make_run(tmp_path, attempts, snapshots), invalid_for("hpatch"))
    assert report["cache_prefix"]["1-hpatch"] is None
    assert "- 1-hpatch: unavailable (no valid capture)" in render_summary(report)
