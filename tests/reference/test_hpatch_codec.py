"""The reference Hpatch routing: the edit format, delivery to Codex and the way back."""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs
import pytest

from hpbench.reference._hpatch import (
    HPATCH_TOOL,
    RECOVER_TOOL,
    Delivered,
    Outcome,
    applied,
    deliver_item,
    failure_cause,
    from_apply_patch_text,
    marker_id,
    read_marker,
    signature,
    to_apply_patch_text,
    tool_definitions,
    upstream_input,
    with_tools,
)

UPDATE = "U hello.txt\n@@\n-hello\n+hi"
UPDATE_PATCH = "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+hi\n*** End Patch"

SUCCESS = (
    "Exit code: 0\nWall time: 0 seconds\nOutput:\n"
    "Success. Updated the following files:\nA new.txt\nM hello.txt\n"
)
MISMATCH = (
    "Exit code: 1\nWall time: 0 seconds\nOutput:\n"
    "Failed to find expected lines in kv/kv.go:\nfunc Get() {\n"
)
VERIFICATION = "apply_patch verification failed: Failed to find expected lines in kv/kv.go:\n-x\n"


def hpatch_call(
    text: str = UPDATE, *, call_id: str = "p1", item_id: str = "ctc_1", name: str = HPATCH_TOOL
) -> dict[str, Any]:
    return {
        "type": "custom_tool_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "input": text,
        "status": "completed",
    }


def answer(output: Any, call_id: str = "p1") -> dict[str, Any]:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def user(text: str = "edit hello.txt") -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def history(call: dict[str, Any], output: Any) -> list[Any]:
    """A client history: a request, the provider's call as Codex got it, and Codex's answer."""
    delivered = deliver_item(call)
    assert delivered.translated
    return [user(), delivered.item, answer(output, call["call_id"])]


class TestFormat:
    @pytest.mark.parametrize(
        ("text", "patch"),
        [
            (
                "A new.txt\n+line one\n+line two",
                "*** Begin Patch\n*** Add File: new.txt\n+line one\n+line two\n*** End Patch",
            ),
            (UPDATE, UPDATE_PATCH),
            ("D old.txt", "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch"),
            (
                "U a/b.txt\nM c/d.txt\n@@ def f\n x\n-y\n+z",
                "*** Begin Patch\n*** Update File: a/b.txt\n*** Move to: c/d.txt\n"
                "@@ def f\n x\n-y\n+z\n*** End Patch",
            ),
            (
                "A new.txt\n+line one\nU hello.txt\n@@\n-hello\n+hi\n",
                "*** Begin Patch\n*** Add File: new.txt\n+line one\n*** Update File: hello.txt\n"
                "@@\n-hello\n+hi\n*** End Patch\n",
            ),
            ("U x\n@@\n+a\n\n", "*** Begin Patch\n*** Update File: x\n@@\n+a\n\n*** End Patch\n"),
        ],
    )
    def test_round_trip(self, text, patch):
        """Each header expands to its apply_patch form and back; a final newline stays outside."""
        assert patch == to_apply_patch_text(text)
        assert text == from_apply_patch_text(patch)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "  \n\t\n",
            "@@\n-hello\n+hi",
            "M new.txt\n+x",
            "X file\n+x",
            "A \n+x",
            "A /etc/passwd\n+x",
            "A \\windows\\x\n+x",
            "A C:x\n+x",
            "A  /etc/passwd\n+x",
            "A new.txt \n+x",
            "A new\x00.txt\n+x",
            "A ../escape.txt\n+x",
            "U a/../../b.txt\n@@\n-x\n+y",
            "U a.txt\nM ../b.txt",
            "U a.txt\nD /abs",
            "A new.txt\n+x\n*** End Patch",
            "A new.txt\n+x\n*** Add File: /etc/passwd\n+y",
            "A new.txt\n+x\n *** Add File: /etc/passwd\n+y",
            "A new.txt\n+x\n\t*** End Patch",
            "U a.txt\n@@\n-x\n+y\n*** End of File",
        ],
    )
    def test_untranslatable(self, text):
        """Empty, headerless, unsafe paths and smuggled envelope lines are refused."""
        assert None is to_apply_patch_text(text)

    @pytest.mark.parametrize(
        "patch",
        [
            "",
            "*** Begin Patch\n*** End Patch",
            UPDATE_PATCH.removeprefix("*** Begin Patch\n"),
            UPDATE_PATCH.removesuffix("\n*** End Patch"),
            UPDATE_PATCH + "\n\n",
            "*** Begin Patch\n*** Add File: /etc/passwd\n+x\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End of File\n*** End Patch",
            # "A b" is a context-free line in apply_patch but a header in hpatch.
            "*** Begin Patch\n*** Add File: a\n+x\nA b\n*** End Patch",
            "*** Begin Patch\n@@\n-x\n*** End Patch",
        ],
    )
    def test_no_hpatch_form(self, patch):
        """An apply_patch text no hpatch input translates to exactly has no reverse."""
        assert None is from_apply_patch_text(patch)


class TestTools:
    def test_definitions(self):
        """Two custom text tools, hpatch and hpatch_recover."""
        tools = tool_definitions()
        assert [HPATCH_TOOL, RECOVER_TOOL] == [tool["name"] for tool in tools]
        assert [{"type": "text"}] * 2 == [tool["format"] for tool in tools]
        assert ["custom"] * 2 == [tool["type"] for tool in tools]
        assert all(tool["description"] for tool in tools)

    def test_with_tools_appends_without_touching_the_body(self):
        """The definitions follow the client's tools in a new body; the caller's is unchanged."""
        body = {"model": "m", "tools": [{"type": "custom", "name": "apply_patch"}]}
        before = copy.deepcopy(body)
        routed = with_tools(body)
        assert before == body
        assert ["apply_patch", HPATCH_TOOL, RECOVER_TOOL] == [t["name"] for t in routed["tools"]]
        assert "m" == routed["model"]

    def test_with_tools_creates_and_never_duplicates(self):
        """Absent tools are created; applying twice, or over one present, adds nothing twice."""
        once = with_tools({"model": "m"})
        assert [HPATCH_TOOL, RECOVER_TOOL] == [t["name"] for t in once["tools"]]
        assert once == with_tools(once)
        partial = with_tools({"tools": [{"type": "custom", "name": RECOVER_TOOL}]})
        assert [RECOVER_TOOL, HPATCH_TOOL] == [t["name"] for t in partial["tools"]]

    def test_with_tools_leaves_a_malformed_list_alone(self):
        body = {"tools": "not a list"}
        assert body == with_tools(body)


class TestDeliver:
    def test_translated(self):
        """An hpatch call reaches Codex as apply_patch under a marker id, sizes counted."""
        delivered = deliver_item(hpatch_call())
        assert (
            Delivered(
                item={
                    "type": "custom_tool_call",
                    "id": "hpatch_ctc_1",
                    "call_id": "p1",
                    "name": "apply_patch",
                    "input": UPDATE_PATCH,
                    "status": "completed",
                },
                kind=HPATCH_TOOL,
                translated=True,
                provider_payload_bytes=len(UPDATE),
                client_payload_bytes=len(UPDATE_PATCH),
            )
            == delivered
        )

    def test_recover_marker_and_no_status(self):
        call = hpatch_call(name=RECOVER_TOOL, item_id="ctc_9")
        del call["status"]
        delivered = deliver_item(call)
        assert "hpatchr_ctc_9" == delivered.item["id"]
        assert "status" not in delivered.item
        assert RECOVER_TOOL == delivered.kind

    def test_payload_bytes_are_utf8(self):
        text = "U é.txt\n@@\n-é\n+è"
        delivered = deliver_item(hpatch_call(text))
        assert len(text.encode()) == delivered.provider_payload_bytes
        assert len(to_apply_patch_text(text).encode()) == delivered.client_payload_bytes
        assert delivered.provider_payload_bytes > len(text)

    @pytest.mark.parametrize(
        "text", ["", "no header", "A /abs\n+x", "A ../x\n+y", "A x\n+y\n*** End Patch"]
    )
    def test_untranslatable_delivered_unchanged(self, text):
        """An untranslatable call reaches Codex as it came, counted as an untranslated hpatch."""
        call = hpatch_call(text)
        delivered = deliver_item(call)
        assert Delivered(call, HPATCH_TOOL, False, len(text.encode()), 0) == delivered
        assert delivered.item is call

    @pytest.mark.parametrize(
        "item",
        [
            "not a dict",
            None,
            ["list"],
            {"type": "message", "role": "assistant", "content": []},
            {"type": "function_call", "call_id": "c", "name": HPATCH_TOOL, "arguments": "{}"},
            hpatch_call(name="apply_patch"),
            {"type": "custom_tool_call"},
        ],
    )
    def test_other_items_pass_through(self, item):
        delivered = deliver_item(item)
        assert Delivered(item) == delivered
        assert delivered.item is item

    @pytest.mark.parametrize(
        ("change", "provider_bytes"),
        [
            (lambda call: call.pop("call_id"), len(UPDATE)),
            (lambda call: call.update(call_id=7), len(UPDATE)),
            (lambda call: call.pop("id"), len(UPDATE)),
            (lambda call: call.update(input=["not", "text"]), 0),
            (lambda call: call.pop("input"), 0),
        ],
    )
    def test_malformed_call_untranslated(self, change, provider_bytes):
        """A call without ids to mark or correlate, or without text, goes out as it came."""
        call = hpatch_call()
        change(call)
        delivered = deliver_item(call)
        assert Delivered(call, HPATCH_TOOL, False, provider_bytes, 0) == delivered

    @pytest.mark.parametrize("item_id", ["ctc_1", "", "hpatch_x", "hpatchr_y", "a b/ü"])
    @pytest.mark.parametrize("tool", [HPATCH_TOOL, RECOVER_TOOL])
    def test_marker_round_trip(self, tool, item_id):
        assert (tool, item_id) == read_marker(marker_id(tool, item_id))

    @pytest.mark.parametrize("item_id", ["ctc_1", "hpatch", "hpatchr", None, 3])
    def test_not_a_marker(self, item_id):
        assert None is read_marker(item_id)


class TestUpstream:
    def test_restores_the_provider_item_exactly(self):
        """The provider is sent its own call back, byte for byte, and Codex's list is untouched."""
        call = hpatch_call("A new.txt\n+line one\nU hello.txt\n@@\n-hello\n+hi\n")
        items = history(call, SUCCESS)
        before = copy.deepcopy(items)
        routed = upstream_input(items, thread="t", correlated=set())
        assert json.dumps(call) == json.dumps(routed.items[1])
        assert before == items
        assert items[0] is routed.items[0]
        assert items[2] is routed.items[2]

    def test_recover_call_restored(self):
        call = hpatch_call(name=RECOVER_TOOL, item_id="ctc_2")
        routed = upstream_input(history(call, SUCCESS), thread="t", correlated=set())
        assert call == routed.items[1]
        assert [Outcome(RECOVER_TOOL, applied=True)] == routed.outcomes

    def test_success_kept_and_counted_once(self):
        """Two requests with the same history (a retry, the next turn) count the success once."""
        items = history(hpatch_call(), SUCCESS)
        correlated: set[tuple[str, str]] = set()
        first = upstream_input(items, thread="t", correlated=correlated)
        again = upstream_input(items, thread="t", correlated=correlated)
        assert [Outcome(HPATCH_TOOL, applied=True)] == first.outcomes
        assert [] == again.outcomes
        assert first.items == again.items
        assert items[2] is first.items[2]
        assert {("t", "p1")} == correlated

    def test_threads_counted_apart(self):
        """The same call_id in two threads is two calls."""
        items = history(hpatch_call(), SUCCESS)
        correlated: set[tuple[str, str]] = set()
        one = upstream_input(items, thread="main", correlated=correlated)
        two = upstream_input(items, thread="sub", correlated=correlated)
        assert 1 == len(one.outcomes) == len(two.outcomes)
        assert {("main", "p1"), ("sub", "p1")} == correlated

    def test_success_as_text_parts(self):
        parts = [
            {"type": "input_text", "text": SUCCESS[:20]},
            {"type": "input_text", "text": SUCCESS[20:]},
        ]
        routed = upstream_input(history(hpatch_call(), parts), thread="t", correlated=set())
        assert [Outcome(HPATCH_TOOL, applied=True)] == routed.outcomes
        assert parts == routed.items[2]["output"]

    def test_failure_replaced_by_diagnostic(self):
        """A failed patch is answered with its cause and first line every time, counted once."""
        items = history(hpatch_call(), MISMATCH)
        correlated: set[tuple[str, str]] = set()
        first = upstream_input(items, thread="t", correlated=correlated)
        again = upstream_input(items, thread="t", correlated=correlated)
        expected = answer(
            "hpatch rejected (context_mismatch): Failed to find expected lines in kv/kv.go:\n"
            "Correct it with hpatch_recover."
        )
        assert expected == first.items[2] == again.items[2]
        assert MISMATCH == items[2]["output"]
        assert [
            Outcome(
                HPATCH_TOOL,
                applied=False,
                cause="context_mismatch",
                signature=signature("context_mismatch", UPDATE),
                diagnostic=True,
            )
        ] == first.outcomes
        assert [] == again.outcomes

    def test_verification_failure_diagnostic(self):
        routed = upstream_input(history(hpatch_call(), VERIFICATION), thread="t", correlated=set())
        assert (
            "hpatch rejected (context_mismatch): Failed to find expected lines in kv/kv.go:\n"
            "Correct it with hpatch_recover."
        ) == routed.items[2]["output"]

    def test_empty_failure_diagnostic(self):
        routed = upstream_input(
            history(hpatch_call(), "Exit code: 1\nWall time: 0 seconds\nOutput:\n"),
            thread="t",
            correlated=set(),
        )
        assert (
            "hpatch rejected (other)\nCorrect it with hpatch_recover." == routed.items[2]["output"]
        )
        assert "other" == routed.outcomes[0].cause

    def test_recover_rejection(self):
        call = hpatch_call(name=RECOVER_TOOL)
        routed = upstream_input(history(call, MISMATCH), thread="t", correlated=set())
        assert RECOVER_TOOL == routed.outcomes[0].tool
        assert not routed.outcomes[0].applied
        assert call == routed.items[1]

    @pytest.mark.parametrize(
        ("text", "cause"),
        [
            (MISMATCH, "context_mismatch"),
            (VERIFICATION, "context_mismatch"),
            (
                "Exit code: 1\nOutput:\nFailed to find context '@@ def f' in a.py\n",
                "context_mismatch",
            ),
            (
                "Exit code: 1\nOutput:\nFailed to read file to update kv.go: "
                "No such file or directory (os error 2)\n",
                "missing_file",
            ),
            ("apply_patch verification failed: a.txt does not exist\n", "missing_file"),
            ("Exit code: 1\nOutput:\nFailed to read a.txt\n", "missing_file"),
            ("Exit code: 1\nOutput:\nInvalid patch: The first line must be x\n", "invalid_patch"),
            ("Exit code: 1\nOutput:\nInvalid hunk at line 3, '+x' is not valid\n", "invalid_patch"),
            ("apply_patch verification failed: could not parse the patch\n", "invalid_patch"),
            ("Exit code: 1\nOutput:\npermission denied\n", "other"),
            ("Exit code: 0\nOutput:\nsomething else\n", "other"),
        ],
    )
    def test_causes(self, text, cause):
        assert not applied(text)
        assert cause == failure_cause(text)
        routed = upstream_input(history(hpatch_call(), text), thread="t", correlated=set())
        assert cause == routed.outcomes[0].cause
        assert routed.items[2]["output"].startswith(f"hpatch rejected ({cause})")

    @pytest.mark.parametrize(
        "text",
        [
            SUCCESS,
            "Success. Updated the following files:\nM hello.txt\n",
            "Exit code: 0\nWall time: 0.1 seconds\nTotal output lines: 2\nOutput:\n"
            "Success. Updated the following files:\nM a\n",
        ],
    )
    def test_applied(self, text):
        assert applied(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Exit code: 1\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n",
            # A failure quoting the patch's own "Success." line is still a failure.
            "apply_patch verification failed: Failed to find expected lines in a:\nSuccess.\n",
            "",
        ],
    )
    def test_not_applied(self, text):
        assert not applied(text)

    def test_signature_names_operation_and_path_only(self):
        """Same op on the same path: one signature whatever the text; another path: another."""
        correlated: set[tuple[str, str]] = set()
        first = upstream_input(
            history(hpatch_call(call_id="p1"), MISMATCH), thread="t", correlated=correlated
        )
        second = upstream_input(
            history(
                hpatch_call("U hello.txt\n@@\n-other\n+text", call_id="p2", name=RECOVER_TOOL),
                VERIFICATION,
            ),
            thread="t",
            correlated=correlated,
        )
        elsewhere = upstream_input(
            history(hpatch_call("U world.txt\n@@\n-hello\n+hi", call_id="p3"), MISMATCH),
            thread="t",
            correlated=correlated,
        )
        deleted = upstream_input(
            history(hpatch_call("D hello.txt", call_id="p4"), MISMATCH),
            thread="t",
            correlated=correlated,
        )
        signatures = [r.outcomes[0].signature for r in (first, second, elsewhere, deleted)]
        assert signatures[0] == signatures[1]
        assert len(set(signatures)) == 3
        assert all(s is not None and len(s) == 16 and int(s, 16) >= 0 for s in signatures)
        assert signature("context_mismatch", UPDATE) != signature("missing_file", UPDATE)

    def test_outcome_holds_no_text(self):
        routed = upstream_input(history(hpatch_call(), MISMATCH), thread="t", correlated=set())
        fields = json.dumps(attrs.asdict(routed.outcomes[0]))
        for secret in ("hello", "kv.go", "Failed"):
            assert secret not in fields

    def test_answer_without_its_call_untouched(self):
        """An answer whose marked call is not in the history passes through uncounted."""
        items = [user(), answer(MISMATCH)]
        routed = upstream_input(items, thread="t", correlated=set())
        assert items == routed.items
        assert [] == routed.outcomes

    def test_call_without_answer(self):
        call = hpatch_call()
        items = [user(), deliver_item(call).item]
        correlated: set[tuple[str, str]] = set()
        routed = upstream_input(items, thread="t", correlated=correlated)
        assert [user(), call] == routed.items
        assert ([], set()) == (routed.outcomes, correlated)

    def test_unmarked_calls_untouched(self):
        """Codex's own apply_patch calls and untranslated hpatch calls pass through uncounted."""
        own = hpatch_call(UPDATE_PATCH, name="apply_patch")
        refused = hpatch_call("no header", call_id="p2")
        items = [user(), own, answer(MISMATCH), refused, answer("unsupported call: hpatch", "p2")]
        routed = upstream_input(items, thread="t", correlated=set())
        assert items == routed.items
        assert all(a is b for a, b in zip(items, routed.items, strict=True))
        assert [] == routed.outcomes

    @pytest.mark.parametrize(
        "hostile",
        [
            "text",
            None,
            42,
            {"type": "custom_tool_call_output"},
            {"type": "custom_tool_call_output", "call_id": ["p1"], "output": MISMATCH},
            {"type": "custom_tool_call", "id": "hpatch_x", "name": "apply_patch"},
            {"type": "custom_tool_call", "id": "hpatch_x", "name": "apply_patch", "input": 3},
            {"type": "custom_tool_call", "id": "hpatch_x", "name": "apply_patch", "input": "x"},
            {"type": "custom_tool_call", "id": 5, "call_id": "p1", "input": UPDATE_PATCH},
        ],
    )
    def test_hostile_items_pass_through(self, hostile):
        """Malformed items never raise and are passed as they came; the real call still routes."""
        items = [hostile, *history(hpatch_call(), SUCCESS)]
        routed = upstream_input(items, thread="t", correlated=set())
        assert routed.items[0] is hostile
        assert [Outcome(HPATCH_TOOL, applied=True)] == routed.outcomes

    @pytest.mark.parametrize("output", [None, 7, {"text": MISMATCH}, [{"type": "image"}]])
    def test_answer_that_is_not_text(self, output):
        """An answer that is neither a string nor text parts passes through uncounted."""
        items = history(hpatch_call(), output)
        correlated: set[tuple[str, str]] = set()
        routed = upstream_input(items, thread="t", correlated=correlated)
        assert items[2] is routed.items[2]
        assert ([], set()) == (routed.outcomes, correlated)
        assert hpatch_call() == routed.items[1]

    def test_marked_call_without_call_id_not_restored(self):
        item = deliver_item(hpatch_call()).item
        del item["call_id"]
        routed = upstream_input([item, answer(SUCCESS)], thread="t", correlated=set())
        assert [item, answer(SUCCESS)] == routed.items
        assert [] == routed.outcomes
