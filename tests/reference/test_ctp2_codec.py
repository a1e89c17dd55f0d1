"""The reference CTP/2 codec: request compression, its reversal, and output expansion."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hpbench._jsonio import canonical_json
from hpbench.reference._ctp2 import (
    REFERENCE,
    THRESHOLD_BYTES,
    Expanded,
    compress_input,
    expand_input,
    expand_output_item,
    marker,
    output_text,
)

LONG = "x" * 100  # over the threshold
SHORT = "ok"


def user(text: str = "do the task") -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def reasoning() -> dict[str, Any]:
    return {"type": "reasoning", "summary": []}


def assistant(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "exec_command", "arguments": "{}"}


def custom_call(call_id: str) -> dict[str, Any]:
    return {"type": "custom_tool_call", "call_id": call_id, "name": "apply_patch", "input": "p"}


def result(call_id: str, output: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def custom_result(call_id: str, output: Any) -> dict[str, Any]:
    return {"type": "custom_tool_call_output", "call_id": call_id, "output": output}


def three_responses() -> list[Any]:
    """user, then three model responses, each followed by its tool's result."""
    return [
        user(),
        reasoning(),
        call("call_0"),
        result("call_0", LONG),
        custom_call("call_1"),
        custom_result("call_1", "y" * 80),
        reasoning(),
        call("call_2"),
        result("call_2", "z" * 90),
    ]


def test_only_outputs_before_the_last_model_response_are_elided() -> None:
    items = three_responses()
    compressed = compress_input(items)
    assert [item.get("output") for item in compressed] == [
        None,
        None,
        None,
        "[[ctp2:call_0]] (100 bytes elided)",
        None,
        "[[ctp2:call_1]] (80 bytes elided)",
        None,
        None,
        "z" * 90,
    ]
    # Everything but the two elided outputs is the caller's own object.
    assert [a is b for a, b in zip(compressed, items, strict=True)] == [
        True,
        True,
        True,
        False,
        True,
        False,
        True,
        True,
        True,
    ]


def test_results_after_the_last_run_are_untouched_even_with_trailing_user_input() -> None:
    # A new user message after the newest results: they still follow the last model run.
    items = [user(), call("call_0"), result("call_0", LONG), user("more")]
    assert compress_input(items) == items


def test_no_model_response_means_nothing_is_elided() -> None:
    items = [user(), result("call_0", LONG)]
    assert compress_input(items) == items


def test_threshold_boundary_in_utf8_bytes() -> None:
    assert THRESHOLD_BYTES == 64
    at = "a" * 64
    over = "a" * 65
    # 32 two-byte characters: 32 characters but 64 bytes, so not over.
    wide_at = "é" * 32
    wide_over = "é" * 32 + "a"
    items = [
        call("c1"),
        result("c1", at),
        call("c2"),
        result("c2", over),
        call("c3"),
        result("c3", wide_at),
        call("c4"),
        result("c4", wide_over),
        call("c5"),
    ]
    outputs = [item["output"] for item in compress_input(items) if "output" in item]
    assert outputs == [
        at,
        "[[ctp2:c2]] (65 bytes elided)",
        wide_at,
        "[[ctp2:c4]] (65 bytes elided)",
    ]


def test_list_shaped_outputs_are_measured_by_their_concatenated_text() -> None:
    parts = [{"type": "input_text", "text": "a" * 40}, {"type": "input_text", "text": "b" * 30}]
    small = [{"type": "input_text", "text": "a" * 30}, {"type": "input_text", "text": "b" * 34}]
    image = [{"type": "input_text", "text": LONG}, {"type": "input_image", "image_url": "data:"}]
    items = [
        call("c1"),
        result("c1", parts),
        call("c2"),
        custom_result("c2", small),
        call("c3"),
        result("c3", image),
        call("c4"),
    ]
    compressed = compress_input(items)
    assert compressed[1]["output"] == "[[ctp2:c1]] (70 bytes elided)"
    assert compressed[3] is items[3]
    assert compressed[5] is items[5]
    assert output_text(parts) == "a" * 40 + "b" * 30
    assert output_text(image) is None
    assert output_text(7) is None


def test_compression_is_deterministic() -> None:
    first = compress_input(three_responses())
    second = compress_input(three_responses())
    assert first == second
    assert canonical_json(first).encode("utf-8") == canonical_json(second).encode("utf-8")


def test_expand_input_reverses_compression() -> None:
    items = three_responses()
    compressed = compress_input(items)
    assert compressed != items
    assert expand_input(compressed, items) == items


def test_compression_and_expansion_do_not_mutate_their_arguments() -> None:
    items = three_responses()
    snapshot = copy.deepcopy(items)
    compressed = compress_input(items)
    compressed_snapshot = copy.deepcopy(compressed)
    expand_input(compressed, items)
    assert items == snapshot
    assert compressed == compressed_snapshot


def test_expand_input_leaves_markers_it_cannot_honour() -> None:
    items = three_responses()
    compressed = compress_input(items)
    # The original is missing, or its size differs from the marker's note.
    assert expand_input(compressed, []) == compressed
    changed = copy.deepcopy(items)
    changed[3]["output"] = LONG + "!"
    assert expand_input(compressed, changed)[3] is compressed[3]
    # A marker naming another call is not this item's own elision.
    forged = [result("call_2", "[[ctp2:call_0]] (100 bytes elided)")]
    assert expand_input(forged, items) == forged
    # A note that is not the size as compression writes it, however long.
    for note in ("0100", "9" * 5000):
        odd = [result("call_0", f"[[ctp2:call_0]] ({note} bytes elided)")]
        assert expand_input(odd, items) == odd


@pytest.mark.parametrize(
    "hostile",
    [
        "a bare string",
        42,
        None,
        ["a", "list"],
        {"type": "function_call_output", "output": LONG},  # no call_id
        {"type": "function_call_output", "call_id": 7, "output": LONG},
        {"type": "function_call_output", "call_id": "c9", "output": 12345},
        {"type": "function_call_output", "call_id": "c9", "output": {"text": LONG}},
        {"type": "function_call_output", "call_id": "c9", "output": [LONG]},
        {"type": "function_call_output", "call_id": "bad]]id", "output": LONG},
        {"type": "function_call_output", "call_id": "has space", "output": LONG},
        {"type": "function_call_output", "call_id": "", "output": LONG},
        {"type": "function_call_output", "call_id": "c" * 129, "output": LONG},
        {"type": "custom_tool_call_output", "call_id": "ünï", "output": LONG},
        {"call_id": "c9", "output": LONG},  # no type
    ],
)
def test_hostile_items_pass_through_without_raising(hostile: Any) -> None:
    items = [user(), hostile, call("c0"), result("c0", LONG)]
    compressed = compress_input(items)
    assert compressed == items
    assert compressed[1] is hostile
    assert expand_input(compressed, items) == items
    answer = assistant("see [[ctp2:c9]]")
    assert expand_output_item(answer, items) == Expanded(answer, expanded=0, unresolved=1)


def test_a_call_id_used_twice_is_neither_elided_nor_expanded() -> None:
    items = [call("dup"), result("dup", LONG), result("dup", "w" * 70), call("next")]
    assert compress_input(items) == items
    answer = assistant("[[ctp2:dup]]")
    assert expand_output_item(answer, items) == Expanded(answer, expanded=0, unresolved=1)


def test_the_longest_call_id_is_elided_and_parsed_back() -> None:
    call_id = "a.B_c:d-" * 16  # 128 characters, every allowed punctuation
    items = [call(call_id), result(call_id, LONG), call("next")]
    compressed = compress_input(items)
    assert compressed[1]["output"] == f"[[ctp2:{call_id}]] (100 bytes elided)"
    found = REFERENCE.fullmatch(compressed[1]["output"])
    assert found is not None
    assert (found["call_id"], found["elided"]) == (call_id, "100")
    assert expand_input(compressed, items) == items


def test_marker_format() -> None:
    assert marker("call_3", 1234) == "[[ctp2:call_3]] (1234 bytes elided)"


def test_one_reference_is_expanded() -> None:
    history = three_responses()
    answer = assistant("The log was: [[ctp2:call_0]] and that is all.")
    got = expand_output_item(answer, history)
    assert got.expanded == 1
    assert got.unresolved == 0
    assert got.item == assistant(f"The log was: {LONG} and that is all.")
    assert got.item is not answer
    assert answer == assistant("The log was: [[ctp2:call_0]] and that is all.")


def test_two_references_and_the_elision_note_are_expanded() -> None:
    history = three_responses()
    # The second reference is the marker copied whole: its note goes with it.
    answer = assistant("[[ctp2:call_0]]|[[ctp2:call_2]] (90 bytes elided)|")
    got = expand_output_item(answer, history)
    assert got == Expanded(assistant(f"{LONG}|{'z' * 90}|"), expanded=2, unresolved=0)


def test_list_output_expands_to_its_concatenated_text() -> None:
    parts = [{"type": "input_text", "text": "one "}, {"type": "input_text", "text": "two"}]
    history = [call("c1"), custom_result("c1", parts)]
    got = expand_output_item(assistant("<[[ctp2:c1]]>"), history)
    assert got == Expanded(assistant("<one two>"), expanded=1, unresolved=0)


def test_unknown_reference_stays_verbatim_and_is_counted() -> None:
    history = three_responses()
    answer = assistant("[[ctp2:call_0]] then [[ctp2:nowhere]] and [[ctp2:nowhere]]")
    got = expand_output_item(answer, history)
    assert got == Expanded(
        assistant(f"{LONG} then [[ctp2:nowhere]] and [[ctp2:nowhere]]"), expanded=1, unresolved=2
    )


def test_an_item_with_only_unknown_references_is_returned_as_is() -> None:
    answer = assistant("[[ctp2:nowhere]]")
    got = expand_output_item(answer, three_responses())
    assert got.item is answer
    assert (got.expanded, got.unresolved) == (0, 1)


def test_expansion_does_not_rescan_what_it_inserted() -> None:
    history = [call("c1"), result("c1", "[[ctp2:c2]]"), call("c2"), result("c2", LONG)]
    got = expand_output_item(assistant("[[ctp2:c1]]"), history)
    assert got == Expanded(assistant("[[ctp2:c2]]"), expanded=1, unresolved=0)


@pytest.mark.parametrize(
    "item",
    [
        reasoning(),
        call("call_0"),
        custom_call("call_0"),
        result("call_0", "[[ctp2:call_0]]"),
        user("[[ctp2:call_0]]"),
        {"type": "message", "role": "assistant", "content": "[[ctp2:call_0]]"},
        {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "x"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": 5}]},
        {"type": "message", "role": "assistant", "content": ["[[ctp2:call_0]]"]},
    ],
)
def test_items_without_output_text_references_pass_through(item: dict[str, Any]) -> None:
    got = expand_output_item(item, three_responses())
    assert got.item is item
    assert (got.expanded, got.unresolved) == (0, 0)


def test_other_content_parts_are_kept_in_place() -> None:
    refusal = {"type": "refusal", "refusal": "no"}
    answer = {
        "type": "message",
        "role": "assistant",
        "content": [refusal, {"type": "output_text", "text": "[[ctp2:call_0]]"}],
    }
    got = expand_output_item(answer, three_responses())
    assert got.item["content"] == [refusal, {"type": "output_text", "text": LONG}]
    assert got.item["content"][0] is refusal


def _savings(provider: dict[str, Any], client: dict[str, Any]) -> int:
    """Client minus provider UTF-8 bytes of assistant output_text."""

    def size(item: dict[str, Any]) -> int:
        return sum(len(part["text"].encode("utf-8")) for part in item["content"])

    return size(client) - size(provider)


def test_savings_are_positive_when_a_reference_grows() -> None:
    history = three_responses()
    provider = assistant("Output: [[ctp2:call_0]]")
    client = expand_output_item(provider, history).item
    # 15 bytes of reference became 100 bytes of output.
    assert _savings(provider, client) == 100 - 15


def test_savings_are_negative_when_the_output_is_shorter_than_its_reference() -> None:
    history = [call("call_9"), result("call_9", SHORT)]
    provider = assistant("Output: [[ctp2:call_9]]")
    client = expand_output_item(provider, history).item
    assert client == assistant("Output: ok")
    assert _savings(provider, client) == 2 - 15


def test_savings_of_multibyte_text_count_bytes_not_characters() -> None:
    history = [call("c1"), result("c1", "€" * 10)]
    provider = assistant("[[ctp2:c1]]")
    client = expand_output_item(provider, history).item
    assert _savings(provider, client) == 30 - 11
