"""Proof from the scripted provider's own records that an arm received exactly its file.

The provider records, for every request, the SHA-256 of the first developer
message (``request.first_developer_sha256``) and never the text. Every request
of an arm's script must carry the digest of that arm's instructions file as
Codex sends it (minus one trailing newline). A Mentor consultation (a request the
router makes, recorded with ``"mentor": true``) is not Codex's and is not counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from hpbench.instructions.derive import delivered_digest


@attrs.frozen
class DeliveryProof:
    """How many of an arm's recorded requests carried the expected instructions."""

    script: str
    expected_sha256: str
    requests: int
    matching: int
    unreadable_lines: int

    @property
    def ok(self) -> bool:
        """At least one request, and every one carried the file."""
        return self.requests > 0 and self.matching == self.requests and not self.unreadable_lines


def prove_delivery(records: Path, script: str, instructions_file: Path) -> DeliveryProof:
    """Check every record of ``script`` in the provider's JSONL request records."""
    expected = delivered_digest(instructions_file)
    requests = matching = unreadable = 0
    with records.open(encoding="utf-8") as stream:
        for line in stream:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                unreadable += 1
                continue
            if not isinstance(record, dict) or record.get("script") != script:
                continue
            if record.get("mentor") is True:
                # The router's own Mentor consultation carries the mentor's instructions,
                # not the arm's; the capture's child proofs account for it.
                continue
            requests += 1
            request = record.get("request")
            if isinstance(request, dict) and request.get("first_developer_sha256") == expected:
                matching += 1
    return DeliveryProof(script, expected, requests, matching, unreadable)
