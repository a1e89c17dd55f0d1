"""The real Codex CLI through the reference router in Hpatch and CTP/2 mode (loopback).

One script drives every routed path (an edit that applies, one rejected and then
corrected, one that cannot be translated) and an answer quoting an earlier result by
CTP/2 reference; the scripted provider itself refuses to go on unless each answer came
back as the router must render it (``expect_applied``). The capture must validate and
say exactly what happened, with real, signed savings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hpbench.reference.harness import read_jsonl
from hpbench.rundir import Arm

from .test_codex import arena

pytestmark = pytest.mark.codex


def _routed(tmp_path: Path, replay_dir: Path) -> dict[str, Any]:
    with arena(tmp_path, replay_dir / "hpatch-routing.json", Arm.HPATCH) as bench:
        run = bench.run("Add notes and greet the world in hello.txt.")
        return {
            "run": run,
            "metrics": bench.metrics(),
            "provider": bench.provider_records(),
            "workspace": bench.workspace,
            "capture": bench.capture,
            "report": bench.validate(Arm.HPATCH, [run.save(tmp_path / "codex.jsonl")]),
        }


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    replay_dir = Path(__file__).parents[1] / "data" / "replay"
    return _routed(tmp_path_factory.mktemp("routing"), replay_dir)


class TestHpatchRouting:
    def test_codex_finished_and_the_edits_landed(self, routed):
        run = routed["run"]
        assert 0 == run.returncode, run.stderr[-2000:]
        workspace = routed["workspace"]
        assert "hello, world\n" == (workspace / "hello.txt").read_text()
        assert "first line\nsecond line\n" == (workspace / "notes.txt").read_text()
        assert not Path("/tmp/outside.txt").exists()

    def test_the_capture_validates_as_hpatch_ctp2(self, routed):
        report = routed["report"]
        assert report.ok, [str(f) for f in report.findings]
        assert "hpatch (hpatch/ctp2)" == report.label

    def test_every_outcome_is_counted_once(self, routed):
        hpatch = routed["metrics"]["hpatch"]
        assert (1, 1, 1, 1, 1) == (
            hpatch["successes"],
            hpatch["rejections"],
            hpatch["corrections"],
            hpatch["unmatched"],
            hpatch["diagnostics"],
        )
        assert [{"cause": "context_mismatch", "count": 1}] == hpatch["rejection_causes"]
        (signature,) = hpatch["rejection_signatures"]
        assert 1 == signature["count"]

    def test_the_model_emitted_less_than_codex_was_given(self, routed):
        """Semantic edit payload: apply_patch text delivered minus hpatch text emitted."""
        payload = routed["metrics"]["hpatch"]["edit_payload"]
        assert payload["provider_bytes"] > 0
        assert payload["savings_bytes"] == payload["client_bytes"] - payload["provider_bytes"]
        assert payload["savings_bytes"] > 0
        assert routed["metrics"]["hpatch"]["carrier_tokens"] == payload["provider_tokens"]

    def test_tool_shapes_on_each_side(self, routed):
        tools = routed["metrics"]["tools"]
        emitted = {(s["item_type"], s["name"]): s["count"] for s in tools["provider_emitted"]}
        delivered = {(s["item_type"], s["name"]): s["count"] for s in tools["client_delivered"]}
        assert 3 == emitted[("custom_tool_call", "hpatch")]
        assert 1 == emitted[("custom_tool_call", "hpatch_recover")]
        # Three translated calls reach Codex as apply_patch; the untranslatable one as itself.
        assert 3 == delivered[("custom_tool_call", "apply_patch")]
        assert 1 == delivered[("custom_tool_call", "hpatch")]
        assert ("custom_tool_call", "hpatch_recover") not in delivered

    def test_the_provider_saw_its_own_calls_and_the_diagnostic(self, routed):
        """The provider's expectations held: every step after the first was answered
        (a rejection not rendered as the diagnostic would have failed the turn)."""
        steps = [r["step"] for r in routed["provider"]]
        assert list(range(6)) == steps
        assert all(r.get("refused") is None for r in routed["provider"])

    def test_ctp2_savings_are_real_and_signed(self, routed):
        """Request savings are measured, not assumed: the first request pays for the two
        tool definitions (negative, and kept negative); later ones also carry older tool
        outputs as references, so they save more; the answer's reference expands."""
        records = read_jsonl(routed["capture"] / "records.jsonl")
        request = [r["request"] for r in records if r["kind"] == "exchange"]
        assert all(r["savings_bytes"] == r["client_bytes"] - r["provider_bytes"] for r in request)
        assert request[0]["savings_bytes"] < 0
        assert request[-1]["savings_bytes"] - request[0]["savings_bytes"] > 300
        assert (
            sum(r["savings_bytes"] for r in request)
            == (routed["metrics"]["savings"]["request"]["savings_bytes"])
        )
        assert routed["metrics"]["savings"]["output_text"]["savings_bytes"] > 0
        messages = [
            event["item"]["text"]
            for event in routed["run"].of_type("item.completed")
            if event["item"]["type"] == "agent_message"
        ]
        assert "hello, world\nfirst line\nsecond line\n" in messages[-1]
        assert "[[ctp2:" not in messages[-1]


class TestAFailingRouter:
    def test_a_relay_that_does_not_route_is_caught_by_the_provider(self, tmp_path: Path):
        """Through a passthrough router the hpatch call reaches Codex untranslated
        ("unsupported call"), so the script's first expect_applied fails the turn instead
        of the run going on as if an edit had been routed."""
        replay_dir = Path(__file__).parents[1] / "data" / "replay"
        with arena(tmp_path, replay_dir / "hpatch-routing.json", Arm.CONTROL) as bench:
            run = bench.run("Add notes and greet the world in hello.txt.")
            provider = bench.provider_records()
            metrics = bench.metrics()
        assert 0 != run.returncode
        assert "the edit of step 0 of script hpatch-routing came back other" in run.stdout
        assert {"step": 0, "expected": "applied", "got": "other"} == provider[-1]["expectation"]
        assert 0 == metrics["hpatch"]["successes"]
        assert not (bench.workspace / "notes.txt").exists()
