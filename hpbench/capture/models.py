"""The capture contract as code: schema-6 records and the ``hpatch.capture.metrics.v4`` snapshot.

A router run with ``--capture-output DIR`` appends **records** to ``DIR/*.jsonl``, one
canonical JSON object per line, and serves a **snapshot** of its aggregate counters on
``/api/metrics``. hpbench reports model consumption only from these two artefacts, and
only after :func:`hpbench.capture.validate_capture` has proven them complete and
consistent with each other.

Every record and snapshot field is required: a value the router does not know is written
as ``null``, never left out and never written as ``0``. Unknown keys are refused, which is
what keeps the contract sanitized: no credentials, no request headers beyond the ones a
field below names, no conversation content.

The field descriptions here are the reference; ``contrib/schemas/`` and the field tables
in ``docs/capture.md`` are generated from them.

Record kinds (``kind``):

``client``
    One per logical client request, written when the request arrives.
``provider``
    One per provider attempt of that request; a retry is another attempt, not another
    logical request.
``exchange``
    One per logical request, written when the client's response is finished; it closes
    the exchange and links the client record to its attempts.
``error``
    A capture error: the router failed to capture something. Any such record makes the
    capture invalid.

.. versionadded:: 0.1.0
"""

from __future__ import annotations

import enum
from typing import Any, Final, Literal, NewType

import attrs

RECORD_SCHEMA_VERSION: Final = 6
"""The ``schema_version`` of every record this contract describes."""

SNAPSHOT_SCHEMA: Final = "hpatch.capture.metrics.v4"
"""The ``schema`` of the metrics snapshot this contract describes."""

Count = NewType("Count", int)
"""A non-negative integer (JSON Schema ``minimum: 0``)."""

Ident = NewType("Ident", str)
"""A non-empty string identifier."""


def doc(text: str) -> dict[str, str]:
    """Field metadata holding a description (read by the schema and docs generators)."""
    return {"doc": text}


class RouterMode(enum.Enum):
    """How the router treats traffic: relay it unchanged, or route edits through Hpatch."""

    PASSTHROUGH = "passthrough"
    HPATCH = "hpatch"


class Protocol(enum.Enum):
    """The model protocol between router and provider."""

    NATIVE = "native"
    CTP2 = "ctp2"


class ThreadRole(enum.Enum):
    """A root thread is what ``codex exec`` started; a child is a sub-agent or mentor thread."""

    ROOT = "root"
    CHILD = "child"


class UsageState(enum.Enum):
    """Whether an attempt's response carried provider usage.

    ``reported``: a usage object with integer input and output counts; ``absent``: no usage
    object (a failed, dropped or refused attempt); ``invalid``: a usage object whose input
    or output count is missing or not a non-negative integer.
    """

    REPORTED = "reported"
    ABSENT = "absent"
    INVALID = "invalid"


class CachedInputState(enum.Enum):
    """How the provider reported ``input_tokens_details.cached_tokens``.

    ``explicit``: a non-negative integer; ``missing``: the key (or its parent object) was
    not there; ``null``: the key was there with ``null``; ``invalid``: anything else.
    Only ``explicit`` carries a count; the other three are kept apart, never read as 0.
    """

    EXPLICIT = "explicit"
    MISSING = "missing"
    NULL = "null"
    INVALID = "invalid"


class AttemptOutcome(enum.Enum):
    """How one provider attempt ended.

    ``completed``: ``response.completed``; ``failed``: ``response.failed``;
    ``incomplete``: ``response.incomplete``; ``http_error``: a non-2xx status;
    ``stream_error``: an ``error`` event, or the stream closed before a terminal event;
    ``connect_error``: no HTTP response at all.
    """

    COMPLETED = "completed"
    FAILED = "failed"
    INCOMPLETE = "incomplete"
    HTTP_ERROR = "http_error"
    STREAM_ERROR = "stream_error"
    CONNECT_ERROR = "connect_error"


class ExchangeOutcome(enum.Enum):
    """How the logical request ended for the client.

    ``completed``: the client received a complete response stream; ``failed``: the client
    received an error (status or failure event); ``client_disconnected``: the client went
    away before the response was finished.
    """

    COMPLETED = "completed"
    FAILED = "failed"
    CLIENT_DISCONNECTED = "client_disconnected"


class CaptureErrorCategory(enum.Enum):
    """Why the router could not capture something (fixed categories, never free text)."""

    STREAM_PARSE = "stream_parse"
    USAGE_PARSE = "usage_parse"
    RECORD_ENCODE = "record_encode"
    INTERNAL = "internal"


# --------------------------------------------------------------------------- records


@attrs.frozen
class ThreadRef:
    """The Codex thread a client request belongs to.

    Taken from the request headers Codex sends: ``thread-id`` (this thread),
    ``session-id`` (its root thread) and ``x-openai-subagent``. A root thread has no
    parent and is its own root; a child names both its parent and its root.
    """

    thread_id: Ident = attrs.field(
        metadata=doc("The `thread-id` request header: the thread this request is for.")
    )
    root_thread_id: Ident = attrs.field(
        metadata=doc(
            "The `session-id` request header: the root thread (equals `thread_id` for a root)."
        )
    )
    parent_thread_id: Ident | None = attrs.field(
        metadata=doc("The thread that spawned this one; null exactly when `role` is `root`.")
    )
    role: ThreadRole = attrs.field(
        metadata=doc("`root` for the thread `codex exec` started, `child` otherwise.")
    )
    subagent: str | None = attrs.field(
        metadata=doc(
            "The `x-openai-subagent` request header (e.g. `collab_spawn`), null when absent."
        )
    )


@attrs.frozen
class Usage:
    """Provider usage of one attempt, as the provider reported it (Responses API names)."""

    input_tokens: Count = attrs.field(
        metadata=doc("`usage.input_tokens` (cached tokens included, not subtracted).")
    )
    cached_input_tokens: Count | None = attrs.field(
        metadata=doc(
            "`usage.input_tokens_details.cached_tokens`; an integer exactly when "
            "`cached_input_state` is `explicit`, null otherwise."
        )
    )
    cached_input_state: CachedInputState = attrs.field(
        metadata=doc(
            "How the cached count was reported: `explicit`, `missing`, `null` or `invalid`."
        )
    )
    cache_write_input_tokens: Count | None = attrs.field(
        metadata=doc(
            "`usage.input_tokens_details.cache_write_tokens`; null when not a non-negative integer."
        )
    )
    output_tokens: Count = attrs.field(
        metadata=doc("`usage.output_tokens` (reasoning tokens included).")
    )
    reasoning_tokens: Count | None = attrs.field(
        metadata=doc(
            "`usage.output_tokens_details.reasoning_tokens`; null when not a non-negative integer."
        )
    )


@attrs.frozen
class ToolShape:
    """How many tool calls of one shape a response carried.

    A shape is the output item ``type`` (``function_call``, ``custom_tool_call``, ...) with
    the tool ``name`` and ``namespace``. Lists of shapes are sorted by
    (``item_type``, ``namespace`` or ``""``, ``name``) and hold each shape once.
    """

    item_type: Ident = attrs.field(metadata=doc("The output item `type`, e.g. `custom_tool_call`."))
    name: Ident = attrs.field(
        metadata=doc("The tool name; for an item without one, its type without `_call`.")
    )
    namespace: Ident | None = attrs.field(
        metadata=doc("The tool namespace, null when the item has none.")
    )
    count: Count = attrs.field(metadata=doc("How many calls of this shape (at least 1)."))


@attrs.frozen
class Comparison:
    """A signed client-versus-provider size comparison.

    ``savings = client - provider``: positive when the provider side is smaller (the router
    saved), negative when it is larger; negative values stay negative. Token figures are
    the router's own estimates and are all null or all present.
    """

    client_bytes: Count = attrs.field(metadata=doc("Size on the client side, in bytes."))
    provider_bytes: Count = attrs.field(metadata=doc("Size on the provider side, in bytes."))
    savings_bytes: int = attrs.field(metadata=doc("`client_bytes - provider_bytes` (signed)."))
    client_tokens: Count | None = attrs.field(
        metadata=doc("Estimated tokens on the client side, or null.")
    )
    provider_tokens: Count | None = attrs.field(
        metadata=doc("Estimated tokens on the provider side, or null.")
    )
    savings_tokens: int | None = attrs.field(
        metadata=doc("`client_tokens - provider_tokens` (signed), or null.")
    )


@attrs.frozen
class RejectionCause:
    """How many Hpatch rejections one cause accounts for."""

    cause: Ident = attrs.field(
        metadata=doc("The router's name for why the edit was refused, e.g. `context_mismatch`.")
    )
    count: Count = attrs.field(metadata=doc("Rejections with this cause (at least 1)."))


@attrs.frozen
class RejectionSignature:
    """How many Hpatch rejections share one signature: the same refusal of the same edit.

    The signature is an opaque digest (16 lowercase hex digits) of the cause, the operation
    and the target paths, so repeated rejections can be counted without a path or any text
    leaving the router.
    """

    signature: Ident = attrs.field(metadata=doc("16 lowercase hex digits."))
    count: Count = attrs.field(metadata=doc("Rejections with this signature (at least 1)."))


@attrs.frozen
class HpatchTelemetry:
    """Hpatch edit-tool outcomes the router correlated during one exchange.

    Every count is 0, every list empty and ``edit_payload`` all zero in ``passthrough``
    mode. An outcome is counted in the exchange whose request carried the result back.
    """

    successes: Count = attrs.field(metadata=doc("Hpatch calls that applied."))
    rejections: Count = attrs.field(
        metadata=doc("Hpatch calls the router rejected (a diagnostic went back).")
    )
    corrections: Count = attrs.field(
        metadata=doc("Calls that corrected an earlier rejected call of the same chain.")
    )
    unmatched: Count = attrs.field(
        metadata=doc("Hpatch outcomes that could not be correlated with a call.")
    )
    diagnostics: Count = attrs.field(
        metadata=doc("Diagnostics the router rendered back to the model.")
    )
    carrier_tokens: Count = attrs.field(
        metadata=doc("Tokens of the tool-call carrier that delivered Hpatch payloads.")
    )
    edit_payload: Comparison = attrs.field(
        metadata=doc(
            "Edit payloads: the client side is what the client was given to execute, the "
            "provider side the Hpatch payloads the model emitted (signed; positive when the "
            "model emitted less)."
        )
    )
    rejection_causes: tuple[RejectionCause, ...] = attrs.field(
        metadata=doc("Rejections grouped by cause, sorted by cause; counts sum to `rejections`.")
    )
    rejection_signatures: tuple[RejectionSignature, ...] = attrs.field(
        metadata=doc(
            "Rejections grouped by signature, sorted by signature; counts sum to `rejections`."
        )
    )


@attrs.frozen
class Transport:
    """Complete response-stream transport, reported apart from the savings."""

    provider_stream_bytes: Count = attrs.field(
        metadata=doc(
            "Bytes of every provider response stream of the exchange, all attempts included."
        )
    )
    client_stream_bytes: Count = attrs.field(
        metadata=doc("Bytes of the response stream delivered to the client.")
    )
    router_commentary_bytes: Count = attrs.field(
        metadata=doc(
            "Bytes of router-generated commentary delivered to the client (excluded from savings)."
        )
    )


@attrs.frozen
class ClientRecord:
    """A logical client request, written when it arrives (``kind: client``)."""

    schema_version: Literal[6] = attrs.field(metadata=doc("Always 6."))
    kind: Literal["client"] = attrs.field(metadata=doc("Always `client`."))
    seq: Count = attrs.field(
        metadata=doc("Position of this record in the capture: 0, 1, 2, ... with no gap.")
    )
    exchange: Count = attrs.field(
        metadata=doc("The exchange number: 0, 1, 2, ... in order of client records, with no gap.")
    )
    mode: RouterMode = attrs.field(
        metadata=doc("The router mode; must equal the snapshot's `router.mode`.")
    )
    protocol: Protocol = attrs.field(
        metadata=doc("The model protocol; must equal the snapshot's `router.protocol`.")
    )
    complete: bool = attrs.field(
        metadata=doc("False when the router could not record every fact of this record.")
    )
    thread: ThreadRef = attrs.field(metadata=doc("The thread this request belongs to."))
    requested_model: str | None = attrs.field(
        metadata=doc("The `model` of the client request body.")
    )
    request_bytes: Count = attrs.field(metadata=doc("Bytes of the client request body."))
    request_tokens: Count | None = attrs.field(
        metadata=doc("Estimated tokens of the client request, or null.")
    )
    turn_state_sent: bool = attrs.field(
        metadata=doc("Whether the client sent an `x-codex-turn-state` header.")
    )


@attrs.frozen
class ProviderRecord:
    """One provider attempt of an exchange (``kind: provider``)."""

    schema_version: Literal[6] = attrs.field(metadata=doc("Always 6."))
    kind: Literal["provider"] = attrs.field(metadata=doc("Always `provider`."))
    seq: Count = attrs.field(metadata=doc("Position of this record in the capture."))
    exchange: Count = attrs.field(metadata=doc("The exchange this attempt belongs to."))
    attempt: Count = attrs.field(
        metadata=doc("0 for the first attempt of the exchange, then 1, 2, ... with no gap.")
    )
    mode: RouterMode = attrs.field(metadata=doc("The router mode."))
    protocol: Protocol = attrs.field(metadata=doc("The model protocol."))
    complete: bool = attrs.field(
        metadata=doc("False when the router could not record every fact of this attempt.")
    )
    request_model: str | None = attrs.field(
        metadata=doc("The `model` of the request the router sent upstream.")
    )
    request_bytes: Count = attrs.field(
        metadata=doc("Bytes of the request body the router sent upstream.")
    )
    request_tokens: Count | None = attrs.field(
        metadata=doc("Estimated tokens of that request, or null.")
    )
    turn_state_forwarded: bool = attrs.field(
        metadata=doc(
            "Whether the client's `x-codex-turn-state` was sent upstream unchanged "
            "(false when the client sent none)."
        )
    )
    turn_state_returned: bool = attrs.field(
        metadata=doc(
            "Whether the provider's response carried `x-codex-turn-state` back to the client."
        )
    )
    http_status: Count | None = attrs.field(
        metadata=doc("The provider's HTTP status; null when none arrived.")
    )
    outcome: AttemptOutcome = attrs.field(metadata=doc("How the attempt ended."))
    usage_state: UsageState = attrs.field(
        metadata=doc("Whether usage was reported; `usage` is set exactly then.")
    )
    usage: Usage | None = attrs.field(
        metadata=doc("Provider usage; non-null exactly when `usage_state` is `reported`.")
    )
    response_model: str | None = attrs.field(
        metadata=doc("Provider-reported model from the response body (`response.model`).")
    )
    header_model: str | None = attrs.field(
        metadata=doc("Provider-reported model from the `openai-model` header.")
    )
    provider_request_id: str | None = attrs.field(
        metadata=doc("The provider's `x-request-id` response header (never shown in summaries).")
    )
    emitted_tools: tuple[ToolShape, ...] = attrs.field(
        metadata=doc("Tool-call shapes the provider emitted.")
    )
    output_bytes: Count = attrs.field(
        metadata=doc(
            "Bytes of the model-origin output array of this response (router commentary and "
            "echoed response metadata excluded)."
        )
    )
    output_text_bytes: Count = attrs.field(
        metadata=doc("Bytes of assistant `output_text` within that array.")
    )
    stream_bytes: Count = attrs.field(
        metadata=doc("Bytes of the complete response stream of this attempt.")
    )
    delivered: bool = attrs.field(
        metadata=doc(
            "Whether this attempt's response was relayed to the client; at most one per exchange."
        )
    )


@attrs.frozen
class ExchangeRecord:
    """The end of a logical request, linking its client record and attempts (``kind: exchange``)."""

    schema_version: Literal[6] = attrs.field(metadata=doc("Always 6."))
    kind: Literal["exchange"] = attrs.field(metadata=doc("Always `exchange`."))
    seq: Count = attrs.field(metadata=doc("Position of this record in the capture."))
    exchange: Count = attrs.field(metadata=doc("The exchange this record closes."))
    mode: RouterMode = attrs.field(metadata=doc("The router mode."))
    protocol: Protocol = attrs.field(metadata=doc("The model protocol."))
    complete: bool = attrs.field(
        metadata=doc("False when the router could not record every fact of this exchange.")
    )
    thread_id: Ident = attrs.field(metadata=doc("Equals the client record's `thread.thread_id`."))
    attempts: Count = attrs.field(
        metadata=doc("How many provider records the exchange has (at least 1).")
    )
    delivered_attempt: Count | None = attrs.field(
        metadata=doc(
            "The `attempt` whose response was relayed to the client, or null when none was."
        )
    )
    outcome: ExchangeOutcome = attrs.field(metadata=doc("How the request ended for the client."))
    client_status: Count | None = attrs.field(
        metadata=doc(
            "The HTTP status the router sent to the client; null when the client left first."
        )
    )
    request: Comparison = attrs.field(
        metadata=doc("Client request body versus the final attempt's provider request body.")
    )
    output: Comparison = attrs.field(
        metadata=doc(
            "Model-origin output array delivered to the client versus as the provider emitted it "
            "in the delivered attempt (0 provider bytes when none was delivered)."
        )
    )
    output_text: Comparison = attrs.field(
        metadata=doc("The same comparison restricted to assistant `output_text`.")
    )
    transport: Transport = attrs.field(metadata=doc("Complete response-stream transport."))
    delivered_tools: tuple[ToolShape, ...] = attrs.field(
        metadata=doc("Tool-call shapes the client received.")
    )
    hpatch: HpatchTelemetry = attrs.field(
        metadata=doc("Hpatch outcomes correlated in this exchange.")
    )
    detail_dropped: bool = attrs.field(
        metadata=doc("True when the router dropped detail of this exchange.")
    )


@attrs.frozen
class ErrorRecord:
    """A capture error (``kind: error``). Its presence makes the capture invalid."""

    schema_version: Literal[6] = attrs.field(metadata=doc("Always 6."))
    kind: Literal["error"] = attrs.field(metadata=doc("Always `error`."))
    seq: Count = attrs.field(metadata=doc("Position of this record in the capture."))
    exchange: Count | None = attrs.field(metadata=doc("The exchange concerned, or null."))
    mode: RouterMode = attrs.field(metadata=doc("The router mode."))
    protocol: Protocol = attrs.field(metadata=doc("The model protocol."))
    category: CaptureErrorCategory = attrs.field(metadata=doc("What failed."))


Record = ClientRecord | ProviderRecord | ExchangeRecord | ErrorRecord
"""Any schema-6 record."""

RECORD_CLASSES: Final[dict[str, type[Any]]] = {
    "client": ClientRecord,
    "provider": ProviderRecord,
    "exchange": ExchangeRecord,
    "error": ErrorRecord,
}
"""Record class by ``kind``."""


# -------------------------------------------------------------------------- snapshot


@attrs.frozen
class RouterConfig:
    """The configuration the router ran with."""

    mode: RouterMode = attrs.field(metadata=doc("`passthrough` (stock relay) or `hpatch`."))
    protocol: Protocol = attrs.field(metadata=doc("`native` or `ctp2`."))
    mentor: bool = attrs.field(metadata=doc("Whether Mentor Handoff was enabled."))


@attrs.frozen
class CaptureHealth:
    """What the capture writer did; any failure counter above 0 makes the capture invalid."""

    record_schema_version: Literal[6] = attrs.field(
        metadata=doc("The schema version of the records: 6.")
    )
    records_written: Count = attrs.field(
        metadata=doc("Records appended to the capture files (all kinds).")
    )
    client_records: Count = attrs.field(metadata=doc("`client` records written."))
    provider_records: Count = attrs.field(metadata=doc("`provider` records written."))
    exchange_records: Count = attrs.field(metadata=doc("`exchange` records written."))
    error_records: Count = attrs.field(metadata=doc("`error` records written."))
    write_failures: Count = attrs.field(metadata=doc("Records the writer failed to append."))
    skipped_requests: Count = attrs.field(
        metadata=doc("Client requests the router served without capturing them.")
    )
    dropped_exchange_detail: Count = attrs.field(
        metadata=doc("Exchanges whose detail the router dropped.")
    )
    capture_errors: Count = attrs.field(metadata=doc("Capture errors, written or not."))


@attrs.frozen
class RequestTotals:
    """Logical requests and provider attempts."""

    logical_requests: Count = attrs.field(
        metadata=doc("Client requests (exchanges); retries are not counted here.")
    )
    provider_attempts: Count = attrs.field(metadata=doc("Provider attempts, retries included."))
    retries: Count = attrs.field(metadata=doc("`provider_attempts - logical_requests`."))
    delivered_attempts: Count = attrs.field(
        metadata=doc("Attempts whose response was relayed to the client.")
    )
    attempts_with_usage: Count = attrs.field(
        metadata=doc("Attempts whose `usage_state` is `reported`.")
    )
    attempts_without_usage: Count = attrs.field(
        metadata=doc("Attempts whose `usage_state` is `absent`.")
    )
    attempts_invalid_usage: Count = attrs.field(
        metadata=doc("Attempts whose `usage_state` is `invalid`.")
    )


@attrs.frozen
class UsageTotals:
    """Sums of provider usage over attempts, with counts of what was not reported.

    A sum covers only attempts that reported the figure; the ``*_missing`` and
    ``cached_input_*`` counts say how many attempts did not, so an absent figure is never
    read as 0.
    """

    input_tokens: Count = attrs.field(metadata=doc("Sum of `input_tokens`."))
    cached_input_tokens: Count = attrs.field(metadata=doc("Sum of explicit `cached_input_tokens`."))
    cache_write_input_tokens: Count = attrs.field(
        metadata=doc("Sum of reported `cache_write_input_tokens`.")
    )
    output_tokens: Count = attrs.field(metadata=doc("Sum of `output_tokens`."))
    reasoning_tokens: Count = attrs.field(metadata=doc("Sum of reported `reasoning_tokens`."))
    cached_input_explicit: Count = attrs.field(
        metadata=doc("Usage-bearing attempts with an explicit cached count.")
    )
    cached_input_missing: Count = attrs.field(
        metadata=doc("Usage-bearing attempts whose cached count was missing.")
    )
    cached_input_null: Count = attrs.field(
        metadata=doc("Usage-bearing attempts whose cached count was null.")
    )
    cached_input_invalid: Count = attrs.field(
        metadata=doc("Usage-bearing attempts whose cached count was invalid.")
    )
    cache_write_missing: Count = attrs.field(
        metadata=doc("Usage-bearing attempts without a cache-write count.")
    )
    reasoning_missing: Count = attrs.field(
        metadata=doc("Usage-bearing attempts without a reasoning count.")
    )


@attrs.frozen
class ModelTotals:
    """Provider attempts by thread role and model, usage-bearing or not."""

    role: ThreadRole = attrs.field(metadata=doc("Root (parent) or child traffic."))
    request_model: str | None = attrs.field(
        metadata=doc("The model the router requested upstream.")
    )
    response_model: str | None = attrs.field(metadata=doc("The provider-reported response model."))
    header_model: str | None = attrs.field(metadata=doc("The provider-reported header model."))
    attempts: Count = attrs.field(metadata=doc("Attempts with this combination."))
    attempts_with_usage: Count = attrs.field(
        metadata=doc("Of those, attempts whose usage was reported.")
    )


@attrs.frozen
class ThreadTotals:
    """Per-thread totals; ``delivered_usage`` is what Codex itself saw for the thread."""

    thread_id: Ident = attrs.field(metadata=doc("The thread."))
    root_thread_id: Ident = attrs.field(metadata=doc("Its root thread."))
    parent_thread_id: Ident | None = attrs.field(
        metadata=doc("Its parent thread, null for a root.")
    )
    role: ThreadRole = attrs.field(metadata=doc("`root` or `child`."))
    logical_requests: Count = attrs.field(metadata=doc("Client requests of this thread."))
    provider_attempts: Count = attrs.field(metadata=doc("Provider attempts of this thread."))
    usage: UsageTotals = attrs.field(
        metadata=doc("Usage over all attempts of the thread (retries included).")
    )
    delivered_usage: UsageTotals = attrs.field(
        metadata=doc(
            "Usage over the attempts relayed to the client only; for a root thread this must "
            "equal Codex's last `turn.completed` usage."
        )
    )


@attrs.frozen
class SavingsTotals:
    """Signed savings summed over exchanges, with transport kept apart."""

    request: Comparison = attrs.field(metadata=doc("Client versus final provider request, summed."))
    output: Comparison = attrs.field(
        metadata=doc("Model-origin output array, client versus provider, summed.")
    )
    output_text: Comparison = attrs.field(
        metadata=doc("Assistant `output_text`, client versus provider, summed.")
    )
    transport: Transport = attrs.field(metadata=doc("Complete response-stream transport, summed."))


@attrs.frozen
class ToolTotals:
    """Tool-call shapes summed over the capture."""

    provider_emitted: tuple[ToolShape, ...] = attrs.field(
        metadata=doc("Shapes emitted by the provider, all attempts.")
    )
    client_delivered: tuple[ToolShape, ...] = attrs.field(
        metadata=doc("Shapes delivered to the client.")
    )


@attrs.frozen
class MetricsSnapshot:
    """The ``/api/metrics`` document (``schema: hpatch.capture.metrics.v4``).

    Every total is a plain sum over the records, so the validator can recompute and
    compare each one. Lists are sorted: ``models`` by (role, request, response, header
    model; null first), ``threads`` by ``thread_id``.
    """

    schema: Literal["hpatch.capture.metrics.v4"] = attrs.field(
        metadata=doc("Always `hpatch.capture.metrics.v4`.")
    )
    router: RouterConfig = attrs.field(metadata=doc("The router's configuration."))
    capture: CaptureHealth = attrs.field(metadata=doc("Capture health."))
    requests: RequestTotals = attrs.field(metadata=doc("Logical requests and attempts."))
    usage: UsageTotals = attrs.field(metadata=doc("Provider usage over all attempts."))
    savings: SavingsTotals = attrs.field(metadata=doc("Signed savings and transport."))
    tools: ToolTotals = attrs.field(metadata=doc("Tool-call shapes."))
    hpatch: HpatchTelemetry = attrs.field(metadata=doc("Hpatch outcomes summed over exchanges."))
    models: tuple[ModelTotals, ...] = attrs.field(
        metadata=doc("Attempts per role and provider-reported model.")
    )
    threads: tuple[ThreadTotals, ...] = attrs.field(metadata=doc("Totals per thread."))


__all__ = [
    "RECORD_CLASSES",
    "RECORD_SCHEMA_VERSION",
    "SNAPSHOT_SCHEMA",
    "AttemptOutcome",
    "CachedInputState",
    "CaptureErrorCategory",
    "CaptureHealth",
    "ClientRecord",
    "Comparison",
    "Count",
    "ErrorRecord",
    "ExchangeOutcome",
    "ExchangeRecord",
    "HpatchTelemetry",
    "Ident",
    "MetricsSnapshot",
    "ModelTotals",
    "Protocol",
    "ProviderRecord",
    "Record",
    "RequestTotals",
    "RouterConfig",
    "RouterMode",
    "SavingsTotals",
    "ThreadRef",
    "ThreadRole",
    "ThreadTotals",
    "ToolShape",
    "ToolTotals",
    "Transport",
    "Usage",
    "UsageState",
    "UsageTotals",
    "doc",
]
