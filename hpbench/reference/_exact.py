"""The reference router's exact-evidence recorder (``--exact-evidence DIR``, spec 004).

Test equipment, like the rest of the reference router: it writes what spec 004 asks a
treatment router to retain when the benchmark turns exact evidence on, so the runner's
checks (``hpbench/exactevidence``) are exercised end to end. Each completed routed
``hpatch`` or ``hpatch_recover`` call becomes one ``hpbench.hpatch-exact-evidence.v1``
object: its identities (session, thread, the exchange whose request carried the outcome
back, call, chain, attempt, tool, correction, model, outcome) and three exact strings with
their UTF-8 byte lengths and SHA-256 digests: the model's hpatch input, Codex's answer
when the edit applied (the report), or the diagnostic the model read when it did not.
Never a header, a credential, a shell or plugin call, or the apply_patch text Codex ran.

A chain is a call and the ``hpatch_recover`` calls that follow it in its thread: the
first is attempt 1, each correction the next. Each object is published once, mode 0600,
through a unique temporary file in the same directory and an atomic rename, in
``DIR/records/`` (mode 0700). A failure to record is logged and never changes routing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import structlog

from hpbench._jsonio import canonical_json, write_atomic
from hpbench.exactevidence import model as m
from hpbench.reference import _hpatch

log = structlog.get_logger("hpbench.reference.exact")


class ExactRecorder:
    """Publishes one record per completed routed call, and remembers each thread's chain."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = m.records_dir(directory)
        try:
            # At start, so a run that routed no call still shows the flag was honoured.
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("exact evidence: no records directory", error=str(exc))
        # Per thread: the open chain's first call and how many attempts it has had.
        self._chains: dict[str, tuple[str, int]] = {}

    def _place(self, thread: str, attempt: _hpatch.ExactAttempt) -> tuple[str, int]:
        chain = self._chains.get(thread)
        if attempt.tool == _hpatch.RECOVER_TOOL and chain is not None:
            placed = (chain[0], chain[1] + 1)
        else:
            placed = (attempt.call_id, 1)
        self._chains[thread] = placed
        return placed

    def record(
        self,
        *,
        exchange: int,
        session: str,
        thread: str,
        model: str | None,
        attempts: Sequence[_hpatch.ExactAttempt],
    ) -> None:
        """Publish the records of the calls whose outcomes ``exchange``'s request carried."""
        for attempt in attempts:
            chain, number = self._place(thread, attempt)
            correction = attempt.tool == _hpatch.RECOVER_TOOL
            if correction and number == 1:
                # A correction with no call before it in its thread: no chain to place it
                # in, so no record rather than a made-up one (the runner counts it missing).
                log.warning("exact evidence: a correction without a chain", exchange=exchange)
                continue
            try:
                record = m.ExactEvidenceRecord(
                    schema=m.RECORD_SCHEMA,
                    session=m.Name(session),
                    thread=m.Name(thread),
                    exchange=m.Position(exchange),
                    call=m.Name(attempt.call_id),
                    chain=m.Name(chain),
                    attempt=m.Position(number),
                    tool=m.Tool(attempt.tool),
                    correction=correction,
                    model=model,
                    outcome=m.Outcome.APPLIED if attempt.applied else m.Outcome.REJECTED,
                    payload=m.exact_string(attempt.payload),
                    report=m.exact_string(attempt.answer) if attempt.applied else None,
                    diagnostic=None if attempt.applied else m.exact_string(attempt.answer),
                )
                path = self.directory / m.record_name(exchange, attempt.call_id)
                write_atomic(path, canonical_json(m.record_json(record)) + "\n")
            except (OSError, ValueError) as exc:
                # Auxiliary to routing (spec 004): a string that is not UTF-8 (a lone
                # surrogate) or a failed write leaves the record out; the runner reports
                # the retained fraction.
                log.warning("exact evidence: a record was not written", error=str(exc))
