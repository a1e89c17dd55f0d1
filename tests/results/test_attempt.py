"""The attempt object: every failure class, evidence kept, unknown as null."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import jsonschema
import pytest

from hpbench.commentary import CommentaryCoverage, ProfileCoverage, Requirement
from hpbench.errors import ContractError
from hpbench.results import (
    FailureClass,
    attempt_from_json,
    attempt_to_json,
    build_attempt,
    merge_results,
    write_result,
)
from hpbench.results.merge import RESULTS_NAME
from hpbench.results.model import SCHEMA_FILE

from ..evidence import GOOD_JSONL, identity, write_evidence
from .test_attribution import capture, fail_last_exchange, last

WORKSPACE = "/home/agent/ws"
ALLOWED = ("kv/kv.go", "kv/rangestream.go", "kv/store.go")

PASSING_GRADER = [
    {"Action": "run", "Package": "p", "Test": "TestA"},
    {"Action": "pass", "Package": "p", "Test": "TestA"},
    {"Action": "run", "Package": "p", "Test": "TestB"},
    {"Action": "pass", "Package": "p", "Test": "TestB"},
    {"Action": "pass", "Package": "p"},
]
REQUIRED = {"p": ("TestA", "TestB")}


def result_json(*args: typing.Any, **kwargs: typing.Any) -> dict[str, typing.Any]:
    """The attempt object as result.json holds it."""
    return attempt_to_json(build_attempt(*args, **kwargs))


def make_attempt(
    directory: Path,
    *,
    exit_code: int = 0,
    jsonl: list[object] | None = None,
    changed: tuple[str, ...] = ("kv/rangestream.go",),
    grader: list[object] | None = None,
    grader_exit: int | None = 0,
) -> Path:
    return write_evidence(
        directory,
        jsonl=GOOD_JSONL if jsonl is None else jsonl,
        exit_code=exit_code,
        changed=changed,
        grader=PASSING_GRADER if grader is None else grader,
        grader_exit=grader_exit,
        agent_seconds="12.3456",
        grader_seconds="3.2",
    )


def result_of(directory: Path) -> dict[str, object]:
    return result_json(directory, identity(), ALLOWED, WORKSPACE, required_tests=REQUIRED)


class TestPassDecision:
    def test_passing_attempt(self, tmp_path: Path) -> None:
        """Codex ok, clean JSONL, allowed paths, grader ok: passed."""
        result = result_of(make_attempt(tmp_path / "a"))
        assert (True, "none") == (result["passed"], result["failure_class"])
        assert {"passed": 2, "failed": 0, "skipped": 0} == result["grader"]["tests"]  # type: ignore[index]
        assert (
            360
            == result["codex"]["usage"]["input_tokens"] + result["codex"]["usage"]["output_tokens"]
        )  # type: ignore[index]
        assert 12.346 == result["elapsed"]["agent_seconds"]  # type: ignore[index]
        assert "diff.patch" == result["diff"]["path"]  # type: ignore[index]

    def test_timeout(self, tmp_path: Path) -> None:
        """Exit 124 from the agent timeout fails as agent-timeout, evidence kept."""
        result = result_of(make_attempt(tmp_path / "a", exit_code=124))
        assert "agent-timeout" == result["failure_class"]
        assert result["codex"]["timed_out"] is True  # type: ignore[index]
        assert result["diff"] is not None

    def test_codex_failure(self, tmp_path: Path) -> None:
        """A nonzero Codex exit fails the attempt even when the grader passes."""
        assert (
            "codex-failed" == result_of(make_attempt(tmp_path / "a", exit_code=1))["failure_class"]
        )

    def test_missing_jsonl(self, tmp_path: Path) -> None:
        """No JSONL recorded: jsonl-invalid."""
        directory = make_attempt(tmp_path / "a")
        (directory / "codex.jsonl").unlink()
        assert "jsonl-invalid" == result_of(directory)["failure_class"]

    def test_malformed_jsonl(self, tmp_path: Path) -> None:
        """A line that is not JSON makes the JSONL invalid, with its finding kept."""
        directory = make_attempt(tmp_path / "a")
        with (directory / "codex.jsonl").open("a") as stream:
            stream.write("{not json\n")
        result = result_of(directory)
        assert "jsonl-invalid" == result["failure_class"]
        assert result["codex"]["jsonl_findings"]  # type: ignore[index]

    def test_unauthorized_path(self, tmp_path: Path) -> None:
        """A change outside the allowed paths fails and is named."""
        directory = make_attempt(tmp_path / "a", changed=("kv/rangestream.go", "go.mod"))
        result = result_of(directory)
        assert "unauthorized-path" == result["failure_class"]
        assert ["go.mod"] == result["unauthorized_paths"]

    def test_unknown_changed_paths(self, tmp_path: Path) -> None:
        """Without the changed-path record the boundary is unproven: the attempt fails."""
        directory = make_attempt(tmp_path / "a")
        (directory / "changed-paths.z").unlink()
        result = result_of(directory)
        assert ("unauthorized-path", None) == (
            result["failure_class"],
            result["unauthorized_paths"],
        )

    def test_grader_failure(self, tmp_path: Path) -> None:
        """A failing hidden test fails the attempt; counts and names are kept."""
        lines = [
            {"Action": "pass", "Package": "p", "Test": "TestA"},
            {"Action": "fail", "Package": "p", "Test": "TestB"},
        ]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=1))
        assert "hidden-tests-failed" == result["failure_class"]
        assert {"passed": 1, "failed": 1, "skipped": 0} == result["grader"]["tests"]  # type: ignore[index]
        assert ["TestB"] == result["grader"]["failed_tests"]  # type: ignore[index]

    def test_build_failure_counts_are_null(self, tmp_path: Path) -> None:
        """A grader that did not build has null counts, never zeros."""
        lines = [
            {"Action": "output", "Package": "p", "Output": "FAIL\tp [build failed]\n"},
            {"Action": "fail", "Package": "p"},
        ]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=2))
        assert result["grader"]["tests"] is None  # type: ignore[index]
        assert result["grader"]["build_failed"] is True  # type: ignore[index]

    def test_grader_never_ran(self, tmp_path: Path) -> None:
        """No grader evidence: not passed, and its numbers are unknown."""
        result = result_of(make_attempt(tmp_path / "a", grader_exit=None))
        assert "grader-failed" == result["failure_class"]
        assert (False, None, None) == (
            result["grader"]["ran"],  # type: ignore[index]
            result["grader"]["exit_code"],  # type: ignore[index]
            result["grader"]["seconds"],  # type: ignore[index]
        )

    def test_infrastructure_failure_outranks_everything(self, tmp_path: Path) -> None:
        """A harness failure is marked as such, never as a model loss."""
        directory = make_attempt(tmp_path / "a", exit_code=1)
        (directory / "infrastructure.txt").write_text("router crashed\n")
        result = result_of(directory)
        assert ("infrastructure", "router crashed") == (
            result["failure_class"],
            result["infrastructure_error"],
        )

    HIGH_DEMAND: typing.ClassVar[list[dict[str, object]]] = [
        *GOOD_JSONL[:2],
        {"type": "error", "message": "Reconnecting... 1/2"},
        {
            "type": "turn.failed",
            "error": {"message": "We\u2019re currently experiencing high demand, please retry."},
        },
    ]

    def _failed_with(self, tmp_path: Path, router_capture: Path) -> dict[str, object]:
        directory = make_attempt(tmp_path / "a", exit_code=1, jsonl=self.HIGH_DEMAND)
        return result_json(
            directory,
            identity(),
            ALLOWED,
            WORKSPACE,
            required_tests=REQUIRED,
            router_capture=router_capture,
        )

    def test_provider_failure_is_infrastructure(self, tmp_path: Path) -> None:
        """Codex failing because the provider kept answering 500, as the router's capture
        shows, is an infrastructure failure that voids the pair."""
        result = self._failed_with(
            tmp_path, capture(tmp_path, fail_last_exchange(500, "http_error"))
        )
        assert "infrastructure" == result["failure_class"]
        assert str(result["infrastructure_error"]).startswith("provider failure:")
        assert "provider" == result["failure_attribution"]["culprit"]  # type: ignore[index]

    def test_the_routers_own_500_is_the_arms_loss(self, tmp_path: Path) -> None:
        """The same Codex error when the provider completed and the router failed the client:
        router-failed, never a void."""

        def router_broke_it(records: list[dict[str, object]]) -> None:
            last(records, "exchange").update(outcome="failed", client_status=500)

        result = self._failed_with(tmp_path, capture(tmp_path, router_broke_it))
        assert ("router-failed", None) == (result["failure_class"], result["infrastructure_error"])

    def test_a_missing_capture_is_the_routers_loss(self, tmp_path: Path) -> None:
        """Codex's "high demand" text alone proves nothing: without a capture, the router failed."""
        result = self._failed_with(tmp_path, tmp_path / "no-capture")
        assert "router-failed" == result["failure_class"]

    def test_codex_text_alone_never_voids(self, tmp_path: Path) -> None:
        """With no capture to read (none given), a Codex failure stays the arm's."""
        result = result_of(make_attempt(tmp_path / "a", exit_code=1, jsonl=self.HIGH_DEMAND))
        assert ("codex-failed", None) == (result["failure_class"], result["infrastructure_error"])

    def test_model_error_is_not_infrastructure(self, tmp_path: Path) -> None:
        """Any other terminal error stays a Codex failure."""
        failing = [
            *GOOD_JSONL[:2],
            {
                "type": "turn.failed",
                "error": {"message": "Incomplete response returned, reason: max_output_tokens"},
            },
        ]
        result = result_of(make_attempt(tmp_path / "a", exit_code=1, jsonl=failing))
        assert "codex-failed" == result["failure_class"]

    LIMITS = (
        "memory_limit_bytes 4294967296\noom_kills {oom}\npids_limit 1024\npids_limit_hits {pids}\n"
    )

    def test_limits_recorded_when_not_met(self, tmp_path: Path) -> None:
        """The agent's caps are kept as evidence; caps never met change nothing."""
        directory = make_attempt(tmp_path / "a")
        (directory / "agent-limits.txt").write_text(self.LIMITS.format(oom=0, pids=0))
        result = result_of(directory)
        assert (True, []) == (result["passed"], result["agent_limits_met"])
        assert {
            "memory_limit_bytes": 4294967296,
            "oom_kills": 0,
            "pids_limit": 1024,
            "pids_limit_hits": 0,
        } == result["agent_limits"]

    @pytest.mark.parametrize(
        ("oom", "pids", "named"), [(1, 0, "memory cap"), (0, 37, "process cap")]
    )
    def test_a_met_cap_fails_the_attempt(
        self, tmp_path: Path, oom: int, pids: int, named: str
    ) -> None:
        """A memory hog killed or a fork bomb stopped by the caps fails its attempt as
        resource-limit, even when the grader passes afterwards."""
        directory = make_attempt(tmp_path / "a")
        (directory / "agent-limits.txt").write_text(self.LIMITS.format(oom=oom, pids=pids))
        result = result_of(directory)
        assert (False, "resource-limit") == (result["passed"], result["failure_class"])
        assert named in result["agent_limits_met"][0]  # type: ignore[index]

    def test_missing_limits_are_unknown(self, tmp_path: Path) -> None:
        """No counters recorded: the limits are null (unknown), not a clean record."""
        result = result_of(make_attempt(tmp_path / "a"))
        assert (None, [], []) == (
            result["agent_limits"],
            result["agent_limits_met"],
            result["agent_limits_findings"],
        )

    @pytest.mark.parametrize(
        ("text", "finding"),
        [
            ("memory_limit_bytes 1\noom_kills 0\npids_limit 9\n", "missing pids_limit_hits"),
            ("memory_limit_bytes 1\noom_kills x\npids_limit 9\npids_limit_hits 0\n", "not a count"),
            (
                "memory_limit_bytes 1\noom_kills 0\noom_kills 5\npids_limit 9\npids_limit_hits 0\n",
                "repeated",
            ),
            ("bogus 1\n", "unexpected"),
        ],
    )
    def test_malformed_limits_are_refused(self, tmp_path: Path, text: str, finding: str) -> None:
        """A counters file that does not read cleanly is unknown, with a finding naming it."""
        directory = make_attempt(tmp_path / "a")
        (directory / "agent-limits.txt").write_text(text)
        result = result_of(directory)
        assert result["agent_limits"] is None
        assert any(finding in f for f in result["agent_limits_findings"])  # type: ignore[attr-defined]

    def test_unlimited_cap_is_null(self, tmp_path: Path) -> None:
        """A cap of "max" (none set) reads as null, never as a number."""
        directory = make_attempt(tmp_path / "a")
        (directory / "agent-limits.txt").write_text(
            "memory_limit_bytes max\noom_kills 0\npids_limit max\npids_limit_hits 0\n"
        )
        limits = result_of(directory)["agent_limits"]
        assert (None, None) == (limits["memory_limit_bytes"], limits["pids_limit"])  # type: ignore[index]

    def test_result_file_is_private(self, tmp_path: Path) -> None:
        """result.json is written with mode 0600."""
        directory = make_attempt(tmp_path / "a")
        path = write_result(directory, result_of(directory))
        assert 0o600 == path.stat().st_mode & 0o777
        assert json.loads(path.read_text())["schema"] == "hpbench.attempt.v2"


class TestFinalResponse:
    """A task's exact final response (spec 002) against the final substantive message."""

    def _result(self, directory: Path, required: str | None, **kwargs: typing.Any) -> dict:
        return result_json(
            make_attempt(directory, **kwargs),
            identity(),
            ALLOWED,
            WORKSPACE,
            required_tests=REQUIRED,
            final_response=required,
        )

    @staticmethod
    def _stream(*messages: str) -> list[object]:
        items = [
            {"type": "item.completed", "item": {"id": f"m{i}", "type": "agent_message", "text": t}}
            for i, t in enumerate(messages)
        ]
        return [*GOOD_JSONL[:-1], *items, GOOD_JSONL[-1]]

    def test_the_exact_response_passes(self, tmp_path: Path) -> None:
        result = self._result(tmp_path / "a", "Done.\n")
        assert (True, "none") == (result["passed"], result["failure_class"])
        check = result["final_response"]
        assert (True, True) == (check["matched"], check["found"])  # type: ignore[index]

    def test_another_response_fails(self, tmp_path: Path) -> None:
        """A paraphrase, or the response with more after it, is not the exact response."""
        for answer in ("Done!", "Done. Also refactored."):
            result = self._result(tmp_path / answer, "Done.", jsonl=self._stream(answer))
            assert (False, "final-response") == (result["passed"], result["failure_class"])

    def test_no_final_message_fails(self, tmp_path: Path) -> None:
        stream = [line for line in GOOD_JSONL if "agent_message" not in json.dumps(line)]
        result = self._result(tmp_path / "a", "Done.", jsonl=stream)
        assert "final-response" == result["failure_class"]
        check = result["final_response"]
        assert (False, None) == (check["found"], check["response_sha256"])  # type: ignore[index]

    def test_router_telemetry_after_the_response_is_not_the_response(self, tmp_path: Path) -> None:
        stream = self._stream("Tokens: i=10, ci=0, o=2, r=0")
        assert "none" == self._result(tmp_path / "a", "Done.", jsonl=stream)["failure_class"]

    def test_a_later_ordinary_message_is_the_response(self, tmp_path: Path) -> None:
        """A message after the telemetry is the final response and must not be ignored."""
        stream = self._stream("Tokens: i=10, ci=0, o=2, r=0", "One more thing.")
        assert (
            "final-response" == self._result(tmp_path / "a", "Done.", jsonl=stream)["failure_class"]
        )

    def test_a_failed_hidden_test_says_more(self, tmp_path: Path) -> None:
        grader = [{"Action": "fail", "Package": "p", "Test": "TestA"}, *PASSING_GRADER[2:]]
        result = self._result(tmp_path / "a", "Not this.", grader=grader, grader_exit=1)
        assert "hidden-tests-failed" == result["failure_class"]

    def test_a_task_without_one_records_none(self, tmp_path: Path) -> None:
        assert self._result(tmp_path / "a", None)["final_response"] is None


class TestMerge:
    def _attempt(self, run: Path, name: str, arm: str, repetition: int, order: int) -> None:
        directory = make_attempt(run / "attempts" / name)
        write_result(
            directory,
            result_json(
                directory,
                identity(arm, repetition, order),
                ALLOWED,
                WORKSPACE,
                required_tests=REQUIRED,
            ),
        )

    def test_deterministic_order(self, tmp_path: Path) -> None:
        """Merge order is repetition then pair order, whatever the directory names."""
        run = tmp_path / "run"
        self._attempt(run, "z", "hpatch", 1, 1)
        self._attempt(run, "a", "control", 1, 2)
        self._attempt(run, "m", "control", 2, 1)
        self._attempt(run, "b", "hpatch", 2, 2)
        attempts = merge_results(run)
        assert [(1, "hpatch"), (1, "control"), (2, "control"), (2, "hpatch")] == [
            (a.repetition, a.arm) for a in attempts
        ]
        first = (run / RESULTS_NAME).read_bytes()
        merge_results(run)
        assert first == (run / RESULTS_NAME).read_bytes()

    def test_duplicate_attempt_refused(self, tmp_path: Path) -> None:
        """Two objects for one (repetition, arm) are refused."""
        run = tmp_path / "run"
        self._attempt(run, "a", "control", 1, 1)
        self._attempt(run, "b", "control", 1, 1)
        with pytest.raises(ContractError) as caught:
            merge_results(run)
        assert "results.duplicate" == caught.value.findings[0].code

    def test_wrong_schema_refused(self, tmp_path: Path) -> None:
        """An object of another schema is not merged silently."""
        run = tmp_path / "run"
        (run / "attempts" / "x").mkdir(parents=True)
        (run / "attempts" / "x" / "result.json").write_text('{"schema": "other"}')
        with pytest.raises(ContractError) as caught:
            merge_results(run)
        assert "results.schema" == caught.value.findings[0].code

    def _broken(self, tmp_path: Path, change: typing.Callable[[dict[str, object]], None]) -> Path:
        run = tmp_path / "run"
        self._attempt(run, "a", "control", 1, 1)
        path = run / "attempts" / "a" / "result.json"
        document = json.loads(path.read_text())
        change(document)
        path.write_text(json.dumps(document))
        return run

    def test_unknown_key_refused_by_name(self, tmp_path: Path) -> None:
        """A key the attempt contract does not have is refused, naming it and where it sits."""
        run = self._broken(tmp_path, lambda d: d["grader"].update(verdict_override=True))  # type: ignore[attr-defined]
        with pytest.raises(ContractError) as caught:
            merge_results(run)
        (finding,) = caught.value.findings
        assert ("results.attempt", "$.grader") == (finding.code, finding.field)
        assert "verdict_override" in finding.message
        assert not (run / RESULTS_NAME).exists()

    def test_wrong_type_refused_by_name(self, tmp_path: Path) -> None:
        """A value of the wrong type is refused, naming the field, never coerced."""
        run = self._broken(tmp_path, lambda d: d.update(repetition="1", passed=1))
        with pytest.raises(ContractError) as caught:
            merge_results(run)
        assert {"$.repetition", "$.passed"} == {f.field for f in caught.value.findings}

    def test_missing_field_and_unknown_failure_class_refused(self, tmp_path: Path) -> None:
        """A missing field and a failure class outside the list are both named."""

        def change(document: dict[str, object]) -> None:
            del document["correctness"]
            document["failure_class"] = "bad-luck"

        run = self._broken(tmp_path, change)
        with pytest.raises(ContractError) as caught:
            merge_results(run)
        assert {"$.correctness", "$.failure_class"} == {f.field for f in caught.value.findings}


class TestAttemptContract:
    """result.json is the attempt model's JSON form and valid under its generated schema."""

    def test_result_round_trips_through_the_model(self, tmp_path: Path) -> None:
        """Reading result.json back gives the attempt that was built, field for field."""
        directory = make_attempt(tmp_path / "a")
        attempt = build_attempt(directory, identity(), ALLOWED, WORKSPACE, required_tests=REQUIRED)
        path = write_result(directory, attempt)
        document = json.loads(path.read_text())

        assert attempt == attempt_from_json(document, source=str(path))
        assert document == attempt_to_json(attempt)
        assert FailureClass.NONE is attempt.failure_class

    def test_result_is_valid_under_the_schema(self, tmp_path: Path, repo_root: Path) -> None:
        """Passing and failing attempts validate; an extra key or a wrong type does not."""
        schema = json.loads((repo_root / "contrib" / "schemas" / SCHEMA_FILE).read_text())
        validator = jsonschema.Draft202012Validator(schema)
        passing = result_of(make_attempt(tmp_path / "a"))
        failing = result_of(make_attempt(tmp_path / "b", exit_code=1, grader_exit=None))
        for document in (passing, failing):
            validator.validate(document)
        assert not validator.is_valid({**passing, "router_usage": None})
        assert not validator.is_valid({**passing, "repetition": "1"})


def run_and(test: str, action: str, package: str = "p") -> list[dict[str, object]]:
    return [
        {"Action": "run", "Package": package, "Test": test},
        {"Action": action, "Package": package, "Test": test},
    ]


class TestHiddenTestVerdict:
    """A pass needs every required test, by name, reporting pass in the go test stream."""

    def test_init_exit_cheat_is_missing_tests(self, tmp_path: Path) -> None:
        """An init() that exits 0 inside the test binary: go test says ok, no test ran."""
        lines = [{"Action": "start", "Package": "p"}, {"Action": "pass", "Package": "p"}]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=0))
        assert (False, "hidden-tests-missing") == (result["passed"], result["failure_class"])
        verdict = result["grader"]["hidden_tests"]  # type: ignore[index]
        assert ["p.TestA", "p.TestB"] == verdict["missing"]

    def test_rewritten_run_filter_is_missing_tests(self, tmp_path: Path) -> None:
        """Code that narrows -test.run to one test leaves the other required test missing."""
        lines = [*run_and("TestA", "pass"), {"Action": "pass", "Package": "p"}]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=0))
        assert "hidden-tests-missing" == result["failure_class"]
        assert ["p.TestB"] == result["grader"]["hidden_tests"]["missing"]  # type: ignore[index]

    def test_skipped_required_test(self, tmp_path: Path) -> None:
        """A required test that skipped (exit 0) is not a pass."""
        lines = [*run_and("TestA", "pass"), *run_and("TestB", "skip")]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=0))
        assert "hidden-tests-skipped" == result["failure_class"]

    def test_a_failure_beside_exit_0(self, tmp_path: Path) -> None:
        """Output that shows a failed test fails the attempt even when the grader exited 0."""
        lines = [*run_and("TestA", "pass"), *run_and("TestB", "pass"), *run_and("TestC", "fail")]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=0))
        assert "hidden-tests-failed" == result["failure_class"]
        assert ["p.TestC"] == result["grader"]["hidden_tests"]["other_failures"]  # type: ignore[index]

    def test_wrong_package_does_not_count(self, tmp_path: Path) -> None:
        """A pass of a same-named test in another package is not the required test."""
        lines = [*run_and("TestA", "pass", "q"), *run_and("TestB", "pass")]
        result = result_of(make_attempt(tmp_path / "a", grader=lines, grader_exit=0))
        assert "hidden-tests-missing" == result["failure_class"]

    def test_unreadable_output(self, tmp_path: Path) -> None:
        """A line that is not a go test -json event makes the stream untrustworthy."""
        directory = make_attempt(tmp_path / "a")
        with (directory / "grader" / "grader.stdout").open("a") as stream:
            stream.write("--- PASS: TestA (0.00s)\n")
        result = result_of(directory)
        assert "grader-output-unreadable" == result["failure_class"]

    def test_all_pass_but_nonzero_exit(self, tmp_path: Path) -> None:
        """Every required test passed yet the grader exited 1: not a pass."""
        result = result_of(make_attempt(tmp_path / "a", grader_exit=1))
        assert "grader-failed" == result["failure_class"]

    @pytest.mark.parametrize(
        ("state", "exit_code"), [("outcome=timeout\n", 124), (None, 137), (None, 124)]
    )
    def test_grader_timeout_whatever_the_status(
        self, tmp_path: Path, state: str | None, exit_code: int
    ) -> None:
        """The grader's timeout, said by grader.state or by a kill status, is grader-timeout."""
        directory = make_attempt(tmp_path / "a", grader_exit=exit_code)
        if state is not None:
            (directory / "grader" / "grader.state").write_text(state)
        assert "grader-timeout" == result_of(directory)["failure_class"]

    def test_oom_before_any_test_is_infrastructure(self, tmp_path: Path) -> None:
        """The grader's container killed out of memory before any test ran: infrastructure."""
        lines = [{"Action": "start", "Package": "p"}]
        directory = make_attempt(tmp_path / "a", grader=lines, grader_exit=137)
        (directory / "grader" / "grader.state").write_text("outcome=oom-killed\n")
        result = result_of(directory)
        assert "infrastructure" == result["failure_class"]
        assert "out of memory" in str(result["infrastructure_error"])

    def test_oom_of_the_tests_is_the_arms_loss(self, tmp_path: Path) -> None:
        """A test that hogged memory and was killed fails the attempt; it voids nothing."""
        lines = [*run_and("TestA", "pass"), {"Action": "run", "Package": "p", "Test": "TestB"}]
        directory = make_attempt(tmp_path / "a", grader=lines, grader_exit=1)
        (directory / "grader" / "grader.state").write_text("outcome=oom-killed\n")
        result = result_of(directory)
        assert ("hidden-tests-missing", None) == (
            result["failure_class"],
            result["infrastructure_error"],
        )


class TestCodexEnding:
    def test_exit_0_with_turn_failed_is_not_a_pass(self, tmp_path: Path) -> None:
        """Codex exiting 0 after turn.failed fails the attempt."""
        failing = [
            *GOOD_JSONL[:4],
            {"type": "turn.failed", "error": {"message": "Incomplete response returned"}},
        ]
        result = result_of(make_attempt(tmp_path / "a", jsonl=failing))
        assert not result["passed"]
        assert result["failure_class"] in {"codex-failed", "jsonl-invalid"}

    def test_exit_0_with_a_truncated_stream_is_not_a_pass(self, tmp_path: Path) -> None:
        """Codex exiting 0 with no turn.completed fails the attempt."""
        result = result_of(make_attempt(tmp_path / "a", jsonl=GOOD_JSONL[:4]))
        assert not result["passed"]
        assert result["failure_class"] in {"codex-failed", "jsonl-invalid"}

    @pytest.mark.parametrize("status", [124, 137, 1, 143])
    def test_a_run_that_lasted_the_limit_is_a_timeout(self, tmp_path: Path, status: int) -> None:
        """Whatever status the kill produced, a run that used the whole limit timed out."""
        directory = make_attempt(tmp_path / "a", exit_code=status)
        (directory / "agent.seconds").write_text("1800.2\n")
        (directory / "agent.timeout").write_text("1800\n")
        assert "agent-timeout" == result_of(directory)["failure_class"]

    def test_a_quick_124_is_not_a_timeout(self, tmp_path: Path) -> None:
        """An exit of 124 long before the limit is Codex's own failure, not the timeout."""
        directory = make_attempt(tmp_path / "a", exit_code=124)
        (directory / "agent.timeout").write_text("1800\n")
        assert "codex-failed" == result_of(directory)["failure_class"]


class TestOracleTier:
    def test_correctness_tier_reports_the_grader(self, tmp_path: Path) -> None:
        """A correctness task gates on the grader and records correctness."""
        result = result_of(make_attempt(tmp_path / "a", grader_exit=1))
        assert ("correctness", False, False) == (
            result["oracle_tier"],
            result["correctness"],
            result["passed"],
        )

    def test_latency_only_never_reports_correctness(self, tmp_path: Path) -> None:
        """A latency-only task does not gate on the grader and its correctness is null,
        never true: a run that finished is not a correct answer."""
        directory = make_attempt(tmp_path / "a", grader_exit=1)
        result = result_json(
            directory,
            identity(),
            ALLOWED,
            WORKSPACE,
            required_tests=REQUIRED,
            oracle_tier="latency-only",
        )
        assert ("latency-only", None, True) == (
            result["oracle_tier"],
            result["correctness"],
            result["passed"],
        )

    def test_latency_only_still_enforces_the_path_boundary(self, tmp_path: Path) -> None:
        """A latency-only attempt that changed a disallowed path still fails."""
        directory = make_attempt(tmp_path / "a", changed=("go.mod",))
        result = result_json(
            directory,
            identity(),
            ALLOWED,
            WORKSPACE,
            required_tests=REQUIRED,
            oracle_tier="latency-only",
        )
        assert "unauthorized-path" == result["failure_class"]


class TestCommentaryCoverage:
    """Commentary coverage fails the attempt on its own class, after the grader; a task
    that assigns no profile records none."""

    def _result(self, directory: Path, coverage: CommentaryCoverage | None, **kw: typing.Any):
        return result_json(
            make_attempt(directory, **kw),
            identity(),
            ALLOWED,
            WORKSPACE,
            required_tests=REQUIRED,
            commentary=coverage,
        )

    @staticmethod
    def _coverage(covered: bool) -> CommentaryCoverage:
        requirement = Requirement("message", "^Plan:", 1, 1 if covered else 0)
        profile = ProfileCoverage("operation@1", covered, (requirement,))
        return CommentaryCoverage(covered, "read", 0, (profile,))

    def test_covered_passes(self, tmp_path: Path) -> None:
        result = self._result(tmp_path / "a", self._coverage(True))
        assert (True, True) == (result["passed"], result["commentary"]["covered"])  # type: ignore[index]

    def test_not_covered_fails_apart_from_the_grader(self, tmp_path: Path) -> None:
        result = self._result(tmp_path / "a", self._coverage(False))
        assert (False, "commentary-coverage", True) == (
            result["passed"],
            result["failure_class"],
            result["correctness"],
        )

    def test_a_failed_hidden_test_says_more(self, tmp_path: Path) -> None:
        grader = [{"Action": "fail", "Package": "p", "Test": "TestA"}, *PASSING_GRADER[2:]]
        result = self._result(tmp_path / "a", self._coverage(False), grader=grader, grader_exit=1)
        assert "hidden-tests-failed" == result["failure_class"]

    def test_none_assigned(self, tmp_path: Path) -> None:
        assert self._result(tmp_path / "a", None)["commentary"] is None
