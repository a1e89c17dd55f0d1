"""What the reference router changes between Codex and the provider, by mode and protocol.

``passthrough``/``native`` changes nothing, and the relay does not consult this module
at all: Codex's bytes go upstream and the provider's bytes come back unchanged.
``--mode hpatch`` adds the reference Hpatch edit routing (:mod:`._hpatch`) and
``--protocol ctp2`` the reference CTP/2 codec (:mod:`._ctp2`); both are test equipment.
With both, Hpatch goes first on the way up, so the provider's own calls are restored
before anything is compressed, and on the way down.

One :class:`Routing` follows one exchange: the body sent upstream on every attempt (a
retry resends the same bytes), and what routing did, which becomes the exchange's
Hpatch telemetry. Outcomes of routed calls are counted in the exchange whose request
carried them back; carrier tokens, edit payloads and unmatched calls in the exchange
whose response delivered them.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

import attrs
import structlog

from hpbench.capture import HpatchTelemetry, Protocol, RouterMode, hpatch_telemetry
from hpbench.reference import _ctp2, _hpatch, _issues
from hpbench.reference._usage import tokens_for

log = structlog.get_logger("hpbench.reference.router")

DROP: Final = object()
"""An event the client must not see (the raw Hpatch input streaming as deltas)."""

_ITEM_EVENTS = frozenset({"response.output_item.added", "response.output_item.done"})
_TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})
# A real provider streams a custom tool call's input; once the call is translated, the
# client must only see the apply_patch it is given, never the Hpatch text.
# The same holds for a report_issue call's arguments: the call is the router's.
_INPUT_STREAM_EVENTS = frozenset(
    {
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
    }
)


@attrs.define
class Routing:
    """One exchange's routing: the upstream body, the client's history, what was done."""

    upstream_body: bytes
    history: list[Any] = attrs.field(factory=list)
    upstream: dict[str, Any] | None = None
    successes: int = 0
    corrections: int = 0
    unmatched: int = 0
    diagnostics: int = 0
    client_payload_bytes: int = 0
    provider_payload_bytes: int = 0
    causes: Counter[str] = attrs.field(factory=Counter)
    signatures: Counter[str] = attrs.field(factory=Counter)
    hidden_items: set[str] = attrs.field(factory=set)
    expanded: int = 0
    unresolved: int = 0
    # The completed calls' exact strings (only with exact evidence on).
    exact: list[_hpatch.ExactAttempt] = attrs.field(factory=list)
    # The report_issue calls the provider's response made, as the hook's input (only with
    # issue reporting on); completed once the exchange is.
    reports: list[bytes] = attrs.field(factory=list)

    def append_input(self, item: dict[str, Any]) -> None:
        """Add one item at the end of what goes upstream (the mentor's handoff)."""
        if self.upstream is None:
            return
        self.upstream = {**self.upstream, "input": [*self.upstream["input"], item]}
        self.upstream_body = _encode(self.upstream)

    def take(self, outcome: _hpatch.Outcome) -> None:
        """Count one routed call's outcome, first seen in this exchange's request."""
        if outcome.applied:
            if outcome.tool == _hpatch.RECOVER_TOOL:
                self.corrections += 1
            else:
                self.successes += 1
            return
        self.causes[outcome.cause or "other"] += 1
        if outcome.signature is not None:
            self.signatures[outcome.signature] += 1
        self.diagnostics += outcome.diagnostic

    def telemetry(self) -> HpatchTelemetry:
        """The exchange's Hpatch telemetry."""
        return hpatch_telemetry(
            successes=self.successes,
            corrections=self.corrections,
            unmatched=self.unmatched,
            diagnostics=self.diagnostics,
            carrier_tokens=tokens_for(self.provider_payload_bytes),
            client_payload=(self.client_payload_bytes, tokens_for(self.client_payload_bytes)),
            provider_payload=(
                self.provider_payload_bytes,
                tokens_for(self.provider_payload_bytes),
            ),
            causes=self.causes,
            signatures=self.signatures,
        )


class Transform:
    """The router's changes for its mode and protocol; inactive for passthrough/native.

    It keeps one piece of state: which (thread, call_id) outcomes were already counted,
    because Codex resends the whole history with every request.
    """

    def __init__(
        self,
        mode: RouterMode,
        protocol: Protocol,
        *,
        mentor: bool = False,
        exact: bool = False,
        report_issue: bool = False,
    ) -> None:
        self.hpatch = mode is RouterMode.HPATCH
        self.ctp2 = protocol is Protocol.CTP2
        self.mentor = mentor
        # Exact evidence (spec 004): keep each completed call's exact strings; off, none
        # is even built.
        self.exact = exact and self.hpatch
        # Issue reporting (spec 004): report_issue offered, its calls kept from the client.
        self.report_issue = report_issue and self.hpatch
        self._correlated: set[tuple[str, str]] = set()

    @property
    def active(self) -> bool:
        """Whether this router may change anything at all."""
        return self.hpatch or self.ctp2 or self.mentor

    def prepare(self, body: bytes, thread: str) -> Routing:
        """The exchange's routing: its upstream body, and the outcomes its request carried.

        A body that is not a JSON object with an ``input`` list goes upstream unchanged.
        """
        try:
            data = json.loads(body)
        except ValueError:
            return Routing(body)
        if not isinstance(data, dict) or not isinstance(data.get("input"), list):
            return Routing(body)
        history: list[Any] = data["input"]
        routing = Routing(body, history=history)
        items = history
        if self.hpatch:
            upstream = _hpatch.upstream_input(
                items, thread=thread, correlated=self._correlated, exact=self.exact
            )
            items = upstream.items
            for outcome in upstream.outcomes:
                routing.take(outcome)
            routing.exact = upstream.exact
            data = _hpatch.with_tools(data)
            if self.report_issue:
                data = _issues.with_tool(data)
        if self.ctp2:
            items = _ctp2.compress_input(items)
        routing.upstream = {**data, "input": items}
        if self.hpatch or self.ctp2:
            # Mentor alone changes a request only when it hands advice over.
            routing.upstream_body = _encode(routing.upstream)
        return routing

    def event(self, event: dict[str, Any], routing: Routing) -> Any:
        """The event the client is sent instead of ``event``: None for the event itself
        unchanged, :data:`DROP` for none, or a rewritten event."""
        kind = event.get("type")
        if self.report_issue and kind in _ITEM_EVENTS and _issues.is_report_call(event.get("item")):
            self._withhold(event["item"], routing, done=kind == "response.output_item.done")
            return DROP
        if kind in _ITEM_EVENTS and isinstance(event.get("item"), dict):
            item = self._item(event["item"], routing, count=kind == "response.output_item.done")
            return None if item is event["item"] else {**event, "item": item}
        if kind in _INPUT_STREAM_EVENTS and event.get("item_id") in routing.hidden_items:
            return DROP
        response = event.get("response")
        if kind in _TERMINAL_EVENTS and isinstance(response, dict):
            output = response.get("output")
            if isinstance(output, list):
                kept = [
                    item
                    for item in output
                    if not (self.report_issue and _issues.is_report_call(item))
                ]
                items = [
                    self._item(item, routing, count=False) if isinstance(item, dict) else item
                    for item in kept
                ]
                if len(kept) != len(output) or any(
                    new is not old for new, old in zip(items, kept, strict=True)
                ):
                    return {**event, "response": {**response, "output": items}}
        return None

    @staticmethod
    def _withhold(item: dict[str, Any], routing: Routing, *, done: bool) -> None:
        """Keep a report_issue call from the client; once its item is done, keep the
        report for the hook."""
        if isinstance(item.get("id"), str):
            routing.hidden_items.add(item["id"])
        if not done:
            return
        report = _issues.report_of(item)
        if report is None:
            log.warning("report_issue call without a report", call=item.get("call_id"))
        else:
            routing.reports.append(report)

    def _item(self, item: dict[str, Any], routing: Routing, *, count: bool) -> dict[str, Any]:
        result = item
        if self.hpatch:
            delivered = _hpatch.deliver_item(item)
            if delivered.kind is not None:
                if isinstance(item.get("id"), str):
                    routing.hidden_items.add(item["id"])
                if count:
                    routing.provider_payload_bytes += delivered.provider_payload_bytes
                    routing.client_payload_bytes += delivered.client_payload_bytes
                    routing.unmatched += not delivered.translated
            result = delivered.item
        if self.ctp2:
            expanded = _ctp2.expand_output_item(result, routing.history)
            if count:
                routing.expanded += expanded.expanded
                routing.unresolved += expanded.unresolved
            result = expanded.item
        return result


def _encode(data: dict[str, Any]) -> bytes:
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:
        # A lone surrogate (JSON's "\ud800" decodes to one) has no UTF-8 form: escaped,
        # the body still says what the client sent instead of breaking the exchange.
        return json.dumps(data, separators=(",", ":")).encode()
