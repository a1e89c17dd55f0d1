"""Splitting a Codex command string into the simple commands it runs.

Codex runs every command as ``/bin/bash -lc '<script>'``. The script is parsed
with tree-sitter-bash, which never raises: what parsed is kept and the commands
in or beside an unparsable region are marked ambiguous. Pipelines, lists,
subshells, loops and command substitutions contribute each simple command on
its own. ``bash -c``/``sh -c``/``eval`` with a literal script are parsed again
and replaced by what they run. Plain scripts (ordinary words, simple quotes,
``&&``/``||``/``;``/``|``) are split by :mod:`hpbench.commands.plain` without
building a tree, with identical results.

Each simple command remembers the context the analysis needs: the files its
output is redirected into, the file its stdin is redirected from, whether its
stdin is a pipe, and the directory it runs in when earlier ``cd`` commands of
the same script moved it.
"""

from __future__ import annotations

import re
from functools import cache

import attrs
import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from hpbench.commands.plain import split_plain
from hpbench.commands.simple import SimpleCommand, cwd_after
from hpbench.commands.words import (
    WORD_NODE_TYPES,
    Word,
    node_text,
    unescape_double_quoted,
    word_of,
)
from hpbench.commands.wrappers import is_wrapper, unwrap

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_MAX_NESTING = 4
# Codex's own wrapper: ``/bin/bash -lc <script>``. When the script is quoted in
# one of the ways Codex and shlex quote (single quotes, double quotes without
# expansions, or single-quoted runs joined by '"'"'), it is decoded directly and
# the outer parse is skipped, which halves the cost of the common case.
_CODEX_WRAPPER = re.compile(r"(?:/usr)?(?:/bin/)?(?:bash|sh|zsh) -l?c (.+)", re.DOTALL)
_SINGLE_QUOTED = re.compile(r"'([^']*)'", re.DOTALL)
_DOUBLE_QUOTED = re.compile(r'"((?:[^"\\$`]|\\.)*)"', re.DOTALL)
_SHLEX_JOINED = re.compile(r"(?:'[^']*'|\"'\"|\\')+", re.DOTALL)
_SHLEX_PIECE = re.compile(r"'([^']*)'|\"(')\"|\\(')", re.DOTALL)
_WRITE_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_CONDITIONAL = frozenset(
    {"if_statement", "while_statement", "for_statement", "c_style_for_statement", "case_statement"}
)
_FLAT_WORDS = frozenset({"word", "number", "raw_string", "test_operator"})
_DECLARATION_KEYWORDS = frozenset({"export", "declare", "local", "readonly", "typeset", "unset"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_NON_BMP = re.compile("[\U00010000-\U0010ffff\ud800-\udfff]")
_OWN_SCOPE = frozenset({"subshell", "command_substitution", "process_substitution"})


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


@attrs.define
class _Walk:
    """State while one script's tree is walked in execution order."""

    source: bytes
    has_error: bool
    depth: int
    cwd: str | None
    out: list[SimpleCommand]
    writes_for: dict[int, list[Word]] = attrs.field(factory=dict)
    stdin_for: dict[int, Word] = attrs.field(factory=dict)
    piped: set[int] = attrs.field(factory=set)

    def visit(self, node: Node, in_error: bool, conditional: bool) -> None:
        if node.named_child_count == 0:
            return
        kind = node.type
        if kind in ("command", "declaration_command", "unset_command"):
            self.command(node, in_error, conditional)
            return
        if kind == "redirected_statement":
            self.redirected(node)
        elif kind == "pipeline":
            self.pipeline(node)
        elif kind == "command_name" and in_error:
            self.orphan_name(node)
            return
        in_error = in_error or kind == "ERROR"
        conditional = conditional or kind in _CONDITIONAL
        saved_cwd = self.cwd
        # Operators and keywords are anonymous nodes; only named ones hold commands.
        for child in node.named_children:
            self.visit(child, in_error, conditional)
        if kind in _OWN_SCOPE:
            self.cwd = saved_cwd

    def redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        target = _last_simple(body) if body is not None else None
        if target is None:
            return
        for redirect in node.children_by_field_name("redirect"):
            self.redirect(redirect, target.id)

    def redirect(self, redirect: Node, target: int) -> None:
        if redirect.type == "herestring_redirect":
            self.piped.add(target)
            return
        if redirect.type == "heredoc_redirect":
            self.piped.add(target)
            for child in redirect.children:
                if child.type == "file_redirect":
                    self.redirect(child, target)
            return
        if redirect.type != "file_redirect":
            return
        destination = redirect.child_by_field_name("destination")
        if destination is None:
            return
        operators = {child.type for child in redirect.children if not child.is_named}
        word = word_of(destination, self.source)
        if operators & _WRITE_OPERATORS:
            if word.text not in _DEVICES:
                self.writes_for.setdefault(target, []).append(word)
        elif "<" in operators:
            self.stdin_for[target] = word

    def pipeline(self, node: Node) -> None:
        statements = [child for child in node.children if child.is_named]
        for element in statements[1:]:
            first = _first_simple(element)
            if first is not None:
                self.piped.add(first.id)

    def command(self, node: Node, in_error: bool, conditional: bool) -> None:
        words: list[Word] = []
        nested: list[Node] = []
        source = self.source
        for child in node.children:
            kind = child.type
            if kind == "command_name":
                for part in child.children:
                    words.append(word_of(part, source))
                    if part.type not in _FLAT_WORDS:
                        nested.append(part)
                continue
            if kind in WORD_NODE_TYPES:
                words.append(word_of(child, source))
            elif kind in _DECLARATION_KEYWORDS:
                words.append(Word(kind, literal=True))
            elif kind == "variable_assignment" and node.type != "command":
                words.append(word_of_assignment(child, source))
            elif kind in _REDIRECTS:
                self.redirect(child, node.id)
            if kind not in _FLAT_WORDS and child.named_child_count:
                nested.append(child)
        ambiguous = in_error or (self.has_error and _touches_error(node))
        simple = SimpleCommand(
            words=tuple(words),
            writes=tuple(self.writes_for.pop(node.id, ())),
            stdin_file=self.stdin_for.pop(node.id, None),
            stdin_is_pipe=node.id in self.piped,
            cwd=self.cwd,
            ambiguous=ambiguous,
        )
        if not self.unwrap_shell(simple):
            self.out.append(simple)
            self.follow_cd(simple, conditional)
        # Substitutions in the arguments run too, before the command itself;
        # they are listed after it, in source order.
        saved_cwd = self.cwd
        for child in nested:
            self.visit(child, in_error, conditional)
        self.cwd = saved_cwd

    def orphan_name(self, node: Node) -> None:
        words = [word_of(part, self.source) for part in node.children]
        sibling = node.next_sibling
        while sibling is not None and sibling.type in WORD_NODE_TYPES:
            words.append(word_of(sibling, self.source))
            sibling = sibling.next_sibling
        self.out.append(SimpleCommand(words=tuple(words), cwd=self.cwd, ambiguous=True))

    def unwrap_shell(self, simple: SimpleCommand) -> bool:
        script = shell_script(simple.words)
        if script is None:
            return False
        if not script.literal or self.depth >= _MAX_NESTING:
            self.out.append(attrs.evolve(simple, ambiguous=True))
            return True
        inner = _parse_script(script.text, self.depth + 1, self.cwd)
        if not inner:
            return True
        if simple.stdin_is_pipe or simple.stdin_file is not None:
            inner[0] = attrs.evolve(
                inner[0],
                stdin_is_pipe=inner[0].stdin_is_pipe or simple.stdin_is_pipe,
                stdin_file=inner[0].stdin_file or simple.stdin_file,
            )
        if simple.writes:
            inner[-1] = attrs.evolve(inner[-1], writes=inner[-1].writes + simple.writes)
        if simple.ambiguous:
            inner = [attrs.evolve(command, ambiguous=True) for command in inner]
        self.out.extend(inner)
        return True

    def follow_cd(self, simple: SimpleCommand, conditional: bool) -> None:
        moved = cwd_after(simple.words, self.cwd)
        # A cd that may or may not run (inside if/while/for/case) leaves it unknown.
        self.cwd = None if conditional and moved != self.cwd else moved


def word_of_assignment(node: Node, source: bytes) -> Word:
    """``NAME=value`` of a declaration as one word."""
    return Word(node_text(node, source), literal=False)


def shell_script(words: tuple[Word, ...]) -> Word | None:
    """The script of ``bash -c SCRIPT`` / ``sh -lc SCRIPT`` / ``eval SCRIPT``, else ``None``."""
    if not words or not words[0].literal:
        return None
    name = words[0].text.rpartition("/")[2]
    if name not in SHELLS and name != "eval":
        if not is_wrapper(name):
            return None
        words = unwrap(words).words
        if not words or not words[0].literal:
            return None
        name = words[0].text.rpartition("/")[2]
    if name == "eval":
        if len(words) < 2:
            return None
        rest = words[1:]
        return Word(" ".join(w.text for w in rest), literal=all(w.literal for w in rest))
    if name not in SHELLS:
        return None
    for index, word in enumerate(words[1:], start=1):
        text = word.text
        if not word.literal or not text.startswith("-") or text.startswith("--"):
            return None
        if "c" in text[1:]:
            return words[index + 1] if index + 1 < len(words) else None
    return None


def _last_simple(node: Node) -> Node | None:
    """The simple command a redirection of ``node`` applies to (its last one)."""
    current: Node | None = node
    while current is not None:
        if current.type in ("command", "declaration_command"):
            return current
        named = [child for child in current.named_children if child.type != "ERROR"]
        if current.type == "redirected_statement":
            current = current.child_by_field_name("body")
            continue
        statements = [
            c
            for c in named
            if c.type not in ("file_redirect", "heredoc_redirect", "herestring_redirect")
        ]
        current = statements[-1] if statements else None
    return None


def _first_simple(node: Node) -> Node | None:
    """The first simple command of ``node`` (the one reading the pipe)."""
    current: Node | None = node
    while current is not None:
        if current.type in ("command", "declaration_command"):
            return current
        named = [child for child in current.named_children if child.type != "ERROR"]
        current = named[0] if named else None
    return None


def _touches_error(node: Node) -> bool:
    if node.has_error:
        return True
    sibling = node.next_sibling
    return sibling is not None and sibling.type == "ERROR"


def _parse_script(script: str, depth: int, cwd: str | None) -> list[SimpleCommand]:
    plain = split_plain(script, cwd)
    if plain is not None:
        return plain
    return parse_tree(script, depth, cwd)


def _parser_input(script: str, source: bytes) -> bytes:
    """``source`` with every character outside the Basic Multilingual Plane (and
    every lone surrogate) replaced by as many ``x`` as it has bytes.

    tree-sitter-bash 0.25.1 crashes the process, at random, on ``{`` followed by
    a character from the upper planes (e.g. U+E0001). Such characters are plain
    word characters to bash, and so is ``x``; the byte length stays the same,
    so node offsets still slice the original ``source``.
    """
    if _NON_BMP.search(script) is None:
        return source
    safe = _NON_BMP.sub(lambda m: "x" * len(m.group().encode("utf-8", "surrogatepass")), script)
    return safe.encode("utf-8")


def parse_tree(script: str, depth: int, cwd: str | None) -> list[SimpleCommand]:
    """Split ``script`` with tree-sitter-bash alone (see also :mod:`hpbench.commands.plain`)."""
    source = script.encode("utf-8", errors="surrogatepass")
    tree = _parser().parse(_parser_input(script, source))
    root = tree.root_node
    walk = _Walk(source=source, has_error=root.has_error, depth=depth, cwd=cwd, out=[])
    walk.visit(root, in_error=False, conditional=False)
    return walk.out


def _quoted_script(argument: str) -> str | None:
    """The script a quoted shell argument stands for, when decoding it needs no parser."""
    match = _SINGLE_QUOTED.fullmatch(argument)
    if match is not None:
        return match.group(1)
    match = _DOUBLE_QUOTED.fullmatch(argument)
    if match is not None:
        return unescape_double_quoted(match.group(1))
    if _SHLEX_JOINED.fullmatch(argument) is not None:
        return "".join("".join(piece) for piece in _SHLEX_PIECE.findall(argument))
    return None


def split_command(command: str) -> tuple[SimpleCommand, ...]:
    """The simple commands a Codex command string runs, in source order.

    Never raises: a script that does not parse yields what parsed, marked
    ambiguous where the error is.
    """
    match = _CODEX_WRAPPER.fullmatch(command)
    if match is not None:
        script = _quoted_script(match.group(1))
        if script is not None:
            return tuple(_parse_script(script, 1, "."))
    return tuple(_parse_script(command, 0, "."))
