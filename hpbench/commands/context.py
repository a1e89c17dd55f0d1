"""What a command-specific interpreter gets and gives back.

:func:`path_operands` is the common answer of an interpreter whose tool reads
or searches paths: the path positionals it was given, or, with none, what the
tool falls back to (its redirected stdin, or the directory it runs in).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from hpbench.commands.categories import Category
from hpbench.commands.operands import NO_OPERANDS, Operands, resolve
from hpbench.commands.options import ParsedArgs
from hpbench.commands.words import Word

_DEVICES = ("/dev/",)
_HERE = Word(".", literal=True)


@attrs.frozen
class Context:
    """One invocation, wrappers stripped: the arguments after the command name and where it ran."""

    name: str
    args: tuple[Word, ...]
    cwd: str | None
    root: str | None
    stdin_is_pipe: bool = False
    stdin_file: Word | None = None

    def resolve_all(
        self, words: tuple[Word, ...] | list[Word], globs: tuple[str, ...] = ()
    ) -> Operands:
        """Resolve each path operand; the ones that cannot be known become ambiguous."""
        paths: list[str] = []
        ambiguous: list[str] = []
        for word in words:
            resolved = resolve(word, self.cwd, self.root)
            if resolved is None:
                ambiguous.append(word.text)
            else:
                paths.append(resolved)
        return Operands(
            paths=tuple(paths), ambiguous=tuple(ambiguous), globs=globs if paths else ()
        )

    def writes_into_workspace(self, targets: tuple[Word, ...] | list[Word]) -> bool:
        """Whether any of ``targets`` is (or may be) a file inside the workspace.

        A target outside the workspace (``/tmp/log``) or a device does not make
        the invocation an edit; one that cannot be resolved might be inside, so it does.
        """
        for target in targets:
            if target.literal and target.text.startswith(_DEVICES):
                continue
            resolved = resolve(target, self.cwd, self.root)
            if resolved is None or not resolved.startswith("/"):
                return True
        return False


@attrs.frozen
class Interpretation:
    """A category and, for loop categories, the operands."""

    category: Category
    operands: Operands = NO_OPERANDS


Interpreter = Callable[[Context], Interpretation]


def path_operands(
    ctx: Context,
    category: Category,
    args: ParsedArgs,
    *,
    leading: int = 0,
    pattern_options: tuple[str, ...] = (),
    searches_cwd: bool = False,
    globs: tuple[str, ...] = (),
) -> Interpretation:
    """Paths are the positionals after ``leading`` pattern/script positionals.

    With no path operand the tool reads its stdin (a redirected file, if any)
    or, when ``searches_cwd`` and stdin is not a pipe, searches the directory it runs in.
    """
    positionals = list(args.positionals)
    if leading and not args.has(*pattern_options):
        positionals = positionals[leading:]
    paths = [word for word in positionals if word.text != "-"]
    if not paths:
        if ctx.stdin_file is not None:
            paths = [ctx.stdin_file]
        elif searches_cwd and not ctx.stdin_is_pipe:
            paths = [_HERE]
    return Interpretation(category, ctx.resolve_all(paths, globs))
