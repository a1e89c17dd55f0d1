"""Attempt results: go test counts, the attempt object and its pass decision, the merge."""

from hpbench.results.attempt import (
    ATTEMPT_SCHEMA,
    AttemptIdentity,
    FailureClass,
    build_result,
    decide,
    write_result,
)
from hpbench.results.gotest import GoTestCounts, GoTestReport, parse_go_test_file
from hpbench.results.merge import load_attempts, merge_results

__all__ = [
    "ATTEMPT_SCHEMA",
    "AttemptIdentity",
    "FailureClass",
    "GoTestCounts",
    "GoTestReport",
    "build_result",
    "decide",
    "load_attempts",
    "merge_results",
    "parse_go_test_file",
    "write_result",
]
