"""Searches: ``grep`` and its relatives, ``rg``, ``ag`` and ``ack``.

A search's first positional is its pattern unless a pattern option gave one;
the rest are paths. A recursive search with no path searches the directory it
runs in; ``rg --files`` and ``ag -g`` list files instead (discovery).
"""

from __future__ import annotations

from hpbench.commands.categories import Category
from hpbench.commands.context import Context, Interpretation, path_operands
from hpbench.commands.operands import supported_globs
from hpbench.commands.options import OptionSpec, parse_args

# The options that give the pattern, so that the first positional is a path.
_PATTERN_OPTIONS = ("-e", "--regexp", "-f", "--file")

_GREP = OptionSpec(
    short_values="efmABCdD",
    long_values=frozenset(
        {
            "--regexp",
            "--file",
            "--max-count",
            "--after-context",
            "--before-context",
            "--context",
            "--include",
            "--exclude",
            "--exclude-dir",
            "--exclude-from",
            "--label",
            "--binary-files",
            "--directories",
            "--devices",
            "--group-separator",
        }
    ),
)
_RG = OptionSpec(
    short_values="ABCeEfgjmMrtTd",
    long_values=frozenset(
        {
            "--after-context",
            "--before-context",
            "--context",
            "--regexp",
            "--encoding",
            "--file",
            "--glob",
            "--iglob",
            "--threads",
            "--max-count",
            "--max-columns",
            "--replace",
            "--type",
            "--type-not",
            "--max-depth",
            "--maxdepth",
            "--color",
            "--colors",
            "--sort",
            "--sortr",
            "--type-add",
            "--type-clear",
            "--max-filesize",
            "--pre",
            "--pre-glob",
            "--path-separator",
            "--ignore-file",
            "--engine",
            "--field-match-separator",
            "--field-context-separator",
            "--context-separator",
            "--dfa-size-limit",
            "--regex-size-limit",
            "--hostname-bin",
            "--hyperlink-format",
            "--generate",
        }
    ),
)
_AG = OptionSpec(short_values="ABCGmg", long_values=frozenset({"--ignore", "--type", "--depth"}))


def grep(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, _GREP)
    recursive = (
        args.has("-r", "-R", "--recursive", "--dereference-recursive")
        or any(v.text == "recurse" for v in args.values("-d", "--directories"))
        or ctx.name in ("rgrep",)
    )
    return path_operands(
        ctx,
        Category.SEARCH,
        args,
        leading=1,
        pattern_options=_PATTERN_OPTIONS,
        searches_cwd=recursive,
    )


def ripgrep(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, _RG)
    if args.has("--files"):
        return Interpretation(Category.DISCOVERY)
    if args.has("--type-list", "--help", "-h", "--version", "-V", "--generate"):
        return Interpretation(Category.OTHER)
    return path_operands(
        ctx,
        Category.SEARCH,
        args,
        leading=1,
        pattern_options=_PATTERN_OPTIONS,
        searches_cwd=True,
        globs=supported_globs(args.values("-g", "--glob")),
    )


def silver(ctx: Context) -> Interpretation:
    args = parse_args(ctx.args, _AG)
    if args.has("-g", "-l", "--files-with-matches", "-f") and not args.positionals:
        return Interpretation(Category.DISCOVERY)
    return path_operands(ctx, Category.SEARCH, args, leading=1, searches_cwd=True)
