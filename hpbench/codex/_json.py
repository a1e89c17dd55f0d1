"""Decoding one JSONL line, with duplicate keys made visible.

Codex 0.169 writes ``web_search`` items with the key ``id`` twice: first its own
item id (``item_0``), then the provider's search call id (``ws_1``). Python's
``json.loads`` silently keeps the last value, which would replace the item id
that pairs ``item.started`` with ``item.completed``. Here the first value is
kept under the key and every later value is recorded beside it, so the reader
can decide per item type what a repeated key means.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKeyObject(dict[str, Any]):
    """A JSON object that had at least one key more than once.

    The mapping holds the first value of every key; ``later_values`` holds the
    values of the repeated occurrences in the order they appeared.
    """

    later_values: tuple[tuple[str, Any], ...]


def _first_value_wins(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # dict(pairs) runs in C; only the rare object with a repeated key pays for
    # the slow path below.
    mapping = dict(pairs)
    if len(mapping) == len(pairs):
        return mapping
    result = DuplicateKeyObject()
    later: list[tuple[str, Any]] = []
    for key, value in pairs:
        if key in result:
            later.append((key, value))
        else:
            result[key] = value
    result.later_values = tuple(later)
    return result


# One decoder for every line: json.loads with a hook would build a new one each call.
_DECODER = json.JSONDecoder(object_pairs_hook=_first_value_wins)


def decode_line(text: str) -> Any:
    """Decode one line of JSON; raises :class:`ValueError` when it is not JSON."""
    return _DECODER.decode(text)


def later_value(obj: dict[str, Any], key: str) -> Any:
    """The last repeated value of ``key`` in ``obj``, or ``None`` when it was not repeated."""
    if not isinstance(obj, DuplicateKeyObject):
        return None
    found = None
    for name, value in obj.later_values:
        if name == key:
            found = value
    return found


def repeated_keys(obj: dict[str, Any]) -> tuple[str, ...]:
    """The keys that appeared more than once in ``obj`` (sorted, each once)."""
    if not isinstance(obj, DuplicateKeyObject):
        return ()
    return tuple(sorted({name for name, _ in obj.later_values}))
