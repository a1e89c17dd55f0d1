"""The real Codex CLI through the reference router in Hpatch and CTP/2 mode (loopback).

One script drives every routed path (an edit that applies, one rejected and then
corrected, one that cannot be translated) and an answer quoting an earlier result by
CTP/2 reference; the scripted provider itself refuses to go on unless each answer came
back as the router must render it (``expect_applied``). The capture must validate and
say exactly what happened, with real, signed savings.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hpbench.capture import codes, validate_capture
from hpbench.capture.children import ModelExpectation, proofs_path
from hpbench.reference._scripted import MENTOR_ADVICE
from hpbench.reference.harness import read_jsonl
from hpbench.rundir import Arm

from .test_codex import MODEL, arena

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


MENTOR_MODEL = "gpt-6-mentor"


@pytest.fixture(scope="module")
def mentored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One exec through a router with ``--mentor gpt-6-mentor`` (one turn: one consult)."""
    tmp_path = tmp_path_factory.mktemp("mentor")
    replay_dir = Path(__file__).parents[1] / "data" / "replay"
    with arena(
        tmp_path,
        replay_dir / "edit-and-check.json",
        Arm.HPATCH,
        router_extra=("--mentor", MENTOR_MODEL),
    ) as bench:
        run = bench.run("Greet the world in hello.txt.")
        codex = run.save(tmp_path / "codex.jsonl")
        snapshot = tmp_path / "metrics.json"
        snapshot.write_text(json.dumps(bench.metrics()))
        return {
            "run": run,
            "codex": codex,
            "snapshot": snapshot,
            "metrics": bench.metrics(),
            "provider": bench.provider_records(),
            "capture": bench.capture,
            "workspace": bench.workspace,
        }


def _validate(mentored: dict[str, Any], models: ModelExpectation) -> Any:
    return validate_capture(
        mentored["capture"],
        mentored["snapshot"],
        arm="mentor",
        expect_protocol="ctp2",
        codex_jsonl=[mentored["codex"]],
        models=models,
    )


WITH_MENTOR = ModelExpectation(parent=MODEL, child=frozenset({MODEL}), mentor=MENTOR_MODEL)


class TestMentorHandoff:
    def test_the_turn_still_finishes(self, mentored):
        run = mentored["run"]
        assert 0 == run.returncode, run.stderr[-2000:]
        assert "hello, world\n" == (mentored["workspace"] / "hello.txt").read_text()

    def test_one_child_thread_with_its_proof(self, mentored):
        metrics = mentored["metrics"]
        assert metrics["router"]["mentor"] is True
        roles = sorted((t["role"], t["logical_requests"]) for t in metrics["threads"])
        assert [("child", 1), ("root", 4)] == roles
        (proof,) = read_jsonl(proofs_path(mentored["capture"]))
        (child,) = [t for t in metrics["threads"] if t["role"] == "child"]
        assert (child["thread_id"], child["parent_thread_id"], MENTOR_MODEL, "mentor") == (
            proof["thread_id"],
            proof["parent_thread_id"],
            proof["model"],
            proof["kind"],
        )
        models = {(m["role"], m["request_model"]) for m in metrics["models"]}
        assert {("root", MODEL), ("child", MENTOR_MODEL)} == models

    def test_the_advice_went_to_the_main_model(self, mentored):
        """The provider answered the consultation (not from the script), and the first
        main request carried the handoff as one more developer message."""
        provider = mentored["provider"]
        mentor = [r for r in provider if r.get("mentor")]
        main = [r for r in provider if not r.get("mentor")]
        assert 1 == len(mentor)
        assert mentor[0]["seq"] < main[0]["seq"]
        first, second = (r["request"]["input_types"] for r in main[:2])
        assert first["message:developer"] == second["message:developer"] + 1
        assert MENTOR_ADVICE.startswith("Mentor (scripted)")

    def test_the_capture_validates_with_the_mentor_configuration(self, mentored):
        report = _validate(mentored, WITH_MENTOR)
        assert report.ok, [str(f) for f in report.findings]

    def test_a_mentor_model_the_configuration_does_not_name_fails(self, mentored):
        """Self-consistent evidence of a mentor the run did not configure is refused."""
        report = _validate(mentored, ModelExpectation(parent=MODEL, child=frozenset({MODEL})))
        assert codes.MODELS_CHILD in report.codes()

    def test_a_wrong_parent_model_fails(self, mentored):
        report = _validate(
            mentored, ModelExpectation("gpt-6-astra", frozenset({MODEL}), MENTOR_MODEL)
        )
        assert codes.MODELS_PARENT in report.codes()

    def test_an_unproved_child_fails(self, mentored, tmp_path):
        """Without the router's proof the mentor child is an unproved thread."""
        capture = tmp_path / "capture"
        shutil.copytree(mentored["capture"], capture)
        proofs_path(capture).unlink()
        report = _validate({**mentored, "capture": capture}, WITH_MENTOR)
        assert codes.MODELS_UNPROVED in report.codes()
        assert not report.ok
