"""The Models section: main, child and mentor traffic per attempt, attempts without usage
counted, and unavailable (never empty or zero) without a valid capture."""

from __future__ import annotations

from pathlib import Path

import attrs

from hpbench.capture.models import Count, ModelTotals, ThreadRole
from hpbench.report import build_report, render_summary
from hpbench.report.models import model_rows

from ..evidence import attempt
from .conftest import always_valid, invalid_for, make_run, snapshot


def _row(role: ThreadRole, model: str, attempts: int, with_usage: int) -> ModelTotals:
    return ModelTotals(
        role=role,
        request_model=model,
        response_model=f"{model}-2026-11-01",
        header_model=None,
        attempts=Count(attempts),
        attempts_with_usage=Count(with_usage),
    )


ROWS = (
    _row(ThreadRole.ROOT, "gpt-6-astra", 5, 4),
    _row(ThreadRole.CHILD, "gpt-6-astra", 1, 1),
    _row(ThreadRole.CHILD, "gpt-6-mentor", 2, 2),
)


def test_child_rows_on_the_mentor_model_are_mentor_traffic() -> None:
    with_models = attrs.evolve(snapshot(800, 300), models=ROWS)
    rows = model_rows(
        ["1-hpatch"], {"1-hpatch": with_models}, main="gpt-6-astra", mentor="gpt-6-mentor"
    )
    assert [("main", 5, 4), ("child", 1, 1), ("mentor", 2, 2)] == [
        (r["traffic"], r["attempts"], r["attempts_with_usage"])
        for r in rows["attempts"]["1-hpatch"]
    ]
    assert {"main": "gpt-6-astra", "child": "gpt-6-astra", "mentor": "gpt-6-mentor"} == rows[
        "configured"
    ]


def _run(tmp_path: Path) -> Path:
    with_models = attrs.evolve(snapshot(800, 300), models=ROWS[:2])
    return make_run(
        tmp_path,
        [attempt("control", 1, 1, True), attempt("hpatch", 1, 2, True)],
        {"1-control": with_models, "1-hpatch": with_models},
    )


def test_the_summary_distinguishes_main_and_child_and_counts_attempts_without_usage(
    tmp_path: Path,
) -> None:
    report = build_report(_run(tmp_path), always_valid)
    summary = render_summary(report)
    assert "## Models" in summary
    assert "mentor none (Mentor Handoff off)" in summary
    assert "| 1-control | main | gpt-6-astra | gpt-6-astra-2026-11-01 | unavailable | 5 | 4 |" in (
        summary
    )
    assert "| 1-hpatch | child | gpt-6-astra | gpt-6-astra-2026-11-01 | unavailable | 1 | 1 |" in (
        summary
    )


def test_without_a_valid_capture_the_models_are_unavailable(tmp_path: Path) -> None:
    report = build_report(_run(tmp_path), invalid_for("hpatch"))
    assert report["models"]["attempts"]["1-hpatch"] is None
    assert "| 1-hpatch | unavailable | unavailable |" in render_summary(report)
