"""The scripted provider, driven over loopback HTTP with hand-built Responses requests."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from hpbench.reference._history import reported_exit_code, responses_in_history, user_messages
from hpbench.reference._scripted import turn_state_status
from hpbench.reference._sse import EventDecoder
from hpbench.reference._usage import PrefixCache, tokens_for
from hpbench.reference.harness import Running, read_jsonl, running_provider

CONVERSATION_TEXT = "conversation-text-that-must-not-be-recorded"
BEARER_VALUE = "Bearer sk-secret-value-that-must-not-be-recorded"
TOOLS = [
    {
        "type": "function",
        "name": "exec_command",
        "description": "Runs a command. " * 40,
        "parameters": {"type": "object"},
    }
]


def user(text: str = CONVERSATION_TEXT) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def body(items: list[dict[str, Any]], key: str | None = "thread-a") -> dict[str, Any]:
    value: dict[str, Any] = {"model": "gpt-5.5", "stream": True, "input": items, "tools": TOOLS}
    if key is not None:
        value["prompt_cache_key"] = key
    return value


@attrs.frozen
class Answer:
    status: int
    headers: dict[str, str]
    raw: bytes
    events: list[dict[str, Any]]
    complete: bool

    def items(self) -> list[dict[str, Any]]:
        return [e["item"] for e in self.events if e["type"] == "response.output_item.done"]

    def usage(self) -> dict[str, Any]:
        return next(e for e in self.events if e["type"] == "response.completed")["response"][
            "usage"
        ]


def post(
    server: Running,
    payload: dict[str, Any],
    *,
    path: str = "/demo/v1/responses",
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
) -> Answer:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        fields = {"content-type": "application/json", "authorization": BEARER_VALUE}
        connection.request(
            "POST", path, json.dumps(payload).encode(), {**fields, **(headers or {})}
        )
        response = connection.getresponse()
        chunks = bytearray()
        complete = True
        try:
            while data := response.read1(65536):
                chunks += data
        except http.client.IncompleteRead as exc:
            chunks += exc.partial
            complete = False
        except (OSError, http.client.HTTPException):
            complete = False
        names = {name.lower(): value for name, value in response.getheaders()}
        events = (
            EventDecoder().feed(bytes(chunks))
            if "event-stream" in names.get("content-type", "")
            else []
        )
        return Answer(response.status, names, bytes(chunks), events, complete)
    finally:
        connection.close()


def history_after(answer: Answer, *, output: str = "ok") -> list[dict[str, Any]]:
    """What Codex sends back: the answer's items, then an output for its tool call."""
    items = answer.items()
    outputs = [
        {"type": "function_call_output", "call_id": item["call_id"], "output": output}
        for item in items
        if item["type"] == "function_call"
    ]
    outputs += [
        {"type": "custom_tool_call_output", "call_id": item["call_id"], "output": output}
        for item in items
        if item["type"] == "custom_tool_call"
    ]
    return items + outputs


@pytest.fixture
def provider(tmp_path: Path, replay_dir: Path) -> Iterator[Running]:
    scripts = {
        "demo": replay_dir / "edit-and-check.json",
        "faults": replay_dir / "faults.json",
        "expect": replay_dir / "expect-exit.json",
    }
    with running_provider(scripts, tmp_path) as running:
        yield running


def records(server: Running) -> list[dict[str, Any]]:
    value: list[dict[str, Any]] = server.get_json("/requests")
    return value


class TestHistory:
    def test_counts_model_output_runs(self):
        """Each maximal run of model-output items is one earlier response."""
        call = {"type": "function_call", "call_id": "c", "name": "x", "arguments": "{}"}
        out = {"type": "function_call_output", "call_id": "c", "output": ""}
        reasoning = {"type": "reasoning", "summary": []}
        said = {"type": "message", "role": "assistant", "content": []}
        items = [user(), reasoning, call, out, call, out, said, user()]
        assert 3 == responses_in_history(items)
        assert 0 == responses_in_history([user()])

    def test_turn_is_the_number_of_user_messages(self):
        """A resumed turn adds a user message; tool outputs do not."""
        out = {"type": "function_call_output", "call_id": "c", "output": ""}
        assert 1 == user_messages([user(), out, out])
        assert 2 == user_messages([user(), out, user()])

    def test_turn_state_statuses(self):
        """Issued vs received gives the five statuses."""
        assert "absent" == turn_state_status(None, None)
        assert "unsolicited" == turn_state_status(None, "x")
        assert "missing" == turn_state_status("a", None)
        assert "unchanged" == turn_state_status("a", "a")
        assert "changed" == turn_state_status("a", "b")


class TestPrefixCache:
    def test_longest_common_prefix_in_blocks(self):
        """Cached tokens are the common leading units, rounded down to 64 tokens."""
        cache = PrefixCache()
        first = [("a", 100), ("b", 50)]
        assert 0 == cache.lookup("k", first)
        cache.store("k", first)
        assert 128 == cache.lookup("k", [("a", 100), ("b", 50), ("c", 10)])
        assert 64 == cache.lookup("k", [("a", 100), ("x", 50)])
        assert 0 == cache.lookup("other", first)
        assert 0 == cache.lookup(None, first)


class TestSteps:
    def test_step_follows_history(self, provider: Running):
        """The second request (carrying the first answer) gets the second step."""
        first = post(provider, body([user()]))
        assert 200 == first.status
        assert ["reasoning", "function_call"] == [i["type"] for i in first.items()]
        second = post(provider, body([user(), *history_after(first)]))
        assert ["custom_tool_call"] == [i["type"] for i in second.items()]
        assert "apply_patch" == second.items()[0]["name"]

    def test_retry_gets_the_same_answer(self, provider: Running):
        """Sending the same request again answers the same step with the same items."""
        first = post(provider, body([user()]))
        again = post(provider, body([user()]))
        assert first.items() == again.items()
        assert [0, 1] == [r["attempt"] for r in records(provider)]
        assert [0, 0] == [r["step"] for r in records(provider)]

    def test_script_exhausted_is_fatal(self, provider: Running):
        """A step past the script ends with response.failed invalid_prompt."""
        said = {"type": "message", "role": "assistant", "content": []}
        out = {"type": "function_call_output", "call_id": "c", "output": ""}
        items = [user()]
        for _ in range(4):
            items += [said, out]
        answer = post(provider, body(items))
        assert "response.failed" == answer.events[-1]["type"]
        assert "invalid_prompt" == answer.events[-1]["response"]["error"]["code"]
        assert "script_exhausted" == records(provider)[-1]["response"]["outcome"]

    def test_unknown_script_is_404(self, provider: Running):
        """Only /NAME/v1/responses of a loaded script answers."""
        assert 404 == post(provider, body([user()]), path="/nope/v1/responses").status
        assert 404 == post(provider, body([user()]), path="/v1/responses").status


class TestUsage:
    def test_usage_is_deterministic_and_cached_prefix_grows(self, provider: Running):
        """Same request, same key: equal input and output; the repeat is cached."""
        first = post(provider, body([user()])).usage()
        second = post(provider, body([user()])).usage()
        assert first["input_tokens"] == second["input_tokens"]
        assert first["output_tokens"] == second["output_tokens"]
        assert 0 == first["input_tokens_details"]["cached_tokens"]
        cached = second["input_tokens_details"]["cached_tokens"]
        assert 0 < cached <= second["input_tokens"]
        assert 0 == cached % 64

    def test_cache_is_keyed_by_prompt_cache_key(self, provider: Running):
        """Another key, or no key, starts cold."""
        post(provider, body([user()], key="one"))
        assert (
            0
            == post(provider, body([user()], key="two")).usage()["input_tokens_details"][
                "cached_tokens"
            ]
        )
        assert (
            0
            == post(provider, body([user()], key=None)).usage()["input_tokens_details"][
                "cached_tokens"
            ]
        )

    def test_usage_derives_from_sizes(self, provider: Running):
        """Output tokens are the output items' bytes over four, rounded up."""
        answer = post(provider, body([user()]))
        items = answer.items()
        expected = sum(
            tokens_for(len(json.dumps(i, sort_keys=True, separators=(",", ":")).encode()))
            for i in items
        )
        assert expected == answer.usage()["output_tokens"]
        assert answer.usage()["output_tokens_details"]["reasoning_tokens"] > 0


class TestTurnState:
    def test_issued_per_turn_and_checked_on_later_requests(self, provider: Running):
        """First request: absent; echoes: unchanged; others: changed or missing."""
        first = post(provider, body([user()]))
        value = first.headers["x-codex-turn-state"]
        follow = [user(), *history_after(first)]
        same = post(provider, body(follow), headers={"x-codex-turn-state": value})
        assert value == same.headers["x-codex-turn-state"]
        post(provider, body(follow), headers={"x-codex-turn-state": "forged"})
        post(provider, body(follow))
        statuses = [r["turn_state"]["status"] for r in records(provider)]
        assert ["absent", "unchanged", "changed", "missing"] == statuses

    def test_new_turn_gets_a_new_value(self, provider: Running):
        """A request with one more user message is a new turn: the old value is unsolicited."""
        first = post(provider, body([user()]))
        value = first.headers["x-codex-turn-state"]
        said = {"type": "message", "role": "assistant", "content": []}
        next_turn = [user(), said, user("again")]
        second = post(provider, body(next_turn), headers={"x-codex-turn-state": value})
        assert value != second.headers["x-codex-turn-state"]
        post(provider, body([user(), said, user("again"), said, user("third")]))
        statuses = [r["turn_state"]["status"] for r in records(provider)]
        assert ["absent", "unsolicited", "absent"] == statuses


class TestFaults:
    def faults_path(self) -> str:
        return "/faults/v1/responses"

    def step_items(self, step: int) -> list[dict[str, Any]]:
        said = {"type": "message", "role": "assistant", "content": []}
        out = {"type": "function_call_output", "call_id": "c", "output": ""}
        items = [user()]
        for _ in range(step):
            items += [said, out]
        return items

    def test_429_with_and_without_retry_after_then_answer(self, provider: Running):
        """Attempt 1: 429 + retry-after; attempt 2: 429 bare; attempt 3: the answer."""
        first = post(provider, body(self.step_items(0)), path=self.faults_path())
        second = post(provider, body(self.step_items(0)), path=self.faults_path())
        third = post(provider, body(self.step_items(0)), path=self.faults_path())
        assert (429, "2") == (first.status, first.headers.get("retry-after"))
        assert (429, None) == (second.status, second.headers.get("retry-after"))
        assert "rate_limit_exceeded" == json.loads(first.raw)["error"]["code"]
        assert 200 == third.status
        assert third.complete
        assert ["http_429", "http_429", None] == [r["fault"] for r in records(provider)]

    def test_500_and_503(self, provider: Running):
        """Step 1 fails with 500, then 503 + retry-after, then answers."""
        statuses = [
            post(provider, body(self.step_items(1)), path=self.faults_path()).status
            for _ in range(3)
        ]
        assert [500, 503, 200] == statuses

    def test_dropped_stream(self, provider: Running):
        """A drop sends some events and closes without the last chunk."""
        answer = post(provider, body(self.step_items(2)), path=self.faults_path())
        assert 200 == answer.status
        assert not answer.complete
        assert ["response.created", "response.output_item.added"] == [
            e["type"] for e in answer.events
        ]
        retry = post(provider, body(self.step_items(2)), path=self.faults_path())
        assert retry.complete
        assert "response.completed" == retry.events[-1]["type"]
        assert ["dropped", "completed"] == [r["response"]["outcome"] for r in records(provider)]

    def test_stall(self, provider: Running):
        """A stall goes silent after one event, then closes unfinished."""
        started = time.monotonic()
        answer = post(provider, body(self.step_items(3)), path=self.faults_path(), timeout=10)
        assert time.monotonic() - started >= 1.4
        assert not answer.complete
        assert ["response.created"] == [e["type"] for e in answer.events]
        assert "stalled" == records(provider)[-1]["response"]["outcome"]

    def test_stall_ends_when_the_client_leaves(self, provider: Running):
        """A client that times out frees the provider (no hanging handler)."""
        answer = post(provider, body(self.step_items(3)), path=self.faults_path(), timeout=0.5)
        assert not answer.complete
        time.sleep(0.3)
        assert "stalled" == records(provider)[-1]["response"]["outcome"]

    def test_response_failed(self, provider: Running):
        """response_failed ends the stream with the scripted code."""
        answer = post(provider, body(self.step_items(4)), path=self.faults_path())
        assert answer.complete
        assert "server_is_overloaded" == answer.events[-1]["response"]["error"]["code"]


class TestExpectations:
    """A step's expect_exit_code is checked against the exit code Codex reports next."""

    PATH = "/expect/v1/responses"

    def second(self, provider: Running, output: Any) -> Answer:
        first = post(provider, body([user()]), path=self.PATH)
        items = first.items()
        assert ["function_call"] == [i["type"] for i in items]
        reply = {"type": "function_call_output", "call_id": items[0]["call_id"], "output": output}
        return post(provider, body([user(), *items, reply]), path=self.PATH)

    def test_met(self, provider: Running):
        """Exit code 0 as expected: the next step is served."""
        answer = self.second(
            provider, "Chunk ID: 1\nWall time: 1 s\nProcess exited with code 0\nok"
        )
        assert ["message"] == [i["type"] for i in answer.items()]
        assert "completed" == records(provider)[-1]["response"]["outcome"]

    def test_met_with_array_output(self, provider: Running):
        """An output given as input_text parts is read too."""
        parts = [{"type": "input_text", "text": "Process exited with code 0\n"}]
        assert ["message"] == [i["type"] for i in self.second(provider, parts).items()]

    @pytest.mark.parametrize(
        ("output", "got"),
        [
            ("Process exited with code 127\nOutput:\nbash: go: command not found", 127),
            ("Process running with session ID 76192", None),
            ("Process exited with code 1\n", 1),
        ],
    )
    def test_unmet_ends_the_turn(self, provider: Running, output: str, got: int | None):
        """go missing (127), a command still running, or a failure: response.failed with a
        fatal code, and the record says which step expected what."""
        answer = self.second(provider, output)
        assert "response.failed" == answer.events[-1]["type"]
        error = answer.events[-1]["response"]["error"]
        assert "invalid_prompt" == error["code"]
        assert "replay expectation failed" in error["message"]
        record = records(provider)[-1]
        assert "expectation_failed" == record["response"]["outcome"]
        assert {"step": 0, "expected": 0, "got": got} == record["expectation"]

    def test_missing_output_is_unmet(self, provider: Running):
        """A history without the command's output does not meet the expectation."""
        first = post(provider, body([user()]), path=self.PATH)
        said = {"type": "message", "role": "assistant", "content": []}
        answer = post(provider, body([user(), *first.items(), said]), path=self.PATH)
        assert "response.failed" == answer.events[-1]["type"]

    def test_reported_exit_code_reads_only_its_call(self):
        """Another call's exit code is not taken for this one's."""
        items = [
            {
                "type": "function_call_output",
                "call_id": "a",
                "output": "Process exited with code 0",
            },
            {
                "type": "function_call_output",
                "call_id": "b",
                "output": "Process exited with code 2",
            },
        ]
        assert (0, 2, None) == (
            reported_exit_code(items, "a"),
            reported_exit_code(items, "b"),
            reported_exit_code(items, "c"),
        )


class TestRecords:
    def test_records_are_sanitized(self, provider: Running, tmp_path: Path):
        """No authorization value and no conversation text, in the file or on /requests."""
        first = post(provider, body([user()]))
        post(provider, body([user(), *history_after(first, output=CONVERSATION_TEXT)]))
        on_disk = (tmp_path / "provider-records.jsonl").read_text()
        served = json.dumps(records(provider))
        for text in (on_disk, served):
            assert CONVERSATION_TEXT not in text
            assert "sk-secret" not in text
            assert "cat hello.txt" not in text
        assert read_jsonl(tmp_path / "provider-records.jsonl") == records(provider)
        record = records(provider)[1]
        assert "bearer" == record["headers"]["authorization"]
        assert {"message:user": 1, "reasoning": 1, "function_call": 1} | {
            "function_call_output": 1
        } == record["request"]["input_types"]

    def test_health(self, provider: Running):
        """/healthz names the scripts."""
        assert {"ok": True, "scripts": ["demo", "expect", "faults"]} == provider.get_json(
            "/healthz"
        )


class TestCommandLine:
    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hpbench.reference.provider", *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def test_bad_script_exits_2(self, tmp_path: Path):
        """An invalid script stops the provider before it listens, naming the field."""
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({"schema_version": 1, "name": "b", "steps": []}))
        result = self.run("--listen", "127.0.0.1:0", "--script", f"x={bad}")
        assert 2 == result.returncode
        assert "$.steps" in result.stderr

    def test_reserved_name_exits_2(self, replay_dir: Path):
        """A script may not be named like an endpoint."""
        script = replay_dir / "faults.json"
        result = self.run("--listen", "127.0.0.1:0", "--script", f"healthz={script}")
        assert 2 == result.returncode

    def test_port_in_use_exits_1(self, provider: Running, replay_dir: Path):
        """A taken port is reported, not a traceback."""
        script = replay_dir / "faults.json"
        result = self.run("--listen", f"127.0.0.1:{provider.port}", "--script", f"x={script}")
        assert 1 == result.returncode
        assert "cannot listen" in result.stderr
