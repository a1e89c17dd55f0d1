"""A small getopt: separating option values from positional arguments.

Each tool is described by which of its options take a value; everything else
starting with ``-`` is a flag. Short options cluster (``-nA3`` is ``-n -A 3``),
long options take ``--name=value`` or ``--name value``, ``--`` ends options.
"""

from __future__ import annotations

import re

import attrs

from hpbench.commands.words import Word

# An unquoted option such as ``--glob=*.go`` is not literal only because of its
# glob characters; the shell passes it unchanged unless a file is named like it.
_EXPANSION_OR_QUOTE = re.compile(r"[$`'\"\\~{]")


def _option_word(word: Word) -> bool:
    if not word.text.startswith("-"):
        return False
    return word.literal or _EXPANSION_OR_QUOTE.search(word.text) is None


@attrs.frozen
class OptionSpec:
    """How one tool spells its options.

    Attributes:
        short_values: short option letters that take a value (``"e"`` for ``-e PAT``).
        long_values: long options that take a value (``"--regexp"``).
        numeric_flags: ``-20`` is an option (``head -20``), not a positional.
    """

    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    numeric_flags: bool = False


@attrs.frozen
class ParsedArgs:
    """Options (name → values, in order) and positionals of one command line."""

    options: tuple[tuple[str, Word], ...]
    flags: frozenset[str]
    positionals: tuple[Word, ...]
    after_double_dash: int
    """Index into ``positionals`` of the first one that came after ``--`` (or its length)."""

    def values(self, *names: str) -> tuple[Word, ...]:
        """Every value given to any of ``names``."""
        if not self.options:
            return ()
        return tuple(value for name, value in self.options if name in names)

    def has(self, *names: str) -> bool:
        """Whether any of ``names`` was given, as a flag or with a value."""
        flags = self.flags
        for name in names:
            if name in flags:
                return True
        return bool(self.options) and bool(self.values(*names))


def parse_args(words: tuple[Word, ...], spec: OptionSpec) -> ParsedArgs:
    """Split ``words`` (the arguments, without the command name) by ``spec``."""
    options: list[tuple[str, Word]] = []
    flags: set[str] = set()
    positionals: list[Word] = []
    double_dash: int | None = None
    index = 0
    while index < len(words):
        word = words[index]
        text = word.text
        index += 1
        if double_dash is not None or not _option_word(word) or text == "-":
            positionals.append(word)
            continue
        if text == "--":
            double_dash = len(positionals)
            continue
        if text.startswith("--"):
            name, equals, value = text.partition("=")
            if equals:
                options.append((name, Word(value, literal=True)))
            elif name in spec.long_values and index < len(words):
                options.append((name, words[index]))
                index += 1
            else:
                flags.add(name)
            continue
        if spec.numeric_flags and text[1:].isdigit():
            flags.add(text)
            continue
        index = _short_cluster(
            text, words=words, index=index, spec=spec, options=options, flags=flags
        )
    return ParsedArgs(
        options=tuple(options),
        flags=frozenset(flags),
        positionals=tuple(positionals),
        after_double_dash=len(positionals) if double_dash is None else double_dash,
    )


def _short_cluster(
    text: str,
    *,
    words: tuple[Word, ...],
    index: int,
    spec: OptionSpec,
    options: list[tuple[str, Word]],
    flags: set[str],
) -> int:
    for position in range(1, len(text)):
        letter = text[position]
        name = f"-{letter}"
        if letter in spec.short_values:
            rest = text[position + 1 :]
            if rest:
                options.append((name, Word(rest, literal=True)))
            elif index < len(words):
                options.append((name, words[index]))
                index += 1
            return index
        flags.add(name)
    return index
