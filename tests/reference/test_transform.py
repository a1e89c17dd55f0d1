"""The reference router's routing between Codex and the provider, by mode and protocol."""

from __future__ import annotations

import json
from typing import Any

from hpbench.capture import Protocol, RouterMode
from hpbench.reference._sse import EventRewriter, encode_event
from hpbench.reference._transform import DROP, Transform

HPATCH_CALL = {
    "type": "custom_tool_call",
    "id": "ctc_1_0",
    "call_id": "call_1_0",
    "name": "hpatch",
    "input": "U a.txt\n@@\n-a\n+b",
    "status": "completed",
}
LONG = "x" * 200


def _body(items: list[Any]) -> bytes:
    return json.dumps({"model": "m", "input": items, "tools": []}).encode()


def _history(answer: str) -> list[Any]:
    routed = {**HPATCH_CALL, "id": "hpatch_ctc_1_0", "name": "apply_patch"}
    routed["input"] = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch"
    return [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "function_call", "call_id": "call_0_0", "name": "exec_command", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_0_0", "output": LONG},
        routed,
        {"type": "custom_tool_call_output", "call_id": "call_1_0", "output": answer},
    ]


FAILED = "Exit code: 1\nWall time: 0 seconds\nOutput:\nFailed to find expected lines in a.txt:\na"
APPLIED = (
    "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.txt\n"
)


class TestEventRewriter:
    def test_events_split_across_chunks_come_out_whole_and_unchanged(self):
        stream = encode_event({"type": "a", "n": 1}) + b"data: not json\n\n" + b": comment\r\n\r\n"
        rewriter = EventRewriter()
        blocks = [block for i in range(len(stream)) for block in rewriter.feed(stream[i : i + 1])]
        assert stream == b"".join(block for block, _ in blocks)
        assert [{"type": "a", "n": 1}, None, None] == [event for _, event in blocks]
        assert 1 == rewriter.malformed

    def test_an_unfinished_event_is_kept_for_the_end(self):
        rewriter = EventRewriter()
        assert [] == rewriter.feed(b'data: {"type":"a"}\n')
        assert b'data: {"type":"a"}\n' == rewriter.rest()


class TestRequest:
    def test_passthrough_native_changes_nothing(self):
        assert not Transform(RouterMode.PASSTHROUGH, Protocol.NATIVE).active

    def test_a_body_that_is_not_a_responses_request_goes_up_unchanged(self):
        transform = Transform(RouterMode.HPATCH, Protocol.CTP2)
        for body in (b"not json", b"[1]", b'{"input": "text"}'):
            assert body == transform.prepare(body, "t").upstream_body

    def test_hpatch_restores_the_call_offers_the_tools_and_sends_a_diagnostic(self):
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        routing = transform.prepare(_body(_history(FAILED)), "t")
        sent = json.loads(routing.upstream_body)
        assert ["hpatch", "hpatch_recover"] == [tool["name"] for tool in sent["tools"]]
        assert HPATCH_CALL == sent["input"][3]
        assert sent["input"][4]["output"].startswith("hpatch rejected (context_mismatch)")
        assert LONG == sent["input"][2]["output"]  # native: nothing compressed
        telemetry = routing.telemetry()
        assert (0, 1, 1) == (telemetry.successes, telemetry.rejections, telemetry.diagnostics)
        assert "context_mismatch" == telemetry.rejection_causes[0].cause

    def test_an_outcome_is_counted_once_per_thread(self):
        """Codex resends the history, and retries resend the request: counted once."""
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        first = transform.prepare(_body(_history(APPLIED)), "t").telemetry()
        again = transform.prepare(_body(_history(APPLIED)), "t").telemetry()
        other = transform.prepare(_body(_history(APPLIED)), "u").telemetry()
        assert (1, 0, 1) == (first.successes, again.successes, other.successes)

    def test_a_command_output_cannot_vouch_for_an_edit(self):
        """What the agent's commands print comes back as function_call_output; one that
        claims success under the routed call's id counts for nothing, and the real
        (failed) answer is still the one judged."""
        forged = {"type": "function_call_output", "call_id": "call_1_0", "output": APPLIED}
        history = _history(FAILED)
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        telemetry = transform.prepare(_body([*history[:4], forged, history[4]]), "t").telemetry()
        assert (0, 1) == (telemetry.successes, telemetry.rejections)

    def test_a_lone_surrogate_in_the_history_goes_up_escaped(self):
        """JSON may carry "\\ud800", which has no UTF-8 form: the exchange is routed, the
        body keeps the escape, never a crash or a changed character."""
        body = _body(_history(APPLIED + "\ud800"))
        routing = Transform(RouterMode.HPATCH, Protocol.CTP2).prepare(body, "t")
        sent = json.loads(routing.upstream_body)
        assert (APPLIED + "\ud800") == sent["input"][4]["output"]
        assert 1 == routing.telemetry().successes

    def test_ctp2_sends_older_outputs_as_references(self):
        transform = Transform(RouterMode.HPATCH, Protocol.CTP2)
        body = _body(_history(APPLIED))
        routing = transform.prepare(body, "t")
        sent = json.loads(routing.upstream_body)
        assert "[[ctp2:call_0_0]] (200 bytes elided)" == sent["input"][2]["output"]
        assert APPLIED == sent["input"][4]["output"]  # the newest result is never touched


class TestResponse:
    def _routing(self, transform: Transform) -> Any:
        return transform.prepare(_body(_history(APPLIED)), "t")

    def test_a_finished_hpatch_call_reaches_codex_as_apply_patch_and_is_counted(self):
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        routing = self._routing(transform)
        added = transform.event(
            {"type": "response.output_item.added", "item": HPATCH_CALL}, routing
        )
        done = transform.event({"type": "response.output_item.done", "item": HPATCH_CALL}, routing)
        assert added["item"] == done["item"]
        assert ("apply_patch", "hpatch_ctc_1_0") == (done["item"]["name"], done["item"]["id"])
        telemetry = routing.telemetry()
        payload = telemetry.edit_payload
        assert len(HPATCH_CALL["input"]) == payload.provider_bytes  # counted once, at done
        assert payload.client_bytes - payload.provider_bytes == payload.savings_bytes > 0
        assert payload.provider_tokens == telemetry.carrier_tokens

    def test_the_raw_hpatch_input_never_streams_to_codex(self):
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        routing = self._routing(transform)
        transform.event({"type": "response.output_item.added", "item": HPATCH_CALL}, routing)
        delta = {"type": "response.custom_tool_call_input.delta", "item_id": "ctc_1_0"}
        assert DROP is transform.event({**delta, "delta": "U a.txt"}, routing)
        other = {**delta, "item_id": "ctc_9", "delta": "x"}
        assert transform.event(other, routing) is None

    def test_an_untranslatable_call_is_unmatched_and_passes_unchanged(self):
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        routing = self._routing(transform)
        bad = {**HPATCH_CALL, "input": "A /etc/passwd\n+x"}
        assert transform.event({"type": "response.output_item.done", "item": bad}, routing) is None
        assert 1 == routing.telemetry().unmatched

    def test_terminal_output_is_translated_but_not_counted_again(self):
        transform = Transform(RouterMode.HPATCH, Protocol.NATIVE)
        routing = self._routing(transform)
        event = {"type": "response.completed", "response": {"id": "r", "output": [HPATCH_CALL]}}
        sent = transform.event(event, routing)
        assert "apply_patch" == sent["response"]["output"][0]["name"]
        assert 0 == routing.telemetry().edit_payload.provider_bytes

    def test_ctp2_expands_a_reference_in_the_answer(self):
        transform = Transform(RouterMode.HPATCH, Protocol.CTP2)
        routing = self._routing(transform)
        message = {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "See [[ctp2:call_0_0]]"}],
        }
        sent = transform.event({"type": "response.output_item.done", "item": message}, routing)
        assert f"See {LONG}" == sent["item"]["content"][0]["text"]
        assert 1 == routing.expanded
