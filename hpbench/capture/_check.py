"""A hand-written fast path for the record contract.

Structuring every line of a gigabyte capture through cattrs costs tens of microseconds a
record. These functions answer only "does this decoded JSON object match its record
class?", on plain dicts, with the same rules as :data:`hpbench.capture._converter.CONVERTER`:
exact key sets (every field required, no unknown key), ``Count`` a non-negative integer
that is not a boolean, ``Ident`` a non-empty string, enums by value, literals exactly,
lists of shapes. The validator calls cattrs only for a record this path refuses, to name
the field. ``tests/capture/test_check.py`` proves both paths agree on generated and mutated
records.

The functions take values produced by :func:`json.loads`, so ``type(x) is int`` is the
whole integer test (JSON never yields int subclasses other than ``bool``).
"""

from __future__ import annotations

from typing import Any

import attrs

from hpbench.capture import models

_MODES = frozenset(m.value for m in models.RouterMode)
_PROTOCOLS = frozenset(p.value for p in models.Protocol)
_ROLES = frozenset(r.value for r in models.ThreadRole)
_USAGE_STATES = frozenset(s.value for s in models.UsageState)
_CACHED_STATES = frozenset(s.value for s in models.CachedInputState)
_ATTEMPT_OUTCOMES = frozenset(o.value for o in models.AttemptOutcome)
_EXCHANGE_OUTCOMES = frozenset(o.value for o in models.ExchangeOutcome)
_ERROR_CATEGORIES = frozenset(c.value for c in models.CaptureErrorCategory)


def _keys(cls: type[Any]) -> frozenset[str]:
    return frozenset(field.name for field in attrs.fields(cls))


_THREAD_KEYS = _keys(models.ThreadRef)
_USAGE_KEYS = _keys(models.Usage)
_SHAPE_KEYS = _keys(models.ToolShape)
_HPATCH_KEYS = _keys(models.HpatchTelemetry)
_COMPARISON_KEYS = _keys(models.Comparison)
_TRANSPORT_KEYS = _keys(models.Transport)
CLIENT_KEYS = _keys(models.ClientRecord)
PROVIDER_KEYS = _keys(models.ProviderRecord)
EXCHANGE_KEYS = _keys(models.ExchangeRecord)
ERROR_KEYS = _keys(models.ErrorRecord)


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _opt_count(value: Any) -> bool:
    return value is None or (type(value) is int and value >= 0)


def _opt_int(value: Any) -> bool:
    return value is None or type(value) is int


def _opt_str(value: Any) -> bool:
    return value is None or type(value) is str


def _ident(value: Any) -> bool:
    return type(value) is str and value != ""


def _opt_ident(value: Any) -> bool:
    return value is None or (type(value) is str and value != "")


def _one_of(value: Any, allowed: frozenset[str]) -> bool:
    return type(value) is str and value in allowed


def _thread(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _THREAD_KEYS
        and _ident(value["thread_id"])
        and _ident(value["root_thread_id"])
        and _opt_ident(value["parent_thread_id"])
        and _one_of(value["role"], _ROLES)
        and _opt_str(value["subagent"])
    )


def _usage(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _USAGE_KEYS
        and _count(value["input_tokens"])
        and _opt_count(value["cached_input_tokens"])
        and _one_of(value["cached_input_state"], _CACHED_STATES)
        and _opt_count(value["cache_write_input_tokens"])
        and _count(value["output_tokens"])
        and _opt_count(value["reasoning_tokens"])
    )


def _shape(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _SHAPE_KEYS
        and _ident(value["item_type"])
        and _ident(value["name"])
        and _opt_ident(value["namespace"])
        and _count(value["count"])
    )


def _shapes(value: Any) -> bool:
    if type(value) is not list:
        return False
    return all(_shape(item) for item in value)


def _hpatch(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _HPATCH_KEYS
        and _count(value["successes"])
        and _count(value["rejections"])
        and _count(value["corrections"])
        and _count(value["unmatched"])
        and _count(value["diagnostics"])
        and _count(value["carrier_tokens"])
    )


def _comparison(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _COMPARISON_KEYS
        and _count(value["client_bytes"])
        and _count(value["provider_bytes"])
        and type(value["savings_bytes"]) is int
        and _opt_count(value["client_tokens"])
        and _opt_count(value["provider_tokens"])
        and _opt_int(value["savings_tokens"])
    )


def _transport(value: Any) -> bool:
    return (
        type(value) is dict
        and value.keys() == _TRANSPORT_KEYS
        and _count(value["provider_stream_bytes"])
        and _count(value["client_stream_bytes"])
        and _count(value["router_commentary_bytes"])
    )


def _common(value: dict[str, Any]) -> bool:
    version = value["schema_version"]
    return (
        type(version) is int
        and version == models.RECORD_SCHEMA_VERSION
        and _count(value["seq"])
        and _one_of(value["mode"], _MODES)
        and _one_of(value["protocol"], _PROTOCOLS)
    )


def client_ok(value: dict[str, Any]) -> bool:
    """Whether ``value`` matches :class:`~hpbench.capture.models.ClientRecord`."""
    return (
        value.keys() == CLIENT_KEYS
        and value["kind"] == "client"
        and _common(value)
        and _count(value["exchange"])
        and type(value["complete"]) is bool
        and _thread(value["thread"])
        and _opt_str(value["requested_model"])
        and _count(value["request_bytes"])
        and _opt_count(value["request_tokens"])
        and type(value["turn_state_sent"]) is bool
    )


def provider_ok(value: dict[str, Any]) -> bool:
    """Whether ``value`` matches :class:`~hpbench.capture.models.ProviderRecord`."""
    usage = value.get("usage")
    return (
        value.keys() == PROVIDER_KEYS
        and value["kind"] == "provider"
        and _common(value)
        and _count(value["exchange"])
        and _count(value["attempt"])
        and type(value["complete"]) is bool
        and _opt_str(value["request_model"])
        and _count(value["request_bytes"])
        and _opt_count(value["request_tokens"])
        and type(value["turn_state_forwarded"]) is bool
        and type(value["turn_state_returned"]) is bool
        and _opt_count(value["http_status"])
        and _one_of(value["outcome"], _ATTEMPT_OUTCOMES)
        and _one_of(value["usage_state"], _USAGE_STATES)
        and (usage is None or _usage(usage))
        and _opt_str(value["response_model"])
        and _opt_str(value["header_model"])
        and _opt_str(value["provider_request_id"])
        and _shapes(value["emitted_tools"])
        and _count(value["output_bytes"])
        and _count(value["output_text_bytes"])
        and _count(value["stream_bytes"])
        and type(value["delivered"]) is bool
    )


def exchange_ok(value: dict[str, Any]) -> bool:
    """Whether ``value`` matches :class:`~hpbench.capture.models.ExchangeRecord`."""
    return (
        value.keys() == EXCHANGE_KEYS
        and value["kind"] == "exchange"
        and _common(value)
        and _count(value["exchange"])
        and type(value["complete"]) is bool
        and _ident(value["thread_id"])
        and _count(value["attempts"])
        and _opt_count(value["delivered_attempt"])
        and _one_of(value["outcome"], _EXCHANGE_OUTCOMES)
        and _opt_count(value["client_status"])
        and _comparison(value["request"])
        and _comparison(value["output"])
        and _comparison(value["output_text"])
        and _transport(value["transport"])
        and _shapes(value["delivered_tools"])
        and _hpatch(value["hpatch"])
        and type(value["detail_dropped"]) is bool
    )


def error_ok(value: dict[str, Any]) -> bool:
    """Whether ``value`` matches :class:`~hpbench.capture.models.ErrorRecord`."""
    return (
        value.keys() == ERROR_KEYS
        and value["kind"] == "error"
        and _common(value)
        and _opt_count(value["exchange"])
        and _one_of(value["category"], _ERROR_CATEGORIES)
    )


CHECKS = {
    "client": client_ok,
    "provider": provider_ok,
    "exchange": exchange_ok,
    "error": error_ok,
}
"""The fast check for each record ``kind``."""


def record_ok(value: Any) -> bool:
    """Whether a decoded JSON value is a record of any kind that matches its class."""
    if type(value) is not dict:
        return False
    kind = value.get("kind")
    if type(kind) is not str:
        return False
    check = CHECKS.get(kind)
    return check is not None and check(value)
