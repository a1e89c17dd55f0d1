"""The invariants a single record must hold on its own (R8-R13, R17 of ``docs/capture.md``).

Each invariant is one function taking the record and returning ``None`` when it holds, or
the :class:`Problem`: the finding code, the field it names and what is wrong.
:mod:`hpbench.capture._stream` applies them once per record: a client record's through
:func:`thread_role_problem`, the others' through :func:`provider_problem` and
:func:`exchange_problems`. Rules that need
other records (sequence, exchange boundaries, attempts, turn state, the exchange's
figures) are the stream's.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from hpbench.capture import codes
from hpbench.capture._totals import hpatch_idle
from hpbench.capture.models import (
    AttemptOutcome,
    CachedInputState,
    ClientRecord,
    Comparison,
    ExchangeRecord,
    ProviderRecord,
    RouterMode,
    ThreadRole,
    ToolShape,
    UsageState,
)

# Enum members as module constants: reading one off its class costs a descriptor call
# (CPython 3.11), and these are compared for every record.
_REPORTED = UsageState.REPORTED
_EXPLICIT = CachedInputState.EXPLICIT
_CONNECT_ERROR = AttemptOutcome.CONNECT_ERROR
_COMPLETED = AttemptOutcome.COMPLETED
_ROOT = ThreadRole.ROOT
_PASSTHROUGH = RouterMode.PASSTHROUGH


class Problem(NamedTuple):
    """A broken invariant: the finding code, the field it names, and what is wrong."""

    code: str
    field: str
    message: str


def shapes_problem(shapes: tuple[ToolShape, ...]) -> str | None:
    """R11: shapes sorted by (item_type, namespace or "", name), each once, counting >= 1."""
    previous: tuple[str, str, str] | None = None
    for shape in shapes:
        if shape.count < 1:
            return (
                f"tool shape {shape.item_type}:{shape.name} has count {shape.count}; a shape "
                "counts at least 1"
            )
        order = (shape.item_type, shape.namespace or "", shape.name)
        if previous is not None and order <= previous:
            return "tool shapes are not sorted by (item_type, namespace, name) or repeat a shape"
        previous = order
    return None


def comparison_problem(name: str, comparison: Comparison) -> Problem | None:
    """R10: ``savings = client - provider`` for bytes, and for tokens when all three are set."""
    client, provider = comparison.client_bytes, comparison.provider_bytes
    if comparison.savings_bytes != client - provider:
        message = (
            f"{name}.savings_bytes is {comparison.savings_bytes}, but client - provider bytes "
            f"is {client - provider}"
        )
        return Problem(codes.RECORD_INVARIANT, f"$.{name}", message)
    client_tokens, provider_tokens = comparison.client_tokens, comparison.provider_tokens
    savings_tokens = comparison.savings_tokens
    if client_tokens is None and provider_tokens is None and savings_tokens is None:
        return None
    if client_tokens is None or provider_tokens is None or savings_tokens is None:
        message = f"{name} token figures must be all null or all present"
        return Problem(codes.RECORD_INVARIANT, f"$.{name}", message)
    if savings_tokens != client_tokens - provider_tokens:
        message = (
            f"{name}.savings_tokens is {savings_tokens}, but client - provider tokens is "
            f"{client_tokens - provider_tokens}"
        )
        return Problem(codes.RECORD_INVARIANT, f"$.{name}", message)
    return None


# ------------------------------------------------------------------------- client


def thread_role_problem(record: ClientRecord) -> Problem | None:
    """R12: a root has no parent and is its own root; a child has a parent and another root."""
    thread = record.thread
    is_root = thread.role is _ROOT
    if is_root == (thread.parent_thread_id is None) and is_root == (
        thread.root_thread_id == thread.thread_id
    ):
        return None
    return Problem(
        codes.RECORD_INVARIANT,
        "$.thread",
        "a root thread has no parent and is its own root; a child has a parent and another root",
    )


# ----------------------------------------------------------------------- provider


def usage_state_problem(record: ProviderRecord) -> Problem | None:
    """R8: ``usage`` is set exactly when ``usage_state`` is ``reported``."""
    if (record.usage_state is _REPORTED) == (record.usage is not None):
        return None
    return Problem(
        codes.RECORD_INVARIANT, "$.usage", "usage is set exactly when usage_state is 'reported'"
    )


def cached_state_problem(record: ProviderRecord) -> Problem | None:
    """R8: ``cached_input_tokens`` is set exactly when ``cached_input_state`` is explicit."""
    usage = record.usage
    if usage is None or (usage.cached_input_state is _EXPLICIT) == (
        usage.cached_input_tokens is not None
    ):
        return None
    return Problem(
        codes.RECORD_INVARIANT,
        "$.usage.cached_input_tokens",
        "cached_input_tokens is set exactly when cached_input_state is 'explicit'",
    )


def status_presence_problem(record: ProviderRecord) -> Problem | None:
    """R9: ``http_status`` is null exactly when no response arrived (``connect_error``)."""
    if (record.outcome is _CONNECT_ERROR) == (record.http_status is None):
        return None
    return Problem(
        codes.RECORD_INVARIANT,
        "$.http_status",
        "http_status is null exactly when the outcome is 'connect_error'",
    )


def completed_status_problem(record: ProviderRecord) -> Problem | None:
    """R9: a completed attempt has a 2xx status."""
    if record.outcome is not _COMPLETED or 200 <= (record.http_status or 0) < 300:
        return None
    return Problem(
        codes.RECORD_INVARIANT, "$.http_status", "a completed attempt has a 2xx http_status"
    )


def emitted_tools_problem(record: ProviderRecord) -> Problem | None:
    """R11 for the shapes the provider emitted."""
    problem = shapes_problem(record.emitted_tools) if record.emitted_tools else None
    return None if problem is None else Problem(codes.RECORD_INVARIANT, "$.emitted_tools", problem)


# ----------------------------------------------------------------------- exchange


def request_problem(record: ExchangeRecord) -> Problem | None:
    """R10 for the request comparison."""
    return comparison_problem("request", record.request)


def output_problem(record: ExchangeRecord) -> Problem | None:
    """R10 for the output comparison."""
    return comparison_problem("output", record.output)


def output_text_problem(record: ExchangeRecord) -> Problem | None:
    """R10 for the output_text comparison."""
    return comparison_problem("output_text", record.output_text)


def delivered_tools_problem(record: ExchangeRecord) -> Problem | None:
    """R11 for the shapes the client received."""
    problem = shapes_problem(record.delivered_tools) if record.delivered_tools else None
    return (
        None if problem is None else Problem(codes.RECORD_INVARIANT, "$.delivered_tools", problem)
    )


def passthrough_hpatch_problem(record: ExchangeRecord) -> Problem | None:
    """R13: a passthrough router reports no Hpatch telemetry."""
    if record.mode is not _PASSTHROUGH:
        return None
    if not hpatch_idle(record.hpatch):
        return Problem(codes.BINDING, "$.hpatch", "a passthrough router reported Hpatch telemetry")
    return None


_SIGNATURE = re.compile(r"[0-9a-f]{16}")


def hpatch_problem(record: ExchangeRecord) -> Problem | None:
    """R17: the edit-payload comparison holds, and the rejection groups account for every
    rejection once, sorted, with signatures that are digests (never a path or text)."""
    hpatch = record.hpatch
    payload = comparison_problem("hpatch.edit_payload", hpatch.edit_payload)
    if payload is not None:
        return payload
    groups = (
        ("rejection_causes", [(c.cause, c.count) for c in hpatch.rejection_causes]),
        ("rejection_signatures", [(s.signature, s.count) for s in hpatch.rejection_signatures]),
    )
    for name, entries in groups:
        field = f"$.hpatch.{name}"
        keys = [key for key, _ in entries]
        if keys != sorted(set(keys)):
            return Problem(codes.RECORD_INVARIANT, field, f"{name} are not sorted or repeat")
        if any(count < 1 for _, count in entries):
            return Problem(codes.RECORD_INVARIANT, field, f"a group of {name} counts less than 1")
        total = sum(count for _, count in entries)
        if total != hpatch.rejections:
            message = f"{name} account for {total} rejections, the record has {hpatch.rejections}"
            return Problem(codes.RECORD_INVARIANT, field, message)
    for signature in hpatch.rejection_signatures:
        if _SIGNATURE.fullmatch(signature.signature) is None:
            message = "a rejection signature must be 16 lowercase hex digits (a digest)"
            return Problem(codes.RECORD_INVARIANT, "$.hpatch.rejection_signatures", message)
    return None


# ------------------------------------------------------------------------ per kind


def provider_problem(record: ProviderRecord) -> Problem | None:
    """The first broken invariant of a provider record, in the order R8, R9, R11."""
    return (
        usage_state_problem(record)
        or cached_state_problem(record)
        or status_presence_problem(record)
        or completed_status_problem(record)
        or emitted_tools_problem(record)
    )


def exchange_problems(record: ExchangeRecord) -> tuple[Problem | None, ...]:
    """Every invariant of an exchange record: R10 for each comparison, R11, R13, R17."""
    return (
        request_problem(record),
        output_problem(record),
        output_text_problem(record),
        delivered_tools_problem(record),
        passthrough_hpatch_problem(record),
        hpatch_problem(record),
    )
