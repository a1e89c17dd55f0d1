"""Configured models and child proofs: a thread nobody can account for fails validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hpbench.capture import (
    AttemptOutcome,
    CaptureWriter,
    ExchangeOutcome,
    Protocol,
    RouterMode,
    codes,
    validate_capture,
)
from hpbench.capture.children import (
    PROOF_SCHEMA,
    ChildProof,
    ModelExpectation,
    append_proof,
    proofs_path,
)
from hpbench.capture.models import Count, Ident, ThreadRef, ThreadRole
from hpbench.capture.synthetic import write_snapshot
from hpbench.reference._mentor import MAX_CONSULTS_PER_THREAD, Schedule, starts_turn

ROOT = "root-thread"
CHILD = "child-thread"
MAIN, MENTOR = "gpt-6-astra", "gpt-6-mentor"
EXPECTED = ModelExpectation(parent=MAIN, child=frozenset({MAIN}), mentor=MENTOR)


def _root() -> ThreadRef:
    return ThreadRef(Ident(ROOT), Ident(ROOT), None, ThreadRole.ROOT, None)


def _child(subagent: str | None = "mentor") -> ThreadRef:
    return ThreadRef(Ident(CHILD), Ident(ROOT), Ident(ROOT), ThreadRole.CHILD, subagent)


def _exchange(writer: CaptureWriter, thread: ThreadRef, model: str | None) -> None:
    exchange = writer.begin(thread=thread, requested_model=model, request_bytes=100)
    exchange.attempt(
        request_model=model,
        request_bytes=100,
        http_status=200,
        outcome=AttemptOutcome.COMPLETED,
        delivered=True,
    )
    exchange.finish(outcome=ExchangeOutcome.COMPLETED, client_status=200)


def _capture(
    tmp_path: Path, *threads: tuple[ThreadRef, str | None], mentor: bool = True
) -> tuple[Path, Path]:
    directory = tmp_path / "capture"
    with CaptureWriter(
        directory, mode=RouterMode.HPATCH, protocol=Protocol.NATIVE, mentor=mentor
    ) as writer:
        for thread, model in threads:
            _exchange(writer, thread, model)
        snapshot = write_snapshot(writer.snapshot_json(), tmp_path / "metrics.json")
    return directory, snapshot


def _proof(**changes: str) -> ChildProof:
    fields = {
        "thread_id": CHILD,
        "parent_thread_id": ROOT,
        "root_thread_id": ROOT,
        "model": MENTOR,
        **changes,
    }
    return ChildProof(
        schema=PROOF_SCHEMA,
        thread_id=Ident(fields["thread_id"]),
        parent_thread_id=Ident(fields["parent_thread_id"]),
        root_thread_id=Ident(fields["root_thread_id"]),
        kind="mentor",
        model=Ident(fields["model"]),
        trigger_exchange=Count(0),
    )


def _codes(directory: Path, snapshot: Path) -> set[str]:
    return validate_capture(directory, snapshot, arm="mentor", models=EXPECTED).codes()


class TestModels:
    def test_a_proven_mentor_child_is_valid(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), MENTOR))
        append_proof(directory, _proof())
        assert set() == _codes(directory, snapshot)

    def test_root_attempts_must_use_the_parent_model(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), "gpt-5.5"), (_child(), MENTOR))
        append_proof(directory, _proof())
        assert {codes.MODELS_PARENT} == _codes(directory, snapshot)

    def test_an_unknown_request_model_is_not_the_parent_model(self, tmp_path):
        """A model the router did not record is unknown, never taken as the right one."""
        directory, snapshot = _capture(tmp_path, (_root(), None), (_child(), MENTOR))
        append_proof(directory, _proof())
        assert codes.MODELS_PARENT in _codes(directory, snapshot)

    def test_a_child_may_not_use_another_model(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), "gpt-7-secret"))
        append_proof(directory, _proof(model="gpt-7-secret"))
        assert codes.MODELS_CHILD in _codes(directory, snapshot)

    def test_a_mentor_treatment_without_a_mentor_request_fails(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN))
        assert {codes.MODELS_MENTOR_MISSING} == _codes(directory, snapshot)


class TestChildProofs:
    def test_a_child_without_a_proof_is_unproved(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), MENTOR))
        assert codes.MODELS_UNPROVED in _codes(directory, snapshot)

    @pytest.mark.parametrize(
        "change",
        [{"parent_thread_id": "another"}, {"root_thread_id": "another"}, {"model": MAIN}],
        ids=["parent", "root", "model"],
    )
    def test_a_proof_that_does_not_match_proves_nothing(self, tmp_path, change):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), MENTOR))
        append_proof(directory, _proof(**change))
        assert codes.MODELS_UNPROVED in _codes(directory, snapshot)

    def test_a_proof_without_traffic_and_a_repeated_proof(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), MENTOR))
        append_proof(directory, _proof())
        append_proof(directory, _proof())
        append_proof(directory, _proof(thread_id="ghost"))
        assert {codes.CHILD_PROOF} == _codes(directory, snapshot)

    def test_an_unreadable_proof_line_is_named(self, tmp_path):
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), MENTOR))
        append_proof(directory, _proof())
        with proofs_path(directory).open("a") as stream:
            stream.write('{"schema": "hpbench.child-proof.v1", "thread_id": "x", "extra": 1}\n')
        report = validate_capture(directory, snapshot, arm="mentor", models=EXPECTED)
        finding = next(f for f in report.findings if f.code == codes.CHILD_PROOF)
        assert 2 == finding.line

    def test_codex_s_own_spawn_proves_its_child(self, tmp_path):
        """A collab_spawn child is proven by the parent's Codex stream naming it."""
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child("collab_spawn"), MAIN))
        codex = tmp_path / "codex.jsonl"
        spawn = {"id": "item_1", "type": "collab_tool_call", "tool": "spawn_agent"}
        codex.write_text(
            "\n".join(
                json.dumps(e)
                for e in (
                    {"type": "thread.started", "thread_id": ROOT},
                    {"type": "item.completed", "item": {**spawn, "receiver_thread_ids": [CHILD]}},
                )
            )
            + "\n"
        )
        expected = ModelExpectation(parent=MAIN, child=frozenset({MAIN}))
        report = validate_capture(
            directory, snapshot, arm="mentor", models=expected, codex_jsonl=[codex]
        )
        assert codes.MODELS_UNPROVED not in report.codes()
        unproved = validate_capture(directory, snapshot, arm="mentor", models=expected)
        assert codes.MODELS_UNPROVED in unproved.codes()

    def test_a_codex_spawn_does_not_prove_a_mentor_child(self, tmp_path):
        """A mentor child needs its router's proof; a spawn in the agent's stream is not one."""
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), (_child(), MENTOR))
        codex = tmp_path / "codex.jsonl"
        item = {
            "id": "i",
            "type": "collab_tool_call",
            "tool": "spawn",
            "receiver_thread_ids": [CHILD],
        }
        codex.write_text(json.dumps({"type": "item.completed", "item": item}) + "\n")
        report = validate_capture(
            directory, snapshot, arm="mentor", models=EXPECTED, codex_jsonl=[codex]
        )
        assert codes.MODELS_UNPROVED in report.codes()


USER = {"type": "message", "role": "user", "content": []}
CALL = {"type": "function_call", "call_id": "c", "name": "x", "arguments": "{}"}


class TestSchedule:
    def test_off_never_consults(self):
        assert Schedule(None).next_consult("r", True, [USER]) is None

    def test_only_a_root_turn_start(self):
        schedule = Schedule(MENTOR)
        assert starts_turn([USER]) and not starts_turn([USER, CALL])
        assert schedule.next_consult("r", False, [USER]) is None
        assert schedule.next_consult("r", True, [USER, CALL]) is None
        assert 1 == schedule.next_consult("r", True, [USER])

    def test_bounded_per_thread(self):
        schedule = Schedule(MENTOR)
        history = [USER]
        got = [schedule.next_consult("r", True, history) for _ in range(4)]
        assert [*range(1, MAX_CONSULTS_PER_THREAD + 1)] == [g for g in got if g is not None]
        assert 1 == schedule.next_consult("other", True, history)


class TestMentorBinding:
    def test_mentor_on_without_a_configured_mentor_is_the_wrong_configuration(self, tmp_path):
        """A router that consulted a mentor the run never configured is not this run's
        treatment, however self-consistent its evidence."""
        directory, snapshot = _capture(tmp_path, (_root(), MAIN))
        expected = ModelExpectation(parent=MAIN, child=frozenset({MAIN}))
        report = validate_capture(directory, snapshot, arm="mentor", models=expected)
        finding = next(f for f in report.findings if f.code == codes.BINDING)
        assert "$.router.mentor" == finding.field
        assert report.label is None

    def test_a_mentor_arm_whose_router_ran_mentor_off_is_the_wrong_configuration(self, tmp_path):
        """mentor-handoff's treatment from a router that ignored --mentor (Mentor off): the
        binding fails, whatever else holds; it never passes as the Mentor treatment."""
        directory, snapshot = _capture(tmp_path, (_root(), MAIN), mentor=False)
        report = validate_capture(directory, snapshot, arm="mentor", models=EXPECTED)
        finding = next(f for f in report.findings if f.code == codes.BINDING)
        assert "$.router.mentor" == finding.field
        assert "mentor false" in finding.message
        assert codes.MODELS_MENTOR_MISSING in report.codes()
