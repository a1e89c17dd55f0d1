"""Who failed: the provider, the arm's router, or neither, from the router's capture.

When Codex fails, the attempt is void (infrastructure) only when evidence proves
the arm under test was not at fault: the router's capture shows that the
*provider* failed the request (a 5xx or 429 status, no connection, a stream the
provider broke). Whatever originates in the arm's own router is that arm's loss
(``router-failed``): a request the provider answered that still reached Codex
as a failure, an exchange the router never closed, a capture that is missing or
unreadable. Codex's own error text never decides: a router answering 500 makes
Codex say exactly what a provider answering 500 does.

Anything else (the provider answered ``response.failed`` or ``incomplete``, or
refused the request with another 4xx) is not a transport failure: the attempt
stays the model's or the client's failure.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs

from hpbench.capture import (
    AttemptOutcome,
    ClientRecord,
    ExchangeOutcome,
    ExchangeRecord,
    ProviderRecord,
    iter_records,
    record_files,
)
from hpbench.errors import ContractError

# Provider statuses that say the provider, not the request, failed.
RATE_LIMITED = 429
SERVER_ERROR = 500


class Culprit(enum.Enum):
    """Whose failure the capture shows."""

    PROVIDER = "provider"
    ROUTER = "router"
    NONE = "none"


@attrs.frozen
class Attribution:
    """The culprit and, for the record, why."""

    culprit: Culprit
    detail: str


def _provider_failed(attempt: ProviderRecord) -> str | None:
    """What the provider did wrong in this attempt, or None when it answered."""
    if attempt.outcome is AttemptOutcome.CONNECT_ERROR:
        return "no connection to the provider"
    if attempt.outcome is AttemptOutcome.STREAM_ERROR:
        return "the provider's stream broke before it finished"
    status = attempt.http_status
    refused = status is not None and (status == RATE_LIMITED or status >= SERVER_ERROR)
    if attempt.outcome is AttemptOutcome.HTTP_ERROR and refused:
        return f"the provider answered HTTP {status}"
    return None


def attribute(capture: Path) -> Attribution:
    """Read the arm's capture directory and say who failed the failing request."""
    if not capture.is_dir() or not record_files(capture):
        return Attribution(Culprit.ROUTER, "the arm's router left no capture")
    clients: set[int] = set()
    exchanges: dict[int, ExchangeRecord] = {}
    attempts: dict[int, list[ProviderRecord]] = {}
    try:
        for _, _, record in iter_records(capture):
            if isinstance(record, ClientRecord):
                clients.add(record.exchange)
            elif isinstance(record, ExchangeRecord):
                exchanges[record.exchange] = record
            elif isinstance(record, ProviderRecord):
                attempts.setdefault(record.exchange, []).append(record)
    except ContractError as exc:
        return Attribution(Culprit.ROUTER, f"the arm's router capture is unreadable: {exc}")
    unclosed = sorted(clients - exchanges.keys())
    if unclosed:
        return Attribution(
            Culprit.ROUTER,
            f"the router never closed exchange {unclosed[0]} (it stopped mid-request)",
        )
    failed = [e for e in exchanges.values() if e.outcome is ExchangeOutcome.FAILED]
    if not failed:
        return Attribution(Culprit.NONE, "every exchange completed")
    exchange = max(failed, key=lambda e: e.exchange)
    tried = sorted(attempts.get(exchange.exchange, []), key=lambda a: a.attempt)
    if not tried:
        return Attribution(
            Culprit.ROUTER, f"exchange {exchange.exchange} failed without reaching the provider"
        )
    reason = _provider_failed(tried[-1])
    if reason is not None:
        return Attribution(Culprit.PROVIDER, f"exchange {exchange.exchange}: {reason}")
    if tried[-1].outcome is AttemptOutcome.COMPLETED:
        return Attribution(
            Culprit.ROUTER,
            f"exchange {exchange.exchange}: the provider completed it, yet the client got "
            f"a failure (status {exchange.client_status})",
        )
    return Attribution(
        Culprit.NONE,
        f"exchange {exchange.exchange}: the provider's answer was {tried[-1].outcome.value}",
    )
