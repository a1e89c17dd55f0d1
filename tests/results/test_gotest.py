"""go test -json counts: unknown is None, never zero."""

from __future__ import annotations

import json
from pathlib import Path

from hpbench.results.gotest import HiddenTestCounts, parse_go_test_file, parse_go_test_json


def event(
    action: str,
    test: str | None = None,
    package: str = "kvstore.example/kv/kv",
    output: str | None = None,
) -> str:
    record: dict[str, object] = {"Action": action, "Package": package}
    if test is not None:
        record["Test"] = test
    if output is not None:
        record["Output"] = output
    return json.dumps(record)


class TestCounts:
    def test_counts_top_level_tests(self) -> None:
        """Subtests do not add to the counts; their parent's verdict does."""
        lines = [
            event("run", "TestA"),
            event("pass", "TestA"),
            event("run", "TestB"),
            event("run", "TestB/case_1"),
            event("fail", "TestB/case_1"),
            event("fail", "TestB"),
            event("skip", "TestC"),
            event("fail"),
        ]
        report = parse_go_test_json(lines)
        assert HiddenTestCounts(passed=1, failed=1, skipped=1) == report.counts
        assert ("TestB",) == report.failed_tests
        assert ("kvstore.example/kv/kv",) == report.failed_packages
        assert not report.build_failed

    def test_build_failure_has_no_counts(self) -> None:
        """A package that does not build ran no test: counts are None, not zeros."""
        lines = [
            "# kvstore.example/kv/kv_test [kvstore.example/kv/kv.test]",
            "kv/rangestream_hidden_test.go:18:11: s.RangeStream undefined",
            event("output", output="FAIL\tkvstore.example/kv/kv [build failed]\n"),
            event("fail"),
        ]
        report = parse_go_test_json(lines)
        assert report.counts is None
        assert report.build_failed
        assert 2 == report.unreadable_lines

    def test_newer_go_build_events(self) -> None:
        """Go 1.24+ reports build output as build-fail events."""
        report = parse_go_test_json(
            [json.dumps({"Action": "build-fail", "ImportPath": "x"}), event("fail")]
        )
        assert report.build_failed
        assert report.counts is None

    def test_empty_output(self) -> None:
        """No output at all: counts unknown."""
        assert parse_go_test_json([]).counts is None

    def test_missing_file(self, tmp_path: Path) -> None:
        """A grader that never wrote output has unknown counts."""
        assert parse_go_test_file(tmp_path / "absent").counts is None

    def test_last_verdict_wins(self) -> None:
        """A test reported twice (e.g. -count=2) keeps one verdict per name."""
        report = parse_go_test_json([event("pass", "TestA"), event("fail", "TestA")])
        assert HiddenTestCounts(passed=0, failed=1, skipped=0) == report.counts
