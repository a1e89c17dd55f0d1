"""Attempt results: go test counts, the attempt object and its pass decision, the merge."""

from hpbench.results.attempt import (
    AttemptIdentity,
    build_attempt,
    decide,
    write_result,
)
from hpbench.results.gotest import HiddenTestCounts, HiddenTestReport, parse_go_test_file
from hpbench.results.merge import load_attempts, merge_results
from hpbench.results.model import (
    ATTEMPT_SCHEMA,
    Attempt,
    FailureClass,
    attempt_from_json,
    attempt_to_json,
)

__all__ = [
    "ATTEMPT_SCHEMA",
    "Attempt",
    "AttemptIdentity",
    "FailureClass",
    "HiddenTestCounts",
    "HiddenTestReport",
    "attempt_from_json",
    "attempt_to_json",
    "build_attempt",
    "decide",
    "load_attempts",
    "merge_results",
    "parse_go_test_file",
    "write_result",
]
