"""Deterministic usage: token counts from sizes alone, and the cached-prefix model.

Tokens are bytes divided by four, rounded up (:func:`tokens_for`), for the
provider's usage blocks and for the router's own estimates alike. A prompt is a
run of cacheable units (the model and tools, then each input item), and
:class:`PrefixCache` remembers, per ``prompt_cache_key``, which unit runs it has
seen, so that a later prompt sharing a prefix reports it as cached.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import attrs

from hpbench._jsonio import canonical_json

BYTES_PER_TOKEN = 4
CACHE_BLOCK_TOKENS = 64
MAX_PREFIXES_PER_KEY = 256


def tokens_for(size: int) -> int:
    """Tokens for ``size`` bytes: a quarter, rounded up."""
    return math.ceil(size / BYTES_PER_TOKEN)


def short_hash(text: str) -> str:
    """A 16-hex-digit SHA-256 prefix: enough to tell values apart, useless to read them."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@attrs.frozen
class Usage:
    """The usage block of one response."""

    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int
    reasoning_tokens: int

    def to_wire(self) -> dict[str, Any]:
        """The Responses ``usage`` object."""
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {
                "cached_tokens": self.cached_tokens,
                "cache_write_tokens": self.cache_write_tokens,
            },
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


def prompt_units(body: dict[str, Any]) -> list[tuple[str, int]]:
    """The prompt as cacheable units: (hash, tokens) of the tools, then of each input item."""
    units: list[tuple[str, int]] = []
    head = canonical_json({"model": body.get("model"), "tools": body.get("tools")})
    units.append((short_hash(head), tokens_for(len(head.encode("utf-8")))))
    for item in body.get("input") or []:
        text = canonical_json(item)
        units.append((short_hash(text), tokens_for(len(text.encode("utf-8")))))
    return units


def output_usage(items: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """Output and reasoning tokens of a response's items."""
    output = sum(tokens_for(len(canonical_json(item).encode("utf-8"))) for item in items)
    reasoning = sum(
        tokens_for(len(part.get("text", "").encode("utf-8")))
        for item in items
        if item.get("type") == "reasoning"
        for part in item.get("summary", [])
    )
    return output, reasoning


class PrefixCache:
    """The cached-prefix model: what prompt prefixes each ``prompt_cache_key`` has seen."""

    def __init__(self) -> None:
        self._seen: dict[str, list[tuple[str, ...]]] = {}

    def lookup(self, key: str | None, units: Sequence[tuple[str, int]]) -> int:
        """Cached tokens for ``units`` under ``key`` (zero without a key)."""
        if key is None:
            return 0
        hashes = tuple(digest for digest, _ in units)
        best = 0
        for seen in self._seen.get(key, []):
            common = 0
            for left, right in zip(seen, hashes, strict=False):
                if left != right:
                    break
                common += 1
            best = max(best, common)
        prefix_tokens = sum(tokens for _, tokens in units[:best])
        return (prefix_tokens // CACHE_BLOCK_TOKENS) * CACHE_BLOCK_TOKENS

    def store(self, key: str | None, units: Sequence[tuple[str, int]]) -> None:
        """Remember a processed prompt."""
        if key is None:
            return
        seen = self._seen.setdefault(key, [])
        hashes = tuple(digest for digest, _ in units)
        if hashes not in seen:
            seen.append(hashes)
            del seen[:-MAX_PREFIXES_PER_KEY]
