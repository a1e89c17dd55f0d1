"""Turning tree-sitter-bash argument nodes into words as the shell would pass them.

A word is *literal* when the shell passes exactly its text: quotes removed,
escapes resolved, and nothing left to expand. Anything with a variable, a
command substitution, a tilde, a glob character or a brace expansion is not
literal; its text is then the raw source, and the analysis never treats it as
a concrete path.
"""

from __future__ import annotations

import re
from functools import lru_cache

import attrs
from tree_sitter import Node


@attrs.frozen
class Word:
    """One shell word; ``text`` is the unquoted value, or the raw source when not literal."""

    text: str
    literal: bool


@lru_cache(maxsize=8192)
def literal_word(text: str) -> Word:
    """The literal word ``text``; shared instances, since agents repeat the same words."""
    return Word(text, literal=True)


# Characters that make an unquoted word more than its text: escapes (resolved
# below), globs, a leading tilde, brace expansion.
_SPECIAL = re.compile(r"[\\*?\[~{]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_DOUBLE_QUOTE_ESCAPES = re.compile(r"\\([\\$`\"\n])")
_ANSI_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}
_UNEXPANDED = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
    }
)


def node_text(node: Node, source: bytes) -> str:
    """The source text of ``node``."""
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _unquoted_word(raw: str) -> Word:
    if not _SPECIAL.search(raw):
        return literal_word(raw)
    if raw.startswith("~"):
        return Word(raw, literal=False)
    chars: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw):
            chars.append(raw[index + 1])
            index += 2
            continue
        if char in "*?[":
            return Word(raw, literal=False)
        if char == "{" and ("," in raw[index:] or ".." in raw[index:]):
            return Word(raw, literal=False)
        chars.append(char)
        index += 1
    return Word("".join(chars), literal=True)


def _ansi_c(raw: str) -> str:
    body = raw[2:-1]
    return re.sub(r"\\(.)", lambda m: _ANSI_C_ESCAPES.get(m.group(1), m.group(0)), body)


def _double_quoted(node: Node, source: bytes) -> Word:
    raw = node_text(node, source)
    for child in node.children:
        if child.type in _UNEXPANDED:
            return Word(raw, literal=False)
    # The raw text, not the string_content children: tree-sitter leaves
    # whitespace-only content out of them (``" "`` would become empty).
    body = raw[2:-1] if raw.startswith('$"') else raw[1:-1]
    return Word(unescape_double_quoted(body), literal=True)


def unescape_double_quoted(body: str) -> str:
    """The value of a double-quoted string's body that holds no expansion."""
    return _DOUBLE_QUOTE_ESCAPES.sub(_double_quote_escape, body)


def _double_quote_escape(match: re.Match[str]) -> str:
    # Backslash-newline continues the line: both characters disappear.
    char = match.group(1)
    return "" if char == "\n" else char


def word_of(node: Node, source: bytes) -> Word:
    """The word an argument node stands for."""
    kind = node.type
    if kind in ("word", "test_operator", "regex", "extglob_pattern"):
        return _unquoted_word(node_text(node, source))
    if kind == "number":
        return literal_word(node_text(node, source))
    if kind == "raw_string":
        return Word(node_text(node, source)[1:-1], literal=True)
    if kind in ("string", "translated_string"):
        return _double_quoted(node, source)
    if kind == "ansi_c_string":
        return Word(_ansi_c(node_text(node, source)), literal=True)
    if kind == "concatenation":
        parts = [word_of(child, source) for child in node.children]
        raw = node_text(node, source)
        # tree-sitter splits ``{a,b}.go`` into words; the expansion shows only as a whole.
        if all(part.literal for part in parts) and not _BRACE_EXPANSION.search(raw):
            return Word("".join(part.text for part in parts), literal=True)
        return Word(raw, literal=False)
    return Word(node_text(node, source), literal=False)


WORD_NODE_TYPES = frozenset(
    {
        "word",
        "test_operator",
        "regex",
        "extglob_pattern",
        "number",
        "raw_string",
        "string",
        "translated_string",
        "ansi_c_string",
        "concatenation",
        *_UNEXPANDED,
    }
)
"""Node types that stand for one argument word."""
