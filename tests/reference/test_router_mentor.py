"""Mentor Handoff when the consultation fails: the main request goes on, and the failed
child is captured and proven like any other (no Codex, loopback only)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hpbench.capture import validate_capture
from hpbench.capture.children import ModelExpectation, proofs_path
from hpbench.reference.harness import free_port, read_jsonl, running_router

from .test_router import body, post, user

MENTOR = "gpt-6-mentor"


def _closed_metrics(router: Any) -> dict[str, Any]:
    """The snapshot once every exchange is closed (the exchange record follows the
    client's last byte)."""
    deadline = time.monotonic() + 10
    while True:
        metrics: dict[str, Any] = router.get_json("/api/metrics")
        capture = metrics["capture"]
        if capture["exchange_records"] == capture["client_records"] or time.monotonic() > deadline:
            return metrics
        time.sleep(0.02)


def test_an_unreachable_upstream_fails_the_consultation_visibly(tmp_path: Path) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}/v1"
    with running_router(
        unreachable,
        tmp_path / "capture",
        mode="hpatch",
        protocol="ctp2",
        log=tmp_path / "router.log",
        extra=("--mentor", MENTOR, "--upstream-retries", "0"),
    ) as router:
        answer = post(int(router.url.rsplit(":", 1)[1]), body([user()]))
        metrics = _closed_metrics(router)
    assert 502 == answer.status
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    records = read_jsonl(tmp_path / "capture" / "records.jsonl")
    child = [r for r in records if r["kind"] == "client" and r["thread"]["role"] == "child"]
    assert [(MENTOR, "mentor")] == [(r["requested_model"], r["thread"]["subagent"]) for r in child]
    outcomes = [(r["request_model"], r["outcome"]) for r in records if r["kind"] == "provider"]
    assert [(MENTOR, "connect_error"), ("gpt-5.5", "connect_error")] == outcomes
    assert 1 == len(read_jsonl(proofs_path(tmp_path / "capture")))
    report = validate_capture(
        tmp_path / "capture",
        tmp_path / "metrics.json",
        arm="mentor",
        expect_protocol="ctp2",
        models=ModelExpectation("gpt-5.5", frozenset({"gpt-5.5"}), MENTOR),
    )
    assert report.ok, [str(f) for f in report.findings]


def test_mentor_off_consults_nobody(tmp_path: Path) -> None:
    """The control's setting (and every mode's today): no child, no proof file."""
    with running_router(
        f"http://127.0.0.1:{free_port()}/v1",
        tmp_path / "capture",
        mode="hpatch",
        protocol="native",
        log=tmp_path / "router.log",
        extra=("--mentor", "off", "--upstream-retries", "0"),
    ) as router:
        post(int(router.url.rsplit(":", 1)[1]), body([user()]))
        metrics = _closed_metrics(router)
    assert metrics["router"]["mentor"] is False
    assert ["root"] == [t["role"] for t in metrics["threads"]]
    assert not proofs_path(tmp_path / "capture").exists()
