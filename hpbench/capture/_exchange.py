"""One logical client request being captured: its attempts, then its exchange record.

:class:`ExchangeCapture` comes from :meth:`hpbench.capture.CaptureWriter.begin`; it
derives the exchange's attempt numbers, final provider request size, delivered attempt
and signed savings from what it was given, so a router cannot get them inconsistent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from hpbench.capture.models import (
    RECORD_SCHEMA_VERSION,
    AttemptOutcome,
    ClientRecord,
    Comparison,
    Count,
    ExchangeOutcome,
    ExchangeRecord,
    HpatchTelemetry,
    Ident,
    ProviderRecord,
    RejectionCause,
    RejectionSignature,
    ToolShape,
    Transport,
)
from hpbench.capture.readings import NO_USAGE, UsageReading

if TYPE_CHECKING:
    from hpbench.capture.writer import CaptureWriter


def _comparison(
    client_bytes: int, provider_bytes: int, client_tokens: int | None, provider_tokens: int | None
) -> Comparison:
    tokens_known = client_tokens is not None and provider_tokens is not None
    return Comparison(
        client_bytes=Count(client_bytes),
        provider_bytes=Count(provider_bytes),
        savings_bytes=client_bytes - provider_bytes,
        client_tokens=Count(client_tokens) if tokens_known and client_tokens is not None else None,
        provider_tokens=(
            Count(provider_tokens) if tokens_known and provider_tokens is not None else None
        ),
        savings_tokens=(
            client_tokens - provider_tokens
            if client_tokens is not None and provider_tokens is not None
            else None
        ),
    )


NO_HPATCH = HpatchTelemetry(
    successes=Count(0),
    rejections=Count(0),
    corrections=Count(0),
    unmatched=Count(0),
    diagnostics=Count(0),
    carrier_tokens=Count(0),
    edit_payload=_comparison(0, 0, 0, 0),
    rejection_causes=(),
    rejection_signatures=(),
)
"""Hpatch telemetry of an exchange in which Hpatch did nothing (always so in passthrough)."""


def hpatch_telemetry(
    *,
    successes: int = 0,
    corrections: int = 0,
    unmatched: int = 0,
    diagnostics: int = 0,
    carrier_tokens: int = 0,
    client_payload: tuple[int, int | None] = (0, 0),
    provider_payload: tuple[int, int | None] = (0, 0),
    causes: Mapping[str, int] | None = None,
    signatures: Mapping[str, int] | None = None,
) -> HpatchTelemetry:
    """One exchange's Hpatch telemetry, with its derived fields computed here.

    ``client_payload`` and ``provider_payload`` are (bytes, estimated tokens or None) of the
    edit payloads; ``causes`` and ``signatures`` map each rejection's cause and signature
    to a count. ``rejections`` is their total, so the groups cannot disagree with it.
    """
    causes = dict(causes or {})
    signatures = dict(signatures or {})
    rejections = sum(causes.values())
    if sum(signatures.values()) != rejections:
        msg = "rejection signatures and causes must count the same rejections"
        raise ValueError(msg)
    return HpatchTelemetry(
        successes=Count(successes),
        rejections=Count(rejections),
        corrections=Count(corrections),
        unmatched=Count(unmatched),
        diagnostics=Count(diagnostics),
        carrier_tokens=Count(carrier_tokens),
        edit_payload=_comparison(
            client_payload[0], provider_payload[0], client_payload[1], provider_payload[1]
        ),
        rejection_causes=tuple(
            RejectionCause(cause=Ident(cause), count=Count(count))
            for cause, count in sorted(causes.items())
            if count
        ),
        rejection_signatures=tuple(
            RejectionSignature(signature=Ident(signature), count=Count(count))
            for signature, count in sorted(signatures.items())
            if count
        ),
    )


class ExchangeCapture:
    """One logical client request being captured; from :meth:`CaptureWriter.begin`."""

    def __init__(self, writer: CaptureWriter, client: ClientRecord) -> None:
        self._writer = writer
        self.client = client
        self.attempts: list[ProviderRecord] = []
        self.finished: ExchangeRecord | None = None

    @property
    def exchange(self) -> int:
        """This exchange's number."""
        return self.client.exchange

    def attempt(
        self,
        *,
        request_model: str | None,
        request_bytes: int,
        http_status: int | None,
        outcome: AttemptOutcome,
        usage: UsageReading = NO_USAGE,
        response_model: str | None = None,
        header_model: str | None = None,
        provider_request_id: str | None = None,
        emitted_tools: Iterable[ToolShape] = (),
        output_bytes: int = 0,
        output_text_bytes: int = 0,
        stream_bytes: int = 0,
        delivered: bool = False,
        turn_state_forwarded: bool = False,
        turn_state_returned: bool = False,
        request_tokens: int | None = None,
        complete: bool = True,
    ) -> ProviderRecord:
        """Record one provider attempt (a retry is another call) and append its record.

        ``delivered`` says this attempt's response stream was relayed to the client; at
        most one attempt of an exchange may be delivered.
        """
        if self.finished is not None:
            msg = f"exchange {self.exchange} is already finished"
            raise ValueError(msg)
        if delivered and any(a.delivered for a in self.attempts):
            msg = f"exchange {self.exchange} already delivered an attempt"
            raise ValueError(msg)
        writer = self._writer
        return writer._append(
            lambda seq: ProviderRecord(
                schema_version=RECORD_SCHEMA_VERSION,
                kind="provider",
                seq=Count(seq),
                exchange=Count(self.exchange),
                attempt=Count(len(self.attempts)),
                mode=writer.mode,
                protocol=writer.protocol,
                complete=complete,
                request_model=request_model,
                request_bytes=Count(request_bytes),
                request_tokens=Count(request_tokens) if request_tokens is not None else None,
                turn_state_forwarded=turn_state_forwarded,
                turn_state_returned=turn_state_returned,
                http_status=Count(http_status) if http_status is not None else None,
                outcome=outcome,
                usage_state=usage.state,
                usage=usage.usage,
                response_model=response_model,
                header_model=header_model,
                provider_request_id=provider_request_id,
                emitted_tools=tuple(emitted_tools),
                output_bytes=Count(output_bytes),
                output_text_bytes=Count(output_text_bytes),
                stream_bytes=Count(stream_bytes),
                delivered=delivered,
            ),
            self.attempts,
        )

    def finish(
        self,
        *,
        outcome: ExchangeOutcome,
        client_status: int | None,
        client_output_bytes: int = 0,
        client_output_text_bytes: int = 0,
        client_stream_bytes: int = 0,
        router_commentary_bytes: int = 0,
        delivered_tools: Iterable[ToolShape] = (),
        hpatch: HpatchTelemetry = NO_HPATCH,
        client_output_tokens: int | None = None,
        provider_output_tokens: int | None = None,
        client_output_text_tokens: int | None = None,
        provider_output_text_tokens: int | None = None,
        detail_dropped: bool = False,
        complete: bool = True,
    ) -> ExchangeRecord:
        """Close the exchange and append its record.

        ``client_output_bytes`` is the model-origin output array as delivered to the
        client, without router commentary (``router_commentary_bytes``) or echoed response
        metadata. Sizes of the provider side come from the attempts.
        """
        if self.finished is not None:
            msg = f"exchange {self.exchange} is already finished"
            raise ValueError(msg)
        writer = self._writer
        attempts = self.attempts
        final = attempts[-1] if attempts else None
        delivered = next((a for a in attempts if a.delivered), None)
        request = _comparison(
            self.client.request_bytes,
            final.request_bytes if final is not None else 0,
            self.client.request_tokens,
            final.request_tokens if final is not None else None,
        )
        output = _comparison(
            client_output_bytes,
            delivered.output_bytes if delivered is not None else 0,
            client_output_tokens,
            provider_output_tokens,
        )
        output_text = _comparison(
            client_output_text_bytes,
            delivered.output_text_bytes if delivered is not None else 0,
            client_output_text_tokens,
            provider_output_text_tokens,
        )
        finished: list[ExchangeRecord] = []
        record = writer._append(
            lambda seq: ExchangeRecord(
                schema_version=RECORD_SCHEMA_VERSION,
                kind="exchange",
                seq=Count(seq),
                exchange=Count(self.exchange),
                mode=writer.mode,
                protocol=writer.protocol,
                complete=complete,
                thread_id=self.client.thread.thread_id,
                attempts=Count(len(attempts)),
                delivered_attempt=delivered.attempt if delivered is not None else None,
                outcome=outcome,
                client_status=Count(client_status) if client_status is not None else None,
                request=request,
                output=output,
                output_text=output_text,
                transport=Transport(
                    provider_stream_bytes=Count(sum(a.stream_bytes for a in attempts)),
                    client_stream_bytes=Count(client_stream_bytes),
                    router_commentary_bytes=Count(router_commentary_bytes),
                ),
                delivered_tools=tuple(delivered_tools),
                hpatch=hpatch,
                detail_dropped=detail_dropped,
            ),
            finished,
        )
        self.finished = record
        return record
