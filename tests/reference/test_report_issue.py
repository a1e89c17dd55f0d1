"""The reference router's issue reporting (``--report-issue HOOK``, spec 004): the tool it
offers, the calls it keeps from Codex, the hook it runs per completed report, and nothing
of it when off."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpbench.capture import Protocol, RouterMode
from hpbench.issuereports import model as m
from hpbench.issuereports.collect import read_reports
from hpbench.issuereports.run import report_calls
from hpbench.reference._issues import is_report_call, report_of, tool_definition
from hpbench.reference._render import render_step
from hpbench.reference._transform import DROP, Transform
from hpbench.reference.harness import read_jsonl, running_provider, running_router
from hpbench.reference.script import parse_script

from .test_router import body, post, user

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "contrib" / "diagnose-hook" / "hpbench-diagnose-hook"
REPORT = {"title": "hpatch rejected a context line", "markdown": "The diagnostic named *it*."}
SCRIPT = {
    "schema_version": 1,
    "name": "reports",
    "steps": [
        {
            "output": [
                {"type": "exec_command", "cmd": "go test ./..."},
                {"type": "report_issue", **REPORT},
            ]
        },
        {"output": [{"type": "message", "text": "Done."}]},
    ],
}


def _call(arguments: str, item_id: str = "fc_0_1") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": "call_0_1",
        "name": m.REPORT_TOOL,
        "arguments": arguments,
        "status": "completed",
    }


def _tools(data: bytes) -> list[str]:
    return [tool["name"] for tool in json.loads(data)["tools"]]


class TestTransform:
    def test_the_tool_is_offered_only_by_an_hpatch_router_with_reporting_on(self) -> None:
        request = json.dumps({"model": "m", "input": [], "tools": []}).encode()
        on = Transform(RouterMode.HPATCH, Protocol.NATIVE, report_issue=True)
        off = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        passthrough = Transform(RouterMode.PASSTHROUGH, Protocol.NATIVE, report_issue=True)
        assert m.REPORT_TOOL in _tools(on.prepare(request, "t").upstream_body)
        assert m.REPORT_TOOL not in _tools(off.prepare(request, "t").upstream_body)
        assert not passthrough.active
        # Offered once, even when the request already names it.
        twice = on.prepare(on.prepare(request, "t").upstream_body, "t").upstream_body
        assert 1 == _tools(twice).count(m.REPORT_TOOL)

    def test_a_report_call_never_reaches_the_client_and_is_kept_once_done(self) -> None:
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE, report_issue=True)
        routing = transform.prepare(b'{"input": []}', "t")
        call = _call(json.dumps(REPORT))
        added = {"type": "response.output_item.added", "output_index": 1, "item": call}
        delta = {"type": "response.function_call_arguments.delta", "item_id": "fc_0_1"}
        done = {"type": "response.output_item.done", "output_index": 1, "item": call}
        assert [DROP, DROP, DROP] == [transform.event(e, routing) for e in (added, delta, done)]
        assert [json.dumps(REPORT, separators=(",", ":")).encode()] == routing.reports
        other = {"type": "function_call", "id": "fc_0_0", "name": "exec_command"}
        terminal = {
            "type": "response.completed",
            "response": {"output": [other, call]},
        }
        assert {**terminal, "response": {"output": [other]}} == transform.event(terminal, routing)
        # Another call's argument events still reach the client.
        other_delta = {"type": "response.function_call_arguments.delta", "item_id": "fc_0_0"}
        assert transform.event(other_delta, routing) is None

    def test_without_reporting_a_report_call_is_relayed_like_any_call(self) -> None:
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        routing = transform.prepare(b'{"input": []}', "t")
        done = {"type": "response.output_item.done", "item": _call(json.dumps(REPORT))}
        assert transform.event(done, routing) is None
        assert [] == routing.reports

    @pytest.mark.parametrize(
        "arguments",
        [
            "not json",
            "[]",
            json.dumps({"title": "t"}),
            json.dumps({**REPORT, "session": "s"}),
            json.dumps({"title": "", "markdown": "m"}),
            json.dumps({"title": "a\nb", "markdown": "m"}),
            json.dumps({"title": 1, "markdown": "m"}),
            json.dumps({"title": "t", "markdown": "x" * m.MAX_REPORT_BYTES}),
            '{"title": "t", "markdown": "\\ud800"}',
        ],
    )
    def test_arguments_that_are_not_a_report_are_no_report(self, arguments: str) -> None:
        assert report_of(_call(arguments)) is None

    def test_only_report_issue_function_calls_are_reports(self) -> None:
        assert is_report_call(_call("{}"))
        assert not is_report_call({**_call("{}"), "name": "exec_command"})
        assert not is_report_call({**_call("{}"), "type": "custom_tool_call"})
        assert tool_definition()["parameters"]["required"] == ["title", "markdown"]


class TestScriptedProvider:
    def test_a_report_is_sent_only_when_the_tool_is_offered(self) -> None:
        step = parse_script(SCRIPT).steps[0]
        assert ["function_call"] == [i["type"] for i in render_step(step, 0)]
        offered = render_step(step, 0, frozenset({m.REPORT_TOOL}))
        assert ["exec_command", m.REPORT_TOOL] == [item["name"] for item in offered]
        assert REPORT == json.loads(offered[1]["arguments"])

    def test_a_report_needs_its_title_and_markdown(self) -> None:
        bad = {**SCRIPT, "steps": [{"output": [{"type": "report_issue", "title": "t"}]}]}
        with pytest.raises(Exception, match="report_issue needs markdown"):
            parse_script(bad)


def _wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def _published(directory: Path) -> bool:
    return directory.is_dir() and any(
        m.REPORT_NAME.fullmatch(path.name) for path in directory.iterdir()
    )


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook: str, *, wait: bool = True
) -> tuple[list[dict[str, Any]], Path, list[dict[str, Any]]]:
    """One exchange through an hpatch router with ``--report-issue hook``: what the client
    got, the reports directory, and the provider's records."""
    script = tmp_path / "reports.json"
    script.write_text(json.dumps(SCRIPT))
    reports = tmp_path / "capture" / "issue-reports"
    monkeypatch.setenv(m.HOOK_DIRECTORY_VARIABLE, str(reports))
    with (
        running_provider({"reports": script}, tmp_path) as provider,
        running_router(
            f"{provider.url}/reports/v1",
            tmp_path / "capture",
            mode="hpatch",
            extra=("--report-issue", hook),
            log=tmp_path / "router.log",
        ) as router,
    ):
        answer = post(router.port, body([user()]))
        assert answer.complete
        if hook != "off" and wait:
            # The hook runs once the client has the whole response: wait for its outcome.
            _wait_for(lambda: _published(reports) or "diagnose hook" in router.log.read_text())
    return answer.items(), reports, read_jsonl(tmp_path / "provider-records.jsonl")


class TestRouter:
    def test_a_completed_report_goes_to_the_hook_and_never_to_codex(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        items, reports, provider = _run(tmp_path, monkeypatch, str(HOOK))
        assert ["exec_command"] == [item["name"] for item in items]
        # Codex's tool, the two Hpatch tools and report_issue; the model called two.
        assert 4 == provider[0]["request"]["tools"]
        assert ["function_call", "function_call"] == provider[0]["response"]["output_types"]
        published, findings = read_reports(reports)
        assert [] == findings
        assert [m.HookReport(**REPORT)] == published
        # The capture still validates: the call was emitted by the model, not delivered.
        capture = tmp_path / "capture"
        records = read_jsonl(capture / "records.jsonl")
        emitted = next(r for r in records if r["kind"] == "provider")["emitted_tools"]
        assert ("function_call", m.REPORT_TOOL) in {(t["item_type"], t["name"]) for t in emitted}
        delivered = next(r for r in records if r["kind"] == "exchange")["delivered_tools"]
        assert all(shape["name"] != m.REPORT_TOOL for shape in delivered)
        # What the run counts as the model's calls: the delivered response's one.
        assert 1 == report_calls(capture)

    def test_off_offers_no_tool_and_the_model_sends_no_report(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        items, reports, provider = _run(tmp_path, monkeypatch, "off")
        assert ["exec_command"] == [item["name"] for item in items]
        assert 3 == provider[0]["request"]["tools"]
        assert ["function_call"] == provider[0]["response"]["output_types"]
        assert not reports.exists()
        assert 0 == report_calls(tmp_path / "capture")

    def test_a_failing_hook_never_changes_routing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        failing = tmp_path / "failing-hook"
        failing.write_text("#!/bin/sh\nexit 3\n")
        failing.chmod(0o755)
        items, reports, _ = _run(tmp_path, monkeypatch, str(failing))
        assert ["exec_command"] == [item["name"] for item in items]
        assert not reports.exists()
        assert "diagnose hook failed" in (tmp_path / "router.log").read_text()

    def test_a_router_stopped_at_once_still_publishes_the_report(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """SIGTERM right after Codex has the response: the hook run under way finishes
        before the router exits, so a report Codex's response already went past is kept."""
        slow = tmp_path / "slow-hook"
        slow.write_text(f"#!/bin/sh\nsleep 1\nexec {HOOK}\n")
        slow.chmod(0o755)
        _, reports, _ = _run(tmp_path, monkeypatch, str(slow), wait=False)
        published, findings = read_reports(reports)
        assert ([m.HookReport(**REPORT)], []) == (published, findings)
        assert "waiting for the diagnose hook" in (tmp_path / "router.log").read_text()

    @pytest.mark.parametrize(
        ("mode", "value"), [("passthrough", "/etc/hpbench/diagnose-hook"), ("hpatch", "hook")]
    )
    def test_bad_flags_exit_2(self, tmp_path: Path, mode: str, value: str) -> None:
        """A passthrough router offers no report_issue; a hook is an absolute path."""
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "hpbench.reference.router",
                "--listen",
                "127.0.0.1:0",
                "--capture-output",
                str(tmp_path / "capture"),
                "--mode",
                mode,
                "--protocol",
                "native",
                "--upstream",
                "http://127.0.0.1:9/v1",
                "--report-issue",
                value,
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert 2 == result.returncode
        assert "report-issue" in result.stderr


def test_calls_in_a_capture_that_cannot_be_read_are_unknown(tmp_path: Path) -> None:
    assert report_calls(tmp_path / "absent") is None
    (tmp_path / "capture").mkdir()
    (tmp_path / "capture" / "records.jsonl").write_text('{"kind": "exchange"}\n')
    assert report_calls(tmp_path / "capture") is None
