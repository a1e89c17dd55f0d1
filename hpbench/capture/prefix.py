"""Cache-prefix observations: whether each request kept the previous one's prompt prefix.

A provider's prompt cache only helps when a request starts with the bytes of the one
before it in the same thread. A router that rewrites history (CTP/2 elides older tool
outputs) can break that prefix on the provider side while the client's stays intact. So a
router may retain, per relayed exchange and per *stage* (``client``: the request as Codex
sent it; ``provider``: the request as the router sent it upstream), one
:class:`PrefixObservation` in ``<capture-output>/cache-prefix/observations.jsonl``: the
stage's comparison status with the thread's previous request and the fixed categories
that changed. The fingerprints the router compares stay in its memory: no fingerprint,
prompt-cache key or routing key is ever written (spec 002's cache-prefix table shows
statuses and categories only).

The file is optional: a router that keeps none (an older one, or another router) gives
a table whose statuses are all *unavailable*, never *stable*. When it exists,
:class:`PrefixCheck` holds it to the records in the validator's one pass.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import attrs

from hpbench._convert import make_converter, structure
from hpbench._jsonio import append_line, canonical_json
from hpbench.capture import codes
from hpbench.capture._sink import FindingSink
from hpbench.capture.models import Count, Record, ThreadRole, doc
from hpbench.errors import ContractError

PREFIX_DIR: Final = "cache-prefix"
PREFIX_FILE: Final = "observations.jsonl"
PREFIX_SCHEMA: Final = "hpbench.cache-prefix.v1"
UNAVAILABLE: Final = "unavailable"


class Stage(enum.Enum):
    """Where the request was observed."""

    CLIENT = "client"
    PROVIDER = "provider"


class Status(enum.Enum):
    """How a stage's request compares with the thread's previous one at that stage."""

    FIRST = "first"  # the thread's first request: nothing to compare with
    STABLE = "stable"  # same settings, and the previous input is a prefix of this one
    CHANGED = "changed"  # something in ``changed`` differs


class Category(enum.Enum):
    """The fixed categories a change is reported in (never the values)."""

    INSTRUCTIONS = "instructions"
    TOOLS = "tools"
    MODEL = "model"
    REASONING = "reasoning"
    PROMPT_CACHE_KEY = "prompt_cache_key"
    INPUT_PREFIX = "input_prefix"
    OTHER = "other"


@attrs.frozen
class PrefixObservation:
    """One stage of one exchange (one line of ``observations.jsonl``)."""

    schema: Literal["hpbench.cache-prefix.v1"] = attrs.field(
        metadata=doc("Always `hpbench.cache-prefix.v1`.")
    )
    exchange: Count = attrs.field(metadata=doc("The exchange, as the capture records number it."))
    stage: Stage = attrs.field(metadata=doc("`client` or `provider`."))
    status: Status = attrs.field(metadata=doc("`first`, `stable` or `changed`."))
    changed: tuple[Category, ...] = attrs.field(
        metadata=doc("The categories that changed (only with `changed`; at least one then).")
    )


_CONVERTER = make_converter()


def observations_path(capture_dir: Path | str) -> Path:
    """Where a router keeps its cache-prefix observations inside its ``--capture-output``."""
    return Path(capture_dir) / PREFIX_DIR / PREFIX_FILE


# ------------------------------------------------------------------ the router's side

# Top-level request fields with a category of their own; the input is compared item by
# item. Transport settings and request metadata (Codex's ``client_metadata`` carries its
# per-turn ids) are not part of the prompt a provider caches.
_FIELDS: Final = {
    "instructions": Category.INSTRUCTIONS,
    "tools": Category.TOOLS,
    "tool_choice": Category.TOOLS,
    "parallel_tool_calls": Category.TOOLS,
    "model": Category.MODEL,
    "reasoning": Category.REASONING,
    "prompt_cache_key": Category.PROMPT_CACHE_KEY,
}
_IGNORED: Final = frozenset({"input", "stream", "store", "include", "metadata", "client_metadata"})


def _digest(value: Any) -> bytes:
    return hashlib.sha256(canonical_json(value).encode()).digest()


@attrs.frozen
class Fingerprint:
    """What a request's prompt prefix depends on, as digests (kept in memory only)."""

    fields: Mapping[Category, bytes]
    items: tuple[bytes, ...]


def fingerprint(body: bytes) -> Fingerprint | None:
    """The fingerprint of a Responses request body; None when it is not a JSON object."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    grouped: dict[Category, dict[str, Any]] = {}
    for key, value in data.items():
        if key in _IGNORED:
            continue
        grouped.setdefault(_FIELDS.get(key, Category.OTHER), {})[key] = value
    raw_items = data.get("input")
    items = raw_items if isinstance(raw_items, list) else [raw_items]
    return Fingerprint(
        fields={category: _digest(values) for category, values in grouped.items()},
        items=tuple(_digest(item) for item in items),
    )


def compare(
    previous: Fingerprint | None, current: Fingerprint
) -> tuple[Status, tuple[Category, ...]]:
    """``current`` against the thread's previous request at the same stage."""
    if previous is None:
        return Status.FIRST, ()
    changed = {
        category
        for category in set(previous.fields) | set(current.fields)
        if previous.fields.get(category) != current.fields.get(category)
    }
    if current.items[: len(previous.items)] != previous.items:
        changed.add(Category.INPUT_PREFIX)
    ordered = tuple(category for category in Category if category in changed)
    return (Status.CHANGED, ordered) if ordered else (Status.STABLE, ())


class PrefixWatch:
    """A router's observer: the last fingerprint per (thread, stage), and the file."""

    def __init__(self, capture_dir: Path | str) -> None:
        self.path = observations_path(capture_dir)
        self._last: dict[tuple[str, Stage], Fingerprint] = {}

    def observe_exchange(
        self, exchange: int, thread_id: str, client_body: bytes, provider_body: bytes
    ) -> None:
        """Both stages of one exchange. A router that sent upstream what it got (the
        passthrough, most of all) has one body: it is fingerprinted once."""
        client = fingerprint(client_body)
        same = provider_body is client_body or provider_body == client_body
        self._record(exchange, thread_id, Stage.CLIENT, client)
        self._record(
            exchange, thread_id, Stage.PROVIDER, client if same else fingerprint(provider_body)
        )

    def observe(self, exchange: int, thread_id: str, stage: Stage, body: bytes) -> None:
        """Compare one stage's request with the thread's previous one and retain the line
        (nothing for a body that is not a JSON object: no fingerprint, no claim)."""
        self._record(exchange, thread_id, stage, fingerprint(body))

    def _record(
        self, exchange: int, thread_id: str, stage: Stage, current: Fingerprint | None
    ) -> None:
        if current is None:
            return
        status, changed = compare(self._last.get((thread_id, stage)), current)
        self._last[(thread_id, stage)] = current
        line = PrefixObservation(PREFIX_SCHEMA, Count(exchange), stage, status, changed)
        append_line(self.path, canonical_json(_CONVERTER.unstructure(line)))


# --------------------------------------------------------------- the validator's side


def read_observations(capture_dir: Path | str, sink: FindingSink) -> list[PrefixObservation] | None:
    """The observations a capture retains (None: the router kept none); every unreadable
    or inconsistent line is a finding."""
    path = observations_path(capture_dir)
    if not path.is_file():
        return None
    observations: list[PrefixObservation] = []
    with path.open("rb") as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                line = structure(
                    _CONVERTER,
                    json.loads(raw),
                    PrefixObservation,
                    source=str(path),
                    code=codes.CACHE_PREFIX,
                )
            except (ValueError, ContractError) as exc:
                sink.add(
                    codes.CACHE_PREFIX,
                    f"not a cache-prefix observation: {exc}",
                    file=str(path),
                    line=number,
                )
                continue
            problem = _inconsistent(line)
            if problem is not None:
                sink.add(
                    codes.CACHE_PREFIX, problem, file=str(path), line=number, field="$.changed"
                )
                continue
            observations.append(line)
    return observations


def _inconsistent(line: PrefixObservation) -> str | None:
    if line.status is Status.CHANGED and not line.changed:
        return "a changed request names no changed category"
    if line.status is not Status.CHANGED and line.changed:
        return f"a {line.status.value} request names changed categories"
    if len(set(line.changed)) != len(line.changed):
        return "a category is named twice"
    return None


@attrs.frozen
class PrefixRow:
    """One root-thread request of the cache-prefix table: ordinals, usage and statuses
    only (spec 002)."""

    ordinal: int = attrs.field(metadata=doc("The request's place among the attempt's."))
    input_tokens: int | None = attrs.field(
        metadata=doc("Provider-reported input tokens of the delivered attempt; null: unknown.")
    )
    cached_input_tokens: int | None = attrs.field(
        metadata=doc("Provider-reported cached input tokens; null: not reported.")
    )
    client: str = attrs.field(
        metadata=doc("The client stage: `first`, `stable`, `changed` or `unavailable`.")
    )
    provider: str = attrs.field(
        metadata=doc("The provider stage: `first`, `stable`, `changed` or `unavailable`.")
    )
    changed: tuple[str, ...] = attrs.field(
        metadata=doc("`<stage>:<category>` for each changed category (fixed names).")
    )
    turn_state: str = attrs.field(
        metadata=doc("`forwarded`, `dropped`, `not sent` (by the client) or `unavailable`.")
    )


@attrs.define
class _Exchange:
    thread_id: str
    root: bool
    turn_state_sent: bool
    delivered: Any = None


class PrefixCheck:
    """Collects what the table needs from the records in the validator's one pass, then
    holds the observations to them."""

    def __init__(self, sink: FindingSink, *, passthrough: bool = False) -> None:
        self.sink = sink
        # A passthrough router sends upstream what it got: its two stages must agree.
        self.passthrough = passthrough
        self.exchanges: dict[int, _Exchange] = {}

    def see(self, record: Record, file: str, line: int) -> None:
        """One record, in file order."""
        del file, line
        if record.kind == "client":
            self.exchanges[record.exchange] = _Exchange(
                record.thread.thread_id,
                record.thread.role is ThreadRole.ROOT,
                record.turn_state_sent,
            )
        elif record.kind == "provider" and record.delivered:
            seen = self.exchanges.get(record.exchange)
            if seen is not None:
                seen.delivered = record

    def finish(
        self, observations: Sequence[PrefixObservation] | None, file: str
    ) -> tuple[PrefixRow, ...]:
        """The table's rows (root-thread requests in exchange order); every observation
        that names no exchange, repeats one, or claims a first request that is not its
        thread's first (or the other way round) is a finding."""
        by_key: dict[tuple[int, Stage], PrefixObservation] = {}
        firsts: dict[str, int] = {}
        for number in sorted(self.exchanges):
            firsts.setdefault(self.exchanges[number].thread_id, number)
        for seen in observations or ():
            where = f"exchange {seen.exchange} ({seen.stage.value})"
            exchange = self.exchanges.get(seen.exchange)
            if exchange is None:
                self.sink.add(codes.CACHE_PREFIX, f"{where}: no such exchange", file=file)
            elif (seen.exchange, seen.stage) in by_key:
                self.sink.add(codes.CACHE_PREFIX, f"{where}: observed twice", file=file)
            elif (seen.status is Status.FIRST) != (firsts[exchange.thread_id] == seen.exchange):
                self.sink.add(
                    codes.CACHE_PREFIX,
                    f"{where}: {seen.status.value}, but it is "
                    f"{'' if firsts[exchange.thread_id] == seen.exchange else 'not '}"
                    "its thread's first request",
                    file=file,
                )
            else:
                by_key[(seen.exchange, seen.stage)] = seen
        rows: list[PrefixRow] = []
        for number in sorted(self.exchanges):
            exchange = self.exchanges[number]
            if not exchange.root:
                continue
            stages = {stage: by_key.get((number, stage)) for stage in Stage}
            self._agree(number, stages, file)
            changed = [
                f"{stage.value}:{category.value}"
                for stage, seen in stages.items()
                if seen is not None
                for category in seen.changed
            ]
            usage = getattr(exchange.delivered, "usage", None)
            rows.append(
                PrefixRow(
                    ordinal=len(rows) + 1,
                    input_tokens=None if usage is None else int(usage.input_tokens),
                    cached_input_tokens=_cached(usage),
                    client=_status(stages[Stage.CLIENT]),
                    provider=_status(stages[Stage.PROVIDER]),
                    changed=tuple(changed),
                    turn_state=_turn_state(exchange),
                )
            )
        return tuple(rows)

    def _agree(
        self, number: int, stages: Mapping[Stage, PrefixObservation | None], file: str
    ) -> None:
        client, provider = stages[Stage.CLIENT], stages[Stage.PROVIDER]
        if not self.passthrough or client is None or provider is None:
            return
        if (client.status, client.changed) != (provider.status, provider.changed):
            self.sink.add(
                codes.CACHE_PREFIX,
                f"exchange {number}: a passthrough router's client and provider stages "
                f"disagree ({client.status.value} and {provider.status.value})",
                file=file,
            )


def _cached(usage: Any) -> int | None:
    value = None if usage is None else usage.cached_input_tokens
    return None if value is None else int(value)


def _status(seen: PrefixObservation | None) -> str:
    return UNAVAILABLE if seen is None else seen.status.value


def _turn_state(exchange: _Exchange) -> str:
    if not exchange.turn_state_sent:
        return "not sent"
    if exchange.delivered is None:
        return UNAVAILABLE
    return "forwarded" if exchange.delivered.turn_state_forwarded else "dropped"
