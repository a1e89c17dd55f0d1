"""File reads: tools whose path operands are files they read.

Most readers are one option table (:func:`reader`): the options that take a
value, so that a value is never mistaken for a path. ``sed``, ``awk`` and
``jq`` take a script first, and ``sed -i`` or ``awk -i inplace`` edit instead
of reading.
"""

from __future__ import annotations

from hpbench.commands.categories import Category
from hpbench.commands.context import Context, Interpretation, Interpreter, path_operands
from hpbench.commands.options import OptionSpec, ParsedArgs, parse_args
from hpbench.commands.words import Word

READ_PLAIN = OptionSpec()


def reader(
    spec: OptionSpec, *, leading: int = 0, pattern_options: tuple[str, ...] = ()
) -> Interpreter:
    """An interpreter for a tool that reads the files its positionals name (or its stdin)."""

    def interpret(ctx: Context) -> Interpretation:
        args = parse_args(ctx.args, spec)
        return path_operands(
            ctx, Category.FILE_READ, args, leading=leading, pattern_options=pattern_options
        )

    return interpret


HEAD_TAIL = OptionSpec(
    short_values="ncs",
    long_values=frozenset({"--lines", "--bytes", "--pid", "--sleep-interval"}),
    numeric_flags=True,
)
_SED = OptionSpec(
    short_values="efl",
    long_values=frozenset({"--expression", "--file", "--line-length"}),
)
_AWK = OptionSpec(
    short_values="Fvf", long_values=frozenset({"--field-separator", "--assign", "--file"})
)


def sed(ctx: Context) -> Interpretation:
    if any(w.text.startswith(("-i", "--in-place")) or _cluster_has(w, "i") for w in ctx.args):
        return Interpretation(Category.EDIT)
    args = parse_args(ctx.args, _SED)
    return path_operands(
        ctx,
        Category.FILE_READ,
        args,
        leading=1,
        pattern_options=("-e", "--expression", "-f", "--file"),
    )


def _cluster_has(word: Word, letter: str) -> bool:
    """``-ni`` style clusters: is ``letter`` one of the flags (before any value letter)?"""
    text = word.text
    if not word.literal or not text.startswith("-") or text.startswith("--"):
        return False
    for char in text[1:]:
        if char == letter:
            return True
        if char in "efl":
            return False
    return False


def awk(ctx: Context) -> Interpretation:
    texts = [w.text for w in ctx.args]
    if "-i" in texts and "inplace" in texts:
        return Interpretation(Category.EDIT)
    args = parse_args(ctx.args, _AWK)
    # Positional ``name=value`` are variable assignments, not files.
    kept = tuple(w for w in args.positionals if not _is_assignment(w.text))
    filtered = ParsedArgs(args.options, args.flags, kept, len(kept))
    return path_operands(
        ctx, Category.FILE_READ, filtered, leading=1, pattern_options=("-f", "--file")
    )


def _is_assignment(text: str) -> bool:
    name, equals, _ = text.partition("=")
    return bool(equals) and name.isidentifier()


def jq(ctx: Context) -> Interpretation:
    words = list(ctx.args)
    kept: list[Word] = []
    index = 0
    two_values = {"--arg", "--argjson", "--slurpfile", "--rawfile"}
    while index < len(words):
        text = words[index].text
        if text in two_values:
            index += 3
            continue
        if text in ("-f", "--from-file", "--indent", "--tab-width"):
            index += 2
            continue
        kept.append(words[index])
        index += 1
    args = parse_args(tuple(kept), OptionSpec())
    return path_operands(ctx, Category.FILE_READ, args, leading=1, pattern_options=())
