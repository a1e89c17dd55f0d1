"""Issue reporting end to end offline (spec 004), and the diagnostic run's summary: one line
for each piece of diagnostic evidence, and no identity in any of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hpbench.issuereports.model import REPORT_TOOL

from .conftest import REPO_ROOT, bench, leftovers, results, task_with

pytestmark = [pytest.mark.docker, pytest.mark.e2e, pytest.mark.independent]

SCRIPT = json.loads((REPO_ROOT / "tasks/kv-rangestream/replay/hpatch.json").read_text())
# The demo treatment's one report (after its rejected-and-recovered chain) and its answer.
(REPORT,) = [
    item for step in SCRIPT["steps"] for item in step["output"] if item["type"] == REPORT_TOOL
]
ANSWER = SCRIPT["steps"][-1]["output"][-1]["text"]
RULE = (REPO_ROOT / "contrib/codex/issue-reporting-rule.md").read_text().strip()

# The diagnostic pieces a task can ask for: commentary coverage and an exact final response.
PIECES = (
    '\n[[commentary.profiles]]\nid = "operation"\nversion = 1\nmodes = ["hpatch-diagnostic"]\n'
    'arms = ["hpatch"]\nitem_types = ["command_execution", "file_change"]\n'
    'messages = [{ pattern = "^Added Store\\\\.RangeStream" }]\n'
    f"\n[final_response]\nexact = {json.dumps(ANSWER)}\n"
)


def _report(run_dir: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((run_dir / "report.json").read_text())
    return report


def _emitted(run_dir: Path) -> set[str]:
    records = (run_dir / "routers/1-hpatch/capture/records.jsonl").read_text().splitlines()
    return {
        shape["name"]
        for line in records
        if (record := json.loads(line))["kind"] == "provider"
        for shape in record["emitted_tools"]
    }


def test_a_diagnostic_run_shows_each_piece_and_no_identity(runs_dir: Path, tmp_path: Path) -> None:
    """hpatch-diagnostic with its defaults (issue reporting on) and exact evidence on, on a
    task that requires commentary coverage and an exact final response: the report the
    scripted model made after its recovered chain reaches issue-reports.jsonl exactly,
    never Codex; and summary.md gives each piece's line (issue reports, exact evidence,
    commentary coverage, final response, cache prefix, loop gate) without a title, body,
    payload or identity."""
    tasks = task_with(tmp_path, PIECES)
    result, run_dir = bench(
        "hpatch-diagnostic", runs_dir, HPBENCH_TASKS_DIR=str(tasks), HPATCH_EXACT_EVIDENCE="true"
    )
    assert 0 == result.returncode, result.stderr[-4000:]
    assert [] == leftovers(run_dir)
    (attempt,) = results(run_dir)
    assert attempt["passed"] and attempt["final_response"]["matched"]
    assert attempt["commentary"]["covered"]

    # The report, exactly, and nothing else in its line.
    consolidated = run_dir / "attempts/1-hpatch/issue-reports.jsonl"
    (line,) = consolidated.read_text(encoding="utf-8").splitlines()
    assert {
        "schema": "hpbench.issue-report.v1",
        "title": REPORT["title"],
        "markdown": REPORT["markdown"],
    } == json.loads(line)
    assert 0o600 == consolidated.stat().st_mode & 0o777
    report = _report(run_dir)
    assert (1, 1) == (report["issue_reports"]["collected"], report["issue_reports"]["calls"])
    # The model called it; Codex never saw it (its JSONL has no such call).
    assert REPORT_TOOL in _emitted(run_dir)
    assert REPORT_TOOL not in (run_dir / "attempts/1-hpatch/codex.jsonl").read_text()
    # The treatment was told to report once per recovered chain.
    assert RULE in (run_dir / "instructions/treatment.md").read_text()
    assert RULE not in (run_dir / "instructions/control.md").read_text()
    hashes = json.loads((run_dir / "instructions/hashes.json").read_text())
    assert hashes["issue_reporting_rule_sha256"]

    summary = (run_dir / "summary.md").read_text(encoding="utf-8")
    for piece in (
        "| issue reports (report_issue) | on; 1 collected of 1 report_issue call(s)",
        "| exact evidence | on |",
        "| retained | 3 of 3 routed calls (complete) |",
        "- hpatch: 1 of 1 attempt(s) covered (operation@1).",
        "- hpatch: 1 of 1 attempt(s) gave it.",
        "## Cache prefix",
        "| loop gate | on: a same-path or workspace-wide loop fails the run",
        "hpatch: 0 same-path structural loop(s), 0 workspace-wide git diff loop(s).",
    ):
        assert piece in summary, piece

    # No identity and no evidence text in it: threads and sessions, exact-evidence calls
    # and strings, the report's title and body, the agent's answer.
    captured = [
        json.loads(line)
        for line in (run_dir / "routers/1-hpatch/capture/records.jsonl").read_text().splitlines()
    ]
    identities = {r["thread"]["thread_id"] for r in captured if r["kind"] == "client"}
    identities |= {r["thread"]["root_thread_id"] for r in captured if r["kind"] == "client"}
    exact = [
        json.loads(line)
        for line in (run_dir / "attempts/1-hpatch/hpatch-exact-evidence.jsonl")
        .read_text()
        .splitlines()
    ]
    identities |= {r[key] for r in exact for key in ("call", "chain", "session", "thread")}
    texts = {r[k]["text"] for r in exact for k in ("payload", "report", "diagnostic") if r[k]}
    texts |= {REPORT["title"], REPORT["markdown"], ANSWER}
    assert identities and texts
    assert [] == [value for value in identities | texts if value in summary]


def test_reporting_off_offers_no_tool_and_collects_nothing(runs_dir: Path) -> None:
    """HPATCH_REPORT_ISSUE=false removes the tool: the scripted model, never offered it,
    sends no report; no hook is installed, nothing is collected, the treatment is not told
    to report, and the summary says off."""
    result, run_dir = bench("hpatch-diagnostic", runs_dir, HPATCH_REPORT_ISSUE="false")
    assert 0 == result.returncode, result.stderr[-4000:]
    assert [] == leftovers(run_dir)
    assert REPORT_TOOL not in _emitted(run_dir)
    assert not (run_dir / "routers/1-hpatch/capture/issue-reports").exists()
    assert not (run_dir / "attempts/1-hpatch/issue-reports.jsonl").exists()
    assert not (run_dir / "issue-reports.json").exists()
    assert _report(run_dir)["issue_reports"] is None
    assert RULE not in (run_dir / "instructions/treatment.md").read_text()
    assert "| issue reports (report_issue) | off |" in (run_dir / "summary.md").read_text()
