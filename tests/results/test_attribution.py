"""Who failed: the capture tells a provider failure (void) from the router's own (a loss)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hpbench.capture.models import RouterMode
from hpbench.capture.synthetic import write_synthetic_capture
from hpbench.results.attribution import Culprit, attribute

Records = list[dict[str, Any]]


def capture(tmp_path: Path, change: Callable[[Records], None] | None = None) -> Path:
    """A valid passthrough capture of three exchanges, then ``change`` applied to its lines."""
    directory = tmp_path / "capture"
    write_synthetic_capture(
        directory, mode=RouterMode.PASSTHROUGH, exchanges=3, retry_every=0, child_every=0
    )
    (path,) = sorted(directory.glob("*.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    if change is not None:
        change(records)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return directory


def last(records: Records, kind: str) -> dict[str, Any]:
    return [r for r in records if r["kind"] == kind][-1]


def fail_last_exchange(status: int | None, outcome: str) -> Callable[[Records], None]:
    """The last exchange failed for the client; its provider attempt ended as given."""

    def change(records: Records) -> None:
        exchange = last(records, "exchange")
        exchange.update(outcome="failed", client_status=status, delivered_attempt=None)
        attempt = last(records, "provider")
        attempt.update(outcome=outcome, http_status=status, delivered=False)

    return change


def test_all_completed_blames_nobody(tmp_path: Path) -> None:
    """A capture in which every exchange completed: not a transport failure."""
    assert Culprit.NONE is attribute(capture(tmp_path)).culprit


@pytest.mark.parametrize(
    ("status", "outcome", "text"),
    [
        (500, "http_error", "HTTP 500"),
        (503, "http_error", "HTTP 503"),
        (429, "http_error", "HTTP 429"),
        (None, "connect_error", "no connection"),
        (None, "stream_error", "stream broke"),
    ],
)
def test_a_provider_failure_is_the_providers(
    tmp_path: Path, status: int | None, outcome: str, text: str
) -> None:
    """The provider refused, dropped or was unreachable: infrastructure, not the arm."""
    found = attribute(capture(tmp_path, fail_last_exchange(status, outcome)))
    assert Culprit.PROVIDER is found.culprit
    assert text in found.detail


def test_a_completed_answer_that_reached_the_client_as_a_failure_is_the_routers(
    tmp_path: Path,
) -> None:
    """The provider completed the request, yet the router gave the client a 500."""

    def change(records: Records) -> None:
        last(records, "exchange").update(outcome="failed", client_status=500)

    found = attribute(capture(tmp_path, change))
    assert Culprit.ROUTER is found.culprit
    assert "completed it" in found.detail


def test_an_exchange_the_router_never_closed_is_the_routers(tmp_path: Path) -> None:
    """A router that died mid-request leaves a client record without its exchange."""

    def change(records: Records) -> None:
        records.remove(last(records, "exchange"))

    assert Culprit.ROUTER is attribute(capture(tmp_path, change)).culprit


@pytest.mark.parametrize("kind", ["missing", "empty", "garbage"])
def test_no_readable_capture_is_the_routers(tmp_path: Path, kind: str) -> None:
    """A missing, empty or unreadable capture is the arm's router failing, never a void."""
    directory = tmp_path / "capture"
    if kind != "missing":
        directory.mkdir()
    if kind == "garbage":
        (directory / "records.jsonl").write_text("{not json\n")
    assert Culprit.ROUTER is attribute(directory).culprit


@pytest.mark.parametrize(
    ("status", "outcome"), [(200, "incomplete"), (200, "failed"), (400, "http_error")]
)
def test_a_model_or_request_failure_blames_no_transport(
    tmp_path: Path, status: int, outcome: str
) -> None:
    """response.incomplete, response.failed or a 400 are not transport failures."""
    found = attribute(capture(tmp_path, fail_last_exchange(status, outcome)))
    assert Culprit.NONE is found.culprit
