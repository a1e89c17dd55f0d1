"""Giving every simple command exactly one category, and its path operands.

Order of decisions: wrappers are stripped (``env``, ``timeout``, ``xargs``…);
a command whose name is not literal is ``other`` and ambiguous; otherwise the
command's own interpreter decides. A file-read or search tool with no file
operand that reads a pipe, heredoc or here-string only filters a stream and
is ``other``. Finally, output redirected into a file that
is (or may be) inside the workspace makes any command an ``edit``: what it
printed became file content. Operands are kept only for the categories that
can form loops (file-read, search, content-diff).
"""

from __future__ import annotations

import attrs

from hpbench.commands.categories import LOOP_CATEGORIES, Category
from hpbench.commands.context import Context, Interpretation
from hpbench.commands.git import interpret_git
from hpbench.commands.operands import NO_OPERANDS, Operands
from hpbench.commands.simple import SimpleCommand
from hpbench.commands.tools import TOOLS
from hpbench.commands.wrappers import is_wrapper, unwrap


@attrs.frozen
class Classified:
    """A simple command's category, operands and whether anything was left unknown."""

    category: Category
    operands: Operands
    ambiguous: bool


def _interpret(context: Context) -> Interpretation:
    if context.name == "git":
        return interpret_git(context)
    interpreter = TOOLS.get(context.name)
    if interpreter is None:
        return Interpretation(Category.OTHER)
    return interpreter(context)


def classify(simple: SimpleCommand, workspace_root: str | None) -> Classified:
    """Category and operands of one simple command.

    Args:
        simple: from :func:`~hpbench.commands.shell.split_command`.
        workspace_root: where Codex ran; concrete operands become relative to it.
    """
    words = simple.words
    stdin_operands = False
    if words and words[0].literal and is_wrapper(words[0].text.rpartition("/")[2]):
        unwrapped = unwrap(words)
        words, stdin_operands = unwrapped.words, unwrapped.stdin_operands
    ambiguous = simple.ambiguous or stdin_operands
    if not words:
        return Classified(Category.OTHER, NO_OPERANDS, ambiguous)
    if not words[0].literal:
        return Classified(Category.OTHER, NO_OPERANDS, ambiguous=True)
    context = Context(
        name=words[0].text.rpartition("/")[2],
        args=words[1:],
        cwd=simple.cwd,
        root=workspace_root,
        stdin_is_pipe=simple.stdin_is_pipe,
        stdin_file=simple.stdin_file,
    )
    interpretation = _interpret(context)
    category = interpretation.category
    if simple.writes and context.writes_into_workspace(simple.writes):
        category = Category.EDIT
    if category not in LOOP_CATEGORIES:
        return Classified(category, NO_OPERANDS, ambiguous)
    operands = interpretation.operands
    if not stdin_operands and _is_stream_filter(category, operands, simple):
        # ``… | head -n 5`` or ``grep x <<<"$v"`` reads no file: it filters a stream.
        return Classified(Category.OTHER, NO_OPERANDS, ambiguous)
    return Classified(category, operands, ambiguous or bool(operands.ambiguous))


def _is_stream_filter(category: Category, operands: Operands, simple: SimpleCommand) -> bool:
    return (
        category in (Category.FILE_READ, Category.SEARCH)
        and simple.stdin_is_pipe
        and not operands.paths
        and not operands.ambiguous
    )
