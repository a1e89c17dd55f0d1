"""Commands that run another command: ``env``, ``sudo``, ``timeout``, ``xargs``…

The category and operands belong to the command being run, so the wrapper and
its own options are stripped first. ``xargs`` appends operands read from stdin,
which can never be known: a command run through it is ambiguous.
"""

from __future__ import annotations

import attrs

from hpbench.commands.words import Word

# Options of each wrapper that take a separate value.
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset(
        {"-I", "-i", "-L", "-l", "-n", "-P", "-d", "-E", "-e", "-s", "-a", "--arg-file"}
    ),
    "nohup": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "doas": frozenset({"-u", "-C"}),
}
_POSITIONAL_FIRST = {"timeout": 1}  # timeout DURATION COMMAND…


@attrs.frozen
class Unwrapped:
    """The command a wrapper chain runs.

    Attributes:
        words: the inner command and its arguments.
        wrappers: the wrapper names, outermost first.
        stdin_operands: ``xargs`` will append operands that cannot be known.
    """

    words: tuple[Word, ...]
    wrappers: tuple[str, ...] = ()
    stdin_operands: bool = False


def _skip_options(words: tuple[Word, ...], start: int, wrapper: str) -> int:
    values = _VALUE_OPTIONS[wrapper]
    index = start
    while index < len(words):
        text = words[index].text
        if wrapper == "env" and "=" in text and not text.startswith("-"):
            index += 1
            continue
        if text == "--":
            return index + 1
        if not text.startswith("-") or text == "-":
            break
        index += 2 if text in values else 1
    return index + _POSITIONAL_FIRST.get(wrapper, 0)


def is_wrapper(name: str) -> bool:
    """Whether ``name`` runs another command given as its arguments."""
    return name in _VALUE_OPTIONS


def unwrap(words: tuple[Word, ...]) -> Unwrapped:
    """Strip wrapper commands (with their options) from the front of ``words``."""
    wrappers: list[str] = []
    index = 0
    while index < len(words) and words[index].literal:
        name = words[index].text.rpartition("/")[2]
        if name not in _VALUE_OPTIONS:
            break
        if name == "command" and any(w.text in ("-v", "-V") for w in words[index + 1 :]):
            # ``command -v rg`` looks rg up; it does not run it.
            break
        wrappers.append(name)
        index = _skip_options(words, index + 1, name)
    return Unwrapped(
        words=words[index:], wrappers=tuple(wrappers), stdin_operands="xargs" in wrappers
    )
