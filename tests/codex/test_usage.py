"""Codex ``turn.completed`` usage: a count left out or null is unknown, never 0, never a failure."""

from __future__ import annotations

import json

import attrs
import pytest

from hpbench.codex import InvalidLine, Usage, iter_events, summarize
from hpbench.codex.testing import StreamBuilder

FULL = {
    "input_tokens": 300,
    "cached_input_tokens": 30,
    "cache_write_input_tokens": 0,
    "output_tokens": 60,
    "reasoning_output_tokens": 15,
}


def completed(usage: object) -> str:
    return json.dumps({"type": "turn.completed", "usage": usage})


def stream_with(usage_line: str) -> list[str]:
    return [*StreamBuilder().start().message("Done.").lines, usage_line]


@pytest.mark.parametrize("field", sorted(FULL))
@pytest.mark.parametrize("how", ["left out", "null"])
def test_an_unreported_count_is_null_in_the_result(field: str, how: str) -> None:
    """The attempt object copies usage with attrs.asdict: the gap stays null in results.jsonl."""
    usage = dict(FULL)
    if how == "null":
        usage[field] = None
    else:
        del usage[field]
    summary = summarize(iter_events(stream_with(completed(usage))))
    assert summary.usage is not None
    copied = json.loads(json.dumps(attrs.asdict(summary.usage)))
    assert copied[field] is None
    assert all(copied[k] == v for k, v in FULL.items() if k != field)


@pytest.mark.parametrize("field", sorted(FULL))
def test_a_null_count_is_not_a_stream_finding(field: str) -> None:
    """Missing telemetry is not a malformed stream: no finding, so no jsonl-invalid failure."""
    summary = summarize(iter_events(stream_with(completed({**FULL, field: None}))))
    assert () == summary.findings
    assert "completed" == summary.outcome.value


def test_null_usage_object_is_no_usage() -> None:
    """``usage: null`` is an attempt without usage (None), not a usage of zeros."""
    summary = summarize(iter_events(stream_with(completed(None))))
    assert summary.usage is None
    assert () == summary.findings


def test_every_count_null() -> None:
    """An empty usage object is a usage whose every count is unknown."""
    (event,) = iter_events([completed({})])
    assert Usage(None, None, None, None, None) == getattr(event, "usage", "no usage")


@pytest.mark.parametrize("bad", [-1, "12", 1.5, True])
def test_a_malformed_count_is_still_a_finding(bad: object) -> None:
    """A count of the wrong type or below zero is a malformed event, not a gap."""
    (event,) = iter_events([completed({**FULL, "input_tokens": bad})])
    assert isinstance(event, InvalidLine)
    assert "$.usage.input_tokens" == event.finding.field
