"""Splitting *plain* scripts without the parser.

Most commands an agent runs are plain: words of ordinary characters, simple
single- or double-quoted strings, joined by ``&&``, ``||``, ``;`` and ``|``.
For those, bash's own rules are short enough to apply directly, and doing so
is several times faster than building and walking a tree-sitter tree. Any
script outside that subset (expansions, globs, redirections, heredocs,
subshells, keywords, assignments, wrappers, nested shells, comments) returns
``None`` and goes to the parser. A property test checks that both paths give
identical results on the plain subset.
"""

from __future__ import annotations

import re

from hpbench.commands.simple import SimpleCommand, cwd_after
from hpbench.commands.words import Word, literal_word

# A plain script is a run of whitespace, operators and words built from plain
# characters and quoted strings that hold nothing the shell would expand. The
# validating pattern repeats single atoms only: no nested quantifier, so a
# script that is not plain fails in linear time.
_PLAIN_CHAR = r"[A-Za-z0-9_./:=,+-]"
_SINGLE = r"'[^'\x00-\x1f\x7f]*'"
_DOUBLE = r'"[^"$`\\!\x00-\x1f\x7f]*"'
# Redirections that write no file: fd copies (2>&1) and /dev/null. They must
# stand apart from words and end a command (checked in split_plain).
_QUIET = r"(?:[1-9]?>|&>)(?:&[0-9]|[ \t]*/dev/null)(?![A-Za-z0-9_./:=,+'\"-])"
_PLAIN = re.compile(rf"(?:[ \t]|&&|;|\||{_QUIET}|{_PLAIN_CHAR}|{_SINGLE}|{_DOUBLE})*")
_TOKEN = re.compile(
    rf"(?P<op>&&|\|\||;|\|)|(?P<quiet>{_QUIET})|(?P<word>(?:{_PLAIN_CHAR}|{_SINGLE}|{_DOUBLE})+)"
)
_OPERATORS = frozenset({"&&", "||", ";", "|"})
_COMMAND_NAME = re.compile(r"[A-Za-z_./][A-Za-z0-9_./-]*")
_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
# Command names that need the parser: keywords, builtins that change how later
# words are read, wrappers and shells whose arguments are another command.
_NEEDS_PARSER = frozenset(
    {
        "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
        "esac", "function", "time", "select", "coproc", "in",
        "export", "declare", "local", "readonly", "typeset", "unset",
        "eval", "bash", "sh", "zsh", "dash", "ksh",
        "env", "sudo", "timeout", "nice", "ionice", "stdbuf", "xargs", "nohup",
        "command", "exec", "builtin", "doas",
    }
)  # fmt: skip


def _unquote(raw: str) -> str:
    if "'" not in raw and '"' not in raw:
        return raw
    return _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), raw)


def split_plain(script: str, cwd: str | None) -> list[SimpleCommand] | None:
    """The simple commands of a plain script, or ``None`` when it is not plain."""
    # Validate the whole script in one pass in C before tokenizing it.
    if _PLAIN.fullmatch(script) is None:
        return None
    commands: list[SimpleCommand] = []
    words: list[Word] = []
    piped = False
    redirected = False
    last = ""
    for match in _TOKEN.finditer(script):
        kind, text = match.lastgroup, match.group()
        last = text
        if kind == "quiet":
            # Writes no file, so the command is unchanged; it must follow a word
            # with a space (``a2>&1`` is the word ``a2``) and end the command.
            start = match.start()
            if not words or script[start - 1] not in " \t" or words[-1].text == "-":
                # (tree-sitter-bash drops a lone ``-`` before a redirection; the
                # parser decides that case so both paths stay identical.)
                return None
            redirected = True
        elif kind == "word":
            if redirected or text[0] == "=":
                # (tree-sitter-bash reads ``==`` and ``=~`` as test operators.)
                return None
            if not words and (
                _COMMAND_NAME.fullmatch(text) is None or text.rpartition("/")[2] in _NEEDS_PARSER
            ):
                # Keywords are read in special ways, and so are names such as
                # ``-x``, ``a+:`` or ``1=`` by tree-sitter-bash (assignments).
                return None
            words.append(literal_word(_unquote(text)))
        else:
            if not words:
                return None
            commands.append(SimpleCommand(words=tuple(words), stdin_is_pipe=piped, cwd=cwd))
            cwd = cwd_after(tuple(words), cwd)
            words = []
            redirected = False
            piped = text == "|"
    if words:
        commands.append(SimpleCommand(words=tuple(words), stdin_is_pipe=piped, cwd=cwd))
    elif last != ";":
        return None
    return commands
