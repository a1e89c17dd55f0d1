"""The sanitized facts the provider records about a request, never its content.

A request record holds sizes, hashes, counts and item types, the header names
and what kind of authorization was sent: enough to prove what Codex sent, never
an authorization value or conversation text.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hpbench.reference._http import Request


def request_facts(
    request: Request, body: dict[str, Any], items: Sequence[Any], key: str | None
) -> dict[str, Any]:
    """The record's ``request`` and ``headers`` objects for one Responses request."""
    return {
        "request": {
            "bytes": len(request.body),
            "sha256": hashlib.sha256(request.body).hexdigest(),
            "model": body.get("model") if isinstance(body.get("model"), str) else None,
            "stream": body.get("stream") is True,
            "input_items": len(items),
            "input_types": item_type_counts(items),
            "tools": len(body.get("tools") or []),
            "prompt_cache_key": key is not None,
            "instructions": "instructions" in body,
            "first_developer_sha256": first_developer_hash(items),
            "previous_response_id": "previous_response_id" in body,
        },
        "headers": {
            "names": request.headers.names(),
            "authorization": authorization_kind(request.headers.get("authorization")),
        },
    }


def first_developer_hash(items: Sequence[Any]) -> str | None:
    """SHA-256 of the first developer message's text (where Codex puts base instructions)."""
    for item in items:
        if not isinstance(item, dict) or item.get("role") != "developer":
            continue
        if item.get("type", "message") != "message":
            continue
        content = item.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        else:
            return None
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    return None


def item_type_counts(items: Sequence[Any]) -> dict[str, int]:
    """``type`` (``message:<role>`` for messages) to count."""
    counts: Counter[str] = Counter()
    for item in items:
        if not isinstance(item, dict):
            counts["<not an object>"] += 1
            continue
        kind = str(item.get("type", "message"))
        if kind == "message":
            kind = f"message:{item.get('role', '?')}"
        counts[kind] += 1
    return dict(sorted(counts.items()))


def authorization_kind(value: str | None) -> str:
    """``absent``, ``bearer`` or ``other``: never the value."""
    if value is None:
        return "absent"
    return "bearer" if value.lower().startswith("bearer ") else "other"
